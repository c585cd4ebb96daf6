"""Halving-doubling with the fold that swaps halves, run on arrays, against its closed form.

The run below moves real numpy arrays between ranks step by step (one port a rank: at most one message out and one
in per step), checks that every rank ends with the sum, and counts the steps and, per step, the most bytes through
one port; the closed form :func:`commlib.cost.halving_doubling_swap_fold_terms` must give the same start-ups and bytes.
"""

import numpy as np
import pytest

from commlib import cost


def swap_fold_allreduce(arrays):
    """All-reduce ``arrays`` (one per rank) by halving-doubling with the fold that swaps halves.

    Returns the ranks' buffers and the steps, each a list of messages ``(src, dst, lo, hi)``.
    """
    n, length = len(arrays), len(arrays[0])
    p = 1 << (n.bit_length() - 1)
    extra = n - p
    buf = [np.array(a, dtype=float) for a in arrays]
    steps = []

    def run(messages, add):
        assert len({m[0] for m in messages}) == len(messages) and len({m[1] for m in messages}) == len(messages)
        sent = [(dst, lo, hi, buf[src][lo:hi].copy()) for src, dst, lo, hi in messages]
        for dst, lo, hi, data in sent:
            if add:
                buf[dst][lo:hi] += data
            else:
                buf[dst][lo:hi] = data
        steps.append(messages)

    half = length // 2
    # pieces[v]: where virtual rank v's current segment lies, as (lo, hi, physical rank)
    pieces = {v: [(0, length, v)] for v in range(p)}
    if extra:
        run([m for i in range(extra) for m in ((i, p + i, half, length), (p + i, i, 0, half))], add=True)
        for i in range(extra):
            pieces[i] = [(0, half, i), (half, length, p + i)]

    def holder(v, lo, hi):
        (phys,) = [ph for a, b, ph in pieces[v] if a <= lo and hi <= b]
        return phys

    history, dist = [], p // 2
    while dist:                                  # recursive halving among the p virtual ranks
        before = {v: list(pieces[v]) for v in range(p)}
        messages, kept = [], {}
        for v in range(p):
            w = v ^ dist
            lo, hi = pieces[v][0][0], pieces[v][-1][1]
            mid = (lo + hi) // 2
            keep, send = ((lo, mid), (mid, hi)) if v < w else ((mid, hi), (lo, mid))
            kept[v] = keep
            for a, b, ph in pieces[v]:
                a, b = max(a, send[0]), min(b, send[1])
                if a < b:
                    messages.append((ph, holder(w, a, b), a, b))
        run(messages, add=True)
        for v in range(p):
            pieces[v] = [(max(a, kept[v][0]), min(b, kept[v][1]), ph) for a, b, ph in pieces[v]
                         if max(a, kept[v][0]) < min(b, kept[v][1])]
        history.append(before)
        dist //= 2
    for before in reversed(history):             # recursive doubling back, each step the mirror of one above
        messages = []
        for v in range(p):
            w_before = before[v ^ _dist_of(history, before)]
            for a, b, ph in pieces[v]:
                for c, d, dst in w_before:
                    lo, hi = max(a, c), min(b, d)
                    if lo < hi and dst != ph:
                        messages.append((ph, dst, lo, hi))
        run(messages, add=False)
        for v in range(p):
            pieces[v] = before[v]
    if extra:
        run([m for i in range(extra) for m in ((i, p + i, 0, half), (p + i, i, half, length))], add=False)
    return buf, steps


def _dist_of(history, before):
    """The partner distance of the halving step that ``before`` precedes: p/2, p/4, ..., 1."""
    p = len(before)
    return p // 2 ** (1 + next(i for i, h in enumerate(history) if h is before))


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, 12, 13, 24, 97])
def test_the_swap_fold_sums_and_its_counts_match_the_closed_form(n):
    p = 1 << (n.bit_length() - 1)
    length = 4 * p                                # halves of halves stay whole
    rng = np.random.default_rng(n)
    arrays = [rng.integers(0, 100, length).astype(float) for _ in range(n)]
    buf, steps = swap_fold_allreduce(arrays)
    total = np.sum(arrays, axis=0)
    assert all(np.array_equal(b, total) for b in buf)
    item = 8                                      # float64
    busiest = 0.0
    for messages in steps:
        out, into = {}, {}
        for src, dst, lo, hi in messages:
            out[src] = out.get(src, 0) + (hi - lo) * item
            into[dst] = into.get(dst, 0) + (hi - lo) * item
        busiest += max(max(out.values()), max(into.values()))
    terms = cost.halving_doubling_swap_fold_terms(length * item, n)
    assert len(steps) == terms.steps
    assert busiest == pytest.approx(terms.bytes)


@pytest.mark.parametrize("n", [3, 5, 6, 12, 97])
def test_off_the_powers_of_two_the_swap_fold_moves_a_whole_message_less_than_the_textbook_one(n):
    swap = cost.halving_doubling_swap_fold_terms(1e6, n)
    textbook = cost.allreduce_terms(1e6, n, "halving_doubling")
    assert swap.steps == textbook.steps
    assert textbook.bytes - swap.bytes == pytest.approx(1e6)   # M/2 less through a port on each of the two fold steps
