"""Collectives (chapters 1 and 2): all-reduce and the other primitives, in closed form and on real arrays.

* :mod:`~commlib.collectives.algorithms`: the registry, one module per all-reduce algorithm
  (its closed form ``terms`` and its executable ``schedule``, defined once);
* :mod:`~commlib.collectives.cost`: the alpha-beta-gamma costs that read the registry, bus and
  algorithm bandwidth;
* :mod:`~commlib.collectives.simulate`: the collectives run on numpy arrays, every message traced
  (:mod:`~commlib.collectives.trace`), stepped by :mod:`~commlib.collectives.engine` along the
  building blocks of :mod:`~commlib.collectives.schedules`;
* :mod:`~commlib.collectives.cluster`: an all-reduce on hosts with two kinds of link;
* :mod:`~commlib.collectives.compare`: who wins, where curves cross;
* :mod:`~commlib.collectives.calculators`: what the chapters' calculators compute.

Importing this package imports no numpy (the cost side runs in the browser).
"""
