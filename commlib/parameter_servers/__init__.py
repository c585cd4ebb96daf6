"""Parameter servers (chapter 3): time and traffic in closed form, and a round executed on numpy arrays.

* :mod:`~commlib.parameter_servers.cost`: bytes per machine, round time, BytePS, the comparison
  with an all-reduce (numpy-free);
* :mod:`~commlib.parameter_servers.simulate`: a synchronous round on real arrays, traced;
* :mod:`~commlib.parameter_servers.calculators`: what the chapter's calculator computes.
"""
