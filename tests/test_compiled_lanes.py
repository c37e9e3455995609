"""The compiled lane loop (`gym_bridge.compiled_lanes`) gives the numpy lane loop's numbers, bit
for bit, wherever it plays; elsewhere `play_lanes` falls back to numpy; a batch's runs reach
the store in one write."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphstore import open_store
from graphtasks.experiments.records import StoreRecorder, record_experiment, record_tasks, recorded_episodes
from graphtasks.experiments.spec import parse_spec
from graphtasks.experiments.sweep import run_experiment, task_versions
from gym_bridge import family
from gym_bridge.agents import make_batched
from gym_bridge.batched_episodes import play_lanes
from gym_bridge.compiled_lanes import Q_RULE, SARSA_RULE, compiled_plan

TASK = "neuronav/grid/four_rooms/small"
LANES = 12


def lane_settings(rng: np.random.Generator, agent: str) -> list[dict[str, Any]]:
    """A parameter grid as lanes: every lane its own learning rate, discount and epsilon."""
    return [
        {"lr": float(rng.uniform(0.05, 0.6)), "gamma": float(rng.uniform(0.8, 0.99)),
         "epsilon": float(rng.choice([0.0, 0.05, 0.3, 1.0]))}
        for _ in range(LANES)
    ]


def play(agent_name: str, env_options: dict[str, Any], compiled: bool, phases: list[tuple[int, bool]]
         ) -> tuple[list[Any], Any]:
    """Phases (episodes, learn) played by one batched agent, each on a new env as a sweep does."""
    rng = np.random.default_rng(5)
    settings = lane_settings(rng, agent_name)
    agent = None
    episodes: list[Any] = []
    for index, (count, learn) in enumerate(phases):
        env = family("grid").make_vector_env(TASK, LANES, autoreset_mode="disabled", **env_options)
        if agent is None:
            agent = make_batched(agent_name, env.single_observation_space.n, env.single_action_space.n,
                                 seeds=list(range(40, 40 + LANES)), settings=settings)
            agent.learning[::5] = False  # some lanes watch only
        env_seeds = [1000 * index + lane for lane in range(LANES)]
        episodes.append(play_lanes(env, agent, count, env_seeds, learn=learn, compiled=compiled))
    return episodes, agent


ENVS = {
    "plain": {},
    "slips-random-starts": {"stochasticity": 0.25, "random_start": True},
    "penalty-noop-long": {"time_penalty": 0.01, "use_noop": True, "episode_length": 150},
    "manual-collect": {"manual_collect": True, "random_start": True},
}


@pytest.mark.parametrize("env_name", list(ENVS))
@pytest.mark.parametrize("agent_name", ["q", "sarsa"])
@pytest.mark.slow
def test_compiled_loop_equals_numpy_loop(agent_name: str, env_name: str) -> None:
    """Episodes (return, length, start, first action and state), tables and the agent's stream
    counters are equal, over a learning phase and a test phase that does not learn."""
    phases = [(25, True), (5, False)]
    fast, fast_agent = play(agent_name, ENVS[env_name], True, phases)
    slow, slow_agent = play(agent_name, ENVS[env_name], False, phases)
    assert fast == slow
    assert np.array_equal(fast_agent.q, slow_agent.q)
    assert np.array_equal(fast_agent.streams.counters, slow_agent.streams.counters)
    returns = {e.reward for phase in fast for lane in phase for e in lane}
    assert len(returns) > 1  # episodes that reached the goal and episodes that did not


def test_the_compiled_loop_plays_only_what_it_has_the_rule_of() -> None:
    env = family("grid").make_vector_env(TASK, 2, autoreset_mode="disabled")

    def agent(name: str, **settings: Any) -> Any:
        return make_batched(name, 121, 4, seeds=[0, 1], settings=[settings, settings])

    assert compiled_plan(env, agent("q"), record_steps=False)[1] == Q_RULE  # type: ignore[index]
    assert compiled_plan(env, agent("sarsa"), record_steps=False)[1] == SARSA_RULE  # type: ignore[index]
    assert compiled_plan(env, agent("q"), record_steps=True) is None  # steps are recorded by the numpy loop
    assert compiled_plan(env, agent("q", beta=2.0), record_steps=False) is None  # softmax: numpy's exp
    assert compiled_plan(env, agent("q", bootstrap="policy"), record_steps=False) is None
    assert compiled_plan(env, agent("q", optimism=0.5), record_steps=False) is None
    assert compiled_plan(env, agent("sr"), record_steps=False) is None
    keys = family("grid").make_vector_env(TASK, 2, autoreset_mode="disabled",
                                          objects={"rewards": {(1, 1): 1.0}, "keys": [(2, 2)]})
    assert keys.step_table() is None  # a key carried is state the table does not have
    several = family("grid").make_vector_env(TASK, 2, autoreset_mode="disabled", terminate_on_reward=False)
    assert several.step_table() is None  # a reward taken is gone: the grid changes


class CountingRecorder(StoreRecorder):
    """The store as observer, counting its writes."""

    writes = 0

    def flush(self, everything: bool = False) -> None:
        if self.pending:
            CountingRecorder.writes += 1
        super().flush(everything)


def test_a_batch_of_runs_reaches_the_store_in_one_write(tmp_path: Any) -> None:
    text = f"""
[experiment]
name = "one-write"
tasks = ["{TASK}"]
seeds = 150

[[agents]]
name = "q"

[[phases]]
name = "learning"
episodes = 3
max_steps = 50
"""
    spec = parse_spec(text)
    store = str(tmp_path / "store.lbug")
    with open_store(store, "w") as opened:
        record_experiment(opened, spec, text)
        record_tasks(opened, task_versions(spec))
    result = run_experiment(spec, workers=1, store=store, observers=[CountingRecorder(store, spec)])
    assert result.batched == 150 and len(result.rows) == 450
    assert CountingRecorder.writes == 1  # 150 runs of one batch: one write, not one per 64 runs
    with open_store(store, "r") as opened:
        assert len(recorded_episodes(opened, "one-write")) == 450
