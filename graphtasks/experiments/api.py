"""The Python face of `graphtasks experiment`: run a spec into a store, read its results back
as a pandas DataFrame, look at or delete its records. The CLI calls the same functions."""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path
from typing import Any, Sequence

from graphstore import open_store
from graphstore.errors import GraphtasksError

from .chunks import records_folder, remove_chunks
from .drivers import driver_lock, driver_running
from .migrate import require_current
from .observers import FINISHED, ProgressObserver, RunObserver
from .records import (
    StoreRecorder,
    episode_summary,
    experiment_uid,
    finished_runs,
    record_experiment,
    record_tasks,
    recorded_episodes,
    recorded_experiments,
    task_version_counts,
)
from .schema import RECORD_LABELS
from .spec import ExperimentSpec, load_spec, spec_path
from .sweep import COLUMNS, Cell, cells, run_experiment, task_versions


class UnknownExperiment(GraphtasksError, LookupError):
    """No experiment of that name is recorded in the store."""


class RunReport:
    """What a `run` did: runs skipped as already recorded, runs made now, the failures; the
    experiment's recorded episodes (`rows`) and their summary are read from the store when
    first asked for (a sweep of millions of episodes need not build a row for each)."""

    def __init__(self, skipped: int, ran: int, failures: list[tuple[Cell, str]], store: str | None, name: str,
                 batched: int = 0) -> None:
        self.skipped, self.ran, self.failures, self.batched = skipped, ran, failures, batched
        self.store, self.name = store, name

    @functools.cached_property
    def rows(self) -> list[dict[str, Any]]:
        """Every recorded episode of the experiment, after the run (`recorded_episodes`)."""
        with open_store(self.store, "r") as opened:
            return recorded_episodes(opened, self.name)

    @functools.cached_property
    def summary(self) -> list[dict[str, Any]]:
        """Mean return and length per task, agent, condition and phase (`episode_summary`)."""
        with open_store(self.store, "r") as opened:
            return episode_summary(opened, self.name)


def run_and_record(
    spec: ExperimentSpec,
    text: str,
    store: str | None = None,
    workers: int | None = None,
    dask: str | None = None,
    observers: Sequence[RunObserver] = (),
    batched: bool = True,
) -> RunReport:
    """Record the experiment and its task versions, run the cells not yet completed and record
    each as it starts and ends (the store is the first observer, writing in batches and holding
    the store for writing only while it writes); `observers` are told too. What finished is
    kept when the sweep is interrupted; the runs under way are recorded as interrupted.
    `batched=False` plays every run per agent (`sweep.run_experiment`).
    """
    def tell(wait: Any) -> None:  # the driver waits its turn for the store: say so, on the progress line
        said = None if wait.done else f"waiting for the store ({wait.holder}, {wait.waited:.0f} s)"
        for observer in observers:
            observer.waiting(said)

    def wait_driver(said: str | None) -> None:  # another driver runs this experiment: say so, once
        for observer in observers:
            observer.waiting(said)

    # a second driver of the experiment waits for the first, holding nothing else, then skips
    # the runs it completed (graphtasks.experiments.drivers)
    with driver_lock(store, spec.name, on_wait=wait_driver):
        with open_store(store, "w", on_wait=tell) as opened:
            record_experiment(opened, spec, text)
            record_tasks(opened, task_versions(spec))
            done = finished_runs(opened, spec)
            folder = records_folder(opened.location)
        todo = [cell for cell in cells(spec) if cell.index not in done]
        recorder = StoreRecorder(store, spec, on_wait=tell)
        result = run_experiment(
            spec, workers=workers, skip=done, dask=dask, store=store, observers=[recorder, *observers],
            batched=batched, records=folder,
        )
    return RunReport(len(done), len(todo), result.failures, store, spec.name, result.batched)


def require_pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("results as a DataFrame need pandas: pip install 'graphtasks[tables]'") from None
    return pandas


def require_recorded(store: Any, name: str) -> None:
    """UnknownExperiment naming the recorded experiments, unless `name` is one of them."""
    names = [row["experiment"] for row in recorded_experiments(store)]
    if name not in names:
        raise UnknownExperiment(f"no recorded experiment {name!r}; recorded: {', '.join(names) or 'none'}")
    require_current(store, name)


