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


def bounded_interval(value: float, stderr: float, low: float, high: float, width: float = 1.0
                     ) -> tuple[float, float]:
    """The interval of `width` standard errors around a setting in [low, high], computed on the
    fitting scale and mapped back: the logistic scale of the bounds, x = logit((value - low) /
    (high - low)), where the error is stderr / (dvalue/dx) (exactly the transformed error an EM
    fit's stderr came from; for a maximum-likelihood fit, the delta method). The ends stay
    within the bounds however large the error.

    Examples
    --------
    >>> from graphtasks.fitting.figures import bounded_interval
    >>> low, high = bounded_interval(0.36, 1.11, 0.0, 1.0)  # w 0.36 +- 1.11: not -0.75..1.47
    >>> 0.0 < low < 0.36 < high < 1.0
    True
    >>> [round(v, 3) for v in bounded_interval(5.0, 0.01, 0.1, 20.0)]  # small errors: about +- 1 s.e.
    [4.99, 5.01]
    """
    from scipy.special import expit, logit

    span = high - low
    share = min(max((value - low) / span, 1e-9), 1 - 1e-9)
    slope = span * share * (1 - share)  # dvalue/dx at the value
    x, error = float(logit(share)), width * stderr / slope
    return low + span * float(expit(x - error)), low + span * float(expit(x + error))


def interval_in_bounds(value: float, stderr: float, low: float, high: float, method: str = "mle"
                       ) -> tuple[float, float]:
    """One standard error either side of a fitted setting, computed on the scale the fit worked
    on and kept within the setting's bounds: an EM fit's on its logistic scale
    (`bounded_interval`, exact); a maximum-likelihood fit's (bounded L-BFGS-B on the setting
    itself) and a NUTS fit's (posterior mean and sd of the setting) on the setting's own scale,
    cut at the bounds.

    Examples
    --------
    >>> from graphtasks.fitting.figures import interval_in_bounds
    >>> interval_in_bounds(0.36, 1.11, 0.0, 1.0)  # the issue's w: drawn -0.75..1.47 before
    (0.0, 1.0)
    >>> [round(v, 3) for v in interval_in_bounds(0.36, 0.2, 0.0, 1.0, "em")]
    [0.191, 0.573]
    """
    if method == "em":
        return bounded_interval(value, stderr, low, high)
    return max(low, value - stderr), min(high, value + stderr)


def _wrapped(text: str, width_inches: float, fontsize: float) -> str:
    """`text` broken into lines that fit `width_inches` at `fontsize` (a character is taken as
    0.6 em wide, more than most are), so that a title is never cut at the figure's edges."""
    import textwrap

    per_line = max(20, int(width_inches * 72 / (0.6 * fontsize)))
    return "\n".join(textwrap.wrap(text, per_line)) if len(text) > per_line else text


