"""Figures of fits: recovery (true against fitted, the confusion matrix) and the fitted
settings of every participant with their standard errors."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from graphtasks.experiments.figures import require_matplotlib

from .bms import ModelSelection
from .recovery import GroupModelRecovery, GroupRecovery, ModelRecovery, ParameterRecovery


def _finish(fig: Any, path: str, title: str = "", rect: tuple[float, float, float, float] = (0, 0, 1, 1)) -> None:
    """A figure's title (if any), its layout within `rect`, written to `path` and closed."""
    plt = require_matplotlib()
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _true_against_fitted(ax: Any, name: str, truth: list[float], fitted: list[float], every: list[float],
                         colour: str) -> None:
    """One recovery panel: a point per simulated participant, the identity line, the axes
    spanning `every` value (the same for panels to be compared)."""
    low, high = min(every), max(every)
    pad = 0.04 * (high - low)
    ax.plot([low, high], [low, high], color="0.6", linestyle=":", linewidth=1)
    ax.scatter(truth, fitted, s=18, alpha=0.8, color=colour)
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel(f"true {name}")
    ax.set_ylabel(f"fitted {name}")
    ax.grid(alpha=0.25)


def plot_parameter_recovery(result: ParameterRecovery, path: str) -> None:
    """True against fitted value, one panel per setting, with the identity line and r."""
    plt = require_matplotlib()
    names = list(result.truth)
    fig, axes = plt.subplots(1, len(names), figsize=(3.8 * len(names), 3.8))
    for ax, name in zip(np.atleast_1d(axes), names):
        truth, fitted = result.truth[name], result.fitted[name]
        _true_against_fitted(ax, name, truth, fitted, truth + fitted, "tab:blue")
        ax.set_title(f"{name}: r = {result.correlation(name):.2f}", fontsize=10)
    _finish(fig, path, f"Parameter recovery: {result.model} on {result.task_id}, {len(truth)} simulated "
            f"participants, {result.trials} trials each")


def plot_model_recovery(result: ModelRecovery, path: str) -> None:
    """The confusion matrix as shares of each generating model's simulations."""
    plt = require_matplotlib()
    share = result.confusion / np.maximum(result.confusion.sum(axis=1, keepdims=True), 1)
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    image = ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    for i in range(share.shape[0]):
        for j in range(share.shape[1]):
            ax.text(j, i, f"{result.confusion[i, j]}", ha="center", va="center",
                    color="white" if share[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(result.models)), result.models)
    ax.set_yticks(range(len(result.models)), result.models)
    ax.set_xlabel("model with the lowest BIC")
    ax.set_ylabel("model that generated the choices")
    ax.set_title(f"Model recovery on {result.task_id}, {result.trials} trials", fontsize=10)
    fig.colorbar(image, ax=ax, shrink=0.8, label="share of simulations")
    _finish(fig, path)


def plot_fits(
    fits: Sequence[dict[str, Any]], path: str, experiment: str, groups: Sequence[dict[str, Any]] = ()
) -> None:
    """Each model's fitted settings, one panel per (model, method, setting): a point per run with
    its standard error (a cross where it has none: at a bound), coloured by the run's label (its
    agent setting or participant), runs in order along the x axis. For a hierarchical (EM) fit,
    the group's median participant is a dashed line, with the band of its mean's standard error."""
    from scipy.special import expit

    plt = require_matplotlib()
    panels = sorted({(row["model"], row.get("method") or "mle", name) for row in fits for name in row["params"]})
    labels = list(dict.fromkeys(str(row["label"]) for row in fits))
    colours = {label: plt.get_cmap("tab10")(i % 10) for i, label in enumerate(labels)}
    # as many columns as divide the panels (4 panels: 2 x 2), so no row ends in blank space;
    # else 3, and the legend takes the first spare place
    columns = next((c for c in (3, 2, 4) if len(panels) % c == 0), min(3, len(panels)))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows + 0.5), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (model, method, name) in zip(axes.flat, panels):
        for label in labels:
            chosen = [r for r in fits if r["model"] == model and (r.get("method") or "mle") == method
                      and name in r["params"] and str(r["label"]) == label]
            shown = [r for r in chosen if (r.get("stderr") or {}).get(name) is not None]
            bare = [r for r in chosen if (r.get("stderr") or {}).get(name) is None]
            ax.errorbar([r["run"] for r in shown], [r["params"][name] for r in shown],
                        yerr=[r["stderr"][name] for r in shown], fmt="o", markersize=4, capsize=2,
                        color=colours[label], label=label)
            ax.plot([r["run"] for r in bare], [r["params"][name] for r in bare], "x", color=colours[label])
        for group in groups:
            if group["model"] != model or method != group["method"] or name not in group["median"]:
                continue
            low, high = group["bounds"][name]
            mean, se = group["mean"][name], group["mean_stderr"][name]
            edges = [low + (high - low) * float(expit(v)) for v in (mean - se, mean + se)]
            ax.axhline(group["median"][name], color="0.2", linestyle="--", linewidth=1)
            ax.fill_between([min(group["runs"]) - 0.5, max(group["runs"]) + 0.5], *edges, color="0.5", alpha=0.15,
                            linewidth=0)
        ax.set_title(f"{model}{f' ({method.upper()})' if method != 'mle' else ''}: {name}", fontsize=10)
        ax.set_xlabel("run")
        ax.grid(alpha=0.25)
    handles, names = axes.flat[0].get_legend_handles_labels()
    spare = len(panels) < rows * columns
    if spare and len(labels) <= 24:
        axes.flat[len(panels)].legend(handles, names, loc="center", frameon=False, fontsize=8, title="runs of")
    elif len(labels) <= 12:
        fig.legend(handles, names, loc="lower center", ncol=min(len(labels), 6), frameon=False, fontsize=8)
    extra = "; EM, NUTS: dashed, the group median ± 1 s.e. of its mean" if groups else ""
    _finish(fig, path, f"{experiment}: fitted settings per run, ± 1 standard error (x: none, at a bound){extra}",
            rect=(0, 0.06 if len(labels) <= 12 and not spare else 0, 1, 1))


