"""Figures of recorded experiments: learning curves with their spread over seeds, per task;
stay-probability bars (two-step) and revaluation-score bars (probed protocols), per agent."""

from __future__ import annotations

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
    so the first episodes (where learning shows) are never cut off."""
    if window <= 1:
        return values
    sums = np.cumsum(np.insert(values, 0, 0.0))
    index = np.arange(1, len(values) + 1)
    start = np.maximum(index - window, 0)
    return (sums[index] - sums[start]) / (index - start)


def curves(rows: list[dict[str, Any]], metric: str) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray, int]]]:
    """Per task (and condition) and agent label: mean and standard error over runs at each episode (phases in
    order, episodes counted on from one phase to the next) and the number of runs."""
    out: dict[str, dict[str, tuple[np.ndarray, np.ndarray, int]]] = {}
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
        mean = np.nanmean(table, axis=0)
        se = np.nanstd(table, axis=0, ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else np.zeros(length)
        out.setdefault(task, {})[label] = (mean, se, len(runs))
    return out


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


def _legend_below(ax: Any, columns: int, offset: float, spread: str) -> None:
    """The agents' legend under the axes, saying what the lines (bars) and their spread are."""
    ax.legend(
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, offset),
        ncol=columns,
        frameon=False,
        title=f"mean over runs, {spread}: one standard error",
        title_fontsize=8,
    )


def plot_learning_curves(
    rows: list[dict[str, Any]], path: str | BinaryIO, metric: str = "return", smooth: int = 1, title: str = ""
) -> None:
    """One panel per task: each agent's mean over runs per episode, a band of one standard
    error, dashed lines where a phase begins (its name above)."""
    plt = require_matplotlib()
    data = curves(rows, metric)
    offsets = phase_offsets(rows)
    names = {row["phase_index"]: row["phase"] for row in rows}
    fig, axes = plt.subplots(1, len(data), figsize=(6.4 * len(data), 4.8), squeeze=False)
    for ax, (task, agents) in zip(axes[0], data.items()):
        for label, (mean, se, runs) in agents.items():
            x = np.arange(1, len(mean) + 1)
            m, s = trailing_mean(mean, smooth), trailing_mean(se, smooth)
            (line,) = ax.plot(x, m, label=f"{label} (n={runs})", linewidth=1.4)
            ax.fill_between(x, m - s, m + s, color=line.get_color(), alpha=0.2, linewidth=0)
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
        ax.set_xlabel("episode")
        ax.set_ylabel(METRICS[metric] + (f", mean of last {smooth}" if smooth > 1 else ""))
        ax.set_title(task, fontsize=10, pad=16)
        ax.grid(alpha=0.25)
        _legend_below(ax, min(3, len(agents)), -0.16, "band")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
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


def plot_bars(
    table: dict[tuple[str, str], tuple[float, float, int]],
    path: str | BinaryIO,
    ylabel: str,
    title: str = "",
    group_order: tuple[str, ...] = (),
    ylim: tuple[float, float] | None = None,
    reference: float | None = None,
) -> None:
    """Grouped bars: one group per x category (a stay condition, a revaluation condition), one
    bar per agent, each the mean over runs with one standard error; `reference` draws a line."""
    plt = require_matplotlib()
    agents = sorted({a for a, _ in table})
    groups = [g for g in group_order if any(k[1] == g for k in table)] + sorted(
        {g for _, g in table} - set(group_order)
    )
    width = 0.8 / len(agents)
    width_inches = max(6.4, 1.3 * len(groups) * max(1, len(agents) / 2))
    fig, ax = plt.subplots(figsize=(width_inches, 4.6))
    for i, agent in enumerate(agents):
        x = np.arange(len(groups)) + (i - (len(agents) - 1) / 2) * width
        means = [table.get((agent, g), (np.nan, 0.0, 0))[0] for g in groups]
        errors = [table.get((agent, g), (np.nan, 0.0, 0))[1] for g in groups]
        runs = max(table.get((agent, g), (0, 0, 0))[2] for g in groups)
        ax.bar(x, means, width * 0.92, yerr=errors, capsize=3, label=f"{agent} (n={runs})")
    if reference is not None:
        ax.axhline(reference, color="0.4", linestyle=":", linewidth=1)
    ax.set_xticks(np.arange(len(groups)), [g.replace("_", "\n") for g in groups])
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    ax.grid(axis="y", alpha=0.25)
    _legend_below(ax, max(1, min(4, len(agents), int(width_inches / 2.4))), -0.14, "bars")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


KINDS = ("auto", "curves", "stay", "revaluation")


def plot_experiment(
    store: Any, name: str, path: str | BinaryIO, kind: str = "auto", metric: str = "return", smooth: int = 1
) -> str:
    """The figure of a recorded experiment; `auto`: revaluation bars where phases were probed,
    stay bars where a two-step task's trials were recorded, else learning curves. Returns the
    kind drawn; ValueError when the records hold nothing of that kind."""
    from .records import recorded_episodes, revaluation_by_run, stay_by_run

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
