"""Checks of the decision tasks' reproductions (data/decision/, docs/decision-tasks.md): each
reads the recorded trials back from the store with one Cypher query and measures the
task's classic effect (perseveration after a reversal, choose-A / avoid-B, deck preference,
switching)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np

from .figures import mean_and_error, plot_bars
from .ids import experiment_uid
from .records import step_rows


class Choices:
    """One run's first-step choices, in trial order: phase, action, reward, condition."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.phase: list[int] = []
        self.action: list[int] = []
        self.reward: list[float] = []
        self.condition: list[str] = []


def recorded_choices(store: Any, name: str) -> list[Choices]:
    """Every run's choices (the first step of each episode), from the recorded trials
    (`records.step_rows`: Trial nodes or chunks)."""
    runs: dict[int, Choices] = {}
    for row in step_rows(store, name, (0,)):
        choices = runs.setdefault(int(row["run"]), Choices(str(row["label"])))
        choices.phase.append(int(row["phase_index"]))
        choices.action.append(int(row["action"]))
        choices.reward.append(float(row["reward"]))
        choices.condition.append(row["condition"] or "")
    return [runs[k] for k in sorted(runs)]


def by_label(values: list[tuple[str, float]]) -> dict[str, np.ndarray]:
    out: dict[str, list[float]] = {}
    for label, value in values:
        out.setdefault(label, []).append(value)
    return {label: np.asarray(v) for label, v in out.items()}


def gap_check(
    make: Callable[..., Any], name: str, high: np.ndarray, low: np.ndarray, finding: str, unit: str = ""
) -> Any:
    """`high` larger than `low` by more than two standard errors of the difference (independent runs;
    with a single run on a side there is no standard error, and the gap need only be positive)."""
    gap = float(high.mean() - low.mean())
    if min(len(high), len(low)) < 2:
        return make(name, gap, f"{finding}: {high.mean():.2f} vs {low.mean():.2f}{unit} (one run: no standard error)",
                    gap > 0)
    se = float(np.sqrt(high.var(ddof=1) / len(high) + low.var(ddof=1) / len(low)))
    return make(name, gap, f"{finding}: {high.mean():.2f} vs {low.mean():.2f}{unit}, gap > 2 SE = {2 * se:.2f}",
                 gap > 2 * se)


def _bars(per_label: dict[str, np.ndarray], group: str, path: str, ylabel: str, title: str) -> None:
    plot_bars(mean_and_error({(label, group): list(v) for label, v in per_label.items()}), path, ylabel, title)


# -- probabilistic reversal learning ---------------------------------------------------------
def perseverative_errors(choices: Choices, better: Callable[[str], int]) -> float:
    """Mean over reversals of the run of choices of the formerly better option that starts at
    the first trial after the reversal (0: the learner switched at once)."""
    runs = []
    conditions = choices.condition
    for i in range(1, len(conditions)):
        if conditions[i] != conditions[i - 1]:
            old = better(conditions[i - 1])
            n = 0
            while i + n < len(conditions) and conditions[i + n] == conditions[i] and choices.action[i + n] == old:
                n += 1
            runs.append(n)
    return float(np.mean(runs)) if runs else float("nan")


def _reversal_better(condition: str) -> int:
    return 0 if condition == "A-better" else 1


def reversal_errors(store: Any, name: str) -> dict[str, np.ndarray]:
    """Each agent's perseverative errors per run."""
    return by_label([(c.label, perseverative_errors(c, _reversal_better)) for c in recorded_choices(store, name)])


def reversal_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    errors = reversal_errors(store, name)
    labels = sorted(errors, key=lambda label: float(label.split("lr=")[1]))
    low, high = errors[labels[0]], errors[labels[-1]]
    means = [float(errors[label].mean()) for label in labels]
    return [
        gap_check(make, f"perseverative errors, {labels[0]} minus {labels[-1]}", low, high,
                  "a slow learner keeps choosing the formerly better option longer", " trials"),
        make("perseverative errors fall as lr rises", means[0] - means[-1],
             "errors: " + ", ".join(f"{label} {m:.2f}" for label, m in zip(labels, means)),
             all(a > b for a, b in pairwise(means))),
    ]


def draw_reversal(store: Any, name: str, path: str) -> None:
    _bars(reversal_errors(store, name), "after a reversal", path,
          "perseverative errors (trials)", f"{name}: choices of the formerly better option")


