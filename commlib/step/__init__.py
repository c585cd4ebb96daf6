"""One data-parallel step (chapter 0): what travels, how long it computes, when it stays compute-bound.

* :mod:`~commlib.step.cost`: bytes per step, compute time from FLOPs, efficiency and the bandwidth it needs;
* :mod:`~commlib.step.calculators`: what the chapter's calculators compute.
"""
