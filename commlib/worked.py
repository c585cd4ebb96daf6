"""Worked examples from the source notes, recomputed by commlib.

The figures a source reports are kept as data (``*_AS_REPORTED``) so that
the book can print them next to what the model computes and tests can hold
one against the other. Symbols follow the book's notation: M bytes, B
bandwidth one direction, T_c compute and T_m communication time, epsilon
efficiency (the notes write D, S, T_s, T_t and P).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import cost, hardware
from .units import format_percent, format_rate, format_size, to_unit

__all__ = ["VGGExample", "vgg16_gigabit", "VGG16_AS_REPORTED", "VGG16_OVER_N"]

#: What the study notes report for VGG-16 on 4 GPUs over 1 Gb/s Ethernet.
VGG16_AS_REPORTED = {
    "d_bytes_stated": 553.44e6,   # "138.36M x 4bytes = 553.44MB"
    "d_bytes_used": 553.36e6,     # the value its arithmetic uses
    "bandwidth": 125e6,           # "1000Mbit = 125Mbytes"
    "n": 4,
    "t_compute": 0.55,            # Ts ~= 0.55 s
    "target_efficiency": 0.9,     # the efficiency the note asks a faster link for
    "efficiency": 0.0765,
    "t_step": 7.19,
    "t_step_measured": 7.628,
    "bandwidth_90_mb": 13582,     # MB/s
    "bandwidth_90_mbit": 108660,  # Mbit/s
    "growth": 1.33333,
}


@dataclass(frozen=True)
class VGGExample:
    """The VGG-16 over gigabit Ethernet example; SI units (bytes, seconds, bytes/s)."""

    params: int
    d_note: float
    d_exact: float
    n: int
    t_compute: float
    target_efficiency: float
    bandwidth: float
    t_comm: float
    efficiency: float
    t_step: float
    t_step_measured: float
    bandwidth_90: float
    bandwidth_90_exact: float
    growth_limit: float
    latency: float = 0.0
    over_n: tuple = ()
    n_limit: int | None = None
    goodput: float = 0.0
    t_step_framed: float = 0.0
    t_step_acked: float = 0.0

    def rows(self) -> list[list[str]]:
        """(quantity, computed here, as the note has it) rows for a table."""
        note = VGG16_AS_REPORTED
        target = format_percent(self.target_efficiency, 0)
        return [
            ["gradient M (the note's value)", format_size(self.d_note),
             f"{format_size(note['d_bytes_used'])} ({format_size(note['d_bytes_stated'])} stated)"],
            ["gradient M (exact count, fp32)", format_size(self.d_exact), "-"],
            ["link B", format_rate(self.bandwidth) + " = " + format_rate(self.bandwidth, bits=True),
             format_rate(note["bandwidth"])],
            ["communication T_m", f"{self.t_comm:.3f} s", "-"],
            ["efficiency ε", f"{100 * self.efficiency:.2f} %", f"{100 * note['efficiency']:.2f} %"],
            ["step time T_c / ε", f"{self.t_step:.2f} s", f"{note['t_step']:.2f} s (measured {note['t_step_measured']} s)"],
            [f"B for ε = {target}", f"{to_unit(self.bandwidth_90, 'MB/s'):,.0f} MB/s",
             f"{note['bandwidth_90_mb']:,} MB/s"],
            [f"B for ε = {target}, in bits", f"{to_unit(self.bandwidth_90, 'Mb/s'):,.0f} Mb/s",
             f"{note['bandwidth_90_mbit']:,} Mbit/s"],
            ["most growth of B as n grows, bytes alone (start-ups left out): n/(n-1)", f"{self.growth_limit:.4f}", f"{note['growth']}"],
        ]

    def lesson_rows(self) -> list[list[str]]:
        """(quantity, computed here) rows for the chapter's table: the lesson, without the audit of the note."""
        target = format_percent(self.target_efficiency, 0)
        return [
            ["gradient M (the note's value)", format_size(self.d_note)],
            ["link B", format_rate(self.bandwidth) + " = " + format_rate(self.bandwidth, bits=True)],
            ["communication T_m", f"{self.t_comm:.3f} s"],
            ["efficiency ε", f"{100 * self.efficiency:.2f} %"],
            ["step time T_c / ε", f"{self.t_step:.2f} s (measured: {self.t_step_measured} s)"],
            [f"B for ε = {target}, no overlap", f"{to_unit(self.bandwidth_90, 'MB/s'):,.0f} MB/s = "
                                                f"{to_unit(self.bandwidth_90, 'Gb/s'):.1f} Gb/s"],
        ]

    def note_agrees(self) -> bool:
        """Whether the note's results (efficiency, step time, bandwidth for the target in MB/s and Mbit/s, the
        growth n/(n-1)) equal this recomputation, each rounded to the digits the note prints.

        >>> vgg16_gigabit().note_agrees()
        True
        """
        note = VGG16_AS_REPORTED
        return (round(self.efficiency, 4) == note["efficiency"] and round(self.t_step, 2) == note["t_step"]
                and round(to_unit(self.bandwidth_90, "MB/s")) == note["bandwidth_90_mb"]
                and round(to_unit(self.bandwidth_90, "Mb/s"), -1) == note["bandwidth_90_mbit"]
                and round(self.growth_limit, 5) == note["growth"])


