"""Run the lab's plan (commlib.lab.plan) on this machine and store it as the book's reference run.

Meant for an idle machine with at least four free cores, MPICH and mpi4py (and PyTorch for the gloo part):

    python tools/lab_reference.py --out commlib/lab/data

It records what the machine was (processor, cores, load, library versions, date) in machine.json. With
``--parts`` it measures only those parts of the plan (for example the stored-only controls,
``--parts two_multiple,two_single``; ``--parts ddp`` for the DistributedDataParallel step alone, made three times
in a row, each keeping the record of its machine in its own file) and records the machine in ``machine_control.json`` instead, so that the
run the other parts came from keeps its record (the shared-core control, ``--parts
four_multiple,four_single,shared_multiple,shared_single``, in ``machine_shared_control.json``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commlib.lab import plan, runner  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the JSON files")
    parser.add_argument("--parts", default=",".join(plan.PARTS),
                        help="comma-separated parts of the plan to measure (default: all, the stored-only ones too)")
    args = parser.parse_args(argv)
    parts = tuple(p for p in args.parts.split(",") if p)
    whole = set(parts) == set(plan.PARTS)
    before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    docs = plan.run(progress=None, parts=parts)
    if set(parts) == {"ddp"}:  # the DDP step three times in a row, so the chapter can give its spread over runs
        for name in plan.DDP_AGAIN:
            docs[name] = plan.run(progress=None, parts=parts)["ddp"]
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    about = {"date": datetime.date.today().isoformat(), "cpu_model": runner.cpu_model(), "machine": platform.machine(),
             "python": platform.python_version(), "torch": torch_version, "load_average_before": before,
             "load_average_after": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
             **runner.machine_facts()}
    about_name = ("machine.json" if whole else plan.SHARED_ABOUT if set(parts) <= set(plan.SHARED_CONTROL)
                  else "machine_control.json")
    if set(parts) == {"ddp"}:
        about = None  # the DDP run records its machine in its own file; the other runs' records stay as they are
    for path in plan.save(docs, args.out, about, about_name=about_name):
        print(path, path.stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
