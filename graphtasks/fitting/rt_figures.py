"""The figure of response-time models' parameter recovery: one row per model, one panel per
free setting, true against fitted values with the identity line, r and the mean absolute error."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .recovery import ParameterRecovery


def plot_rt_recovery(results: Sequence[ParameterRecovery], path: str | None = None) -> Any:
    """True against fitted settings of each recovery (a row each), as a paper shows them.

    Parameters
    ----------
    results : sequence of ParameterRecovery
        One recovery per model (`graphtasks.fitting.recovery.parameter_recovery`).
    path : str, optional
        Where to save the figure (PNG, SVG or PDF by its suffix); None: only returned.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; each panel's title reads ``setting: r = R, MAE = M``.

    Examples
    --------
    >>> from graphtasks.fitting.recovery import ParameterRecovery
    >>> from graphtasks.fitting.rt_figures import plot_rt_recovery
    >>> result = ParameterRecovery("q-ddm", "rewardgym/two-step", 200, {"lr": [0.2, 0.5, 0.8]},
    ...                            {"lr": [0.25, 0.45, 0.8]})
    >>> [ax.get_title() for ax in plot_rt_recovery([result]).axes]
    ['lr: r = 0.99, MAE = 0.033']
    """
    from matplotlib.figure import Figure

    columns = max(len(r.truth) for r in results)
    fig = Figure(figsize=(2.9 * columns, 2.9 * len(results) + 0.5), layout="constrained")
    grid = fig.subplots(len(results), columns, squeeze=False)
    for row, result in zip(grid, results):
        names = list(result.truth)
        for ax, name in zip(row, names):
            truth, fitted = np.asarray(result.truth[name]), np.asarray(result.fitted[name])
            low, high = float(min(truth.min(), fitted.min())), float(max(truth.max(), fitted.max()))
            pad = 0.05 * (high - low or 1.0)
            ax.plot([low - pad, high + pad], [low - pad, high + pad], color="0.6", lw=1, zorder=1)
            ax.scatter(truth, fitted, s=14, color="tab:blue", alpha=0.8, zorder=2)
            ax.set_xlim(low - pad, high + pad)
            ax.set_ylim(low - pad, high + pad)
            ax.set_xlabel(f"true {name}", fontsize=9)
            ax.set_ylabel(f"fitted {name}", fontsize=9)
            mae = float(np.mean(np.abs(fitted - truth)))
            ax.set_title(f"{name}: r = {result.correlation(name):.2f}, MAE = {mae:.2g}", fontsize=9)
            ax.tick_params(labelsize=8)
        for ax in row[len(names):]:
            ax.set_visible(False)
        row[0].annotate(result.model, xy=(-0.42, 0.5), xycoords="axes fraction", rotation=90, va="center",
                        fontsize=11, fontweight="bold")
    first = results[0]
    fig.suptitle(f"Parameter recovery of response-time models on {first.task_id}: "
                 f"{len(next(iter(first.truth.values())))} simulated participants, {first.trials} trials each",
                 fontsize=10)
    if path is not None:
        fig.savefig(path, dpi=150)
    return fig
