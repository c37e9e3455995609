"""Figures of recorded experiments, split by what differs: one panel per task and condition
(in a wrapped grid), agents by their labels in the same colours in every panel, never pooled
across tasks or conditions. Learning curves with their spread over seeds (smoothing restarts
at each phase; phase boundaries drawn); stay-probability bars (two-step-like tasks only),
revaluation-score bars (probed protocols), test-phase choice bars and test-phase return bars,
per agent. Each `*_figure` function returns the matplotlib Figure (tests read back what it
plots); each `plot_*` function saves it."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO

import numpy as np

METRICS = {"return": "return (total reward)", "length": "episode length (steps)"}
MOST_COLUMNS = 3  # panels side by side before the grid wraps (`columns` overrides it)


def require_matplotlib() -> Any:
    """matplotlib's pyplot on the Agg backend, or ImportError naming the extra to install."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'graphtasks[plot]'") from None
    return plt


def trailing_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last `window` values at each point; the first points average what there is,
    so the first episodes (where learning shows) are never cut off. NaNs (missing episodes)
    are left out of the means."""
    if window <= 1:
        return values
    values = np.asarray(values, dtype=float)
    present = ~np.isnan(values)
    sums = np.cumsum(np.insert(np.where(present, values, 0.0), 0, 0.0))
    counts = np.cumsum(np.insert(present, 0, False).astype(float))
    index = np.arange(1, len(values) + 1)
    start = np.maximum(index - window, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums[index] - sums[start]) / (counts[index] - counts[start])


def panel_of(task: str, condition: str | None = None) -> str:
    """A panel's name: the task, and the condition when the experiment has conditions."""
    return task + (f", {condition}" if condition else "")


def split_rows(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Episode rows by panel (task and condition), panels in the order the rows first name them."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(panel_of(row["task"], row.get("condition")), []).append(row)
    return out


def phase_offsets(rows: list[dict[str, Any]]) -> dict[int, int]:
    """Where each phase starts on the episode axis (of one panel's rows: conditions may give
    a phase other lengths)."""
    lengths: dict[int, int] = {}
    for row in rows:
        lengths[row["phase_index"]] = max(lengths.get(row["phase_index"], 0), row["episode"] + 1)
    offsets, total = {}, 0
    for index in sorted(lengths):
        offsets[index] = total
        total += lengths[index]
    return offsets


def run_tables(rows: list[dict[str, Any]], metric: str) -> dict[str, dict[str, np.ndarray]]:
    """Per panel (task, and condition) and agent label: a (runs, episodes) table of `metric`
    (phases in order, episodes counted on from one phase to the next; NaN where a run has no
    episode). Agents are in label order in each panel."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for panel, members in split_rows(rows).items():
        offsets = phase_offsets(members)
        grouped: dict[str, dict[int, dict[int, float]]] = {}
        for row in members:
            x = offsets[row["phase_index"]] + row["episode"]
            grouped.setdefault(row["label"], {}).setdefault(row["run"], {})[x] = float(row[metric])
        length = max(max(values) for runs in grouped.values() for values in runs.values()) + 1
        for label, runs in sorted(grouped.items()):
            table = np.full((len(runs), length), np.nan)
            for i, values in enumerate(runs.values()):
                table[i, list(values)] = list(values.values())
            out.setdefault(panel, {})[label] = table
    return out


def mean_and_se(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over runs (rows) at each episode and its standard error (0 with one run)."""
    counts = np.sum(~np.isnan(table), axis=0)
    mean = np.nanmean(table, axis=0)
    if table.shape[0] < 2:
        return mean, np.zeros(table.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.nanstd(table, axis=0, ddof=1) / np.sqrt(counts)
    return mean, np.nan_to_num(se)


def curves(rows: list[dict[str, Any]], metric: str) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray, int]]]:
    """Per panel (task, and condition) and agent label: mean and standard error over runs at
    each episode (phases in order, episodes counted on from one phase to the next) and the
    number of runs."""
    return {
        task: {label: (*mean_and_se(table), table.shape[0]) for label, table in agents.items()}
        for task, agents in run_tables(rows, metric).items()
    }