def describe(store: Any, name: str) -> dict[str, Any]:
    """An experiment's record: description, phases, runs by agent and status, failed runs and
    the task versions its episodes ran."""
    require_recorded(store, name)
    uid = experiment_uid(name)
    head = store.cypher(
        "MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.description, x.reference, x.created_at", {"uid": uid}
    ).rows[0]
    phases = store.cypher(
        "MATCH (x:Experiment)-[:HAS_PHASE]->(p:Phase) WHERE x.uid = $uid "
        "RETURN p.condition, p.index, p.name, p.episodes, p.learn, p.changes ORDER BY p.condition, p.index",
        {"uid": uid},
    ).rows
    runs = store.cypher(
        "MATCH (r:Run) WHERE r.owner = $uid RETURN r.label, r.condition, r.status, count(r) "
        "ORDER BY r.label, r.condition, r.status",
        {"uid": uid},
    ).rows
    failed = store.cypher(
        "MATCH (r:Run) WHERE r.owner = $uid AND NOT r.status IN $finished "
        "RETURN r.index, r.label, r.seed, r.status, r.error ORDER BY r.index",
        {"uid": uid, "finished": list(FINISHED)},
    ).rows
    versions = task_version_counts(store, name)
    return {
        "name": name,
        "description": head[0] or "",
        "reference": head[1] or "",
        "created_at": head[2] or "",
        "phases": [dict(zip(("condition", "index", "name", "episodes", "learn", "changes"), p)) for p in phases],
        "runs": [dict(zip(("agent", "condition", "status", "runs"), r)) for r in runs],
        "failed": [dict(zip(("run", "agent", "seed", "status", "error"), f)) for f in failed],
        "task_versions": [dict(zip(("task_version", "task_hash", "episodes"), v)) for v in versions],
    }


class ExperimentRunning(GraphtasksError, RuntimeError):
    """The experiment's sweep is running: it is not deleted under it."""


def _alive(host: str | None, pid: int | None) -> bool:
    """Whether the driver that marked a run as running may still be at work (unknown: yes)."""
    if host != socket.gethostname() or pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def delete_records(store: Any, name: str, force: bool = False) -> dict[str, int]:
    """Delete an experiment and every record it owns (the task versions stay); counts per label.

    While a driver that is alive runs the experiment (runs recorded as running by it), the
    delete is refused with one line, unless `force`: the driver would find its experiment
    gone and stop. Runs left running by a driver that is dead (killed) do not hold it up.
    """
    require_recorded(store, name)
    uid = experiment_uid(name)
    running = store.cypher(
        "MATCH (r:Run) WHERE r.owner = $uid AND r.status = 'running' RETURN r.host, r.driver, count(r)", {"uid": uid}
    ).rows
    busy = [(host, pid, n) for host, pid, n in running if _alive(host, pid)]
    driver = driver_running(store.location, name)  # a driver holds it from its start, before any run is marked
    if driver is not None and not force:
        raise ExperimentRunning(
            f"experiment {name!r} is running (driver {driver}): stop it first (Ctrl-C) or let it finish; --force "
            "deletes it under the running sweep"
        )
    if busy and not force:
        drivers = ", ".join(f"pid {pid} on {host}" for host, pid, _ in busy)
        raise ExperimentRunning(
            f"experiment {name!r} is running ({sum(n for *_, n in busy)} run(s) under way; driver {drivers}): "
            "stop it first (Ctrl-C) or let it finish; --force deletes it under the running sweep"
        )
    chunks = store.cypher("MATCH (c:Chunk) WHERE c.owner = $uid RETURN c.kind, c.file, c.rows", {"uid": uid}).rows
    counts = dict(store.delete_shared(uid, RECORD_LABELS))
    for kind, _, rows in chunks:  # the rows the chunks held count as the episodes and trials they are
        label = "Episode" if kind == "episodes" else "Trial"
        counts[label] = counts.get(label, 0) + int(rows)
    remove_chunks(store.location, name, [file for _, file, _ in chunks])
    return counts


