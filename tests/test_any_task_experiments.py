"""Any stored task in an experiment: a user's POGE world, graph task and grid map, a built-in
grid and the Room task with its own agents, in one spec, on one store; a greedy test phase;
`graphtasks run --seed 0` and a spec's cell of seed 0 walk the same episodes; a recorded
experiment is checked and resumed from its store alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tasks
from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments import ExperimentSpecError, load_spec, parse_spec, run_experiment
from graphtasks.experiments.records import record_sources

WORLD = """===Layout===
#######
#E    #
#  #  #
#  # G#
#######
===Rewards===
#######
#     #
#  #  #
#a #  #
#######
a:5
"""
GRAPH_TASK = {
    "name": "lever",
    "description": "two levers, the left pays more often",
    "reward_on": "terminal",
    "graph": {"0": [1, 2], "1": [], "2": []},
    "rewards": {
        "1": {"kind": "probabilistic", "values": [0, 1], "probs": [0.3, 0.7]},
        "2": {"kind": "probabilistic", "values": [0, 1], "probs": [0.6, 0.4]},
    },
}
GRID_MAP = """name corridor

[small]
#####
#A..#
###.#
#R..#
#####
reward 3 1 1
"""
SPEC = """
[experiment]
name = "any"
tasks = ["user/poge/myworld", "user/lever", "user/grid/corridor/small", "neuronav/grid/t_maze/micro", "room/small"]
seeds = 2

[[agents]]
name = "q"

[[agents]]
name = "episodic"
params = { capacity = 8 }
tasks = ["room/small"]

[[phases]]
name = "learning"
episodes = 4
max_steps = { "room/small" = 20, "user/poge/myworld" = 30, "neuronav/grid/t_maze/micro" = 30 }

[[phases]]
name = "test"
episodes = 2
learn = false
agent.q = { epsilon = 0.0 }
max_steps = { "room/small" = 20, "user/poge/myworld" = 30, "neuronav/grid/t_maze/micro" = 30 }
"""


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def users_store(tmp_path: Path, capsys) -> str:
    """A store holding a user's POGE world, graph task and grid map, and the ConceptNet snapshot."""
    store = str(tmp_path / "store.lbug")
    (tmp_path / "myworld.txt").write_text(WORLD)
    (tmp_path / "lever.json").write_text(json.dumps(GRAPH_TASK))
    (tmp_path / "corridor.txt").write_text(GRID_MAP)
    assert main(["--store", store, "poge", "load", str(tmp_path / "myworld.txt")]) == 0
    assert main(["--store", store, "tasks", "load", "--file", str(tmp_path / "lever.json"),
                 "--file", str(tmp_path / "corridor.txt")]) == 0
    assert main(["--store", store, "ingest", "snapshot"]) == 0
    capsys.readouterr()
    return store


@pytest.mark.slow
def test_a_spec_of_every_family_runs_and_records_every_run(users_store: str, tmp_path: Path, capsys) -> None:
    spec_path = tmp_path / "any.toml"
    spec_path.write_text(SPEC)
    code, out, err = run(["--store", users_store, "experiment", "run", str(spec_path), "--workers", "2",
                          "--no-progress"], capsys)
    assert code == 0, err + out
    with open_store(users_store, "r") as store:
        runs = store.cypher("MATCH (r:Run) RETURN r.task, r.agent, r.status ORDER BY r.task, r.agent").rows
        families = dict(store.cypher("MATCH (t:Task) RETURN t.uid, t.family").rows)
        phases = store.cypher(  # the episodes are chunks: scanned with LOAD FROM
            "LOAD FROM $episodes RETURN task_version, phase, count(*) ORDER BY task_version, phase",
            sources=record_sources(store),
        ).rows
    # 5 tasks x q x 2 seeds, and the episodic agent on the Room task only
    assert len(runs) == 12 and {status for *_, status in runs} == {"completed"}
    assert {(task, agent) for task, agent, _ in runs if agent == "episodic"} == {("room/small", "episodic")}
    assert families["user/poge/myworld"] == "poge" and families["user/grid/corridor/small"] == "neuronav/grid"
    assert [p[1:] for p in phases if p[0] == "room/small"] == [["learning", 16], ["test", 8]]  # q and episodic, 2 seeds