def phase_trailing_mean(values: np.ndarray, window: int, starts: Sequence[int] = (0,)) -> np.ndarray:
    """`trailing_mean` that starts again at each phase (`starts`: where each phase begins), so
    no phase's episodes are averaged into the next one's.

    Examples
    --------
    >>> import numpy as np
    >>> from graphtasks.experiments.figures import phase_trailing_mean
    >>> phase_trailing_mean(np.array([0.0, 0.0, 1.0, 1.0]), 2, starts=[0, 2]).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    if window <= 1:
        return np.asarray(values, dtype=float)
    values = np.asarray(values, dtype=float)
    bounds = sorted({0, *(s for s in starts if 0 < s < len(values))}) + [len(values)]
    return np.concatenate([trailing_mean(values[a:b], window) for a, b in zip(bounds, bounds[1:])])


def smoothed_curve(table: np.ndarray, smooth: int, starts: Sequence[int] = (0,)) -> tuple[np.ndarray, np.ndarray, int]:
    """Each run's trailing mean over `smooth` episodes, restarted at each phase (`starts`),
    then the mean over runs and the standard error across runs of those smoothed curves (not
    the average of per-episode errors, which counts each run's episode-to-episode noise again
    and is several times too wide)."""
    runs = np.array([phase_trailing_mean(row, smooth, starts) for row in table]) if smooth > 1 else table
    mean, se = mean_and_se(runs)
    return mean, se, table.shape[0]


COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")  # Okabe-Ito
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "//", "..", "xx", "\\\\", "--", "oo", "++")


def line_style(i: int, n_points: int, n_lines: int) -> dict[str, Any]:
    """Colour, dash pattern and marker of the i-th line: every pair of the first eight lines
    differs in colour and marker, and neighbours in dash pattern; about ten markers per line,
    staggered so lines on top of each other still show each one's markers."""
    every = max(1, n_points // 10)
    return {
        "color": COLOURS[i % len(COLOURS)],
        "linestyle": LINE_STYLES[i % len(LINE_STYLES)],
        "marker": MARKERS[i % len(MARKERS)],
        "markersize": 4.5,
        "markevery": (min(max(n_points - 1, 0), (i * every) // max(1, n_lines)), every),
    }


def coinciding(curves_by_label: dict[str, np.ndarray], tolerance: float = 0.005) -> list[list[str]]:
    """Groups of labels whose curves lie on top of each other: no point further apart than
    `tolerance` of the panel's range (so one would hide the other)."""
    present = [c[~np.isnan(c)] for c in curves_by_label.values()]
    values = np.concatenate(present) if present else np.zeros(1)
    span = float(np.ptp(values)) if values.size else 0.0
    limit = tolerance * (span or 1.0)
    groups: list[list[str]] = []
    for label, curve in curves_by_label.items():
        for group in groups:
            first = curves_by_label[group[0]]
            if first.shape == curve.shape and np.nanmax(np.abs(first - curve), initial=0.0) <= limit:
                group.append(label)
                break
        else:
            groups.append([label])
    return [g for g in groups if len(g) > 1]


def _legend_title(spread: str, smooth: int = 1) -> str:
    what = (f"mean over runs of each run's mean of its last {smooth} episodes (restarted at each phase)"
            if smooth > 1 else "mean over runs")
    return f"{what}, {spread}: one standard error across runs"


def _legend_below(ax: Any, columns: int, offset: float, spread: str, smooth: int = 1,
                  handles: tuple[list[Any], list[str]] | None = None) -> None:
    """The agents' legend under the axes, saying what the lines (bars) and their spread are."""
    legend = ax.legend(
        *(handles or ax.get_legend_handles_labels()),
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, offset),
        ncol=columns,
        frameon=False,
        title=_legend_title(spread, smooth),
        title_fontsize=8,
    )
    legend.set_gid("legend")


def wrapped(text: str, width_inches: float, fontsize: float) -> str:
    """`text` broken into lines that fit `width_inches` at `fontsize` (each of its own lines
    wrapped on its own), so a long title or note is never cut at the figure's edges."""
    import textwrap

    characters = max(20, int(width_inches * 72 / (0.6 * fontsize)))
    return "\n".join(textwrap.fill(line, characters, break_on_hyphens=False) for line in text.split("\n"))


def panel_grid(plt: Any, panels: int, columns: int | None, width: float, height: float) -> tuple[Any, list[Any]]:
    """A figure of `panels` axes in a grid `columns` wide (default: up to three), laid out by
    matplotlib's constrained layout (titles, tick labels and the legend below are kept inside
    the figure); no empty axes."""
    if columns is not None and columns < 1:
        raise ValueError(f"columns: expected a positive number of panels side by side, got {columns}")
    wide = min(panels, columns or MOST_COLUMNS)
    high = -(-panels // wide)
    fig, axes = plt.subplots(high, wide, figsize=(width * wide, height * high + 0.9), squeeze=False,
                             layout="constrained")
    flat = list(axes.ravel())
    for ax in flat[panels:]:
        fig.delaxes(ax)
    return fig, flat[:panels]


def _runs_label(agent: str, counts: list[int]) -> str:
    """An agent's legend entry: its label and its runs (a range where panels differ)."""
    low, high = min(counts), max(counts)
    return f"{agent} (n={low})" if low == high else f"{agent} (n={low}-{high} per panel)"


def _figure_legend(fig: Any, handles: list[Any], labels: list[str], title: str, width_inches: float) -> None:
    """One legend for every panel, under them (constrained layout keeps it in the figure)."""
    fits = max(1, min(4, int(width_inches / 1.9)))  # entries side by side in the figure's width
    columns = -(-len(labels) // -(-len(labels) // fits))  # rows as full as each other: 3 + 2, not 4 + 1
    legend = fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncol=columns, frameon=False,
                        title=wrapped(title, width_inches, 8), title_fontsize=8)
    legend.set_gid("legend")


def learning_curves_figure(
    rows: list[dict[str, Any]], metric: str = "return", smooth: int = 1, title: str = "",
    columns: int | None = None,
) -> Any:
    """The figure `plot_learning_curves` saves (a matplotlib Figure, for checks and notebooks).

    Parameters
    ----------
    rows : list of dict
        Episode records (`recorded_episodes`): task, condition, label, run, phase_index, phase,
        episode, metric.
    metric : str
        'return' or 'length'.
    smooth : int
        Each run is smoothed by its trailing mean over this many episodes, restarted at each
        phase, before averaging; the band is the standard error across runs of the smoothed
        curves.
    title : str
        Above the panels.
    columns : int, optional
        Panels side by side before the grid wraps (default: up to three).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per task (and condition), titled with it: a line per agent (gid
        'curve:LABEL'; colour, dash and marker differ, and an agent has the same ones in every
        panel), its band ('band:LABEL'), dashed lines where phases begin ('phase-boundary:NAME')
        with the phase names above, a note naming agents whose curves coincide, and one legend
        under the panels.

    Examples
    --------
    >>> from graphtasks.experiments.figures import learning_curves_figure
    >>> rows = [{"task": "t", "label": a, "run": r, "phase_index": 0, "phase": "learn", "episode": e,
    ...          "return": float(e)} for a in ("q", "sr") for r in (0, 1) for e in range(5)]
    >>> figure = learning_curves_figure(rows)
    >>> [t.get_text() for t in figure.axes[0].texts if t.get_gid() == "coincide-note"]
    ['q and sr coincide: their lines lie on top of each other']
    """
    plt = require_matplotlib()
    from matplotlib.ticker import MaxNLocator

    tables = run_tables(rows, metric)
    if not tables:
        raise ValueError("no episodes to draw")
    by_panel = split_rows(rows)
    agents = sorted({label for panel in tables.values() for label in panel})
    fig, axes = panel_grid(plt, len(tables), columns, 5.4, 3.9)
    handles: dict[str, Any] = {}
    runs_of: dict[str, list[int]] = {}
    for ax, (panel, members) in zip(axes, tables.items()):
        offsets = phase_offsets(by_panel[panel])
        names = {row["phase_index"]: row["phase"] for row in by_panel[panel]}
        means: dict[str, np.ndarray] = {}
        for label, table in members.items():
            i = agents.index(label)
            m, s, runs = smoothed_curve(table, smooth, list(offsets.values()))
            x = np.arange(1, len(m) + 1)
            style = line_style(i, len(m), len(agents))
            (line,) = ax.plot(x, m, label=label, linewidth=1.4, **style)
            line.set_gid(f"curve:{label}")
            band = ax.fill_between(x, m - s, m + s, color=style["color"], alpha=0.15, linewidth=0)
            band.set_gid(f"band:{label}")
            means[label] = m
            handles.setdefault(label, line)
            runs_of.setdefault(label, []).append(runs)
        together = coinciding(means)
        if together:
            note = "; ".join(" and ".join(g) + " coincide: their lines lie on top of each other" for g in together)
            ax.text(0.01, 0.02, note, transform=ax.transAxes, fontsize=8, style="italic", color="0.25",
                    gid="coincide-note", wrap=True)
        for index, start in offsets.items():
            if index:
                ax.axvline(start + 0.5, color="0.4", linestyle="--", linewidth=0.9,
                           gid=f"phase-boundary:{names[index]}")
            ax.annotate(
                names[index],
                (start + 1, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, 2),
                va="bottom",
                textcoords="offset points",
                fontsize=8,
                color="0.3",
                gid=f"phase-name:{names[index]}",
            )
        ax.set_xlim(0.5, max(len(m) for m in means.values()) + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # episodes are whole
        ax.set_xlabel("episode")
        ax.set_ylabel(METRICS[metric] + (f", mean of last {smooth}" if smooth > 1 else ""))
        ax.set_title(wrapped(panel, 5.0, 10), fontsize=10, pad=16)
        ax.grid(alpha=0.25)
    width = fig.get_size_inches()[0]
    _figure_legend(fig, [handles[a] for a in agents], [_runs_label(a, runs_of[a]) for a in agents],
                   _legend_title("band", smooth), width)
    if title:
        fig.suptitle(wrapped(title, fig.get_size_inches()[0], 11), fontsize=11)
    return fig


def plot_learning_curves(
    rows: list[dict[str, Any]], path: str | BinaryIO, metric: str = "return", smooth: int = 1, title: str = "",
    columns: int | None = None,
) -> None:
    """One panel per task (and condition): each agent's mean over runs per episode, a band of
    one standard error across runs (of the smoothed runs when `smooth` > 1, smoothing
    restarted at each phase), dashed lines where a phase begins (its name above); see
    `learning_curves_figure`."""
    plt = require_matplotlib()
    fig = learning_curves_figure(rows, metric, smooth, title, columns)
    fig.savefig(path, dpi=120)
    plt.close(fig)


STAY_ORDER = ("rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare")


def mean_and_error(values: dict[tuple[str, str], list[float]]) -> dict[tuple[str, str], tuple[float, float, int]]:
    """Mean, standard error and count of each group's per-run values."""
    out = {}
    for key, members in values.items():
        a = np.asarray(members, dtype=float)
        se = float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else 0.0
        out[key] = (float(a.mean()), se, len(a))
    return out


def bars_figure(
    table: dict[tuple[str, str], tuple[float, float, int]],
    ylabel: str | Mapping[str, str],
    title: str = "",
    group_order: tuple[str, ...] = (),
    ylim: tuple[float, float] | None = None,
    reference: float | Mapping[str, float] | None = None,
    reference_label: str = "chance",
) -> Any:
    """The figure `plot_bars` saves: one group per x category, one bar per agent (colour and,
    with three or more agents, hatching differ), each the mean over runs with one standard
    error; a bar of height 0 shows as a line at 0 with a '0' above it.

    Parameters
    ----------
    table : dict
        (agent, group) -> (mean, standard error, runs), as `mean_and_error` gives it.
    ylabel : str or mapping
        The y axis's label; a mapping group -> label draws one panel per group, each on its own
        scale (for measures in different units).
    title : str
        Above the bars.
    group_order : tuple of str
        These groups first, in this order; the others after them, sorted.
    ylim : (float, float), optional
        The y axis's range.
    reference : float or mapping, optional
        A dotted line across the panel at this value (e.g. chance), or per group a dashed mark
        across the group's bars (e.g. a theorem's optimum); named in the legend.
    reference_label : str
        What the reference is, in the legend ('chance (0.5)').

    Returns
    -------
    matplotlib.figure.Figure
        The bars (gid 'bar:AGENT'), their zero labels (gid 'zero-label'), the reference (gid
        'reference') and the legend.

    Examples
    --------
    >>> from graphtasks.experiments.figures import bars_figure
    >>> figure = bars_figure({("q", "a"): (0.0, 0.0, 3), ("q", "b"): (0.5, 0.1, 3)}, "P(stay)", reference=0.5)
    >>> [t.get_text() for t in figure.axes[0].texts]
    ['0']
    >>> [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    ['q (n=3)', 'chance (0.5)']
    """
    plt = require_matplotlib()

    agents = sorted({a for a, _ in table})
    groups = [g for g in group_order if any(k[1] == g for k in table)] + sorted(
        {g for _, g in table} - set(group_order)
    )
    split = isinstance(ylabel, Mapping)
    panels = [[g] for g in groups] if split else [groups]
    width = 0.8 / len(agents)
    per_group = 1.3 * max(1, len(agents) / 2)
    width_inches = max(6.4, (len(groups) * max(per_group, 2.6) + 0.8 * len(groups)) if split
                       else 1.3 * len(groups) * max(1, len(agents) / 2))
    fig, axes = plt.subplots(1, len(panels), figsize=(width_inches, 4.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        _bars_on(ax, table, agents, panel, width)
        if isinstance(reference, Mapping):
            marks = [(j, float(reference[g])) for j, g in enumerate(panel) if g in reference]
            if marks:
                at = np.array([j for j, _ in marks], dtype=float)
                ax.hlines([v for _, v in marks], at - 0.44, at + 0.44, colors="0.1", linestyles="--", linewidth=1.8,
                          label=reference_label, gid="reference", zorder=3)
        elif reference is not None:
            ax.axhline(reference, color="0.4", linestyle=":", linewidth=1, label=f"{reference_label} ({reference:g})",
                       gid="reference")
        ax.axhline(0.0, color="0.2", linewidth=0.8)
        ax.set_xticks(np.arange(len(panel)), [g.replace("_", "\n") for g in panel])
        ax.set_xlim(-0.5, len(panel) - 0.5)
        ax.set_ylabel(ylabel[panel[0]] if isinstance(ylabel, Mapping) else ylabel)
        if ylim:  # a little room below 0, so a zero bar's line is not hidden by the axis
            ax.set_ylim(ylim[0] - 0.02 * (ylim[1] - ylim[0]) if ylim[0] == 0 else ylim[0], ylim[1])
        ax.grid(axis="y", alpha=0.25)
    found: dict[str, Any] = {}
    for ax in axes[0]:  # every panel has the agents' bars; a per-group reference may be in some only
        for handle, label in zip(*ax.get_legend_handles_labels()):
            found.setdefault(label, handle)
    handles, labels = list(found.values()), list(found)
    order = sorted(range(len(labels)), key=lambda k: labels[k] not in _agent_labels(table, agents))  # agents first
    entries = ([handles[k] for k in order], [labels[k] for k in order])
    fits = max(1, min(4, int(width_inches / 1.9)))  # legend entries side by side in the figure's width
    columns = -(-len(labels) // -(-len(labels) // fits))  # rows as full as each other: 3 + 2, not 4 + 1
    if split:
        legend = fig.legend(*entries, fontsize=8, loc="lower center", ncol=columns, frameon=False,
                            title=_legend_title("bars"), title_fontsize=8)
        legend.set_gid("legend")
        if title:
            fig.suptitle(title, fontsize=10)
        fig.tight_layout(rect=(0, 0.06 + 0.045 * -(-len(labels) // columns), 1, 1))
    else:
        _legend_below(axes[0][0], columns, -0.14, "bars", handles=entries)
        if title:
            axes[0][0].set_title(title, fontsize=10)
        fig.tight_layout()
    return fig


def _agent_labels(table: dict[tuple[str, str], tuple[float, float, int]], agents: list[str]) -> set[str]:
    return {f"{agent} (n={max(n for (a, _), (_, _, n) in table.items() if a == agent)})" for agent in agents}


def _bars_on(ax: Any, table: dict[tuple[str, str], tuple[float, float, int]], agents: list[str], groups: list[str],
             width: float, colours: list[int] | None = None, hatched: bool | None = None) -> list[Any]:
    """One bar per agent in each group, with its error bar; a zero bar labelled '0'. The
    agents' colours (and hatching) are the `colours`-th of the palette (default: in order), so
    an agent keeps its colour in panels where others are missing. The bar containers."""
    import matplotlib.colors as mcolors

    out = []
    for i, agent in enumerate(agents):
        k = colours[i] if colours is not None else i
        x = np.arange(len(groups)) + (i - (len(agents) - 1) / 2) * width
        means = [table.get((agent, g), (np.nan, 0.0, 0))[0] for g in groups]
        errors = [table.get((agent, g), (np.nan, 0.0, 0))[1] for g in groups]
        runs = max(n for (a, _), (_, _, n) in table.items() if a == agent)
        colour = COLOURS[k % len(COLOURS)]
        edge = tuple(0.55 * c for c in mcolors.to_rgb(colour))  # darker: the hatching and a zero bar's line show
        hatch = (len(agents) > 2) if hatched is None else hatched
        bars = ax.bar(x, means, width * 0.92, yerr=errors, capsize=3, label=f"{agent} (n={runs})", color=colour,
                      edgecolor=edge, linewidth=1.5, hatch=HATCHES[k % len(HATCHES)] if hatch else None,
                      alpha=0.9)
        for patch in bars.patches:
            patch.set_gid(f"bar:{agent}")
        for xi, mean in zip(x, means):
            if np.isfinite(mean) and abs(mean) < 1e-12:  # the edge draws it as a line; say it is 0
                ax.annotate("0", (xi, 0.0), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                            fontsize=8, color=colour, gid="zero-label")
        out.append(bars)
    return out


def plot_bars(
    table: dict[tuple[str, str], tuple[float, float, int]],
    path: str | BinaryIO,
    ylabel: str | Mapping[str, str],
    title: str = "",
    group_order: tuple[str, ...] = (),
    ylim: tuple[float, float] | None = None,
    reference: float | Mapping[str, float] | None = None,
    reference_label: str = "chance",
) -> None:
    """Grouped bars: one group per x category (a stay condition, a revaluation condition), one
    bar per agent, each the mean over runs with one standard error; `reference` draws a line
    (see `bars_figure`)."""
    plt = require_matplotlib()
    fig = bars_figure(table, ylabel, title, group_order, ylim, reference, reference_label)
    fig.savefig(path, dpi=120)
    plt.close(fig)


PanelTable = dict[tuple[str, str, str], list[float]]  # (panel, agent, group) -> each run's value


def panel_bars_figure(
    values: PanelTable,
    ylabel: str,
    title: str = "",
    group_order: tuple[str, ...] = (),
    ylim: tuple[float, float] | None = None,
    reference: float | Mapping[str, float] | None = None,
    reference_label: str = "chance",
    columns: int | None = None,
) -> Any:
    """Grouped bars in one panel per task (and condition): in each panel one group per x
    category, one bar per agent, the mean over its runs with one standard error.

    Parameters
    ----------
    values : dict
        (panel, agent, group) -> each run's value.
    ylabel : str
        The y axis's label.
    title : str
        Above the panels.
    group_order : tuple of str
        These groups first, in this order; the others after them, sorted.
    ylim : (float, float), optional
        The y axis's range.
    reference : float or mapping, optional
        A dotted line across every panel at this value (e.g. chance), or one per panel
        (panel -> value); named in the legend.
    reference_label : str
        What the reference is, in the legend ('chance (0.5)').
    columns : int, optional
        Panels side by side before the grid wraps (default: up to three).

    Returns
    -------
    matplotlib.figure.Figure
        A panel per panel name, titled with it; bars (gid 'bar:AGENT', an agent in the same
        colour in every panel), zero labels ('zero-label'), the reference ('reference') and
        one legend under the panels.

    Examples
    --------
    >>> from graphtasks.experiments.figures import panel_bars_figure
    >>> figure = panel_bars_figure({("t, a", "q", "x"): [1.0, 0.0], ("t, b", "q", "x"): [0.0, 0.0]}, "P")
    >>> [ax.get_title() for ax in figure.axes]
    ['t, a', 't, b']
    >>> [[float(p.get_height()) for p in ax.patches] for ax in figure.axes]
    [[0.5], [0.0]]
    """
    plt = require_matplotlib()
    if not values:
        raise ValueError("no values to draw")
    panels = list(dict.fromkeys(panel for panel, _, _ in values))
    agents = sorted({agent for _, agent, _ in values})
    tables = {panel: mean_and_error({(a, g): v for (p, a, g), v in values.items() if p == panel})
              for panel in panels}
    groups = {panel: [g for g in group_order if any(k[1] == g for k in table)]
              + sorted({g for _, g in table} - set(group_order)) for panel, table in tables.items()}
    most_groups = max(len(g) for g in groups.values())
    width = max(3.6, 0.8 + most_groups * max(1.0, 0.38 * len(agents)))
    fig, axes = panel_grid(plt, len(panels), columns, width, 3.9)
    runs_of: dict[str, list[int]] = {}
    handles: dict[str, Any] = {}
    for ax, panel in zip(axes, panels):
        table = tables[panel]
        present = [a for a in agents if any(k[0] == a for k in table)]
        for agent in present:
            runs_of.setdefault(agent, []).append(max(n for (a, _), (_, _, n) in table.items() if a == agent))
        bars = _bars_on(ax, table, present, groups[panel], 0.8 / len(agents), [agents.index(a) for a in present],
                        hatched=len(agents) > 2)
        for agent, container in zip(present, bars):
            handles.setdefault(agent, container)
        level = reference.get(panel) if isinstance(reference, Mapping) else reference
        if level is not None:
            line = ax.axhline(level, color="0.4", linestyle=":", linewidth=1, gid="reference",
                              label=f"{reference_label} ({level:g})")
            handles.setdefault(f"{reference_label} ({level:g})", line)
        ax.axhline(0.0, color="0.2", linewidth=0.8)
        ax.set_xticks(np.arange(len(groups[panel])), [g.replace("_", "\n") for g in groups[panel]])
        ax.set_xlim(-0.5, len(groups[panel]) - 0.5)
        ax.set_ylabel(ylabel)
        if ylim:  # a little room below 0, so a zero bar's line is not hidden by the axis
            ax.set_ylim(ylim[0] - 0.02 * (ylim[1] - ylim[0]) if ylim[0] == 0 else ylim[0], ylim[1])
        ax.set_title(wrapped(panel, width - 0.4, 10), fontsize=10)
        ax.grid(axis="y", alpha=0.25)
    labels = [_runs_label(a, runs_of[a]) for a in agents] + [k for k in handles if k not in agents]
    entries = [handles[a] for a in agents] + [h for k, h in handles.items() if k not in agents]
    _figure_legend(fig, entries, labels, _legend_title("bars"), fig.get_size_inches()[0])
    if title:
        fig.suptitle(wrapped(title, fig.get_size_inches()[0], 11), fontsize=11)
    return fig


def plot_panel_bars(values: PanelTable, path: str | BinaryIO, ylabel: str, title: str = "",
                    group_order: tuple[str, ...] = (), ylim: tuple[float, float] | None = None,
                    reference: float | Mapping[str, float] | None = None, columns: int | None = None) -> None:
    """Save `panel_bars_figure` to `path` (PNG)."""
    plt = require_matplotlib()
    fig = panel_bars_figure(values, ylabel, title, group_order, ylim, reference, columns=columns)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """' (did you mean 'x'?)' for the nearest of `choices`, or '' when none is near."""
    near = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def experiment_runs(store: Any, name: str) -> dict[int, tuple[str, str, str]]:
    """Each recorded run's task, agent label and condition ('' without conditions), by run index."""
    from .ids import experiment_uid

    rows = store.cypher("MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.task, r.label, r.condition "
                        "ORDER BY r.index", {"uid": experiment_uid(name)}).rows
    return {int(run): (str(task), str(label), condition or "") for run, task, label, condition in rows}


def experiment_phases(store: Any, name: str) -> dict[tuple[str, int], tuple[str, bool]]:
    """Each recorded phase's name and whether it learns, by (condition or '', index)."""
    from .ids import experiment_uid

    rows = store.cypher("MATCH (p:Phase) WHERE p.owner = $uid RETURN p.condition, p.index, p.name, p.learn",
                        {"uid": experiment_uid(name)}).rows
    return {(condition or "", int(index)): (str(phase), learn is not False) for condition, index, phase, learn in rows}


def require_selection(name: str, known_tasks: Sequence[str], known_conditions: Sequence[str],
                      tasks: Sequence[str] = (), conditions: Sequence[str] = ()) -> None:
    """ValueError naming a task or condition the experiment does not have (and the nearest one)."""
    for task in tasks:
        if task not in known_tasks:
            raise ValueError(f"experiment {name!r} has no task {task!r}{did_you_mean(task, known_tasks)}; "
                             f"its tasks: {', '.join(known_tasks) or 'none recorded'}")
    for condition in conditions:
        if not known_conditions:
            raise ValueError(f"experiment {name!r} has no conditions: condition {condition!r} selects nothing")
        if condition not in known_conditions:
            raise ValueError(f"experiment {name!r} has no condition {condition!r}"
                             f"{did_you_mean(condition, known_conditions)}; "
                             f"its conditions: {', '.join(known_conditions)}")


def selected_runs(runs: Mapping[int, tuple[str, str, str]], name: str, tasks: Sequence[str] = (),
                  conditions: Sequence[str] = ()) -> set[int]:
    """The runs on the named tasks in the named conditions (all of them where none are named)."""
    require_selection(name, list(dict.fromkeys(t for t, _, _ in runs.values())),
                      list(dict.fromkeys(c for _, _, c in runs.values() if c)), tasks, conditions)
    return {run for run, (task, _, condition) in runs.items()
            if (not tasks or task in tasks) and (not conditions or condition in conditions)}


def select_rows(rows: list[dict[str, Any]], name: str, tasks: Sequence[str] = (),
                conditions: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The episode rows of the named tasks and conditions (all where none are named)."""
    require_selection(name, list(dict.fromkeys(r["task"] for r in rows)),
                      list(dict.fromkeys(r["condition"] for r in rows if r.get("condition"))), tasks, conditions)
    return [r for r in rows
            if (not tasks or r["task"] in tasks) and (not conditions or r.get("condition") in conditions)]


def task_versions(store: Any, name: str) -> dict[str, set[str]]:
    """The task versions each of the experiment's tasks ran (a phase's changes make versions)."""
    from .records import run_task_versions

    runs = experiment_runs(store, name)
    out: dict[str, set[str]] = {}
    for run, version in run_task_versions(store, name):
        if run in runs:
            out.setdefault(str(runs[run][0]), set()).add(str(version))
    return out


def stay_tasks(store: Any, name: str) -> dict[str, bool]:
    """Whether each of the experiment's tasks has the two-step structure that stay
    probabilities need: in every version it ran, a first choice leads on by chance (common or
    rare transitions)."""
    from gym_bridge.runner import first_transitions

    return {
        task: all(version in store and any(0.0 < p < 1.0 for p in first_transitions(store.get(version)).values())
                  for version in versions)
        for task, versions in task_versions(store, name).items()
    }


def first_actions(store: Any, name: str) -> dict[str, set[int]]:
    """The actions each task offers at its start state (in any version it ran)."""
    from gym_bridge.runner import first_transitions

    return {task: {action for version in versions if version in store
                   for action, _ in first_transitions(store.get(version))}
            for task, versions in task_versions(store, name).items()}


NO_STAY = "its first choices do not lead on by chance (no common and rare transitions): no stay probabilities"


def stay_by_panel(store: Any, name: str, tasks: Sequence[str] = (), conditions: Sequence[str] = (),
                  notes: list[str] | None = None) -> PanelTable:
    """Each run's stay probability by panel (task, and condition), agent and what happened on
    the trial before, on the two-step-like tasks only.

    Parameters
    ----------
    store : GraphStore
        The store of the records.
    name : str
        The experiment.
    tasks, conditions : sequence of str
        Only these (default: all); a named task without the two-step structure is refused.
    notes : list of str, optional
        Gets a line naming the tasks left out (no two-step structure).

    Returns
    -------
    dict
        (panel, agent, after) -> the stay probability of each run.
    """
    from .records import stay_rows

    runs = experiment_runs(store, name)
    chosen = selected_runs(runs, name, tasks, conditions)
    structured = stay_tasks(store, name)
    for task in tasks:
        if not structured.get(task):
            raise ValueError(f"task {task!r} of experiment {name!r}: {NO_STAY}")
    left_out = sorted({runs[r][0] for r in chosen if not structured.get(runs[r][0])})
    if left_out and notes is not None:
        notes.append(f"not drawn: {', '.join(left_out)} (no two-step structure)")
    out: PanelTable = {}
    for label, run, after, stay in stay_rows(store, name):
        if run in chosen and structured.get(runs[run][0]):
            task, _, condition = runs[run]
            out.setdefault((panel_of(task, condition), str(label), str(after)), []).append(float(stay))
    return out


def revaluation_by_panel(store: Any, name: str, tasks: Sequence[str] = (), conditions: Sequence[str] = ()
                         ) -> PanelTable:
    """Each run's revaluation score (how far its preference moved from the first probed phase
    to the last) by task, agent and condition."""
    from .ids import experiment_uid

    chosen = selected_runs(experiment_runs(store, name), name, tasks, conditions)
    rows = store.cypher(
        "MATCH (r:Run)-[:HAS_PROBE]->(p:Probe) WHERE r.owner = $uid "
        "RETURN r.index, r.task, r.label, r.condition, p.phase_index, p.preference ORDER BY r.index, p.phase_index",
        {"uid": experiment_uid(name)},
    ).rows
    runs: dict[int, tuple[str, str, str, list[float]]] = {}
    for run, task, label, condition, _, preference in rows:
        if run in chosen:
            runs.setdefault(run, (str(task), str(label), condition or "", []))[3].append(float(preference))
    out: PanelTable = {}
    for task, label, condition, preferences in runs.values():
        if len(preferences) > 1:
            out.setdefault((task, label, condition), []).append(abs(preferences[-1] - preferences[0]))
    return out


def choices_in_test_phases(store: Any, name: str, tasks: Sequence[str] = (), conditions: Sequence[str] = ()
                           ) -> PanelTable:
    """Each run's first choices in the phases that do not learn (test phases): the fraction
    of episodes whose first action was each action, by panel (task, and condition), agent and
    'phase: action k' (every action the task offers at its start state, and any other taken
    first).

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.experiments.figures import choices_in_test_phases
    >>> with open_store(":memory:") as store:
    ...     choices_in_test_phases(store, "nothing recorded")
    {}
    """
    runs = experiment_runs(store, name)
    chosen = selected_runs(runs, name, tasks, conditions)
    phases = {key: phase for key, (phase, learn) in experiment_phases(store, name).items() if not learn}
    if not phases or not chosen:
        return {}
    from .records import step_rows

    indices = {index for _, index in phases}
    trials = [(r["run"], r["phase_index"], r["action"]) for r in step_rows(store, name, (0,))
              if r["phase_index"] in indices]
    chosen_actions: dict[tuple[int, int], list[int]] = {}
    for run, phase, action in trials:
        if run in chosen and (runs[run][2], phase) in phases:
            chosen_actions.setdefault((run, phase), []).append(int(action))
    actions = first_actions(store, name)  # every action of the task, in every panel of it, taken or not
    for (run, _), taken in chosen_actions.items():
        actions.setdefault(runs[run][0], set()).update(taken)
    out: PanelTable = {}
    for (run, phase), taken in sorted(chosen_actions.items()):
        task, label, condition = runs[run]
        panel = panel_of(task, condition)
        for action in sorted(actions[task]):
            key = (panel, label, f"{phases[condition, phase]}: action {action}")
            out.setdefault(key, []).append(taken.count(action) / len(taken))
    return out


def returns_in_test_phases(store: Any, name: str, tasks: Sequence[str] = (), conditions: Sequence[str] = ()
                           ) -> PanelTable:
    """Each run's mean return per episode in each test phase (learn = false), by panel (task,
    and condition), agent and phase."""
    from .records import recorded_episodes

    rows = select_rows(recorded_episodes(store, name), name, tasks, conditions)
    tests = {key for key, (_, learn) in experiment_phases(store, name).items() if not learn}
    per_run: dict[tuple[str, str, str, int], list[float]] = {}
    for row in rows:
        if (row["condition"] or "", row["phase_index"]) in tests:
            key = (panel_of(row["task"], row["condition"]), row["label"], row["phase"], row["run"])
            per_run.setdefault(key, []).append(float(row["return"]))
    out: PanelTable = {}
    for (panel, label, phase, _), returns in per_run.items():
        out.setdefault((panel, label, phase), []).append(float(np.mean(returns)))
    return out


KINDS = ("auto", "curves", "stay", "revaluation", "choices", "test")


def plot_experiment(
    store: Any, name: str, path: str | BinaryIO, kind: str = "auto", metric: str = "return", smooth: int = 1,
    tasks: Sequence[str] = (), conditions: Sequence[str] = (), columns: int | None = None,
    notes: list[str] | None = None,
) -> str:
    """Draw a recorded experiment's figure, one panel per task (and condition).

    Parameters
    ----------
    store : GraphStore
        The store of the records.
    name : str
        The experiment.
    path : str or file
        Where the PNG goes.
    kind : str
        'curves': learning curves (smoothing restarts at each phase); 'stay': stay
        probabilities on the two-step-like tasks (others are left out and named in the title
        and `notes`; a named one is refused); 'revaluation': the revaluation score per
        condition (probed phases); 'choices': the first choices in test phases (learn =
        false); 'test': each run's mean return in test phases; 'auto': revaluation bars for
        probed phases, stay bars when every task drawn is two-step-like, else curves.
    metric : str
        Of the curves: 'return' or 'length'.
    smooth : int
        Of the curves: each run's trailing mean over this many episodes, restarted at each phase.
    tasks, conditions : sequence of str
        Only these tasks and conditions (default: all); one the experiment does not have is
        refused, with the nearest name.
    columns : int, optional
        Panels side by side before the grid wraps (default: up to three).
    notes : list of str, optional
        Gets a line for anything recorded that the figure leaves out.

    Returns
    -------
    str
        The kind drawn. ValueError (one line) when the records hold nothing of that kind.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.experiments.figures import plot_experiment
    >>> with open_store(":memory:") as store:
    ...     plot_experiment(store, "nothing", "x.png", kind="test")
    Traceback (most recent call last):
    ...
    ValueError: experiment 'nothing' has no recorded episodes in a test phase (a phase with learn = false)
    """
    from .records import recorded_episodes

    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    tasks, conditions = tuple(tasks), tuple(conditions)
    notes = [] if notes is None else notes
    if kind == "choices":
        choices = choices_in_test_phases(store, name, tasks, conditions)
        if not choices:
            raise ValueError(f"experiment {name!r} has no recorded first choices in a test phase (learn = false; "
                             "trials are recorded for trial tasks, or with record = 'steps')")
        actions: dict[str, set[str]] = {}
        for panel, _, group in choices:
            actions.setdefault(panel, set()).add(group.rsplit(": action ", 1)[1])
        plot_panel_bars(choices, path, "P(first choice)", f"{name}: first choices in test phases",
                        ylim=(0.0, 1.05), reference={panel: 1.0 / len(a) for panel, a in actions.items()},
                        columns=columns)
        return "choices"
    if kind == "test":
        returns = returns_in_test_phases(store, name, tasks, conditions)
        if not returns:
            raise ValueError(
                f"experiment {name!r} has no recorded episodes in a test phase (a phase with learn = false)")
        plot_panel_bars(returns, path, "mean return per test episode", f"{name}: returns in test phases",
                        tuple(dict.fromkeys(phase for _, _, phase in returns)), columns=columns)
        return "test"
    if kind in ("auto", "revaluation"):
        scores = revaluation_by_panel(store, name, tasks, conditions)
        if scores:
            plot_panel_bars(scores, path, "revaluation score (change in preference)",
                            f"{name}: revaluation by condition",
                            tuple(dict.fromkeys(condition for _, _, condition in scores)),  # the spec's order
                            (0.0, 1.05), columns=columns)
            return "revaluation"
        if kind == "revaluation":
            raise ValueError(f"experiment {name!r} has no probed phases (a phase's probe = ...)")
    if kind == "stay" or (kind == "auto" and _two_step(store, name, tasks)):
        stay = stay_by_panel(store, name, tasks, conditions, notes)
        if not stay:
            raise ValueError(f"experiment {name!r} has no recorded first-stage trials on a two-step-like task "
                             "to compute stay probabilities")
        plot_panel_bars(stay, path, "P(repeat first choice)",
                        f"{name}: stay probabilities" + "".join(f"\n{note}" for note in notes),
                        STAY_ORDER, (0.0, 1.05), 0.5, columns=columns)
        return "stay"
    rows = select_rows(recorded_episodes(store, name), name, tasks, conditions)
    if not rows:
        raise ValueError(f"experiment {name!r} has no recorded episodes")
    plot_learning_curves(rows, path, metric, smooth, name, columns)
    return "curves"


def _two_step(store: Any, name: str, tasks: Sequence[str] = ()) -> bool:
    """Whether every task drawn (every task the experiment ran, or the named ones) leads its
    first choice on by chance, as the two-step task does (auto then draws stay bars), and
    steps were recorded to look at."""
    from .records import trial_count

    structured = stay_tasks(store, name)
    drawn = [t for t in structured if not tasks or t in tasks]
    return bool(drawn) and all(structured[t] for t in drawn) and trial_count(store, name) > 0
