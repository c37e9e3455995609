"""Episodes and trials as columnar chunks: Parquet files beside the store, catalogued in the graph.

A sweep writes one node per run, not one per episode: each worker writes its runs' episode
and trial rows as Parquet chunks itself, in parallel and without the store's writer lock,
and the driver catalogues them (a `Chunk` node per file: its path, content hash, row count
and the runs it holds) in the same transaction that marks the runs completed. So a chunk is
visible only once it is durable and catalogued: a file that a killed worker or driver left
behind is in no catalogue, no reader sees it, and the run it held is run again (same seeds,
same rows, same file name: it is overwritten with the same bytes).

Where chunks live: in the folder `<store>.records/` beside an embedded store on disk, one
subfolder per experiment. A store in memory or on a Bolt server keeps Episode and Trial
nodes as before (a team's workers need not share a file system with the server); readers
take both forms, so a store written before chunks existed reads as it did.

Reading: `episode_table` and `trial_table` give an experiment's rows as one Arrow table each,
joined by run index to the Run nodes by the caller; `graphtasks cypher` reaches them inside a
query as `LOAD FROM $episodes` / `LOAD FROM $trials` (`cypher_sources`).

Examples
--------
>>> import tempfile
>>> from graphtasks.experiments.chunks import read_chunk, write_chunk
>>> folder = tempfile.mkdtemp()
>>> columns = {"experiment": ["demo"] * 3, "run": [0] * 3, "phase": ["learning"] * 3, "phase_index": [0] * 3,
...            "episode": [0, 1, 2], "reward": [1.0, 0.0, 1.0], "length": [3, 4, 3], "start_state": [0] * 3,
...            "task_version": ["neuronav/graph/linear"] * 3, "task_hash": ["abc"] * 3}
>>> chunk = write_chunk(folder, "demo", "episodes", columns)
>>> chunk.rows, chunk.runs, read_chunk(folder, chunk.file).column("episode").to_pylist()
(3, (0,), [0, 1, 2])
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from graphstore.arrow_columns import arrow_array
from graphstore.errors import GraphtasksError

RECORDS_SUFFIX = ".records"
KINDS = ("episodes", "trials")
# columns a chunk of trials holds only where its runs have them: `rt`, each step's response time in
# milliseconds (an agent's response model, `graphtasks.responses`; the browser's Trial.rt is in ms too).
# A chunk without one reads as nulls there (`read_chunk`).
OPTIONAL = {"trials": (("rt", "float64"),)}
MS = 1000.0


class RecordChunkError(GraphtasksError, OSError):
    """A catalogued chunk is missing or damaged, or a chunk cannot be written (a full disk)."""


def require_arrow() -> Any:
    """pyarrow, with its compute and parquet modules loaded (`pa.compute`, `pa.parquet`)."""
    import pyarrow
    import pyarrow.compute  # noqa: F401 - makes pyarrow.compute reachable as an attribute
    import pyarrow.parquet  # noqa: F401

    return pyarrow


@dataclass(frozen=True)
class Chunk:
    """One written chunk: its kind, its path relative to the records folder, its content hash,
    its row count, the runs it holds and its size in bytes."""

    kind: str
    file: str
    sha256: str
    rows: int
    runs: tuple[int, ...]
    bytes: int


def records_folder(location: str | None) -> Path | None:
    """The folder of an embedded on-disk store's chunks (`<store>.records`), or None where the
    store keeps episode nodes (in memory, on a server, or no store)."""
    if location is None or location == ":memory:" or re.match(r"^[A-Za-z][A-Za-z0-9+.-]+:/", location):
        return None
    return Path(location + RECORDS_SUFFIX)


def experiment_folder(name: str) -> str:
    """An experiment's subfolder: its name made safe for any file system, plus a short hash so
    two names that differ only in unsafe characters stay apart."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "experiment"
    return f"{safe[:60]}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