CRITERION_QUERY = (
    "MATCH (x:Experiment)-[:HAS_RUN]->(r:Run), (s:State)-[:HAS_REWARD]->(w:Reward) "
    "WHERE x.name = $name AND s.task = r.task AND w.kind = 'reversal' RETURN DISTINCT w.criterion"
)


def better_options(actions: list[int], criterion: int, options: int = 2) -> list[str]:
    """The better option of every trial of a reversal-on-criterion session, replayed from the
    choices (the rule of the `reversal` reward kind: option A first; a run of `criterion`
    choices of the better option hands the lead to the next)."""
    better, streak, out = 0, 0, []
    for action in actions:
        out.append(f"{'ABCDEFGH'[better]}-better")
        streak = streak + 1 if action == better else 0
        if streak >= criterion:
            better, streak = (better + 1) % options, 0
    return out


def criterion_runs(store: Any, name: str) -> list[Choices]:
    """Every run's choices, each trial's condition the better option replayed from the choices."""
    (criterion,) = (int(row[0]) for row in store.cypher(CRITERION_QUERY, {"name": name}).rows)
    runs = recorded_choices(store, name)
    for c in runs:
        c.condition = better_options(c.action, criterion)
    return runs


def criterion_measures(runs: list[Choices]) -> dict[tuple[str, str], list[float]]:
    """Per (agent, measure): the runs' perseverative errors and their numbers of reversals."""
    out: dict[tuple[str, str], list[float]] = {}
    for c in runs:
        out.setdefault((c.label, "perseverative errors"), []).append(perseverative_errors(c, _reversal_better))
        reversals = sum(a != b for a, b in pairwise(c.condition))
        out.setdefault((c.label, "reversals"), []).append(float(reversals))
    return out


def criterion_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    runs = criterion_runs(store, name)
    m = {key: np.asarray(v) for key, v in criterion_measures(runs).items()}
    labels = sorted({label for label, _ in m}, key=lambda label: float(label.split("lr=")[1]))
    errors = [float(m[label, "perseverative errors"].mean()) for label in labels]
    reversals = [float(m[label, "reversals"].mean()) for label in labels]
    return [
        gap_check(make, f"perseverative errors, {labels[0]} minus {labels[-1]}", m[labels[0], "perseverative errors"],
                  m[labels[-1], "perseverative errors"], "a slow learner keeps choosing the formerly better option",
                  " trials"),
        make("perseverative errors fall as lr rises", errors[0] - errors[-1],
             "errors: " + ", ".join(f"{label} {e:.2f}" for label, e in zip(labels, errors)),
             all(a > b for a, b in pairwise(errors))),
        make("reversals earned rise as lr rises", reversals[-1] - reversals[0],
             f"reversals in {len(runs[0].action)} trials: "
             + ", ".join(f"{label} {r:.1f}" for label, r in zip(labels, reversals)),
             all(a < b for a, b in pairwise(reversals))),
    ]


def draw_criterion(store: Any, name: str, path: str) -> None:
    plot_bars(mean_and_error(criterion_measures(criterion_runs(store, name))), path,
              {"perseverative errors": "perseverative errors (trials)", "reversals": "reversals earned (per session)"},
              f"{name}: after each reversal, and reversals earned", ("perseverative errors", "reversals"))


# -- probabilistic selection -------------------------------------------------------------------
STIMULI = "ABCDEF"
CHANCE = np.full(2, 0.5)  # a choice between two stimuli at random: no spread


def _test_pairs(choices: Choices, stimulus: str) -> list[tuple[str, int]]:
    """The novel test pairs with `stimulus` (not AB): (the other stimulus, the action chosen)."""
    out = []
    for condition, action in zip(choices.condition, choices.action):
        if condition.startswith("test-") and condition != "test-AB" and stimulus in condition[5:]:
            other = condition[5:].replace(stimulus, "")
            out.append((other, action))
    return out


def choose_a(choices: Choices) -> float:
    """P(A chosen) in the test pairs AC, AD, AE, AF."""
    return float(np.mean([action == 0 for _, action in _test_pairs(choices, "A")]))


def avoid_b(choices: Choices) -> float:
    """P(B not chosen) in the test pairs BC, BD, BE, BF."""
    return float(np.mean([action != 1 for _, action in _test_pairs(choices, "B")]))


def training_accuracy(choices: Choices, pair: str, last: int = 60) -> float:
    """P(the better stimulus of `pair`, its first letter) over the pair's trials in the last `last` training trials."""
    training = [(c, a) for c, a in zip(choices.condition, choices.action) if not c.startswith("test-")][-last:]
    better = STIMULI.index(pair[0])
    return float(np.mean([a == better for c, a in training if c == pair]))


