"""The book's problem (chapter 4's softmax regression, seed 0), made once for chapter 7's training runs.

Compression and local SGD train it hundreds of times, each run from the same data; building it takes
longer than a short run, so it is built once and its arrays are made read-only (a run that tried to
change them would raise instead of changing every later run).

>>> p = default_problem()
>>> p is default_problem(), p.dim, p.x_train.flags.writeable
(True, 210, False)
"""

from __future__ import annotations

import functools

from ..sgd import training

__all__ = ["default_problem"]


@functools.cache
def default_problem() -> training.Problem:
    """``commlib.sgd.training.make_problem(seed=0)``, built once, its arrays read-only."""
    p = training.make_problem(seed=0)
    for a in (p.x_train, p.y_train, p.x_test, p.y_test):
        a.setflags(write=False)
    return p
