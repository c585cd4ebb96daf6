"""The cache test at matched footprint, cuts reproduced within a size step, and the large-message story told once."""

from __future__ import annotations

import math

import pytest

from commlib.experiments import lab as lab_runs
from commlib.lab import explain, fit, measure, memory

LADDER = [2.0**k for k in range(20, 27)]   # 1 MiB ... 64 MiB


def test_footprints_come_from_the_counts_and_the_control_block():
    # all-reduce on two ranks: send M, receive M and half the message into the temporary, per rank
    assert memory.allreduce_footprint(2**20, 2) == 5 * 2**20
    # on four ranks halving-doubling's reduce-scatter receives 3/4 of the message into the temporary
    assert memory.allreduce_footprint(2**20, 4) == 4 * (2 + 0.75) * 2**20
    assert memory.copy_footprint(2**20, 2) == 6 * 2**20
    assert math.isclose(memory.footprint_ratio(2), 5 / 6)
    # the control's block is the one measure copies
    src, dst, _ = measure._copy_buffers(2**20)
    assert src.nbytes == memory.COPY_BLOCK * 2**20 == dst.nbytes


def test_the_control_is_read_where_it_holds_as_much_memory_as_the_all_reduce():
    # a control that leaves a cache between 4 and 8 MiB: at the same M it is already flat from 8 to 16 MiB,
    # read at the all-reduce's footprint (5/6 of M) it still gets dearer there
    rates = [12e9, 12e9, 12e9, 6e9, 6e9, 6e9, 6e9]
    (matched,) = memory.matched_control(LADDER, rates, n=2)
    i8, i16 = LADDER.index(2**23), LADDER.index(2**24)
    assert rates[i8] / rates[i16] == 1.0
    assert matched[i8] / matched[i16] > 1.1
    assert matched[i8] == pytest.approx(12e9 * 0.5 ** (math.log(2**23 * 5 / 6 / 2**22) / math.log(2)))
    # a flat control stays flat, and the ends keep their values
    assert memory.matched_control(LADDER, [6e9] * 7, n=2)[0] == pytest.approx([6e9] * 7)
    assert memory.at_sizes(LADDER, rates, [1.0, 2.0**40]) == [12e9, 6e9]
    with pytest.raises(ValueError):
        memory.at_sizes([2.0, 1.0], [1.0, 1.0], [1.5])


def test_a_cut_one_size_step_away_in_the_other_sweep_is_reproduced():
    ab = (fit.AlphaBeta(1, 1), fit.AlphaBeta(1, 1))
    both = fit.PiecewiseFit((2**23.5,), ab)     # between 8 and 16 MiB
    next_gap = fit.PiecewiseFit((2**24.5,), ab)  # between 16 and 32 MiB
    far = fit.PiecewiseFit((2**21.5,), ab)      # between 2 and 4 MiB
    assert lab_runs.reproduced_cuts(both, [both, next_gap], LADDER) == (True,)
    assert lab_runs.reproduced_cuts(both, [both, next_gap], LADDER, within=0) == (False,)
    assert lab_runs.reproduced_cuts(both, [both, far], LADDER) == (False,)
    words = explain.cut_sentence("all-reduce", [2**23.5], [True], LADDER, clocks=[(1.4, 1.4)], core_share=1.0)
    assert "within a size step of each other" in words and "the machine's" in words


