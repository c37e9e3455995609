"""The figure of a cross-validation: each model's held-out log-likelihood per choice, fold by
fold (left), and over all folds with the spread of the folds (right)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np


def plot_cross_validation(models: Sequence[str], heldout: Sequence[Sequence[float]], choices: Sequence[int],
                          path: str | Path | None, title: str, chance: float | None = None) -> Any:
    """Draw held-out log-likelihoods per choice: a line per model across the folds (left), and
    each model's value over all folds with one standard error of the fold values (right), the
    best model on top. Saved to `path` (None: returned, not saved).

    Parameters
    ----------
    models : sequence of str
        The models, in the order of `heldout`.
    heldout : sequence of sequences of float
        Per model, each fold's held-out log-likelihood.
    choices : sequence of int
        Held-out choices per fold.
    path : str or Path or None
        Where to save the PNG.
    title : str
        The figure's title (wrapped to its width).
    chance : float, optional
        The log-likelihood per choice of a uniform choice among the offered actions, drawn as a
        dotted line in both panels.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from graphtasks.fitting.cv_figures import plot_cross_validation
    >>> figure = plot_cross_validation(["q", "hybrid"], [[-60.0, -62.0], [-55.0, -58.0]], [100, 100], None, "cv")
    >>> [axes.get_xlabel() for axes in figure.axes]
    ['fold', 'held-out log-likelihood per choice']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per_fold = np.array([[v / max(n, 1) for v, n in zip(folds, choices)] for folds in heldout], dtype=float)
    overall = np.array([sum(folds) / max(sum(choices), 1) for folds in heldout])
    spread = (per_fold.std(axis=1, ddof=1) / math.sqrt(per_fold.shape[1])) if per_fold.shape[1] > 1 \
        else np.zeros(len(models))
    order = np.argsort(overall)  # best last: on top of the right panel
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained",
                                         gridspec_kw={"width_ratios": [1.4, 1]})
    colours = plt.get_cmap("tab10")
    folds = np.arange(1, per_fold.shape[1] + 1)
    for i, model in enumerate(models):
        left.plot(folds, per_fold[i], marker="o", color=colours(i % 10), label=model)
    if chance is not None:
        left.axhline(chance, color="0.6", linestyle=":", linewidth=1, label="chance (uniform over offered actions)")
        right.axvline(chance, color="0.6", linestyle=":", linewidth=1)
    left.set_xticks(folds)
    left.set_xlabel("fold")
    left.set_ylabel("held-out log-likelihood per choice")
    left.margins(y=0.08)
    handles, labels = left.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 6), fontsize="small",
                  frameon=False)
    ys = np.arange(len(models))
    for y, i in zip(ys, order):
        right.errorbar(overall[i], y, xerr=spread[i], fmt="o", color=colours(int(i) % 10), capsize=3)
    right.set_yticks(ys, [models[i] for i in order])
    right.set_xlabel("held-out log-likelihood per choice")
    right.set_title("all folds (± 1 s.e. over folds)", fontsize="medium")
    right.margins(x=0.25, y=0.2)
    import textwrap

    figure.suptitle("\n".join(textwrap.wrap(title, 110)), fontsize="medium")
    if path is not None:
        figure.savefig(path, dpi=120)
        plt.close(figure)
    return figure
