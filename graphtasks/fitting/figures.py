"""Figures of fits: recovery (true against fitted, the confusion matrix) and the fitted
settings of every participant with their standard errors."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from graphtasks.experiments.figures import require_matplotlib

from .recovery import ModelRecovery, ParameterRecovery


def plot_parameter_recovery(result: ParameterRecovery, path: str) -> None:
    """True against fitted value, one panel per setting, with the identity line and r."""
    plt = require_matplotlib()
    names = list(result.truth)
    fig, axes = plt.subplots(1, len(names), figsize=(3.8 * len(names), 3.8))
    for ax, name in zip(np.atleast_1d(axes), names):
        truth, fitted = result.truth[name], result.fitted[name]
        low, high = min(truth + fitted), max(truth + fitted)
        ax.plot([low, high], [low, high], color="0.6", linestyle=":", linewidth=1)
        ax.scatter(truth, fitted, s=18, alpha=0.8)
        ax.set_xlabel(f"true {name}")
        ax.set_ylabel(f"fitted {name}")
        ax.set_title(f"{name}: r = {result.correlation(name):.2f}", fontsize=10)
        ax.grid(alpha=0.25)
    fig.suptitle(
        f"Parameter recovery: {result.model} on {result.task_id}, {len(truth)} simulated participants, "
        f"{result.trials} trials each",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_fits(fits: Sequence[dict[str, Any]], path: str, experiment: str) -> None:
    """Each model's fitted settings, one panel per (model, setting): a point per run with its
    standard error (a cross where it has none: at a bound), coloured by the run's label (its
    agent setting or participant), runs in order along the x axis."""
    plt = require_matplotlib()
    panels = sorted({(row["model"], name) for row in fits for name in row["params"]})
    labels = list(dict.fromkeys(str(row["label"]) for row in fits))
    colours = {label: plt.get_cmap("tab10")(i % 10) for i, label in enumerate(labels)}
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows + 0.5), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (model, name) in zip(axes.flat, panels):
        for label in labels:
            chosen = [r for r in fits if r["model"] == model and name in r["params"] and str(r["label"]) == label]
            shown = [r for r in chosen if (r.get("stderr") or {}).get(name) is not None]
            bare = [r for r in chosen if (r.get("stderr") or {}).get(name) is None]
            ax.errorbar([r["run"] for r in shown], [r["params"][name] for r in shown],
                        yerr=[r["stderr"][name] for r in shown], fmt="o", markersize=4, capsize=2,
                        color=colours[label], label=label)
            ax.plot([r["run"] for r in bare], [r["params"][name] for r in bare], "x", color=colours[label])
        ax.set_title(f"{model}: {name}", fontsize=10)
        ax.set_xlabel("run")
        ax.grid(alpha=0.25)
    handles, names = axes.flat[0].get_legend_handles_labels()
    if len(labels) <= 12:
        fig.legend(handles, names, loc="lower center", ncol=min(len(labels), 6), frameon=False, fontsize=8)
    fig.suptitle(f"{experiment}: fitted settings per run, ± 1 standard error (x: none, at a bound)", fontsize=10)
    fig.tight_layout(rect=(0, 0.06 if len(labels) <= 12 else 0, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
