"""commlib.lab: real MPI runs on this machine (small sizes, each run under a timeout).

Skipped, with the reason, where mpi4py or mpiexec is missing.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from commlib import cost
from commlib.lab import calculators as predict
from commlib.lab import checker, fit, measure, runner

pytest.importorskip("mpi4py", reason="the lab needs mpi4py (pip install mpi4py mpich)")
if runner.mpiexec_path() is None:
    pytest.skip("the lab needs mpiexec (pip install mpich)", allow_module_level=True)

TIMEOUT = 60


@pytest.mark.parametrize("n", [3, 4])
def test_p2p_allreduces_equal_mpi_allreduce_bit_for_bit(n):
    # Ring and halving-doubling vs MPI_Allreduce on int64 vectors of lengths 0, 1, 3, 10, 1000, 4097;
    # 3 ranks is the non-power-of-two case (fold-in / fold-out), 4 the power of two. The self-test also
    # holds each algorithm's step and byte counts against commlib.cost.allreduce_terms.
    run = runner.run_mpi(n, ["commlib.lab.p2p"], timeout=TIMEOUT)
    assert run.ok, run.stdout + run.stderr
    assert "equal MPI_Allreduce" in run.stdout


@pytest.fixture(scope="module")
def four_rank_run():
    return runner.measure(n=4, sizes=[1024, 8192], warmup=1, repeats=3, min_repeats=2, budget=0.05,
                          timeout=TIMEOUT, progress=None)


def test_measure_json_has_every_key(four_rank_run):
    doc = four_rank_run
    assert doc["schema"] == measure.SCHEMA
    assert doc["ranks"] == 4 and doc["impl"] == "mpi" and doc["hosts"] == 1
    assert isinstance(doc["oversubscribed"], bool) and doc["cpu_count"] >= 1
    results = doc["results"]
    assert [(r["op"], r["nbytes"]) for r in results] == [(op, x) for op in measure.OPS for x in (1024, 8192)]
    for r in results:
        assert set(measure.RESULT_KEYS) <= set(r)
        assert 4 <= r["repeats"] == len(r["samples_s"]) == len(r["sweep"]) == len(r["at_s"]) <= 6  # two sweeps
        assert set(r["sweep"]) == {0, 1}
        assert 0 < r["min_s"] <= r["q1_s"] <= r["median_s"] <= r["q3_s"] <= r["max_s"]
        assert r["count"] * 4 == r["nbytes"]
    json.dumps(doc)  # plain JSON types only


def test_measure_json_becomes_series_with_the_right_algorithms(four_rank_run):
    series = {s.op: s for s in runner.to_series(four_rank_run)}
    assert set(series) == set(measure.OPS)
    # the library chooses per size and rank count: the series say so, and the counts follow MPICH's choice
    assert all(s.algorithm == "mpich" for s in series.values())
    assert fit.terms_at("broadcast", 8192.0, 4, "mpich") == cost.collective_terms("broadcast", 8192.0, 4, "tree")
    assert fit.terms_at("all_reduce", 8192.0, 4, "mpich") == cost.collective_terms("all_reduce", 8192.0, 4,
                                                                                  "halving_doubling")
    assert series["all_gather"].nbytes == (1024.0, 8192.0)
    assert all(s.n == 4 for s in series.values())


def test_point_to_point_ring_is_timed_and_forced_mpich_algorithm_is_recorded():
    doc = runner.measure(n=3, ops=["all_reduce"], sizes=[4096], impl="ring", warmup=1, repeats=2, min_repeats=2,
                         timeout=TIMEOUT, progress=None)
    assert doc["impl"] == "ring" and doc["results"][0]["repeats"] == 4      # two per sweep, two sweeps
    (s,) = runner.to_series(doc)
    assert s.algorithm == "ring" and s.n == 3
    doc = runner.measure(n=2, ops=["all_reduce"], sizes=[4096], warmup=1, repeats=2, min_repeats=2,
                         mpich_algorithm="ring", timeout=TIMEOUT, progress=None)
    assert doc["allreduce_algorithm"] == "ring"
    assert runner.to_series(doc)[0].algorithm == "ring"


def test_thread_level_reaches_mpi_before_it_starts():
    # mpi4py asks for MPI_THREAD_MULTIPLE unless told otherwise; the control asks for SINGLE and must get it
    from mpi4py import MPI

    kw = dict(n=2, ops=["all_reduce"], sizes=[4096], warmup=0, repeats=2, min_repeats=2, sweeps=1,
              timeout=TIMEOUT, progress=None)
    assert runner.measure(thread_level="single", **kw)["thread_level"] == MPI.THREAD_SINGLE
    assert runner.measure(**kw)["thread_level"] == runner.measure(thread_level="multiple", **kw)["thread_level"]
    with pytest.raises(ValueError, match="thread_level"):
        runner.measure(n=2, thread_level="SINGLE", progress=None)


def test_measure_reports_bad_arguments_instead_of_hanging():
    with pytest.raises(RuntimeError, match="all_reduce only"):
        runner.measure(n=2, ops=["broadcast"], sizes=[1024], impl="ring", timeout=TIMEOUT, progress=None)
    with pytest.raises(ValueError, match="mpich_algorithm"):
        runner.measure(n=2, mpich_algorithm="fastest", progress=None)


def test_progress_lines_stream_one_per_size():
    lines = []
    runner.measure(n=2, ops=["broadcast"], sizes=[1024, 2048], warmup=0, repeats=2, min_repeats=2,
                   timeout=TIMEOUT, progress=lines.append, sweeps=1, order="sorted")
    assert lines == ["[1/2] sweep 1 1 KiB", "[2/2] sweep 1 2 KiB"]


def test_the_collectives_are_timed_in_turns_at_each_size_in_shuffled_sweeps():
    # A load episode must fall on every collective alike, and on sizes scattered over the ladder, different
    # ones in each sweep: the calls' start times say in what order they were made.
    sizes = [1024, 2048, 4096, 8192, 16384]
    doc = runner.measure(n=2, sizes=sizes, warmup=0, repeats=2, min_repeats=2, budget=0.0, timeout=TIMEOUT,
                         progress=None, seed=3, copy=True)
    calls = sorted((t, r["op"], r["nbytes"], k) for r in doc["results"]
                   for t, k in zip(r["at_s"], r["sweep"]))
    plan = measure.plan(sizes, 2, "shuffled", 3)
    assert plan[0] != plan[1] and plan[0] != sorted(sizes)
    visited = [list(dict.fromkeys(x for _, _, x, kk in calls if kk == k)) for k in range(2)]
    assert visited == plan
    turn = list(measure.OPS) + ["copy"]
    for k in range(2):
        for x in sizes:
            ops = [op for _, op, xx, kk in calls if kk == k and xx == x]
            assert ops == turn * 2                # in turns, call by call
    sweeps = [runner.to_series(doc, sweep=k) for k in range(2)]
    assert [s.op for s in sweeps[0]] == list(measure.OPS)          # the copy control is no collective
    assert runner.copy_control(doc)[0] == tuple(float(x) for x in sizes)


def test_every_call_records_cpu_time_beside_wall_time():
    # A call slowed by other programs on its core is slower in wall time, not in CPU time: both are kept,
    # one per call (the copy's slowest rank, a collective's least-scheduled one), and the copy's CPU-time rate
    # comes from the CPU times alone.
    sizes = [2**20, 2**22]
    doc = runner.measure(n=2, ops=["broadcast"], sizes=sizes, warmup=1, repeats=3, min_repeats=3, timeout=TIMEOUT,
                         progress=None, sweeps=1, copy=True)
    rows = [r for r in doc["results"] if r["op"] == "copy"]
    assert [len(r["cpu_s"]) for r in rows] == [r["repeats"] for r in rows]
    # The collectives' calls carry their CPU time too (the least-scheduled rank's): never much above the wall time.
    for r in doc["results"]:
        assert len(r["cpu_s"]) == r["repeats"]
        if r["op"] != "copy":
            assert all(c <= 1.2 * w + 1e-4 for c, w in zip(r["cpu_s"], r["samples_s"]))
    assert all(step is not None for step in runner.clock_steps(doc, "broadcast", [2**21]))
    cpu_sizes, cpu_rates = runner.copy_cpu_control(doc)
    wall_sizes, wall_rates, _, _ = runner.copy_control(doc)
    assert cpu_sizes == wall_sizes == tuple(float(x) for x in sizes)
    # CPU time is spent within the wall time it is measured in: the CPU-time rate is never much the lower.
    assert all(c >= 0.8 * w for c, w in zip(cpu_rates, wall_rates))
    with pytest.raises(ValueError, match="CPU times"):
        runner.copy_cpu_control({"results": [{k: v for k, v in r.items() if k != "cpu_s"} for r in rows]})
    # Every call's fresh pages are counted too (a whole number per call), and the page size with them.
    assert doc["page_bytes"] and doc["page_bytes"] >= 4096
    for r in doc["results"]:
        assert len(r["faults"]) == r["repeats"] and all(isinstance(f, int) and f >= 0 for f in r["faults"])
    # The copy control copies into buffers made before the timed calls: it maps no fresh pages in the median call.
    assert all(sorted(r["faults"])[len(r["faults"]) // 2] == 0 for r in rows)
    assert all(f is not None for f in runner.fault_fractions(doc, "broadcast", [2**21]))


LEARNERS = {
    "wrong_sum": ("def ring_allreduce(comm, array):\n    return array * comm.Get_size()\n", "wrong sum"),
    "no_reduction": ("def ring_allreduce(comm, array):\n    return array.copy()\n", "own input"),
    "wrong_shape": ("def ring_allreduce(comm, array):\n    return array[:1]\n", "shape"),
    "returns_none": ("def ring_allreduce(comm, array):\n    pass\n", "None"),
    "raises": ("def ring_allreduce(comm, array):\n    raise RuntimeError('boom')\n", "raised RuntimeError: boom"),
    "wrong_name": ("def ring_all_reduce(comm, array):\n    return array\n", "could not load"),
}


@pytest.mark.parametrize("case", sorted(LEARNERS))
def test_checker_reports_wrong_implementations_with_a_hint(case):
    source, words = LEARNERS[case]
    verdict = checker.check_ring_allreduce(source, n=4, timeout=TIMEOUT)
    assert not verdict.correct
    assert words in verdict.message
    assert verdict.hint  # always something to try next
    assert str(verdict).startswith("Wrong: ")


def test_checker_kills_a_deadlock_and_says_so():
    source = ("def ring_allreduce(comm, array):\n"
              "    buf = np.empty_like(array)\n"
              "    comm.Recv(buf, source=(comm.Get_rank() - 1) % comm.Get_size())\n"
              "    return buf\n")
    verdict = checker.check_ring_allreduce(source, n=4, timeout=4)
    assert not verdict.correct
    assert "deadlock" in verdict.message and "Sendrecv" in verdict.hint


def test_checker_reports_missing_all_gather_phase(tmp_path):
    # Reduce-scatter only: each rank holds one finished chunk and partial sums elsewhere.
    path = tmp_path / "half_ring.py"
    path.write_text(
        "import numpy as np\n"
        "def ring_allreduce(comm, array):\n"
        "    p, r = comm.Get_size(), comm.Get_rank()\n"
        "    parts = [c.copy() for c in np.array_split(array, p)]\n"
        "    for s in range(p - 1):\n"
        "        got = np.empty_like(parts[(r - s - 1) % p])\n"
        "        comm.Sendrecv(parts[(r - s) % p], dest=(r + 1) % p, recvbuf=got, source=(r - 1) % p)\n"
        "        parts[(r - s - 1) % p] += got\n"
        "    return np.concatenate(parts)\n"
    )
    verdict = checker.check_ring_allreduce(str(path), n=4, timeout=TIMEOUT)
    assert not verdict.correct and "all-gather" in verdict.hint


def test_checker_refuses_a_function_that_calls_a_library_collective():
    # The cheat gives the right sum, so only the refusal can fail it; it names the call and its line.
    source = ("def ring_allreduce(comm, array):\n"
              "    out = np.empty_like(array)\n"
              "    comm.Allreduce(array, out)\n"
              "    return out\n")
    verdict = checker.check_ring_allreduce(source, n=4, timeout=TIMEOUT)
    assert not verdict.correct
    assert "library's own collective: Allreduce (line 3)" in verdict.message and "Sendrecv" in verdict.hint
    assert checker.library_collectives("def ring_allreduce(comm, a):\n    return comm.allreduce(a)\n") == [
        ("allreduce", 2)]


def test_checker_places_an_mpi_error_on_the_learners_own_line():
    # A receive buffer too short for the message: MPI raises inside mpi4py, called from line 4 of the function.
    source = ("def ring_allreduce(comm, array):\n"
              "    p, r = comm.Get_size(), comm.Get_rank()\n"
              "    got = np.empty(1, dtype=array.dtype)\n"
              "    comm.Sendrecv(array, dest=(r + 1) % p, recvbuf=got, source=(r - 1) % p)\n"
              "    return array\n")
    verdict = checker.check_ring_allreduce(source, n=4, timeout=TIMEOUT)
    assert not verdict.correct
    assert "raised inside MPI, called from line 4 of your function" in verdict.message
    raised = checker.check_ring_allreduce(LEARNERS["raises"][0], n=4, timeout=TIMEOUT)
    assert "(line 2 of your function)" in raised.message


def test_checker_accepts_the_reference_solution_as_module_and_as_function():
    from commlib.lab import p2p

    assert checker.check_ring_allreduce("commlib.lab.p2p", n=4, timeout=TIMEOUT).correct
    assert checker.check_ring_allreduce("commlib.lab.p2p:halving_doubling_allreduce", n=3, timeout=TIMEOUT).correct
    assert checker.check_ring_allreduce(p2p.__file__, n=2, timeout=TIMEOUT).correct


def test_checker_rejects_unusable_input_without_running():
    assert not checker.check_ring_allreduce(42, n=4)
    assert "no such file" in checker.check_ring_allreduce("no_such_file.py", n=4).message
    with pytest.raises(ValueError, match="n must"):
        checker.check_ring_allreduce("commlib.lab.p2p", n=1)


def test_expected_sum_is_the_sum_of_the_rank_inputs():
    n, count = 4, 10
    want = np.zeros(count, dtype=np.int64)
    for r in range(n):
        want += checker.rank_input(r, count)
    assert np.array_equal(checker.expected_sum(n, count), want)
    assert checker.diagnose(want, 0, n, count) == ("ok", "")


def test_launch_command_stays_on_this_machine_unless_hosts_are_named(monkeypatch):
    local = runner.launch_command(4, ["commlib.lab.measure"], python="python", mpiexec="mpiexec")
    assert local[:5] == ["mpiexec", "-launcher", "fork", "-iface", "lo"]
    assert "-hosts" not in local
    text = runner.command_text(8, ["commlib.lab.measure"], hosts=["a", "b"])
    assert text == "mpiexec -hosts a,b -n 8 python -m commlib.lab.measure"
    monkeypatch.delenv("UCX_TLS", raising=False)
    assert runner.loopback_env()["UCX_TLS"] == "self,sm"  # shared memory only, no TCP or InfiniBand
    with pytest.raises(ValueError, match="n must"):
        runner.launch_command(0, ["commlib.lab.measure"])


def test_bus_bandwidth_of_a_measured_point_matches_cost():
    # The lab reports busbw through commlib.cost; an all-reduce of 8 MB in 10 ms on 4 ranks: 0.8 GB/s algbw.
    assert cost.bus_bandwidth("all_reduce", 8e6, 4, 0.01) == pytest.approx(0.8e9 * 1.5)


# ---------------------------------------------------------------- robustness on any machine, under load

def test_progress_by_sweep_prints_one_line_per_sweep_and_ignores_library_noise(capsys):
    show = runner.ProgressBySweep()
    for line in ["[1/4] sweep 1 1 KiB", "[1699.123] [myhost:4242:0] ucx WARN something",
                 "[2/4] sweep 1 4 KiB", "[myhost:1] warning", "[3/4] sweep 2 1 KiB", ""]:
        show(line)
    # Host names and process ids in stray stderr lines must never reach the stored output.
    assert capsys.readouterr().out.splitlines() == ["measuring, sweep 1 ...", "measuring, sweep 2 ..."]


def test_lab_cpus_are_usable_cores():
    import os

    cpus = runner.lab_cpus(2)
    if hasattr(os, "sched_getaffinity"):
        allowed = os.sched_getaffinity(0)
        assert set(cpus) <= allowed and len(cpus) == min(2, len(allowed))
    with pytest.raises(ValueError, match="count"):
        runner.lab_cpus(0)


def test_pinned_run_counts_only_its_cores_and_knows_it_is_oversubscribed():
    import os

    one = runner.lab_cpus(1)
    if not one:
        pytest.skip("this OS cannot pin processes to cores")
    doc = runner.measure(n=2, ops=["broadcast"], sizes=[1024], warmup=0, repeats=2, min_repeats=2, cpus=one,
                         timeout=TIMEOUT, progress=None)
    # Two ranks on one core: oversubscribed on any machine, however many cores it has.
    assert doc["cpu_count"] == 1 and doc["oversubscribed"] is True
    assert doc["machine_cpu_count"] == (os.cpu_count() or 1)
    assert doc["rank_cores"] == [one[0], one[0]]


def test_each_rank_binds_itself_to_a_core_of_its_own_when_there_are_enough():
    # The chapter says "one rank per core": the ranks must not merely share a set of cores that the OS
    # schedules them on; each binds itself to its own, and with fewer cores than ranks they share evenly.
    two = runner.lab_cpus(2)
    if len(two) < 2:
        pytest.skip("needs two cores this process may pin to")
    doc = runner.measure(n=2, ops=["broadcast"], sizes=[1024], warmup=0, repeats=2, min_repeats=2, cpus=two,
                         timeout=TIMEOUT, progress=None)
    assert doc["cpu_count"] == 2 and doc["oversubscribed"] is False
    assert doc["rank_cores"] == sorted(two)
    four = runner.measure(n=4, ops=["broadcast"], sizes=[1024], warmup=0, repeats=2, min_repeats=2, cpus=two,
                          timeout=TIMEOUT, progress=None)
    assert four["rank_cores"] == sorted(two) * 2 and four["oversubscribed"] is True


def test_the_core_a_rank_binds_to_is_round_robin_over_the_sorted_cores():
    assert [measure.rank_core(r, (9, 4)) for r in range(5)] == [4, 9, 4, 9, 4]
    assert [measure.rank_core(r, (2, 3, 5)) for r in range(3)] == [2, 3, 5]       # enough cores: one each
    with pytest.raises(ValueError, match="cores"):
        measure.rank_core(0, ())
    with pytest.raises(ValueError, match="local_rank"):
        measure.rank_core(-1, (0,))


def test_pinning_to_a_core_this_process_may_not_use_is_refused():
    import os

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("this OS cannot pin processes to cores")
    outside = max(os.sched_getaffinity(0)) + 1000
    with pytest.raises(ValueError, match="cpus must be cores"):
        runner.run_mpi(2, ["commlib.lab.p2p"], cpus=[outside])


SLOW_START = ("import time\n"
              "time.sleep(5)  # a loaded machine: every rank takes seconds to start\n"
              "{body}")
RIGHT_RING = "from commlib.lab.p2p import ring_allreduce\n"


def test_slow_start_is_not_taken_for_a_deadlock():
    # The deadlock clock (4 s here, less than the 5 s start) runs only once every rank has loaded the function.
    verdict = checker.check_ring_allreduce(SLOW_START.format(body=RIGHT_RING), n=4, timeout=4, startup_timeout=TIMEOUT)
    assert verdict.correct, str(verdict)


def test_ranks_that_never_start_are_reported_as_such():
    verdict = checker.check_ring_allreduce(SLOW_START.format(body=RIGHT_RING), n=2, timeout=TIMEOUT,
                                           startup_timeout=1)
    assert not verdict.correct
    assert "did not start" in verdict.message and "deadlock" not in verdict.message


def test_run_mpi_rejects_non_positive_timeouts():
    with pytest.raises(ValueError, match="timeout"):
        runner.run_mpi(2, ["commlib.lab.p2p"], timeout=0)
    with pytest.raises(ValueError, match="startup_timeout"):
        runner.run_mpi(2, ["commlib.lab.p2p"], startup_timeout=-1)


# ---------------------------------------------------------------- words the lab's prose is glued from

def test_verdict_is_meets_within_target_and_misses_beyond():
    from commlib.views import lab as lab_views

    assert lab_views.verdict(0.2, 0.2) == "meets"  # the boundary counts as within
    assert lab_views.verdict(0.2000001, 0.2) == "misses"
    assert lab_views.verdict(0.0) == "meets"
    with pytest.raises(ValueError, match="error"):
        lab_views.verdict(-0.1)
    with pytest.raises(ValueError, match="target"):
        lab_views.verdict(0.1, 0.0)


@pytest.mark.parametrize("ranks, cores, words", [
    (2, 2, "one rank per core"), (2, 8, "one rank per core"), (4, 2, "two ranks per core"),
    (8, 2, "four ranks per core"), (4, 1, "four ranks on one core"), (3, 2, "three ranks sharing two cores"),
])
def test_placement_words(ranks, cores, words):
    from commlib.views import lab as lab_views

    assert lab_views.placement(ranks, cores) == words


def test_compare_spread_words_and_symmetry():
    from commlib.views import lab as lab_views

    assert lab_views.compare_spread(0.1, 0.2) == "wider than"
    assert lab_views.compare_spread(0.2, 0.1) == "narrower than"
    assert lab_views.compare_spread(0.1, 0.12) == "about as wide as"
    assert lab_views.compare_spread(0.12, 0.1) == "about as wide as"
    assert lab_views.compare_spread(0.0, 0.0) == "about as wide as"
    with pytest.raises(ValueError, match="reference"):
        lab_views.compare_spread(-1.0, 0.1)


# ---------------------------------------------------------------- what the lab page prints

def test_verdict_wraps_long_lines_and_keeps_every_word():
    message = ("your function raised NotImplementedError: replace this line with your ring (line 2) "
               "for length 12 " + "and more words " * 12).strip()
    hint = "print the chunk bounds of each step: a receive buffer must be as long as the chunk sent to it. " * 3
    text = str(checker.Verdict(False, message, hint))
    lines = text.split("\n")
    assert max(len(line) for line in lines) <= checker.WIDTH
    assert len(lines) >= 4                              # both parts needed more than one line
    assert lines[0].startswith("Wrong: ")
    hint_at = [i for i, line in enumerate(lines) if line.startswith("Hint: ")]
    assert len(hint_at) == 1
    words = " ".join(lines[:hint_at[0]]).split()
    assert words == ("Wrong: " + message).split()
    assert " ".join(lines[hint_at[0]:]).split() == ("Hint: " + hint).split()


def test_verdict_keeps_short_text_and_its_own_line_breaks():
    assert str(checker.Verdict(True, "ring_allreduce gives the sum.")) == "Right: ring_allreduce gives the sum."
    text = str(checker.Verdict(False, "SyntaxError:\n  x = (", "close the bracket"))
    assert text.split("\n") == ["Wrong: SyntaxError:", "  x = (", "Hint: close the bracket"]


def _series(alpha: float, inverse_beta: float, sizes=tuple(2.0**k for k in range(20, 27))):
    from commlib.lab import fit

    # times built from the model itself: a ring all-reduce on 2 ranks has 2 steps and sends M bytes
    t = [2 * alpha + m / inverse_beta for m in sizes]
    return fit.Series("all_reduce", 2, tuple(sizes), tuple(t), algorithm="ring", label="all-reduce")


def test_calculator_names_an_unmeasurable_start_up_cost_instead_of_zero():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    s = _series(0.0, 10e9)                              # pure copying: no flat part to fit
    calc = lab_views.model_calculator([s], [fit.fit_joint([s])], size="16 MiB")
    shown = calc.results["latency term a alpha"]
    assert shown.startswith("none measurable") and " ns" not in shown
    assert "1 MiB to 64 MiB" in shown                   # the sizes the line was fitted on
    assert len(shown) <= 60                             # fits the calculator's value column


def test_calculator_note_warns_of_a_zero_alpha_carried_to_many_steps_and_shows_no_backticks():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    s = _series(0.0, 10e9)
    calc = lab_views.model_calculator([s], [fit.fit_joint([s])], size="1 MiB", grade="at `MPI_THREAD_SINGLE` it")
    assert "`" not in calc.note and "at MPI_THREAD_SINGLE it" in calc.note
    assert "carried to many ranks" in calc.note and "missing, not small" in calc.note
    calc.controls["n"].value = 64                       # a 63-step ring: the price still has no start-up in it
    assert calc.results["latency term a alpha"].startswith("none measurable")


def test_load_check_table_is_a_sentence_when_no_timing_failed():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    assert "|" not in lab_views.suspects_table([]).data
    table = lab_views.suspects_table([fit.Suspect("all_reduce", 1024.0, "spread")]).data
    assert "| all-reduce | 1 KiB | spread |" in table


def test_calculator_shows_a_measurable_start_up_cost_as_a_time():
    from commlib.lab import fit
    from commlib.units import format_time
    from commlib.views import lab as lab_views

    s = _series(30e-6, 10e9, sizes=tuple(2.0**k for k in range(10, 27)))
    calc = lab_views.model_calculator([s], [fit.fit_joint([s])], size="4 KiB")
    assert calc.results["latency term a alpha"] == format_time(2 * 30e-6)


def test_calculator_calls_a_two_size_regimes_alpha_a_secants_intercept():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    s = _series(5e-6, 10e9, sizes=tuple(2.0**k for k in range(20, 27)))
    top = fit.fit_joint([s.subset(lo=2.0**25)])  # two sizes: a line through both
    pw = fit.PiecewiseFit((2.0**24.5,), (fit.fit_joint([s.subset(hi=2.0**24)]), fit.AlphaBeta(1e-4, top.beta)))
    calc = lab_views.model_calculator([s], [pw], size="64 MiB")
    assert calc.results["regime fitted on"] == "2 measured sizes, 32 MiB to 64 MiB: a secant"
    shown = calc.results["latency term a alpha"]
    assert "secant's intercept" in shown and len(shown) <= 60
    calc = lab_views.model_calculator([s], [pw], size="4 MiB")
    assert calc.results["regime fitted on"] == "5 measured sizes, 1 MiB to 16 MiB"
    assert "secant" not in calc.results["latency term a alpha"]


def test_calculator_marks_a_price_outside_the_measured_sizes_and_ranks_as_extrapolated():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    s = _series(5e-6, 10e9, sizes=tuple(2.0**k for k in range(10, 27)))       # 1 KiB to 64 MiB, two ranks
    calc = lab_views.model_calculator([s], [fit.fit_joint([s])], size="1 MiB", graded_ranks=(4,))
    assert list(calc.controls["collective"].options) == ["all-reduce (fitted on 2 ranks)"]
    assert calc.results["measured range"] == "measured: 1 KiB to 64 MiB, fitted on 2 ranks"
    calc.controls["n"].value = 4                                               # graded there: no warning
    assert calc.results["measured range"].startswith("measured:")
    calc.controls["size"].value = "1 GiB"                                      # 16 times the largest measured size
    assert calc.results["measured range"] == "extrapolated: above the measured 64 MiB"
    calc.controls["n"].value = 64
    assert calc.results["measured range"] == "extrapolated: above the measured 64 MiB; 64 ranks, fitted on 2, graded on 4"
    calc.controls["size"].value = "512 B"
    assert calc.results["measured range"].startswith("extrapolated: below the measured 1 KiB")
    assert len(calc.results["measured range"]) <= 80                          # fits the calculator's value column


def test_regime_sizes_are_those_between_the_crossovers():
    from commlib.lab import fit

    s = _series(1e-5, 1e9, sizes=(1024.0, 4096.0, 16384.0, 65536.0))
    pw = fit.PiecewiseFit((3000.0, 20000.0), (fit.AlphaBeta(1e-5, 1e-9),) * 3)
    assert predict.regime_sizes(pw, s, 10) == (1024.0, 1024.0)
    assert predict.regime_sizes(pw, s, 5000) == (4096.0, 16384.0)
    assert predict.regime_sizes(pw, s, 1e9) == (65536.0, 65536.0)
    assert predict.regime_sizes(fit.AlphaBeta(1e-5, 1e-9), s, 10) == (1024.0, 65536.0)
    assert predict.latency_term(2, 1e-21, 2**20, 2**26).startswith("none measurable")
    with pytest.raises(ValueError, match="alpha"):
        predict.latency_term(2, -1.0, 1, 2)


def test_fit_summary_names_an_unmeasurable_alpha():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    flat, pure = _series(30e-6, 10e9, sizes=tuple(2.0**k for k in range(10, 27))), _series(0.0, 10e9)
    text = lab_views.fit_summary_table([flat, pure], [fit.fit_joint([flat]), fit.fit_joint([pure])]).data
    rows = [line for line in text.splitlines() if line.startswith("| all-reduce")]
    assert len(rows) == 2
    assert "| 30 µs |" in rows[0] and "none measurable" not in rows[0]     # two figures: no finer than a rerun agrees
    assert "| none measurable (fitted 0) |" in rows[1] and " ns" not in rows[1]


def test_fit_summary_gives_each_regime_its_worst_error_and_names_an_exact_one():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    sizes = tuple(2.0**k for k in range(10, 27))
    t = [fit.AlphaBeta(5e-6, 1e-10).time("all_gather", x, 2, "mpich") * (1.4 if x == 2**20 else 1.0) for x in sizes]
    s = fit.Series("all_gather", 2, sizes, tuple(t), "mpich")
    pw = fit.PiecewiseFit((2**24 * 1.41,), (fit.fit_joint([s.subset(hi=2**24)]), fit.fit_joint([s.subset(lo=2**25)])))
    text = lab_views.fit_summary_table([s], [pw]).data
    low, high = [line for line in text.splitlines() if line.startswith("| all_gather")]
    assert "at 1 MiB | misses" in low                      # the outlier: the median meets, the worst does not
    assert "exact by construction" in high and "32 MiB to 64 MiB" in high


def test_fit_summary_shows_a_regimes_whole_span_and_grades_only_three_points_or_more():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    sizes = tuple(2.0**k for k in range(10, 27))
    s = fit.Series("broadcast", 2, sizes, tuple(fit.AlphaBeta(5e-6, 1e-10).time("broadcast", x, 2) for x in sizes))
    pw = fit.PiecewiseFit((2**12 * 1.41,), (fit.fit_joint([s.subset(hi=2**12)]), fit.fit_joint([s.subset(lo=2**13)])))
    low, high = [line for line in lab_views.fit_summary_table([s], [pw]).data.splitlines()
                 if line.startswith("| broadcast")]
    assert "| 1 KiB to 4 KiB | 3 | 1 |" in low and "not graded" in low and "meets" not in low
    assert "| 8 KiB to 64 MiB | 14 | 14 |" in high and "not graded" not in high


def test_the_error_table_names_its_model_and_puts_the_line_beside_it():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    s = _series(5e-6, 10e9, sizes=tuple(2.0**k for k in range(10, 27)))
    line = fit.fit_joint([s])
    hybrid = fit.PiecewiseFit((2**21.5,), (line, fit.AlphaBeta(0.0, 2e-10)))
    text = lab_views.error_table(hybrid, s, name=lab_views.model_name(hybrid, line), line=line).data
    assert "the single line below 2.8 MiB, the top regime above" in text and "predicted by the single line" in text
    alone = lab_views.error_table(line, s, name=lab_views.model_name(line)).data
    assert "predicted by the single line" in alone and "error of the line" not in alone


def test_the_ranks_table_gives_both_allowances_and_the_ratio_under_each():
    from commlib.views import lab as lab_views

    text = lab_views.ranks_rate_table(1.05e9, 0.83e9, 0.66, 0.79).data
    assert "busbw / share (GB/s)" in text and "busbw / share² (GB/s)" in text
    assert "| 4 over 2 | 0.79 |  | 0.66 | 0.55 |" in text


def test_rate_table_puts_the_measured_busbw_beside_the_fit_and_names_a_secant():
    from commlib.views import lab as lab_views

    sizes = tuple(float(2**k) for k in range(10, 17))
    two_top = fit.PiecewiseFit((2.0**15 * 1.4,), (fit.AlphaBeta(5e-6, 1 / 2e9), fit.AlphaBeta(5e-6, 1 / 2e9)))
    s = fit.Series("all_reduce", 2, sizes, tuple(two_top.time("all_reduce", x, 2, "mpich") for x in sizes), "mpich")
    table = str(lab_views.rate_table([s], [two_top], [two_top], 1e9).data)
    assert "busbw at 64 KiB, measured" in table and "a secant through both" in table
    # a secant meets its two sizes by construction: its rate is "not tested", never "disagree" or "agree"
    checked = str(lab_views.rate_table([s], [two_top], [two_top], 1e9, checks=[fit.rate_check(two_top, s)]).data)
    assert "not tested: a secant" in checked and "agree" not in checked
    line = str(lab_views.rate_table([s], [fit.fit_joint([s])], [fit.fit_joint([s])], 1e9).data)
    assert "7 sizes (one line)" in line
    assert "above the copy control" in line        # 2 GB/s against a 1 GB/s copy: flagged


def test_lab_figures_give_each_colour_one_meaning_and_name_lines_at_their_ends():
    # A colour stands for the collective and algorithm in every figure, whatever its place in the list; the ranks
    # are told apart by marker; lines are named at their ends, in their colour, with no legend to decode.
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from commlib.lab import fit
    from commlib.views import lab as lab_views

    sizes = (1024.0, 2048.0, 4096.0)

    def series(op, n, algorithm="mpich"):
        return fit.Series(op, n, sizes, (1e-5, 2e-5, 4e-5), algorithm, label=f"{op} ({algorithm}), {n} ranks")

    two, four = series("all_reduce", 2), series("all_reduce", 4)
    others = [series(op, 2) for op in ("reduce_scatter", "all_gather", "broadcast")]
    p2p = [series("all_reduce", 4, "ring"), series("all_reduce", 4, "halving_doubling")]
    assert lab_views.series_color(two) == lab_views.series_color(four)
    assert lab_views.series_marker(two) != lab_views.series_marker(four)
    colours = [lab_views.series_color(s) for s in [two, *others, *p2p]]
    assert len(set(colours)) == len(colours)
    # the runs figure's colours stand for the run, and for no collective
    assert not set(lab_views._RUN_COLORS.values()) & set(colours)
    fig = lab_views.times_figure([four, *p2p, two])
    ax = fig.axes[0]
    assert ax.get_legend() is None
    named = {t.get_text(): t.get_color() for t in ax.texts}
    assert named == {s.label.replace("_", "-"): lab_views.series_color(s) for s in [four, *p2p, two]}
    plt.close(fig)
    models = [fit.fit_joint([s]) for s in [two, *others]]
    fig = lab_views.fit_figure([two, *others], models)
    titles = [a.get_title() for a in fig.axes if a.get_visible() and a.get_title()]
    assert titles == [s.label.replace("_", "-") for s in [two, *others]]   # one panel per series
    plt.close(fig)


def test_the_half_rate_size_is_where_the_two_terms_meet_and_the_measurement_brackets_it():
    from commlib.lab import fit

    sizes = tuple(2.0**k for k in range(10, 21))
    model = fit.AlphaBeta(5e-6, 1 / 2e9)
    s = fit.Series("all_reduce", 2, sizes, tuple(model.time("all_reduce", x, 2, "ring") for x in sizes), "ring")
    half = fit.half_rate_size(model, s)
    t = fit.terms_at("all_reduce", half, 2, "ring")
    assert t.steps * model.alpha == pytest.approx(t.bytes * model.beta)
    below, above = fit.measured_half_rate(model, s)
    assert below < half <= above and above == 2 * below
    assert fit.half_rate_size(fit.AlphaBeta(0.0, 1e-9), s) == 0.0
    assert fit.measured_half_rate(fit.AlphaBeta(1.0, 1e-11), s) == (sizes[-1], float("inf"))   # 50 GB/s: never


def test_a_clamped_two_size_regime_is_graded_and_named_not_called_exact():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    sizes = tuple(2.0**k for k in range(10, 27))
    t = tuple(fit.AlphaBeta(5e-6, 1e-10).time("all_reduce", x, 2, "ring") for x in sizes[:-2]) + (1e-2, 3e-2)
    s = fit.Series("all_reduce", 2, sizes, t, "ring")
    pw = fit.PiecewiseFit((2**24 * 1.41,), (fit.fit_joint([s.subset(hi=2**24)]), fit.fit_joint([s.subset(lo=2**25)])))
    high = [line for line in lab_views.fit_summary_table([s], [pw]).data.splitlines() if line.startswith("| all_reduce")][-1]
    assert "exact by construction" not in high and "misses (2 sizes, alpha clamped at 0" in high
    assert "23.1 % at 64 MiB" in high                   # -3/13 at 64 MiB, the worse of the two
    sentence = lab_views.secant_sentence([s], [pw])
    assert "misses both points (all-reduce: +15/-23 %)" in sentence
    exact = fit.PiecewiseFit(pw.crossovers, (pw.low, fit.AlphaBeta(1e-3, 1e-10)))
    t2 = tuple(exact.time("all_reduce", x, 2, "ring") for x in sizes)
    s2 = fit.Series("all_reduce", 2, sizes, t2, "ring")
    pw2 = fit.PiecewiseFit(pw.crossovers, (fit.fit_joint([s2.subset(hi=2**24)]), fit.fit_joint([s2.subset(lo=2**25)])))
    assert "misses" not in lab_views.secant_sentence([s2], [pw2]) and "secant" in lab_views.secant_sentence([s2], [pw2])
    assert lab_views.secant_sentence([s2], [fit.fit_joint([s2])]) == ""


def test_measure_refuses_a_run_whose_ranks_each_saw_a_world_of_their_own(monkeypatch):
    # mpi4py bound to another MPI library than mpiexec's: every process is a singleton (ranks = 1)
    def singletons(n, args, **kwargs):
        out = args[args.index("--out") + 1]
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"ranks": 1, "mpi_library": "Open MPI v4.1.6", "results": []}, fh)
        return runner.RunResult(("mpiexec",), 0, "", "", False)

    monkeypatch.setattr(runner, "run_mpi", singletons)
    with pytest.raises(RuntimeError, match="asked for 2 ranks, the run had 1.*MPI4PY_LIBMPI"):
        runner.measure(n=2, sizes=[1024], progress=None)


def test_gloo_is_coloured_apart_from_the_point_to_point_ring():
    # gloo's all-reduce is counted as a ring, but it is another library: it must not wear the MPI ring's colour
    from commlib.lab import plan
    from commlib.views import lab as lab_views

    (gloo,) = runner.to_series(plan.stored()["gloo"])
    assert gloo.library == "gloo" and gloo.algorithm == "ring"
    ring = runner.least_loaded_series(plan.stored()["pair4"])[0]
    assert ring.library == "mpich" and lab_views.series_color(gloo) != lab_views.series_color(ring)
    assert gloo.subset(lo=2**20).library == "gloo"


def test_the_calculator_opens_where_its_fit_meets_the_run_never_on_a_secant():
    from commlib.views import lab as lab_views
    sizes = tuple(float(2**k) for k in range(20, 27))
    times = (1e-3, 2e-3, 4.4e-3, 8e-3, 16e-3, 40e-3, 80e-3)  # 4 MiB the worst of the first regime, 32 and 64 a secant
    s = fit.Series("all_reduce", 2, sizes, times, "halving_doubling")
    piece = fit.fit_piecewise(s, regimes=2)
    size = lab_views.well_fitted_size(s, piece)
    assert size not in ("32 MiB", "64 MiB", "4 MiB")
    with pytest.raises(ValueError, match="size"):
        lab_views.well_fitted_size(s, piece, lo=2.0**30)
    assert "from 7 ranks to 8" in lab_views.broadcast_switch_sentence()
    # with a fitted broadcast, the sentence names the smallest measured size from which 8 ranks price lower than 7
    sizes = tuple(float(2**k) for k in range(10, 27, 2))
    b = fit.Series("broadcast", 2, sizes, tuple(1e-5 + x / 5e9 for x in sizes), "mpich")
    line = fit.AlphaBeta(1e-5, 1 / 5e9)
    said = lab_views.broadcast_switch_sentence([b], [line])
    first = next(x for x in sorted(sizes) if all(line.time("broadcast", y, 8, "mpich")
                                                < line.time("broadcast", y, 7, "mpich") for y in sizes if y >= x))
    assert f"for messages from {measure.format_bytes(first)} up" in said or "at every measured size" in said
    assert "above 12 KiB" in said and "falls at that switch" in said and "recursive doubling" in said
