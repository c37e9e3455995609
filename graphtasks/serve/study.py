"""A study: an experiment spec played by people, with what the browser shows around the trials.

A study file is an experiment spec (`graphtasks.experiments.spec`) with one more table,
`[study]`; everything else (tasks, seeds, phases, conditions) means what it means for agents.
A task id instead of a file is a study of one phase of that task.

    [study]
    title = "A two-step task"
    consent = "You are invited to take part ..."    # none: no consent screen
    instructions = ["Page one ...", "Page two ..."]
    practice = ["practice"]        # phases shown as practice (recorded like the others)
    keys = ["f", "j"]              # action i is keys[i] on choice screens (default f/j, or 1..n)
    timeout_ms = 3000              # a choice screen's time limit (0: none); then a "too slow" screen
    too_slow_ms = 1000
    feedback_ms = 800              # the outcome of a step
    iti_ms = 500                   # the fixation cross between episodes
    completion = "Thank you!"
    completion_code = "C0DE1234"   # none: a code per session
    redirect = "https://example.org/done?cc={code}"
    allow_repeat = false           # true: one participant id may start several sessions
    max_sessions = 1000            # sessions the study takes; then "the study is full"
    break_every = 20               # a break screen after every 20 trials of a phase (0: none); a trial
                                   # is a round (an episode), or a question of a question screen
    stimuli = "daw2011"            # what options show: "labels" (default, text) or "daw2011" (coloured
                                   # boxes with a glyph per option, a colour per state; choice screens)

    [[study.checks]]               # comprehension checks after the instructions: all right, or
    question = "Which keys choose?"  # the instructions again and the checks again
    options = ["F and J", "The arrow keys"]
    answer = 0                     # the right option, from 0

    [[study.attention_checks]]     # an instructed-response item shown before trial 20 of the session
    after_trial = 20               # (trials counted over the whole session, from 0; 0: before the first)
    question = "To show you are reading, choose 'Blue'."
    options = ["Red", "Blue", "Green"]
    answer = 1                     # a wrong answer is asked once more; either way the study goes on

Attention checks are recorded, never acted on: each answer is a `StudyEvent` of the session's
Run, and its failures are counted on the Run and shown as a quality flag
(`graphtasks.serve.quality`) for the researcher to judge (Prolific's rules: a participant may
be rejected for failing two checks, not one).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphstore import GraphStore
from graphstore.errors import GraphtasksError
from graphtasks.experiments.runs import cells
from graphtasks.experiments.spec import ExperimentSpec, parse_spec, read_spec_text
from graphtasks.serve.stimuli import check_stimuli
from gym_bridge import families, family_of

STUDY_KEYS = (
    "title", "consent", "instructions", "practice", "keys", "timeout_ms", "too_slow_ms", "feedback_ms", "iti_ms",
    "completion", "completion_code", "redirect", "allow_repeat", "checks", "max_sessions", "break_every",
    "attention_checks", "stimuli",
)
CHECK_KEYS = ("question", "options", "answer")
ATTENTION_KEYS = ("after_trial", "question", "options", "answer")
MAX_CHECKS = 20
MAX_SESSIONS = 1_000_000
MAX_TEXT = 20_000  # characters of one text of the study
MAX_MS = 600_000


class StudyError(GraphtasksError, ValueError):
    """A study file or task id is wrong; the message names the file and field."""


@dataclass(frozen=True)
class Study:
    """A study: its experiment spec, the spec's full text, and what the browser shows."""

    spec: ExperimentSpec
    text: str
    title: str = ""
    consent: str = ""
    instructions: tuple[str, ...] = ()
    practice: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    timeout_ms: int = 0
    too_slow_ms: int = 1000
    feedback_ms: int = 800
    iti_ms: int = 500
    completion: str = "Thank you for taking part."
    completion_code: str = ""
    redirect: str = ""
    allow_repeat: bool = False
    checks: tuple[tuple[str, tuple[str, ...], int], ...] = ()  # (question, options, the right option)
    max_sessions: int = 1000
    break_every: int = 0  # a break after every this many trials (rounds; questions) of a phase
    attention_checks: tuple[tuple[int, str, tuple[str, ...], int], ...] = ()  # (after_trial, question, options,
    # the right option), in the order of after_trial
    stimuli: str = "labels"  # what each option shows (`graphtasks.serve.stimuli`)
    agent_runs: int = 0  # the runs `graphtasks experiment run` makes of the file's [[agents]]; sessions follow

    def page_settings(self) -> dict[str, Any]:
        """What the page needs to know of the study (no spec internals)."""
        return {
            "title": self.title or self.spec.name, "consent": self.consent, "instructions": list(self.instructions),
            "timeout_ms": self.timeout_ms, "too_slow_ms": self.too_slow_ms, "feedback_ms": self.feedback_ms,
            "iti_ms": self.iti_ms, "completion": self.completion, "break_every": self.break_every,
            "stimuli": self.stimuli,
            "checks": [{"question": q, "options": list(o)} for q, o, _ in self.checks],  # not the answers
            "attention_checks": [{"after_trial": at, "question": q, "options": list(o)}
                                 for at, q, o, _ in self.attention_checks],
        }