def plot_fits(
    fits: Sequence[dict[str, Any]], path: str, experiment: str, groups: Sequence[dict[str, Any]] = ()
) -> Any:
    """Each model's fitted settings per participant, with their errors.

    One panel per (model, method, phases fitted, setting); along the x axis the runs in order,
    named by participant id (an agent's run by its label and index); each point is the fitted
    value with an interval of one standard error on the scale the fit worked on, within the
    setting's bounds (`interval_in_bounds`: EM's logistic scale mapped back; maximum
    likelihood's and NUTS's the setting's own, cut at the bounds), a cross where there is no
    standard error (at a bound); points are coloured by where the run comes from (people,
    a pilot agent, or the agent's label). The y axis spans the setting's bounds. For a
    hierarchical (EM, NUTS) fit, the group's median participant is a dashed line, with the band
    of its mean's standard error. Laid out by matplotlib's constrained layout, the title
    wrapped to the figure's width and the legend in a spare panel or below the panels, so
    that nothing is cut.

    Parameters
    ----------
    fits
        Rows of `graphtasks.fitting.records.recorded_fits`.
    path
        The PNG to write.
    experiment
        The experiment's name, for the title.
    groups
        Rows of `recorded_group_fits`, for their medians.

    Returns
    -------
    matplotlib.figure.Figure
        The figure written (closed), to read back.
    """
    from scipy.special import expit

    plt = require_matplotlib()
    phase_sets = {tuple(row.get("phases") or ()) for row in fits}

    def phases_of(row: dict[str, Any]) -> str:
        return "+".join(row.get("phases") or ()) or "all phases"

    panels = sorted({(row["model"], row.get("method") or "mle", phases_of(row), name) for row in fits
                     for name in row["params"]})
    order = sorted({(row["run"], _key(row)) for row in fits})
    position = {run: i for i, (run, _) in enumerate(order)}
    names = [key for _, key in order]
    group_of = {row["run"]: str(row.get("group") or row["label"]) for row in fits}
    labels = list(dict.fromkeys(group_of[run] for run, _ in order))
    colours = {label: plt.get_cmap("tab10")(i % 10) for i, label in enumerate(labels)}
    count, longest = len(names), max(len(n) for n in names)
    every = max(1, -(-count // 60))  # at most 60 tick labels a panel
    panel_width = min(16.0, max(3.6, 0.2 * (count / every) + 1.2))
    if panel_width > 9:
        columns = 1
    elif panel_width > 6:
        columns = 2
    else:  # as many columns as divide the panels (4 panels: 2 x 2), so no row ends in blank space
        columns = next((c for c in (3, 2, 4) if len(panels) % c == 0), min(3, len(panels)))
    rows = -(-len(panels) // columns)
    turned = count > 1 and (longest > 4 or count * longest * 0.09 > panel_width)
    label_height = 0.075 * longest if turned else 0.2
    fig = plt.figure(figsize=(panel_width * columns, (3.0 + label_height) * rows + 1.0), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (model, method, phases, name) in zip(axes.flat, panels):
        chosen = [r for r in fits if r["model"] == model and (r.get("method") or "mle") == method
                  and phases_of(r) == phases and name in r["params"]]
        bounds = next((tuple(r["bounds"][name]) for r in chosen if name in (r.get("bounds") or {})), None)
        for label in labels:
            mine = [r for r in chosen if group_of[r["run"]] == label]
            shown = [r for r in mine if (r.get("stderr") or {}).get(name) is not None]
            bare = [r for r in mine if (r.get("stderr") or {}).get(name) is None]
            values = [r["params"][name] for r in shown]
            if bounds is not None:
                ends = [interval_in_bounds(v, r["stderr"][name], bounds[0], bounds[1], method)
                        for v, r in zip(values, shown)]
            else:
                ends = [(v - r["stderr"][name], v + r["stderr"][name]) for v, r in zip(values, shown)]
            errors = [[v - lo for v, (lo, _) in zip(values, ends)], [hi - v for v, (_, hi) in zip(values, ends)]]
            ax.errorbar([position[r["run"]] for r in shown], values, yerr=errors if shown else None, fmt="o",
                        markersize=4, capsize=2, color=colours[label], label=label)
            ax.plot([position[r["run"]] for r in bare], [r["params"][name] for r in bare], "x",
                    color=colours[label])
        for group in groups:
            if (group["model"] != model or method != group["method"] or name not in group["median"]
                    or "+".join(group.get("phases") or ()) or "all phases") != phases:
                continue
            low, high = group["bounds"][name]
            mean, se = group["mean"][name], group["mean_stderr"][name]
            edges = [low + (high - low) * float(expit(v)) for v in (mean - se, mean + se)]
            spots = [position[run] for run in group["runs"] if run in position]
            if not spots:
                continue
            ax.axhline(group["median"][name], color="0.2", linestyle="--", linewidth=1)
            ax.fill_between([min(spots) - 0.5, max(spots) + 0.5], *edges, color="0.5", alpha=0.15, linewidth=0)
        if bounds is not None:
            pad = 0.04 * (bounds[1] - bounds[0])
            ax.set_ylim(bounds[0] - pad, bounds[1] + pad)
            ax.set_ylabel(f"{name} (bounds {bounds[0]:g} to {bounds[1]:g})", fontsize=9)
        else:
            ax.set_ylabel(name, fontsize=9)
        ax.set_xlim(-0.6, count - 0.4)
        ticks = list(range(0, count, every))
        ax.set_xticks(ticks, [names[i] for i in ticks], rotation=90 if turned else 0, fontsize=7)
        where = f", {phases}" if len(phase_sets) > 1 else ""
        ax.set_title(f"{model}{f' ({method.upper()})' if method != 'mle' else ''}{where}: {name}", fontsize=10)
        ax.set_xlabel("participant (an agent's run: its label and index)" if any(
            r.get("participant") is None for r in fits) else "participant", fontsize=9)
        ax.grid(alpha=0.25)
    handles, legend_names = [], []
    for ax in axes.flat[:len(panels)]:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            if text not in legend_names:
                handles.append(handle)
                legend_names.append(text)
    spare = len(panels) < rows * columns
    if spare and len(labels) <= 24:
        axes.flat[len(panels)].legend(handles, legend_names, loc="center", frameon=False, fontsize=8, title="runs of")
    elif len(labels) <= 24:
        fig.legend(handles, legend_names, loc="outside lower center", ncol=min(len(labels), 6), frameon=False,
                   fontsize=8, title="runs of", title_fontsize=8)
    only = next(iter(phase_sets)) if len(phase_sets) == 1 else ()
    fitted = f" (phases {'+'.join(only)})" if only else ""
    extra = "; EM, NUTS: dashed, the group median ± 1 s.e. of its mean" if groups else ""
    methods = {row.get("method") or "mle" for row in fits}
    scale = ("on the logistic scale EM fits on, mapped back" if methods == {"em"} else
             "cut at the bounds" if "em" not in methods else
             "cut at the bounds (EM: on its logistic scale, mapped back)")
    title = (f"{experiment}: fitted settings per participant{fitted}, ± 1 standard error {scale} (x: none, at a "
             f"bound){extra}")
    fig.suptitle(_wrapped(title, panel_width * columns, 10), fontsize=10)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig


def _key(row: dict[str, Any]) -> str:
    """A fit row's participant id, or its run's label and index."""
    if row.get("key"):
        return str(row["key"])
    return str(row["participant"]) if row.get("participant") is not None else f"{row['label']} (run {row['run']})"


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


def plot_model_selection(selection: ModelSelection, path: str, title: str) -> Any:
    """Random-effects model selection: each model's expected frequency (with its posterior
    sd) beside its exceedance and protected exceedance probability; constrained layout, the
    title wrapped to the figure's width and the legend below the axes, so nothing is cut.

    Parameters
    ----------
    selection
        What `graphtasks.fitting.bms.random_effects` found.
    path
        The PNG to write.
    title
        The figure's title (the omnibus risk and the number of participants are added).

    Returns
    -------
    matplotlib.figure.Figure
        The figure written (closed), to read back.
    """
    plt = require_matplotlib()
    k = len(selection.models)
    x = np.arange(k)
    width = 1.6 * k + 3.0
    fig, ax = plt.subplots(figsize=(width, 4.4), layout="constrained")
    ax.bar(x - 0.27, selection.frequencies, 0.26, yerr=selection.frequency_sd, capsize=3, label="expected frequency")
    ax.bar(x, selection.exceedance, 0.26, label="exceedance probability")
    ax.bar(x + 0.27, selection.protected_exceedance, 0.26, label="protected exceedance")
    ax.axhline(1 / k, color="0.5", linestyle=":", linewidth=1, label=f"chance (1/{k})")
    ax.set_xticks(x, selection.models)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("probability")
    ax.set_xlabel("model")
    handles, names = ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda i: names[i].startswith("chance"))  # the bars first, as drawn
    fig.legend([handles[i] for i in order], [names[i] for i in order], fontsize=8, frameon=False,
               loc="outside lower center", ncol=2)
    ax.grid(alpha=0.25, axis="y")
    full = f"{title}; Bayesian omnibus risk {selection.bor:.3g}, {selection.attribution.shape[0]} participants"
    fig.suptitle(_wrapped(full, width, 10), fontsize=10)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig


STAY_NAMES = {"rewarded_common": "rewarded\ncommon", "rewarded_rare": "rewarded\nrare",
              "unrewarded_common": "unrewarded\ncommon", "unrewarded_rare": "unrewarded\nrare"}


def plot_predictive_check(check: Any, path: str, title: str = "", level: float = 0.95) -> Any:
    """A posterior predictive check: the data's group mean beside the interval of the group
    mean over simulations from the posterior, in one figure.

    Two-step stay probabilities: a bar per trial type (rewarded or unrewarded, common or rare:
    blue common, red rare) for the data, each participant's value as a grey dot, and the
    simulations' median and central interval as a black point with whiskers beside it.
    Choice rates: each action's rate over the bins of trials, the data as a line with markers
    and the simulations' interval as a band of the same colour with its median dashed.

    Parameters
    ----------
    check
        A `graphtasks.fitting.ppc.PredictiveCheck`.
    path
        The PNG to write.
    title
        The figure's title (default: model, task, participants and draws).
    level
        The simulated interval's coverage (default 0.95).

    Returns
    -------
    matplotlib.figure.Figure
        The figure written (closed), to read back.
    """
    plt = require_matplotlib()
    data = check.group_observed()
    low, high = check.interval(level)
    middle = check.interval(0.0)[0]
    percent = f"{100 * level:g}%"
    if check.kind == "stay":
        fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
        x = np.arange(len(check.labels))
        colours = ["tab:blue" if label.endswith("common") else "tab:red" for label in check.labels]
        ax.bar(x - 0.17, data, 0.32, color=colours, alpha=0.75, label="data: group mean")
        rng = np.random.default_rng(0)
        for k in range(len(x)):
            values = check.observed[:, k]
            values = values[np.isfinite(values)]
            ax.scatter(x[k] - 0.17 + rng.uniform(-0.08, 0.08, len(values)), values, s=9, color="0.35", zorder=3,
                       label="data: participants" if k == 0 else None)
        ax.errorbar(x + 0.17, middle, yerr=[middle - low, high - middle], fmt="o", color="black", capsize=4,
                    label=f"posterior predictive: median, {percent} interval")
        ax.set_xticks(x, [STAY_NAMES.get(label, label) for label in check.labels])
        ax.set_ylabel("P(repeat first-stage choice)")
        ax.set_xlabel("previous trial (the data's bars: blue after a common transition, red after a rare one)")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.25, axis="y")
        fig.legend(fontsize=8, frameon=False, ncol=3, loc="outside lower center")
    else:
        fig, ax = plt.subplots(figsize=(7.2, 4.6), layout="constrained")
        x = np.arange(len(check.labels))
        for j, action in enumerate(check.actions):
            colour = f"C{j}"
            ax.fill_between(x, low[:, j], high[:, j], color=colour, alpha=0.2, linewidth=0,
                            label=f"action {action}: posterior predictive {percent} (dashed: median)")
            ax.plot(x, middle[:, j], color=colour, linestyle="--", linewidth=1)
            ax.plot(x, data[:, j], color=colour, marker="o", linewidth=1.5, label=f"action {action}: data")
        ax.set_xticks(x, check.labels, rotation=30 if len(x) > 6 else 0)
        ax.set_xlabel("trials" if "-" in check.labels[0] else "part of each participant's trials")
        ax.set_ylabel("choice rate")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.25)
        fig.legend(fontsize=8, frameon=False, ncol=2, loc="outside lower center")
    full = title or (f"Posterior predictive check: {check.model} on {check.task_id}, {check.participants} "
                     f"participants, {check.draws} posterior draws")
    fig.suptitle(_wrapped(full, fig.get_figwidth(), 10), fontsize=10)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig
