r"""A data-parallel training step of PyTorch's ``DistributedDataParallel`` (DDP) over gloo, measured and predicted.

Chapter 5 models how DDP hides its all-reduces behind the backward pass (:mod:`commlib.sgd.overlap`): gradients
are packed into buckets, a bucket is all-reduced as soon as its last gradient is ready, and the all-reduces run
one after another while the earlier layers are still being differentiated. This module holds that model against a
real DDP step, on CPU processes that meet over gloo on the loopback interface, and does so **out of sample**: no
number measured on a DDP step enters the prediction.

:func:`run` starts the ranks (:func:`commlib.lab.torch_measure.launch`). Each rank trains the same small network
(:class:`Setup`: a stack of ``layers`` linear layers of ``width`` by ``width`` with ReLU, a batch of ``batch``
random samples, mean squared error, plain SGD). Under ``torch.profiler`` it alternates two kinds of step:

``ddp``    a normal DDP step, whose backward all-reduces each bucket as it becomes ready;
``local``  the same step inside ``no_sync()``, which computes the same gradients and communicates nothing.

From the profiler's events each step keeps, in seconds from the start of the backward pass: when each gradient was
accumulated (``ready``), when DDP launched each bucket's all-reduce (``launch``) and when gloo ran it
(``allreduce``, start and end), and the forward and backward times. Then the same processes time gloo's
all-reduce alone at a few sizes (:func:`commlib.lab.torch_measure.time_all_reduce`).

:func:`predict` fits :math:`\alpha` and :math:`\beta` on gloo's all-reduce alone, takes each bucket's ready time
from the ``local`` steps, and schedules the buckets on one stream (:func:`commlib.sgd.overlap.schedule`); the
exposed communication is what runs past the backward pass. :func:`measured` reads the same quantities off the
``ddp`` steps, and :func:`compare` sets them side by side, with the two effects the model leaves out measured:
the backward computing slower while gloo's threads share its cores, and each all-reduce taking longer than alone.

Without PyTorch nothing here fails: :func:`run` returns None, and the analysis works on a stored run.

>>> Setup().param_bytes()[:2]          # the first layer's weight and bias, float32
(4194304, 4096)
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, fields

import numpy as np

from ..sgd.overlap import assign_buckets, schedule
from ..units import check_count, check_positive
from .fit import AlphaBeta, Series, fit_joint
from .torch_measure import available, launch, time_all_reduce

__all__ = ["SCHEMA", "MIB", "Setup", "SETUP", "run", "bucket_groups", "buckets_agree", "gloo_series",
           "Prediction", "Measured", "Comparison", "predict", "measured", "compare"]

SCHEMA = "commlib.lab.torch_ddp/1"
MIB = 1024 * 1024  # DDP reads bucket_cap_mb in MiB


@dataclass(frozen=True)
class Setup:
    """What one DDP measurement trains and how often it times it.

    ``layers`` linear layers of ``width`` x ``width`` (each followed by ReLU), a batch of ``batch`` samples,
    DDP's ``bucket_cap_mb`` = ``bucket_mib`` (MiB; given explicitly, it caps the first bucket too),
    ``steps`` measured steps of each kind after ``warmup`` untimed ones, ``seed`` for the weights and data,
    and the gloo all-reduce sizes (bytes) and calls per size that :func:`predict` fits on.
    """

    layers: int = 8
    width: int = 1024
    batch: int = 64
    bucket_mib: float = 4.0
    steps: int = 20
    warmup: int = 3
    seed: int = 0
    gloo_sizes: tuple[int, ...] = (2**14, 2**16, 2**18, 2**20, 2**22, 2**24)
    gloo_repeats: int = 9

    def __post_init__(self) -> None:
        check_count("layers", self.layers)
        check_count("width", self.width)
        check_count("batch", self.batch)
        check_positive("bucket_mib", self.bucket_mib)
        check_count("steps", self.steps)
        check_count("warmup", self.warmup, minimum=2)  # DDP rebuilds its buckets after the first step
        check_count("seed", self.seed, minimum=0)
        check_count("gloo_repeats", self.gloo_repeats)
        if len(self.gloo_sizes) < 2:
            raise ValueError(f"gloo_sizes must hold at least 2 sizes to fit alpha and beta, got {len(self.gloo_sizes)}")
        for s in self.gloo_sizes:
            check_count("gloo_sizes", s, minimum=4)
        object.__setattr__(self, "gloo_sizes", tuple(int(s) for s in self.gloo_sizes))

    def param_bytes(self) -> tuple[int, ...]:
        """Bytes of each parameter tensor (float32), in ``model.parameters()`` order: weight, bias, weight, ..."""
        return tuple(b for _ in range(self.layers) for b in (4 * self.width * self.width, 4 * self.width))

    @classmethod
    def from_dict(cls, d: dict) -> Setup:
        """The setup a stored run recorded."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in names})