def plot_group_recovery(result: GroupRecovery, path: str) -> None:
    """True against fitted settings of a simulated group, a row per method (each participant
    alone by maximum likelihood; hierarchically by EM; by NUTS when it ran), a column per
    setting, each panel with the identity line, Pearson's r and the mean absolute error; the
    hierarchical rows also mark the group median they found (dashed) and the one simulated
    (dotted). Every panel of a column has the same axes."""
    from .hierarchical import to_natural
    from .models import fit_model

    plt = require_matplotlib()
    names = list(result.truth)
    model = fit_model(result.model)

    def median(mean: dict[str, float]) -> dict[str, float]:
        return dict(zip(model.free, to_natural(model, [mean[n] for n in model.free])))

    medians = {"em": median(result.fitted_mean), **({"nuts": median(result.nuts_mean)} if result.nuts else {})}
    true_median = median(result.true_mean)
    styles = {"mle": ("maximum likelihood", "tab:blue"), "em": ("EM (hierarchical)", "tab:orange"),
              "nuts": ("NUTS (hierarchical)", "tab:green")}
    methods = result.methods
    fig, axes = plt.subplots(len(methods), len(names), figsize=(3.6 * len(names), 3.5 * len(methods)), squeeze=False)
    for row, method in enumerate(methods):
        label, colour = styles[method]
        for ax, name in zip(axes[row], names):
            truth = result.truth[name]
            every = truth + [v for m in methods for v in getattr(result, m)[name]]  # every row on the same axes
            _true_against_fitted(ax, name, truth, getattr(result, method)[name], every, colour)
            if method in medians:
                ax.axhline(medians[method][name], color=colour, linestyle="--", linewidth=1,
                           label="fitted group median")
                ax.axvline(true_median[name], color="0.3", linestyle=":", linewidth=1, label="simulated median")
            ax.set_title(f"{label}: {name}\nr = {result.correlation(method, name):.2f}, "
                         f"MAE = {result.mae(method, name):.3g}", fontsize=9)
    axes[1][0].legend(fontsize=7, loc="upper left", frameon=False)
    _finish(fig, path, f"Group parameter recovery: {result.model} on {result.task_id}, "
            f"{len(result.truth[names[0]])} simulated participants x {result.trials} trials")


def plot_group_model_recovery(result: GroupModelRecovery, path: str) -> None:
    """Two matrices, rows the model that generated the group: the protected exceedance
    probability random-effects BMS gives each candidate (from EM's Laplace evidences), and
    how many participants' highest evidence is each candidate's."""
    plt = require_matplotlib()
    k = len(result.models)
    fig, axes = plt.subplots(1, 2, figsize=(4.2 * 2 + 1.2, 0.9 * k + 2.6))
    share = result.best / np.maximum(result.best.sum(axis=1, keepdims=True), 1)
    for ax, matrix, text, title in (
        (axes[0], result.protected_exceedance, [[f"{v:.2f}" for v in row] for row in result.protected_exceedance],
         "protected exceedance probability"),
        (axes[1], share, [[str(v) for v in row] for row in result.best], "participants best by evidence"),
    ):
        ax.imshow(matrix, cmap="Blues", vmin=0, vmax=1)
        for i in range(k):
            for j in range(k):
                ax.text(j, i, text[i][j], ha="center", va="center", color="white" if matrix[i, j] > 0.6 else "black")
        ax.set_xticks(range(k), result.models)
        ax.set_yticks(range(k), result.models)
        ax.set_xlabel("candidate model (fitted by EM)")
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("model that generated the group")
    _finish(fig, path, f"Group model recovery on {result.task_id}: {result.participants} participants x "
            f"{result.trials} trials per group")


def plot_model_selection(selection: ModelSelection, path: str, title: str) -> None:
    """Random-effects model selection: each model's expected frequency (with its posterior
    sd) beside its exceedance and protected exceedance probability."""
    plt = require_matplotlib()
    k = len(selection.models)
    x = np.arange(k)
    fig, ax = plt.subplots(figsize=(1.6 * k + 3.0, 3.8))
    ax.bar(x - 0.27, selection.frequencies, 0.26, yerr=selection.frequency_sd, capsize=3, label="expected frequency")
    ax.bar(x, selection.exceedance, 0.26, label="exceedance probability")
    ax.bar(x + 0.27, selection.protected_exceedance, 0.26, label="protected exceedance")
    ax.axhline(1 / k, color="0.5", linestyle=":", linewidth=1)
    ax.set_xticks(x, selection.models)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("probability")
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    ax.set_title(f"{title}\nBayesian omnibus risk {selection.bor:.3g}, {selection.attribution.shape[0]} participants",
                 fontsize=10)
    ax.grid(alpha=0.25, axis="y")
    _finish(fig, path)
