"""Figures of recorded experiments: learning curves with their spread over seeds, per task;
stay-probability bars (two-step), revaluation-score bars (probed protocols) and test-phase
choice bars, per agent. Each `*_figure` function returns the matplotlib Figure (tests read
back what it plots); each `plot_*` function saves it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, BinaryIO

import numpy as np

METRICS = {"return": "return (total reward)", "length": "episode length (steps)"}


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


def run_tables(rows: list[dict[str, Any]], metric: str) -> dict[str, dict[str, np.ndarray]]:
    """Per task (and condition) and agent label: a (runs, episodes) table of `metric` (phases in
    order, episodes counted on from one phase to the next; NaN where a run has no episode)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    offsets = phase_offsets(rows)
    grouped: dict[tuple[str, str], dict[int, dict[int, float]]] = {}
    for row in rows:
        x = offsets[row["phase_index"]] + row["episode"]
        panel = row["task"] + (f", {row['condition']}" if row.get("condition") else "")
        grouped.setdefault((panel, row["label"]), {}).setdefault(row["run"], {})[x] = float(row[metric])
    for (task, label), runs in sorted(grouped.items()):
        length = max(max(r) for r in runs.values()) + 1
        table = np.full((len(runs), length), np.nan)
        for i, values in enumerate(runs.values()):
            table[i, list(values)] = list(values.values())
        out.setdefault(task, {})[label] = table
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
    """Per task (and condition) and agent label: mean and standard error over runs at each episode (phases in
    order, episodes counted on from one phase to the next) and the number of runs."""
    return {
        task: {label: (*mean_and_se(table), table.shape[0]) for label, table in agents.items()}
        for task, agents in run_tables(rows, metric).items()
    }