#: The setup the chapter runs: eight 4 MiB layers, so that eight buckets of 4 MiB each follow one another.
SETUP = Setup()


# ----------------------------------------------------------------------------- the measurement (needs PyTorch)


def _events(prof, main_thread: int) -> list[dict]:
    """Per profiled step, the times chapter 8 reads, in seconds from the start of that step's backward pass."""
    evs = sorted(prof.events(), key=lambda e: e.time_range.start)
    steps = [e for e in evs if e.name.startswith("step:") and e.thread == main_thread]
    out = []
    for st in steps:
        lo, hi = st.time_range.start, st.time_range.end
        inside = [e for e in evs if lo <= e.time_range.start < hi]
        mine = [e for e in inside if e.thread == main_thread]
        fwd = next(e for e in mine if e.name == "forward")
        bwd = next(e for e in mine if e.name == "backward")
        b0 = bwd.time_range.start

        def s(t, b0=b0):
            return (t - b0) * 1e-6  # the profiler counts microseconds

        out.append({
            "kind": st.name.split(":", 1)[1],
            "forward": (fwd.time_range.end - fwd.time_range.start) * 1e-6,
            "backward": (bwd.time_range.end - bwd.time_range.start) * 1e-6,
            "ready": [s(e.time_range.end) for e in mine if e.name == "torch::autograd::AccumulateGrad"],
            "launch": [s(e.time_range.start) for e in mine if e.name == "c10d::allreduce_"],
            "allreduce": [[s(e.time_range.start), s(e.time_range.end)]
                          for e in inside if e.name == "gloo:all_reduce" and e.thread != main_thread],
            "bucket_numel": [int(np.prod(e.input_shapes[0])) if e.input_shapes else 0
                             for e in inside if e.name == "gloo:all_reduce" and e.thread != main_thread],
        })
    return out


def _worker(setup: Setup, out: str, cpus: list[int]) -> int:
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))  # every thread of the rank (gloo's too) on these cores
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.profiler import ProfilerActivity, profile, record_function

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    torch.manual_seed(setup.seed)
    model = nn.Sequential(*(nn.Sequential(nn.Linear(setup.width, setup.width), nn.ReLU())
                            for _ in range(setup.layers)))
    ddp = DistributedDataParallel(model, bucket_cap_mb=setup.bucket_mib)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(1000 * setup.seed + 1 + rank)  # each rank its own samples
    x = torch.randn(setup.batch, setup.width, generator=gen)
    y = torch.randn(setup.batch, setup.width, generator=gen)

    def step() -> None:
        with record_function("forward"):
            loss = nn.functional.mse_loss(ddp(x), y)
        with record_function("backward"):
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)

    for _ in range(setup.warmup):
        step()
    kinds = ["ddp", "local"] * setup.steps
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for kind in kinds:
            dist.barrier()
            with record_function("step:" + kind):
                if kind == "ddp":
                    step()
                else:
                    with ddp.no_sync():
                        step()
    records = _events(prof, _main_thread_id(prof))
    gloo = time_all_reduce(setup.gloo_sizes, 2, setup.gloo_repeats)
    everyone = [None] * n
    dist.all_gather_object(everyone, records)
    if rank == 0:
        doc = {"schema": SCHEMA, "ranks": n, "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
               "cpu_count": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
               "torch_threads": torch.get_num_threads(), "load_average_before": load_before,
               "setup": asdict(setup), "param_bytes": [4 * p.numel() for p in model.parameters()],
               "steps": everyone,
               "gloo": {"schema": "commlib.lab.measure/2", "ranks": n, "impl": "torch_gloo", "dtype": "float32",
                        "hosts": 1, "mpi_library": "gloo (torch " + torch.__version__ + ")",
                        "allreduce_algorithm": "auto", "warmup": 2, "repeats": setup.gloo_repeats,
                        "results": gloo}}
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
    dist.destroy_process_group()
    return 0


def _main_thread_id(prof) -> int:
    """The profiler's id of the thread that ran the steps (the one that recorded the ``step:`` ranges)."""
    return next(e.thread for e in prof.events() if e.name.startswith("step:"))


