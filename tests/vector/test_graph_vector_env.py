"""GraphVectorEnv against the single GraphTaskEnv: exact on deterministic tasks, in distribution
on stochastic ones; gymnasium conventions (spaces, make_vec, autoreset modes, wrappers).

gymnasium 1.4 ships no checker for vector envs (only `check_env` for single envs), so the
checks it would make (spaces contain every batch, dtypes, seeding, autoreset metadata) are here.
"""

from __future__ import annotations

import pickle
from collections import Counter, defaultdict
from functools import lru_cache

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import gym_bridge
import tasks
from gym_bridge import GraphTaskEnv, compile_task
from gym_bridge.graph.observations import GRAPH_OBSERVATIONS, GraphObservation
from gym_bridge.vector import GraphVectorEnv
from tasks.rewards import reflect


def copy_row(obs, r, term, trunc, info, i: int) -> tuple:
    """Copy i's part of a batch step, in the form the single-env streams use."""
    return (np.asarray(obs[i]).tolist(), float(r[i]), bool(term[i]), bool(trunc[i]), int(info["state"][i]))


@lru_cache(maxsize=None)
def compiled(task_id: str):
    return compile_task(tasks.build(task_id))


def is_deterministic(task_id: str) -> bool:
    c = compiled(task_id)
    return c.targets.shape[2] == 1 and all(s is None or s.kind == "fixed" for s in c.reward_specs)


GRAPH_TASKS = tasks.builtin_ids("graph")  # neuro-nav graphs, rewardGym and decision tasks
DETERMINISTIC = [t for t in GRAPH_TASKS if is_deterministic(t)]
STOCHASTIC = [t for t in GRAPH_TASKS if not is_deterministic(t)]


def reward_kinds(task_id: str) -> set[str]:
    return {s.kind for s in compiled(task_id).reward_specs if s is not None}


# Walk payoffs follow slow random walks that start where the task says, and reversal tasks change
# their better option after runs of choices: one long session and many short ones do not average
# alike, so those tasks are compared trial by trial across sessions.
SESSION_KINDS = {"walk", "reversal"}
WALKS = [t for t in STOCHASTIC if reward_kinds(t) & SESSION_KINDS]
SEQUENCES = [t for t in STOCHASTIC if reward_kinds(t) == {"sequence"} and compiled(t).targets.shape[2] == 1]


def single_next_step_stream(env: GraphTaskEnv, actions: np.ndarray, seed: int) -> list[tuple]:
    """What one copy of a NEXT_STEP vector env must return, produced by the single env."""
    obs, info = env.reset(seed=seed)
    out, ended = [], False
    for a in actions:
        if ended:
            obs, info = env.reset()
            out.append((np.asarray(obs).tolist(), 0.0, False, False, info["state"]))
            ended = False
            continue
        obs, r, term, trunc, info = env.step(int(a))
        out.append((np.asarray(obs).tolist(), float(r), bool(term), bool(trunc), info["state"]))
        ended = term or trunc
    return out


def vector_stream(venv: GraphVectorEnv, actions: np.ndarray, seed: int) -> list[list[tuple]]:
    venv.reset(seed=seed)
    per_copy: list[list[tuple]] = [[] for _ in range(venv.num_envs)]
    for row in actions:
        obs, r, term, trunc, info = venv.step(row)
        for i in range(venv.num_envs):
            per_copy[i].append(copy_row(obs, r, term, trunc, info, i))
    return per_copy


# -- exact equality where no randomness is involved -------------------------------------------------
@pytest.mark.parametrize("task_id", DETERMINISTIC)
@pytest.mark.parametrize("obs_type", ["index", "onehot"])
def test_every_copy_equals_the_single_env_on_deterministic_tasks(task_id, obs_type):
    settings = dict(obs_type=obs_type, time_penalty=0.05, use_noop=True, episode_length=7)
    venv = GraphVectorEnv(8, task=compiled(task_id), **settings)
    actions = np.random.default_rng(1).integers(0, venv.n_actions, (60, 8))
    got = vector_stream(venv, actions, seed=0)
    for i in range(8):
        single = GraphTaskEnv(compiled(task_id), **settings)
        assert got[i] == single_next_step_stream(single, actions[:, i], seed=0), f"copy {i}"


