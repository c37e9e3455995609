"""Text participants: any callable that reads text and answers with text plays a task's runs.

A language model, a scripted rule or a person at a terminal plays a run the way agents and
people do: the run's phases are `protocol.run_plan`'s (the same envs, env seeds, starts and
trial orders from the run's seed tree), each step is read through the family's text view
(`gym_bridge.text`, `Family.text`) with option names drawn from the run's seed, and the run is
recorded as agents' and people's runs are (`records.run_records`: an Experiment, a Run, its
Episodes and a Trial per step), each Trial with the prompt shown (`prompt`), the answer given
(`answer`), the tries it took (`tries`) and the milliseconds the participant took (`rt`).

A participant is `participant(messages) -> str`: `messages` is the chat so far (OpenAI's
format: a "system" message with the task's instructions, then "user" prompts and the
participant's own "assistant" answers), the last one the prompt to answer. `ChatEndpoint` is
one for an OpenAI-compatible chat-completions server (llama.cpp, vLLM, Ollama) given by URL.
An object with a method `answer_step(step, messages)` is given the step (`gym_bridge.text.
TextStep`) as well: replays of recorded choices (`graphtasks.experiments.psych101`) are such.

The rule for answers that name no option (a refusal, a malformed answer): the participant is
told so and asked again, up to `tries` times in all (3); a trial with no valid answer after
them ends the run `failed`, its error naming the trial and the last answer. No choice is
made for it, and the trials before it are recorded. An endpoint that does not answer
(`ParticipantUnavailable`) also ends the run failed.
"""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphstore import GraphStore
from graphstore.errors import GraphtasksError
from gym_bridge.text import MalformedAnswer, OptionNames, TextStep

from .observers import COMPLETED, FAILED, RunOutcome, now
from .protocol import run_plan
from .records import record_experiment, record_tasks, run_records
from .runs import Cell, cells
from .spec import AgentSpec, ExperimentSpec, single_run_spec
from .versions import prepare_versions

Message = dict[str, str]


class StepParticipant(Protocol):
    """A participant that is given the step as well as the chat (a replay of recorded choices)."""

    def answer_step(self, step: TextStep, messages: list[Message]) -> str: ...


Participant = Callable[[list[Message]], str] | StepParticipant
TRIES = 3


class ParticipantUnavailable(GraphtasksError, RuntimeError):
    """A participant that gave no answer at all (an endpoint that cannot be reached)."""


@dataclass
class TextTrial:
    """One answered step: where it was, what was shown, what was answered."""

    phase_index: int
    episode: int
    step: int
    prompt: str
    answer: str
    marked: str
    tries: int
    rt: float | None
    reward: float


@dataclass
class TextRun:
    """How a text participant's run went: its outcome (as a sweep's), its trials, its chat."""

    outcome: RunOutcome
    trials: list[TextTrial] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    instructions: str = ""

    @property
    def status(self) -> str:
        return self.outcome.status

    @property
    def error(self) -> str | None:
        return self.outcome.error


def text_spec(
    task_id: str,
    label: str,
    seeds: Sequence[int] = (0,),
    episodes: int = 20,
    name: str = "text",
    max_steps: int | None = None,
    env: Mapping[str, Any] | None = None,
    schedule: bool = False,
    store: GraphStore | str | None = None,
) -> ExperimentSpec:
    """The experiment of text participants: one task, one participant `label`, one run per seed.

    Parameters
    ----------
    task_id : str
        The task (built in, or stored in `store`).
    label : str
        The participant's label (a model's name).
    seeds : sequence of int
        One run per seed: each a participant with its own option names, starts and trial order.
    episodes : int
        Episodes (trials of a decision task) per run.
    name : str
        The experiment's name in the store.
    max_steps, env, schedule, store
        As `spec.single_run_spec`.

    Returns
    -------
    ExperimentSpec

    Examples
    --------
    >>> from graphtasks.experiments.text_participants import text_spec
    >>> spec = text_spec("rewardgym/two-step", "first-letter", seeds=(0, 1), episodes=5)
    >>> spec.agents[0].name, spec.seeds, spec.phases[0].episodes
    ('text', (0, 1), 5)
    """
    if not seeds:
        raise ValueError("seeds: give at least one")
    base = single_run_spec(task_id, "random", int(seeds[0]), episodes, env=env, max_steps=max_steps,
                           schedule=schedule, store=store)
    return dataclasses.replace(base, name=name, description=f"text participant {label} on {task_id}",
                               seeds=tuple(int(s) for s in seeds), agents=(AgentSpec("text", label, {}),))


def spec_text(spec: ExperimentSpec) -> str:
    """The spec as the Experiment node keeps it (a different one under the same name is refused)."""
    phase = spec.phases[0]
    return json.dumps({"kind": "text participants", "name": spec.name, "tasks": list(spec.tasks),
                       "seeds": list(spec.seeds), "participant": spec.agents[0].label, "episodes": phase.episodes,
                       "max_steps": phase.max_steps, "schedule": phase.schedule, "env": dict(spec.env)},
                      sort_keys=True)


def play_text_run(spec: ExperimentSpec, cell: Cell, participant: Participant, versions: Mapping[str, Any] | None = None,
                  tries: int = TRIES) -> TextRun:
    """Play one run of `spec` with a text participant (see the module docstring).

    Parameters
    ----------
    spec : ExperimentSpec
        The experiment (`text_spec`).
    cell : Cell
        The run: its task, seed and condition.
    participant : callable
        `participant(messages) -> str`.
    versions : mapping, optional
        The prepared task versions (default: `versions.prepare_versions(spec)`).
    tries : int
        Answers asked for per trial before the run ends failed.

    Returns
    -------
    TextRun
        The run's outcome (its episode rows with their steps), trials and chat.

    Examples
    --------
    >>> from graphtasks.experiments.runs import cells
    >>> from graphtasks.experiments.text_participants import play_text_run, text_spec
    >>> spec = text_spec("rewardgym/two-step", "first", episodes=3)
    >>> first = lambda messages: messages[-1]["content"].split("\\n  ")[1].split(":")[0].strip()
    >>> run = play_text_run(spec, cells(spec)[0], first)
    >>> run.status, len(run.outcome.rows), [t.tries for t in run.trials][:2]
    ('completed', 3, [1, 1])
    """
    versions = versions if versions is not None else prepare_versions(spec)
    started = now()
    names = OptionNames(cell.seed)
    run = TextRun(RunOutcome(cell, FAILED, None, None, started, started))
    rows: list[dict[str, Any]] = []
    error: str | None = None
    before = ""  # the last step's outcome, read with the next prompt
    for plan in run_plan(spec, cell, versions, _observation(spec, cell, versions)):
        fam, text = plan.family, plan.family.text
        if text is None:
            error = f"{plan.version.task_id}: {fam.name} tasks have no text view (Family.text)"
            break
        graph = plan.version.graph
        if not run.messages:
            run.instructions = text.instructions(graph)
            run.messages.append({"role": "system", "content": run.instructions})
        env = plan.make_env(**text.env_settings)
        try:
            options = plan.options(env)
            for episode in range(plan.episodes):
                chosen = options[episode] if episode < len(options) else {}
                obs, info = env.reset(seed=plan.env_seed if episode == 0 else None, options=chosen or None)
                state = plan.view.recorded(plan.view.state(obs, info))
                start = state
                steps: list[tuple[int, int, float, int, float]] = []
                while True:
                    shown = text.step(env, obs, info, names, graph)
                    prompt = (before + "\n" if before else "") + shown.prompt()
                    answered = _ask(participant, run.messages, prompt, shown, tries)
                    if isinstance(answered, str):
                        where = f"phase {plan.index}, episode {episode}, step {len(steps)}"
                        error = f"no valid answer at {where} in {tries} tries: {answered}"
                        break
                    picked, answer, n, rt = answered
                    action = shown.action(picked)
                    obs, reward, terminated, truncated, info = env.step(action)
                    next_state = plan.view.recorded(plan.view.state(obs, info))
                    steps.append((state, int(plan.view.action_index(action)), float(reward), next_state, 1.0))
                    run.trials.append(TextTrial(plan.index, episode, len(steps) - 1, prompt, answer,
                                                shown.marked(picked), n, rt, float(reward)))
                    before = text.outcome(float(reward), info)
                    state = next_state
                    if terminated or truncated:
                        break
                if steps:
                    rows.append(_episode_row(spec, cell, plan, episode, start, steps, chosen))
                if error:
                    break
        except ParticipantUnavailable as exc:
            error = f"the participant gave no answer: {exc}"
        finally:
            env.close()
        if error:
            break
    run.outcome = RunOutcome(cell, FAILED if error else COMPLETED, rows, error, started, now())
    return run


def _observation(spec: ExperimentSpec, cell: Cell, versions: Mapping[str, Any]) -> str:
    """The view a run's Trials record states by: "index" (as a person's), else the first
    phase's family's own first view (a Room map's room)."""
    from gym_bridge import family as family_named

    fams = [family_named(versions[p.task_id(cell.task)].family) for p in spec.phases_of(cell.condition)]
    if all(f.view("index") is not None for f in fams):
        return "index"
    return str(fams[0].views[0].observation)


def _ask(participant: Participant, messages: list[Message], prompt: str, shown: Any, tries: int
         ) -> tuple[list[int], str, int, float] | str:
    """The choices of a valid answer (with the answer, the tries and the ms taken), or why none came."""
    messages.append({"role": "user", "content": prompt})
    reason = ""
    for attempt in range(1, tries + 1):
        t0 = time.perf_counter()
        if hasattr(participant, "answer_step"):  # a participant that reads the step itself (a replay)
            answer = participant.answer_step(shown, list(messages))
        else:
            assert callable(participant)
            answer = participant(list(messages))
        rt = round((time.perf_counter() - t0) * 1000, 3)
        messages.append({"role": "assistant", "content": str(answer)})
        try:
            return shown.parse(str(answer)), str(answer), attempt, rt
        except MalformedAnswer as exc:
            reason = str(exc)
            if attempt < tries:
                messages.append({"role": "user", "content": f"That answer names no option ({reason}). "
                                 "Answer with an option's name."})
    return reason


def _episode_row(spec: ExperimentSpec, cell: Cell, plan: Any, episode: int, start: int,
                 steps: list[tuple[int, int, float, int, float]], chosen: Mapping[str, Any]) -> dict[str, Any]:
    """An episode row as a sweep makes it (with its steps), for `records.run_records`."""
    return {
        "experiment": spec.name, "run": cell.index, "task": cell.task, "agent": cell.agent.name,
        "label": cell.agent.label, "params": "{}", "seed": cell.seed, "condition": cell.condition,
        "phase_task": plan.version.task_id, "task_hash": plan.version.content_hash, "phase": plan.phase.name,
        "phase_index": plan.index, "episode": episode, "return": float(sum(s[2] for s in steps)),
        "length": len(steps), "start_state": start, "steps": steps, "trial_condition": chosen.get("condition"),
    }


def record_text_runs(store: GraphStore, spec: ExperimentSpec, runs: Sequence[TextRun]) -> None:
    """Write the experiment, its tasks and the runs, each Trial with its prompt, answer, tries and rt.

    Parameters
    ----------
    store : GraphStore
        Where the records go.
    spec : ExperimentSpec
        The experiment (`text_spec`).
    runs : sequence of TextRun
        What `play_text_run` returned.
    """
    record_tasks(store, spec.graphs)
    record_experiment(store, spec, spec_text(spec))
    for run in runs:
        head, body = run_records(spec, run.outcome)
        said = {(t.phase_index, t.episode, t.step): t for t in run.trials}
        nodes = []
        for label, rows in head[0] + body[0]:
            if label == "Trial":
                rows = [{**r, **_said(said.get((r["phase_index"], r["episode"], r["step"])))} for r in rows]
            if rows:
                nodes.append((label, rows))
        edges = [(rel, a, b, rows) for rel, a, b, rows in head[1] + body[1] if rows]
        store.merge_shared(nodes, edges)


