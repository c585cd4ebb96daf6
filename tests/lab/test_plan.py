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


def test_unknown_parts_are_refused():
    with pytest.raises(ValueError, match="parts must be among"):
        plan.run(parts=("three",))
