"""The SimPy reference model gives the same schedule as commlib.sgd.simulate's event loops."""

from __future__ import annotations

import numpy as np
import pytest

from commlib.sgd import simpy_model as sgd_simpy
from commlib.sgd import simulate as sgd


@pytest.mark.parametrize("protocol, k", [("sync", None), ("async", None), ("k_async", 2), ("k_async", 3)])
@pytest.mark.parametrize("compute, params", [("exponential", {}), ("shifted_exponential", {"shift": 1.0}),
                                             ("pareto", {"shape": 2.5})])
@pytest.mark.parametrize("seed", [0, 5])
def test_simpy_model_gives_the_same_schedule(protocol, k, compute, params, seed):
    P = 5
    K = {"sync": P, "async": 1}.get(protocol, k)
    times, stale, contrib = sgd_simpy.k_async(P, K, updates=300, seed=seed, compute=compute, **params)
    ref = sgd.schedule(protocol, P, k, compute, updates=300, seed=seed, **params)
    np.testing.assert_allclose(times, ref.times, rtol=1e-12)
    np.testing.assert_array_equal(stale, ref.staleness)
    np.testing.assert_array_equal(contrib, ref.contributors.ravel())


def test_simpy_model_rejects_bad_k():
    with pytest.raises(ValueError, match="k"):
        sgd_simpy.k_async(4, 5, updates=10)


@pytest.mark.parametrize("protocol", ["k_sync", "k_batch_sync", "k_batch_async"])
@pytest.mark.parametrize("compute, params", [("exponential", {}), ("shifted_exponential", {"shift": 1.0})])
@pytest.mark.parametrize("seed", [0, 5])
def test_simpy_models_of_the_other_protocols_give_the_same_schedule(protocol, compute, params, seed):
    P, K = 5, 2
    if protocol == "k_batch_async":
        times, stale, contrib = sgd_simpy.k_batch_async(P, K, updates=300, seed=seed, compute=compute, **params)
    else:
        times, stale, contrib = sgd_simpy.k_sync(P, K, updates=300, seed=seed, compute=compute,
                                                 batches=protocol == "k_batch_sync", **params)
    ref = sgd.schedule(protocol, P, K, compute, updates=300, seed=seed, **params)
    np.testing.assert_allclose(times, ref.times, rtol=1e-12)
    np.testing.assert_array_equal(stale, ref.staleness)
    np.testing.assert_array_equal(np.sort(contrib.reshape(-1, K), axis=1), np.sort(ref.contributors, axis=1))
