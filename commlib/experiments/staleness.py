"""Experiments of chapter 5 (stale gradients): staleness against N/K, learning-rate rules, Downpour.

Model layer: each function runs :func:`commlib.sgd.simulate` and returns
results; the figures in :mod:`commlib.views.staleness` take them as input.
"""

from __future__ import annotations

from .. import sgd, training

__all__ = ["staleness_vs_nk", "lr_rule_runs", "downpour_runs"]


def staleness_vs_nk(workers: int = 16, ks=(1, 2, 4, 8, 16), updates: int = 20000, seed: int = 0) -> list[dict]:
    """Measured mean staleness of K-batch-async and K-async against N/K and the exact means."""
    rows = []
    for K in ks:
        row = {"K": K, "N/K": workers / K}
        for protocol in ("k_batch_async", "k_async"):
            r = sgd.simulate(protocol, workers, k=K, updates=updates, seed=seed)
            row[protocol] = float(r.staleness.mean())
            row[protocol + " exact"] = sgd.expected_staleness(protocol, workers, K)
        rows.append(row)
    return rows



def lr_rule_runs(workers: int = 16, updates: int = 2500, lr: float = 0.5, lr_c: float = 0.02, seed: int = 0,
                 batch_size: int = 8, protocol: str = "async", k: int | None = None) -> dict:
    """Async SGD on the chapter's problem with the three learning-rate rules (and sync for reference)."""
    problem = training.make_problem(seed=0)
    every = max(1, updates // 80)
    out = {}
    for rule, label in [("constant", "constant rate"), ("staleness", "rate / staleness"),
                        ("distance", "min(C/||w_j - w_tau||^2, eta_max)")]:
        out[label] = sgd.simulate(protocol, workers, k=k, updates=updates, seed=seed, problem=problem, lr=lr,
                                  lr_rule=rule, lr_c=lr_c, batch_size=batch_size, eval_every=every)
    return out



def downpour_runs(workers: int = 8, shards: int = 4, updates: int = 2500, lr_sgd: float = 0.5,
                  lr_adagrad: float = 0.5, comm_time: float = 0.1, seed: int = 0, batch_size: int = 8) -> dict:
    """Downpour SGD: async replicas over PS shards, plain SGD against per-shard Adagrad."""
    problem = training.make_problem(seed=0)
    every = max(1, updates // 80)

    def transfer(rng, w):
        return float(rng.exponential(comm_time))

    out = {}
    for opt, lr in (("sgd", lr_sgd), ("adagrad", lr_adagrad)):
        out[f"{shards} shards, {'Adagrad' if opt == 'adagrad' else 'SGD'} (rate {lr:g})"] = sgd.simulate(
            "async", workers, updates=updates, seed=seed, problem=problem, lr=lr, optimizer=opt, shards=shards,
            comm_time=transfer, batch_size=batch_size, eval_every=every)
    return out

