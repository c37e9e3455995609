"""One episode-length setting, `max_episode_steps`, honoured by every family through every route
(issue 42: an episode's length needed both `episode_length` and `max_episode_steps`, and each
family named it its own way: `episode_length`, `max_ep_len`, `max_step`, `max_steps`).

Routes: the env constructors (single and vector), gymnasium's `make` and `make_vec` (native and
sync), `graphtasks run --max-episode-steps`, and an experiment spec's `max_episode_steps`. The
old names still work, each with one FutureWarning line."""

from __future__ import annotations

import json
import warnings
from typing import Any

import gymnasium as gym
import pytest

import gym_bridge
from graphtasks import cli
from graphtasks.experiments.protocol import env_settings
from graphtasks.experiments.spec import ExperimentSpecError, load_spec, parse_spec

# Per family: a task, its gym id, the settings and action with which an episode never ends
# by itself, the env's default length, and its old name of the length.
FAMILIES: dict[str, tuple[str, str, dict[str, Any], int, int, str]] = {
    "graph": ("decision/patch-foraging", "graphtasks/PatchForaging-v0", {}, 0, 100, "episode_length"),
    "grid": ("neuronav/grid/empty/small", "graphtasks/GridEmpty-v0", {"use_noop": True}, 4, 100, "episode_length"),
    "poge": ("poge/world0", "graphtasks/Poge-v0", {"force_determinism": True}, 3, 100, "max_ep_len"),
    "room": ("room/small", "graphtasks/Room-v0", {}, 0, 1000, "max_step"),
    "roommap": ("room/v3/small-01", "graphtasks/RoomV3-v0", {}, None, 100, "max_steps"),
    "roomv1": ("room/v1/xxs", "graphtasks/RoomV1-v0", {}, 0, 128, "episode_length"),
}
# The Room tasks end by themselves (their last step terminates the episode: Room v1's last
# timestep, 128 at most; Room's and the maps', whose observation counts the steps, at their
# length): gymnasium's make can shorten their episodes, not lengthen them past that.
OWN_LENGTH = {"room", "roommap", "roomv1"}
TASK_ARGUMENT = {"poge": "world"}


def _act(env: Any, action: int | None) -> Any:
    return env.action_space.sample() if action is None else action


def episode_length(env: gym.Env, action: int | None, limit: int = 5000) -> tuple[int, bool]:
    """Steps until the episode ends, taking `action` (None: a sampled one), and whether it was truncated."""
    env.reset(seed=0)
    env.action_space.seed(0)
    for step in range(1, limit + 1):
        _, _, terminated, truncated, _ = env.step(_act(env, action))
        if terminated or truncated:
            return step, bool(truncated and not terminated)
    raise AssertionError(f"no end in {limit} steps")


def make(name: str, **settings: Any) -> gym.Env:
    task, _, fixed, _, _, _ = FAMILIES[name]
    return gym_bridge.family_of(task).make_env(task, store=None, **fixed, **settings)


@pytest.fixture(autouse=True)
def store(isolated_store_location, request):
    """A fresh default store; the Room task's ConceptNet in it (the bundled snapshot) for its tests."""
    if "room]" in request.node.name:
        from graphstore import open_store
        from ingest.conceptnet_snapshot import ingest_snapshot

        with open_store() as opened:
            ingest_snapshot(opened, None, False)


# The Room families' cases take seconds each (their knowledge, episodes drawn ahead): slow.
QUICK = ("graph", "grid", "poge")


def families(names: list[str] | None = None) -> list[Any]:
    return [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in (names or sorted(FAMILIES))]


@pytest.mark.parametrize("name", families())
@pytest.mark.slow
def test_the_constructor_takes_max_episode_steps_and_the_old_name_with_one_warning(name):
    _, _, _, action, default, old = FAMILIES[name]
    assert gym_bridge.family_of(FAMILIES[name][0]).episode_length == "max_episode_steps"
    env = make(name, max_episode_steps=7)
    assert env.unwrapped.max_episode_steps == 7
    assert episode_length(env, action)[0] == 7
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = make(name, **{old: 6})
    assert [str(w.message).partition(" (")[0] for w in caught] == [f"{old} is deprecated: use max_episode_steps"]
    assert all(w.category is FutureWarning for w in caught)
    assert episode_length(env, action)[0] == 6
    assert make(name).unwrapped.max_episode_steps == default