@pytest.mark.parametrize("obs_type", list(GRAPH_OBSERVATIONS))
def test_every_registered_observation_type_equals_the_single_env(obs_type):
    """Each type's batched observe is its single observe, copy by copy (built-in and user types)."""
    settings = dict(obs_type=obs_type, use_noop=True, episode_length=6)
    task = compiled("neuronav/graph/neighborhood")
    venv = GraphVectorEnv(4, task=task, **settings)
    actions = np.random.default_rng(4).integers(0, venv.n_actions, (30, 4))
    got = vector_stream(venv, actions, seed=0)
    for i in range(4):
        assert got[i] == single_next_step_stream(GraphTaskEnv(task, **settings), actions[:, i], seed=0), f"copy {i}"


def test_a_user_observation_class_runs_in_both_envs():
    class Parity(GraphObservation):
        """1 on even states."""

        name = "parity-test"

        def __init__(self, compiled, store=None):
            super().__init__(compiled, store)
            table = (np.arange(compiled.n_states) % 2 == 0).astype(np.float32)[:, None]
            self.use_table(gym.spaces.Box(0.0, 1.0, (1,), np.float32), table)

    GRAPH_OBSERVATIONS.register(Parity)
    try:
        test_every_registered_observation_type_equals_the_single_env("parity-test")
    finally:
        GRAPH_OBSERVATIONS.unregister("parity-test")


def test_deterministic_conditions_match_the_single_env_exactly():
    checked = 0
    for task_id in STOCHASTIC:
        for name in compiled(task_id).conditions:
            venv = GraphVectorEnv(4, task=compiled(task_id), condition=name, episode_length=5)
            if not venv.tables.fast:
                continue  # random under this condition: covered by the distribution tests
            actions = np.random.default_rng(2).integers(0, venv.n_actions, (20, 4))
            got = vector_stream(venv, actions, seed=0)
            for i in range(4):
                single = GraphTaskEnv(compiled(task_id), condition=name, episode_length=5)
                assert got[i] == single_next_step_stream(single, actions[:, i], seed=0), f"{task_id} {name} copy {i}"
            checked += 1
    assert checked >= 5


# -- distributions where draws differ ----------------------------------------------------------------
def frequencies(step_pairs) -> tuple[dict, dict]:
    """Next-state frequencies and reward sums per (state, action) from (s, a, s', r) tuples."""
    moves: dict = defaultdict(Counter)
    rewards: dict = defaultdict(list)
    for s, a, t, r in step_pairs:
        moves[(s, a)][t] += 1
        rewards[(s, a)].append(r)
    return moves, rewards


def single_pairs(task_id: str, n_steps: int, seed: int, **kw):
    env = GraphTaskEnv(compiled(task_id), **kw)
    _, info = env.reset(seed=seed)
    actions = np.random.default_rng(seed + 100).integers(0, env.action_space.n, n_steps)
    s = info["state"]
    for a in actions:
        _, r, term, trunc, info = env.step(int(a))
        yield s, int(a), info["state"], r
        s = env.reset()[1]["state"] if term or trunc else info["state"]


def vector_pairs(task_id: str, n_copies: int, n_steps: int, seed: int, **kw):
    venv = GraphVectorEnv(n_copies, task=compiled(task_id), autoreset_mode="SameStep", **kw)
    _, info = venv.reset(seed=seed)
    rng = np.random.default_rng(seed + 100)
    s = info["state"]
    for _ in range(n_steps):
        a = rng.integers(0, venv.n_actions, n_copies)
        _, r, term, trunc, info = venv.step(a)
        arrived = info["state"]
        if "final_info" in info:  # SAME_STEP: where a copy ended, it arrived at its final state
            arrived = np.where(term | trunc, info["final_info"]["state"], info["state"])
        yield from zip(s.tolist(), a.tolist(), arrived.tolist(), r.tolist())
        s = info["state"]


@pytest.mark.parametrize("task_id", [t for t in STOCHASTIC if t not in WALKS])
def test_transition_frequencies_and_reward_means_match_the_single_env(task_id):
    kw = dict(stochasticity=0.1, time_penalty=0.01)
    single_moves, single_rewards = frequencies(single_pairs(task_id, 60_000, seed=3, **kw))
    vec_moves, vec_rewards = frequencies(vector_pairs(task_id, 500, 120, seed=3, **kw))
    assert set(vec_moves) == set(single_moves)
    for key, counts in single_moves.items():
        n1, n2 = sum(counts.values()), sum(vec_moves[key].values())
        for target in set(counts) | set(vec_moves[key]):
            p1, p2 = counts[target] / n1, vec_moves[key][target] / n2
            p = (counts[target] + vec_moves[key][target]) / (n1 + n2)
            tolerance = 5 * np.sqrt(p * (1 - p) * (1 / n1 + 1 / n2)) + 1e-9
            assert abs(p1 - p2) <= tolerance, f"{task_id} {key} -> {target}: single {p1:.3f} vector {p2:.3f}"
        r1, r2 = np.array(single_rewards[key]), np.array(vec_rewards[key])
        spread = np.sqrt(r1.var() / r1.size + r2.var() / r2.size)
        assert abs(r1.mean() - r2.mean()) <= 5 * spread + 1e-9, f"{task_id} {key}: {r1.mean():.3f} vs {r2.mean():.3f}"


@pytest.mark.parametrize("task_id", SEQUENCES)
def test_fixed_card_sequences_are_dealt_exactly_as_the_single_env_deals_them(task_id):
    """A sequence reward draws nothing at random: every copy's rewards equal the single env's."""
    settings = dict(time_penalty=0.05, use_noop=True, episode_length=3)
    venv = GraphVectorEnv(6, task=compiled(task_id), **settings)
    actions = np.random.default_rng(5).integers(0, venv.n_actions, (300, 6))
    got = vector_stream(venv, actions, seed=0)
    for i in range(6):
        assert got[i] == single_next_step_stream(GraphTaskEnv(compiled(task_id), **settings), actions[:, i], seed=0)


@pytest.mark.parametrize("task_id", WALKS)
def test_session_rewards_match_the_single_env_trial_by_trial(task_id):
    """Sessions of 60 one-step trials with the same choices (mostly action 0, so a reversal task
    reverses): the mean and spread of trial t's reward across 400 single-env sessions and across
    400 copies agree at every checked t (sessions are independent: their standard errors are honest)."""
    sessions, trials = 400, 60
    rng = np.random.default_rng(6)
    choices = np.where(rng.random(trials) < 0.8, 0, rng.integers(0, compiled(task_id).n_actions, trials))
    single = np.empty((sessions, trials))
    env = GraphTaskEnv(compiled(task_id))
    for k in range(sessions):
        env.reset(seed=1000 + k)
        for t, a in enumerate(choices):
            single[k, t] = env.step(int(a))[1]
            env.reset()
    venv = GraphVectorEnv(sessions, task=compiled(task_id), autoreset_mode="SameStep")
    venv.reset(seed=7)
    vector = np.stack([venv.step(np.full(sessions, a))[1] for a in choices], axis=1)
    for t in (0, 1, 10, 30, trials - 1):
        a, b = single[:, t], vector[:, t]
        se = np.sqrt(a.var() / a.size + b.var() / b.size)
        assert abs(a.mean() - b.mean()) <= 5 * se + 1e-9, f"trial {t}: mean {a.mean():.2f} vs {b.mean():.2f}"
        spread = f"trial {t}: sd {a.std():.2f} vs {b.std():.2f}"
        assert a.std() == b.std() == 0 or 0.75 < a.std() / b.std() < 1.33, spread
    if "walk" in reward_kinds(task_id):
        assert len(np.unique(vector[:, -1])) > 20  # copies walk apart
        assert single[:, -1].std() > 2 * single[:, 0].std()  # the walks spread the payoffs over the session
    if "reversal" in reward_kinds(task_id):  # option A was chosen often enough to lose its lead
        assert vector[:, choices == 0][:, :10].mean() > 0.4 > vector[:, choices == 0][:, -10:].mean()


def test_two_step_first_stage_is_70_30_in_every_column():
    venv = GraphVectorEnv(20_000, task=compiled("rewardgym/two-step"))
    venv.reset(seed=0)
    _, _, _, _, info = venv.step(np.zeros(20_000, dtype=np.int64))
    counts = np.bincount(info["state"], minlength=3)
    assert counts[1] / 20_000 == pytest.approx(0.7, abs=0.015)
    assert counts[2] / 20_000 == pytest.approx(0.3, abs=0.015)


@pytest.mark.parametrize("task_id", ["rewardgym/gonogo", "rewardgym/robotfactory", "rewardgym/risk-sensitive"])
def test_pseudorandom_decks_are_dealt_without_replacement_per_copy(task_id):
    c = compiled(task_id)
    decks = {s: sorted(spec.values) for s, spec in enumerate(c.reward_specs) if spec and spec.kind == "pseudorandom"}
    venv = GraphVectorEnv(64, task=c, autoreset_mode="SameStep")
    venv.reset(seed=1)
    rng = np.random.default_rng(0)
    drawn: dict = defaultdict(list)
    for _ in range(400):
        _, r, term, _, info = venv.step(rng.integers(0, venv.n_actions, 64))
        if "final_info" in info:
            for i in np.flatnonzero(term):
                s = int(info["final_info"]["state"][i])
                if s in decks:
                    drawn[(i, s)].append(float(r[i]))
    assert drawn
    for (i, s), values in drawn.items():
        size = len(decks[s])
        for start in range(0, len(values) - size + 1, size):
            assert sorted(values[start:start + size]) == decks[s], f"copy {i} state {s}"


def test_drifting_probabilities_stay_in_their_borders_and_differ_between_copies():
    venv = GraphVectorEnv(256, task=compiled("rewardgym/two-step"))
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(300):
        venv.step(rng.integers(0, 2, 256))
    drifting = venv.reward_sources["drifting"]
    low, high = drifting.low, drifting.high
    assert ((drifting.p >= low) & (drifting.p <= high)).all()
    assert len(np.unique(drifting.p[:, 0])) > 200


@pytest.mark.parametrize("low, high", [(0.25, 0.75), (0.0, 1.0), (0.4, 0.4)])
def test_reflection_matches_the_single_env_loop(low, high):
    p = np.random.default_rng(0).normal(0.5, 1.5, 2000)
    expected = []
    for x in p:
        if low == high:
            expected.append(low)
            continue
        while x < low or x > high:
            x = 2 * low - x if x < low else 2 * high - x
        expected.append(x)
    got = reflect(p, np.full(p.size, low), np.full(p.size, high))
    np.testing.assert_allclose(got, expected, atol=1e-12)


# -- seeding ------------------------------------------------------------------------------------
@pytest.mark.parametrize("task_id", STOCHASTIC)
def test_same_seed_same_batch_trajectory(task_id):
    def run(seed):
        venv = GraphVectorEnv(32, task=compiled(task_id), stochasticity=0.2, episode_length=4)
        actions = np.random.default_rng(0).integers(0, venv.n_actions, (50, 32))
        return vector_stream(venv, actions, seed)

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_pickled_env_continues_identically():
    venv = GraphVectorEnv(16, task=compiled("rewardgym/gonogo"))
    venv.reset(seed=2)
    actions = np.random.default_rng(0).integers(0, 2, (40, 16))
    for row in actions[:10]:
        venv.step(row)
    clone = pickle.loads(pickle.dumps(venv))
    for row in actions[10:]:
        a, b = venv.step(row), clone.step(row)
        for x, y in zip(a[:4], b[:4]):
            np.testing.assert_array_equal(x, y)


# -- gymnasium conventions --------------------------------------------------------------------------
# the graph family's ids, by the vector env they make (their entry point is make's wrapper of the env)
GRAPH_VECTOR_ENTRY = "gym_bridge.graph.vector_env:make_graph_vector_env"
VEC_IDS = sorted(i for i in gym_bridge.registered_ids() if gym.spec(i).vector_entry_point == GRAPH_VECTOR_ENTRY)


def test_the_graph_ids_are_found() -> None:
    """The ids below are chosen by their vector entry point: an empty choice would test nothing."""
    assert len(VEC_IDS) >= 10 and "graphtasks/TwoStep-v0" in VEC_IDS, VEC_IDS


@pytest.mark.parametrize("env_id", VEC_IDS)
@pytest.mark.parametrize("obs_type", ["index", "onehot", "images"])
def test_make_vec_spaces_and_batches(env_id, obs_type):
    kwargs = {"task": "neuronav/graph/neighborhood"} if env_id == "graphtasks/Graph-v0" else {}
    venv = gym.make_vec(env_id, num_envs=5, vectorization_mode="vector_entry_point", obs_type=obs_type, **kwargs)
    assert isinstance(venv.unwrapped, GraphVectorEnv)
    assert venv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    single = gym.make(env_id, obs_type=obs_type, **kwargs).unwrapped
    assert venv.single_observation_space == single.observation_space
    assert venv.single_action_space == single.action_space
    assert venv.action_space == gym.vector.utils.batch_space(single.action_space, 5)
    obs, info = venv.reset(seed=0)
    assert venv.observation_space.contains(obs) and info["state"].shape == (5,)
    venv.action_space.seed(0)
    for _ in range(30):
        obs, reward, term, trunc, info = venv.step(venv.action_space.sample())
        assert venv.observation_space.contains(obs)
        assert reward.dtype == np.float64 and term.dtype == np.bool_ and trunc.dtype == np.bool_
        assert reward.shape == term.shape == trunc.shape == (5,)
    venv.close()


def test_make_vec_defaults_to_the_native_vector_env_and_passes_max_episode_steps():
    venv = gym.make_vec("graphtasks/Graph-v0", num_envs=3, task="neuronav/graph/ring", max_episode_steps=3)
    assert isinstance(venv.unwrapped, GraphVectorEnv) and venv.unwrapped.episode_length == 3
    venv.reset(seed=0)
    truncated = [venv.step(np.zeros(3, dtype=np.int64))[3].tolist() for _ in range(4)]
    assert truncated == [[False] * 3, [False] * 3, [True] * 3, [False] * 3]


def test_record_episode_statistics_wrapper_sees_every_episode():
    venv = gym.wrappers.vector.RecordEpisodeStatistics(
        GraphVectorEnv(4, task=compiled("neuronav/graph/linear"), episode_length=None)
    )
    venv.reset(seed=0)
    lengths = []
    for _ in range(20):
        _, _, _, _, info = venv.step(np.zeros(4, dtype=np.int64))
        if "episode" in info:
            lengths.extend(info["episode"]["l"][info["_episode"]].tolist())
    assert lengths and set(lengths) == {5}  # linear: 5 moves from start to the end


# -- autoreset modes, truncation, reset options -----------------------------------------------------
def ring(mode: str, n: int = 3, length: int = 3) -> GraphVectorEnv:
    return GraphVectorEnv(n, task=compiled("neuronav/graph/ring"), episode_length=length, autoreset_mode=mode)


def test_next_step_resets_on_the_step_after_the_end():
    venv = ring("NextStep")
    obs, _ = venv.reset(seed=0)
    zeros = np.zeros(3, dtype=np.int64)
    flags = [venv.step(zeros) for _ in range(4)]
    assert [f[3].all() for f in flags] == [False, False, True, False]
    np.testing.assert_array_equal(flags[3][0], obs)  # the reset step shows the start
    assert flags[3][1].tolist() == [0.0] * 3
    assert venv.elapsed_steps.tolist() == [0, 0, 0]
    assert [venv.step(zeros)[3].all() for _ in range(3)] == [False, False, True]


def test_same_step_returns_the_start_and_the_final_observation():
    venv = ring("SameStep")
    obs0, _ = venv.reset(seed=0)
    zeros = np.zeros(3, dtype=np.int64)
    venv.step(zeros)
    _, _, _, _, info = venv.step(zeros)
    before = info["state"].copy()
    obs, _, _, trunc, info = venv.step(zeros)
    assert trunc.all() and info["_final_obs"].all()
    np.testing.assert_array_equal(obs, obs0)
    assert (info["final_obs"] != obs0).all() and (info["final_info"]["state"] != before).all()
    assert venv.step(zeros)[3].tolist() == [False] * 3


def test_disabled_leaves_ended_copies_to_a_masked_reset():
    venv = ring("Disabled")
    obs0, _ = venv.reset(seed=0)
    zeros = np.zeros(3, dtype=np.int64)
    for _ in range(3):
        obs, _, _, trunc, _ = venv.step(zeros)
    assert trunc.all()
    obs_next, _, _, trunc, _ = venv.step(zeros)  # no reset: copies keep walking, truncated again
    assert trunc.all() and (obs_next != obs).all() and venv.elapsed_steps.tolist() == [4, 4, 4]
    obs_next, _, _, _, _ = venv.step(zeros)  # 5 steps: at state 1 again (action 0 walks 0 -> 1 -> 0 on the ring)
    mask = np.array([True, False, True])
    obs, _ = venv.reset(options={"reset_mask": mask})
    assert obs[0] == obs0[0] and obs[2] == obs0[2] and obs[1] == obs_next[1]
    assert obs_next[1] != obs0[1] and venv.elapsed_steps.tolist() == [0, 5, 0]


def test_next_step_mode_makes_terminated_copies_restart_independently():
    venv = GraphVectorEnv(2, task=compiled("neuronav/graph/linear"), episode_length=None)
    venv.reset(seed=0)
    ends = []
    for t in range(12):
        _, _, term, _, info = venv.step(np.zeros(2, dtype=np.int64))
        ends.append(term.tolist())
    assert ends[4] == [True, True] and ends[10] == [True, True] and sum(map(sum, ends)) == 4


def test_reset_options_condition_and_start():
    hcp = GraphVectorEnv(6, task=compiled("rewardgym/hcp"))
    for outcome, value in (("win", 1.0), ("loss", -0.5), ("neutral", 0.0)):
        hcp.reset(seed=0, options={"condition": outcome})
        _, reward, term, _, _ = hcp.step(np.ones(6, dtype=np.int64))
        assert term.all() and reward.tolist() == [value] * 6
    mid = GraphVectorEnv(4, task=compiled("rewardgym/mid"))
    _, info = mid.reset(seed=0, options={"condition": "big-win"})
    assert info["state"].tolist() == [5] * 4
    _, reward, term, _, _ = mid.step(np.zeros(4, dtype=np.int64))
    assert term.all() and reward.tolist() == [5.0] * 4
    _, info = mid.reset(seed=0)  # a full reset without options: back to the default (random) condition
    assert set(info["state"].tolist()) <= {1, 2, 3, 4, 5}
    ring_env = ring("NextStep")
    _, info = ring_env.reset(seed=0, options={"start": np.array([1, 2, 3])})
    assert info["state"].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="one condition per copy"):
        hcp.reset(options={"condition": ["win", "loss"]})
    with pytest.raises(ValueError, match="per-copy conditions are condition names"):
        hcp.reset(options={"condition": [{"reward": 3}] * 6})
    with pytest.raises(ValueError, match="no condition 'jackpot'"):
        hcp.reset(options={"condition": "jackpot"})
    with pytest.raises(ValueError, match="'start' must be a state index"):
        ring_env.reset(options={"start": 99})
    with pytest.raises(ValueError, match="unknown key"):
        ring_env.reset(options={"begin": 0})


def test_undefined_actions_stay_with_no_reward_and_action_masks():
    venv = GraphVectorEnv(2, task=compiled("rewardgym/risk-sensitive"), condition="save-20_risky-40")
    venv.reset(seed=0)
    assert venv.action_masks().tolist() == [[False, True, False, True, False]] * 2
    obs, reward, term, _, _ = venv.step(np.array([0, 1]))
    assert obs.tolist()[0] == 0 and reward[0] == 0.0 and not term[0]
    assert term[1] and reward[1] == 20.0


def test_a_reward_gym_condition_replaces_the_nodes_actions_in_every_copy():
    c = compiled("rewardgym/risk-sensitive")
    condition = {0: {None: None, 1: 2, 3: 4}}
    venv = GraphVectorEnv(3, task=c)
    _, info = venv.reset(seed=0, options={"condition": condition})
    assert venv.action_masks().tolist() == [[False, True, False, True, False]] * 3
    _, reward, term, _, info = venv.step(np.array([0, 1, 3]))
    assert info["state"].tolist() == [0, 2, 4] and reward[0] == 0.0 and term.tolist() == [False, True, True]
    single = GraphTaskEnv(c)
    _, single_info = single.reset(seed=0, options={"condition": condition})
    assert [a for a in range(5) if venv.action_masks()[0, a]] == list(single_info["available_actions"])


def test_bad_arguments_are_named():
    venv = ring("NextStep")
    with pytest.raises(RuntimeError, match="before reset"):
        venv.step(np.zeros(3, dtype=np.int64))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        venv.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="every action must be in 0..1"):
        venv.step(np.array([0, -1, 0]))
    with pytest.raises(ValueError, match="every action must be in 0..1"):
        venv.step(np.array([0, 2, 0]))
    with pytest.raises(ValueError, match="autoreset_mode"):
        ring("Sometimes")
    with pytest.raises(ValueError, match="num_envs"):
        GraphVectorEnv(0, task=compiled("neuronav/graph/ring"))
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.array([1, 0, 1])})


def test_a_fixed_outcome_still_deals_from_a_stateful_deck_like_the_single_env():
    definition = {
        "name": "deck", "reward_on": "terminal", "start": 0, "graph": {"0": [1], "1": []},
        "rewards": {"1": {"kind": "pseudorandom", "values": [1, 2, 3, 4]}},
        "conditions": {"fixed": {"reward": 9}},
    }
    c = compile_task(tasks.graph.definitions.build_graph_task("user/deck", "user", definition))
    single = GraphTaskEnv(c, condition="fixed")
    single.reset(seed=0)
    assert single.step(0)[1] == 9.0 and len(single._sources[1].pending) == 3  # one card dealt, outcome paid
    venv = GraphVectorEnv(8, task=c, episode_length=None)
    venv.reset(seed=0, options={"condition": "fixed"})
    _, reward, term, _, _ = venv.step(np.zeros(8, dtype=np.int64))
    deck = venv.reward_sources["pseudorandom"]
    assert reward.tolist() == [9.0] * 8 and term.all() and deck.position[:, 0].tolist() == [1] * 8
    dealt = deck.values[0, deck.order[:, 0, 0]]
    venv.reset()  # the default condition: the deck goes on where it was
    rest = []
    for _ in range(3):
        _, reward, _, _, _ = venv.step(np.zeros(8, dtype=np.int64))
        rest.append(reward)
        venv.step(np.zeros(8, dtype=np.int64))  # NEXT_STEP: the reset step
    for i in range(8):
        assert sorted([dealt[i]] + [r[i] for r in rest]) == [1.0, 2.0, 3.0, 4.0]


def test_each_copy_pays_a_drifting_source_with_its_own_probability():
    definition = {
        "name": "drift", "reward_on": "terminal", "start": 0, "graph": {"0": [1], "1": []},
        "rewards": {"1": {"kind": "drifting", "values": [1, 0], "borders": [0.05, 0.95], "sd": 0.0}},
    }
    c = compile_task(tasks.graph.definitions.build_graph_task("user/drift", "user", definition))
    venv = GraphVectorEnv(128, task=c, episode_length=None)
    venv.reset(seed=4)
    p = venv.reward_sources["drifting"].p[:, 0].copy()
    assert p.std() > 0.15  # copies start from different probabilities
    total = np.zeros(128)
    for _ in range(300):
        total += venv.step(np.zeros(128, dtype=np.int64))[1]
        venv.step(np.zeros(128, dtype=np.int64))  # NEXT_STEP: the reset step pays 0
    np.testing.assert_array_equal(venv.reward_sources["drifting"].p[:, 0], p)  # sd 0: p never moves
    assert np.abs(total / 300 - p).max() < 0.15


def test_a_condition_given_as_a_dict_forces_the_edge_in_every_copy():
    venv = GraphVectorEnv(500, task=compiled("rewardgym/two-step"))
    venv.reset(seed=0, options={"condition": {0: {0: 2}}})
    _, _, _, _, info = venv.step(np.zeros(500, dtype=np.int64))
    assert (info["state"] == 2).all()
    venv.reset(seed=0)  # back to the task's own 70/30 edge
    _, _, _, _, info = venv.step(np.zeros(500, dtype=np.int64))
    assert 0.6 < (info["state"] == 1).mean() < 0.8


# -- random deterministic graphs: every copy equals the single env ------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.budget import examples  # noqa: E402


@st.composite
def deterministic_graphs(draw):
    """Graphs with undefined actions, terminal nodes and acyclic skip chains (skip edges go forward)."""
    n = draw(st.integers(2, 8))
    n_actions = draw(st.integers(1, 3))
    graph, rewards = {}, {}
    for i in range(n):
        if i > 0 and draw(st.booleans()) and draw(st.booleans()):
            graph[str(i)] = []
            continue
        actions = draw(st.lists(st.integers(0, n_actions - 1), min_size=1, max_size=n_actions, unique=True))
        skip = i < n - 1 and draw(st.integers(0, 4)) == 0
        node = {}
        for a in sorted(actions):
            low = i + 1 if skip and a == min(actions) else 0  # a skip node advances forward: no skip cycle
            node[str(a)] = draw(st.integers(low, n - 1))
        if skip:
            node["skip"] = True
        graph[str(i)] = node
    for i in range(n):
        if draw(st.booleans()):
            rewards[str(i)] = draw(st.integers(-3, 3))
    return {"name": "random", "reward_on": draw(st.sampled_from(["arrival", "terminal"])), "start": 0,
            "graph": graph, "rewards": rewards}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(definition=deterministic_graphs(), use_noop=st.booleans(), penalty=st.sampled_from([0.0, 0.25]),
       length=st.integers(1, 9), seed=st.integers(0, 1000))
@pytest.mark.slow
def test_random_deterministic_graphs_match_the_single_env(definition, use_noop, penalty, length, seed):
    c = compile_task(tasks.graph.definitions.build_graph_task("user/random", "user", definition))
    settings_ = dict(use_noop=use_noop, time_penalty=penalty, episode_length=length)
    venv = GraphVectorEnv(4, task=c, **settings_)
    assert venv.tables.fast  # the fast path is what this checks
    actions = np.random.default_rng(seed).integers(0, venv.n_actions, (30, 4))
    got = vector_stream(venv, actions, seed=seed)
    for i in range(4):
        assert got[i] == single_next_step_stream(GraphTaskEnv(c, **settings_), actions[:, i], seed=seed)
    # the general path (no fast tables) must give the same batch
    slow = GraphVectorEnv(4, task=c, **settings_)
    object.__setattr__(slow.tables, "fast", False)
    assert vector_stream(slow, actions, seed=seed) == got


def test_per_copy_conditions_each_copy_plays_its_own_trial():
    hcp = GraphVectorEnv(6, task=compiled("rewardgym/hcp"))
    names = ["win", "loss", "neutral", None, "win", "loss"]
    hcp.reset(seed=0, options={"condition": names})
    assert hcp.conditions == names
    _, reward, term, _, info = hcp.step(np.ones(6, dtype=np.int64))
    assert term.all() and reward[[0, 1, 2, 4, 5]].tolist() == [1.0, -0.5, 0.0, 1.0, -0.5]
    assert reward[3] in (1.0, -0.5, 0.0) and info["state"].max() < 3  # states are the task's, not internal
    # a masked reset changes the condition of those copies only; a new condition is added on the fly
    mask = np.array([True, False, False, False, False, True])
    hcp.reset(options={"condition": ["neutral"] * 6, "reset_mask": mask})
    assert hcp.conditions == ["neutral", "loss", "neutral", None, "win", "neutral"]
    mid = GraphVectorEnv(5, task=compiled("rewardgym/mid"))
    _, info = mid.reset(seed=1, options={"condition": ["big-loss", "small-loss", "neutral", "small-win", "big-win"]})
    assert info["state"].tolist() == [1, 2, 3, 4, 5]  # the skip start advanced to each copy's cue
    _, reward, term, _, _ = mid.step(np.zeros(5, dtype=np.int64))
    assert term.all() and reward.tolist() == [0.0, 0.0, 0.0, 1.0, 5.0]


def test_per_copy_conditions_match_the_single_env_under_the_same_condition():
    c = compiled("rewardgym/two-step")
    names = ["expected", "unexpected"] * 200
    venv = GraphVectorEnv(400, task=c, autoreset_mode="Disabled", episode_length=None)
    venv.reset(seed=0, options={"condition": names})
    _, _, _, _, info = venv.step(np.zeros(400, dtype=np.int64))
    first = info["state"]
    for name, state in (("expected", 1), ("unexpected", 2)):
        single = GraphTaskEnv(c, condition=name)
        single.reset(seed=0)
        assert single.step(0)[4]["state"] == state
        assert (first[[i for i, n in enumerate(names) if n == name]] == state).all()
    # a schedule: every copy gets its next trial's condition on its own reset
    rng = np.random.default_rng(0)
    for _ in range(10):
        _, _, term, _, info = venv.step(rng.integers(0, 2, 400))
        if term.any():
            trial = rng.choice(["expected", "unexpected"], 400).tolist()
            _, info = venv.reset(options={"condition": trial, "reset_mask": term})
            assert all(venv.conditions[i] == trial[i] for i in np.flatnonzero(term))


def test_mixed_deterministic_conditions_match_the_single_env_exactly():
    checked = 0
    for task_id in STOCHASTIC:
        c = compiled(task_id)
        fast = [n for n in c.conditions if GraphVectorEnv(1, task=c, condition=n).tables.fast]
        if len(fast) < 2:
            continue
        names = (fast * 3)[:6]
        venv = GraphVectorEnv(6, task=c, episode_length=5)
        actions = np.random.default_rng(4).integers(0, venv.n_actions, (25, 6))
        venv.reset(seed=0, options={"condition": names})
        assert venv.tables.fast  # the stacked tables keep the fast path
        got: list[list[tuple]] = [[] for _ in range(6)]
        for row in actions:
            obs, r, term, trunc, info = venv.step(row)
            for i in range(6):
                got[i].append(copy_row(obs, r, term, trunc, info, i))
        for i, name in enumerate(names):
            single = GraphTaskEnv(c, condition=name, episode_length=5)
            assert got[i] == single_next_step_stream(single, actions[:, i], seed=0), f"{task_id} {name} copy {i}"
        checked += 1
    assert checked >= 2
