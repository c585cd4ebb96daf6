"""Re-run the chapters under another floating-point environment: stored outputs and quoted values must not change.

Usage: python tools/fp_check.py [chapters/04_sync_async_sgd.ipynb ...]   (default: every chapter)

numpy's OpenBLAS picks its kernels by processor, and numpy dispatches its own
loops to the widest SIMD the processor has, so the last bits of a result can
differ from one machine to another (an AMD laptop, an ARM Mac, the machine that
stored the chapters). A reader's machine must still show every stored output
and every number quoted in the prose exactly as stored. This check imitates
another machine on this one: OpenBLAS is forced to an older core type
(``OPENBLAS_CORETYPE``) and numpy's SIMD dispatch is narrowed
(``NPY_DISABLE_CPU_FEATURES``), with one BLAS thread: on x86-64 once as an AVX2
machine (Haswell kernels, numpy up to AVX2: the machine on which chapter 7 once
quoted another number) and once as an older one (Sandy Bridge kernels, AVX
without FMA; numpy's baseline), on ARM as a generic ARMv8 machine. Under each,
nbval re-runs the chapters (``make notebooks``'
comparison, the inline values of the prose included, chapters/conftest.py).

It first checks, in a fresh interpreter, that each environment took effect
(numpy no longer dispatches the features turned off; OpenBLAS names the forced core), so a
green run cannot come from settings that were silently ignored.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The machines imitated, per architecture: (description, OpenBLAS core forced, numpy SIMD features kept).
#: Only features this processor has can be kept and only cores it can run can be forced, so an imitation
#: needing more than this machine has, or identical to it, is skipped.
IMITATIONS = {
    "x86_64": [("an AVX2 machine (Haswell, Zen)", "Haswell", ("X86_V3",)),
               ("an older x86-64 machine (Sandy Bridge: AVX, no FMA)", "SandyBridge", ())],
    "aarch64": [("a generic ARMv8 machine", "ARMV8", ())],
}
IMITATIONS["amd64"] = IMITATIONS["x86_64"]
IMITATIONS["arm64"] = IMITATIONS["aarch64"]

_PROBE = r"""
import ctypes, glob, json, os
import numpy as np
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
core = None
here = os.path.dirname(np.__file__)
for lib in glob.glob(os.path.join(here, "..", "numpy.libs", "*openblas*")) + glob.glob(os.path.join(here, ".dylibs", "*openblas*")):
    handle = ctypes.CDLL(lib)
    for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"):
        fn = getattr(handle, name, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            core = fn().decode()
            break
print(json.dumps({"dispatched": [f for f in __cpu_dispatch__ if __cpu_features__.get(f)], "core": core}))
"""


def probe(env: dict[str, str]) -> dict:
    """What numpy and OpenBLAS use in a fresh interpreter under ``env``: dispatched SIMD features, core name."""
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def imitations(base: dict[str, str] | None = None) -> list[tuple[str, dict[str, str]]]:
    """(description, environment) of each machine imitated here: ``base`` with OpenBLAS and numpy set to it."""
    base = dict(os.environ if base is None else base)
    machine = platform.machine().lower()
    if machine not in IMITATIONS:
        raise SystemExit(f"fp_check: no imitation known for {machine!r}; add one to IMITATIONS")
    here = probe(base)
    out = []
    for what, core, keep in IMITATIONS[machine]:
        if any(f not in here["dispatched"] for f in keep):
            continue                                  # this processor cannot run that machine's code
        drop = [f for f in here["dispatched"] if f not in keep]
        if not drop and str(here["core"]).lower() == core.lower():
            continue                                  # that machine is this one
        env = dict(base, OPENBLAS_CORETYPE=core, OPENBLAS_NUM_THREADS="1")
        if drop:
            env["NPY_DISABLE_CPU_FEATURES"] = " ".join(drop)
        out.append((what, env))
    return out


def main(argv: list[str]) -> int:
    notebooks = argv or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chapters").glob("*.ipynb"))
    here = probe(dict(os.environ))
    print(f"fp_check: this machine: OpenBLAS core {here['core']}, numpy SIMD {' '.join(here['dispatched']) or 'baseline'}")
    runs = imitations()
    if not runs:
        raise SystemExit("fp_check: no other machine can be imitated on this one")
    failed = []
    for what, env in runs:
        there = probe(env)
        print(f"fp_check: imitating {what}: OpenBLAS core {there['core']}, "
              f"numpy SIMD {' '.join(there['dispatched']) or 'baseline'}", flush=True)
        wanted = [f for f in there["dispatched"] if f in env.get("NPY_DISABLE_CPU_FEATURES", "").split()]
        if wanted:
            raise SystemExit(f"fp_check: numpy still dispatches {wanted}: NPY_DISABLE_CPU_FEATURES was ignored")
        if there["core"] is not None and there["core"].lower() != env["OPENBLAS_CORETYPE"].lower():
            raise SystemExit(f"fp_check: OpenBLAS runs {there['core']}, not {env['OPENBLAS_CORETYPE']}: "
                             "OPENBLAS_CORETYPE was ignored")
        cmd = [sys.executable, "-m", "pytest", "-q", "--nbval", *notebooks, "--nbval-sanitize-with",
               "tests/sanitize.cfg", "-p", "no:cacheprovider"]
        if subprocess.run(cmd, env=env, cwd=ROOT).returncode:
            failed.append(what)
    if failed:
        print("fp_check: stored outputs or quoted values change on " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
