"""SGD protocols (chapters 4 and 5): the training problem, synchronous and asynchronous SGD, staleness, overlap.

* :mod:`~commlib.sgd.training`: a small real training problem (softmax regression);
* :mod:`~commlib.sgd.simulate`: the protocols simulated event by event, with their staleness;
* :mod:`~commlib.sgd.simpy_model`: a readable reference model of the same protocols in SimPy;
* :mod:`~commlib.sgd.scaling`: scaling metrics and the linear scaling rule;
* :mod:`~commlib.sgd.overlap`: the bucketed all-reduce overlapped with backprop (closed form);
* :mod:`~commlib.sgd.calculators`: what the chapters' calculators compute.
"""