def test_the_large_message_story_follows_the_sweeps_the_control_and_the_pages():
    sizes = LADDER
    sweep = [0.35e-3, 0.56e-3, 1.0e-3, 2.3e-3, 6.1e-3, 19.8e-3, 40e-3]
    other = [0.35e-3, 0.55e-3, 1.1e-3, 2.9e-3, 7.2e-3, 20.0e-3, 40e-3]
    copy = [12.2e9, 12.2e9, 12.3e9, 8.5e9, 6.7e9, 6.5e9, 6.5e9]
    pages = [0, 0, 0, 0, 0, 0.5, 0.5]
    story = explain.large_story("all-reduce", sizes, [sweep, other], sweep, copy, copy, pages, lo=2**22)
    assert story.startswith("From 4 MiB to 32 MiB each byte of all-reduce got dearer at every doubling, in both sweeps "
                            "and on both clocks")
    assert "Up to 16 MiB the copy control" in story and "From 32 MiB each call mapped in fresh pages for half" in story
    # the control's rise is a memory-hierarchy effect, not named as the last-level cache; MPICH's buffer is the whole M
    assert "memory-hierarchy effect" in story and "does not identify which level" in story and "cache, most" not in story
    assert "temporary buffer, of the whole message, of which each call touches half" in story
    listed = explain.large_story("all-reduce", sizes, [sweep, other], sweep, copy, copy, pages, lo=2**22,
                                 footprint=5, llc=300 * 2**20)
    assert "with buffers well below the last-level cache the machine lists" in listed
    # no fresh pages and a flat control: no cause is named
    flat = explain.large_story("all-reduce", sizes, [sweep, other], None, [6e9] * 7, None, [0] * 7, lo=2**22)
    assert "the run does not say why" in flat and "both clocks" not in flat
    # a rise in one sweep only is not told as the machine's
    assert "no doubling" in explain.large_story("all-reduce", sizes, [sweep, [t * 2**k for k, t in
                                                                            enumerate([1e-3] * 7)][::-1]],
                                                None, copy, None, pages, lo=2**22)
    assert explain.cache_until(sizes, sweep, copy, copy, 2**22) == (2**22, 2**24)
    limits = explain.limits_sentence(1.7e9, 6.5e9, None, 1.0, 3e-6, 9e-6, None, True, cause="allocation",
                                     step_from=2**25, cache_span=(2**22, 2**24), footprint=5, llc=300 * 2**20)
    assert "last-level cache, most likely" not in limits and "allocation, most likely" in limits
    assert ("from 4 MiB to 16 MiB, where the copy control at the same footprint got dearer per byte too, a "
            "memory-hierarchy effect with buffers of 80 MiB at most, well below the 300 MiB last-level cache the "
            "machine lists (this run does not identify which level)") in limits


def test_the_rate_is_compared_again_where_no_fresh_pages_were_mapped():
    between = explain.clean_rate_sentence("all-reduce", LADDER[-3:], [2.73e9, 1.7e9, 1.7e9], [6.4e9] * 3, [0, .5, .5])
    assert "At 16 MiB, the largest size without fresh pages" in between and "second copy" in between
    assert "from the copy control's rate at that size" in between  # each pair of bounds says which copy rate it used
    below = explain.clean_rate_sentence("all-reduce", LADDER[-3:], [1.0e9, 1.7e9, 1.7e9], [6.4e9] * 3, [0, .5, .5])
    assert "below the bound of two copies" in below
    assert "no size without them" in explain.clean_rate_sentence("x", LADDER[-2:], [1e9] * 2, [6e9] * 2, [.5, .5])


def test_the_transfer_grade_gives_its_range_and_calls_a_winner_only_past_it():
    edge = explain.transfer_grade(0.18, 0.19, [0.21, 0.20], [0.29, 0.21])
    assert "18 to 21 %" in edge and "at the target's edge" in edge and "neither is the better" in edge
    assert "about" not in edge    # one figure, the range, as the calculator quotes it too
    calc = explain.calculator_sentence(True, 3, 0.16, moved_range=(0.151, 0.162))
    assert "by a median of 15 to 16 % by which sweep is graded" in calc
    clear = explain.transfer_grade(0.16, 0.20, [0.16, 0.19], [0.20, 0.22])
    assert "within the target" in clear and "the regime fits are the better" in clear
    assert "outside the target" in explain.transfer_grade(0.3, 0.2, [0.31], [0.21])


def test_bus_bandwidth_falls_with_sharing_cores_or_with_ranks():
    assert "falls when ranks share cores" in explain.ranks_busbw_sentence(1.7e9, 1.76e9, 0.95e9, 2**26)
    assert "falls with the number of ranks" in explain.ranks_busbw_sentence(1.7e9, 1.0e9, 0.5e9, 2**26)
    assert "cannot tell" in explain.ranks_busbw_sentence(1.7e9, None, 0.95e9, 2**26)


def test_bus_bandwidth_with_shared_cores_is_held_against_each_rank_share_and_per_core():
    kept = explain.ranks_busbw_sentence(1.398e9, 1.264e9, 0.865e9, 2**26, cores=(2, 4, 2))
    assert "against 0.50 had each rank's share of a core set it" in kept
    assert "Per core, the shared run moved 1.73 GB/s of bus bytes, against 1.40 GB/s with two ranks and 1.26" in kept
    assert "by less than each rank's smaller share of a core; per core, the shared run moved no less than the other two" in kept
    parts = [explain.ranks_busbw_sentence(1.398e9, 1.264e9, 0.865e9, 2**26, cores=(2, 4, 2), part=p)
             for p in ("share", "per_core")]
    assert " ".join(parts) == kept and parts[0].endswith("set it.") and parts[1].startswith("Per core")
    half = explain.ranks_busbw_sentence(1.4e9, 1.3e9, 0.7e9, 2**26, cores=(2, 4, 2))
    assert "by about each rank's smaller share of a core" in half
    worse = explain.ranks_busbw_sentence(1.4e9, 1.3e9, 0.4e9, 2**26, cores=(2, 4, 2))
    assert "by more than each rank's smaller share of a core: per core, sharing cost bandwidth too" in worse


