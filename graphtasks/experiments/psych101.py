"""Sessions as Psych-101/201 `prompts.jsonl` lines, and such lines as sessions of a stored task.

The Psych-101 corpus (Binz et al., Centaur) writes one participant per line: a JSON object
whose `text` is the whole session as the participant read it, each choice marked `<<` `>>`,
option names randomised per participant; Psych-201 adds `RTs` (one per choice, milliseconds).
`export_prompts` writes any recorded experiment's runs so, people's, agents' and text
participants' alike: each run is replayed through its plan (`text_participants`: the same
envs and seed tree), choosing the recorded actions, so every step reads as the family's text
view shows it with the run's option names (a text participant's prompts are the ones it was
shown). A line is

    {"text": ..., "experiment": <experiment name>, "participant": <run>, "task": <task id>,
     "seed": <run seed>, "episodes": <n>, "RTs": [...]}

(`RTs` where the trials have them: a person's browser times, a text participant's answer
times; `null` for a choice without one).

`import_prompts` reads such lines as runs of a stored task: each line is replayed under its
`seed` (default 0) with its marked choices in order, and recorded as a text participant's run
(agent "imported", label the line's participant, which its export keeps); a line whose choices the task cannot
produce there (a name that is not an option of the step it answers, a choice left over, a
session ending inside an episode) is refused in one line naming its line number. A line of
another implementation of a task (other transitions, other option names) is refused so: the
replay is exact or nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from graphstore import GraphStore
from graphstore.errors import GraphtasksError
from gym_bridge.text import TextStep

from .ids import experiment_uid
from .observers import COMPLETED, RunOutcome
from .records import step_rows
from .runs import Cell
from .spec import AgentSpec, ExperimentSpec, parse_spec
from .text_participants import (
    Message,
    ParticipantUnavailable,
    TextRun,
    play_text_run,
    record_text_runs,
    text_spec,
)
from .versions import prepare_versions

MAX_STEPS = 10_000  # the longest episode read back from chunks
CHOICE = re.compile(r"<<\s*([^<>]+?)\s*>>")

TRIALS = (
    "MATCH (x:Experiment)-[:HAS_RUN]->(r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) "
    "WHERE x.uid = $uid RETURN r.index, e.phase_index, e.index, t.step, t.action, t.rt "
    "ORDER BY r.index, e.phase_index, e.index, t.step"
)
RUNS = ("MATCH (x:Experiment)-[:HAS_RUN]->(r:Run) WHERE x.uid = $uid RETURN r.index, r.task, r.agent, r.label, "
        "r.seed, r.condition, r.status ORDER BY r.index")


class PromptsError(GraphtasksError, ValueError):
    """A prompts.jsonl line, or an experiment, that cannot be read or written as the corpus's."""


@dataclass
class Replay:
    """A participant that answers each step with the next recorded action (or marked name)."""

    actions: list[int] | None = None
    names: list[str] | None = None
    used: int = 0

    def answer_step(self, step: TextStep, messages: list[Message]) -> str:
        if self.names is not None:
            if self.used >= len(self.names):
                raise ParticipantUnavailable("the line's choices are all used")
            self.used += 1
            return f"<<{self.names[self.used - 1]}>>"
        assert self.actions is not None
        if self.used >= len(self.actions):
            raise ParticipantUnavailable("the run's recorded actions are all used")
        action = self.actions[self.used]
        self.used += 1
        if len(step.parts) != 1:
            raise PromptsError("its steps have several parts (a Room map's answers and move), and a Trial keeps "
                               "only the move")
        values = [int(v) for v in step.parts[0].values]
        if action not in values:
            return f"(action {action}, not an option here)"
        return step.marked([values.index(action)])


def recorded_spec(store: GraphStore, name: str) -> ExperimentSpec:
    """The spec an experiment was recorded with: a text participants' one, a study's or an experiment's."""
    rows = store.cypher("MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.spec", {"uid": experiment_uid(name)}).rows
    if not rows:
        raise PromptsError(f"no experiment {name!r} is recorded in {store.location!r}")
    text = str(rows[0][0] or "")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("kind") == "text participants":
        return text_spec(data["tasks"][0], data["participant"], data["seeds"], data["episodes"], data["name"],
                         data.get("max_steps"), data.get("env"), bool(data.get("schedule")), store)
    if "[study]" in text:
        from graphtasks.serve.study import parse_study

        return parse_study(text, f"experiment {name!r}", store).spec
    return parse_spec(text, f"experiment {name!r}", store)


def session_text(run: TextRun) -> str:
    """A run as the corpus writes it: the instructions, then each prompt, the choice marked, the outcome."""
    parts = [run.instructions] if run.instructions else []
    episode = None
    for trial in run.trials:
        prompt = trial.prompt
        if episode is not None and (trial.phase_index, trial.episode) != episode:
            parts.append("")
        episode = (trial.phase_index, trial.episode)
        parts.append(f"{prompt}\nYou choose {trial.marked}.")
    return "\n".join(parts).strip() + "\n"


