"""Experiment specs: checked before anything runs, run the same on any number of workers,
phases change the task as data (variants with their own content hash)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from graphtasks.cli import main
from graphtasks.experiments import COLUMNS, ExperimentSpecError, cells, load_spec, parse_spec, run_experiment
from graphtasks.experiments.records import record_sources
from gym_bridge.graph import GraphTaskEnv
from gym_bridge.grid import GridEnv
from tasks import build
from tasks.variants import TaskChangeError, task_variant

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "data" / "experiments").glob("*.toml"))

SMALL = """
[experiment]
name = "small"
tasks = ["neuronav/grid/t_maze/micro", "rewardgym/two-step"]
seeds = [3, 4]

[[agents]]
name = "q"
grid = { beta = [1.0, 4.0] }

[[agents]]
name = "sr"

[[phases]]
name = "learning"
episodes = 6
max_episode_steps = 20

[[phases]]
name = "test"
episodes = 3
max_episode_steps = 20
learn = false
"""


def small_spec(tmp_path: Path, text: str = SMALL) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_the_shipped_specs_are_valid(path: Path) -> None:
    spec = load_spec(path)
    assert spec.name == path.stem and len(cells(spec)) >= 10
    assert spec.reference


def test_cells_are_tasks_by_agent_settings_by_seeds(tmp_path: Path) -> None:
    spec = load_spec(small_spec(tmp_path))
    assert [a.label for a in spec.agents] == ["q beta=1.0", "q beta=4.0", "sr"]
    runs = cells(spec)
    assert len(runs) == 2 * 3 * 2
    assert [(c.task, c.agent.label, c.seed) for c in runs[:3]] == [
        ("neuronav/grid/t_maze/micro", "q beta=1.0", 3),
        ("neuronav/grid/t_maze/micro", "q beta=1.0", 4),
        ("neuronav/grid/t_maze/micro", "q beta=4.0", 3),
    ]


def test_same_rows_on_one_and_on_two_workers(tmp_path: Path) -> None:
    spec = load_spec(small_spec(tmp_path))
    one = run_experiment(spec, workers=1)
    two = run_experiment(spec, workers=2)
    assert one.failures == [] and two.failures == []
    assert len(one.rows) == 12 * 9
    assert one.rows == two.rows
    other_seed = run_experiment(load_spec(small_spec(tmp_path, SMALL.replace("[3, 4]", "[5, 6]"))), workers=1)
    assert [r["return"] for r in other_seed.rows] != [r["return"] for r in one.rows]


def test_a_test_phase_does_not_learn(tmp_path: Path) -> None:
    text = SMALL.replace("episodes = 3", "episodes = 40").replace(
        'tasks = ["neuronav/grid/t_maze/micro", ', "tasks = ["
    )
    rows = run_experiment(load_spec(small_spec(tmp_path, text)), workers=1).rows
    # a greedy q agent (beta 4) that does not learn picks the same first action from the same state
    # every test episode of the two-step task; with learning it would follow its updated values
    test = [r for r in rows if r["phase"] == "test" and r["label"] == "q beta=4.0" and r["seed"] == 3]
    assert len(test) == 40 and all(r["length"] == 2 for r in test)


def test_a_changed_phase_runs_a_variant_with_its_own_hash(tmp_path: Path) -> None:
    text = SMALL.replace(
        'name = "test"',
        'name = "test"\ntask = "neuronav/grid/t_maze/micro"\nchanges = { rewards = [{ cell = [1, 5], value = 2.0 }] }',
    )
    rows = run_experiment(load_spec(small_spec(tmp_path, text)), workers=1).rows
    learning = {r["task_hash"] for r in rows if r["phase"] == "learning" and r["task"] == "neuronav/grid/t_maze/micro"}
    test = {(r["phase_task"], r["task_hash"]) for r in rows if r["phase"] == "test"}
    assert len(learning) == 1 and len(test) == 1
    ((variant, variant_hash),) = test
    assert variant.startswith("neuronav/grid/t_maze/micro/variant-") and variant_hash not in learning
    assert {r["return"] for r in rows if r["phase"] == "test"} <= {0.0, 2.0}


def test_start_states_cycle_through_the_given_cells(tmp_path: Path) -> None:
    text = SMALL.replace(
        'tasks = ["neuronav/grid/t_maze/micro", "rewardgym/two-step"]', 'tasks = ["neuronav/grid/t_maze/micro"]'
    )
    text = text.replace("learn = false", "learn = false\nstart = [[3, 3], [1, 2]]")
    rows = run_experiment(load_spec(small_spec(tmp_path, text)), workers=1).rows
    n = build("neuronav/grid/t_maze/micro").task["params"]["n"]
    starts = [r["start_state"] for r in rows if r["phase"] == "test" and r["run"] == 0]
    assert starts == [3 * n + 3, 1 * n + 2, 3 * n + 3]


BAD = [
    ('name = "q"', 'name = "qq"', "line 8: agents[0].name: unknown agent 'qq'; did you mean 'q'?"),
    (
        "grid = { beta = [1.0, 4.0] }",
        "params = { betta = 2 }",
        "line 9: agents[0].params.betta: the q agent has no setting 'betta'",
    ),
    (
        "grid = { beta = [1.0, 4.0] }",
        'params = { beta = "high" }',
        "agents[0].params.beta: the q agent's beta: expected a number",
    ),
    ('"rewardgym/two-step"]', '"rewardgym/too-step"]', "line 4: experiment.tasks[1]:"),
    (
        "max_episode_steps = 20\n\n",
        "max_episode_steps = 20\nepisode = 4\n\n",
        "line 18: phases[0].episode: unknown field; did you mean 'episodes'?",
    ),
    ("episodes = 6", "episodes = -6", "line 16: phases[0].episodes: expected an integer from 1 to 10,000,000, got -6"),
    (
        "learn = false",
        "learn = false\nchanges = { rewards = [{ cell = [30, 1] }] }",
        "phases[1].changes.rewards[0].cell: cell [30, 1] is outside",
    ),
    ("seeds = [3, 4]", "seeds = [3, 3]", "line 5: experiment.seeds: a seed is listed twice"),
    ("[[phases]]", "[[phase]]", "phase: unknown field; did you mean 'phases'?"),
    ("seeds = [3, 4]", "seeds = [3, 4", "not valid TOML"),
    (
        "learn = false\n",
        'learn = false\n[[conditions]]\nname = "c"\n[conditions.phases.testing]\nlearn = true\n',
        "line 26: conditions[0].phases.testing: unknown field; did you mean 'test'?",
    ),
    (
        "learn = false\n",
        'learn = false\n[[conditions]]\nname = "c"\n[conditions.phases.test]\nepisodes = 0\n',
        "line 27: conditions[0].phases.test.episodes: expected an integer from 1 to 10,000,000, got 0",
    ),
]


@pytest.mark.parametrize("old, new, message", BAD, ids=[b[2][:40] for b in BAD])
def test_a_bad_spec_is_one_line_naming_file_line_and_field(tmp_path: Path, capsys, old: str, new: str, message: str):
    assert old in SMALL
    path = small_spec(tmp_path, SMALL.replace(old, new, 1))
    with pytest.raises(ExperimentSpecError) as info:
        load_spec(path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert main(["experiment", "run", str(path), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("graphtasks: error: ") and message in err[0]


def test_a_graph_change_naming_a_missing_state_is_refused() -> None:
    with pytest.raises(TaskChangeError, match="state 99 does not exist"):
        task_variant("rewardgym/two-step", {"edges": {"99": {"0": 1}}}, "spec.toml, line 3: phases[0].changes")
    with pytest.raises(ExperimentSpecError, match="spec.toml, line 8: phases.0..changes: unknown change.s. walls"):
        parse_spec(
            '[experiment]\nname = "x"\ntasks = ["rewardgym/two-step"]\n[[agents]]\nname = "q"\n[[phases]]\n'
            "episodes = 2\nchanges = { walls = [] }\n",
            "spec.toml",
        )


def test_graph_variants_change_transitions_and_rewards() -> None:
    base = GraphTaskEnv(task=build("rewardgym/two-step"))
    changed = task_variant("rewardgym/two-step", {"edges": {"0": {"0": 2}}})
    assert changed.content_hash() != build("rewardgym/two-step").content_hash()
    env = GraphTaskEnv(task=changed)
    env.reset(seed=0)
    assert {env.step(0)[4]["state"] for _ in range(1) if env.reset(seed=0)} == {2}
    assert base.compiled.n_states == env.compiled.n_states


def test_grid_variants_add_walls_and_move_rewards() -> None:
    variant = task_variant(
        "neuronav/grid/t_maze/small", {"walls_add": [[9, 4]], "rewards": [{"cell": [1, 9], "value": 1}]}
    )
    env = GridEnv(task=variant, obs_type="ascii")
    text, _ = env.reset(seed=0)
    assert text.splitlines()[1] == "B        RB" and text.splitlines()[9][4] == "B"
    with pytest.raises(TaskChangeError, match="start cell"):
        task_variant("neuronav/grid/t_maze/small", {"walls_add": [[9, 5]]})


def test_the_command_writes_one_row_per_episode(tmp_path: Path, capsys) -> None:
    out = tmp_path / "episodes.csv"
    assert (
        main(["experiment", "run", str(small_spec(tmp_path)), "--workers", "2", "--no-progress", "-o", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    assert "q beta=4.0" in printed and "(12 rows)" in printed
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [c if c != "params" else "param_beta" for c in COLUMNS] and len(rows) == 12 * 9
    assert main(["experiment", "check", str(small_spec(tmp_path))]) == 0
    assert "12 runs of 2 phase(s)" in capsys.readouterr().out


# -- records in the store --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def recorded_small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The small spec and a store it was run into by the command, on two workers, once for the
    tests that read its records or are refused by them (each ran its own before)."""
    folder = tmp_path_factory.mktemp("recorded")
    spec_path, store = small_spec(folder), str(folder / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec_path), "--workers", "2", "--no-progress"]) == 0
    return spec_path, store