def selection_measures(store: Any, name: str) -> dict[tuple[str, str], list[float]]:
    """Per (agent, measure) the runs' values: accuracy on AB, CD, EF in the last training block,
    choose A and avoid B in the test."""
    out: dict[tuple[str, str], list[float]] = {}
    for c in recorded_choices(store, name):
        for pair in ("AB", "CD", "EF"):
            out.setdefault((c.label, f"training {pair}"), []).append(training_accuracy(c, pair))
        out.setdefault((c.label, "choose A"), []).append(choose_a(c))
        out.setdefault((c.label, "avoid B"), []).append(avoid_b(c))
    return out


def paired_check(
    make: Callable[..., Any], name: str, high: np.ndarray, low: np.ndarray, finding: str
) -> Any:
    """`high` larger than `low`, two measures of the same runs, by more than two standard errors
    of their runs' differences."""
    diff = high - low
    gap = float(diff.mean())
    se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
    return make(name, gap, f"{finding}: {high.mean():.2f} vs {low.mean():.2f}, difference > 2 SE = {2 * se:.2f}",
                gap > 2 * se)


def selection_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    m = {key: np.asarray(v) for key, v in selection_measures(store, name).items()}
    ab, cd, ef = (float(m["Q", f"training {p}"].mean()) for p in ("AB", "CD", "EF"))
    opal = [
        paired_check(make, "OpAL Go learner: choose A > avoid B", m["Go learner", "choose A"],
                     m["Go learner", "avoid B"], "a learner led by its Go actor chooses A more than it avoids B"),
        paired_check(make, "OpAL NoGo learner: avoid B > choose A", m["NoGo learner", "avoid B"],
                     m["NoGo learner", "choose A"], "a learner led by its NoGo actor avoids B more than it chooses A"),
    ]
    return [
        make("Q: training accuracy AB > CD > EF", ab - ef, f"the larger a pair's difference, the better it is learnt: "
             f"AB {ab:.2f}, CD {cd:.2f}, EF {ef:.2f} (last block)", ab > cd > ef),
        gap_check(make, "Q: choose A above chance", m["Q", "choose A"], CHANCE,
                  "A is chosen over the novel partners C-F"),
        gap_check(make, "Q: avoid B above chance", m["Q", "avoid B"], CHANCE,
                  "B is avoided against the novel partners C-F"),
        *opal,
    ]


def draw_selection(store: Any, name: str, path: str) -> None:
    plot_bars(mean_and_error(selection_measures(store, name)), path, "P(better choice)",
              f"{name}: training (last block) and test", ("training AB", "training CD", "training EF",
                                                          "choose A", "avoid B"), (0, 1.05), 0.5)


# -- Iowa gambling task ---------------------------------------------------------------------------
GOOD_DECKS = (2, 3)  # C and D


def good_deck_blocks(store: Any, name: str, block: int = 20) -> dict[tuple[str, str], list[float]]:
    """Per (agent, block of `block` trials) the runs' share of choices of the good decks C, D."""
    out: dict[tuple[str, str], list[float]] = {}
    for c in recorded_choices(store, name):
        good = np.isin(c.action, GOOD_DECKS)
        for start in range(0, len(good), block):
            out.setdefault((c.label, f"trials {start + 1}-{start + block}"), []).append(
                float(good[start:start + block].mean()))
    return out


def iowa_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    blocks = {key: np.asarray(v) for key, v in good_deck_blocks(store, name).items()}
    names = sorted({b for _, b in blocks}, key=lambda b: int(b.split()[1].split("-")[0]))
    out = []
    for label in sorted({a for a, _ in blocks}):
        first, last = blocks[label, names[0]], blocks[label, names[-1]]
        out.append(gap_check(make, f"{label}: good decks, last minus first block", last, first,
                             f"choices drift to the good decks C and D ({names[-1]} vs {names[0]})"))
    return out


def draw_iowa(store: Any, name: str, path: str) -> None:
    table = mean_and_error(good_deck_blocks(store, name))
    order = tuple(sorted({b for _, b in table}, key=lambda b: int(b.split()[1].split("-")[0])))
    plot_bars(table, path, "P(deck C or D)", f"{name}: choices of the good decks", order, (0, 1.05), 0.5)


# -- restless bandit ------------------------------------------------------------------------------
def switch_rates(store: Any, name: str) -> dict[str, np.ndarray]:
    """Each agent's share of trials whose choice differs from the trial before, per run."""
    values = []
    for c in recorded_choices(store, name):
        actions = np.asarray(c.action)
        values.append((c.label, float(np.mean(actions[1:] != actions[:-1]))))
    return by_label(values)


def restless_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    rates = switch_rates(store, name)
    labels = sorted(rates, key=lambda label: float(label.split("beta=")[1]))
    means = [float(rates[label].mean()) for label in labels]
    return [
        gap_check(make, f"switches, {labels[0]} minus {labels[-1]}", rates[labels[0]], rates[labels[-1]],
                  "a softmax chooser with a low beta explores other arms more often"),
        make("switching falls as beta rises", means[0] - means[-1],
             "switch rate: " + ", ".join(f"{label} {m:.2f}" for label, m in zip(labels, means)),
             all(a > b for a, b in pairwise(means))),
    ]


def draw_restless(store: Any, name: str, path: str) -> None:
    _bars(switch_rates(store, name), "per trial", path, "P(switch arm)", f"{name}: switching by inverse temperature")


# -- the horizon task -----------------------------------------------------------------------------------
FORCED_CHOICES = 4  # a horizon game's forced choices: its first free choice is step 4
HORIZON_NULL = 0.15  # a horizon effect smaller than this is none (3 SE of a gap between 16 runs' shares)


def less_known_arm(condition: str) -> int | None:
    """The arm forced once in an unequal game ('h6-unequal-LRRR' -> 0, left); None in an equal one."""
    _, info, pattern = condition.split("-")
    if info != "unequal":
        return None
    return 0 if pattern.count("L") == 1 else 1


def directed_exploration(store: Any, name: str) -> dict[tuple[str, str], list[float]]:
    """Per (agent, horizon) each run's share of unequal games whose first free choice was the
    arm forced once (the less-known one)."""
    per_run: dict[tuple[str, str, int], list[bool]] = {}
    rows = [(r["run"], r["label"], r["action"], r["condition"]) for r in step_rows(store, name, (FORCED_CHOICES,))]
    for run, label, action, condition in rows:
        arm = less_known_arm(str(condition))
        if arm is not None:
            horizon = f"horizon {str(condition).split('-')[0][1:]}"
            per_run.setdefault((str(label), horizon, int(run)), []).append(int(action) == arm)
    out: dict[tuple[str, str], list[float]] = {}
    for (label, horizon, _), chosen in sorted(per_run.items()):
        out.setdefault((label, horizon), []).append(float(np.mean(chosen)))
    return out


def horizon_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    m = {key: np.asarray(v) for key, v in directed_exploration(store, name).items()}
    checks = [gap_check(make, "info bonus: less-known arm, horizon 6 minus horizon 1", m["info bonus", "horizon 6"],
                        m["info bonus", "horizon 1"], "directed exploration grows with the horizon")]
    bonus_gap = float(m["info bonus", "horizon 6"].mean() - m["info bonus", "horizon 1"].mean())
    for label in ("no bonus", "Q"):
        high, low = m[label, "horizon 6"], m[label, "horizon 1"]
        gap = float(high.mean() - low.mean())
        checks.append(make(f"{label}: less-known arm, horizon 6 minus horizon 1", gap,
                           f"without an information bonus the horizon hardly matters: {high.mean():.2f} vs "
                           f"{low.mean():.2f} (|gap| < {HORIZON_NULL}, below the info bonus's {bonus_gap:.2f})",
                           abs(gap) < HORIZON_NULL and gap < bonus_gap))
    return checks


def draw_horizon(store: Any, name: str, path: str) -> None:
    plot_bars(mean_and_error(directed_exploration(store, name)), path, "P(less-known arm), first free choice",
              f"{name}: directed exploration in [1, 3] games", ("horizon 1", "horizon 6"), (0, 1.05), 0.5)


# -- patch foraging (a study: it reads the learnt policy) -------------------------------------------
FORAGING = "decision/patch-foraging"
FORAGING_TRAVEL = (1, 8)  # short and long travel: steps between leaving and the next patch, besides the leave step


def patch_states(graph: Any) -> list[int]:
    """The patch states of a foraging task in order of harvests given (0, 1, 2, ...), from their names."""
    found = {}
    for _, props in graph.nodes("State"):
        name = str(props["name"])
        if name.startswith("fresh patch"):
            found[0] = int(props["index"])
        elif name.startswith("patch, "):
            found[int(name.split()[1])] = int(props["index"])
    return [found[k] for k in sorted(found)]


def harvest_rewards(graph: Any) -> list[float]:
    """What the k-th harvest of a patch pays (k = 1, 2, ...): the reward of the patch state it reaches."""
    rewards = {}
    for source, target, _ in graph.edges("HAS_REWARD"):
        rewards[int(graph.props(source)["index"])] = float(graph.props(target)["values"][0])
    return [rewards.get(s, 0.0) for s in patch_states(graph)[1:]]


def mvt_harvests(rewards: list[float], travel: int) -> int:
    """The marginal value theorem's number of harvests per patch: the one that maximises the
    long-run rate (harvests' sum over harvest steps, the leave step and `travel` steps)."""
    return max(range(1, len(rewards) + 1), key=lambda n: sum(rewards[:n]) / (n + travel + 1))


def learnt_harvests(agent: Any, states: list[int]) -> int:
    """Harvests a greedy policy takes before it leaves: the first patch state where leave (1)
    is worth more than harvest (0)."""
    q = np.asarray(agent.values())[states]
    leave = np.flatnonzero(q[:, 1] > q[:, 0])
    return int(leave[0]) if leave.size else len(states)


def foraging_study(seeds: int, path: str | None, make: Callable[..., Any]) -> list[Any]:
    """Q-learners (optimistic start, discount 0.95) forage for 50 stretches of 200 steps with a
    short and a long travel time; the number of harvests before their learnt policy leaves a
    patch follows the marginal value theorem's order: longer travel, later leaving."""
    import tasks
    from gym_bridge import GraphTaskEnv
    from gym_bridge.agents import make_agent
    from gym_bridge.episodes import SeedTree, play

    learnt: dict[int, list[float]] = {}
    optimum: dict[int, int] = {}
    for travel in FORAGING_TRAVEL:
        graph = tasks.build(f"{FORAGING}?travel={travel}")
        states = patch_states(graph)
        optimum[travel] = mvt_harvests(harvest_rewards(graph), travel)
        env = GraphTaskEnv(graph, max_episode_steps=200)
        for seed in range(seeds):
            agent = make_agent("q", env.compiled.n_states, 2, seed=seed, lr=0.1, gamma=0.95, epsilon=0.1, q_init=50.0)
            for _ in play(env, agent, 50, SeedTree(seed).env(0)):
                pass
            learnt.setdefault(travel, []).append(float(learnt_harvests(agent, states)))
    short, long = (np.asarray(learnt[t]) for t in FORAGING_TRAVEL)
    if path is not None:
        table = {("Q-learner", f"travel {t}"): v for t, v in learnt.items()}
        plot_bars(mean_and_error(table), path, "harvests before leaving a patch", f"{FORAGING}: leaving times",
                  reference={f"travel {t}": float(optimum[t]) for t in FORAGING_TRAVEL},
                  reference_label="marginal value theorem (optimum)")
    return [
        gap_check(make, f"harvests before leaving, travel {FORAGING_TRAVEL[1]} minus {FORAGING_TRAVEL[0]}", long, short,
                  f"longer travel, later leaving (the theorem: {optimum[FORAGING_TRAVEL[1]]} vs "
                  f"{optimum[FORAGING_TRAVEL[0]]} harvests)"),
        make("within 1.5 harvests of the theorem", float(max(abs(long.mean() - optimum[FORAGING_TRAVEL[1]]),
                                                           abs(short.mean() - optimum[FORAGING_TRAVEL[0]]))),
             f"learnt {short.mean():.1f} and {long.mean():.1f} harvests, the theorem "
             f"{optimum[FORAGING_TRAVEL[0]]} and {optimum[FORAGING_TRAVEL[1]]}",
             bool(abs(long.mean() - optimum[FORAGING_TRAVEL[1]]) <= 1.5
                  and abs(short.mean() - optimum[FORAGING_TRAVEL[0]]) <= 1.5)),
    ]


# -- the cued T-maze (a grid maze; a study: the agent's state is or is not given the cue) -------------------
CUED_MAZE = "decision/grid/cued_t_maze"
CUES = ("left", "right")


def cued_maze_study(seeds: int, path: str | None, make: Callable[..., Any]) -> list[Any]:
    """Q-learners (epsilon 0.1) run 300 episodes of the cued T-maze, the cued arm drawn at random
    for each. One keeps the cue (its state is the cue and its cell: a Q table per cue), one sees
    its cell alone (one table). Measured: the share of the last 100 episodes that end at the
    cued arm's reward."""
    from gym_bridge import GridEnv
    from gym_bridge.agents import make_agent
    from gym_bridge.episodes import play
    from gym_bridge.views import index_sizes

    envs = {cue: GridEnv(task=f"{CUED_MAZE}/{cue}", store=":memory:", max_episode_steps=50) for cue in CUES}
    n_states, n_actions = index_sizes(envs["left"])
    found: dict[str, list[float]] = {"keeps the cue": [], "cell only": []}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        cues = [CUES[i] for i in rng.integers(2, size=300)]
        settings = dict(lr=0.2, gamma=0.95, epsilon=0.1)
        per_cue = {cue: make_agent("q", n_states, n_actions, seed=seed, **settings) for cue in CUES}
        blind = make_agent("q", n_states, n_actions, seed=seed, **settings)
        for label, agent_of in (("keeps the cue", per_cue.__getitem__), ("cell only", lambda cue: blind)):
            rewarded = []
            for k, cue in enumerate(cues):  # the maze is deterministic: the env's seed changes nothing
                (episode,) = play(envs[cue], agent_of(cue), 1, k)
                rewarded.append(episode.reward > 0)
            found[label].append(float(np.mean(rewarded[-100:])))
    keeps, blind_share = (np.asarray(found[k]) for k in ("keeps the cue", "cell only"))
    if path is not None:
        plot_bars(mean_and_error({(label, "last 100 episodes"): v for label, v in found.items()}), path,
                  "P(episode ends at the cued arm)", f"{CUED_MAZE}: Q-learners with and without the cue",
                  (), (0, 1.05), 0.5)
    return [
        gap_check(make, "keeps the cue: cued arm, minus chance", keeps, np.full(2, 0.5),
                  "a learner that keeps the cue goes to the cued arm"),
        make("cell only: |cued arm - chance|", float(abs(blind_share.mean() - 0.5)),
             f"a learner without the cue cannot tell the arms apart: {blind_share.mean():.2f} (within 0.1 of 0.5)",
             bool(abs(blind_share.mean() - 0.5) < 0.1)),
    ]


# -- Tolman's latent learning (a grid maze) ----------------------------------------------------------
def test_steps(store: Any, name: str) -> dict[tuple[str, str], list[float]]:
    """Per (agent, condition) each run's mean steps from the start to the goal in the test phase."""
    from .records import recorded_episodes

    per_run: dict[tuple[str, str, int], list[float]] = {}
    for row in recorded_episodes(store, name):
        if row["phase"] == "test":
            per_run.setdefault((row["label"], row["condition"], row["run"]), []).append(float(row["length"]))
    out: dict[tuple[str, str], list[float]] = {}
    for (label, condition, _), lengths in sorted(per_run.items()):
        out.setdefault((label, condition), []).append(float(np.mean(lengths)))
    return out


def latent_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    steps = {key: np.asarray(v) for key, v in test_steps(store, name).items()}
    checks = [
        gap_check(make, f"{label}: steps, naive minus pre-exposed", steps[label, "naive"], steps[label, "pre-exposed"],
                  f"a learner with a map ({label}) uses what it explored once the reward is known", " steps")
        for label in ("model-based", "SR")
    ]
    q_gap = float(steps["Q", "naive"].mean() - steps["Q", "pre-exposed"].mean())
    checks.append(make("Q: steps, naive minus pre-exposed", q_gap,
                       "Q-learning learns nothing while no reward is paid: pre-exposure does not help it",
                       abs(q_gap) < 5.0))
    return checks


TEST_LIMIT_QUERY = (
    "MATCH (p:Phase) WHERE p.owner = $uid AND p.name = 'test' AND p.max_steps IS NOT NULL RETURN DISTINCT p.max_steps"
)


def draw_latent(store: Any, name: str, path: str) -> None:
    """Bars of the test's steps to the goal, and the episode limit: a bar at the limit is a learner
    that did not reach the goal, not one that took that many steps to it."""
    limits = [int(row[0]) for row in store.cypher(TEST_LIMIT_QUERY, {"uid": experiment_uid(name)}).rows]
    plot_bars(mean_and_error(test_steps(store, name)), path, "steps from the start to the goal (test, greedy)",
              f"{name}: after exploring the maze without reward, or not", ("pre-exposed", "naive"),
              reference=max(limits) if limits else None, reference_label="episode limit: goal not reached")
