"""The formula sheet (commlib/cost.py) lists every public function of each subject's cost module."""

import importlib
import inspect
from pathlib import Path

import pytest

from commlib import cost

ROOT = Path(__file__).resolve().parents[1]
SUBJECTS = sorted(p.parent.name for p in (ROOT / "commlib").glob("*/cost.py"))


def test_the_subjects_are_found():
    assert {"collectives", "parameter_servers", "step", "today"} <= set(SUBJECTS)


@pytest.mark.parametrize("subject", SUBJECTS)
def test_every_public_function_is_on_the_sheet(subject):
    module = importlib.import_module(f"commlib.{subject}.cost")
    public = {name for name, f in vars(module).items()
              if inspect.isfunction(f) and f.__module__ == module.__name__ and not name.startswith("_")}
    excluded = set(cost.NOT_FORMULAS.get(module.__name__, ()))
    assert excluded <= public, f"NOT_FORMULAS names functions {module.__name__} lacks: {excluded - public}"
    missing = sorted(name for name in public - excluded if name not in cost.__all__)
    assert not missing, f"commlib/cost.py lacks {missing} from {module.__name__} (list them, or exclude them)"
    for name in public - excluded:     # the sheet's name is the subject's function itself
        assert getattr(cost, name) is getattr(module, name)


def test_the_sheet_lists_only_what_it_imports():
    assert len(cost.__all__) == len(set(cost.__all__))
    assert all(hasattr(cost, name) for name in cost.__all__)
    assert set(cost.NOT_FORMULAS).isdisjoint(cost.__all__)
