"""A study as a jsPsych 8 experiment a lab can run without graphtasks, and its data read back.

`export_jspsych` writes a folder that runs from disk (file://) or from any static server:

- `index.html`: loads jsPsych 8.3.0 (vendored, unmodified, MIT: `static/jspsych/vendor/`), the
  graphtasks plugins and the study, and runs the timeline;
- `graphtasks/plugin-graphtasks.js`: two jsPsych plugins written for graphtasks: `graphtasks-text`
  (instructions, consent, phase banners, breaks and the completion code, each recorded with its
  onset and duration) and `graphtasks-episode` (one round of the task: it steps the phase's
  compiled transition table in the browser);
- `graphtasks/study.js`: the study (`window.GRAPHTASKS_STUDY`): its texts and timing, and per
  session slot (run) each phase's tables and random numbers; a script, not JSON, so that a page
  opened from disk can read it;
- `stimuli/`: the pictures of the study's stimulus set.

**What is the same as `graphtasks serve`, and what is not.** The tables are the server's env's
own (`GraphTaskEnv`: its transition lists per condition, skip states, rewards and reward
sources), read from the env each phase makes (`run_plan`, the same seed tree). The trial orders
and start states are the server's, drawn in Python. The random numbers are drawn in Python
from the phase's env seed (`SeedTree(seed).env(p)`), as the env's `RandomStream` would fetch
them, in blocks of 1024 uniform then 1024 normal numbers. The server's env fetches its blocks
as it needs them; while a phase draws at most 2048 uniform and 1024 normal numbers (a two-step
task: about 500 rounds), the browser's outcomes are the server's for the same choices; past
that the order of blocks may differ (same generator and distributions, other numbers). Only
graph tasks (a compiled transition table) with fixed, probabilistic, drifting, pseudo-random or
sequence rewards are exported; others are refused in one line. Comprehension and attention
checks, telemetry and touch input are the server's pages' and are not in the export.

`read_jspsych` reads what the page saves on finish (`jsPsych.data.get().json()`, or `.csv()`)
and `import_jspsych` records it as runs of participants of the study (`graphtasks participants
import --jspsych`), in an experiment of its own (the study's name + " (jsPsych)").
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from gymnasium.utils import seeding

from graphstore.errors import GraphtasksError
from graphtasks.experiments.protocol import run_plan
from graphtasks.experiments.runs import Cell
from graphtasks.experiments.spec import AgentSpec
from graphtasks.experiments.versions import prepare_versions
from gym_bridge.graph.compiled import CompiledGraphTask
from tasks.rewards import (
    DriftingSource,
    FixedSource,
    ProbabilisticSource,
    PseudoRandomSource,
    RandomStream,
    SequenceSource,
)

from .engine import SCREEN_KINDS
from .stimuli import option_looks, state_colour, stimulus_files
from .study import Study

STATIC = Path(__file__).parent / "static"
BLOCK = RandomStream.BLOCK
PARTICIPANT = "participant"  # the agent name of people's runs (as graphtasks.serve.app records sessions)
MAX_SESSIONS = 1000
MAX_DATA_BYTES = 64 * 2**20


class JsPsychError(GraphtasksError, ValueError):
    """A study that cannot be exported, or a data file that cannot be read back; names what."""


# -- export ---------------------------------------------------------------------------------------
def export_jspsych(study: Study, out: str | Path, sessions: int = 1, jatos: bool = False, store: Any = None) -> Path:
    """Write `study` as a jsPsych 8 experiment in the folder `out` (see the module docstring).

    Parameters
    ----------
    study : Study
        The study (`graphtasks.serve.study.load_study`).
    out : str or Path
        The folder to write (made; files of an earlier export are replaced).
    sessions : int, optional
        Session slots: slot k is the run a `graphtasks serve` session number k gets (its task,
        condition and seed). The page takes `?session=K`, else a slot at random.
    jatos : bool, optional
        Also load `jatos.js` and hand the data to JATOS on finish (`export_jatos` sets it).
    store : GraphStore or str, optional
        Where tasks that are not built in are read.

    Returns
    -------
    Path
        The folder's `index.html`.

    Examples
    --------
    >>> import tempfile
    >>> from graphtasks.serve.jspsych import export_jspsych
    >>> from graphtasks.serve.study import load_study
    >>> page = export_jspsych(load_study("rewardgym/two-step", episodes=3), tempfile.mkdtemp())
    >>> page.name, (page.parent / "graphtasks" / "plugin-graphtasks.js").is_file()
    ('index.html', True)
    """
    if isinstance(sessions, bool) or not isinstance(sessions, int) or not 1 <= sessions <= MAX_SESSIONS:
        raise JsPsychError(f"sessions: expected a number from 1 to {MAX_SESSIONS}, got {sessions!r}")
    folder = Path(out)
    data = study_data(study, sessions, store)
    folder.mkdir(parents=True, exist_ok=True)
    for sub in ("jspsych", "graphtasks", "stimuli"):
        if (folder / sub).is_dir():
            shutil.rmtree(folder / sub)
    (folder / "jspsych").mkdir()
    (folder / "graphtasks").mkdir()
    for name in ("jspsych.js", "jspsych.css", "LICENSE.txt"):
        shutil.copyfile(STATIC / "jspsych" / "vendor" / name, folder / "jspsych" / name)
    for name in ("plugin-graphtasks.js", "graphtasks.css"):
        shutil.copyfile(STATIC / "jspsych" / name, folder / "graphtasks" / name)
    shutil.copyfile(STATIC / "LICENSE.md", folder / "graphtasks" / "LICENSE.md")
    files = stimulus_files(study.stimuli)
    if files:
        (folder / "stimuli" / study.stimuli).mkdir(parents=True)
        for path in files:
            shutil.copyfile(path, folder / "stimuli" / study.stimuli / path.name)
    text = "window.GRAPHTASKS_STUDY = " + json.dumps(data, separators=(",", ":")) + ";\n"
    (folder / "graphtasks" / "study.js").write_text(text, encoding="utf-8")
    page = (STATIC / "jspsych" / "index.html").read_text(encoding="utf-8")
    jatos_tag = '  <script src="jatos.js"></script>\n' if jatos else ""
    page = page.replace("<!--JATOS-->\n", jatos_tag).replace("{title}", _html(data["title"]))
    (folder / "index.html").write_text(page, encoding="utf-8")
    return folder / "index.html"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def study_data(study: Study, sessions: int, store: Any = None) -> dict[str, Any]:
    """What the page plays: the study's settings and, per session slot, its phases' tables."""
    spec = study.spec
    versions = prepare_versions(spec, store)
    from .app import assignment  # the server's assignment of sessions to tasks, conditions and seeds

    slots = []
    for k in range(sessions):
        task, condition, seed = assignment(spec, k)
        cell = Cell(study.agent_runs + k, task, AgentSpec(PARTICIPANT, f"slot-{k}", {}), seed, condition)
        slots.append({"slot": k, "run": cell.index, "task": task, "condition": condition, "seed": seed,
                      "phases": [_phase(study, plan) for plan in run_plan(spec, cell, versions, "index")]})
    return {
        "format": "graphtasks-jspsych 1", "experiment": spec.name, "title": study.title or spec.name,
        "consent": study.consent, "instructions": list(study.instructions), "practice": list(study.practice),
        "timeout_ms": study.timeout_ms, "too_slow_ms": study.too_slow_ms, "feedback_ms": study.feedback_ms,
        "iti_ms": study.iti_ms, "completion": study.completion, "completion_code": study.completion_code,
        "break_every": study.break_every, "stimuli": study.stimuli, "sessions": slots,
    }


def _phase(study: Study, plan: Any) -> dict[str, Any]:
    task = plan.version.task_id
    screen = plan.family.screen
    if screen is None or screen.page != "choice":
        raise JsPsychError(f"{task}: the jsPsych export plays choice screens of graph tasks; this task is played "
                           f"on the {getattr(screen, 'page', 'no')!r} screen")
    env = plan.make_env(**screen.env_settings)
    try:
        genv = env.unwrapped
        if not isinstance(getattr(genv, "compiled", None), CompiledGraphTask) or not hasattr(genv, "_det"):
            raise JsPsychError(f"{task}: the jsPsych export plays graph tasks (a compiled transition table); "
                               f"{plan.family.name} tasks are not")
        if plan.env_seed is None:
            raise JsPsychError(f"{task}: phase {plan.phase.name!r} has no env seed")
        options = plan.options(env)
        episodes = []
        tables: dict[str, Any] = {}
        for e in range(plan.phase.episodes):
            chosen = (options[e] if options is not None else None) or {}
            condition = chosen.get("condition", genv.default_condition)
            key = json.dumps(condition, sort_keys=True)
            if key not in tables:
                genv._apply_condition(condition)
                tables[key] = _tables(genv)
            start = chosen.get("start")
            episodes.append({"table": key, "start": None if start is None else int(start),
                             "condition": chosen.get("condition") if isinstance(chosen.get("condition"), str)
                             else None})
        c = genv.compiled
        sources = [_source(task, t, s) for t, s in enumerate(genv._sources)]
        uniforms, normals = _blocks(plan, env)
        described = screen.describe(plan.version.graph, plan.make_env, study.keys)
        n_actions = int(plan.version.graph.task.get("n_actions") or 2)
        looks = option_looks(described["states"], n_actions, study.stimuli)
        for rows in looks.values():
            for row in rows:
                if row["image"]:
                    row["image"] = row["image"].replace("/static/", "", 1)  # the export's folder holds stimuli/
        states = {k: {**v, "image": None if not v.get("image") or str(v["image"]).startswith("/static/")
                      else v["image"], "colour": state_colour(looks.get(int(k), ()), v["colour"])}
                  for k, v in described["states"].items()}
        return {
            "index": plan.index, "name": plan.phase.name, "task": task, "task_hash": plan.version.content_hash,
            "episodes": plan.phase.episodes, "n_actions": int(genv.action_space.n), "start": int(c.start),
            "terminal": [bool(x) for x in genv._terminal], "skip": [bool(x) for x in genv._skip],
            "skip_first": [int(x) for x in genv._skip_first], "stochasticity": float(genv.stochasticity),
            "time_penalty": float(genv.time_penalty),
            "limit": None if genv._limit >= sys.maxsize else int(genv._limit),  # the env's truncation
            "tables": tables, "trials": episodes, "sources": sources, "uniforms": uniforms, "normals": normals,
            "keys": described["keys"], "states": states, "options": {str(s): v for s, v in looks.items()},
        }
    finally:
        env.close()


def _tables(genv: Any) -> dict[str, Any]:
    """The env's tables under its current condition (what `GraphTaskEnv.step` reads)."""
    dist = {f"{s},{a}": [list(map(int, t)), list(map(float, c))] for (s, a), (t, c) in genv._dist.items()}
    return {"det": [[int(x) for x in row] for row in genv._det], "dist": dist,
            "avail": [[int(a) for a in row] for row in genv._avail],
            "outcome": None if genv._outcome is None else float(genv._outcome),
            "rew": [float(x) for x in genv._rew], "src": [s is not None for s in genv._src]}


