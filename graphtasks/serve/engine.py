"""A session's task, stepped by the server: the same env, seed tree and records as an agent's run.

`SessionPlayer` walks a run's phases by the plan `graphtasks.experiments.runs.play_run` plays
(`graphtasks.experiments.protocol.run_plan`: the env of phase p made with the same settings and
reset with `SeedTree(seed).env(p)` at its first episode, start states and trial orders from the
same streams), but one action at a time, the action coming from a person. What it adds is what
the family's screen (`gym_bridge.Family.screen`) shows at each step: a picture (`frame`, a grid's
text picture, its env made with the screen's settings) or a question (`question`).
`trial_records` turns one step into the experiment records an agent's run writes
(`graphtasks.experiments.records.run_records`): the Trial, its Episode so far and the edges.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping

from graphtasks.experiments.observers import COMPLETED, RUNNING, RunOutcome
from graphtasks.experiments.protocol import run_plan
from graphtasks.experiments.records import Records, run_records
from graphtasks.experiments.runs import Cell
from graphtasks.experiments.spec import ExperimentSpec
from graphtasks.experiments.versions import TaskVersion
from gym_bridge.screens import Screen

from .stimuli import option_looks, options_shown


class ActionRefused(ValueError):
    """An action that is not available in the session's current state."""


@dataclass
class Step:
    """One step a person took, with where it happened."""

    trial: int  # the session's trial counter, from 0
    phase_index: int
    episode: int
    step: int
    state: int
    action: int
    reward: float
    next_state: int
    terminated: bool
    condition: str | None
    episode_steps: list[tuple[int, int, float, int, float]] = field(default_factory=list)
    start_state: int = 0


class SessionPlayer:
    """A session's position in its run (phase, episode, step, state) and its env.

    Examples
    --------
    >>> from graphtasks.experiments.runs import Cell
    >>> from graphtasks.experiments.spec import AgentSpec, single_run_spec
    >>> from graphtasks.experiments.versions import prepare_versions
    >>> spec = single_run_spec("rewardgym/two-step", "random", seed=0, episodes=2)
    >>> cell = Cell(0, "rewardgym/two-step", AgentSpec("participant", "p", {}), 3)
    >>> player = SessionPlayer(spec, prepare_versions(spec), cell)
    >>> player.state, player.available
    (0, (0, 1))
    >>> step = player.act(0)
    >>> step.trial, step.next_state in (1, 2), player.trial
    (0, True, 1)
    """

    def __init__(self, spec: ExperimentSpec, versions: Mapping[str, TaskVersion], cell: Cell) -> None:
        self.spec, self.versions, self.cell = spec, versions, cell
        try:
            self.plan = run_plan(spec, cell, versions, "index")  # the run's phases, as every driver plays them
        except ValueError as exc:
            raise ValueError(f"{exc} (a person is shown the state index)") from None
        self.phases = tuple(p.phase for p in self.plan)
        self.phase_index = self.episode = self.step = self.trial = 0
        self.done = False
        self.state, self.start_state = 0, 0
        self.available: tuple[int, ...] = ()
        self.steps: list[tuple[int, int, float, int, float]] = []  # this episode's steps
        self.condition: str | None = None
        self.info: Mapping[str, Any] = {}
        self._start_phase()

    # -- the run's structure: its plan (`graphtasks.experiments.protocol.run_plan`) -----------
    def _start_phase(self) -> None:
        plan = self.plan[self.phase_index]
        self.version, self.view, self.family = plan.version, plan.view, plan.family
        screen: Screen | None = plan.family.screen
        if screen is None:
            raise ValueError(f"{plan.version.task_id}: people cannot play {plan.family.name} tasks (its family "
                             "declares no screen)")
        self.screen = screen
        self.looks = self._option_looks(plan)
        # what the screen draws may need settings of its own (a grid's text picture), beside the plan's
        self.env = plan.make_env(**self.screen.env_settings)
        self.options = plan.options(self.env)
        self.all_actions = tuple(range(int(self.env.action_space.n)))
        self._reset()

    def _option_looks(self, plan: Any) -> dict[int, list[dict[str, Any]]] | None:
        """What each option of a choice screen shows under the study's stimulus set
        (`[study] stimuli`, `graphtasks.serve.stimuli`); None for screens without options."""
        if self.screen.page != "choice":
            return None
        study = self.spec.study if isinstance(self.spec.study, dict) else {}
        described = self.screen.describe(plan.version.graph, plan.make_env, tuple(study.get("keys", ())))
        n_actions = int(plan.version.graph.task.get("n_actions") or 2)
        return option_looks(described["states"], n_actions, str(study.get("stimuli", "labels")))

    def _reset(self) -> None:
        chosen = self.options[self.episode] if self.options is not None else None
        seed = self.plan[self.phase_index].env_seed if self.episode == 0 else None
        obs, info = self.env.reset(seed=seed, options=chosen or None)
        self.info = info
        self.state = int(self.view.state(obs, info))
        self.start_state = self.state
        self.available = tuple(int(a) for a in info.get("available_actions", self.all_actions))
        self.condition = chosen.get("condition") if chosen else None
        self.step, self.steps = 0, []

    @property
    def phase(self) -> Any:
        return self.phases[self.phase_index]

    def frame(self) -> str | None:
        """The screen's picture now (a grid's text picture; None for screens that draw none)."""
        return None if self.done else self.screen.frame(self.env)

    def question(self) -> dict[str, Any] | None:
        """The screen's question now (what the env shows and what is asked; None for screens that ask none)."""
        return None if self.done else self.screen.question(self.info)

    def act(self, action: int) -> Step:
        """Take `action` in the current state; ActionRefused if it is not available there."""
        if self.done:
            raise ActionRefused("the session is finished")
        if action not in self.available:
            raise ActionRefused(f"action {action} is not available in state {self.state} (actions: {self.available})")
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.info = info
        next_state = int(self.view.state(obs, info))
        self.steps.append((self.state, int(action), float(reward), next_state, 1.0))
        step = Step(self.trial, self.phase_index, self.episode, self.step, self.state, int(action), float(reward),
                    next_state, bool(terminated or truncated), self.condition, list(self.steps), self.start_state)
        self.trial += 1
        self.step += 1
        self.state = next_state
        self.available = tuple(int(a) for a in info.get("available_actions", self.all_actions))
        if terminated or truncated:
            self.episode += 1
            if self.episode < self.phase.episodes:
                self._reset()
            else:
                self.phase_index, self.episode = self.phase_index + 1, 0
                if self.phase_index < len(self.phases):
                    self._start_phase()
                else:
                    self.done = True
        return step

    def position(self) -> dict[str, Any]:
        """Where the session is: what the page shows next."""
        if self.done:
            return {"trial": self.trial, "done": True}
        return {
            "trial": self.trial, "done": False, "phase_index": self.phase_index, "phase": self.phase.name,
            "episode": self.episode, "episodes": self.phase.episodes, "step": self.step, "state": self.state,
            "available": list(self.available), "task": self.version.task_id, "frame": self.frame(),
            "question": self.question(), "options": options_shown(self.looks, self.state, self.available),
        }


SCREEN_KINDS = ("consent", "instructions", "banner", "break")  # the screens a session's page reports (StudyEvent)
SCREEN_FIELDS = ("kind", "onset", "duration", "page")


