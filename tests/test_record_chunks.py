"""Episodes and trials as chunks: written by the workers, visible only once catalogued,
scanned by Cypher through `$episodes` / `$trials` and nothing else, the same rows on any
number of workers, and a damaged chunk named in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphstore import open_store
from graphstore.errors import QueryError
from graphtasks.cli import main
from graphtasks.experiments import load_spec, run_experiment
from graphtasks.experiments.chunks import RecordChunkError, records_folder, write_chunk
from graphtasks.experiments.export import recorded_trials
from graphtasks.experiments.records import record_sources, recorded_episodes, stay_rows

SPEC = """
[experiment]
name = "chunky"
tasks = ["rewardgym/two-step", "neuronav/grid/t_maze/micro"]
seeds = 3

[[agents]]
name = "q"
params = { lr = 0.2 }

[[agents]]
name = "hybrid"
tasks = ["rewardgym/two-step"]

[[phases]]
name = "learning"
episodes = 20

[[phases]]
name = "test"
episodes = 5
learn = false
"""


@pytest.fixture
def spec_path(tmp_path: Path) -> Path:
    path = tmp_path / "chunky.toml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def sweep(store: str, spec_path: Path, *extra: str) -> None:
    assert main(["--store", store, "experiment", "run", str(spec_path), "--no-progress", *extra]) == 0


def swept_store(tmp_path_factory: pytest.TempPathFactory, workers: str) -> str:
    folder = tmp_path_factory.mktemp(f"swept-{workers}")
    (folder / "chunky.toml").write_text(SPEC, encoding="utf-8")
    sweep(str(folder / "s.lbug"), folder / "chunky.toml", "--workers", workers)
    return str(folder / "s.lbug")


# The spec swept once on one worker and once on two, for the tests that only read the records
# (each made its own sweep of the same spec before)
@pytest.fixture(scope="module")
def swept_one(tmp_path_factory: pytest.TempPathFactory) -> str:
    return swept_store(tmp_path_factory, "1")


@pytest.fixture(scope="module")
def swept_two(tmp_path_factory: pytest.TempPathFactory) -> str:
    return swept_store(tmp_path_factory, "2")


@pytest.mark.slow
def test_chunks_hold_what_the_sweep_played_on_any_number_of_workers(spec_path: Path, swept_one, swept_two) -> None:
    plain = run_experiment(load_spec(spec_path), workers=1)  # in memory: rows, no chunks
    for store in (swept_one, swept_two):
        with open_store(store, "r") as opened:
            assert recorded_episodes(opened, "chunky") == plain.rows
            trials = recorded_trials(opened, "chunky")
            assert [(t["run"], t["phase_index"], t["episode"], t["step"], t["action"], t["p_action"]) for t in trials] \
                == [(t["run"], t["phase_index"], t["episode"], t["step"], t["action"], t["p_action"])
                    for t in plain.trials]
            chunks = opened.cypher("MATCH (x:Experiment)-[:HAS_CHUNK]->(c:Chunk) RETURN c.kind, sum(c.rows)").rows
            assert sorted(chunks) == [["episodes", len(plain.rows)], ["trials", len(plain.trials)]]
            assert opened.cypher("MATCH (e:Episode) RETURN count(e)").rows == [[0]]  # no node per episode
            held = opened.cypher("MATCH (c:Chunk)-[:HOLDS_RUN]->(r:Run) RETURN count(DISTINCT r)").rows
            assert held == [[9]]  # every run is held by a chunk: 3 seeds x (q on two tasks, hybrid on one)


def test_cypher_reaches_single_episodes_and_trials_joined_to_runs_and_states(swept_one) -> None:
    with open_store(swept_one, "r") as opened:
        sources = record_sources(opened)
        one = opened.cypher(
            "MATCH (r:Run) WHERE r.owner = 'experiment/chunky' AND r.label = 'hybrid' AND r.seed = 1 WITH r "
            "LOAD FROM $episodes WHERE experiment = 'chunky' AND run = r.index AND phase = 'test' AND episode = 2 "
            "RETURN r.index, reward, length", sources=sources).rows
        expected = [(e["run"], e["return"], e["length"]) for e in recorded_episodes(opened, "chunky")
                    if e["label"] == "hybrid" and e["seed"] == 1 and e["phase"] == "test" and e["episode"] == 2]
        assert [tuple(row) for row in one] == expected and len(expected) == 1
        # a trial joined to the state it started in and the transition it took
        moves = opened.cypher(
            "LOAD FROM $trials WHERE experiment = 'chunky' AND step = 0 "
            "WITH task_version AS v, state AS s, action AS a, next_state AS n "
            "MATCH (x:State)-[m:MOVE]->(y:State) WHERE x.task = v AND y.task = v AND x.index = s AND m.action = a "
            "AND y.index = n RETURN count(*), min(m.p), max(m.p)", sources=sources).rows
        first_steps = sum(1 for t in recorded_trials(opened, "chunky") if t["step"] == 0)
        assert moves[0][0] == first_steps and 0 < moves[0][1] < 0.5 < moves[0][2] < 1  # common and rare
        # the stay query over chunks equals the stay rows read in Python
        from graphtasks.experiments.records import STAY_QUERY

        pooled = {(a, k): v for a, k, v in opened.cypher(STAY_QUERY, {"experiment": "chunky"}, sources).rows}
        assert set(pooled) == {(label, after) for label, _, after, _ in stay_rows(opened, "chunky")}


def test_only_the_stores_own_chunks_can_be_scanned(tmp_path: Path, swept_one, capsys) -> None:
    store = swept_one
    capsys.readouterr()  # the sweep's output, if it was made for this test
    assert main(["--store", store, "cypher", "LOAD FROM $episodes RETURN count(*) AS n", "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["n", str(9 * 25 - 0)]
    secret = tmp_path / "secret.csv"
    secret.write_text("a,b\n1,2\n", encoding="utf-8")
    for query in (f"LOAD FROM '{secret}' RETURN *", "LOAD FROM $path RETURN *",
                  f"LOAD FROM $episodes + ['{secret}'] RETURN *", f"LOAD FROM $trials, '{secret}' RETURN *",
                  "LOAD FROM $episodes (file_format='csv') RETURN *"):
        assert main(["--store", store, "cypher", query, "--param", f"path=\"{secret}\""]) == 2, query
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error" in err, (query, err)
    with open_store(store, "r") as opened, pytest.raises(QueryError):
        opened.cypher(f"LOAD FROM '{secret}' RETURN *", sources=record_sources(opened))


@pytest.mark.slow
def test_a_chunk_no_catalogue_names_is_invisible_and_the_run_is_made_again(tmp_path: Path, spec_path: Path) -> None:
    """What a worker killed after writing its chunk (or a driver killed before cataloguing it)
    leaves: a file no reader sees; the same command completes the sweep, equal to one that was
    never stopped."""
    store = str(tmp_path / "s.lbug")
    spec = load_spec(spec_path)
    folder = records_folder(store)
    assert folder is not None
    leftover = write_chunk(folder, "chunky", "episodes", {
        "experiment": ["chunky"], "run": [0], "phase": ["learning"], "phase_index": [0], "episode": [0],
        "reward": [99.0], "length": [1], "start_state": [0], "task_version": ["x"], "task_hash": ["y"]})
    (folder / leftover.file).with_name(".half.parquet.123.tmp").write_bytes(b"PAR1 half")  # a torn write
    sweep(store, spec_path, "--workers", "2")
    with open_store(store, "r") as opened:
        episodes = recorded_episodes(opened, "chunky")
    assert episodes == run_experiment(spec, workers=1).rows and 99.0 not in {e["return"] for e in episodes}


@pytest.mark.slow
def test_a_missing_or_damaged_chunk_is_named_in_one_line(tmp_path: Path, spec_path: Path, capsys) -> None:
    store = str(tmp_path / "s.lbug")
    sweep(store, spec_path, "--workers", "1")
    folder = records_folder(store)
    assert folder is not None
    episodes_file = sorted(folder.rglob("episodes-*.parquet"))[0]
    episodes_file.write_bytes(episodes_file.read_bytes()[:100])  # cut short
    capsys.readouterr()
    assert main(["--store", store, "experiment", "export", "chunky"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(episodes_file) in err and "damaged" in err
    episodes_file.unlink()
    assert main(["--store", store, "experiment", "export", "chunky"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "catalogued in the store but missing" in err
    with open_store(store, "r") as opened, pytest.raises(RecordChunkError):
        recorded_episodes(opened, "chunky")


@pytest.mark.slow
def test_a_dask_cluster_writes_the_same_chunks(tmp_path: Path, spec_path: Path, swept_two) -> None:
    local, dask = swept_two, str(tmp_path / "d.lbug")
    sweep(dask, spec_path, "--dask", "local", "--workers", "2")
    with open_store(local, "r") as a, open_store(dask, "r") as b:
        assert recorded_episodes(a, "chunky") == recorded_episodes(b, "chunky")
        assert recorded_trials(a, "chunky") == recorded_trials(b, "chunky")


def test_a_store_reaches_its_chunks_without_being_told(swept_one) -> None:
    """`store.cypher(query)` of a query that loads `$episodes` scans the store's chunks (the
    registered sources), as a notebook would call it."""
    with open_store(swept_one, "r") as opened:
        assert opened.cypher("LOAD FROM $episodes RETURN count(*)").rows == [[9 * 25]]
        with pytest.raises(QueryError, match="not a source"):
            opened.cypher("LOAD FROM $elsewhere RETURN count(*)")