def _source(task: str, state: int, source: Any) -> dict[str, Any] | None:
    if source is None:
        return None
    if isinstance(source, FixedSource):
        return {"kind": "fixed", "value": float(source.value)}
    if isinstance(source, ProbabilisticSource):
        return {"kind": "probabilistic", "values": list(map(float, source.values)),
                "cumulative": list(map(float, source.cumulative))}
    if isinstance(source, DriftingSource):
        return {"kind": "drifting", "high_value": float(source.high_value), "low_value": float(source.low_value),
                "low": float(source.low), "high": float(source.high), "sd": float(source.sd)}
    if isinstance(source, PseudoRandomSource):
        return {"kind": "pseudorandom", "deck": list(map(float, source.deck))}
    if isinstance(source, SequenceSource):
        return {"kind": "sequence", "cards": list(map(float, source.cards))}
    raise JsPsychError(f"{task}: state {state}'s reward source ({type(source).__name__}) is not played by the jsPsych "
                       "export (fixed, probabilistic, drifting, pseudo-random and sequence rewards are)")


class _Counting:
    """A RandomStream that counts its draws (to size the blocks an export ships)."""

    def __init__(self, stream: RandomStream) -> None:
        self.stream, self.u, self.n = stream, 0, 0

    def uniform(self) -> float:
        self.u += 1
        return self.stream.uniform()

    def normal(self) -> float:
        self.n += 1
        return self.stream.normal()

    def below(self, n: int) -> int:
        return min(int(self.uniform() * n), n - 1)

    def shuffled(self, items: list[Any]) -> list[Any]:
        return RandomStream.shuffled(self, items)  # type: ignore[arg-type]