def _said(trial: TextTrial | None) -> dict[str, Any]:
    if trial is None:
        return {}
    return {"prompt": trial.prompt, "answer": trial.answer, "tries": trial.tries, "rt": trial.rt}


def run_text_participant(
    store: GraphStore, participant: Participant, task_id: str, label: str, seeds: Sequence[int] = (0,),
    episodes: int = 20, name: str = "text", tries: int = TRIES, **settings: Any,
) -> list[TextRun]:
    """Play and record one run per seed of `task_id` with `participant` (see `text_spec`).

    Parameters
    ----------
    store : GraphStore
        Where the task is read (if not built in) and the runs recorded.
    participant : callable
        `participant(messages) -> str`.
    task_id, label, seeds, episodes, name
        As `text_spec`.
    tries : int
        Answers asked for per trial (the rule in the module docstring).
    **settings
        `max_steps`, `env`, `schedule`: as `text_spec`.

    Returns
    -------
    list of TextRun
        One per seed, in order; each recorded, completed or failed.
    """
    spec = text_spec(task_id, label, seeds, episodes, name, store=store, **settings)
    versions = prepare_versions(spec, store)
    runs = [play_text_run(spec, cell, participant, versions, tries) for cell in cells(spec)]
    record_text_runs(store, spec, runs)
    return runs


@dataclass
class ChatEndpoint:
    """A participant on an OpenAI-compatible chat-completions server (`POST {url}/chat/completions`).

    Parameters
    ----------
    url : str
        The API's base URL, e.g. "http://127.0.0.1:8080/v1" (llama.cpp, vLLM, Ollama).
    model : str
        The model name the server is asked for.
    timeout : float
        Seconds to wait for one answer.
    retries : int
        Further attempts after a failed request (a time-out, a refused connection, a 5xx), with
        a doubling pause from `backoff` seconds; a 4xx is not retried.
    temperature : float
        Sampling temperature sent with each request.
    max_tokens : int
        The longest answer asked for.
    api_key : str, optional
        Sent as a bearer token.

    Examples
    --------
    >>> from graphtasks.experiments.text_participants import ChatEndpoint
    >>> ChatEndpoint("http://127.0.0.1:8080/v1/", "local").endpoint
    'http://127.0.0.1:8080/v1/chat/completions'
    """

    url: str
    model: str
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 0.5
    temperature: float = 0.0
    max_tokens: int = 32
    api_key: str | None = None

    @property
    def endpoint(self) -> str:
        return self.url.rstrip("/") + "/chat/completions"

    def __call__(self, messages: list[Message]) -> str:
        body = json.dumps({"model": self.model, "messages": messages, "temperature": self.temperature,
                           "max_tokens": self.max_tokens}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    reply = json.loads(response.read().decode())
            except urllib.error.HTTPError as exc:
                last = f"{self.endpoint} answered HTTP {exc.code}"
                if exc.code < 500:
                    raise ParticipantUnavailable(last) from None
                continue
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                last = f"{self.endpoint}: {getattr(exc, 'reason', exc)}"
                continue
            except ValueError:
                raise ParticipantUnavailable(f"{self.endpoint} answered with no JSON") from None
            try:
                return str(reply["choices"][0]["message"]["content"] or "")
            except (KeyError, IndexError, TypeError):
                raise ParticipantUnavailable(f"{self.endpoint} answered without choices[0].message.content"
                                             ) from None
        raise ParticipantUnavailable(f"{last} (after {self.retries + 1} attempts)")
