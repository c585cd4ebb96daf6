"""The calculators' one implementation for kernel and website: commlib.views.results, web_spec, the shipped sources."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from commlib import units
from commlib.views import results
from commlib.views.calculator import dropdown, integer, make_calculator, number, pure_python_modules, text, web_spec

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import live_calculators  # noqa: E402


def size_results(size: str, n: int, scale: float, unit: str) -> dict[str, str]:
    """A calculator's model function as the chapters write them (module level, controls as keywords)."""
    nbytes = units.parse_size(size)
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    return {"bytes": f"{nbytes * n * scale:g} {unit}"}


def _controls():
    return {"size": text("1 MB", "size"), "n": integer(4, 1, 64, "n"), "scale": number(1.0, "scale", minimum=0.5),
            "unit": dropdown([("bytes", "B"), ("bits/8", "b/8")], "B", "unit")}


def test_page_and_kernel_show_the_same_html_for_the_same_inputs():
    calc = make_calculator(size_results, _controls(), title="t", note="1 MB = 10^6 B")
    spec = json.loads(calc._gotw_spec)
    assert spec["compute"] == f"{__name__}:size_results"
    for values, raw in [({"n": 8}, {"n": 8}), ({"unit": "b/8"}, {"unit": 1}), ({"scale": 0.25}, {"scale": 0.25}),
                        ({"size": "nonsense"}, {"size": "nonsense"}), ({"scale": -1.0}, {"scale": -1})]:
        calc.set(**values)
        page_values = {"size": calc.controls["size"].value, "n": calc.controls["n"].value,
                       "scale": calc.controls["scale"].value, "unit": calc.controls["unit"].index, **raw}
        assert results.run_spec(json.dumps(spec), json.dumps(page_values)) == calc.output.value, values
    assert calc.error == "scale must be >= 0.5, got -1"


def test_web_spec_says_what_can_run_in_the_page():
    controls = _controls()
    closure = web_spec(lambda **kw: {}, controls)
    assert not closure["live"] and "module-level" in closure["why"]
    bound = web_spec(functools.partial(units.format_size, binary=True), {"nbytes": number(1.0, "n")})
    assert bound["compute"] == "commlib.units:format_size" and bound["keywords"] == {"binary": True}
    on_data = web_spec(functools.partial(units.format_size, object()), {"binary": number(1.0, "b")})
    assert not on_data["live"] and "bound to objects of this run" in on_data["why"]
    numpy_module = web_spec(sys.modules["commlib.views.calculator"].web_spec, controls)
    assert not numpy_module["live"] and "numpy" in numpy_module["why"]   # the view layer imports ipywidgets
    assert pure_python_modules("commlib.cost") is not None
    assert pure_python_modules("commlib.collectives.simulate") is None


def test_shipped_sources_run_without_numpy(tmp_path):
    """What the website's Python gets (the pure modules only) imports and computes with numpy unimportable."""
    for name, source in live_calculators.pure_sources().items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source)
    assert (tmp_path / "commlib" / "__init__.py").is_file() and (tmp_path / "commlib" / "views" / "results.py").is_file()
    (tmp_path / "demo_calc.py").write_text(
        "from commlib.units import format_size\n\n\ndef demo_results(nbytes):\n"
        "    if nbytes < 0:\n        raise ValueError(f'nbytes must be >= 0, got {nbytes}')\n"
        "    return {'size': format_size(nbytes)}\n")
    spec = {"compute": "demo_calc:demo_results", "keywords": {}, "note": "",
            "controls": [{"name": "nbytes", "kind": "float", "range": [0, None]}]}
    script = textwrap.dedent(f"""
        import importlib.abc, json, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("numpy", "scipy", "matplotlib", "ipywidgets", "IPython"):
                    raise ImportError("not in Pyodide's core: " + name)
        sys.meta_path.insert(0, Block())
        sys.path.insert(0, {str(tmp_path)!r})
        from commlib.views.results import run_spec
        print(run_spec({json.dumps(json.dumps(spec))}, json.dumps({{"nbytes": 2.5e6}})))
        print(run_spec({json.dumps(json.dumps(spec))}, json.dumps({{"nbytes": -1}})))
    """)
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ok, bad = done.stdout.strip().splitlines()
    assert ok == results.results_table({"size": units.format_size(2.5e6)})
    assert bad == results.error_html("nbytes must be >= 0, got -1")


def test_a_message_names_every_control_by_its_label_not_only_the_first():
    labels = {"hosts": "hosts h", "n": "GPUs n"}
    assert results.relabel("hosts must divide n = 32 (ranks are spread evenly over hosts); got 3", labels) == \
        "hosts h must divide GPUs n = 32 (ranks are spread evenly over hosts); got 3"
    assert results.relabel("got hosts = 3 and n=8", labels) == "got hosts h = 3 and GPUs n=8"
    assert results.relabel("GPUs n = 32 is too many for hosts h = 4", labels) == \
        "GPUs n = 32 is too many for hosts h = 4"                       # already named: left as it is
    assert results.relabel("nodes = 3; n == 2", labels) == "nodes = 3; n == 2"   # a word, a comparison: left


def test_the_cluster_calculator_names_the_gpus_control_in_its_divisibility_message():
    from commlib.views import collectives as vc
    calc = vc.cluster_calculator()
    calc.set(n=32, hosts=3)
    assert calc.error.startswith("hosts h must divide GPUs n = 32"), calc.error


@pytest.mark.parametrize("raw, said", [("NaN", ", got NaN"), ("Infinity", ", got inf"), ("2.5", ", got 2.5"), ("null", "")])
def test_a_whole_number_control_holding_nan_gets_a_message_naming_it(raw, said):
    spec = json.dumps({"compute": "builtins:dict", "note": "",
                       "controls": [{"name": "n", "kind": "int", "label": "ranks n", "range": [1, 8]}]})
    shown = results.run_spec(spec, '{"n": ' + raw + '}')
    assert shown == results.error_html(f"ranks n must be a whole number{said}")
    assert "<td" in results.run_spec(spec, '{"n": 3}')
    assert results.run_choices(spec, '{"n": ' + raw + '}') == json.dumps({"shown": {}, "values": {}})
