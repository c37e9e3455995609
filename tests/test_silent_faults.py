"""Issue 41, "Nothing silent": settings, files and stores that did something other than what they
said without a word now do it, or refuse in one line naming what is wrong.

- POGE: a reward symbol on a goal or terminal tile was listed and drawn but never paid (POGE pays
  goal_reward there): refused at load, in a phase change and in a stored world;
- a graph task's `render --ansi` printed one state: it prints every state with its moves;
- gymnasium's "Room-v0 is out of date" was hidden by a warnings filter installed at import: the
  Room tasks have names of their own and no filter is installed;
- a store file truncated to 0 bytes opened as an empty store; absurd Room sizes ended in a
  MemoryError; `graphtasks` with no command said nothing; a copy of a store onto itself reported
  success; a Turtle file with a huge literal was imported.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gym_bridge  # noqa: F401  (registers the graphtasks/ ids)
import tasks
from graphstore import SchemaError, StoreLocationError, open_store
from graphstore import rdf as rdf_view
from graphstore.transfer import SameStoreError, copy_tasks, same_location
from graphtasks import cli
from gym_bridge.graph.env import GraphTaskEnv
from gym_bridge.poge.env import PogeEnv
from tasks.data import TaskFileError
from tasks.family import TaskChangeError
from tasks.poge import PogeFormatError, parse_world, world_to_graph
from tasks.poge.variants import change_world

# a goal at row 1, column 3 with `a:10` on it, a terminal at row 2, column 2 with `b:-5`, and a
# floor tile at row 1, column 2 with `c:7`
WORLD = """===Layout===
#####
#E G#
# T #
#####
===Rewards===
#####
# ca#
# b #
#####
a:10
b:-5
c:7
"""


def run(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("graphtasks: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- POGE: rewards shown but not paid -----------------------------------------------------------
def test_a_reward_on_a_goal_or_terminal_is_refused_naming_file_line_and_tile() -> None:
    with pytest.raises(PogeFormatError) as goal:
        parse_world(WORLD, "w.txt")
    assert (goal.value.line, goal.value.column) == (8, 4)
    assert str(goal.value).startswith(
        "w.txt, line 8, column 4: reward symbol 'a' (10) is on the goal tile at row 1, column 3, "
        "where it would never be paid: reaching a goal pays goal_reward")
    terminal = WORLD.replace("# ca#", "# c #")
    with pytest.raises(PogeFormatError, match=r"w.txt, line 9, column 3: reward symbol 'b' \(-5\) is on the "
                                              r"terminal tile at row 2, column 2, where it would never be paid"):
        parse_world(terminal, "w.txt")
    wall = WORLD.replace("# ca#", "# c #").replace("# b #", "#   #").replace("#####\na:10", "##x##\na:10")
    with pytest.raises(PogeFormatError, match=r"line 10, column 3: reward symbol 'x' has no value"):
        parse_world(wall, "w.txt")  # (the symbol check comes first)
    wall = wall.replace("b:-5", "x:3")
    with pytest.raises(PogeFormatError, match=r"on the wall tile at row 3, column 2, where it would never be paid: "
                                              r"the player never stands on a wall"):
        parse_world(wall, "w.txt")


def test_poge_load_and_the_env_refuse_the_file_in_one_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "w.txt"
    path.write_text(WORLD)
    store = str(tmp_path / "s.lbug")
    line = one_error_line(*run(["--store", store, "poge", "load", str(path)], capsys)[::2])
    assert f"{path}, line 8, column 4: reward symbol 'a' (10) is on the goal tile" in line
    assert not Path(store).exists()  # nothing stored
    with pytest.raises(TaskFileError, match=r"^world: .*w.txt, line 8, column 4: .* is on the goal tile at row 1"):
        gym.make("graphtasks/Poge-v0", world=str(path))
    # without the unpaid rewards the world loads, and an episode pays what the file says
    path.write_text(WORLD.replace("# ca#", "# c #").replace("# b #", "#   #"))
    env = gym.make("graphtasks/Poge-v0", world=str(path), force_determinism=True, goal_reward=100)
    env.reset(seed=0)
    assert env.step(3)[1:3] == (7.0, False)  # right onto `c`
    assert env.step(3)[1:3] == (100.0, True)  # right onto the goal


def test_a_stored_world_and_a_phase_change_with_an_unpaid_reward_are_refused() -> None:
    world = parse_world(WORLD.replace("# ca#", "# c #").replace("# b #", "#   #"), "w.txt")
    # a world stored before the parser refused it: the reward written onto the goal tile
    rewards = ("#####", "# ca#", "#   #", "#####")
    stored = world_to_graph(dataclasses.replace(world, rewards=rewards, reward_values=(("c", 7), ("a", 10))),
                            "user/poge/old")
    with pytest.raises(TaskFileError, match=r"^world: stored task 'user/poge/old', line 11, column 4: reward "
                                            r"symbol 'a' \(10\) is on the goal tile at row 1, column 3"):
        PogeEnv(stored)  # a stored world is read back through the parser
    graph = world_to_graph(world, "user/poge/changed")
    with pytest.raises(TaskChangeError, match=r"phase.rewards\[0\].tile: \[2, 2\] is a terminal tile, where a "
                                              r"reward would never be paid"):
        change_world(graph, {"rewards": [{"tile": [2, 2], "value": 5}]}, "user/poge/changed2", "phase")
    changed = change_world(graph, {"rewards": [{"tile": [2, 1], "value": 5}]}, "user/poge/changed2", "phase")
    assert PogeEnv(changed).compiled.world.reward(2, 1) == 5


# -- render --ansi of a graph task ----------------------------------------------------------------
def test_ansi_of_a_graph_task_prints_every_state_with_its_moves(capsys) -> None:
    env = GraphTaskEnv("rewardgym/two-step", render_mode="ansi")
    env.reset(seed=0)
    env.step(0)
    text = env.render()
    n = env.compiled.n_states
    states = [line for line in text.splitlines() if line[2:].startswith("state ")]
    assert len(states) == n == 7
    marked = [line for line in states if line.startswith(">")]
    header = text.splitlines()[0]
    assert header.startswith("rewardgym/two-step: 7 states, 2 actions; start 0; the agent is at state ")
    assert len(marked) == 1 and marked[0] == "> state " + header.split("the agent is at state ")[1]
    assert marked[0] in ("> state 1 (second stage A)", "> state 2 (second stage B)")
    assert "action 0 -> second stage A (1) p=0.70, second stage B (2) p=0.30" in text
    assert "state 6 (B: right outcome)  [drifting: r 1 or 0" in text and "terminal]" in text
    code, out, err = run(["--store", ":memory:", "render", "rewardgym/two-step", "--ansi"], capsys)
    assert code == 0, err
    assert sum(line[2:].startswith("state ") for line in out.splitlines()) == 7


# -- the Room ids: nothing for gymnasium to warn about, no filter -------------------------------------
ROOM_IDS = ("graphtasks/Room-v0", "graphtasks/RoomV1-v0", "graphtasks/RoomV2-v0", "graphtasks/RoomV3-v0")


@pytest.mark.slow
def test_no_warnings_filter_is_installed_at_import(tmp_path: Path) -> None:
    """In a fresh process (pytest sets its own filters around each test), under `-W always`."""
    script = (
        "import warnings, gymnasium as gym, gym_bridge\n"
        "print([f[1].pattern for f in warnings.filters if f[1] is not None and 'Room' in f[1].pattern])\n"
        "gym.make('graphtasks/RoomV3-v0').reset(seed=0)\n"
    )
    done = subprocess.run([sys.executable, "-W", "always", "-c", script], capture_output=True, text=True,
                          env={**os.environ, "GRAPHTASKS_STORE": str(tmp_path / "s.lbug")}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]" and "out of date" not in done.stderr


@pytest.mark.slow
def test_the_four_room_ids_have_names_of_their_own_and_make_without_a_warning() -> None:
    names = {gym.spec(i).name for i in ROOM_IDS}
    assert len(names) == 4 and all(gym.spec(i).version == 0 for i in ROOM_IDS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("graphtasks/RoomV3-v0")
        check_env(env.unwrapped)
        gym.make("graphtasks/RoomV2-v0", max_steps=5).reset(seed=0)
        gym.make("graphtasks/Room-v0", room_size="small", max_step=5).reset(seed=0)
    assert not [str(w.message) for w in caught if "out of date" in str(w.message)]
    with pytest.raises(gym.error.VersionNotFound, match="graphtasks/Room"):  # the old id: gymnasium's one line
        gym.make("graphtasks/Room-v3")


# -- stores: an empty file, a foreign file, a copy onto itself ---------------------------------------
def test_a_store_truncated_to_0_bytes_is_refused_naming_the_file(tmp_path: Path, capsys) -> None:
    path = tmp_path / "tasks.lbug"
    with open_store(str(path)) as store:
        store.put(tasks.build("neuronav/graph/linear"))
    path.write_bytes(b"")  # truncated
    for mode in ("r", "w"):
        with pytest.raises(StoreLocationError, match=rf"store '{path}' is damaged: the file is empty \(0 bytes\)"):
            open_store(str(path), mode)
    line = one_error_line(*run(["--store", str(path), "experiment", "list"], capsys)[::2])
    assert f"store '{path}' is damaged" in line
    assert path.stat().st_size == 0  # left as it was, not made into a new store
    foreign = tmp_path / "notes.lbug"
    foreign.write_text("not a database\n" * 20)
    line = one_error_line(*run(["--store", str(foreign), "tasks", "list"], capsys)[::2])
    assert str(foreign) in line and "not a valid" in line


def test_a_copy_of_a_store_onto_itself_is_refused(tmp_path: Path, capsys) -> None:
    path = tmp_path / "tasks.lbug"
    with open_store(str(path)) as store:
        store.put(tasks.build("neuronav/graph/linear"))
        with pytest.raises(SameStoreError, match="onto itself"):
            copy_tasks(store, store)
    code, out, err = run(["tasks", "copy", "--from", str(path), "--to", f"{tmp_path}/../{tmp_path.name}/tasks.lbug",
                          "--all"], capsys)
    assert "--from and --to name one store" in one_error_line(code, err) and out == ""
    assert same_location("bolt://Host:7687", "neo4j://user@host:7687") and not same_location(":memory:", ":memory:")
    code, out, err = run(["tasks", "copy", "--from", str(path), "--to", str(tmp_path / "other.lbug"), "--all"], capsys)
    assert code == 0 and "copied    neuronav/graph/linear" in out


# -- absurd sizes of the Room envs ------------------------------------------------------------------
@pytest.mark.parametrize(("env_id", "setting", "limit"), [
    ("graphtasks/Room-v0", "num_agents", "1,000"),
    ("graphtasks/RoomV2-v0", "max_steps", "100,000"),
    ("graphtasks/RoomV2-v0", "questions_per_step", "1,000"),
    ("graphtasks/RoomV2-v0", "episodes_ahead", "10,000"),
    ("graphtasks/RoomV3-v0", "max_steps", "100,000"),
])
def test_absurd_room_sizes_are_refused_before_allocation(env_id: str, setting: str, limit: str) -> None:
    with pytest.raises(ValueError) as refused:
        gym.make(env_id, **{setting: 10**12})  # type: ignore[arg-type]
    assert str(refused.value) == f"{setting}: expected at most {limit}, got 1,000,000,000,000"


def test_room_map_episodes_past_the_memory_limit_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^episodes_ahead x max_episode_steps: 128 episodes of 100,000 steps .* "
                                         r"expected at most 2 GiB: lower episodes_ahead or max_episode_steps$"):
        # the old name reaches the env (make keeps max_episode_steps for its TimeLimit)
        gym.make("graphtasks/RoomV2-v0", max_steps=100_000)
    with pytest.raises(ValueError, match=r"^num_envs x max_episode_steps: 10,000,000 episodes"):
        gym.make_vec("graphtasks/RoomV2-v0", num_envs=10**7, vectorization_mode="vector_entry_point")
    env = gym.make("graphtasks/RoomV2-v0", max_steps=1000, episodes_ahead=2)
    assert np.asarray(env.reset(seed=0)[0]["questions"]).shape == (10,)


# -- the command line: no command -------------------------------------------------------------------
def test_graphtasks_with_no_command_prints_usage_and_one_error_line(capsys) -> None:
    code, out, err = run([], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and out == ""
    assert lines[0].startswith("usage: graphtasks")
    assert lines[-1] == ("graphtasks: error: no command given; `graphtasks -h` lists the commands, "
                         "`graphtasks COMMAND -h` describes one")


# -- RDF import: a huge literal --------------------------------------------------------------------
def test_an_imported_literal_past_the_limit_is_refused_naming_the_triple(tmp_path: Path, capsys) -> None:
    text = rdf_view.to_turtle(rdf_view.to_rdf(tasks.build("rewardgym/hcp")))
    huge = text.replace('gt:description "', 'gt:description "' + "x" * (rdf_view.MAX_LITERAL_CHARS + 1), 1)
    with pytest.raises(SchemaError, match=r"Task 'rewardgym/hcp', gt:description: a literal of 1,04\d,\d{3} "
                                          r"characters; an imported literal has at most 1,048,576"):
        rdf_view.from_rdf(rdf_view.parse(huge))
    path = tmp_path / "hcp.ttl"
    path.write_text(huge)
    line = one_error_line(*run(["--store", str(tmp_path / "s.lbug"), "import", str(path)], capsys)[::2])
    assert "gt:description: a literal of" in line
    assert rdf_view.from_rdf(rdf_view.parse(text))[0] == tasks.build("rewardgym/hcp")  # an ordinary file imports