@pytest.mark.slow
def test_the_same_spec_is_checked_and_resumed_from_the_store_alone(users_store: str, tmp_path: Path, capsys) -> None:
    """The spec file can be gone: the experiment's spec and tasks are in the store."""
    spec_path = tmp_path / "any.toml"
    spec_path.write_text(SPEC.replace("seeds = 2", "seeds = 1"))
    assert run(["--store", users_store, "experiment", "run", str(spec_path), "--no-progress"], capsys)[0] == 0
    spec_path.unlink()
    code, out, err = run(["--store", users_store, "experiment", "check", "any"], capsys)
    assert code == 0 and "= 6 runs" in out, err
    code, out, err = run(["--store", users_store, "experiment", "run", "any", "--no-progress"], capsys)
    assert code == 0, err
    code, out, _ = run(["--store", users_store, "experiment", "export", "any"], capsys)
    assert code == 0 and len(out.splitlines()) == 1 + 6 * 6


def test_a_greedy_test_phase_acts_the_same_every_episode(tmp_path: Path) -> None:
    """After learning, a test phase without learning and with epsilon 0 walks one path; the same
    phase with exploration does not."""
    text = """
[experiment]
name = "greedy"
tasks = ["neuronav/grid/t_maze/micro"]
seeds = [3]

[[agents]]
name = "q"
params = { epsilon = 0.3, lr = 0.5 }

[[phases]]
name = "learning"
episodes = 300
max_steps = 40

[[phases]]
name = "test"
episodes = 20
max_steps = 40
learn = false
agent = { epsilon = 0.0 }

[[phases]]
name = "after"
episodes = 20
max_steps = 40
"""
    rows = run_experiment(parse_spec(text), workers=1).rows
    test = [(r["return"], r["length"]) for r in rows if r["phase"] == "test"]
    after = [(r["return"], r["length"]) for r in rows if r["phase"] == "after"]
    assert len(set(test)) == 1 and test[0][0] == 1.0  # the shortest path to the reward, every time
    assert len(set(after)) > 1  # the run's own epsilon again: it explores


def test_graphtasks_run_walks_the_episodes_of_the_spec_cell_of_its_seed(tmp_path: Path, capsys) -> None:
    task = "neuronav/grid/four_rooms/micro"
    code, out, err = run(["run", task, "--agent", "q", "--seed", "0", "--max-steps", "100", "--episodes", "30",
                          "--json", "--no-progress"], capsys)
    assert code == 0, err
    printed = json.loads(out)
    spec = parse_spec(f"""
[experiment]
name = "cell"
tasks = ["{task}"]
seeds = [0]
[[agents]]
name = "q"
[[phases]]
name = "learning"
episodes = 30
max_steps = 100
""")
    rows = run_experiment(spec, workers=1).rows
    assert printed["returns"] == [r["return"] for r in rows]
    assert printed["lengths"] == [r["length"] for r in rows]
    assert len(set(printed["lengths"])) > 1  # a real learning run, not a degenerate one


@pytest.mark.slow
def test_a_pinned_version_runs_and_a_wrong_pin_is_one_line(users_store: str) -> None:
    with open_store(users_store, "r") as store:
        digest = store.content_hash("user/lever")
    base = SPEC.split("[[agents]]")[0].replace(
        'tasks = ["user/poge/myworld", "user/lever", "user/grid/corridor/small", "neuronav/grid/t_maze/micro", '
        '"room/small"]', f'tasks = ["user/lever@{digest[:10]}"]'
    )
    text = base + '[[agents]]\nname = "q"\n[[phases]]\nname = "learning"\nepisodes = 3\n'
    spec = parse_spec(text, store=users_store)
    assert spec.tasks == (f"user/lever@{digest[:10]}",)
    assert list(spec.graphs) == ["user/lever"]
    with pytest.raises(ExperimentSpecError, match=f"experiment.tasks\\[0\\]: task 'user/lever' has no version "
                                                  f"0000000: the store has {digest}"):
        parse_spec(text.replace(digest[:10], "0000000"), store=users_store)


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('name = "episodic"\nparams = { capacity = 8 }\ntasks = ["room/small"]', 'name = "episodic"',
         "agents[1].name: the episodic agent cannot run on user/poge/myworld: it takes room observations"),
        ('name = "q"\n', 'name = "q"\nparams = { lr = 0.1 }\ngrid = { lr = [0.2, 0.3] }\n',
         "agents[0].grid.lr: 'lr' is also set in agents[0].params"),
        ("agent.q = { epsilon = 0.0 }", "agent = { epsilonn = 0.0 }", "phases[1].agent.epsilonn: none of the agents"),
        ('learn = false', 'learn = false\nenv = { p_comonsense = 0.5 }',
         "phases[1].env.p_comonsense: user/poge/myworld (poge tasks) has no setting 'p_comonsense'"),
        ('learn = false', 'learn = false\nchanges = { walls_add = [[1, 1]] }', "tile [1, 1] is a start, not floor"),
        ('tasks = ["room/small"]', 'tasks = ["room/large"]', "agents[1].tasks[0]: 'room/large' is not one of"),
        ('"user/lever"', '"user/levr"', "unknown task 'user/levr'; did you mean 'user/lever'?"),
    ],
)
@pytest.mark.slow
def test_a_spec_that_does_not_fit_its_tasks_is_one_line(users_store: str, old: str, new: str, message: str) -> None:
    assert old in SPEC
    with pytest.raises(ExperimentSpecError) as info:
        parse_spec(SPEC.replace(old, new, 1), "any.toml", store=users_store)
    assert message in str(info.value), str(info.value)
    assert "\n" not in str(info.value) and str(info.value).startswith("any.toml")