TASK_STUDY = """[experiment]
name = "study {task}"
tasks = ["{task}"]
seeds = 1000
record = "steps"

[[agents]]
name = "random"

[[phases]]
name = "trials"
episodes = {episodes}
"""


def load_study(study: str, store: GraphStore | str | None = None, episodes: int = 20) -> Study:
    """A study from a study file (a spec with a `[study]` table) or a task id.

    Parameters
    ----------
    study : str
        A path to a TOML file, or a task id (built in or stored).
    store : GraphStore or str, optional
        Where tasks that are not built in are read.
    episodes : int, optional
        Episodes of the one phase of a task id's study.

    Returns
    -------
    Study
        The checked study; StudyError (or ExperimentSpecError) names what is wrong.

    Examples
    --------
    >>> from graphtasks.serve.study import load_study
    >>> study = load_study("rewardgym/two-step", episodes=5)
    >>> study.spec.name, study.spec.phases[0].episodes, study.keys
    ('study rewardgym/two-step', 5, ())
    """
    path = Path(study)
    if path.suffix == ".toml" or path.is_file():
        text = read_spec_text(path)
        return parse_study(text, str(path), store)
    if not re.fullmatch(r"[A-Za-z0-9_./@-]{1,200}", study) or ".." in study:
        raise StudyError(f"{study!r}: neither a study file nor a task id")
    task_study = parse_study(TASK_STUDY.format(task=study, episodes=int(episodes)), f"task {study}", store)
    return dataclasses.replace(task_study, agent_runs=0)  # no agents run under a task id's study


