"""Spec files a careless or hostile user writes: each is refused with one line naming the file,
line and field, in time linear in its size, before anything is written to the store."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphtasks.experiments import ExperimentSpecError, load_spec, parse_spec

GOOD = """
[experiment]
name = "hostile"
tasks = ["neuronav/grid/t_maze/micro"]
seeds = 2

[env]
time_penalty = 0.0

[[agents]]
name = "q"
params = { lr = 0.1 }

[[phases]]
name = "learning"
episodes = 3
max_episode_steps = 10
probe = { options = [[0, 0], [1, 0]], temperature = 1.0 }
"""

CASES = [
    ("seeds = 2", "seeds = 1000000000000", "experiment.seeds: expected an integer from 1 to 100,000"),
    ("seeds = 2", "seeds = [0, 99999999999999999999]", "experiment.seeds[1]: expected an integer from 0 to 9,223,"),
    ("seeds = 2", "seeds = [0, 0]", "a seed is listed twice"),
    ("episodes = 3", "episodes = 1000000000000000", "phases[0].episodes: expected an integer from 1 to 10,000,000"),
    ("max_episode_steps = 10", "max_episode_steps = 0", "phases[0].max_episode_steps: expected an integer from 1"),
    ("temperature = 1.0", "temperature = nan", "phases[0].probe.temperature: expected a positive finite number"),
    ("temperature = 1.0", "temperature = inf", "phases[0].probe.temperature: expected a positive finite number"),
    ("lr = 0.1", "lr = -1", "agents[0].params.lr: the q agent's lr: expected a number between 0 and 1"),
    ("lr = 0.1", "lr = nan", "agents[0].params.lr: the q agent's lr: expected a finite number"),
    ("lr = 0.1", "beta = inf", "agents[0].params.beta: the q agent's beta: expected a finite number"),
    ("lr = 0.1", "gamma = 1e309", "agents[0].params.gamma: the q agent's gamma: expected a finite number"),
    ("time_penalty = 0.0", "time_penalt = 0.0", "env.time_penalt: neuronav/grid/t_maze/micro (grid tasks) has no"),
    ("time_penalty = 0.0", 'time_penalty = "a lot"', "env: neuronav/grid/t_maze/micro: "),
    ('tasks = ["neuronav/grid/t_maze/micro"]', 'tasks = ["neuronav/grid/t_maze/micro", "neuronav/grid/t_maze/micro"]',
     "experiment.tasks: a task is listed twice"),
    ('name = "q"\n', 'name = "q"\ngrid = { epsilon = [0.1, 0.1] }\n', "two agents are labelled 'q epsilon=0.1'"),
]


@pytest.mark.parametrize("old, new, message", CASES)
def test_a_spec_that_asks_for_the_impossible_is_one_line(old: str, new: str, message: str) -> None:
    assert old in GOOD
    with pytest.raises(ExperimentSpecError) as info:
        parse_spec(GOOD.replace(old, new, 1), "hostile.toml")
    said = str(info.value)
    assert said.startswith("hostile.toml") and "\n" not in said
    assert message in said, said


def test_the_good_spec_is_good() -> None:
    assert parse_spec(GOOD, "hostile.toml").seeds == (0, 1)


def test_a_huge_grid_is_refused_at_once() -> None:
    """400 x 400 values over two settings: 160,000 agent settings, refused before any is made
    (the duplicate-label check was quadratic: no answer in 120 s)."""
    values = ", ".join(str(i / 1000) for i in range(400))
    text = GOOD.replace('params = { lr = 0.1 }', f"grid = {{ lr = [{values}], epsilon = [{values}] }}")
    start = time.perf_counter()
    with pytest.raises(ExperimentSpecError, match="160,000 agent settings; a spec sweeps at most 10,000"):
        parse_spec(text, "hostile.toml")
    assert time.perf_counter() - start < 30  # not a timing benchmark: a bound on a hang


def test_deep_nesting_is_refused_without_a_traceback() -> None:
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(ExperimentSpecError, match="hostile.toml: nested"):
        parse_spec(GOOD.replace("time_penalty = 0.0", f"time_penalty = {deep}"), "hostile.toml")
    shallow = "[" * 30 + "1" + "]" * 30
    with pytest.raises(ExperimentSpecError, match="nested 17 levels deep; a spec may nest 16"):  # says where it stopped
        parse_spec(GOOD.replace("time_penalty = 0.0", f"time_penalty = {shallow}"), "hostile.toml")


def test_files_that_are_not_spec_text_are_refused_before_reading(tmp_path: Path) -> None:
    latin = tmp_path / "latin.toml"
    latin.write_bytes(GOOD.replace('"hostile"', '"caf\xe9"').encode("latin-1"))
    with pytest.raises(ExperimentSpecError, match=r"latin.toml, line 3, byte 25: not UTF-8 text \(byte 0xe9"):
        load_spec(latin)
    big = tmp_path / "big.toml"
    big.write_text(GOOD + "#" * 2**20)
    with pytest.raises(ExperimentSpecError, match="big.toml: 1,048,[0-9]+ bytes; files of at most 1 MiB are read"):
        load_spec(big)
    with pytest.raises(ExperimentSpecError, match="a directory, not a regular file"):
        load_spec(tmp_path / ".")
    with pytest.raises(ExperimentSpecError, match="a character device, not a regular file"):
        load_spec("/dev/zero")
    fifo = tmp_path / "spec.fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ExperimentSpecError, match="a FIFO"):
        load_spec(fifo)


def store_digest(location: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(location.parent.glob(location.name + "*")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.mark.parametrize("old, new, message", [CASES[0], CASES[5], CASES[8], CASES[12]])
@pytest.mark.slow
def test_the_command_line_writes_nothing_for_a_bad_spec(tmp_path: Path, old: str, new: str, message: str) -> None:
    store = tmp_path / "s.lbug"
    subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(store), "tasks", "load",
                    "neuronav/grid/t_maze/micro"], check=True, capture_output=True)
    before = store_digest(store)
    spec = tmp_path / "hostile.toml"
    spec.write_text(GOOD.replace(old, new, 1))
    done = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(store), "experiment", "run", str(spec),
                           "--no-progress"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("graphtasks: error: ") and len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr
    assert store_digest(store) == before