def _blocks(plan: Any, env: Any) -> tuple[list[float], list[float]]:
    """The phase's random numbers, in the blocks its env's stream fetches: enough for twice
    the draws of a phase played with random choices, and a block more."""
    genv = env.unwrapped
    options = plan.options(env)
    rng = np.random.default_rng(0)
    env.reset(seed=plan.env_seed, options=(options[0] if options else None) or None)
    counting = _Counting(genv._stream)
    counting.u = sum(len(getattr(s, "deck", ())) + 1 for s in genv._sources if s is not None)  # the resets' draws
    genv._stream = counting
    for e in range(plan.phase.episodes):
        if e:
            env.reset(options=(options[e] if options else None) or None)
        for _ in range(10_000):
            available = genv._avail[genv._state] or (0,)
            _, _, terminated, truncated, _ = env.step(int(rng.choice(available)))
            if terminated or truncated:
                break
    generator, _ = seeding.np_random(plan.env_seed)
    u_blocks = math.ceil(2 * counting.u / BLOCK) + 1
    n_blocks = math.ceil(2 * counting.n / BLOCK) + (1 if counting.n else 0)
    uniforms: list[float] = []
    normals: list[float] = []
    for k in range(max(u_blocks, n_blocks)):
        if k < u_blocks:
            uniforms += generator.random(BLOCK).tolist()
        if k < n_blocks:
            normals += generator.standard_normal(BLOCK).tolist()
    return uniforms, normals


