"""The MPI lab: real collectives on this machine, held against the alpha-beta model.

* :mod:`commlib.lab.measure` -- the script run under ``mpiexec`` that times
  MPI collectives over message sizes and prints JSON;
* :mod:`commlib.lab.p2p` -- ring and halving-doubling all-reduce written with
  point-to-point ``Sendrecv`` (the lab exercise's reference solutions);
* :mod:`commlib.lab.checker` -- runs a learner's ``ring_allreduce`` under
  ``mpiexec`` and says right or wrong, with a hint;
* :mod:`commlib.lab.runner` -- the notebook's side: launch, show progress, read
  the JSON.

Nothing here imports :mod:`mpi4py` at module level: the MPI processes import
it, the notebook process does not, so importing :mod:`commlib.lab` never
starts MPI. The fit itself is pure and lives in :mod:`commlib.lab.fit`.
"""