@functools.cache
def _schemas() -> dict[str, Any]:
    pa = require_arrow()
    text = pa.dictionary(pa.int32(), pa.string())
    return {
        "episodes": pa.schema(
            [
                ("experiment", text),
                ("run", pa.int32()),
                ("phase", text),
                ("phase_index", pa.int16()),
                ("episode", pa.int32()),
                ("reward", pa.float64()),
                ("length", pa.int32()),
                ("start_state", pa.int32()),
                ("task_version", text),
                ("task_hash", text),
            ]
        ),
        "trials": pa.schema(
            [
                ("experiment", text),
                ("run", pa.int32()),
                ("phase_index", pa.int16()),
                ("episode", pa.int32()),
                ("step", pa.int32()),
                ("state", pa.int32()),
                ("action", pa.int32()),
                ("reward", pa.float64()),
                ("next_state", pa.int32()),
                ("p_action", pa.float64()),
                ("condition", text),
                ("task_version", text),
            ]
        ),
    }


def schema_of(kind: str, optional: Sequence[str] = ()) -> Any:
    """The Arrow schema of a chunk kind ('episodes' or 'trials'), with the `OPTIONAL` columns named."""
    schema = _schemas()[kind]
    pa = require_arrow()
    for name, type_ in OPTIONAL.get(kind, ()):
        if name in optional:
            schema = schema.append(pa.field(name, getattr(pa, type_)()))
    return schema


