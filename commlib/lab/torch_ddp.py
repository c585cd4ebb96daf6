r"""A data-parallel training step of PyTorch's ``DistributedDataParallel`` (DDP) over gloo, measured and predicted.

Chapter 5 models how DDP hides its all-reduces behind the backward pass (:mod:`commlib.sgd.overlap`): gradients
are packed into buckets, a bucket is all-reduced as soon as its last gradient is ready, and the all-reduces run
one after another while the earlier layers are still being differentiated. This module holds that model against a
real DDP step, on CPU processes that meet over gloo on the loopback interface, and does so **out of sample**: no
number measured on a DDP step enters the prediction.

:func:`run` starts the ranks (:func:`commlib.lab.torch_measure.launch`). Each rank trains the same small network
(:class:`Setup`: a stack of ``layers`` linear layers of ``width`` by ``width`` with ReLU, a batch of ``batch``
random samples, mean squared error, plain SGD, one compute thread a rank). Under ``torch.profiler`` it takes
turns at four kinds of step (:data:`KINDS`):

``ddp``            a normal DDP step, whose backward all-reduces each bucket as it becomes ready;
``local``          the same step inside ``no_sync()``, which computes the same gradients and communicates nothing;
``ddp_one``        a second DDP copy of the model whose bucket cap holds the whole gradient: one all-reduce, which
                   can start only when the backward pass has ended, so nothing overlaps (chapter 5's step without
                   overlap, run by DDP's own machinery);
``ddp_noop``       a third DDP copy, with the chapter's buckets, whose communication hook returns at once: DDP's
                   own work (copying gradients into buckets and back) without any communication.

From the profiler's events each step keeps, in seconds from the start of its backward pass: when each gradient was
accumulated (``ready``) and when gloo ran each all-reduce (``allreduce``, start and end, on gloo's threads), and
how long the forward and backward passes took (a DDP backward returns when every bucket is reduced). Then the same processes time
gloo's all-reduce alone (:func:`commlib.lab.torch_measure.time_all_reduce`).

:func:`predict` fits :math:`\alpha` and :math:`\beta` on gloo's all-reduce alone, takes each bucket's ready time
from the ``local`` steps, and schedules the buckets on one stream (:func:`commlib.sgd.overlap.schedule`); it
predicts the two steps that communicate. :func:`measured` reads the same quantities off the profiled steps,
and :func:`compare` sets the two side by side.

Without PyTorch nothing here fails: :func:`run` returns None, and the analysis works on a stored run.

>>> Setup().param_bytes()[:2]          # the first layer's weight and bias, float32
(4194304, 4096)
"""

from __future__ import annotations

import contextlib
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

__all__ = ["SCHEMA", "MIB", "KINDS", "Setup", "SETUP", "run", "bucket_groups", "buckets_agree", "gloo_series",
           "fit_sizes", "Prediction", "Measured", "Comparison", "predict", "measured", "compare"]

SCHEMA = "commlib.lab.torch_ddp/2"
#: The kinds of step a run takes turns at (see the module's docstring).
KINDS = ("ddp", "local", "ddp_one", "ddp_noop")
MIB = 1024 * 1024  # DDP reads bucket_cap_mb in MiB


