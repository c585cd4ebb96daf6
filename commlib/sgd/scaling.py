r"""Scaling metrics done right, and the linear scaling rule of large-batch training.

**Weak scaling** (each of ``n`` workers keeps its own mini-batch of ``b``
samples, so the global batch is ``n b``), as in the PowerAI DDL benchmarks
(Cho et al. 2017). With ``T(1)`` the time of one iteration on one worker and
``T(n)`` on ``n`` workers:

* throughput: :math:`\Theta(n) = n b / T(n)` samples per second;
* speedup: :math:`\mathrm{Sp}(n) = \Theta(n)/\Theta(1) = n\,T(1)/T(n)` -- how much
  faster ``n`` workers get through the same ``n b`` samples than one worker;
* scaling efficiency: :math:`E(n) = \mathrm{Sp}(n)/n = T(1)/T(n)`, 1.0 being perfect;
* communication overhead: :math:`T(n) - T(1)` seconds per iteration (the
  iteration grows only because of communication, the per-worker work being
  the same), or as a share of :math:`T(n)`.

Speedup and efficiency come from :func:`commlib.cost.speedup` and
:func:`commlib.cost.scaling_efficiency` applied to the same work: one worker
needs :math:`n\,T(1)` for what ``n`` workers do in :math:`T(n)`.

>>> m = weak_scaling(t_compute=0.3, t_comm=0.1, n=4, batch_per_worker=32)
>>> round(m.speedup, 2), round(m.efficiency, 2), round(m.throughput_many, 1)
(3.0, 0.75, 320.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import hardware
from ..collectives import cost
from ..step import cost as step_cost
from ..units import check_count, check_nonnegative, check_positive

__all__ = [
    "ScalingMetrics",
    "weak_scaling",
    "ring_weak_scaling",
    "linear_scaling_lr",
    "IMAGENET_1K_TRAIN_IMAGES",
    "ReportedRun",
    "GOYAL2017",
    "RETOLD_ONE_HOUR_RUN",
    "iterations_per_epoch",
    "iteration_time_from_epoch",
    "epoch_time_from_run",
    "one_hour_run_figures",
]


@dataclass(frozen=True)
class ScalingMetrics:
    """The PowerAI DDL benchmark figures of one configuration (seconds, samples/s)."""

    n: int
    batch_per_worker: int
    t_one: float
    t_many: float
    throughput_one: float
    throughput_many: float
    speedup: float
    efficiency: float
    overhead: float
    overhead_share: float


def weak_scaling(t_compute: float, t_comm: float, n: int, batch_per_worker: int) -> ScalingMetrics:
    r"""Speedup, efficiency, throughput and overhead when ``n`` workers each process ``batch_per_worker``.

    ``t_compute`` is the seconds one worker needs for one iteration alone
    (:math:`T(1)`); ``t_comm`` the seconds of communication that the iteration
    adds on ``n`` workers (not hidden behind compute), so
    :math:`T(n) = T(1) + t_{comm}`. For ``n = 1`` there is nothing to
    communicate and ``t_comm`` must be 0.

    >>> weak_scaling(1.0, 0.0, 8, 32).efficiency
    1.0
    """
    t_compute = check_positive("t_compute", t_compute)
    t_comm = check_nonnegative("t_comm", t_comm)
    n = check_count("n", n)
    batch = check_count("batch_per_worker", batch_per_worker)
    if n == 1 and t_comm != 0:
        raise ValueError(f"t_comm must be 0 when n = 1 (one worker has no one to talk to), got {t_comm}")
    t_many = t_compute + t_comm
    return ScalingMetrics(
        n=n,
        batch_per_worker=batch,
        t_one=t_compute,
        t_many=t_many,
        throughput_one=batch / t_compute,
        throughput_many=n * batch / t_many,
        speedup=step_cost.speedup(n * t_compute, t_many),
        efficiency=step_cost.scaling_efficiency(n * t_compute, t_many, n),
        overhead=t_many - t_compute,
        overhead_share=step_cost.communication_overhead(t_many, t_compute),
    )


def linear_scaling_lr(base_lr: float, base_batch: int, batch: int) -> float:
    r"""Linear scaling rule (Goyal et al. 2017): multiply the batch by k, multiply the learning rate by k.

    :math:`\eta = \eta_0 \cdot B / B_0`. Goyal et al. use
    :math:`\eta = 0.1 \cdot kn/256` for ``k`` workers (GPUs) of ``n`` images
    each (their section 5.1), i.e. ``base_lr = 0.1``, ``base_batch = 256``,
    ``batch = k n``.
    Training with the rule and with gradual warm-up is :func:`commlib.sgd.training.train`.

    >>> linear_scaling_lr(0.1, 256, 32 * 256)   # 256 GPUs x 32 images
    3.2
    """
    base_lr = check_positive("base_lr", base_lr)
    base_batch = check_count("base_batch", base_batch)
    batch = check_count("batch", batch)
    return base_lr * batch / base_batch



def ring_weak_scaling(model: str, n: int, bandwidth: float, t_compute: float, batch_per_worker: int,
                      latency: float = 0.0, dtype: str = "fp32", hidden: float = 0.0) -> ScalingMetrics:
    r""":func:`weak_scaling` when the gradient of ``model`` is ring all-reduced once per iteration.

    :math:`t_{comm} = (1 - h)\,[2(n-1)\alpha + 2\frac{n-1}{n} M/B]` with ``M`` the
    gradient bytes (:func:`commlib.hardware.gradient_bytes`), ``B`` = ``bandwidth``
    in bytes/s per direction, ``alpha`` = ``latency`` in seconds, and ``h`` =
    ``hidden`` the share of the all-reduce hidden behind compute (0: none,
    as in a framework that does not overlap; see :mod:`commlib.sgd.overlap`).

    >>> m = ring_weak_scaling("resnet50", 8, 1.25e9, 0.2, 32)   # 10 Gb/s Ethernet
    >>> round(m.overhead * 1e3, 1), round(m.efficiency, 3)       # ms, fraction
    (143.1, 0.583)
    """
    hidden = float(hidden)
    if not 0.0 <= hidden <= 1.0:
        raise ValueError(f"hidden must lie in [0, 1], got {hidden!r}")
    n = check_count("n", n)
    nbytes = hardware.gradient_bytes(model, dtype)
    t_comm = 0.0 if n == 1 else (1.0 - hidden) * cost.allreduce_time(nbytes, n, bandwidth, latency)
    return weak_scaling(t_compute, t_comm, n, batch_per_worker)


# --------------------------------------------------------------------------- a reported large-batch run

#: Training images of the 1000-class ImageNet task (ILSVRC-2012; Russakovsky et al. 2015, table 2).
#: Goyal et al. (2017, section 5.1) round it to "~1.28 million".
IMAGENET_1K_TRAIN_IMAGES = 1_281_167


@dataclass(frozen=True)
class ReportedRun:
    """A published large-batch training run, as its paper states it (SI units: seconds).

    Nothing here is computed: these are the paper's own figures, kept in one
    place so that prose and exercises can compute from them
    (:func:`iterations_per_epoch`, :func:`iteration_time_from_epoch`,
    :func:`epoch_time_from_run`) instead of typing numbers in.
    """

    source: str                     #: bibliography key
    model: str                      #: key into :data:`commlib.hardware.MODELS`
    framework: str                  #: the software framework (not the optimiser)
    optimizer: str                  #: the optimiser
    momentum: float                 #: momentum coefficient m
    weight_decay: float             #: L2 weight decay lambda
    train_images: int               #: images in one epoch
    images_per_gpu: int             #: per-worker mini-batch n (fixed under weak scaling)
    gpus_per_server: int            #: GPUs in one server
    base_lr: float                  #: reference rate eta for ``base_batch``
    base_batch: int                 #: reference global batch
    warmup_epochs: float            #: gradual warm-up length (epochs)
    epochs: int                     #: training length (epochs)
    headline_gpus: int              #: GPUs of the headline run
    headline_time: float            #: wall-clock time of the headline run (s), as stated ("one hour")
    largest_gpus: int               #: GPUs of the largest timed configuration
    largest_epoch_time: float       #: time per epoch (s) stated for ``largest_gpus``
    backprop_time: float            #: backward pass of one ``images_per_gpu`` mini-batch on one GPU (s)

    def global_batch(self, gpus: int) -> int:
        """Global mini-batch (images) of ``gpus`` workers of :attr:`images_per_gpu` each."""
        return check_count("gpus", gpus) * self.images_per_gpu

    def servers(self, gpus: int) -> int:
        """Servers holding ``gpus`` GPUs (whole servers; ``gpus`` must be a multiple of :attr:`gpus_per_server`)."""
        gpus = check_count("gpus", gpus)
        if gpus % self.gpus_per_server:
            raise ValueError(f"gpus must be a multiple of gpus_per_server={self.gpus_per_server}, got {gpus}")
        return gpus // self.gpus_per_server


#: Goyal et al. (2017), "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour":
#: Caffe2, Nesterov momentum 0.9, weight decay 1e-4, n = 32 images per GPU, 8 P100 per
#: Big Basin server, eta = 0.1 kn/256, 5-epoch gradual warm-up, 90 epochs; 256 GPUs in
#: one hour (abstract); 352 GPUs (44 servers) "complete one pass over all ~1.28 million
#: ImageNet training images in about 30 seconds" (figure 7); ResNet-50 backprop takes
#: 120 ms on one P100 (section 4.3).
GOYAL2017 = ReportedRun(
    source="goyal2017accurate",
    model="resnet50",
    framework="Caffe2",
    optimizer="SGD with Nesterov momentum",
    momentum=0.9,
    weight_decay=1e-4,
    train_images=IMAGENET_1K_TRAIN_IMAGES,
    images_per_gpu=32,
    gpus_per_server=8,
    base_lr=0.1,
    base_batch=256,
    warmup_epochs=5,
    epochs=90,
    headline_gpus=256,
    headline_time=3600.0,
    largest_gpus=352,
    largest_epoch_time=30.0,
    backprop_time=0.120,
)


#: What source note 002 reports for the same run (its errors are corrected in chapter 4):
#: "28 million training images", "optimizer: Caffe2", and, for "44 servers", one epoch in
#: "0.5 秒" (0.5 seconds) on 352 GPUs, where the paper's figure 7 plots minutes.
RETOLD_ONE_HOUR_RUN = {
    "train_images": 28e6,
    "optimizer": "Caffe2",
    "servers": 44,
    "gpus": 352,
    "epoch_time": 0.5,
}


def iterations_per_epoch(train_images: int, global_batch: int) -> float:
    r"""Iterations in one pass over ``train_images`` with a global batch of ``global_batch`` images.

    :math:`I = D / B` (a fraction when ``B`` does not divide ``D``: the
    average over many epochs of a sampler that does not drop the remainder).

    >>> iterations_per_epoch(1000, 250)
    4.0
    """
    train_images = check_count("train_images", train_images)
    global_batch = check_count("global_batch", global_batch)
    return train_images / global_batch


def iteration_time_from_epoch(epoch_time: float, train_images: int, global_batch: int) -> float:
    r"""Mean seconds per iteration when one epoch takes ``epoch_time`` seconds.

    :math:`T_\text{iter} = T_\text{epoch} B / D`, with ``D`` = ``train_images``
    and ``B`` = ``global_batch`` images. Turning a reported time per epoch
    into a time per iteration lets it be held against what one GPU needs for
    one mini-batch.

    >>> iteration_time_from_epoch(30.0, 1000, 100)   # 10 iterations in 30 s
    3.0
    """
    epoch_time = check_positive("epoch_time", epoch_time)
    return epoch_time / iterations_per_epoch(train_images, global_batch)


def epoch_time_from_run(total_time: float, epochs: float) -> float:
    r"""Mean seconds per epoch of a run of ``epochs`` epochs that took ``total_time`` seconds in all.

    :math:`T_\text{epoch} = T / E`; an upper bound on the training time per
    epoch when ``total_time`` also covers evaluation and start-up.

    >>> epoch_time_from_run(3600.0, 90)
    40.0
    """
    total_time = check_positive("total_time", total_time)
    epochs = check_positive("epochs", epochs)
    return total_time / epochs


def one_hour_run_figures(run: ReportedRun = GOYAL2017, note: dict | None = None) -> dict[str, float]:
    """The source note's figures for the one-hour ImageNet run, held against the paper's (SI units).

    Keys: ``images`` and ``images_millions`` (the paper's epoch),
    ``note_images`` and ``images_factor`` (the note's count and how many
    times too large it is), ``gpus``, ``servers``, ``images_per_gpu``,
    ``global_batch`` and ``iterations`` (per epoch) at the note's scale;
    ``note_epoch_time`` and ``note_iteration_time`` (what the note's epoch
    time leaves per iteration, s); ``epoch_time`` and ``iteration_time``
    (the paper's, s); ``headline_gpus``, ``headline_hours``, ``epochs``,
    ``headline_epoch_time`` and ``headline_iteration_time`` (the one-hour
    run's mean epoch and iteration, upper bounds, s); ``backprop_time`` (one
    GPU's backward pass, s), ``momentum`` and ``weight_decay``.

    >>> f = one_hour_run_figures()
    >>> f["note_iteration_time"] < f["backprop_time"] < f["iteration_time"]
    True
    """
    note = RETOLD_ONE_HOUR_RUN if note is None else note
    gpus = check_count("gpus", note["gpus"])
    batch = run.global_batch(gpus)
    head_batch = run.global_batch(run.headline_gpus)
    head_epoch = epoch_time_from_run(run.headline_time, run.epochs)
    return {
        "images": run.train_images,
        "images_millions": run.train_images / 1e6,
        "note_images": note["train_images"],
        "images_factor": note["train_images"] / run.train_images,
        "gpus": gpus,
        "servers": run.servers(gpus),
        "images_per_gpu": run.images_per_gpu,
        "global_batch": batch,
        "iterations": iterations_per_epoch(run.train_images, batch),
        "note_epoch_time": note["epoch_time"],
        "note_iteration_time": iteration_time_from_epoch(note["epoch_time"], run.train_images, batch),
        "epoch_time": run.largest_epoch_time,
        "iteration_time": iteration_time_from_epoch(run.largest_epoch_time, run.train_images, batch),
        "headline_gpus": run.headline_gpus,
        "headline_hours": run.headline_time / 3600.0,
        "epochs": run.epochs,
        "headline_epoch_time": head_epoch,
        "headline_iteration_time": iteration_time_from_epoch(head_epoch, run.train_images, head_batch),
        "backprop_time": run.backprop_time,
        "momentum": run.momentum,
        "weight_decay": run.weight_decay,
    }