def screen_event(run_uid: str, experiment_uid: str, player: SessionPlayer, body: Mapping[str, Any]) -> dict[str, Any]:
    """The StudyEvent of a screen the page showed besides the trials (instructions, a break, ...).

    The page posts `kind` (one of SCREEN_KINDS), `onset` (its performance.now() at the display,
    ms: the clock of the trials' `shown_ms`), `duration` (ms until the participant went on) and
    `page` (instructions: the page from 0; break: the block done, from 1). The event is keyed by
    its kind and onset, so a post repeated by the page's retries is one event, and a reload (a
    new clock) makes new ones. Where the session is (its trials done, its phase) comes from the
    player. ValueError names a wrong field.

    Examples
    --------
    >>> from graphtasks.experiments.runs import Cell
    >>> from graphtasks.experiments.spec import AgentSpec, single_run_spec
    >>> from graphtasks.experiments.versions import prepare_versions
    >>> spec = single_run_spec("rewardgym/two-step", "random", seed=0, episodes=2)
    >>> player = SessionPlayer(spec, prepare_versions(spec), Cell(0, "rewardgym/two-step", AgentSpec("p", "p", {}), 3))
    >>> event = screen_event("run/0", "x", player, {"kind": "break", "onset": 1500.25, "duration": 4200.0, "page": 1})
    >>> event["uid"], event["kind"], event["duration_ms"], event["trial"], event["phase_index"]
    ('run/0/screen/break/1500.250', 'break', 4200.0, 0, 0)
    """
    unknown = sorted(str(k) for k in body if k not in SCREEN_FIELDS)
    if unknown:
        raise ValueError(f"unknown field {unknown[0][:40]!r} (fields: {', '.join(SCREEN_FIELDS)})")
    kind = body.get("kind")
    if kind not in SCREEN_KINDS:
        raise ValueError(f"kind: expected one of {', '.join(SCREEN_KINDS)}, got {str(kind)[:40]!r}")
    numbers = {}
    for name, high in (("onset", 1e12), ("duration", 8.64e7)):
        value = body.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
            raise ValueError(f"{name}: expected milliseconds from 0 to {high:g}, got {str(value)[:40]!r}")
        numbers[name] = round(float(value), 3)
    page = body.get("page", 0)
    if isinstance(page, bool) or not isinstance(page, int) or not 0 <= page <= 10**6:
        raise ValueError(f"page: expected a number from 0, got {str(page)[:40]!r}")
    return {"uid": f"{run_uid}/screen/{kind}/{numbers['onset']:.3f}", "owner": experiment_uid, "kind": kind,
            "at": now_ms(), "trial": player.trial, "onset_ms": numbers["onset"], "duration_ms": numbers["duration"],
            "page": page, "phase_index": None if player.done else player.phase_index}


def now_ms() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def trial_records(
    spec: ExperimentSpec, cell: Cell, player: SessionPlayer, step: Step, run: dict[str, Any],
    browser: Mapping[str, Any],
) -> Records:
    """The records of one step: its Trial (with what the browser measured), its Episode so far,
    their edges, and the Run node `run` when its status is completed (the session's last step).

    Made by `run_records`, the function that records agents' runs, from the episode row a sweep
    would make of the episode so far; only the step's own trial is kept.
    """
    phase = player.phases[step.phase_index]
    version = player.versions[phase.task_id(cell.task)]
    row = {
        "experiment": spec.name, "run": cell.index, "task": cell.task, "agent": cell.agent.name,
        "label": cell.agent.label, "params": "{}", "seed": cell.seed, "condition": cell.condition,
        "phase_task": version.task_id, "task_hash": version.content_hash, "phase": phase.name,
        "phase_index": step.phase_index, "episode": step.episode,
        "return": float(sum(s[2] for s in step.episode_steps)), "length": len(step.episode_steps),
        "start_state": step.start_state, "steps": step.episode_steps, "trial_condition": step.condition,
    }
    status = COMPLETED if player.done else RUNNING
    outcome = RunOutcome(cell, status, [row], None, str(run.get("started_at") or ""), now_ms())
    head, body = run_records(spec, outcome)
    nodes, edges = body
    out_nodes: list[tuple[str, list[dict[str, Any]]]] = []
    for label, rows in nodes:
        if label == "Trial":
            rows = [{**r, **browser, "p_action": None} for r in rows if r["step"] == step.step]
        if rows:
            out_nodes.append((label, rows))
    out_edges = []
    for rel, a, b, rows in edges:
        if rel == "HAS_TRIAL":
            rows = [r for r in rows if r["t"] == f"{r['s']}/{step.step}"]
        elif rel in ("HAS_EPISODE", "IN_PHASE") and step.step != 0:
            rows = []
        if rows:
            out_edges.append((rel, a, b, rows))
    if run.get("status") == COMPLETED:
        out_nodes.append(("Run", [run]))
    return out_nodes, out_edges