def test_each_family_changes_its_own_tasks(users_store: str) -> None:
    """POGE: rewards and walls; graph tasks: rewards and edges; the Room task: its settings, by
    the phase's env table (it takes no changes)."""
    with open_store(users_store, "r") as store:
        world = store.get("user/poge/myworld")
        lever = store.get("user/lever")
    changed = tasks.family_of(world).change(world, {"rewards": [{"tile": [1, 5], "value": 7}], "walls_add": [[2, 2]]})
    kinds = {(p["row"], p["col"]): (p["kind"], p.get("reward")) for _, p in changed.nodes("Tile")}
    assert kinds[(2, 2)] == ("wall", None) and kinds[(1, 5)][1] == 7 and kinds[(3, 1)][1] is None
    moved = tasks.family_of(lever).change(lever, {"edges": {"0": {"0": 2}}})
    assert sorted(t for s, t, p in moved.edges("MOVE") if s == "s0") == ["s2", "s2"]
    with pytest.raises(tasks.TaskChangeError, match="room tasks take no changes"):
        tasks.task_family("room").change(tasks.build("room/small"), {"p_commonsense": 0.5})


@pytest.mark.slow
def test_the_room_task_in_a_spec_takes_its_settings_per_phase(users_store: str) -> None:
    text = """
[experiment]
name = "room"
tasks = ["room/small"]
seeds = [0, 1]
[[agents]]
name = "semantic"
params = { capacity = 16 }
[[phases]]
name = "commonsense"
episodes = 1
max_steps = 100
env = { p_commonsense = 1.0 }
[[phases]]
name = "random places"
episodes = 1
max_steps = 100
env = { p_commonsense = 0.0 }
"""
    rows = run_experiment(parse_spec(text, store=users_store), workers=1, store=users_store).rows
    mean = {p: sum(r["return"] for r in rows if r["phase"] == p) / 2 for p in ("commonsense", "random places")}
    assert mean["commonsense"] > mean["random places"] + 10  # semantic memory pays where places are commonsense


def test_user_files_of_every_family_are_read_by_one_call(tmp_path: Path) -> None:
    (tmp_path / "myworld.txt").write_text(WORLD)
    (tmp_path / "lever.json").write_text(json.dumps(GRAPH_TASK))
    (tmp_path / "corridor.txt").write_text(GRID_MAP)
    names = ("myworld.txt", "lever.json", "corridor.txt")
    read = {p: [g.task_id for g in tasks.read_file(tmp_path / p)] for p in names}
    assert read == {"myworld.txt": ["user/poge/myworld"], "lever.json": ["user/lever"],
                    "corridor.txt": ["user/grid/corridor/small"]}
    (tmp_path / "notes.txt").write_text("nothing of any family\n")
    with pytest.raises(tasks.TaskFileError, match="not a task file of any family"):
        tasks.read_file(tmp_path / "notes.txt")


@pytest.mark.slow
def test_load_spec_reads_user_tasks_from_the_given_store(users_store: str, tmp_path: Path) -> None:
    path = tmp_path / "any.toml"
    path.write_text(SPEC)
    assert len(load_spec(path, users_store).graphs) == 5
    with pytest.raises(ExperimentSpecError, match="unknown task 'user/poge/myworld'"):
        load_spec(path, str(tmp_path / "empty.lbug"))


def test_a_phase_cannot_change_a_setting_an_agent_reads_only_when_made() -> None:
    text = """
[experiment]
name = "fixed"
tasks = ["neuronav/graph/two_step"]
[[agents]]
name = "distq"
[[phases]]
name = "learning"
episodes = 2
agent = { lr = 0.5, epsilon = 0.0 }
"""
    with pytest.raises(ExperimentSpecError, match=r"phases\[0\].agent.lr: the distq agent reads lr only when"):
        parse_spec(text, "fixed.toml")
    assert parse_spec(text.replace("lr = 0.5, ", ""), "fixed.toml").phases[0].agent == {"epsilon": 0.0}
