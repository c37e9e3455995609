"""Draw the decision tasks (data/decision/) into docs/images/decision/<name>.png for
docs/decision-tasks.md: the state graph of the choice tasks (the project's task pictures),
Tolman's maze, the cued T-maze, the card sequence of the Iowa decks, the walks of the restless bandit, two games of the
horizon task and the payoffs of a
depleting patch against the marginal value theorem's average rates.

    python docs/make_decision_pictures.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import tasks  # noqa: E402
from graphtasks.experiments.decision import harvest_rewards, mvt_harvests  # noqa: E402
from gym_bridge import GraphTaskEnv  # noqa: E402
from gym_bridge.render import draw_task  # noqa: E402
from tasks.rewards import SequenceParams  # noqa: E402

OUT = Path(__file__).resolve().parent / "images" / "decision"
DECKS = "ABCD"


def graph_pictures() -> None:
    for name in ("reversal-learning", "probabilistic-selection"):
        draw_task(f"decision/{name}", store=":memory:").save(OUT / f"{name}.png", dpi=90)
    for size in ("micro", "small"):  # Tolman's maze, drawn as the grid family draws its maps
        draw_task(f"decision/grid/tolman/{size}", store=":memory:").save(OUT / f"tolman-{size}.png", dpi=70)


def cued_maze() -> None:
    """The cued T-maze's two trial types: the start's marker (orange: left pays; green: right pays)."""
    for cue in ("left", "right"):
        draw_task(f"decision/grid/cued_t_maze/{cue}", store=":memory:").save(OUT / f"cued-t-maze-{cue}.png", dpi=70)


def iowa() -> None:
    """Each deck's 40 cards: the gain above the axis, the loss below, and the running net."""
    env = GraphTaskEnv(tasks.build("decision/iowa-gambling"))
    specs = [env.compiled.reward_specs[s] for s in range(1, 5)]
    fig, axes = plt.subplots(4, 1, figsize=(8.0, 6.4), sharex=True)
    cards = np.arange(1, 41)
    for ax, deck, spec in zip(axes, DECKS, specs):
        gains, losses = np.asarray(spec.values), np.asarray(SequenceParams.of(spec).losses)
        ax.bar(cards, gains, color="#4a78c8", width=0.8, label="gain")
        ax.bar(cards, losses, color="#d04a4a", width=0.8, label="loss")
        ax.plot(cards, np.cumsum(gains + losses) / 10, color="0.2", linewidth=1.4, label="net so far / 10")
        ax.axhline(0, color="0.5", linewidth=0.6)
        ax.set_ylim(-1300, 300)
        ax.set_ylabel(f"deck {deck}", rotation=0, ha="right", va="center", fontsize=10)
        ax.text(40.6, 150, f"net per 10 cards: {int((gains + losses)[:10].sum()):+d}", fontsize=8, ha="right")
    axes[0].legend(fontsize=8, ncol=3, loc="lower left", frameon=False)
    axes[-1].set_xlabel("card of the deck (the 41st is the first again)")
    fig.suptitle("decision/iowa-gambling: the card sequence of Bechara et al. 1994 (dollars)", fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "iowa-gambling.png", dpi=90)
    plt.close(fig)


def restless() -> None:
    """One session's four means over 300 trials (each arm chosen in turn), and the payoffs drawn."""
    env = GraphTaskEnv(tasks.build("decision/restless-bandit"))
    env.reset(seed=2)
    group = env._sources[1].group
    means, paid, chosen = [], [], []
    for trial in range(300):
        means.append(group.means.copy())
        arm = trial % 4
        paid.append(env.step(arm)[1])
        chosen.append(arm)
        env.reset()
    means = np.array(means)
    fig, ax = plt.subplots(figsize=(8.0, 3.6))
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for arm in range(4):
        ax.plot(means[:, arm], color=colours[arm], linewidth=1.5, label=f"arm {arm + 1}: mean")
        at = np.flatnonzero(np.array(chosen) == arm)
        ax.scatter(at, np.array(paid)[at], s=4, color=colours[arm], alpha=0.5)
    ax.set_xlabel("trial (dots: the payoff of the arm chosen, arms in turn)")
    ax.set_ylabel("points (1..100)")
    ax.set_ylim(0, 101)
    ax.legend(fontsize=8, ncol=4, loc="lower left", frameon=False)
    ax.set_title("decision/restless-bandit: decaying Gaussian random walks (Daw et al. 2006)", fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "restless-bandit.png", dpi=90)
    plt.close(fig)


