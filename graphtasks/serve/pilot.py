"""Pilot mode: simulated participants play a study through the server, over HTTP, as the pages do.

Each pilot participant is an agent of the study's spec (its first `[[agents]]` entry unless
named) that starts a session, consents, and posts one choice per screen with a response time
drawn from a seeded log-normal distribution, learning from the rewards the server sends back.
An agent that declares a response model (``response = "ddm"`` or ``"lba"`` in its `[[agents]]`
table) chooses and times each choice through it instead, as its experiment runs do
(`graphtasks.responses`, pilot i drawing from the response stream of seed ``seed + i``).

The two response times of a pilot's trial are different things. `rt` is the drawn one, posted
as a browser posts what it measured. `server_rt` is what the server measured: from the
answer that carried the screen leaving the server to the choice arriving. By default a pilot
posts at once, so its `server_rt` is only the pilot's HTTP round trip and decision (a few
milliseconds), shorter than its `rt`; with `wait=True` (`serve --pilot-wait`) it waits out each
drawn time before posting, and `server_rt` holds `rt` as it holds a person's (a person's also
holds the feedback and the fixation cross, which a pilot does not wait for).
Its sessions are recorded as people's are, their Participant's `source` saying `pilot: AGENT`,
so a study can be checked end to end (records, dashboard, `graphtasks fit`) before people see it.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from typing import Any

import numpy as np

from graphtasks.experiments.runs import Cell, timed_agent
from graphtasks.experiments.spec import AgentSpec
from graphtasks.experiments.versions import prepare_versions
from gym_bridge.agents import agent_for_env

from .engine import SessionPlayer
from .study import Study


class PilotError(RuntimeError):
    """The server refused what a pilot participant posted."""


def _call(url: str, body: Any = None, token: str | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise PilotError(f"{url}: {exc.code} {exc.read().decode(errors='replace')[:200]}") from None


def run_pilot(
    url: str, study: Study, participants: int, researcher_token: str, agent: str | None = None, seed: int = 0,
    rt_ms: float = 600.0, wait: bool = False,
) -> list[dict[str, Any]]:
    """Play `participants` pilot sessions one after another through the server at `url`.

    Parameters
    ----------
    url : str
        The server, e.g. ``http://127.0.0.1:8000``.
    study : Study
        The study it serves (for the agents and the phases).
    participants : int
        How many pilot sessions.
    researcher_token : str
        The server's researcher token (only researchers start pilot sessions).
    agent : str, optional
        The label of one of the spec's agents (default: the first).
    seed : int, optional
        Seeds the agents (pilot i is seeded ``seed + i``) and their response times.
    rt_ms : float, optional
        The median simulated response time (an agent with a response model draws its own).
    wait : bool, optional
        Wait out each drawn response time before posting the choice (the server's `server_rt`
        then holds it); by default the choice is posted at once.

    Returns
    -------
    list of dict
        Per pilot session: its run index, trials and total reward.

    Examples
    --------
    >>> from graphtasks.serve.pilot import run_pilot
    >>> run_pilot("http://127.0.0.1:8000", study, 2, token, wait=True)  # doctest: +SKIP
    [{'run': 0, 'trials': 40, 'reward': 11.0}, {'run': 1, 'trials': 40, 'reward': 9.0}]
    """
    spec = study.spec
    chosen = next((a for a in spec.agents if agent in (None, a.label, a.name)), None)
    if chosen is None:
        raise PilotError(f"--pilot-agent: {agent!r} is not one of the spec's agents "
                         f"({', '.join(a.label for a in spec.agents)})")
    learn = {p.name: p.learn for c in spec.condition_names() for p in spec.phases_of(c)}
    versions = prepare_versions(spec)
    rng = np.random.default_rng(seed)
    out = []
    for i in range(participants):
        started = _call(f"{url}/api/start", {"params": {}, "pilot": chosen.label}, researcher_token)
        token = started["token"]
        api = f"{url}/api/s/{token}"
        view = _call(api)
        if not view["consented"]:
            _call(api + "/consent", {"agree": True})
        if not view["checked"]:  # a pilot knows the answers
            _call(api + "/checks", {"answers": [right for _, _, right in study.checks]})
        probe = SessionPlayer(spec, versions, Cell(0, spec.tasks[0], AgentSpec("pilot", "pilot", {}), 0))
        actor = agent_for_env(chosen.name, probe.env, probe.view, seed + i, **chosen.params)
        if chosen.response:  # its response model chooses and times each choice
            actor = timed_agent(actor, chosen.response, seed + i)
        view = _call(api)
        position, attended = view["position"], int(view["attention"]["done"])
        shown = time.monotonic()  # when the screen's data arrived
        actor.begin_episode()
        trials, total, run = 0, 0.0, None
        while not position["done"]:
            while attended < len(study.attention_checks) and study.attention_checks[attended][0] <= position["trial"]:
                _call(api + "/attention", {"check": attended, "answer": study.attention_checks[attended][3]})
                attended += 1  # a pilot reads the instructed answer
            state, available = position["state"], position["available"]
            action = int(actor.act(state, available))
            rt = actor.take_times()[-1] * 1000 if chosen.response else float(rng.lognormal(math.log(rt_ms), 0.35))
            if wait:
                time.sleep(max(0.0, rt / 1000 - (time.monotonic() - shown)))
            answer = _call(api + "/trial", {"index": position["trial"], "action": action, "rt": round(rt, 1),
                                            "key": "pilot"})
            shown = time.monotonic()
            nxt = answer["position"]
            if learn.get(position["phase"], True):
                actor.learn(state, action, answer["reward"], answer["state"], answer["terminated"],
                            nxt.get("available", available))
            if answer["terminated"]:
                actor.begin_episode()
            trials, total = trials + 1, total + answer["reward"]
            position = nxt
        run = started.get("run")
        out.append({"run": run, "trials": trials, "reward": total})
    return out
