"""Benchmarks: `make bench`. Prints one table per benchmark; asserts nothing.

Timings on a shared 2-core machine are noisy: read the ratios within one run,
not the absolute seconds.

1. The book: a full executed build in a scratch copy (no execution cache: every
   notebook runs, side by side on the machine's cores, the lab alone after them; the
   claims' verdicts and the runs kept beside them come from their cache, one per
   version of the code, which `make book` fills before it builds), then a rebuild of
   the unchanged copy (notebooks served from the execution cache).
2. Every other ``bench/bench_*.py`` module's ``main()``, which returns rows.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK_FILES = ["_config.yml", "_toc.yml", "index.md", "references.bib", "chapters", "commlib", "tools", "_vendor"]
TARGETS = {"full executed build": 120.0, "cached rebuild": 20.0}


def _table(headers, rows) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def bench_book() -> list[list[str]]:
    jb = Path(sys.executable).with_name("jupyter-book")
    rows = []
    with tempfile.TemporaryDirectory(prefix="gotw-bench-") as tmp:
        for name in BOOK_FILES:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, Path(tmp) / name, ignore=shutil.ignore_patterns("_build", "__pycache__"))
            elif src.exists():
                shutil.copy2(src, Path(tmp) / name)
        for label in TARGETS:
            start = time.perf_counter()
            done = subprocess.run([str(jb), "build", ".", "--builder", "html", "-q"], cwd=tmp,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                sys.stderr.write(done.stderr)
                raise SystemExit(f"the book did not build ({label})")
            seconds = time.perf_counter() - start
            verdict = "yes" if seconds <= TARGETS[label] else "no"
            rows.append([label, f"{seconds:.1f} s", f"<= {TARGETS[label]:.0f} s", verdict])
    return rows


def other_benchmarks():
    """Run each bench/bench_*.py; yield its name, the rows it returned and what it printed."""
    for path in sorted(Path(__file__).parent.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            rows = module.main()
        yield path.stem, rows, printed.getvalue()


def _cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def main() -> int:
    print("## Book build\n")
    print(_table(["what", "time", "target", "met"], bench_book()))
    for name, rows, printed in other_benchmarks():
        print(f"\n## {name}\n")
        if printed.strip():          # the benchmark wrote its own report
            print(printed.rstrip())
        elif rows and isinstance(rows[0], dict):
            headers = list(rows[0])
            print(_table(headers, [[_cell(row[h]) for h in headers] for row in rows]))
        elif rows:
            print(_table([f"col{i}" for i in range(len(rows[0]))], [[_cell(c) for c in r] for r in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