def write_chunk(folder: str | Path, experiment: str, kind: str, columns: Mapping[str, Any]) -> Chunk:
    """Write one chunk durably and return what the catalogue records of it.

    The file is written under a temporary name, flushed to disk, renamed to its final name
    (the kind, its first run and its content hash) and the folder flushed too: a reader that
    finds the name finds the whole file, and a crash leaves at most a temporary file that no
    catalogue names. Writing the same rows again gives the same name and the same bytes.

    Parameters
    ----------
    folder : str or Path
        The store's records folder (`records_folder`).
    experiment : str
        The experiment's name (its chunks go to its own subfolder).
    kind : str
        'episodes' or 'trials'.
    columns : mapping of str to sequence or array
        The chunk's columns, every column of the kind's schema (`schema_of`).

    Returns
    -------
    Chunk
        Its path relative to `folder`, content hash, rows, runs and size.

    Examples
    --------
    >>> import tempfile
    >>> from graphtasks.experiments.chunks import write_chunk
    >>> trial = {"experiment": ["demo"], "run": [4], "phase_index": [0], "episode": [0], "step": [0], "state": [0],
    ...          "action": [1], "reward": [1.0], "next_state": [2], "p_action": [0.5], "condition": [None],
    ...          "task_version": ["rewardgym/two-step"]}
    >>> write_chunk(tempfile.mkdtemp(), "demo", "trials", trial).runs
    (4,)
    """
    pa = require_arrow()
    import pyarrow.parquet as pq

    if kind not in KINDS:
        raise ValueError(f"chunk kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    schema = schema_of(kind, [name for name, _ in OPTIONAL.get(kind, ()) if name in columns])
    table = pa.Table.from_arrays([arrow_array(columns[f.name], f.type) for f in schema], schema=schema)
    runs = tuple(sorted({int(r) for r in table.column("run").to_pylist()})) if table.num_rows else ()
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", use_dictionary=True, write_statistics=True)
    data = sink.getvalue().to_pybytes()
    digest = hashlib.sha256(data).hexdigest()
    relative = f"{experiment_folder(experiment)}/{kind}-{runs[0] if runs else 0:07d}-{digest[:16]}.parquet"
    path = Path(folder) / relative
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        _sync_folder(path.parent)
    except OSError as exc:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
        raise RecordChunkError(f"cannot write record chunk {path}: {exc.strerror or exc}") from None
    return Chunk(kind, relative, digest, table.num_rows, runs, len(data))


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (where the system can open a folder)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def chunk_path(folder: str | Path, file: str) -> Path:
    """A catalogued chunk's path; RecordChunkError if the catalogue names a path outside the folder."""
    base = Path(folder).resolve()
    path = (base / file).resolve()
    if base not in path.parents:
        raise RecordChunkError(f"record chunk {file!r} is outside the records folder {base}")
    return path


def read_chunk(folder: str | Path, file: str, rows: int | None = None, columns: Sequence[str] | None = None) -> Any:
    """One catalogued chunk as an Arrow table; RecordChunkError naming the file if it is missing
    or holds another number of rows than the catalogue says (`rows`)."""
    pa = require_arrow()
    import pyarrow.parquet as pq

    path = chunk_path(folder, file)
    try:  # ParquetFile, not read_table: that loads pyarrow.dataset, which imports pandas (0.3 s or more)
        with pq.ParquetFile(path) as parquet:
            present = set(parquet.schema_arrow.names)
            absent = [] if columns is None else [c for c in columns if c not in present]
            table = parquet.read(columns=[c for c in columns if c in present] if columns is not None else None)
    except FileNotFoundError:
        raise RecordChunkError(f"record chunk {path} is catalogued in the store but missing") from None
    except (OSError, pa.ArrowException) as exc:
        raise RecordChunkError(f"record chunk {path} is damaged: {str(exc).splitlines()[0]}") from None
    if rows is not None and table.num_rows != rows:
        raise RecordChunkError(f"record chunk {path} holds {table.num_rows} rows; the catalogue says {rows}")
    optional = {name: type_ for kinds in OPTIONAL.values() for name, type_ in kinds}
    for name in absent:  # an optional column this chunk's runs did not have (no response times): nulls
        if name not in optional:
            raise RecordChunkError(f"record chunk {path} has no column {name!r}")
        table = table.append_column(name, pa.nulls(table.num_rows, getattr(pa, optional[name])()))
    if columns is not None:
        table = table.select(list(columns))
    return table


def remove_chunks(location: str | None, experiment: str, files: Sequence[str]) -> None:
    """Delete an experiment's chunk files once the catalogue no longer names them (after
    `delete`), and its folder with whatever a killed worker left there. A file that cannot be
    removed stays: no catalogue names it, so no reader sees it."""
    folder = records_folder(location)
    if folder is None:
        return
    for file in files:
        try:
            chunk_path(folder, file).unlink(missing_ok=True)
        except (OSError, RecordChunkError):
            pass
    own = folder / experiment_folder(experiment)
    if own.is_dir():
        for leftover in own.iterdir():
            if leftover.suffix in (".parquet", ".tmp"):
                try:
                    leftover.unlink()
                except OSError:
                    pass
        try:
            own.rmdir()
        except OSError:
            pass


def concat(kind: str, tables: Iterable[Any]) -> Any:
    """Tables of one kind as one (an empty table of the kind's schema when there are none)."""
    pa = require_arrow()
    parts = list(tables)
    if not parts:
        return schema_of(kind).empty_table()
    return pa.concat_tables(parts, promote_options="permissive") if len(parts) > 1 else parts[0]


def write_lanes(folder: str | Path, experiment: str, batch: Sequence[Any], phases: Sequence[Any]
                ) -> tuple[list[Chunk], dict[int, list[dict[str, Any]]]]:
    """A batch's runs (`batch`: its cells, lane by lane) written from the columns its phases
    were played into (`batched_runs.PhaseLanes`): arrays straight into the chunk, run by run
    and phase by phase, as `write_played` orders the same episodes. Returns the chunks and
    each run's probes."""
    import numpy as np

    runs = np.array([cell.index for cell in batch], dtype=np.int32)
    order = np.argsort(runs, kind="stable")
    lanes = len(batch)
    parts: dict[str, list[Any]] = {name: [] for name in schema_of("episodes").names if name != "experiment"}
    trials: dict[str, list[Any]] = {name: [] for name in schema_of("trials").names}
    probes: dict[int, list[dict[str, Any]]] = {}
    dictionaries: dict[str, list[str]] = {}  # the text columns: their words, coded per phase
    for played in phases:
        count = played.lanes.reward.shape[1]
        block = {
            "run": np.repeat(runs, count), "phase_index": np.full(lanes * count, played.phase_index, np.int16),
            "episode": np.tile(np.arange(count, dtype=np.int32), lanes),
            "reward": played.lanes.reward.reshape(-1), "length": played.lanes.length.reshape(-1),
            "start_state": played.lanes.start_state.reshape(-1),
        }
        for name, column in block.items():
            parts[name].append(column.reshape(lanes, count))
        for name, value in (("phase", played.phase.name), ("task_version", played.version.task_id),
                            ("task_hash", played.version.content_hash)):  # a phase's constant: its code
            words = dictionaries.setdefault(name, [])
            if value not in words:
                words.append(value)
            parts[name].append(np.full((lanes, count), words.index(value), dtype=np.int32))
        if played.probes is not None:
            for cell, found in zip(batch, played.probes):
                probes.setdefault(cell.index, []).append({"run": cell.index, "phase": played.phase.name,
                                                          "phase_index": played.phase_index, **found})
    # run by run (lanes in run order), each run's phases in order: the rows `write_played` makes
    pa = require_arrow()
    episodes: dict[str, Any] = {name: np.concatenate(columns, axis=1)[order].reshape(-1)
                                for name, columns in parts.items()}
    text = pa.dictionary(pa.int32(), pa.string())
    for name, words in dictionaries.items():
        dictionary = arrow_array(words, text).dictionary
        episodes[name] = pa.DictionaryArray.from_arrays(arrow_array(episodes[name], pa.int32()), dictionary)
    episodes["experiment"] = pa.DictionaryArray.from_arrays(
        arrow_array(np.zeros(len(episodes["run"]), dtype=np.int32), pa.int32()),
        arrow_array([experiment], text).dictionary)
    for lane in order.tolist():
        for played in phases:
            if not played.records_steps or played.lanes.steps is None:
                continue
            conditions = played.lanes.conditions[lane] if played.lanes.conditions is not None else None
            for e, taken in enumerate(played.lanes.steps[lane]):
                _add_steps(trials, int(runs[lane]), played.phase_index, e, taken,
                           conditions[e] if conditions is not None else None, played.version.task_id)
    return _write_both(folder, experiment, episodes, trials), probes


def write_played(folder: str | Path, experiment: str, played: Sequence[tuple[Any, Sequence[Any]]]
                 ) -> tuple[list[Chunk], dict[int, list[dict[str, Any]]]]:
    """The episodes of completed runs (`(cell, [PhaseEpisode, ...])`, as the per-agent and the
    batched loop yield them) written as one chunk of episodes and, where steps are recorded,
    one of trials: columns made straight from the episodes, with no row of dicts between.
    Returns the chunks and each run's probes (by run index)."""
    episodes: dict[str, list[Any]] = {name: [] for name in schema_of("episodes").names}
    trials: dict[str, list[Any]] = {name: [] for name in schema_of("trials").names}
    probes: dict[int, list[dict[str, Any]]] = {}
    for cell, phase_episodes in played:
        index = cell.index
        for p in phase_episodes:
            e = p.episode
            version = p.version.task_id
            episodes["run"].append(index)
            episodes["phase"].append(p.phase.name)
            episodes["phase_index"].append(p.phase_index)
            episodes["episode"].append(e.index)
            episodes["reward"].append(e.reward)
            episodes["length"].append(e.length)
            episodes["start_state"].append(e.start_state)
            episodes["task_version"].append(version)
            episodes["task_hash"].append(p.version.content_hash)
            if p.records_steps and e.steps:
                _add_steps(trials, index, p.phase_index, e.index, e.steps, e.condition, version, p.rts)
            if p.probe is not None:
                probes.setdefault(index, []).append({"run": index, "phase": p.phase.name,
                                                     "phase_index": p.phase_index, **p.probe})
    episodes["experiment"] = [experiment] * len(episodes["run"])
    return _write_both(folder, experiment, episodes, trials), probes


def _add_steps(trials: dict[str, list[Any]], run: int, phase_index: int, episode: int, steps: Sequence[Any],
               condition: str | None, version: str, rts: Sequence[float] | None = None) -> None:
    """Append one episode's steps (state, action, reward, next state, P(action)) to trial columns,
    with each step's response time (`rts`, seconds; kept in ms) where the run has them."""
    if rts is not None and "rt" not in trials:  # the chunk's earlier rows had none
        trials["rt"] = [None] * len(trials["run"])
    for step, (state, action, reward, next_state, p_action) in enumerate(steps):
        for name, value in (("run", run), ("phase_index", phase_index), ("episode", episode), ("step", step),
                            ("state", state), ("action", action), ("reward", reward), ("next_state", next_state),
                            ("p_action", p_action), ("condition", condition), ("task_version", version)):
            trials[name].append(value)
        if "rt" in trials:
            trials["rt"].append(None if rts is None else float(rts[step]) * MS)


def _write_both(folder: str | Path, experiment: str, episodes: Mapping[str, Any], trials: dict[str, list[Any]]
                ) -> list[Chunk]:
    """The chunk of episodes and, where any step was recorded, the chunk of trials."""
    written = [write_chunk(folder, experiment, "episodes", episodes)]
    if trials["run"]:
        trials["experiment"] = [experiment] * len(trials["run"])
        written.append(write_chunk(folder, experiment, "trials", trials))
    return written


@functools.lru_cache(maxsize=4)
def rows_by_run(folder: str, file: str, rows: int) -> dict[int, list[dict[str, Any]]]:
    """A chunk's rows as dicts, by run (the last few chunks kept: the runs of one chunk are
    read one after another)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for row in read_chunk(folder, file, rows).to_pylist():
        out.setdefault(row["run"], []).append(row)
    return out


def outcome_rows(outcome: Any) -> list[dict[str, Any]]:
    """A run's episode rows (with steps and probe) read back from the chunks its worker wrote."""
    import json

    cell = outcome.cell
    episodes: list[dict[str, Any]] = []
    steps: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
    conditions: dict[tuple[int, int], Any] = {}
    for chunk in outcome.chunks:
        mine = rows_by_run(str(outcome.folder), chunk.file, chunk.rows).get(cell.index, [])
        if chunk.kind == "episodes":
            episodes.extend(mine)
            continue
        for t in mine:
            key = (t["phase_index"], t["episode"])
            steps.setdefault(key, []).append((t["state"], t["action"], t["reward"], t["next_state"], t["p_action"]))
            conditions[key] = t["condition"]
    last: dict[int, int] = {}
    for e in episodes:
        last[e["phase_index"]] = max(last.get(e["phase_index"], -1), e["episode"])
    probes = {int(p["phase_index"]): p for p in outcome.probes}
    params = json.dumps(cell.agent.recorded, sort_keys=True)
    rows = []
    for e in episodes:
        key = (e["phase_index"], e["episode"])
        row: dict[str, Any] = {
            "experiment": e["experiment"], "run": cell.index, "task": cell.task, "agent": cell.agent.name,
            "label": cell.agent.label, "params": params, "seed": cell.seed, "condition": cell.condition,
            "phase_task": e["task_version"], "task_hash": e["task_hash"], "phase": e["phase"],
            "phase_index": e["phase_index"], "episode": e["episode"], "return": e["reward"], "length": e["length"],
            "start_state": e["start_state"],
        }
        if key in steps:
            row["steps"] = steps[key]
            row["trial_condition"] = conditions[key]
        probe = probes.get(e["phase_index"])
        if probe is not None and e["episode"] == last[e["phase_index"]]:
            row["probe"] = {k: v for k, v in probe.items() if k not in ("run", "phase", "phase_index")}
        rows.append(row)
    return rows
