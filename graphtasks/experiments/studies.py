"""Reproductions that study what agents have learnt (a map of the task, a distribution of
values, a mood) rather than their episodes: each runs seeded agents in Python, returns checks
of the paper's finding and draws a figure. `graphtasks reproduce` runs them like the spec ones.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

import numpy as np

from gym_bridge import GraphTaskEnv, family
from gym_bridge.agents import make_agent, make_batched
from gym_bridge.batched_episodes import play_lanes
from gym_bridge.grid.env import GridEnv
from gym_bridge.grid.vector_env import GridVectorEnv
from gym_bridge.runner import run_episodes

from .figures import require_matplotlib

Check = Any  # reproduce.Check (imported there; a cycle otherwise)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation: Pearson's r of the ranks (no ties in what is compared here)."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def random_walk_sr(env: Any, n_states: int, n_actions: int, episodes: int, seed: int) -> np.ndarray:
    """The state successor representation a TD-SR agent learns from a uniform random walk
    (epsilon 1, on-policy bootstrap): M(s, s') averaged over the actions."""
    agent = make_agent("sr", n_states, n_actions, seed=seed, epsilon=1.0, goal_biased=False)
    run_episodes(env, agent, episodes, seed=seed)
    return agent.M.mean(axis=0)


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _save(fig: Any, path: str | None) -> None:
    plt = require_matplotlib()
    if path:
        fig.savefig(path, dpi=120)
    plt.close(fig)


# -- Dabney et al. 2020: distributional cells ---------------------------------------------------
def dabney2020(seeds: int, path: str | None, make_check: Callable[..., Check]) -> list[Check]:
    """variable_magnitude: one action pays one of seven amounts. Distributional cells learn
    expectiles ordered by their optimism; classical TD cells all learn the mean."""
    cells = 20
    found: dict[bool, list[np.ndarray]] = {False: [], True: []}
    task = "neuronav/graph/variable_magnitude"
    n_states = GraphTaskEnv(task).compiled.n_states
    for mirror in (False, True):  # the runs of seeds 0 .. seeds - 1 as the lanes of one batched agent
        env = family("graph").make_vector_env(task, seeds, autoreset_mode="disabled")
        agent: Any = make_batched("distq", n_states, 1, seeds=list(range(seeds)),
                             settings=[{"lr": 0.02, "cells": cells, "mirror": mirror}] * seeds)
        play_lanes(env, agent, 4000, env_seeds=list(range(seeds)))
        found[mirror] = [agent.cells[lane, 0, 0].copy() for lane in range(seeds)]
    tau = (np.arange(cells) + 0.5) / cells
    dist, classical = np.mean(found[False], axis=0), np.mean(found[True], axis=0)
    rho = float(np.mean([spearman(tau, v) for v in found[False]]))
    spread, flat = float(np.ptp(dist)), float(np.mean([np.ptp(v) for v in found[True]]))
    if path is not None:
        plt = require_matplotlib()
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        ax.plot(tau, dist, "o-", label="distributional (asymmetric rates)")
        ax.plot(tau, classical, "s--", label="classical TD (equal rates)")
        ax.set_xlabel("cell optimism  tau = lr+ / (lr+ + lr-)")
        ax.set_ylabel("cell's value of the cue")
        ax.set_title(f"Dabney et al. 2020: cells' values after learning (mean of {_runs(seeds)})", fontsize=10)
        ax.grid(alpha=0.25)
        ax.legend(frameon=False)
        fig.tight_layout()
        _save(fig, path)
    return [
        make_check("distributional: rank correlation of value and optimism", rho, "values ordered by optimism",
                   rho > 0.95),
        make_check("distributional: spread of cell values", spread, "cells spread over the reward range",
                   spread > 1.0),
        make_check("classical: spread of cell values", flat, "classical cells all learn the mean", flat < 1e-6),
    ]


# -- Schapiro et al. 2013: temporal community structure ----------------------------------------
COMMUNITIES = np.repeat([0, 1, 2], 5)  # neighborhood: states 0-4, 5-9, 10-14


def _within_minus_between(similarity: np.ndarray) -> float:
    same = COMMUNITIES[:, None] == COMMUNITIES[None, :]
    off = ~np.eye(len(COMMUNITIES), dtype=bool)
    return float(similarity[same & off].mean() - similarity[~same].mean())


def schapiro2013(seeds: int, path: str | None, make_check: Callable[..., Check]) -> list[Check]:
    """A random walk on the neighborhood graph (three communities of five states): the SR
    learnt from it makes states of one community alike; one-hot states are all equally unlike."""
    maps = []
    for seed in range(seeds):
        env = GraphTaskEnv("neuronav/graph/neighborhood")
        maps.append(random_walk_sr(env, env.compiled.n_states, int(env.action_space.n), 200, seed))
    similarity = np.corrcoef(np.mean(maps, axis=0))
    per_seed = [_within_minus_between(np.corrcoef(m)) for m in maps]
    one_hot = _within_minus_between(np.asarray(np.corrcoef(np.eye(len(COMMUNITIES)))))
    if path is not None:
        plt = require_matplotlib()
        fig, axes = plt.subplots(1, 2, figsize=(9.6, 4.4))
        for ax, matrix, title in ((axes[0], similarity, "successor representation"),
                                  (axes[1], np.corrcoef(np.eye(15)), "one-hot states")):
            image = ax.imshow(matrix, cmap="viridis", vmin=-0.2, vmax=1.0)
            for edge in (4.5, 9.5):
                ax.axhline(edge, color="white", linewidth=0.8)
                ax.axvline(edge, color="white", linewidth=0.8)
            ax.set_title(title, fontsize=10)
            ax.set_xticks(range(0, np.shape(matrix)[0], 2))  # states are whole numbers
            ax.set_yticks(range(0, np.shape(matrix)[0], 2))
            ax.set_xlabel("state (communities 0-4, 5-9, 10-14)")
            ax.set_ylabel("state")
        fig.colorbar(image, ax=axes, shrink=0.8, label="correlation of representations")
        fig.suptitle(f"Schapiro et al. 2013: community structure (neighborhood graph, {_runs(seeds)})", fontsize=10)
        _save(fig, path)
    mean_gap = float(np.mean(per_seed))
    return [
        make_check("SR: within- minus between-community similarity", mean_gap, "SR groups states by community",
                   min(per_seed) > 0.3),
        make_check("one-hot: within- minus between-community similarity", one_hot, "one-hot states do not",
                   abs(one_hot) < 1e-9),
    ]


# -- Stachenfeld et al. 2017: place fields follow geodesic distance ----------------------------
def geodesic(move: np.ndarray, wall: np.ndarray, source: int) -> np.ndarray:
    """Steps from `source` to every cell by the grid's moves (breadth first); inf where walled."""
    distance = np.full(move.shape[0], np.inf)
    distance[source] = 0
    queue = deque([source])
    while queue:
        cell = queue.popleft()
        for nxt in move[cell]:
            if distance[nxt] == np.inf and not wall.flat[nxt]:
                distance[nxt] = distance[cell] + 1
                queue.append(int(nxt))
    return distance


def _field_fits(template: str, seed: int) -> tuple[np.ndarray, float, float, list[int], np.ndarray]:
    env = GridEnv(template, "small", random_start=True, objects={"rewards": {}})
    compiled = env.compiled
    move, wall, n = np.asarray(compiled.move), np.asarray(compiled.wall), compiled.n
    sr = random_walk_sr(env, env.n_states, env.n_actions, 600, seed)
    free = np.flatnonzero(~wall.ravel())
    rows, cols = np.divmod(np.arange(n * n), n)
    centres = [r * n + c for r, c in ((4, 3), (4, 5), (4, 7), (6, 3), (6, 5), (6, 7))]  # by the obstacle's row
    geo, euc = [], []
    for centre in centres:
        others = free[free != centre]
        field = sr[centre, others]
        geo.append(spearman(field, -geodesic(move, wall, centre)[others]))
        euc.append(spearman(field, -np.hypot(rows[others] - rows[centre], cols[others] - cols[centre])))
    return sr, float(np.mean(geo)), float(np.mean(euc)), centres, wall


def stachenfeld2017(seeds: int, path: str | None, make_check: Callable[..., Check]) -> list[Check]:
    """SR place fields learnt by random walks on the empty and the obstacle grid: next to the
    wall, a field follows the distance round the wall, not the straight line through it."""
    fits: dict[str, list[tuple[float, float]]] = {"empty": [], "obstacle": []}
    fields: dict[str, np.ndarray] = {}
    walls: dict[str, np.ndarray] = {}
    for seed in range(seeds):
        for template in fits:
            sr, geo, euc, centres, walls[template] = _field_fits(template, seed)
            fits[template].append((geo, euc))
            fields[template] = sr[centres[1]].reshape(11, 11)  # the field just above the wall's middle
    gap = {t: float(np.mean([g - e for g, e in v])) for t, v in fits.items()}
    geo_obstacle = float(np.mean([g for g, _ in fits["obstacle"]]))
    if path is not None:
        plt = require_matplotlib()
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.4))
        for ax, template in zip(axes, ("empty", "obstacle")):
            cmap = plt.get_cmap("magma").with_extremes(bad="0.55")
            field = fields[template]
            # the SR counts the cell itself (M starts at the identity), so its own occupancy is
            # about 1 more than its neighbours': the colours stop at the largest value off it
            around = np.delete(field.ravel(), 4 * 11 + 5)
            ax.imshow(np.ma.masked_array(field, walls[template]), cmap=cmap, vmax=around.max())
            ax.plot(5, 4, "c+", markersize=12)
            ax.set_title(f"{template}: place field of the cell marked +", fontsize=10)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle("Stachenfeld et al. 2017: SR place fields follow the walls (grey)", fontsize=10)
        fig.tight_layout()
        _save(fig, path)
    return [
        make_check("obstacle: rank correlation of field and geodesic closeness", geo_obstacle,
                   "fields follow geodesic distance", geo_obstacle > 0.8),
        make_check("obstacle: geodesic minus straight-line fit", gap["obstacle"],
                   "geodesic fits better than straight-line by the wall", gap["obstacle"] > 0.05),
        make_check("empty: geodesic minus straight-line fit", gap["empty"],
                   "without walls the two fit alike", abs(gap["empty"]) < gap["obstacle"]),
    ]


