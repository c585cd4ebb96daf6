"""A readable reference model of asynchronous SGD protocols in SimPy: processes and message stores.

:mod:`commlib.sgd.simulate` simulates the protocols with lean, hand-tuned event loops. This module models
the same thing the way one would describe it: a parameter-server (PS) process and one process per
learner, exchanging gradients and parameters through SimPy stores. A learner computes, pushes its
gradient (with the version of the parameters it read) into the PS's store and waits for new
parameters in its own store; the PS takes ``K`` gradients, updates, and sends the new version to
those ``K`` learners. The others keep computing on what they hold: this is K-async SGD, with
``K = 1`` asynchronous SGD and ``K = P`` fully synchronous SGD (Dutta et al. 2018, section 2).
:func:`k_sync` (with ``batches=True`` K-batch-sync) and :func:`k_batch_async` model the other
protocols the same way, so all six are covered.

It draws compute times from the same per-learner streams as :mod:`commlib.sgd.simulate` (learner ``w``'s
``j``-th job takes the ``j``-th value of its stream), so for one seed both give the same schedule
(update times, staleness and contributors); the tests check that. It is about ten times slower
(``bench/bench_sgd.py``), which is why the book's experiments use :mod:`commlib.sgd.simulate`.

>>> times, stale, contrib = k_async(4, 2, updates=3, seed=0)
>>> len(times), len(stale), len(contrib)
(3, 6, 6)
"""

from __future__ import annotations

import numpy as np
import simpy

from ..units import check_count
from . import simulate as sgd

__all__ = ["k_async", "k_batch_async", "k_sync"]


def k_async(workers: int, k: int, updates: int, seed: int = 0, compute: str = "exponential", **compute_params):
    """K-async SGD in SimPy: a PS process and learner processes exchanging messages through stores.

    ``workers`` learners (P), ``k`` gradients per update (K), ``updates`` PS updates; compute times
    from ``compute`` with ``compute_params`` (as in :func:`commlib.sgd.simulate.simulate`), no communication
    time. Returns (update times in s, staleness of each applied gradient, contributing learner of each
    applied gradient), in the order applied.
    """
    workers, k, updates, nexts = _setup(workers, k, updates, seed, compute, compute_params)
    env = simpy.Environment()
    grads = simpy.Store(env)
    inbox = [simpy.Store(env) for _ in range(workers)]
    times: list[float] = []
    stale: list[int] = []
    contrib: list[int] = []
    state = {"version": 0}
    done = env.event()

    def learner(w: int):
        version = 0
        while True:
            yield env.timeout(nexts[w]())          # compute one gradient on the version held
            yield grads.put((w, version))          # push it to the PS
            version = yield inbox[w].get()         # wait for the new parameters

    def server():
        while True:
            got = []
            for _ in range(k):                     # wait for K gradients, whoever sends them
                w, read = yield grads.get()
                stale.append(state["version"] - read)
                contrib.append(w)
                got.append(w)
            state["version"] += 1                  # update
            times.append(env.now)
            if state["version"] == updates:
                done.succeed()
                return
            for w in got:                          # only the K contributors get the new version
                yield inbox[w].put(state["version"])

    for w in range(workers):
        env.process(learner(w))
    env.process(server())
    env.run(until=done)
    return np.asarray(times), np.asarray(stale), np.asarray(contrib)


def _setup(workers, k, updates, seed, compute, compute_params):
    workers = check_count("workers", workers, 1)
    k = check_count("k", k, 1, workers)
    updates = check_count("updates", updates, 1)
    params = sgd._dist_params(compute, compute_params)
    return workers, k, updates, sgd._Streams(workers, seed, compute, params, 0.0).iterators()


def k_batch_async(workers: int, k: int, updates: int, seed: int = 0, compute: str = "exponential",
                  **compute_params):
    """K-batch-async SGD in SimPy: the PS updates after every ``k`` gradients, whoever sends them; a
    learner pushes, reads the current parameters and starts again at once. Returns as :func:`k_async`."""
    workers, k, updates, nexts = _setup(workers, k, updates, seed, compute, compute_params)
    env = simpy.Environment()
    ps = {"version": 0, "buffer": 0}
    times, stale, contrib = [], [], []
    done = env.event()

    def learner(w: int):
        read = 0
        while True:
            yield env.timeout(nexts[w]())
            stale.append(ps["version"] - read)
            contrib.append(w)
            ps["buffer"] += 1
            if ps["buffer"] == k:                  # the K-th gradient since the last update
                ps["version"] += 1
                ps["buffer"] = 0
                times.append(env.now)
                if ps["version"] == updates:
                    done.succeed()
                    return
            read = ps["version"]                   # never waits: reads whatever the PS holds

    for w in range(workers):
        env.process(learner(w))
    env.run(until=done)
    return np.asarray(times), np.asarray(stale), np.asarray(contrib)


def k_sync(workers: int, k: int, updates: int, seed: int = 0, compute: str = "exponential", batches: bool = False,
           **compute_params):
    """K-sync SGD in SimPy (``batches=True``: K-batch-sync): the PS updates on the first ``k`` gradients
    (K-batch-sync: mini-batches, a learner that finishes starts another on the same parameters) and
    cancels every unfinished computation; everyone restarts on the new parameters. Returns as
    :func:`k_async` (staleness is always 0)."""
    workers, k, updates, nexts = _setup(workers, k, updates, seed, compute, compute_params)
    env = simpy.Environment()
    ps = {"got": 0, "version": 0, "update": env.event()}
    times, contrib = [], []
    done = env.event()

    def learner(w: int):
        while True:
            update = ps["update"]
            finished = env.timeout(nexts[w]())
            yield finished | update                # compute, unless the update cancels it
            if not finished.processed and update.triggered:
                continue                           # cancelled: restart on the new parameters
            contrib.append(w)
            ps["got"] += 1
            if ps["got"] == k:
                ps["got"] = 0
                ps["version"] += 1
                times.append(env.now)
                ps["update"] = env.event()
                update.succeed()                   # cancel the others, all restart
                if ps["version"] == updates:
                    done.succeed()
                    return
            elif not batches:
                yield update                       # K-sync: one gradient per learner per update

    for w in range(workers):
        env.process(learner(w))
    env.run(until=done)
    return np.asarray(times), np.zeros(len(contrib), dtype=np.int64), np.asarray(contrib)
