"""Bad input on the command line: one `graphtasks: error:` line, exit 2, no traceback, nothing half-written.

The probes run the real entry point: in-process (`cli.main`, where a traceback would be an
exception escaping into the test) and, where the process itself matters (a full device,
imports at start-up, an installed copy), as a separate `graphtasks` process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tasks
from graphstore import GraphtasksError, open_store
from graphtasks import cli
from graphtasks.commands.output import MAX_PARAM_DEPTH

REPO = Path(__file__).resolve().parents[1]


def run(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error_line(code: int, err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("graphtasks: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def two_step(isolated_store_location) -> str:
    with open_store(str(isolated_store_location)) as store:
        store.put(tasks.build("rewardgym/two-step"))
    return "rewardgym/two-step"


def graphtasks_process(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    """The installed `graphtasks` command in its own process (the script beside this interpreter)."""
    exe = Path(sys.executable).with_name("graphtasks")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "graphtasks"]
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run(command + args, cwd=cwd, text=True, **{"timeout": 300, **streams})


# -- output files -------------------------------------------------------------------------------
def test_export_to_a_missing_folder(two_step, tmp_path, capsys):
    target = tmp_path / "no" / "dir" / "x.ttl"
    code, out, err = run(["export", two_step, "-o", str(target)], capsys)
    assert_one_error_line(code, err, str(target), "No such file or directory")
    assert not target.parent.exists()


def test_export_to_a_directory(two_step, tmp_path, capsys):
    code, out, err = run(["export", two_step, "-o", str(tmp_path)], capsys)
    assert_one_error_line(code, err, str(tmp_path), "is a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.lbug", "store.lbug.lock"]  # no stray file but the lock


@pytest.mark.slow
def test_export_to_a_full_device_in_a_real_process(two_step, tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    proc = graphtasks_process(["export", two_step, "-o", "/dev/full"], tmp_path)
    assert_one_error_line(proc.returncode, proc.stderr, "/dev/full", "No space left on device")
    assert Path("/dev/full").is_char_device()  # written through, never replaced by a rename


@pytest.mark.slow
def test_standard_output_on_a_full_device(two_step, tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        proc = graphtasks_process(["export", two_step], tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert_one_error_line(proc.returncode, proc.stderr, "No space left on device")


def test_export_writes_the_whole_file(two_step, tmp_path, capsys):
    target = tmp_path / "x.ttl"
    code, _, err = run(["export", two_step, "-o", str(target)], capsys)
    assert code == 0, err
    assert "gt:Task" in target.read_text() and oct(target.stat().st_mode & 0o777) != "0o600"


def test_render_to_a_missing_folder(tmp_path, capsys):
    target = tmp_path / "nowhere" / "p.png"
    code, _, err = run(["render", "four_rooms", "--size", "micro", "-o", str(target)], capsys)
    assert_one_error_line(code, err, str(target))
    assert not target.parent.exists()


# -- input files ---------------------------------------------------------------------------------
def test_sparql_query_file_missing(two_step, tmp_path, capsys):
    code, _, err = run(["sparql", f"@{tmp_path / 'missing.rq'}"], capsys)
    assert_one_error_line(code, err, "missing.rq", "No such file or directory")


def test_sparql_query_file_is_a_directory(two_step, tmp_path, capsys):
    code, _, err = run(["sparql", f"@{tmp_path}"], capsys)
    assert_one_error_line(code, err, str(tmp_path), "a directory, not a regular file")


def test_import_of_a_directory(tmp_path, capsys):
    folder = tmp_path / "d.ttl"
    folder.mkdir()
    code, _, err = run(["import", str(folder)], capsys)
    assert_one_error_line(code, err, str(folder))


# -- parameters ---------------------------------------------------------------------------------
def test_unknown_env_param(two_step, capsys):
    code, out, err = run(["run", two_step, "--episodes", "2", "--no-progress", "--env-param", "nosuchkey=1"], capsys)
    assert_one_error_line(code, err, "--env-param", "nosuchkey")
    assert out == ""


def test_non_numeric_agent_param(two_step, capsys):
    code, out, err = run(["run", two_step, "--episodes", "2", "--no-progress", "--agent-param", "lr=abc"], capsys)
    assert_one_error_line(code, err, "--agent-param lr", "expected a number", "'abc'")
    assert out == ""


def test_unknown_agent_param_names_the_nearest(two_step, capsys):
    code, _, err = run(["run", two_step, "--episodes", "2", "--no-progress", "--agent-param", "alpha=0.1"], capsys)
    assert_one_error_line(code, err, "--agent-param alpha", "settings: lr=0.1, gamma=0.95")


def test_bad_env_param_value(two_step, capsys):
    code, _, err = run(["run", two_step, "--episodes", "2", "--no-progress", "--env-param", "time_penalty=-1"], capsys)
    assert_one_error_line(code, err, "--env-param", "time_penalty")


@pytest.mark.parametrize("depth", [MAX_PARAM_DEPTH + 1, 600, 5000])
def test_deeply_nested_param_is_refused(two_step, capsys, depth):
    value = "[" * depth + "]" * depth
    code, _, err = run(["cypher", "MATCH (t:Task) RETURN $x AS x LIMIT 1", "--param", f"x={value}"], capsys)
    assert_one_error_line(code, err, "--param x", f"nested {depth} levels", f"limit is {MAX_PARAM_DEPTH}")


def test_nested_param_within_the_limit_is_used(two_step, capsys):
    value = json.dumps({"a": [[1, 2], [3]]})
    code, out, err = run(["cypher", "MATCH (t:Task) RETURN t.uid AS id", "--param", f"x={value}", "--format", "json"],
                         capsys)
    assert code == 0, err
    assert json.loads(out) == [{"id": "rewardgym/two-step"}]


# -- task ids -----------------------------------------------------------------------------------
def test_mistyped_builtin_id_suggests_the_nearest(capsys):
    code, _, err = run(["tasks", "load", "rewardgym/two-stp"], capsys)
    assert_one_error_line(code, err, "did you mean 'rewardgym/two-step'?")


def test_mistyped_stored_id_suggests_the_nearest(two_step, capsys):
    code, _, err = run(["tasks", "show", "rewardgym/twostep"], capsys)
    assert_one_error_line(code, err, "not found", "did you mean 'rewardgym/two-step'?")


def test_run_with_a_mistyped_id_suggests_stored_and_builtin_ids(capsys):
    code, _, err = run(["run", "neuronav/graph/human_aa", "--episodes", "1", "--no-progress"], capsys)
    assert_one_error_line(code, err, "did you mean 'neuronav/graph/human_a'")


def test_gym_make_of_a_mistyped_task_suggests_the_nearest():
    import gymnasium as gym

    import gym_bridge  # noqa: F401 - registers the ids

    with pytest.raises(GraphtasksError, match=r"did you mean 'rewardgym/two-step'\?"):
        gym.make("graphtasks/Graph-v0", task="rewardgym/two-stp")


# -- the contract itself ------------------------------------------------------------------------
def test_every_error_class_of_the_project_is_under_one_root():
    from graphstore import ConflictError, QueryError, SchemaError, StoreLocationError, TaskNotFound
    from ingest.conceptnet import IngestError
    from tasks.data import TaskFileError
    from tasks.families import UnknownTask
    from tasks.graph.notation import GraphNotationError
    from tasks.graph.schedules import ScheduleError
    from tasks.poge.parser import PogeFormatError
    from tasks.rewards import RewardSpecError
    from tasks.room import RoomKnowledgeError

    for cls in (ConflictError, QueryError, SchemaError, StoreLocationError, TaskNotFound, IngestError, TaskFileError,
                GraphNotationError, PogeFormatError, UnknownTask, RewardSpecError, RoomKnowledgeError, ScheduleError):
        assert issubclass(cls, GraphtasksError), cls


@pytest.mark.parametrize("bug", [ValueError("a bug"), TypeError("a bug"), KeyError("a bug"), ZeroDivisionError()])
def test_a_programming_error_keeps_its_traceback(monkeypatch, bug):
    from graphtasks.commands import query_cmd

    def broken(args):
        raise bug

    monkeypatch.setattr(query_cmd, "cmd_cypher", broken)
    with pytest.raises(type(bug)):
        cli.main(["cypher", "RETURN 1"])


# -- the parser and the benchmark suite ------------------------------------------------------------
@pytest.mark.slow
def test_building_the_parser_imports_no_benchmark_and_leaves_sys_path_alone(tmp_path):
    probe = (
        "import sys; before = list(sys.path)\n"
        "from graphtasks import cli; cli.build_parser()\n"
        "print(any(m == 'benchmarks' or m.startswith('benchmarks.') for m in sys.modules), sys.path == before)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.stdout.split() == ["False", "True"], proc.stderr


def installed_copy(site: Path) -> Path:
    """What an install puts in site-packages: the packages pyproject.toml declares, and nothing else."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = config.get("package-dir", {})
    for package in config["packages"]:
        source = REPO / folders.get(package, package.replace(".", "/"))
        target = site / package.replace(".", "/")
        target.mkdir(parents=True, exist_ok=True)
        for path in source.iterdir():
            if path.is_file() and (path.suffix == ".py" or package in config.get("package-data", {})):
                shutil.copy(path, target / path.name)
            elif path.is_dir() and package in config.get("package-data", {}):
                shutil.copytree(path, target / path.name, dirs_exist_ok=True)
    return site