# -- Eldar et al. 2016: mood --------------------------------------------------------------------
def _eldar_moods(seeds: int, episodes: int, **settings: Any) -> np.ndarray:
    """The mood after each episode (runs x episodes): a reward in the empty grid, which half way
    turns into a loss while a new reward appears in the opposite corner (neuro-nav's notebook)."""
    first = {"rewards": {(9, 1): 1.0}}
    second = {"rewards": {(9, 1): -1.0, (1, 9): 1.0}}
    moods = np.zeros((seeds, episodes))
    size = GridEnv("empty", "small", objects=first, time_penalty=0.01, max_episode_steps=50)
    # the runs of seeds 0 .. seeds - 1 as the lanes of one batched agent, an episode at a time
    setting = {"lr_pos": 0.05, "lr_neg": 0.05, "mood_lr": 0.01, "beta": 1000.0, **settings}
    agent: Any = make_batched("mood", size.n_states, size.n_actions, list(range(seeds)), [setting] * seeds)
    for half, objects in enumerate((first, second)):
        env = GridVectorEnv(seeds, "empty", "small", objects=objects, time_penalty=0.01, max_episode_steps=50,
                            autoreset_mode="disabled")
        for episode in range(episodes // 2):
            play_lanes(env, agent, 1, env_seeds=[(seed + 1000 * half) * 100_000 + episode for seed in range(seeds)])
            moods[:, half * (episodes // 2) + episode] = agent.mood
    return moods


def eldar2016(seeds: int, path: str | None, make_check: Callable[..., Check]) -> list[Check]:
    """A mood agent learns a reward in the empty grid; half way the reward turns into a loss
    and a new reward appears elsewhere. Mood (a running mean of prediction errors) rises while
    learning, falls at the switch and returns towards zero once the new reward is learnt.

    The checks read the project's mood, which carries over from episode to episode as Eldar et
    al.'s does; the figure also shows neuro-nav's MoodQ rule (the mood reset every episode, the
    policy's mean as bootstrap), whose curve is its notebook's."""
    episodes, window = 1500, 50
    kernel = np.ones(window) / window
    half = episodes // 2
    curves = {}
    neuronav = {"mood_reset": True, "bootstrap": "policy"}
    for label, settings in (("mood carried over (graphtasks' default)", {}),
                            ("mood reset every episode (neuro-nav's MoodQ)", neuronav)):
        # index i: episodes i .. i + window - 1
        curves[label] = np.convolve(_eldar_moods(seeds, episodes, **settings).mean(axis=0), kernel, mode="valid")
    smooth = next(iter(curves.values()))
    peak = float(smooth[: half - window].max())
    trough = float(smooth[half - window + 1 : half + 200].min())
    settled = float(smooth[-1])
    if path is not None:
        plt = require_matplotlib()
        fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.2))
        for ax, (label, curve) in zip(axes, curves.items()):
            ax.plot(np.arange(len(curve)) + window, curve)
            ax.axhline(0, color="0.5", linestyle=":")
            ax.axvline(half, color="0.3", linestyle="--", linewidth=1)
            ax.text(half, ax.get_ylim()[1], " reward moves", va="top", fontsize=8)
            ax.set_xlabel("episode")
            ax.set_title(label, fontsize=10)
            ax.grid(alpha=0.25)
        axes[0].set_ylabel(f"mood (mean of {_runs(seeds)}, trailing mean of {window} episodes)")
        fig.suptitle("Eldar et al. 2016: mood follows prediction errors", fontsize=10)
        fig.tight_layout()
        _save(fig, path)
    return [
        make_check("peak mood while learning", peak, "mood rises while a reward is learnt", peak > 0.005),
        make_check("lowest mood after the switch", trough, "mood falls when the reward is lost", trough < -0.005),
        make_check("mood at the end", settled, "mood returns to baseline once learnt",
                   abs(settled) < 0.5 * min(peak, -trough)),
    ]


# -- Zorowitz et al. 2020: optimism and pessimism --------------------------------------------------
# neuro-nav's pessimism notebook, second world: a corridor five cells wide, the reward at the far
# end and a loss in its middle, on the straight way there.
CORRIDOR = """name corridor
[small]
###########
###..R..###
###.....###
###.....###
###.....###
###..L..###
###.....###
###.....###
###.....###
###..A..###
###########
reward 1 5 1
reward 5 5 -1
"""
GOAL, HAZARD, START = (1, 5), (5, 5), (9, 5)


def _greedy_path(q: np.ndarray, move: np.ndarray, n: int, steps: int = 30) -> list[tuple[int, int]]:
    """The cells the greedy policy walks through from the start (stops at an object or a loop)."""
    cell, seen = START[0] * n + START[1], set()
    path = [START]
    while len(path) < steps and cell not in seen and divmod(cell, n) not in (GOAL, HAZARD):
        seen.add(cell)
        cell = int(move[cell][int(np.argmax(q[cell]))])
        path.append(divmod(cell, n))
    return path


def zorowitz2020(seeds: int, path: str | None, make_check: Callable[..., Check]) -> list[Check]:
    """Model-based agents that lapse (epsilon 0.25) learn the corridor with optimism 1, 0.5 and 0
    (neuro-nav's `w_value`): the optimist walks past the loss to the reward, the pessimist,
    expecting its own lapses, keeps away from the loss and so from the reward behind it."""
    from tasks.grid.maps import build_grid_task, parse_template

    task = build_grid_task(parse_template(CORRIDOR, "zorowitz2020 corridor")["small"], "zorowitz2020/corridor")
    weights = (1.0, 0.5, 0.0)
    goal: dict[float, list[float]] = {w: [] for w in weights}  # share of the last 50 episodes that reached the reward
    loss: dict[float, list[float]] = {w: [] for w in weights}  # ... and that ended on the loss
    shown: dict[float, tuple[np.ndarray, list[tuple[int, int]]]] = {}
    runs = [(seed, w) for seed in range(seeds) for w in weights]  # the lanes of one batched agent
    env = GridEnv(task=task, max_episode_steps=50)
    lanes_env = GridVectorEnv(len(runs), task=task, max_episode_steps=50, autoreset_mode="disabled")
    agent: Any = make_batched("mbv", env.n_states, env.n_actions, seeds=[seed for seed, _ in runs],
                         settings=[{"lr": 0.05, "epsilon": 0.25, "gamma": 0.95, "optimism": w} for _, w in runs])
    played = play_lanes(lanes_env, agent, 100, env_seeds=[seed for seed, _ in runs])
    for lane, ((seed, w), episodes) in enumerate(zip(runs, played)):
        returns = np.array([e.reward for e in episodes[-50:]])
        goal[w].append(float(np.mean(returns > 0)))
        loss[w].append(float(np.mean(returns < 0)))
        if seed == 0:
            shown[w] = (agent.q[lane].copy(), _greedy_path(agent.q[lane], np.asarray(env.compiled.move), env.n))
    share = {w: float(np.mean(goal[w])) for w in weights}
    hit = {w: float(np.mean(loss[w])) for w in weights}
    if path is not None:
        _draw_zorowitz(shown, share, np.asarray(env.compiled.wall), path)
    return [
        make_check("optimist (1): episodes reaching the reward", share[1.0], "the optimist reaches the reward",
                   share[1.0] > 0.7),
        make_check("pessimist (0): episodes reaching the reward", share[0.0], "the pessimist avoids the path",
                   share[0.0] < 0.1),
        make_check("pessimist (0): episodes ending on the loss", hit[0.0], "the pessimist steps on the loss less often",
                   hit[0.0] < hit[1.0]),
    ]


def _draw_zorowitz(shown: dict[float, tuple[np.ndarray, list[tuple[int, int]]]], share: dict[float, float],
                   wall: np.ndarray, path: str) -> None:
    plt = require_matplotlib()
    fig, axes = plt.subplots(1, len(shown), figsize=(10.0, 4.6))
    n = wall.shape[0]
    cmap = plt.get_cmap("RdBu").with_extremes(bad="0.35")
    for ax, (w, (q, walk)) in zip(axes, shown.items()):
        values = np.ma.masked_array(q.max(axis=1).reshape(n, n), wall)[:, 2 : n - 2]
        scale = max(float(np.abs(values).max()), 1e-3)
        image = ax.imshow(values, cmap=cmap, vmin=-scale, vmax=scale)
        rows, cols = zip(*walk)
        ax.plot(np.asarray(cols) - 2, rows, "k.-", linewidth=1.5)
        ax.plot(GOAL[1] - 2, GOAL[0], "*", color="gold", markersize=14, markeredgecolor="k")
        ax.plot(HAZARD[1] - 2, HAZARD[0], "X", color="crimson", markersize=11, markeredgecolor="k")
        ax.set_title(f"optimism {w:g}\nreward reached in {share[w]:.0%} of episodes", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(image, ax=ax, shrink=0.75, label="best action's value (seed 0)")
    fig.suptitle("Zorowitz et al. 2020: greedy path from the start (black), reward (star), loss (X)", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
