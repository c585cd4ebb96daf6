r"""Mixture of experts: the dispatch and combine all-to-alls, executed and counted.

An MoE layer holds E expert networks; a router sends each token to its
:math:`\kappa` highest-scoring experts (``top_k``). With expert parallelism
the experts live on different ranks (here one expert a rank, n = E), so
every MoE layer needs two all-to-alls: *dispatch* (each token's hidden
vector of :math:`d_{model}` elements to the ranks of its experts) and
*combine* (the experts' outputs back). Of a rank's :math:`x\kappa` copies,
1/E stay home when routing is uniform, so each all-to-all sends
:math:`x\,\kappa\,d_{model}\,s\,\frac{E-1}{E}` bytes per rank
(:func:`commlib.cost.moe_all_to_all_bytes`; Lepikhin et al. 2021).

:func:`dispatch` runs the dispatch with :func:`commlib.collectives.simulate.all_to_all`
on real arrays for a routing that sends every expert the same number of
tokens. Real routers are not that fair: :func:`expert_loads` counts what
each expert's rank receives for a routing drawn from a skewed popularity,
and the busiest rank sets the all-to-all's time.

>>> import numpy as np
>>> received, sent = dispatch(tokens=4, hidden=3, top_k=2, experts=4)
>>> sent, received[1].shape
([144, 144, 144, 144], (8, 3))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..collectives import simulate as collectives
from ..units import check_count, check_nonnegative

__all__ = ["dispatch", "expert_loads", "imbalance", "GroupLimitedRouter", "DEEPSEEK_V3_ROUTER"]


@dataclass(frozen=True)
class GroupLimitedRouter:
    """A router that splits its ``experts`` into ``groups`` of equal size and picks each token's ``top_k`` experts
    only from its ``groups_per_token`` best groups (group-limited routing), a group scoring by the sum of its
    ``group_score_top`` best experts. With one group on a host, a token reaches at most ``groups_per_token`` hosts.
    ``source`` says where the numbers come from.

    >>> r = GroupLimitedRouter("toy", experts=8, groups=4, groups_per_token=2, top_k=3, group_score_top=1, source="")
    >>> picks = r.route(tokens=5, seed=0)
    >>> picks.shape, max(len(set(row // 2)) for row in picks), all(len(set(row)) == 3 for row in picks)   # 2 groups of 2
    ((5, 3), 2, True)
    """

    name: str
    experts: int
    groups: int
    groups_per_token: int
    top_k: int
    group_score_top: int
    source: str

    def __post_init__(self) -> None:
        check_count("experts", self.experts, 1)
        groups = check_count("groups", self.groups, 1, self.experts)
        if self.experts % groups:
            raise ValueError(f"experts ({self.experts}) must be a multiple of groups ({groups})")
        per_group = self.experts // groups
        kept = check_count("groups_per_token", self.groups_per_token, 1, groups)
        check_count("top_k", self.top_k, 1, kept * per_group)
        check_count("group_score_top", self.group_score_top, 1, per_group)

    def route(self, tokens: int, seed: int = 0) -> np.ndarray:
        """Each token's ``top_k`` experts (one row a token, best first) for scores that favour no expert: independent
        and uniform, drawn from ``seed``. The rule of DeepSeek-V3's gate: score each group by the sum of its
        ``group_score_top`` best experts, keep the ``groups_per_token`` best groups, take the ``top_k`` best experts
        among theirs."""
        tokens = check_count("tokens", tokens, 1)
        per_group = self.experts // self.groups
        scores = np.random.default_rng(seed).random((tokens, self.experts))
        grouped = np.sort(scores.reshape(tokens, self.groups, per_group), axis=2)
        group_scores = grouped[:, :, per_group - self.group_score_top:].sum(axis=2)
        kept = np.argsort(-group_scores, axis=1, kind="stable")[:, :self.groups_per_token]
        allowed = np.zeros((tokens, self.groups), dtype=bool)
        allowed[np.arange(tokens)[:, None], kept] = True
        masked = np.where(np.repeat(allowed, per_group, axis=1), scores, -np.inf)
        return np.argsort(-masked, axis=1, kind="stable")[:, :self.top_k]


#: DeepSeek-V3's router: 256 routed experts in 8 groups, a token's 8 experts from its 4 best groups, a group scored by
#: its 2 best experts (``n_routed_experts``, ``n_expert_groups``, ``n_limited_groups``, ``n_activated_experts`` of
#: ``inference/configs/config_671B.json``; ``Gate.forward`` in ``inference/model.py``, which sums each group's top 2
#: scores when the gate has its bias, as at this model's width; DeepSeek-V3 at 9b4e9788).
DEEPSEEK_V3_ROUTER = GroupLimitedRouter("DeepSeek-V3", experts=256, groups=8, groups_per_token=4, top_k=8,
                                        group_score_top=2,
                                        source="deepseek-ai/DeepSeek-V3 inference/model.py, configs/config_671B.json")


def dispatch(tokens: int, hidden: int, top_k: int, experts: int, seed: int = 0) -> tuple[list[np.ndarray], list[int]]:
    """Dispatch all-to-all with balanced routing: token t of rank i goes to experts (i + t + j) mod E, j < top_k.

    Each rank holds ``tokens`` random fp64 vectors of ``hidden`` elements;
    ``tokens * top_k`` must be a multiple of ``experts`` so every expert gets
    the same count. Returns what each expert's rank received (rows = token
    copies) and the bytes each rank sent.
    """
    tokens = check_count("tokens", tokens, minimum=1)
    hidden = check_count("hidden", hidden, minimum=1)
    experts = check_count("experts", experts, minimum=2)
    top_k = check_count("top_k", top_k, minimum=1, maximum=experts)
    if tokens * top_k % experts:
        raise ValueError(f"tokens x top_k must be a multiple of experts ({experts}), got {tokens * top_k}")
    # The idea: each rank sorts its token copies by expert, and one all-to-all delivers them.
    rng = np.random.default_rng(seed)
    send = []
    for i in range(experts):
        vectors = rng.normal(size=(tokens, hidden))
        by_expert = [[] for _ in range(experts)]
        for t in range(tokens):
            for j in range(top_k):
                by_expert[(i + t + j) % experts].append(vectors[t])
        send.append(np.concatenate([np.ravel(b) for b in by_expert]))   # grouped by destination
    received, trace = collectives.all_to_all(send)
    return [r.reshape(-1, hidden) for r in received], [int(b) for b in trace.bytes_sent]


def expert_loads(tokens: int, top_k: int, experts: int, skew: float = 0.0, seed: int = 0) -> np.ndarray:
    """Token copies each expert receives in one dispatch, all ranks together, for a skewed router.

    Expert e's popularity is proportional to ``(e + 1) ** -skew`` (Zipf;
    ``skew = 0`` is uniform); each of the ``experts`` ranks routes its
    ``tokens`` tokens to ``top_k`` distinct experts drawn by popularity.
    """
    tokens = check_count("tokens", tokens, minimum=1)
    experts = check_count("experts", experts, minimum=2)
    top_k = check_count("top_k", top_k, minimum=1, maximum=experts)
    skew = check_nonnegative("skew", skew)
    rng = np.random.default_rng(seed)
    p = (np.arange(1, experts + 1, dtype=float)) ** -skew
    # top_k distinct experts per token, drawn one after another by popularity among those left: the same law as
    # ranking log p plus Gumbel noise and keeping the top_k (the Gumbel-top-k trick), all tokens at once
    keys = np.log(p) + rng.gumbel(size=(experts * tokens, experts))
    chosen = np.argpartition(-keys, top_k - 1, axis=1)[:, :top_k]
    return np.bincount(chosen.ravel(), minlength=experts).astype(np.int64)


def imbalance(loads) -> float:
    """Busiest expert's load over the mean load: how much longer the all-to-all takes than balanced."""
    loads = np.asarray(loads, dtype=float)
    return float(loads.max() / loads.mean())