# -- the data back ----------------------------------------------------------------------------------
@dataclasses.dataclass
class JsPsychSession:
    """One participant's data from the page: who, which slot (run, task, seed, condition), the
    rounds (`episodes`, each with its steps) and the other screens (`events`)."""

    path: str
    participant: str
    experiment: str
    slot: int
    run: int
    task: str
    condition: str
    seed: int
    episodes: list[dict[str, Any]]
    events: list[dict[str, Any]]


def read_jspsych(path: str | Path) -> JsPsychSession:
    """Read a data file the exported page saves (`jsPsych.data.get().json()` or `.csv()`).

    Parameters
    ----------
    path : str or Path
        A `.json` (a list of jsPsych's trial rows) or `.csv` file.

    Returns
    -------
    JsPsychSession
        Its participant, slot, rounds and events; JsPsychError names the file and what is wrong.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise JsPsychError(f"{p}: cannot be read ({exc.strerror})") from None
    if size > MAX_DATA_BYTES:
        raise JsPsychError(f"{p}: {size:,} bytes; at most {MAX_DATA_BYTES:,}")
    text = p.read_text(encoding="utf-8-sig")
    rows: list[dict[str, Any]]
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JsPsychError(f"{p}: not valid JSON: {exc}") from None
    else:
        rows = [dict(r) for r in csv.DictReader(io.StringIO(text))]
        for row in rows:  # jsPsych's csv: objects and null written as JSON, numbers as text
            for key, value in list(row.items()):
                if value == "null":
                    row[key] = None
                    continue
                if key in ("steps", "graphtasks_slot", "graphtasks_run", "graphtasks_seed", "phase_index", "episode",
                           "start_state", "onset", "duration", "page", "return", "length") and value not in ("", None):
                    try:
                        row[key] = json.loads(value)
                    except json.JSONDecodeError:
                        raise JsPsychError(f"{p}: column {key}: {value[:40]!r} is not a number or a list") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise JsPsychError(f"{p}: expected jsPsych's data: a list of trial rows")
    ours = [r for r in rows if r.get("graphtasks")]
    if not ours:
        raise JsPsychError(f"{p}: no rows of a graphtasks export (no 'graphtasks' column)")
    first = ours[0]
    for key in ("graphtasks_participant", "graphtasks_experiment", "graphtasks_slot", "graphtasks_run",
                "graphtasks_task", "graphtasks_seed"):
        if first.get(key) in (None, ""):
            raise JsPsychError(f"{p}: {key}: missing (was the file written by a graphtasks export?)")
    episodes = [r for r in ours if r["graphtasks"] == "episode"]
    for i, r in enumerate(episodes):
        steps = r.get("steps")
        if not isinstance(steps, list) or not steps:
            raise JsPsychError(f"{p}: episode row {i}: steps: expected a list of steps")
        for j, s in enumerate(steps):
            for key in ("state", "action", "reward", "next_state"):
                if not isinstance(s, dict) or not isinstance(s.get(key), (int, float)) or isinstance(s.get(key), bool):
                    raise JsPsychError(f"{p}: episode row {i}, step {j}: {key}: expected a number")
    events, done = [], 0  # the screens besides the rounds, each with the trials done before it
    for r in ours:
        if r["graphtasks"] == "episode":
            done += len(r["steps"])
            continue
        if r["graphtasks"] not in SCREEN_KINDS or not all(
                isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for k in ("onset", "duration")):
            raise JsPsychError(f"{p}: a {str(r['graphtasks'])[:40]!r} row: expected a screen "
                               f"({', '.join(SCREEN_KINDS)}) with its onset and duration")
        events.append({**{k: r.get(k) for k in ("graphtasks", "page", "onset", "duration", "phase_index")},
                       "trial": done})
    return JsPsychSession(
        str(p), str(first["graphtasks_participant"]), str(first["graphtasks_experiment"]),
        int(first["graphtasks_slot"]), int(first["graphtasks_run"]), str(first["graphtasks_task"]),
        str(first.get("graphtasks_condition") or ""), int(first["graphtasks_seed"]), episodes, events,
    )


def import_jspsych(study: Study, files: Sequence[str | Path], store: Any, name: str | None = None
                   ) -> list[dict[str, Any]]:
    """Record the data files of an exported study as runs of participants.

    Each file becomes a Participant (its `graphtasks_participant`) and a Run of the experiment
    `name` (default: the study's name + " (jsPsych)"), numbered on from the runs there, with
    the task, condition and seed of the slot it played; its rounds become Episodes and Trials
    (with what the page measured: rt, key, shown_ms, pressed_ms, timeouts); its other screens
    (consent, instructions, banners, breaks) StudyEvents with their onset and duration, as a
    served session's are. A participant imported already is left as it is.

    Parameters
    ----------
    study : Study
        The study the files were exported from.
    files : sequence of str or Path
        Data files (`read_jspsych`).
    store : GraphStore
        A store opened for writing.
    name : str, optional
        The experiment to record them as.

    Returns
    -------
    list of dict
        Per file: participant, run, trials, events, status ("imported" or "already imported").
    """
    from graphtasks.experiments.ids import experiment_uid, participant_uid
    from graphtasks.experiments.observers import COMPLETED, RunOutcome
    from graphtasks.experiments.records import _key, record_experiment, record_tasks, run_records

    from .engine import now_ms

    spec = dataclasses.replace(study.spec, name=name or f"{study.spec.name} (jsPsych)")
    read = [read_jspsych(f) for f in files]  # every file is checked before a record is written
    versions = prepare_versions(spec, store)
    by_task = {v.task_id: v for v in versions.values()}
    for s in read:
        if s.experiment != study.spec.name:
            raise JsPsychError(f"{s.path}: exported from study {s.experiment!r}, not {study.spec.name!r}")
        for e in s.episodes:
            if e.get("task") not in by_task:
                raise JsPsychError(f"{s.path}: task {e.get('task')!r} is not a task of the study")
    record_tasks(store, spec.graphs)
    record_experiment(store, spec, study.text)
    uid = experiment_uid(spec.name)
    known = {str(label): int(index) for label, index in store.cypher(
        "MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.owner = $uid RETURN p.participant_id, r.index",
        {"uid": uid}).rows}
    index = max([study.agent_runs - 1, *known.values()]) + 1
    out = []
    for s in read:
        if s.participant in known:
            out.append({"participant": s.participant, "run": known[s.participant], "trials": 0,
                        "events": len(s.events), "status": "already imported"})
            continue
        cell = Cell(index, s.task, AgentSpec(PARTICIPANT, s.participant, {}), s.seed, s.condition)
        rows, browser = [], {}
        for e in s.episodes:
            version = by_task[e["task"]]
            steps = [(int(x["state"]), int(x["action"]), float(x["reward"]), int(x["next_state"]), 1.0)
                     for x in e["steps"]]
            rows.append({
                "experiment": spec.name, "run": index, "task": s.task, "agent": PARTICIPANT, "label": s.participant,
                "params": "{}", "seed": s.seed, "condition": s.condition, "phase_task": version.task_id,
                "task_hash": version.content_hash, "phase": e["phase"], "phase_index": int(e["phase_index"]),
                "episode": int(e["episode"]), "return": float(sum(x[2] for x in steps)), "length": len(steps),
                "start_state": int(e["start_state"]), "steps": steps, "trial_condition": e.get("condition"),
            })
            for j, x in enumerate(e["steps"]):
                browser[(int(e["phase_index"]), int(e["episode"]), j)] = {
                    "rt": _float(x.get("rt")), "shown_ms": _float(x.get("shown")),
                    "pressed_ms": _float(x.get("pressed")), "key": None if x.get("key") is None else str(x["key"])[:20],
                    "timeouts": int(x.get("timeouts") or 0),
                }
        outcome = RunOutcome(cell, COMPLETED, rows, None, "", "")
        head, body = run_records(spec, outcome)
        nodes, edges = body
        trials = 0
        for label, node_rows in nodes:
            if label == "Trial":
                for r in node_rows:
                    r.update(browser.get((r["phase_index"], r["episode"], r["step"]), {}))
                trials = len(node_rows)
        run = dict(head[0][0][1][0])
        person = participant_uid(uid, s.participant)
        participant = {"uid": person, "owner": uid, "participant_id": s.participant,
                       "source": f"jsPsych export ({Path(s.path).name})"}
        screens = [{"uid": f"{run['uid']}/screen/{e['graphtasks']}/{float(e['onset']):.3f}", "owner": uid,
                    "kind": e["graphtasks"], "at": now_ms(), "trial": e["trial"], "onset_ms": float(e["onset"]),
                    "duration_ms": float(e["duration"]), "page": int(e.get("page") or 0),
                    "phase_index": None if e.get("phase_index") is None else int(e["phase_index"])}
                   for e in s.events]  # the page's screens besides the rounds, as a served session's are stored
        store.merge_shared(
            [*head[0], ("Participant", [participant]), *nodes, ("StudyEvent", screens)],
            [*head[1], ("PERFORMED", "Participant", "Run", [_key(person, run["uid"])]), *edges,
             ("HAS_EVENT", "Run", "StudyEvent", [_key(run["uid"], e["uid"]) for e in screens])],
        )
        out.append({"participant": s.participant, "run": index, "trials": trials, "events": len(s.events),
                    "status": "imported"})
        known[s.participant] = index
        index += 1
    return out


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