def run(setup: Setup = SETUP, n: int = 2, timeout: float = 300.0, cpus: list[int] | None = None) -> dict | None:
    """Measure ``setup`` on ``n`` local processes over gloo; the JSON dict, or None without PyTorch.

    ``cpus``: the cores every rank, with all its threads, may run on (``None``: any); chapter 8 gives the two
    cores of its other two-rank runs (:func:`commlib.lab.runner.lab_cpus`), so that computation and
    communication share them as they do on a machine whose cores are all busy.

    Raises RuntimeError if PyTorch is there but the run fails or times out.
    """
    check_count("n", n, minimum=2)
    if not available():
        return None
    with tempfile.TemporaryDirectory(prefix="commlib-ddp-") as tmp:
        out = os.path.join(tmp, "ddp.json")
        launch(n, ["commlib.lab.torch_ddp", out, json.dumps(asdict(setup)),
                   ",".join(str(int(c)) for c in (cpus or ()))], timeout)
        if not os.path.exists(out):
            raise RuntimeError("DDP run failed: rank 0 wrote no result")
        with open(out, encoding="utf-8") as fh:
            doc = json.load(fh)
    from .runner import cpu_model, machine_facts

    doc["machine"] = {"cpu_model": cpu_model(), "machine": platform.machine(), **machine_facts()}
    return doc


# ----------------------------------------------------------------------------- the model and the comparison


def bucket_groups(setup: Setup) -> list[list[int]]:
    """DDP's buckets as chapter 5 models them: indices into the parameters in the order their gradients become
    ready (``model.parameters()`` reversed), each bucket closed once it holds ``bucket_mib`` MiB
    (:func:`commlib.sgd.overlap.assign_buckets`).

    The first bucket has the same cap: PyTorch 2.13's DDP caps its first bucket at 1 MiB only when
    ``bucket_cap_mb`` is left at its default (``_BucketCapacityConfig.create`` in ``torch/nn/parallel/distributed.py``),
    and this run sets it.
    """
    cap = setup.bucket_mib * MIB
    return assign_buckets(list(reversed(setup.param_bytes())), cap, cap)


def buckets_agree(doc: dict) -> bool:
    """True if the buckets DDP all-reduced in every measured step have the bytes :func:`bucket_groups` gives."""
    setup = Setup.from_dict(doc["setup"])
    sizes = list(reversed(setup.param_bytes()))
    model = [sum(sizes[i] for i in g) for g in bucket_groups(setup)]
    return all([4 * k for k in r["bucket_numel"]] == model
               for ranks in doc["steps"] for r in ranks if r["kind"] == "ddp")


def gloo_series(doc: dict) -> Series:
    """Gloo's all-reduce alone, timed by the same processes after the steps: what :func:`predict` fits on."""
    from .runner import to_series

    return to_series(doc["gloo"])[0]


def _steps(doc: dict, kind: str) -> list[list[dict]]:
    """The steps of one kind, as a list over steps of the per-rank records."""
    by_rank = [[r for r in ranks if r["kind"] == kind] for ranks in doc["steps"]]
    return [list(rs) for rs in zip(*by_rank)]


def _quartiles(values) -> tuple[float, float, float]:
    q1, med, q3 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q1), float(med), float(q3)


@dataclass(frozen=True)
class Prediction:
    """Chapter 5's model of the DDP step, from measurements that contain no DDP communication (seconds).

    ``fit`` the alpha-beta line of gloo's all-reduce alone; ``ready`` each bucket's ready time from the start of
    backward (the ``local`` steps' median); ``slots`` each all-reduce's start and end on one stream;
    ``t_forward`` and ``t_backward`` the ``local`` steps' medians.
    """

    fit: AlphaBeta
    bucket_bytes: tuple[float, ...]
    ready: tuple[float, ...]
    slots: tuple[tuple[float, float], ...]
    t_forward: float
    t_backward: float

    @property
    def comm(self) -> float:
        """All-reduce seconds in all, as gloo alone takes them."""
        return sum(e - s for s, e in self.slots)

    @property
    def exposed(self) -> float:
        """Communication that runs past the backward pass."""
        return max(0.0, self.slots[-1][1] - self.t_backward)

    @property
    def step(self) -> float:
        """Forward, backward and the exposed communication."""
        return self.t_forward + self.t_backward + self.exposed


def predict(doc: dict) -> Prediction:
    """The step :mod:`commlib.sgd.overlap` predicts from the run's ``local`` steps and gloo's all-reduce alone."""
    setup = Setup.from_dict(doc["setup"])
    n = int(doc["ranks"])
    fit = fit_joint([gloo_series(doc)])
    groups = bucket_groups(setup)
    sizes = list(reversed(setup.param_bytes()))
    local = _steps(doc, "local")
    # a gradient is ready when the slowest rank has it; the median over steps
    ready_param = np.median([[max(r["ready"][i] for r in ranks) for i in range(len(sizes))] for ranks in local],
                            axis=0)
    ready = tuple(float(max(ready_param[i] for i in g)) for g in groups)
    nbytes = tuple(float(sum(sizes[i] for i in g)) for g in groups)
    slots = schedule(ready, nbytes, lambda m: fit.time("all_reduce", m, n))
    t_fwd = float(np.median([max(r["forward"] for r in ranks) for ranks in local]))
    t_bwd = float(np.median([max(r["backward"] for r in ranks) for ranks in local]))
    return Prediction(fit, nbytes, ready, tuple((float(s), float(e)) for s, e in slots), t_fwd, t_bwd)