@dataclass(frozen=True)
class Setup:
    """What one DDP measurement trains and how often it times it.

    ``layers`` linear layers of ``width`` x ``width`` (each followed by ReLU), a batch of ``batch`` samples,
    DDP's ``bucket_cap_mb`` = ``bucket_mib`` (MiB; given explicitly, it caps the first bucket too),
    ``steps`` measured steps of each kind after ``warmup`` untimed ones, ``seed`` for the weights and data,
    and the gloo all-reduce sizes (bytes; by default 1 MiB to 32 MiB, from a quarter of a bucket to the whole
    gradient) and calls per size that :func:`predict` fits on.
    """

    layers: int = 8
    width: int = 1024
    batch: int = 64
    bucket_mib: float = 4.0
    steps: int = 15
    warmup: int = 3
    seed: int = 0
    gloo_sizes: tuple[int, ...] = (2**20, 2**21, 2**22, 2**23, 2**24, 2**25)
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

        def span(name, mine=mine):
            e = next(e for e in mine if e.name == name)
            return (e.time_range.end - e.time_range.start) * 1e-6  # the profiler counts microseconds

        b0 = next(e for e in mine if e.name == "backward").time_range.start
        gloo = [e for e in inside if e.name == "gloo:all_reduce" and e.thread != main_thread]
        out.append({
            "kind": st.name.split(":", 1)[1],
            "forward": span("forward"), "backward": span("backward"),
            "ready": [(e.time_range.end - b0) * 1e-6 for e in mine if e.name == "torch::autograd::AccumulateGrad"],
            "allreduce": [[(e.time_range.start - b0) * 1e-6, (e.time_range.end - b0) * 1e-6] for e in gloo],
            "bucket_numel": [int(np.prod(e.input_shapes[0])) if e.input_shapes else 0 for e in gloo],
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

    def network():
        torch.manual_seed(setup.seed)
        return nn.Sequential(*(nn.Sequential(nn.Linear(setup.width, setup.width), nn.ReLU())
                               for _ in range(setup.layers)))

    def done_at_once(_state, bucket):  # a communication hook that communicates nothing
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    ddp = DistributedDataParallel(network(), bucket_cap_mb=setup.bucket_mib)
    whole = sum(setup.param_bytes()) / MIB + 1  # a cap no bucket reaches: one bucket, the whole gradient
    models = {"ddp": ddp, "local": ddp, "ddp_one": DistributedDataParallel(network(), bucket_cap_mb=whole),
              "ddp_noop": DistributedDataParallel(network(), bucket_cap_mb=setup.bucket_mib)}
    models["ddp_noop"].register_comm_hook(None, done_at_once)
    opts = {kind: torch.optim.SGD(m.parameters(), lr=1e-3) for kind, m in models.items()}
    gen = torch.Generator().manual_seed(1000 * setup.seed + 1 + rank)  # each rank its own samples
    x = torch.randn(setup.batch, setup.width, generator=gen)
    y = torch.randn(setup.batch, setup.width, generator=gen)

    def step(kind: str) -> None:
        model = models[kind]
        with model.no_sync() if kind == "local" else contextlib.nullcontext():  # no_sync holds from the forward on
            with record_function("forward"):
                loss = nn.functional.mse_loss(model(x), y)
            with record_function("backward"):
                loss.backward()
        opts[kind].step()
        opts[kind].zero_grad(set_to_none=False)

    for _ in range(setup.warmup):
        for kind in KINDS:
            step(kind)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(setup.steps):
            for kind in KINDS:
                dist.barrier()
                with record_function("step:" + kind):
                    step(kind)
    records = _events(prof, _main_thread_id(prof))
    gloo = time_all_reduce(setup.gloo_sizes, 2, setup.gloo_repeats)
    everyone = [None] * n
    dist.all_gather_object(everyone, records)
    if rank == 0:
        doc = {"schema": SCHEMA, "ranks": n, "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
               "cpu_count": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
               "torch_threads": torch.get_num_threads(), "load_average_before": load_before,
               "setup": asdict(setup), "param_bytes": [4 * p.numel() for p in ddp.module.parameters()],
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
    cores of its other two-rank runs (:func:`commlib.lab.runner.lab_cpus`), which both ranks share.

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


def _bucket_bytes(setup: Setup) -> list[int]:
    sizes = list(reversed(setup.param_bytes()))
    return [sum(sizes[i] for i in g) for g in bucket_groups(setup)]


def _of(doc: dict, kind: str) -> list[list[dict]]:
    """The steps of one kind, as a list over steps of the per-rank records."""
    by_rank = [[r for r in ranks if r["kind"] == kind] for ranks in doc["steps"]]
    return [list(rs) for rs in zip(*by_rank)]


def buckets_agree(doc: dict) -> bool:
    """True if the buckets DDP all-reduced in every measured ``ddp`` step have the bytes :func:`bucket_groups`
    gives, in that order."""
    model = _bucket_bytes(Setup.from_dict(doc["setup"]))
    return all([4 * k for k in r["bucket_numel"]] == model for ranks in _of(doc, "ddp") for r in ranks)


def gloo_series(doc: dict) -> Series:
    """Gloo's all-reduce alone, timed by the same processes after the steps."""
    from .runner import to_series

    return to_series(doc["gloo"])[0]


def fit_sizes(doc: dict) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The gloo sizes :func:`predict` fits on, and those it leaves out: time-slice-bound by chapter 8's spread
    check (:func:`commlib.lab.explain.slice_bound_sizes`). All of them if fewer than two would be left."""
    from .explain import slice_bound_sizes

    s = gloo_series(doc)
    bound = slice_bound_sizes(s.nbytes, s.low, s.seconds, s.high)
    kept = tuple(x for x in s.nbytes if x not in bound)
    return (kept, tuple(bound)) if len(kept) >= 2 else (tuple(s.nbytes), ())


def _quartiles(values) -> tuple[float, float, float]:
    q1, med, q3 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q1), float(med), float(q3)


def _step_time(ranks: list[dict]) -> float:
    """A step's time: the slowest rank's forward and backward (a DDP backward ends when every bucket is reduced)."""
    return max(r["forward"] + r["backward"] for r in ranks)


@dataclass(frozen=True)
class Prediction:
    """Chapter 5's model of the steps, from measurements that contain no DDP communication (seconds).

    ``fit`` the alpha-beta line of gloo's all-reduce alone; ``ready`` each bucket's ready time from the start of
    backward (the ``local`` steps' median); ``slots`` each all-reduce's start and end on one stream, overlapped
    with the backward; ``bucket_times`` each bucket's all-reduce alone; ``whole_time`` one all-reduce of the whole
    gradient, and ``whole_measured`` gloo's measured median at the whole gradient's size (None if no size
    measured is within 5 % of it); ``t_forward`` and ``t_backward`` the ``local`` steps' medians; ``left_out``
    the gloo sizes the fit left out (:func:`fit_sizes`).
    """

    fit: AlphaBeta
    bucket_bytes: tuple[float, ...]
    ready: tuple[float, ...]
    slots: tuple[tuple[float, float], ...]
    bucket_times: tuple[float, ...]
    whole_time: float
    whole_measured: float | None
    t_forward: float
    t_backward: float
    left_out: tuple[float, ...] = ()

    @property
    def exposed(self) -> float:
        """Communication that runs past the backward pass."""
        return max(0.0, self.slots[-1][1] - self.t_backward)

    @property
    def bucket_wait(self) -> float:
        """The median time from a bucket's being ready to its being all-reduced."""
        return float(np.median([e - r for (_, e), r in zip(self.slots, self.ready)]))

    def step(self, kind: str) -> float | None:
        """The predicted time of a step of ``kind`` (None for ``local`` and ``ddp_noop``, which communicate
        nothing: the model's input, and DDP's own work, which the model leaves out)."""
        base = self.t_forward + self.t_backward
        return {"ddp": base + self.exposed, "ddp_one": base + self.whole_time}.get(kind)


def predict(doc: dict) -> Prediction:
    """The steps :mod:`commlib.sgd.overlap` predicts from the run's ``local`` steps and gloo's all-reduce alone."""
    setup = Setup.from_dict(doc["setup"])
    n = int(doc["ranks"])
    kept, left_out = fit_sizes(doc)
    fit = fit_joint([_only(gloo_series(doc), kept)])
    groups = bucket_groups(setup)
    sizes = list(reversed(setup.param_bytes()))
    local = _of(doc, "local")
    # a gradient is ready when the slowest rank has it; the median over steps
    ready_param = np.median([[max(r["ready"][i] for r in ranks) for i in range(len(sizes))] for ranks in local],
                            axis=0)
    ready = tuple(float(max(ready_param[i] for i in g)) for g in groups)
    nbytes = tuple(float(b) for b in _bucket_bytes(setup))

    def comm(m: float) -> float:
        return fit.time("all_reduce", m, n)

    slots = schedule(ready, nbytes, comm)
    t_fwd = float(np.median([max(r["forward"] for r in ranks) for ranks in local]))
    t_bwd = float(np.median([max(r["backward"] for r in ranks) for ranks in local]))
    series = gloo_series(doc)
    near = [t for x, t in zip(series.nbytes, series.seconds) if abs(x / sum(sizes) - 1) <= 0.05]
    return Prediction(fit, nbytes, ready, tuple((float(s), float(e)) for s, e in slots),
                      tuple(comm(m) for m in nbytes), comm(float(sum(sizes))), near[0] if near else None, t_fwd, t_bwd,
                      left_out)


def _only(s: Series, keep) -> Series:
    idx = [i for i, x in enumerate(s.nbytes) if x in keep]

    def pick(v):
        return None if v is None else tuple(v[i] for i in idx)

    return Series(s.op, s.n, pick(s.nbytes), pick(s.seconds), s.algorithm, pick(s.low), pick(s.high), s.label,
                  s.library)


def _bucket_ready(record: dict, groups: list[list[int]]) -> list[float]:
    return [max(record["ready"][i] for i in g) for g in groups]


@dataclass(frozen=True)
class Measured:
    """The profiled steps (seconds; ``*_q`` a median with its quartiles over the steps).

    ``step_q`` each kind's step time;
    ``after_last_q`` in a ``ddp`` step, from the last gradient's being ready (on the later rank) to the end of the
    backward pass, when every bucket is reduced, and ``after_last_noop`` the same in ``ddp_noop`` steps (the
    copies back from the buckets, with no communication); ``compute_end`` and ``compute_end_noop`` when the last gradient
    was ready in ``ddp`` and ``ddp_noop`` steps, ``t_backward_local`` the ``local`` backward; ``bucket_wait`` the
    median, over steps and buckets, of the time from a bucket's being ready on both ranks to its being reduced on
    both; ``skew``, ``skew_local`` and ``skew_noop`` the median gap between the two ranks' last gradients in
    ``ddp``, ``local`` and ``ddp_noop`` steps, and ``skew_apart`` whether the middle halves of the ``ddp`` and
    ``ddp_noop`` gaps lie apart (the former above); ``compute_end_one`` the last gradient in ``ddp_one`` steps;
    ``t_forward`` the ``ddp`` steps' forward pass; ``own_q`` a ``ddp_noop`` step less the ``local`` step of the
    same turn (DDP's own work); ``gain_q`` a ``ddp_one`` step less the ``ddp`` step of the same turn (what the
    overlap saved), and ``gain_turns`` in how many turns it was positive, of ``turns``; ``in_flight`` the most
    all-reduces gloo ran at once on one rank; ``timeline`` the ``ddp`` step nearest the medians of its last gradient, of the ranks'
    gap and of the communication after it, per rank: (bucket ready
    times, last gradient, all-reduce start and end).
    """

    step_q: dict[str, tuple[float, float, float]]
    after_last_q: tuple[float, float, float]
    after_last_noop: float
    compute_end: float
    compute_end_noop: float
    compute_end_one: float
    t_backward_local: float
    bucket_wait: float
    skew: float
    skew_local: float
    skew_noop: float
    skew_apart: bool
    t_forward: float
    own_q: tuple[float, float, float]
    gain_q: tuple[float, float, float]
    gain_turns: int
    turns: int
    in_flight: int
    timeline: tuple[tuple[tuple[float, ...], float, tuple[tuple[float, float], ...]], ...]
    #: the drawn step's parts beside their medians over the steps: ((last gradient, median), (ranks' gap, median),
    #: (communication after the last gradient, median)), seconds
    drawn: tuple[tuple[float, float], ...] = ()

    def step(self, kind: str) -> float:
        """The median step time of ``kind``."""
        return self.step_q[kind][1]


def _most_at_once(slots) -> int:
    points = sorted([(s, 1) for s, _ in slots] + [(e, -1) for _, e in slots], key=lambda p: (p[0], p[1]))
    most = now = 0
    for _, d in points:
        now += d
        most = max(most, now)
    return most


def _skews(steps: list[list[dict]]) -> tuple[float, float, float]:
    """The gap between the ranks' last gradients over ``steps``: median and quartiles."""
    return _quartiles([max(max(r["ready"]) for r in ranks) - min(max(r["ready"]) for r in ranks) for ranks in steps])


def _skew(steps: list[list[dict]]) -> float:
    """The median gap between the ranks' last gradients over ``steps``."""
    return _skews(steps)[1]


def measured(doc: dict) -> Measured:
    """What the profiled steps measured."""
    groups = bucket_groups(Setup.from_dict(doc["setup"]))
    ddp, local = _of(doc, "ddp"), _of(doc, "local")
    t_ddp = [_step_time(ranks) for ranks in ddp]
    waits, after_last, skews = [], [], []
    for ranks in ddp:
        last = [max(r["ready"]) for r in ranks]
        after_last.append(max(r["backward"] for r in ranks) - max(last))
        skews.append(max(last) - min(last))
        ready = [_bucket_ready(r, groups) for r in ranks]
        ends = [[e for _, e in sorted(r["allreduce"])] for r in ranks]  # gloo takes the buckets in launch order
        waits += [max(e[k] for e in ends) - max(rd[k] for rd in ready) for k in range(len(groups))]
    # the step to draw: nearest the medians of its parts (the last gradient, the ranks' gap, the communication after
    # it), each distance in units of that part's middle half, so that the picture agrees with the tables, which a
    # step of median total time need not
    last_all = [max(max(r["ready"]) for r in ranks) for ranks in ddp]
    parts = np.array([last_all, skews, after_last])
    lo, med, hi = np.percentile(parts, [25, 50, 75], axis=1)
    mid = int(np.argmin((np.abs(parts - med[:, None]) / np.maximum(hi - lo, 1e-9)[:, None]).sum(axis=0)))
    gains = [_step_time(one) - t for one, t in zip(_of(doc, "ddp_one"), t_ddp)]
    timeline = tuple((tuple(_bucket_ready(r, groups)), max(r["ready"]),
                      tuple((float(s), float(e)) for s, e in sorted(r["allreduce"]))) for r in ddp[mid])
    return Measured(
        step_q={kind: _quartiles([_step_time(ranks) for ranks in _of(doc, kind)]) for kind in KINDS},
        after_last_q=_quartiles(after_last),
        after_last_noop=float(np.median([max(r["backward"] for r in ranks) - max(max(r["ready"]) for r in ranks)
                                         for ranks in _of(doc, "ddp_noop")])),
        compute_end=float(np.median([max(max(r["ready"]) for r in ranks) for ranks in ddp])),
        compute_end_noop=float(np.median([max(max(r["ready"]) for r in ranks) for ranks in _of(doc, "ddp_noop")])),
        compute_end_one=float(np.median([max(max(r["ready"]) for r in ranks) for ranks in _of(doc, "ddp_one")])),
        t_backward_local=float(np.median([max(r["backward"] for r in ranks) for ranks in local])),
        bucket_wait=float(np.median(waits)),
        skew=float(np.median(skews)),
        skew_local=_skew(local),
        skew_noop=_skew(_of(doc, "ddp_noop")),
        skew_apart=_skews(ddp)[0] > _skews(_of(doc, "ddp_noop"))[2],
        t_forward=float(np.median([max(r["forward"] for r in ranks) for ranks in ddp])),
        own_q=_quartiles([_step_time(a) - _step_time(b) for a, b in zip(_of(doc, "ddp_noop"), local)]),
        gain_q=_quartiles(gains),
        gain_turns=sum(g > 0 for g in gains),
        turns=len(gains),
        in_flight=max(_most_at_once(r["allreduce"]) for ranks in ddp for r in ranks),
        timeline=timeline,
        drawn=tuple((float(parts[i, mid]), float(med[i])) for i in range(3)),
    )


@dataclass(frozen=True)
class Comparison:
    """The prediction beside the measurement, with the load average as the run began (``load``, None if unknown)
    and the cores its ranks shared (``cores``)."""

    prediction: Prediction
    measurement: Measured
    load: float | None = None
    cores: int = 0

    def error(self, kind: str) -> float:
        """Predicted step time of ``kind`` over the measured median, less 1 (negative: the model is too fast)."""
        return self.prediction.step(kind) / self.measurement.step(kind) - 1.0


def compare(doc: dict) -> Comparison:
    """:func:`predict` and :func:`measured` of one run."""
    return Comparison(predict(doc), measured(doc), doc.get("load_average_before"), int(doc.get("cpu_count") or 0))


if __name__ == "__main__":
    sys.exit(_worker(Setup.from_dict(json.loads(sys.argv[2])), sys.argv[1],
                     [int(c) for c in sys.argv[3].split(",")] if len(sys.argv) > 3 and sys.argv[3] else []))
