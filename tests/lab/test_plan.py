"""commlib.lab.plan: the stored reference run is a run of the plan the chapter measures, whole and clean."""

import pytest

from commlib.lab import plan, runner


@pytest.fixture(scope="module")
def stored():
    return plan.stored()


@pytest.mark.parametrize("part, ranks, sizes", [("two", 2, plan.SIZES), ("four", 4, plan.SIZES4),
                                                ("pair4", 4, plan.SIZES4), ("free4", 4, plan.SIZES4)])
def test_each_stored_part_is_the_plans_run_on_its_ranks_and_sizes(stored, part, ranks, sizes):
    doc = stored[part]
    assert doc["ranks"] == ranks and "MPICH" in doc["mpi_library"]
    for series in runner.to_series(doc):
        assert series.n == ranks and tuple(series.nbytes) == tuple(sizes)


def test_the_stored_run_had_its_cores_to_itself(stored):
    # "idle machine": the ranks got (nearly) all of their cores' time, and only free4 has a core per rank
    for part in ("two", "free4"):
        assert not stored[part]["oversubscribed"] and stored[part]["core_share"] > 0.9
    assert stored["four"]["oversubscribed"]
    assert stored["machine"]["cpu_count"] >= 4 and stored["machine"]["date"]


def test_the_stored_gloo_run_is_pytorchs(stored):
    assert stored["gloo"]["ranks"] == 2 and stored["gloo"]["impl"] == "torch_gloo"
    assert [r["nbytes"] for r in stored["gloo"]["results"]] == list(plan.GLOO_SIZES)
    # on the same cores as the two MPI ranks: the comparison gives both libraries the same hardware
    assert all(sorted(cores) == sorted(stored["two"]["rank_cores"]) for cores in stored["gloo"]["rank_cores"])
    assert not stored["gloo"]["oversubscribed"]


def test_the_readers_run_leaves_out_the_stored_only_controls():
    import inspect

    assert inspect.signature(plan.run).parameters["parts"].default == plan.RUN_PARTS
    assert plan.RUN_PARTS == ("two", "four", "pair4", "free4", "gloo", "ddp")
    assert set(plan.STORED_ONLY) == set(plan.THREAD_LEVEL) and set(plan.STORED_ONLY) < set(plan.PARTS)


@pytest.mark.parametrize("part, mirror", [("two_single", "two"), ("two_multiple", "two")])
def test_each_thread_level_control_mirrors_the_run_it_checks(stored, part, mirror):
    # same ranks, cores and sizes as the run it checks; only the thread level differs between the pair
    from mpi4py import MPI

    doc, ref = stored[part], stored[mirror]
    assert stored["machine_control"]["cpu_count"] == stored["machine"]["cpu_count"]  # the same kind of machine
    assert doc["ranks"] == ref["ranks"] and doc["rank_cores"] == ref["rank_cores"]
    assert doc["oversubscribed"] == ref["oversubscribed"]
    (series,) = runner.to_series(doc)
    assert series.op == "all_reduce" and tuple(series.nbytes) == tuple(runner.to_series(ref)[0].nbytes)
    want = MPI.THREAD_SINGLE if plan.THREAD_LEVEL[part] == "single" else MPI.THREAD_MULTIPLE
    assert doc["thread_level"] == want


def test_unknown_parts_are_refused():
    with pytest.raises(ValueError, match="parts must be among"):
        plan.run(parts=("three",))


@pytest.mark.parametrize("part", list(plan.SHARED_CONTROL))
def test_the_shared_core_control_is_stored_and_read_by_the_same_code(stored, part):
    # ranks sharing cores at each thread level: the ranks, cores and level the plan names, every call timed
    from mpi4py import MPI

    doc = stored[part]
    ranks, cores = plan.SHARED_CONTROL[part]
    assert doc["ranks"] == ranks and doc["oversubscribed"] and len(set(doc["rank_cores"])) == cores
    (series,) = runner.to_series(doc)
    assert series.op == "all_reduce" and tuple(series.nbytes) == plan.SHARED_SIZES
    assert all(len(r["samples_s"]) == 2 * plan.SHARED_REPEATS for r in doc["results"])
    want = MPI.THREAD_SINGLE if plan.THREAD_LEVEL[part] == "single" else MPI.THREAD_MULTIPLE
    assert doc["thread_level"] == want
    assert stored["machine_shared_control"]["cpu_count"] >= cores


def test_the_oversubscribed_runs_level_is_what_the_prose_scopes_its_lesson_to(stored):
    from commlib.lab import explain

    for part in ("two", "four", "pair4", "free4"):   # every run of the reference plan, the oversubscribed ones too
        assert explain.level_name(stored[part]) == explain.level_name(stored["four"])
    assert explain.level_name(stored["four_single"]) == "`MPI_THREAD_SINGLE`"