@dataclass(frozen=True)
class Measured:
    """The DDP steps as measured (seconds; each a median over steps, with its quartiles where named ``*_q``).

    ``step_ddp_q`` and ``step_local_q`` forward plus backward; ``exposed_q`` a DDP step's time less the
    ``local`` step timed right after it; ``compute_end`` when the DDP backward's last gradient was ready (its
    computation done); ``comm`` the all-reduces' seconds summed (as gloo ran them, rank 0); ``in_flight`` the
    most all-reduces gloo ran at once; ``slots`` one step's all-reduces (the step of median time, rank 0).
    """

    step_ddp_q: tuple[float, float, float]
    step_local_q: tuple[float, float, float]
    exposed_q: tuple[float, float, float]
    compute_end: float
    t_backward_local: float
    comm: float
    in_flight: int
    slots: tuple[tuple[float, float], ...]
    ready_ddp: tuple[float, ...]

    @property
    def exposed(self) -> float:
        """Median seconds a step spends communicating after its own computation would have ended."""
        return self.exposed_q[1]

    @property
    def slowdown_backward(self) -> float:
        """Seconds the backward's computation took longer in a DDP step than in a ``local`` one."""
        return self.compute_end - self.t_backward_local


def _most_at_once(slots) -> int:
    points = sorted([(s, 1) for s, _ in slots] + [(e, -1) for _, e in slots], key=lambda p: (p[0], p[1]))
    most = now = 0
    for _, d in points:
        now += d
        most = max(most, now)
    return most


def measured(doc: dict) -> Measured:
    """What the ``ddp`` steps measured, against the ``local`` steps timed between them."""
    ddp, local = _steps(doc, "ddp"), _steps(doc, "local")
    t_ddp = [max(r["forward"] + r["backward"] for r in ranks) for ranks in ddp]
    t_local = [max(r["forward"] + r["backward"] for r in ranks) for ranks in local]
    exposed = [a - b for a, b in zip(t_ddp, t_local)]
    mid = int(np.argsort(t_ddp)[len(t_ddp) // 2])
    r0 = ddp[mid][0]
    groups = bucket_groups(Setup.from_dict(doc["setup"]))
    ready_ddp = tuple(float(np.median([max(max(r["ready"][i] for i in g) for r in ranks) for ranks in ddp]))
                      for g in groups)
    return Measured(
        step_ddp_q=_quartiles(t_ddp), step_local_q=_quartiles(t_local), exposed_q=_quartiles(exposed),
        compute_end=float(np.median([max(max(r["ready"]) for r in ranks) for ranks in ddp])),
        t_backward_local=float(np.median([max(r["backward"] for r in ranks) for ranks in local])),
        comm=float(np.median([sum(e - s for s, e in ranks[0]["allreduce"]) for ranks in ddp])),
        in_flight=max(_most_at_once(ranks[0]["allreduce"]) for ranks in ddp),
        slots=tuple((float(s), float(e)) for s, e in sorted(r0["allreduce"])),
        ready_ddp=ready_ddp,
    )


@dataclass(frozen=True)
class Comparison:
    """The prediction beside the measurement, and the miss taken apart (seconds)."""

    prediction: Prediction
    measurement: Measured

    @property
    def step_error(self) -> float:
        """Predicted step time over the measured one, less 1 (negative: the model is too fast)."""
        return self.prediction.step / self.measurement.step_ddp_q[1] - 1.0

    @property
    def exposed_miss(self) -> float:
        """Measured exposed communication less the predicted."""
        return self.measurement.exposed - self.prediction.exposed

    @property
    def comm_stretch(self) -> float:
        """The all-reduces' seconds during the step over what gloo alone takes for the same buckets."""
        return self.measurement.comm / self.prediction.comm

    @property
    def exposed_within_spread(self) -> bool:
        """True if the predicted exposed time lies within the measured quartiles."""
        lo, _, hi = self.measurement.exposed_q
        return lo <= self.prediction.exposed <= hi


def compare(doc: dict) -> Comparison:
    """:func:`predict` and :func:`measured` of one run."""
    return Comparison(predict(doc), measured(doc))


if __name__ == "__main__":
    sys.exit(_worker(Setup.from_dict(json.loads(sys.argv[2])), sys.argv[1],
                     [int(c) for c in sys.argv[3].split(",")] if len(sys.argv) > 3 and sys.argv[3] else []))