@pytest.mark.slow
def test_bench_runs_from_an_installed_copy_away_from_the_checkout(tmp_path):
    site = installed_copy(tmp_path / "site")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "broken.json").write_text("{}")
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run([sys.executable, "-c", "import benchmarks.run_all as r; print(r.__file__)"], cwd=elsewhere,
                           env=env, capture_output=True, text=True)
    assert where.stdout.startswith(str(site)), where.stderr
    shown = subprocess.run([sys.executable, "-m", "graphtasks", "bench", "--help"], cwd=elsewhere, env=env,
                           capture_output=True, text=True)
    assert shown.returncode == 0 and "--families" in shown.stdout, shown.stderr
    refused = subprocess.run([sys.executable, "-m", "graphtasks", "bench", "--from-json", "broken.json"],
                             cwd=elsewhere, env=env, capture_output=True, text=True)
    assert_one_error_line(refused.returncode, refused.stderr, "broken.json: not a run_all result")


def test_delete_on_a_missing_store_creates_nothing(tmp_path, capsys):
    location = tmp_path / "missing.lbug"
    code, _, err = run(["--store", str(location), "tasks", "delete", "rewardgym/two-step"], capsys)
    assert_one_error_line(code, err, "does not exist")
    assert not location.exists()


# -- numbers and files on the command line ---------------------------------------------------------
def run_to_exit(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """`run`, for errors found while the arguments are parsed: argparse ends those with SystemExit."""
    capsys.readouterr()
    try:
        code = cli.main(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


BAD_NUMBERS = [
    (["run", "rewardgym/two-step", "--episodes", "-1"], "--episodes: expected a whole number from 1 to 10,000,000,"),
    (["run", "rewardgym/two-step", "--episodes", "0"], "run: --episodes: expected a whole number from 1"),
    (["run", "rewardgym/two-step", "--seed", "-1"], "run: --seed: expected a whole number from 0 to"),
    (["run", "rewardgym/two-step", "--seed", "1e3"], "run: --seed: expected a whole number from 0 to"),
    (["run", "rewardgym/two-step", "--max-steps", "0"], "run: --max-steps: expected a whole number from 1"),
    (["render", "four_rooms", "--resolution", "0"], "render: --resolution: expected a whole number from 16 to 4,096"),
    (["render", "four_rooms", "--resolution", "-5"], "render: --resolution: expected a whole number from 16 to 4,096"),
    (["render", "four_rooms", "--resolution", "60000"], "render: --resolution: expected a whole number from 16"),
    (["ingest", "api", "--timeout", "-1"], "ingest api: --timeout: expected a finite number > 0 and <= 3600"),
    (["ingest", "api", "--timeout", "nan"], "ingest api: --timeout: expected a finite number > 0"),
    (["ingest", "api", "--timeout", "inf"], "ingest api: --timeout: expected a finite number > 0"),
    (["ingest", "api", "--backoff", "-1"], "ingest api: --backoff: expected a finite number from 0 to 3600"),
    (["ingest", "api", "--retries", "0"], "ingest api: --retries: expected a whole number from 1 to 100"),
    (["ingest", "api", "--rate-limit", "nan"], "ingest api: --rate-limit: expected a finite number from 0"),
    (["room", "baselines", "--capacities", "-1"], "room baselines: --capacities: expected a whole number from 2"),
    (["room", "baselines", "--capacities", "4,1"], "--capacities: expected a whole number from 2 to 1,000,000, got '1' "
                                                  "(in '4,1')"),
    (["room", "baselines", "--num-agents", "0"], "room baselines: --num-agents: expected a whole number from 1 to 1,"),
    (["run", "room", "--seeds", "0,-1"], "room baselines: --seeds: expected a whole number from 0"),
    (["fit", "simulate", "x.tsv", "--params", "lr=nan,beta=3"], "fit simulate: --params: expected NAME=NUMBER with a "
                                                               "finite number, got 'lr=nan'"),
    (["fit", "simulate", "x.tsv", "--params", "lr=0.3,beta=3", "--seed", "-1"], "fit simulate: --seed"),
    (["fit", "model-recovery", "--workers", "0"], "fit model-recovery: --workers: expected a whole number from 1"),
    (["fit", "parameter-recovery", "--seed", "-1"], "fit parameter-recovery: --seed: expected a whole number from 0"),
    (["fit", "run", "lab", "--starts", "0"], "fit run: --starts: expected a whole number from 1 to 1,000"),
]


@pytest.mark.parametrize("argv, expected", BAD_NUMBERS, ids=[" ".join(a) for a, _ in BAD_NUMBERS])
def test_a_number_out_of_range_is_one_line(argv, expected, tmp_path, capsys, isolated_store_location):
    code, out, err = run_to_exit(argv, capsys)
    assert_one_error_line(code, err, expected)
    assert out == "" and not isolated_store_location.exists()
    assert not (tmp_path / "x.tsv").exists()


@pytest.mark.parametrize("argv, expected", [
    (["poge", "stats", "missing.txt"], "poge stats: world: no world file 'missing.txt'"),
    (["fit", "simulate", "x.tsv", "--params", "lr=5,beta=3"], "--params: the q agent's lr: expected a number between 0 "
                                                             "and 1, got 5.0"),
    (["fit", "run", "lab", "--agent", "q", "--free", "lr=0:inf"], "--free: lr: bounds must be finite numbers"),
    (["fit", "parameter-recovery", "--participants", "1000000"], "participants: expected a whole number of at most"),
])
def test_a_value_the_command_checks_is_one_line(argv, expected, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_to_exit(argv, capsys)
    assert_one_error_line(code, err, expected)
    assert not (tmp_path / "x.tsv").exists()


def test_numbers_in_range_are_taken(tmp_path, capsys):
    target = tmp_path / "p.png"
    code, out, err = run_to_exit(["render", "four_rooms", "--size", "micro", "--resolution", "16", "-o", str(target)],
                                 capsys)
    assert code == 0, err
    assert "wrote" in out and target.stat().st_size > 0


def test_import_of_a_latin1_ntriples_file(tmp_path, capsys, isolated_store_location):
    path = tmp_path / "task.nt"
    path.write_bytes('<http://example.org/a> <http://example.org/b> "café" .\n'.encode("latin-1"))
    code, _, err = run(["import", str(path)], capsys)
    assert_one_error_line(code, err, f"{path}, line 1, byte 50: not UTF-8 text (byte 0xe9")
    assert not isolated_store_location.exists()


def test_import_of_dev_zero_as_turtle_in_a_real_process(tmp_path):
    link = tmp_path / "zero.ttl"
    link.symlink_to("/dev/zero")
    proc = graphtasks_process(["import", str(link)], tmp_path, timeout=60)
    assert_one_error_line(proc.returncode, proc.stderr, f"{link}: a character device, not a regular file")


def test_sparql_query_file_that_never_ends_in_a_real_process(tmp_path):
    proc = graphtasks_process(["sparql", "@/dev/zero"], tmp_path, timeout=60)
    assert_one_error_line(proc.returncode, proc.stderr, "sparql: the query file /dev/zero: a character device")