def horizon() -> None:
    """Two unequal games ([1, 3] forced choices) of horizon 1 and 6: each trial's payoff by arm,
    the game's means, the forced trials shaded; the arm seen once is the less-known one."""
    env = GraphTaskEnv(tasks.build("decision/horizon"))
    env.reset(seed=4)
    group = next(source.group for source in env._sources if source is not None)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), sharey=True, gridspec_kw={"width_ratios": [5, 10]})
    colours = ["tab:blue", "tab:orange"]
    for ax, condition, free in zip(axes, ("h1-unequal-RLRR", "h6-unequal-LRLL"), ([0], [1, 1, 0, 1, 1, 1])):
        _, info = env.reset(options={"condition": condition})
        trials, terminated = [], False
        while not terminated:
            offered = info["available_actions"]
            arm = offered[0] if len(offered) == 1 else free[len(trials) - 4]
            _, reward, terminated, _, info = env.step(arm)
            trials.append((arm, reward))
        means = group.current.copy()
        ax.axvspan(0.5, 4.5, color="0.92")
        ax.text(2.5, 96, "forced", ha="center", fontsize=8, color="0.4")
        ax.text(4.5 + len(free) / 2, 96, f"free (horizon {len(free)})", ha="center", fontsize=8, color="0.4")
        for arm, name in ((0, "left"), (1, "right")):
            at = [i + 1 for i, (a, _) in enumerate(trials) if a == arm]
            ax.scatter(at, [trials[i - 1][1] for i in at], color=colours[arm], s=36, zorder=3,
                       label=f"{name}: mean {means[arm]:.0f}")
            ax.axhline(means[arm], color=colours[arm], linestyle="--", linewidth=1)
        ax.set_xticks(range(1, len(trials) + 1))
        ax.set_xlim(0.5, len(trials) + 0.5)
        ax.set_xlabel(f"trial ({condition})")
        ax.legend(fontsize=8, loc="lower right", frameon=False)
    axes[0].set_ylabel("points (1..100)")
    axes[0].set_ylim(0, 101)
    fig.suptitle("decision/horizon: games of four forced and 1 or 6 free choices (Wilson et al. 2014)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "horizon.png", dpi=90)
    plt.close(fig)


def foraging() -> None:
    """What each harvest of a patch pays, and the best long-run rate for short and long travel:
    the theorem leaves when the next harvest pays less than that rate."""
    rewards = harvest_rewards(tasks.build("decision/patch-foraging"))
    k = np.arange(1, len(rewards) + 1)
    fig, ax = plt.subplots(figsize=(8.0, 3.6))
    ax.bar(k, rewards, color="#4a78c8", width=0.7, label="payoff of harvest k")
    for travel, colour in ((1, "tab:orange"), (8, "tab:red")):
        n = mvt_harvests(rewards, travel)
        rate = sum(rewards[:n]) / (n + travel + 1)
        ax.axhline(rate, color=colour, linestyle="--", linewidth=1.2)
        ax.annotate(f"travel {travel}: best rate {rate:.2f}, leave after {n} harvests", (n + 0.5, rate),
                    xytext=(n + 1.5, rate + 1.6), fontsize=8, color=colour,
                    arrowprops={"arrowstyle": "->", "color": colour})
    ax.set_xlabel("harvest k of a patch (state: harvests so far); action 1 leaves, travel steps, a fresh patch")
    ax.set_ylabel("reward")
    ax.set_xticks(k)
    ax.legend(fontsize=8, frameon=False)
    ax.set_title("decision/patch-foraging: a depleting patch and the marginal value theorem", fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "patch-foraging.png", dpi=90)
    plt.close(fig)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    graph_pictures()
    cued_maze()
    iowa()
    restless()
    horizon()
    foraging()
    for path in sorted(OUT.glob("*.png")):
        print(path.relative_to(OUT.parents[1]))


if __name__ == "__main__":
    main()