def test_gloo_is_described_by_its_cores_and_its_ratios_by_their_spread():
    shared = explain.gloo_setup({"ranks": 2, "rank_cores": [[0, 1], [0, 1]], "repeats": 15}, {"rank_cores": [0, 1]})
    assert "helper threads" in shared and "the same two cores as MPICH's single-threaded ranks" in shared
    pinned = explain.gloo_setup({"ranks": 2, "rank_cores": [0, 1], "repeats": 15}, {"rank_cores": [0, 1]})
    assert "same two cores as MPICH's, one each, 15 calls" in pinned and "not in turns with MPI" in pinned
    free = explain.gloo_setup({"ranks": 2, "repeats": 5, "cpu_count": 16}, {"rank_cores": [0, 1]})
    assert "any of 16 cores" in free
    assert explain.gloo_ratio(2**26, (40e-3, 40.2e-3), (39.9e-3, 40.1e-3)).endswith("about 1.0 times MPICH's time")
    assert "110 to 850" in explain.gloo_ratio(2**10, (0.73e-3, 5.0e-3), (5.9e-6, 6.6e-6))


def test_gloo_sizes_past_the_spread_check_are_time_slice_bound_and_quoted_as_ranges():
    sizes = [2**10, 2**20, 2**24, 2**26]
    low, med, high = [2.3e-4, 2e-3, 11.9e-3, 55.6e-3], [3.4e-3, 3.9e-3, 13.4e-3, 58.4e-3], [3.8e-3, 6.5e-3, 17.1e-3, 62.8e-3]
    mpi_low, mpi_high = [8.5e-6, 3.6e-4, 8e-3, 45e-3], [9e-6, 4e-4, 9e-3, 48e-3]
    bound = explain.gloo_spread(sizes, low, med, high, mpi_low, mpi_high)
    assert bound.startswith("In the reference run, at two sizes up to 1 MiB") and "time-slice-bound" in bound
    assert "at the smallest, gloo's all-reduce took 26 to 450 times" in bound
    assert "pins them to" in bound and "own making" not in bound  # the time slicing is the pinning's
    clean = explain.gloo_spread(sizes, low, med, high, mpi_low, mpi_high, part="clean")
    assert clean.startswith("from 16 MiB up") and "1.16 to 2.14 times" in clean and "1.16 to 1.40 times at the largest" in clean
    tidy = explain.gloo_spread(sizes[2:], low[2:], med[2:], high[2:], mpi_low[2:], mpi_high[2:])
    assert "no size is time-slice-bound" in tidy


def test_the_ring_is_held_against_the_library_where_neither_maps_fresh_pages():
    sizes = [2**24, 2**26]
    text = explain.ring_vs_library(25e-6, 10e-6, sizes, [9.9e-3, 60e-3], [18.3e-3, 80e-3], [0, 0.033], [0, 0.5],
                                   part="time")
    assert "for half the message, the ring's for 3 % of it" in text and "At 16 MiB, the largest size" in text
    assert "0.54 of the library's time" in text and "separate runs" in text
    alpha = explain.ring_vs_library(25e-6, 10e-6, sizes, [1, 1], [1, 1])
    assert "likely cause" in alpha and "does not test it" in alpha
    # with fresh pages nowhere, the largest size is compared
    assert "At 64 MiB, the ring took 0.75" in explain.ring_vs_library(25e-6, 10e-6, sizes, [1, 60e-3], [1, 80e-3],
                                                                      [0, 0], [0, 0], part="time")


def test_the_load_checks_sentence_states_the_sweep_tolerance_and_the_sweeps_gap():
    text = explain.suspects_sentence([], 68, shown=0, sweep_limit=1.5, gap=(1.25, 27))
    assert text.startswith("None of the 68 timings fails the load checks.") and "up to 1.5 times" in text and "1.25 times" in text
    assert explain.suspects_sentence([], 68, sweep_limit=1.5, gap=(1.0, 0)) == "None of the 68 timings fails the load checks."


def test_growth_is_quoted_over_the_sweeps_against_a_fixed_cost_per_byte():
    words, note = explain.large_growth_words(15.6, [16.2, 13.9])
    assert words.startswith("14 to 16 times") and "more than the 8" in note
    assert "about the 8" in explain.large_growth_words(8.1, [7.9, 8.3])[1]
    assert "rose by half the message" in explain.growth_sentence(15.6, 2**23, 2**26, faults=(0.0, 0.5))
    assert "1.7 to 2.0 times dearer, by the sweep" in explain.growth_sentence(15.6, 2**23, 2**26,
                                                                          sweep_factors=(16.2, 13.9))