def smoothed_curve(table: np.ndarray, smooth: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Each run's trailing mean over `smooth` episodes, then the mean over runs and the standard
    error across runs of those smoothed curves (not the average of per-episode errors, which
    counts each run's episode-to-episode noise again and is several times too wide)."""
    runs = np.array([trailing_mean(row, smooth) for row in table]) if smooth > 1 else table
    mean, se = mean_and_se(runs)
    return mean, se, table.shape[0]


def phase_offsets(rows: list[dict[str, Any]]) -> dict[int, int]:
    """Where each phase starts on the episode axis."""
    lengths: dict[int, int] = {}
    for row in rows:
        lengths[row["phase_index"]] = max(lengths.get(row["phase_index"], 0), row["episode"] + 1)
    offsets, total = {}, 0
    for index in sorted(lengths):
        offsets[index] = total
        total += lengths[index]
    return offsets


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
    what = f"mean over runs of each run's mean of its last {smooth} episodes" if smooth > 1 else "mean over runs"
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


def learning_curves_figure(
    rows: list[dict[str, Any]], metric: str = "return", smooth: int = 1, title: str = ""
) -> Any:
    """The figure `plot_learning_curves` saves (a matplotlib Figure, for checks and notebooks).

    Parameters
    ----------
    rows : list of dict
        Episode records (`recorded_episodes`): task, label, run, phase_index, phase, episode, metric.
    metric : str
        'return' or 'length'.
    smooth : int
        Each run is smoothed by its trailing mean over this many episodes before averaging;
        the band is the standard error across runs of the smoothed curves.
    title : str
        Above the panels.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per task: a line per agent (colour, dash and marker differ), its band,
        dashed lines where phases begin, and a note naming agents whose curves coincide.

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
    tables = run_tables(rows, metric)
    offsets = phase_offsets(rows)
    names = {row["phase_index"]: row["phase"] for row in rows}
    fig, axes = plt.subplots(1, len(tables), figsize=(6.4 * len(tables), 5.0), squeeze=False)
    for ax, (task, agents) in zip(axes[0], tables.items()):
        means: dict[str, np.ndarray] = {}
        for i, (label, table) in enumerate(agents.items()):
            m, s, runs = smoothed_curve(table, smooth)
            x = np.arange(1, len(m) + 1)
            style = line_style(i, len(m), len(agents))
            (line,) = ax.plot(x, m, label=f"{label} (n={runs})", linewidth=1.4, **style)
            line.set_gid(f"curve:{label}")
            band = ax.fill_between(x, m - s, m + s, color=style["color"], alpha=0.15, linewidth=0)
            band.set_gid(f"band:{label}")
            means[label] = m
        together = coinciding(means)
        if together:
            note = "; ".join(" and ".join(g) + " coincide: their lines lie on top of each other" for g in together)
            ax.text(0.01, 0.02, note, transform=ax.transAxes, fontsize=8, style="italic", color="0.25",
                    gid="coincide-note")
        for index, start in offsets.items():
            if index:
                ax.axvline(start + 0.5, color="0.4", linestyle="--", linewidth=0.9)
            ax.annotate(
                names[index],
                (start + 1, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, 2),
                va="bottom",
                textcoords="offset points",
                fontsize=8,
                color="0.3",
            )
        ax.set_xlim(0.5, max(len(m) for m in means.values()) + 0.5)
        ax.set_xlabel("episode")
        ax.set_ylabel(METRICS[metric] + (f", mean of last {smooth}" if smooth > 1 else ""))
        ax.set_title(task, fontsize=10, pad=16)
        ax.grid(alpha=0.25)
        _legend_below(ax, min(3, len(agents)), -0.16, "band", smooth)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_learning_curves(
    rows: list[dict[str, Any]], path: str | BinaryIO, metric: str = "return", smooth: int = 1, title: str = ""
) -> None:
    """One panel per task: each agent's mean over runs per episode, a band of one standard
    error across runs (of the smoothed runs when `smooth` > 1), dashed lines where a phase
    begins (its name above); see `learning_curves_figure`."""
    plt = require_matplotlib()
    fig = learning_curves_figure(rows, metric, smooth, title)
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
             width: float) -> None:
    """One bar per agent in each group, with its error bar; a zero bar labelled '0'."""
    import matplotlib.colors as mcolors

    for i, agent in enumerate(agents):
        x = np.arange(len(groups)) + (i - (len(agents) - 1) / 2) * width
        means = [table.get((agent, g), (np.nan, 0.0, 0))[0] for g in groups]
        errors = [table.get((agent, g), (np.nan, 0.0, 0))[1] for g in groups]
        runs = max(n for (a, _), (_, _, n) in table.items() if a == agent)
        colour = COLOURS[i % len(COLOURS)]
        edge = tuple(0.55 * c for c in mcolors.to_rgb(colour))  # darker: the hatching and a zero bar's line show
        bars = ax.bar(x, means, width * 0.92, yerr=errors, capsize=3, label=f"{agent} (n={runs})", color=colour,
                      edgecolor=edge, linewidth=1.5, hatch=HATCHES[i % len(HATCHES)] if len(agents) > 2 else None,
                      alpha=0.9)
        for patch in bars.patches:
            patch.set_gid(f"bar:{agent}")
        for xi, mean in zip(x, means):
            if np.isfinite(mean) and abs(mean) < 1e-12:  # the edge draws it as a line; say it is 0
                ax.annotate("0", (xi, 0.0), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                            fontsize=8, color=colour, gid="zero-label")


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


def choices_in_test_phases(store: Any, name: str) -> dict[tuple[str, str], list[float]]:
    """Each run's first choices in the phases that do not learn (test phases): the fraction
    of episodes whose first action was each action, by agent and 'phase: action k'."""
    from .records import experiment_uid

    uid = experiment_uid(name)
    phases = {index: phase for index, phase, learn in store.cypher(
        "MATCH (p:Phase) WHERE p.task = $uid RETURN DISTINCT p.index, p.name, p.learn", {"uid": uid}).rows
        if learn is False}
    if not phases:
        return {}
    labels = dict(store.cypher("MATCH (r:Run) WHERE r.task = $uid RETURN r.index, r.label", {"uid": uid}).rows)
    trials = store.cypher(
        "MATCH (t:Trial) WHERE t.experiment = $name AND t.step = 0 AND t.phase_index IN $phases "
        "RETURN t.run, t.phase_index, t.action",
        {"name": name, "phases": sorted(phases)},
    ).rows
    actions = sorted({action for _, _, action in trials})
    chosen: dict[tuple[int, int], list[int]] = {}
    for run, phase, action in trials:
        chosen.setdefault((run, phase), []).append(action)
    out: dict[tuple[str, str], list[float]] = {}
    for (run, phase), taken in sorted(chosen.items()):
        for action in actions:
            key = (labels.get(run, str(run)), f"{phases[phase]}: action {action}")
            out.setdefault(key, []).append(taken.count(action) / len(taken))
    return out


KINDS = ("auto", "curves", "stay", "revaluation", "choices")


def plot_experiment(
    store: Any, name: str, path: str | BinaryIO, kind: str = "auto", metric: str = "return", smooth: int = 1
) -> str:
    """The figure of a recorded experiment; `auto`: revaluation bars where phases were probed,
    stay bars where a two-step task's trials were recorded, else learning curves; `choices`:
    the first choices in test phases (phases with learn = false). Returns the kind drawn;
    ValueError when the records hold nothing of that kind."""
    from .records import recorded_episodes, revaluation_by_run, stay_by_run

    if kind == "choices":
        choices = choices_in_test_phases(store, name)
        if not choices:
            raise ValueError(f"experiment {name!r} has no recorded first choices in a test phase (learn = false; "
                             "trials are recorded for trial tasks, or with record = 'steps')")
        plot_bars(mean_and_error(choices), path, "P(first choice)", f"{name}: choices in test phases",
                  ylim=(0.0, 1.05), reference=1.0 / len({g.rsplit(": action ", 1)[1] for _, g in choices}))
        return "choices"
    if kind in ("auto", "revaluation"):
        scores = revaluation_by_run(store, name)
        if scores:
            plot_bars(
                mean_and_error(scores),
                path,
                "revaluation score (change in preference)",
                f"{name}: revaluation by condition",
                tuple(dict.fromkeys(condition for _, condition in scores)),  # the spec's order
                (0.0, 1.05),
            )
            return "revaluation"
        if kind == "revaluation":
            raise ValueError(f"experiment {name!r} has no probed phases (a phase's probe = ...)")
    if kind in ("auto", "stay"):
        stay = stay_by_run(store, name) if kind == "stay" or _two_step(store, name) else {}
        if stay:
            plot_bars(
                mean_and_error(stay),
                path,
                "P(repeat first choice)",
                f"{name}: stay probabilities",
                STAY_ORDER,
                (0.0, 1.05),
                0.5,
            )
            return "stay"
        if kind == "stay":
            raise ValueError(f"experiment {name!r} has no recorded first-stage trials to compute stay probabilities")
    rows = recorded_episodes(store, name)
    plot_learning_curves(rows, path, metric, smooth, name)
    return "curves"


def _two_step(store: Any, name: str) -> bool:
    """Whether every task version the experiment ran leads its first choice on by chance, as
    the two-step task does (auto then draws stay bars), and steps were recorded to look at."""
    from gym_bridge.runner import first_transitions

    from .records import experiment_uid

    uid = experiment_uid(name)
    versions = [row[0] for row in store.cypher(
        "MATCH (e:Episode) WHERE e.task = $uid RETURN DISTINCT e.task_version", {"uid": uid}
    ).rows]
    trials = store.cypher("MATCH (t:Trial) WHERE t.task = $uid RETURN count(t)", {"uid": uid}).rows[0][0]
    if not versions or not trials:
        return False
    for version in versions:
        if version not in store:
            return False
        if not any(0.0 < p < 1.0 for p in first_transitions(store.get(version)).values()):
            return False
    return True
