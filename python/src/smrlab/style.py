"""Shared figure style: paper-like fonts, colours and the Agg backend.

Every figure module imports this first, so figures render the same in the CLI, in tests and on
machines without a display, and identical series get identical colours in every figure.
"""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure

RC = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",  # text stays text: searchable, small, inlinable in HTML
    "svg.hashsalt": None,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
}
plt.rcParams.update(RC)

# Reclaimers keep one colour across figures; unknown names take the remaining colours in order.
_RECLAIMER_ORDER = (
    "none",
    "debra",
    "qsbr",
    "ebr",
    "nebr",
    "rcu",
    "token_naive",
    "token_passfirst",
    "token_periodic",
    "hp",
    "he",
    "ibr",
    "wfe",
    "nbr",
    "nbrplus",
    "lfrc",
    "urcu_qsbr",
    "urcu_memb",
    "qsbr_ibr",  # appended: the colours of the names before it stay as they were
    "hp_pop",
    "he_pop",
    "epoch_pop",
    "hp_pp",
    "hyaline",
    "crystalline_l",
    "crystalline",
)
PALETTE = (
    "#4c72b0",
    "#dd8452",
    "#55a868",
    "#c44e52",
    "#8172b3",
    "#937860",
    "#da8bc3",
    "#8c8c8c",
    "#ccb974",
    "#64b5cd",
    "#1b9e77",
    "#d95f02",
    "#7570b3",
    "#e7298a",
    "#66a61e",
    "#e6ab02",
    "#a6761d",
    "#666666",
    "#2ca02c",
)
# Box colours of timeline graphs: neighbours differ; no blue, which marks epoch changes.
BOX_COLORS = (
    "#e69f00",
    "#009e73",
    "#d55e00",
    "#cc79a7",
    "#999933",
    "#882255",
    "#44aa99",
    "#aa4499",
)
EPOCH_COLOR = "#1f4fd1"
FREE_MARKERS = {"batch": "o", "amortized": "s"}
FREE_LINESTYLES = {"batch": "--", "amortized": "-"}


def reclaimer_color(name: str) -> str:
    """A stable colour per reclaimer name; a variant ("hp (fence symmetric)") takes its
    reclaimer's (series_colors tells variants apart within one figure)."""
    name = base_reclaimer(name)
    if name in _RECLAIMER_ORDER:
        return PALETTE[_RECLAIMER_ORDER.index(name) % len(PALETTE)]
    return PALETTE[(len(_RECLAIMER_ORDER) + sum(map(ord, name))) % len(PALETTE)]


def base_reclaimer(name: str) -> str:
    """The reclaimer of a series name: "hp" of "hp (fence symmetric)"."""
    return name.split(" (", 1)[0]


# How the second, third, ... variant of one reclaimer in a figure departs from its colour (the
# first keeps it); a sixth would repeat the second's.
_VARIANT_SHADES = (("white", 0.5), ("black", 0.4), ("white", 0.75), ("black", 0.65))


def series_colors(names: Iterable[str]) -> dict[str, str]:
    """Colours for one figure's series: each reclaimer's own, and shades of it for the
    variants of one reclaimer, in sorted order, so two variants never share a colour."""
    colors: dict[str, str] = {}
    seen: dict[str, int] = {}
    for name in sorted(set(names)):
        base = base_reclaimer(name)
        index = seen.get(base, 0)
        seen[base] = index + 1
        color = to_rgb(reclaimer_color(base))
        if index:
            towards, amount = _VARIANT_SHADES[(index - 1) % len(_VARIANT_SHADES)]
            target = to_rgb(towards)
            color = tuple(c + (t - c) * amount for c, t in zip(color, target, strict=True))
        colors[name] = to_hex(color)
    return colors


def figure(width: float, height: float, **kwargs: object) -> Figure:
    """A new figure of the given size (inches) with constrained layout.

    Made without pyplot, so no global registry keeps it alive: a report with hundreds of
    figures frees each one when it is no longer referenced.
    """
    return Figure(figsize=(width, height), layout="constrained", **kwargs)


def close(fig: Figure) -> None:
    """Releases a figure's drawing resources early (optional: nothing else holds it)."""
    fig.clear()