#: Rank counts at which the example's requirement is recomputed with the link's start-ups.
VGG16_OVER_N: tuple[int, ...] = (4, 16, 100, 400, 600)


def vgg16_gigabit(ns=VGG16_OVER_N) -> VGGExample:
    """Recompute the VGG-16, 4 GPUs, 1 Gb/s Ethernet example (ring all-reduce, no overlap).

    ``goodput`` is the link's rate left to data by TCP/IP over Ethernet
    (:data:`commlib.hardware.TCP_OVER_ETHERNET`) and ``t_step_framed`` the step with the ring's bytes sent at it;
    ``t_step_acked`` the step when each card also carries the ACKs of the stream it receives, one per two
    full-size segments (:meth:`commlib.hardware.Framing.payload_share_with_acks`).
    ``over_n`` holds, for each n of ``ns``, ``(n, B without start-ups, B with the link's start-ups)``
    for the target efficiency (bytes/s; ``math.inf`` where no bandwidth reaches it), and ``n_limit``
    the most ranks for which any bandwidth does (:func:`commlib.cost.largest_ranks_for_efficiency`).

    >>> ex = vgg16_gigabit()
    >>> round(100 * ex.efficiency, 2), round(ex.t_step, 2), round(ex.bandwidth_90 / 1e6)
    (7.65, 7.19, 13582)
    >>> round(ex.goodput / 1e6, 1), round(ex.t_step_framed, 2), round(ex.t_step_acked, 2)
    (117.7, 7.6, 7.81)
    """
    note = VGG16_AS_REPORTED
    n, ts, link = note["n"], note["t_compute"], hardware.link("eth_1g").bandwidth
    alpha = hardware.link("eth_1g").latency
    target = note["target_efficiency"]
    d = note["d_bytes_used"]
    d_exact = hardware.gradient_bytes("vgg16", "fp32")
    t_comm = cost.allreduce_time(d, n, link)
    efficiency = cost.parallel_efficiency(ts, t_comm)
    return VGGExample(
        params=hardware.model("vgg16").params,
        d_note=d,
        d_exact=d_exact,
        n=n,
        t_compute=ts,
        target_efficiency=target,
        bandwidth=link,
        t_comm=t_comm,
        efficiency=efficiency,
        t_step=ts / efficiency,
        t_step_measured=note["t_step_measured"],
        bandwidth_90=cost.required_bandwidth(d, n, ts, target),
        bandwidth_90_exact=cost.required_bandwidth(d_exact, n, ts, target),
        growth_limit=cost.ring_bytes_per_rank(1.0, 2**40) / cost.ring_bytes_per_rank(1.0, n),
        latency=alpha,
        over_n=tuple((m, cost.required_bandwidth(d, m, ts, target),
                      cost.required_bandwidth(d, m, ts, target, alpha)) for m in ns),
        n_limit=cost.largest_ranks_for_efficiency(ts, target, alpha),
        goodput=link * hardware.TCP_OVER_ETHERNET.payload_share,
        t_step_framed=ts + cost.allreduce_time(d, n, link * hardware.TCP_OVER_ETHERNET.payload_share),
        t_step_acked=ts + cost.allreduce_time(d, n, link * hardware.TCP_OVER_ETHERNET.payload_share_with_acks()),
    )