def parse_study(text: str, path: str = "<study>", store: GraphStore | str | None = None) -> Study:
    """Check a study's text: the `[study]` table here, the rest as an experiment spec."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML: {exc}") from None
    spec_text = text
    if "agents" not in data:  # people play it; pilot mode's simulated participants default to random choices
        spec_text += '\n[[agents]]\nname = "random"\n'
    spec = parse_spec(spec_text, path, store)  # the spec keeps the [study] table (agents ignore it)
    table = spec.study
    for version in spec.graphs.values():
        owner = family_of(version)
        if owner.screen is None:  # a family declares how people play it (`gym_bridge.Family.screen`)
            playable = ", ".join(f.name for f in families() if f.screen is not None)
            raise StudyError(f"{path}: {version.task_id}: people cannot play {owner.name} tasks yet "
                             f"(families with screens: {playable})")
    if not isinstance(table, dict):
        raise StudyError(f"{path}: study: expected a table")
    for key in table:
        if key not in STUDY_KEYS:
            raise StudyError(f"{path}: study.{key}: unknown field (fields: {', '.join(STUDY_KEYS)})")
    texts = {k: _text(table.get(k, ""), f"{path}: study.{k}") for k in
             ("title", "consent", "completion", "completion_code", "redirect")}
    instructions = table.get("instructions", [])
    if isinstance(instructions, str):
        instructions = [instructions]
    if not isinstance(instructions, list):
        raise StudyError(f"{path}: study.instructions: expected a list of texts")
    pages = tuple(_text(p, f"{path}: study.instructions[{i}]") for i, p in enumerate(instructions))
    practice = table.get("practice", [])
    names = [p.name for p in spec.phases]
    if not isinstance(practice, list) or any(p not in names for p in practice):
        raise StudyError(f"{path}: study.practice: expected a list of phase names (phases: {', '.join(names)})")
    keys = table.get("keys", [])
    if not isinstance(keys, list) or any(not isinstance(k, str) or not 0 < len(k) <= 12 for k in keys):
        raise StudyError(f"{path}: study.keys: expected a list of key names such as [\"f\", \"j\"]")
    if len(set(k.lower() for k in keys)) != len(keys):
        raise StudyError(f"{path}: study.keys: a key is listed twice")
    times = {k: _ms(table.get(k), f"{path}: study.{k}") for k in ("timeout_ms", "too_slow_ms", "feedback_ms", "iti_ms")}
    redirect = texts["redirect"]
    if redirect and not redirect.startswith(("https://", "http://")):
        raise StudyError(f"{path}: study.redirect: expected an http(s) address, got {redirect!r}")
    repeat = table.get("allow_repeat", False)
    if not isinstance(repeat, bool):
        raise StudyError(f"{path}: study.allow_repeat: expected true or false, got {repeat!r}")
    checks = _checks(table.get("checks", []), path)
    attention = _attention_checks(table.get("attention_checks", []), path)
    most = table.get("max_sessions", Study.max_sessions)
    if isinstance(most, bool) or not isinstance(most, int) or not 1 <= most <= MAX_SESSIONS:
        raise StudyError(f"{path}: study.max_sessions: expected a number of sessions from 1 to {MAX_SESSIONS:,}")
    every = table.get("break_every", 0)
    if isinstance(every, bool) or not isinstance(every, int) or not 0 <= every <= MAX_SESSIONS:
        raise StudyError(f"{path}: study.break_every: expected a number of trials from 0 (no breaks) to "
                         f"{MAX_SESSIONS:,}, got {every!r}")
    try:
        stimuli = check_stimuli(table.get("stimuli", "labels"), f"{path}: study.stimuli")
    except ValueError as exc:
        raise StudyError(str(exc)) from None
    if stimuli != "labels":
        for version in spec.graphs.values():
            screen = family_of(version).screen
            if screen is not None and screen.page != "choice":
                raise StudyError(f"{path}: study.stimuli: {stimuli} draws the options of choice screens; "
                                 f"{version.task_id} is played on the {screen.page!r} screen (use \"labels\")")
    defaults = Study(spec, text)
    timing = {k: v if v is not None else getattr(defaults, k) for k, v in times.items()}
    return Study(
        spec, text, texts["title"], texts["consent"], pages, tuple(practice), tuple(k.lower() for k in keys),
        completion=texts["completion"] or defaults.completion, completion_code=texts["completion_code"],
        redirect=redirect, allow_repeat=repeat, checks=checks, max_sessions=most, break_every=every,
        stimuli=stimuli,
        attention_checks=attention, agent_runs=len(cells(spec)) if "agents" in data else 0, **timing,
    )


def plural(n: int, word: str) -> str:
    """`n` and the word, plural unless n is 1.

    Examples
    --------
    >>> from graphtasks.serve.study import plural
    >>> plural(1, "session"), plural(3, "session"), plural(0, "session")
    ('1 session', '3 sessions', '0 sessions')
    """
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _checks(value: Any, path: str, first: int = 0,
            name: str = "checks") -> tuple[tuple[str, tuple[str, ...], int], ...]:
    if not isinstance(value, list) or len(value) > MAX_CHECKS:
        raise StudyError(f"{path}: study.checks: expected at most {MAX_CHECKS} [[study.checks]] tables")
    out = []
    for i, item in enumerate(value, first):
        where = f"{path}: study.{name}[{i}]"
        if not isinstance(item, dict) or set(item) - set(CHECK_KEYS):
            raise StudyError(f"{where}: expected a table of {', '.join(CHECK_KEYS)}")
        question = _text(item.get("question"), f"{where}.question")
        options = item.get("options")
        if not isinstance(options, list) or not 2 <= len(options) <= 9:
            raise StudyError(f"{where}.options: expected 2 to 9 options")
        texts = tuple(_text(o, f"{where}.options[{j}]") for j, o in enumerate(options))
        answer = item.get("answer")
        if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < len(texts):
            raise StudyError(f"{where}.answer: expected the right option's number, 0 to {len(texts) - 1}")
        out.append((question, texts, answer))
    return tuple(out)


def _attention_checks(value: Any, path: str) -> tuple[tuple[int, str, tuple[str, ...], int], ...]:
    if not isinstance(value, list) or len(value) > MAX_CHECKS:
        raise StudyError(f"{path}: study.attention_checks: expected at most {MAX_CHECKS} [[study.attention_checks]] "
                         f"tables")
    out: list[tuple[int, str, tuple[str, ...], int]] = []
    for i, item in enumerate(value):
        where = f"{path}: study.attention_checks[{i}]"
        if not isinstance(item, dict) or set(item) - set(ATTENTION_KEYS) or "after_trial" not in item:
            raise StudyError(f"{where}: expected a table of {', '.join(ATTENTION_KEYS)}")
        after = item["after_trial"]
        if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after <= MAX_SESSIONS:
            raise StudyError(f"{where}.after_trial: expected a trial number from 0 to {MAX_SESSIONS:,}, got {after!r}")
        if out and after < out[-1][0]:
            raise StudyError(f"{where}.after_trial: {after} comes before the check above it ({out[-1][0]}): list "
                             f"the checks in the order they are shown")
        question, texts, answer = _checks([{k: v for k, v in item.items() if k != "after_trial"}], path, i,
                                           "attention_checks")[0]
        out.append((after, question, texts, answer))
    return tuple(out)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise StudyError(f"{where}: expected a text, got {value!r}")
    if len(value) > MAX_TEXT:
        raise StudyError(f"{where}: {len(value):,} characters; at most {MAX_TEXT:,}")
    return value


def _ms(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MS:
        raise StudyError(f"{where}: expected milliseconds from 0 to {MAX_MS:,}, got {value!r}")
    return value
