"""Today's collectives (chapter 7): how a library chooses, sharded data parallelism, experts, compression.

* :mod:`~commlib.today.cost`: closed forms (ZeRO bytes, MoE all-to-all bytes, in-network reduction, PowerSGD);
* :mod:`~commlib.today.algorithm_choice`: a cost-model chooser of algorithm and protocol, after NCCL;
* :mod:`~commlib.today.zero`, :mod:`~commlib.today.moe`, :mod:`~commlib.today.in_network`: executed and counted;
* :mod:`~commlib.today.compression`, :mod:`~commlib.today.local_sgd`: trained against the uncompressed control;
* :mod:`~commlib.today.book_problem`: the problem they train, built once;
* :mod:`~commlib.today.calculators`: what the chapter's calculators compute.
"""
