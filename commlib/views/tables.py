"""Tables for the page: Markdown built from model-layer data, units in every header."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from IPython.display import Markdown

from .. import hardware
from ..units import parse_rate, to_unit

__all__ = ["markdown_table", "folded", "links_table", "models_table", "rates_table"]


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]], caption: str = "") -> Markdown:
    """A Markdown table (rendered by the notebook and by the website alike)."""
    def cell(value: object) -> str:   # a pipe inside a cell, header or row, must not split it
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    if caption:
        lines = [f"**{caption}**", ""] + lines
    return Markdown("\n".join(lines))


def folded(table: Markdown, title: str) -> Markdown:
    """``table`` inside a closed dropdown box titled ``title`` (MyST; the page opens it on a click)."""
    return Markdown(f"````{{admonition}} {title}\n:class: dropdown\n\n{table.data}\n````")


def _number(value: float) -> str:
    """Four significant figures below a thousand, whole numbers with separators above: one unit per column."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def links_table(keys: Sequence[str] | None = None, *, note: bool = True, title: str = "Link presets") -> Markdown:
    """Link presets: vendor figure next to one-direction bandwidth in GB/s and Gb/s, latency in µs and what it assumes.

    ``title`` opens the caption; ``note=False`` leaves out the caption's note on how PCIe rows are counted (for a short
    table whose full version, note and all, is shown elsewhere on the page).
    """
    keys = list(hardware.LINKS) if keys is None else list(keys)
    rows = []
    for key in keys:
        item = hardware.link(key)
        rows.append([item.name, item.vendor_figure, _number(to_unit(item.bandwidth, "GB/s")),
                     _number(to_unit(item.bandwidth, "Gb/s")), _number(item.latency * 1e6), item.stack or "no network stack",
                     f"{item.source} {{cite}}`{item.citation}`", item.date])
    headers = ["link", "vendor figure", "per direction (GB/s)", "per direction (Gb/s)", "typical latency (µs)",
               "latency assumes", "source", "dated"]
    caption = f"{title}, as of {hardware.AS_OF}"
    if note and any(key.startswith("pcie") for key in keys):
        caption += f". PCIe rows: {hardware.PCIE_CONVENTION[0].lower()}{hardware.PCIE_CONVENTION[1:]}"
        derived = [hardware.link(key).name for key in keys if "raw per direction" in hardware.link(key).vendor_figure]
        if derived:   # PCI-SIG specifies the transfer rate and line code; the raw rate in brackets is worked from them
            caption = caption.rstrip(".") + (f". For {derived[0]} to {derived[-1]} the vendor figure is the specified "
                                             f"transfer rate per lane and line code; the raw rate in brackets is "
                                             f"worked out from them, not quoted")
    return markdown_table(headers, rows, caption=caption)


def models_table(keys: Sequence[str] | None = None, dtype: str = "fp32") -> Markdown:
    """Model presets: exact parameter count, gradient bytes in ``dtype`` (MB), training state under mixed Adam (GB).

    Five short columns, so that the table fits a page: the paper goes with the model's name, MiB is left to the
    reader (``hardware.gradient_bytes(key, dtype) / 2**20``).
    """
    keys = list(hardware.MODELS) if keys is None else list(keys)
    rows = []
    for key in keys:
        item = hardware.model(key)
        nbytes = hardware.gradient_bytes(key, dtype)
        rows.append([f"{item.name} {{cite}}`{item.citation}`", f"{item.params:,}", f"{nbytes / 1e6:,.1f}",
                     f"{hardware.training_state_bytes(key, 'mixed_adam') / 1e9:,.2f}",
                     f"{item.source} {{cite}}`{item.count_citation}`"])
    per_param = sum(hardware.TRAINING_STATE_BYTES["mixed_adam"].values())
    headers = ["model", "parameters", f"{dtype} gradient (MB)", f"Adam state (GB, {per_param} B/param)", "count from"]
    return markdown_table(headers, rows, caption=f"Model presets, as of {hardware.AS_OF}; Adam state: mixed-precision "
                                                 f"Adam, {per_param} bytes per parameter")


def rates_table(examples: Sequence[str]) -> Markdown:
    """Each rate as written, then in bytes/s, GB/s, Gb/s and GiB/s (all one direction)."""
    rows = []
    for text in examples:
        rate = parse_rate(text)
        rows.append([text, f"{rate:.4g}", f"{to_unit(rate, 'GB/s'):g}", f"{to_unit(rate, 'Gb/s'):g}",
                     f"{to_unit(rate, 'GiB/s'):.4g}"])
    return markdown_table(["as written", "bytes/s", "GB/s", "Gb/s", "GiB/s"], rows,
                          caption="The same rates in four units")