@pytest.mark.parametrize("name", families())
def test_gym_make_takes_max_episode_steps_alone(name):
    """gymnasium's make gives max_episode_steps to its TimeLimit only: the env no longer cuts
    episodes at its own default first (lengthening them needed both names)."""
    task, gym_id, fixed, action, default, _ = FAMILIES[name]
    where = {TASK_ARGUMENT.get(name, "task"): task}
    assert gym.spec(gym_id).max_episode_steps == default
    longer = 4 if name in OWN_LENGTH else default + 20  # the Room tasks: shorter only
    env = gym.make(gym_id, max_episode_steps=longer, **where, **fixed)
    assert episode_length(env, action) == (longer, True)
    if name not in OWN_LENGTH:  # and without a limit at all, as gymnasium's -1 says
        endless = gym.make(gym_id, max_episode_steps=-1, **where, **fixed)
        with pytest.raises(AssertionError, match="no end"):
            episode_length(endless, action, limit=default + 50)


VECTOR = sorted(f.name for f in gym_bridge.families() if f.vector_env)


@pytest.mark.parametrize("name", families(VECTOR))
@pytest.mark.slow
def test_make_vec_and_the_vector_env_take_max_episode_steps(name):
    task, gym_id, fixed, action, default, old = FAMILIES[name]
    where = {TASK_ARGUMENT.get(name, "task"): task}
    venv = gym.make_vec(gym_id, num_envs=2, max_episode_steps=9, **where, **fixed)
    base = venv.unwrapped
    assert (base.settings.max_steps if name == "roommap" else base.episode_length) == 9
    assert gym.make_vec(gym_id, num_envs=2, **where, **fixed).unwrapped.episode_length in (default, 0)
    with pytest.warns(FutureWarning, match=f"{old} is deprecated"):
        old_style = gym.make_vec(gym_id, num_envs=2, **{old: 8}, **where, **fixed).unwrapped
    assert (old_style.settings.max_steps if name == "roommap" else old_style.episode_length) == 8
    if name == "graph":  # sync (any family): each copy made by gym.make, whose TimeLimit is the length
        sync = gym.make_vec(gym_id, num_envs=2, vectorization_mode="sync", max_episode_steps=default + 5,
                            **where, **fixed)
        assert episode_length(sync.envs[0], action) == (default + 5, True)


@pytest.mark.parametrize("name", families())
def test_graphtasks_run_takes_max_episode_steps(name, capsys):
    task = FAMILIES[name][0]
    agent = {"roommap": "explorer", "room": "random", "roomv1": "random"}.get(name, "q")
    argv = ["run", task, "--agent", agent, "--episodes", "2", "--max-episode-steps", "3", "--json", "--no-progress"]
    assert cli.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["lengths"] == [3, 3]
    if name == "grid":  # the old option: the same run, one warning line
        old = [a if a != "--max-episode-steps" else "--max-steps" for a in argv]
        assert cli.main(old) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["lengths"] == [3, 3]
        assert err == "graphtasks: warning: --max-steps is deprecated: use --max-episode-steps\n"
        assert cli.main([*argv, "--max-steps", "4"]) == 2
        assert "give --max-episode-steps only" in capsys.readouterr().err


SPEC = """
[experiment]
name = "lengths"
tasks = {tasks}
seeds = 1

[[agents]]
name = "random"

[[phases]]
episodes = 1
{key} = 5
"""


@pytest.mark.parametrize("names", [list(QUICK), pytest.param(["room", "roomv1"], marks=pytest.mark.slow)])
def test_a_spec_phase_takes_max_episode_steps_for_every_family(names, store, tmp_path):
    if "room" in names:
        from graphstore import open_store
        from ingest.conceptnet_snapshot import ingest_snapshot

        with open_store() as opened:
            ingest_snapshot(opened, None, False)
    tasks = [FAMILIES[name][0] for name in names]
    spec = parse_spec(SPEC.format(tasks=json.dumps(tasks), key="max_episode_steps"))
    (phase,) = spec.phases
    for name in names:
        task = FAMILIES[name][0]
        family = gym_bridge.family_of(task)
        settings = env_settings(spec, phase, family, family.views[0], task)
        assert settings["max_episode_steps"] == 5
        assert episode_length(make(name, **settings), FAMILIES[name][3])[0] == 5, name
    old_text = SPEC.format(tasks=json.dumps(tasks[:1]), key="max_steps")
    path = tmp_path / "old.toml"
    path.write_text(old_text)
    with pytest.warns(FutureWarning, match=r"old.toml, line 12: phases\[0\].max_steps: max_steps is deprecated: "
                                           "write max_episode_steps"):
        old = load_spec(path)  # a file a person wrote: told
    assert old.phases[0].steps_limit(tasks[0]) == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_spec(old_text).phases[0].steps_limit(tasks[0]) == 5  # a stored spec read again: quiet
    both = SPEC.format(tasks=json.dumps(tasks[:1]), key="max_steps") + "max_episode_steps = 5\n"
    with pytest.raises(ExperimentSpecError, match="give max_episode_steps only"):
        parse_spec(both)