def export_prompts(store: GraphStore, name: str) -> list[dict[str, Any]]:
    """Every completed run of experiment `name` as a prompts.jsonl object (see the module docstring).

    Parameters
    ----------
    store : GraphStore
        Where the experiment is recorded (its Trials as nodes: runs of trial tasks, sessions).
    name : str
        The experiment's name.

    Returns
    -------
    list of dict
        One per completed run, in run order: `text`, `experiment`, `participant`, `task`, `seed`,
        `episodes` and, where its trials have them, `RTs`.
    """
    spec = recorded_spec(store, name)
    uid = experiment_uid(name)
    rts = {tuple(row[:4]): row[5] for row in store.cypher(TRIALS, {"uid": uid}).rows}
    trials: dict[int, list[tuple[Any, ...]]] = {}
    longest = max([int(r[3]) for r in rts] + [0])
    steps = range(max(longest + 1, MAX_STEPS))  # Trial nodes and chunks alike (`records.step_rows`)
    for row in step_rows(store, name, steps):
        key = (row["run"], row["phase_index"], row["episode"], row["step"])
        trials.setdefault(int(row["run"]), []).append((*key[1:], int(row["action"]), rts.get(key)))
    versions = prepare_versions(spec, store)
    out = []
    for index, task_id, agent, label, seed, condition, status in store.cypher(RUNS, {"uid": uid}).rows:
        if status != COMPLETED:
            continue
        rows = trials.get(int(index))
        if not rows:
            raise PromptsError(f"experiment {name!r}, run {index}: no Trial records (record its steps: "
                               "record = 'steps', or trial tasks)")
        cell = Cell(int(index), str(task_id), AgentSpec(str(agent), str(label), {}), int(seed), str(condition or ""))
        replay = Replay(actions=[int(r[3]) for r in rows])
        try:
            run = play_text_run(spec, cell, replay, versions, tries=1)
        except PromptsError as exc:
            raise PromptsError(f"experiment {name!r}, run {index}: {exc}") from None
        if run.error or replay.used != len(rows):
            raise PromptsError(f"experiment {name!r}, run {index}: its recorded actions do not replay "
                               f"({run.error or f'{replay.used} of {len(rows)} used'})")
        who = str(label) if agent == "imported" else f"{label} run {index}"  # an imported line keeps its own
        line: dict[str, Any] = {
            "text": session_text(run), "experiment": name, "participant": who,
            "task": str(task_id), "seed": int(seed), "episodes": len(run.outcome.rows or []),
        }
        times = [r[4] for r in rows]
        if any(rt is not None for rt in times):
            line["RTs"] = [None if rt is None else float(rt) for rt in times]
        out.append(line)
    return out


def write_prompts(lines: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write prompts.jsonl lines to `path`; the number written."""
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_prompts(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """The lines of a prompts.jsonl file with their line numbers (blank lines skipped)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise PromptsError(f"{path}: line {number}: not JSON ({exc})") from None
            if not isinstance(line, dict) or not isinstance(line.get("text"), str):
                raise PromptsError(f"{path}: line {number}: expected an object with a 'text' string")
            out.append((number, line))
    return out


def import_prompts(store: GraphStore, lines: Sequence[tuple[int, dict[str, Any]]], task_id: str, name: str,
                   source: str = "prompts.jsonl") -> list[TextRun]:
    """Record prompts.jsonl lines as runs of `task_id` (see the module docstring).

    Parameters
    ----------
    store : GraphStore
        Where the task is read (if not built in) and the runs recorded.
    lines : sequence of (int, dict)
        The lines with their numbers (`read_prompts`).
    task_id : str
        The task the sessions played.
    name : str
        The experiment the runs are recorded as.
    source : str
        The file's name, for errors.

    Returns
    -------
    list of TextRun
        One per line, in order, all recorded (nothing is recorded if one line is refused).
    """
    played = []
    for number, line in lines:
        choices = CHOICE.findall(line["text"])
        where = f"{source}: line {number}"
        if not choices:
            raise PromptsError(f"{where}: no choice marked <<...>>")
        seed = line.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise PromptsError(f"{where}: seed: expected an integer, got {seed!r}")
        spec = text_spec(task_id, "imported", (seed,), len(choices), name, store=store)
        replay = Replay(names=choices)
        run = play_text_run(spec, Cell(0, task_id, AgentSpec("imported", "imported", {}), seed), replay, tries=1)
        if not (run.error or "").endswith("the line's choices are all used"):
            k = len(run.trials) + 1
            raise PromptsError(f"{where}: choice {k} <<{choices[k - 1]}>> is not one {task_id} can produce "
                               f"there ({run.error})")
        recorded = run.outcome.rows or []
        if sum(len(e["steps"]) for e in recorded) != len(choices):
            raise PromptsError(f"{where}: the line's last choices end inside an episode of {task_id}")
        played.append((number, line, seed, len(recorded)))
    runs = []
    for index, (number, line, seed, episodes) in enumerate(played):
        label = str(line.get("participant") or f"line {number}")
        spec = text_spec(task_id, "imported", tuple(p[2] for p in played), max(p[3] for p in played), name,
                         store=store)
        choices = CHOICE.findall(line["text"])
        cell = Cell(index, task_id, AgentSpec("imported", label, {}), seed)
        run = play_text_run(replace(spec, phases=(replace(spec.phases[0], episodes=episodes),)), cell,
                            Replay(names=choices), tries=1)
        rts = line.get("RTs")
        if isinstance(rts, list) and len(rts) == len(run.trials):
            for trial, rt in zip(run.trials, rts):
                trial.rt = float(rt) if isinstance(rt, (int, float)) and not isinstance(rt, bool) else None
        run.outcome = RunOutcome(cell, COMPLETED, run.outcome.rows, None, run.outcome.started_at,
                                 run.outcome.ended_at)
        runs.append(run)
    spec = text_spec(task_id, "imported", tuple(p[2] for p in played) or (0,),
                     max((p[3] for p in played), default=1), name, store=store)
    record_text_runs(store, spec, runs)
    return runs