class Experiment:
    """An experiment spec, to run into a store and read back.

    The Python face of ``graphtasks experiment``: the spec (tasks, agents, seeds, phases) is
    checked once, `run` records every run into a store and resumes where a sweep stopped,
    `results` reads the records back as a table, `delete` removes them. Usually made with
    `from_file`.

    Parameters
    ----------
    spec : ExperimentSpec
        The checked spec (`load_spec`, `parse_spec`).
    text : str
        The spec file's text, recorded with the experiment so that a record says what ran.

    Examples
    --------
    >>> from graphtasks.experiments import Experiment
    >>> experiment = Experiment.from_file("daw2011-two-step")
    >>> experiment.name, len(experiment.cells)
    ('daw2011-two-step', 30)

    A spec of one's own, run into a store on disk, read back and deleted:

    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "small.toml").write_text('''
    ... [experiment]
    ... name = "small-two-step"
    ... tasks = ["rewardgym/two-step"]
    ... seeds = 2
    ...
    ... [[agents]]
    ... name = "q"
    ...
    ... [[phases]]
    ... name = "trials"
    ... episodes = 5
    ... ''')
    >>> small = Experiment.from_file(folder / "small.toml")
    >>> store = str(folder / "store.lbug")
    >>> report = small.run(store, workers=1)
    >>> report.ran, report.skipped, report.failures
    (2, 0, [])
    >>> small.results(store).shape, small.delete(store)["Episode"]
    ((10, 16), 10)
    """

    def __init__(self, spec: ExperimentSpec, text: str) -> None:
        self.spec, self.text = spec, text

    @classmethod
    def from_file(cls, path: str | Path, store: str | None = None) -> Experiment:
        """A spec file, or a shipped spec by name; ExperimentSpecError names what is wrong.

        Tasks that are not built in are read from `store` (None: the default store).

        Parameters
        ----------
        path : str or Path
            A spec file (TOML), or the name of a shipped spec (``"daw2011-two-step"``).
        store : str, optional
            The location of the store that holds the spec's tasks that are not built in.

        Returns
        -------
        Experiment
            The checked spec with its text.

        Raises
        ------
        ExperimentSpecError
            The file is missing or the spec is wrong, naming the file, line and field.

        Examples
        --------
        >>> from graphtasks.experiments import Experiment
        >>> Experiment.from_file("daw2011-two-step").name
        'daw2011-two-step'
        >>> Experiment.from_file("no-such-spec")
        Traceback (most recent call last):
        ...
        graphtasks.experiments.spec.ExperimentSpecError: ...
        """
        spec = load_spec(path, store)
        return cls(spec, spec_path(path).read_text(encoding="utf-8"))

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def cells(self) -> list[Cell]:
        return cells(self.spec)

    def run(
        self,
        store: str | None = None,
        workers: int | None = None,
        dask: str | None = None,
        progress: bool = False,
        observers: Sequence[RunObserver] = (),
    ) -> RunReport:
        """Run the cells not yet recorded in `store` (a location; None: the default store),
        telling `observers` (and, with `progress`, a progress bar) what happens.

        What finished is kept when the sweep is interrupted, so running again resumes it.

        Parameters
        ----------
        store : str, optional
            The store's location; None: the default store.
        workers : int, optional
            Processes to run on (default: the number of cores; 1: in this process).
        dask : str, optional
            A Dask scheduler's address (or ``"local"``) to run on instead of local processes.
        progress : bool, optional
            Draw a progress bar.
        observers : sequence of RunObserver, optional
            Told as each run starts and ends.

        Returns
        -------
        RunReport
            The runs skipped (already recorded), run now and failed; its `rows` reads the
            recorded episodes.

        Examples
        --------
        Running again finds every run recorded, and runs nothing:

        >>> import tempfile
        >>> from pathlib import Path
        >>> from graphtasks.experiments import Experiment
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "one.toml").write_text('''
        ... [experiment]
        ... name = "one-run"
        ... tasks = ["rewardgym/two-step"]
        ...
        ... [[agents]]
        ... name = "q"
        ...
        ... [[phases]]
        ... name = "trials"
        ... episodes = 3
        ... ''')
        >>> experiment = Experiment.from_file(folder / "one.toml")
        >>> store = str(folder / "store.lbug")
        >>> first, again = experiment.run(store, workers=1), experiment.run(store, workers=1)
        >>> (first.ran, first.skipped), (again.ran, again.skipped)
        ((1, 0), (0, 1))
        """
        shown = [ProgressObserver(self.name)] if progress else []
        return run_and_record(self.spec, self.text, store, workers, dask, [*shown, *observers])

    def results(self, store: str | None = None, trials: bool = False) -> Any:
        """The recorded episodes (or, with `trials`, steps) as a pandas DataFrame; people's trials
        carry the browser's response times too (`export.trial_columns`).

        Parameters
        ----------
        store : str, optional
            The store's location; None: the default store.
        trials : bool, optional
            One row per step (trial) instead of one per episode.

        Returns
        -------
        pandas.DataFrame
            One row per recorded episode (experiment, run, task, agent, label, params, seed,
            phase, return, ...) or per trial.

        Raises
        ------
        UnknownExperiment
            The store holds no records of this experiment.

        Examples
        --------
        The class's example reads a run's records back; a store without them says so:

        >>> from graphtasks.experiments import Experiment
        >>> Experiment.from_file("daw2011-two-step").results(":memory:")
        Traceback (most recent call last):
        ...
        graphtasks.experiments.api.UnknownExperiment: no recorded experiment 'daw2011-two-step'; recorded: none
        """
        pandas = require_pandas()
        from .export import recorded_trials, trial_columns

        with open_store(store, "r") as opened:
            require_recorded(opened, self.name)
            if trials:
                rows = recorded_trials(opened, self.name)
                return pandas.DataFrame(rows, columns=list(trial_columns(rows)))
            return pandas.DataFrame(recorded_episodes(opened, self.name), columns=list(COLUMNS))

    def delete(self, store: str | None = None, force: bool = False) -> dict[str, int]:
        """Delete this experiment's records from `store`; the count of deleted nodes per label
        (refused while a driver runs it, unless `force`).

        Parameters
        ----------
        store : str, optional
            The store's location; None: the default store.
        force : bool, optional
            Delete even while a driver that is alive runs the experiment.

        Returns
        -------
        dict of str to int
            The number of records deleted per label (Experiment, Run, Episode, Trial, ...).

        Raises
        ------
        UnknownExperiment
            The store holds no records of this experiment.
        ExperimentRunning
            A driver runs the experiment and `force` is not set.

        Examples
        --------
        The class's example deletes a run's records; a store without them says so:

        >>> from graphtasks.experiments import Experiment
        >>> Experiment.from_file("daw2011-two-step").delete(":memory:")
        Traceback (most recent call last):
        ...
        graphtasks.experiments.api.UnknownExperiment: no recorded experiment 'daw2011-two-step'; recorded: none
        """
        with open_store(store, "w") as opened:
            return delete_records(opened, self.name, force)