@pytest.mark.slow
def test_runs_are_recorded_and_a_rerun_skips_them(tmp_path: Path, capsys, recorded_small) -> None:
    from graphstore import open_store
    from graphtasks.experiments.records import recorded_episodes, recorded_experiments

    spec_path, store = recorded_small
    capsys.readouterr()
    plain = run_experiment(load_spec(spec_path), workers=1).rows
    with open_store(store, "r") as opened:
        assert recorded_episodes(opened, "small") == plain
        assert recorded_experiments(opened)[0] | {"created_at": None} == {
            "experiment": "small",
            "created_at": None,
            "runs": 12,
            "completed": 12,
        }
        learning_curve = opened.cypher(  # the episodes are chunks: Cypher scans them joined to the runs
            "MATCH (r:Run) WHERE r.owner = 'experiment/small' WITH r "
            "LOAD FROM $episodes WHERE experiment = 'small' AND run = r.index "
            "RETURN r.label, phase, episode, avg(reward) ORDER BY r.label, phase, episode",
            sources=record_sources(opened),
        ).rows
        assert len(learning_curve) == 3 * (6 + 3)
        assert opened.cypher("MATCH (e:Episode) RETURN count(e)").rows == [[0]]
    assert main(["--store", store, "experiment", "run", str(spec_path), "--no-progress"]) == 0
    assert "12 run(s) already recorded, 0 to go" in capsys.readouterr().out
    with open_store(store, "r") as opened:
        assert opened.cypher("LOAD FROM $episodes RETURN count(*)", sources=record_sources(opened)).rows == [[12 * 9]]
    out = tmp_path / "export.csv"
    assert main(["--store", store, "experiment", "export", "small", "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 12 * 9


def test_another_spec_under_a_recorded_name_is_refused(tmp_path: Path, capsys, recorded_small) -> None:
    _, store = recorded_small
    capsys.readouterr()
    changed = small_spec(tmp_path, SMALL.replace("episodes = 6", "episodes = 7"))
    assert main(["--store", store, "experiment", "run", str(changed), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "experiment 'small' is recorded" in err[0] and "with another spec" in err[0]


@pytest.mark.slow
def test_a_killed_sweep_completes_on_the_same_command_with_nothing_doubled(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from graphstore import open_store
    from graphtasks.experiments.records import recorded_episodes

    text = SMALL.replace("episodes = 6", "episodes = 800")
    text = text.replace("max_episode_steps = 20", "max_episode_steps = 60", 1)
    spec_path = small_spec(tmp_path, text)
    store = str(tmp_path / "store.lbug")
    command = [
        sys.executable,
        "-m",
        "graphtasks",
        "--store",
        store,
        "experiment",
        "run",
        str(spec_path),
        "--workers",
        "2",
        "--no-progress",
    ]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    done = 0
    while time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.2)
        try:
            with open_store(store, "r") as opened:
                done = opened.cypher("MATCH (r:Run) WHERE r.status = 'completed' RETURN count(r)").rows[0][0]
        except Exception:  # noqa: BLE001 - the store may not exist yet
            continue
        if done >= 1:
            break
    assert driver.poll() is None, f"the sweep ended before it could be killed: {driver.stderr.read()!r}"
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and its workers, mid-sweep
    driver.wait()
    with open_store(store, "r") as opened:
        partial = opened.cypher("MATCH (r:Run) RETURN count(r)").rows[0][0]
    assert 1 <= partial < 12
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert "already recorded" in finished.stdout
    with open_store(store, "r") as opened:
        scanned = opened.cypher("LOAD FROM $episodes RETURN count(*)", sources=record_sources(opened)).rows
        assert scanned == [[12 * 803]]
        assert opened.cypher("MATCH (r:Run) RETURN count(r)").rows == [[12]]
        assert recorded_episodes(opened, "small") == run_experiment(load_spec(spec_path), workers=2).rows


def test_plot_draws_a_png_per_recorded_experiment(tmp_path: Path, capsys, recorded_small) -> None:
    from PIL import Image

    _, store = recorded_small
    picture = tmp_path / "curves.png"
    assert main(["--store", store, "experiment", "plot", "small", "--smooth", "3", "-o", str(picture)]) == 0
    with Image.open(picture) as image:
        assert image.format == "PNG" and image.size[0] > 2 * image.size[1]  # two tasks, side by side
    capsys.readouterr()
    assert main(["--store", store, "experiment", "plot", "smal", "-o", str(picture)]) == 2
    assert "no recorded experiment 'smal'; recorded: small" in capsys.readouterr().err


def test_curves_average_runs_and_keep_the_first_episodes() -> None:
    import numpy as np

    from graphtasks.experiments.figures import curves, trailing_mean

    rows = [
        {
            "task": "t",
            "label": "a",
            "run": run,
            "phase_index": phase,
            "episode": e,
            "return": float(run + e + 10 * phase),
        }
        for run in (0, 1)
        for phase in (0, 1)
        for e in range(3)
    ]
    mean, se, runs = curves(rows, "return")["t"]["a"]
    assert runs == 2 and mean.tolist() == [0.5, 1.5, 2.5, 10.5, 11.5, 12.5]
    assert np.allclose(se, np.std([0, 1], ddof=1) / np.sqrt(2))
    assert trailing_mean(np.array([4.0, 2.0, 0.0, 6.0]), 2).tolist() == [4.0, 3.0, 1.0, 3.0]


@pytest.mark.slow
def test_a_dask_cluster_gives_the_same_records(tmp_path: Path, capsys) -> None:
    """A real LocalCluster with 2 worker processes, reached by its scheduler address as a team's
    cluster would be; then `--dask local`, which starts and stops one itself."""
    from distributed import LocalCluster

    from graphstore import open_store
    from graphtasks.experiments.records import recorded_episodes

    spec_path = small_spec(tmp_path)
    plain = run_experiment(load_spec(spec_path), workers=1).rows
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        store = str(tmp_path / "cluster.lbug")
        command = ["--store", store, "experiment", "run", str(spec_path), "--no-progress"]
        assert main([*command, "--dask", cluster.scheduler_address]) == 0
    with open_store(store, "r") as opened:
        assert recorded_episodes(opened, "small") == plain
    local = run_experiment(load_spec(spec_path), workers=2, dask="local")
    assert local.failures == [] and local.rows == plain


@pytest.mark.slow
def test_trials_are_recorded_and_stay_probabilities_come_from_cypher(tmp_path: Path) -> None:
    """The two-step stay analysis as a Cypher query over the Trial records equals the runner's
    own computation (gym_bridge.runner.stay_probabilities) over the same trials."""
    import numpy as np

    from graphstore import open_store
    from graphtasks.experiments.records import STAY_QUERY

    text = SMALL.replace(
        'tasks = ["neuronav/grid/t_maze/micro", "rewardgym/two-step"]', 'tasks = ["rewardgym/two-step"]'
    )
    text = text.replace("episodes = 6", "episodes = 120")
    spec_path = small_spec(tmp_path, text)
    store = str(tmp_path / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec_path), "--no-progress", "--workers", "2"]) == 0
    result = run_experiment(load_spec(spec_path), workers=1)
    assert len(result.trials) == 2 * len(result.rows)  # two stages per trial
    with open_store(store, "r") as opened:
        sources = record_sources(opened)
        assert opened.cypher("LOAD FROM $trials RETURN count(*)", sources=sources).rows == [[len(result.trials)]]
        from_cypher = {(a, k): v for a, k, v in opened.cypher(STAY_QUERY, {"experiment": "small"}, sources).rows}
    compiled = GraphTaskEnv(task=build("rewardgym/two-step")).compiled
    probability = {
        (a, int(t)): p
        for a in range(compiled.n_actions)
        for t, p in zip(compiled.targets[compiled.start, a], compiled.probs[compiled.start, a])
        if t >= 0
    }
    pooled: dict[tuple[str, str], list[bool]] = {}  # the runner's stay analysis, pooled over runs and phases
    first = {(t["run"], t["phase_index"], t["episode"]): t for t in result.trials if t["step"] == 0}
    for row in result.rows:
        after = first.get((row["run"], row["phase_index"], row["episode"] + 1))
        if after is None:
            continue
        trial = first[(row["run"], row["phase_index"], row["episode"])]
        common = probability[(trial["action"], trial["next_state"])] >= 0.5
        key = ("rewarded" if row["return"] > 0 else "unrewarded") + ("_common" if common else "_rare")
        pooled.setdefault((row["label"], key), []).append(after["action"] == trial["action"])
    expected = {k: float(np.mean(v)) for k, v in pooled.items()}
    assert set(from_cypher) == set(expected)
    assert all(np.isclose(from_cypher[k], expected[k]) for k in expected)
    from graphtasks.experiments.figures import plot_experiment
    from graphtasks.experiments.records import stay_by_run

    with open_store(store, "r") as opened:
        per_run = stay_by_run(opened, "small")
        assert plot_experiment(opened, "small", tmp_path / "stay.png") == "stay"
    assert set(per_run) == set(expected) and all(len(v) == 2 for v in per_run.values())  # two seeds


DESIGN_A = (REPO / "data" / "experiments" / "momennejad2017-design-a.toml").read_text(encoding="utf-8")


@pytest.mark.slow
def test_conditions_run_their_own_versions_of_the_phases(tmp_path: Path) -> None:
    spec = load_spec(small_spec(tmp_path, DESIGN_A.replace("seeds = 10", "seeds = 2")))
    assert spec.condition_names() == ("control", "reward", "transition")
    runs = cells(spec)
    assert len(runs) == 3 * 5 * 2 and [c.condition for c in runs[:11]] == ["control"] * 10 + ["reward"]
    relearning = {c: spec.phases_of(c)[1] for c in spec.condition_names()}
    assert relearning["control"].start == [1, 0] and not relearning["control"].changes
    assert relearning["reward"].start == [2, 3] and relearning["reward"].changes["rewards"] == {"4": 1.0, "5": 10.0}
    assert spec.phases_of("reward")[0] == spec.phases_of("control")[0]  # a condition changes only what it names
    result = run_experiment(spec, workers=1)
    starts = {(r["condition"], r["phase"]): set() for r in result.rows}
    for r in result.rows:
        starts[(r["condition"], r["phase"])].add(r["start_state"])
    assert starts[("reward", "relearning")] == {2, 3} and starts[("control", "relearning")] == {0, 1}


@pytest.mark.slow
def test_a_random_start_set_draws_only_from_it_and_the_same_on_every_run_of_a_seed(tmp_path: Path) -> None:
    text = DESIGN_A.replace("seeds = 10", "seeds = 2").replace("start = [2, 3]", "start = { random = [0, 2, 3] }", 1)
    result = run_experiment(load_spec(small_spec(tmp_path, text)), workers=1)
    drawn = [r for r in result.rows if r["condition"] == "reward" and r["phase"] == "relearning"]
    assert result.failures == [] and {r["start_state"] for r in drawn} == {0, 2, 3}
    by_seed: dict[tuple[int, str], list[int]] = {}
    for r in drawn:
        by_seed.setdefault((r["seed"], r["label"]), []).append(r["start_state"])
    assert by_seed[(0, "TD-Q")] == by_seed[(0, "TD-SR")] != by_seed[(1, "TD-Q")]


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("start = [2, 3]", "start = { random = [2, 9] }", "phases.relearning.start.random: state 9 does not exist"),
        ("options = [[0, 0], [1, 0]], temperature", "options = [[0, 0], [7, 0]], temperature", "state 7 does not"),
        ("temperature = 5.0 }", "temperature = 0 }", "phases[0].probe.temperature: expected a positive finite number"),
        ('[conditions.phases.relearning]', '[conditions.phases.relearn]', "unknown field; did you mean 'relearning'"),
    ],
)
def test_bad_conditions_probes_and_start_sets_are_one_line(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in DESIGN_A
    with pytest.raises(ExperimentSpecError) as info:
        load_spec(small_spec(tmp_path, DESIGN_A.replace(old, new, 1)))
    assert message in str(info.value) and ", line " in str(info.value)


@pytest.mark.slow
def test_revaluation_scores_come_from_the_probe_records(tmp_path: Path) -> None:
    """Design A (Momennejad et al. 2017): the revaluation query over the Probe records equals the
    probes the runner returns; the model-free agent does not revalue rewards it only sees from the
    middle of the chains, the successor representation does."""
    import numpy as np

    from graphstore import open_store
    from graphtasks.experiments.records import REVALUATION_QUERY

    path = small_spec(tmp_path, DESIGN_A.replace("seeds = 10", "seeds = 3"))
    store = str(tmp_path / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(path), "--no-progress", "--workers", "2"]) == 0
    params = {"experiment": "momennejad2017-design-a", "before": "learning", "after": "relearning"}
    with open_store(store, "r") as opened:
        scores = {(a, c): (v, n) for a, c, v, n in opened.cypher(REVALUATION_QUERY, params).rows}
        assert opened.cypher("MATCH (p:Phase) RETURN count(p)").rows == [[2 * 3]]
    result = run_experiment(load_spec(path), workers=1)
    runs = {row["run"]: row for row in result.rows}
    moved: dict[tuple[str, str], list[float]] = {}
    for run in {p["run"] for p in result.probes}:
        own = sorted((p for p in result.probes if p["run"] == run), key=lambda p: p["phase_index"])
        before, after = (p["preference"] for p in own)
        moved.setdefault((runs[run]["label"], runs[run]["condition"]), []).append(abs(after - before))
    assert set(scores) == set(moved)
    assert all(np.isclose(scores[k][0], np.mean(v)) and scores[k][1] == 3 for k, v in moved.items())
    assert scores[("TD-Q", "reward")][0] < 0.01 and scores[("TD-SR", "reward")][0] > 0.3
    assert scores[("TD-SR", "transition")][0] < 0.05  # the SR's map is not relearnt from the middle states
    from graphtasks.experiments.figures import plot_experiment
    from graphtasks.experiments.records import revaluation_by_run

    with open_store(store, "r") as opened:
        assert revaluation_by_run(opened, "momennejad2017-design-a") == moved
        assert plot_experiment(opened, "momennejad2017-design-a", tmp_path / "bars.png") == "revaluation"
        assert plot_experiment(opened, "momennejad2017-design-a", tmp_path / "c.png", "curves") == "curves"
        with pytest.raises(ValueError, match="no recorded first-stage trials"):
            plot_experiment(opened, "momennejad2017-design-a", tmp_path / "s.png", "stay")
    assert (tmp_path / "bars.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_trial_records_the_probability_the_agent_gave_its_action(tmp_path: Path) -> None:
    text = SMALL.replace('"neuronav/grid/t_maze/micro", ', "").replace('name = "sr"', 'name = "random"')
    result = run_experiment(load_spec(small_spec(tmp_path, text)), workers=1)
    random_runs = {r["run"] for r in result.rows if r["agent"] == "random"}
    assert {t["p_action"] for t in result.trials if t["run"] in random_runs} == {0.5}
    softmax = [t["p_action"] for t in result.trials if t["run"] not in random_runs]
    assert softmax and all(0.0 < p < 1.0 for p in softmax) and len(set(softmax)) > 10


@pytest.mark.slow
def test_a_killed_worker_costs_its_batch_only_and_the_same_command_redoes_it(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from graphstore import open_store

    text = SMALL.replace("episodes = 6", "episodes = 2000")
    text = text.replace("max_episode_steps = 20", "max_episode_steps = 60", 1)
    spec_path = small_spec(tmp_path, text)  # every run takes seconds: the kill lands in one
    store = str(tmp_path / "store.lbug")
    command = [sys.executable, "-m", "graphtasks", "--store", store, "experiment", "run", str(spec_path)]
    command += ["--workers", "2", "--no-progress"]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while not workers and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.5)
        listed = subprocess.run(["pgrep", "-P", str(driver.pid)], capture_output=True, text=True).stdout
        workers = [int(pid) for pid in listed.split()]
    assert workers, "no worker process appeared"
    time.sleep(0.5)
    os.kill(workers[0], signal.SIGKILL)
    out, err = driver.communicate(timeout=300)
    assert driver.returncode == 1 and "interrupted: its worker process died" in out, (out, err)
    with open_store(store, "r") as opened:
        statuses = dict(opened.cypher("MATCH (r:Run) RETURN r.status, count(r)").rows)
    # the runs of the unit the worker held (one run, or one batch of runs) are lost, the sweep went on
    assert statuses["interrupted"] >= 1 and statuses.get("completed", 0) >= 1, statuses
    assert statuses["interrupted"] + statuses["completed"] == 12, statuses
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    with open_store(store, "r") as opened:
        assert opened.cypher("MATCH (r:Run) RETURN r.status, count(r)").rows == [["completed", 12]]
        scanned = opened.cypher("LOAD FROM $episodes RETURN count(*)", sources=record_sources(opened)).rows
        assert scanned == [[12 * 2003]]
