"""Text participants (graphtasks.experiments.text_participants): a scripted participant on a
chat-completions server on 127.0.0.1 plays a two-step study and a grid through the run protocol,
recorded as people's runs are; refusals are asked again, then end the run failed."""

from __future__ import annotations

import json
import math
import random
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from graphstore import open_store
from graphtasks.experiments.records import recorded_episodes
from graphtasks.experiments.runs import Cell
from graphtasks.experiments.spec import AgentSpec, single_run_spec
from graphtasks.experiments.text_participants import (
    ChatEndpoint,
    ParticipantUnavailable,
    run_text_participant,
)
from graphtasks.experiments.versions import prepare_versions
from graphtasks.serve.engine import SessionPlayer

OPTION = re.compile(r"^  ([A-Z]{1,2})(?::|$)", re.M)


def first_alphabetically(prompt: str) -> str:
    """The scripted rule: the option named first in the alphabet, of the last question asked."""
    names = OPTION.findall(prompt.split("?")[-2] + "?" + prompt.split("?")[-1]) or OPTION.findall(prompt)
    return f"I choose <<{min(names)}>>."


class Scripted(BaseHTTPRequestHandler):
    """A chat-completions server answering by a fixed rule; `refuse` answers are given first."""

    refuse = 0
    seen: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        if type(self).refuse:
            type(self).refuse -= 1
            content = "I would rather not choose."
        else:
            asked = [m["content"] for m in body["messages"] if m["role"] == "user" and OPTION.search(m["content"])]
            content = first_alphabetically(asked[-1])  # after a refusal: the last prompt with options
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    Scripted.refuse, Scripted.seen = 0, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_a_scripted_participant_plays_a_two_step_study_as_people_are_recorded(server, tmp_path):
    endpoint = ChatEndpoint(server, "scripted", timeout=10)
    with open_store(tmp_path / "s.lbug") as store:
        runs = run_text_participant(store, endpoint, "rewardgym/two-step", "scripted", seeds=(0, 1), episodes=10,
                                    name="two-step text")
        assert [r.status for r in runs] == ["completed", "completed"]
        rows = store.cypher("MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) "
                            "WHERE r.owner = $uid RETURN r.index, r.agent, r.label, r.status, e.index, t.step, "
                            "t.action, t.prompt, t.answer, t.tries, t.rt ORDER BY r.index, e.index, t.step",
                            {"uid": store.cypher("MATCH (x:Experiment) WHERE x.name = 'two-step text' "
                                                 "RETURN x.uid").rows[0][0]}).rows
        assert len(rows) == 2 * 10 * 2 and len(recorded_episodes(store, "two-step text")) == 20
    assert {tuple(r[1:4]) for r in rows} == {("text", "scripted", "completed")}
    for row in rows:
        prompt, answer = row[7], row[8]
        assert answer == first_alphabetically(prompt) and row[9] == 1 and row[10] >= 0
    assert len(Scripted.seen) == 40 and Scripted.seen[0]["model"] == "scripted"
    # the same run, replayed by the study server's player with the recorded actions, is the same run
    spec = single_run_spec("rewardgym/two-step", "random", seed=1, episodes=10)
    player = SessionPlayer(spec, prepare_versions(spec), Cell(1, "rewardgym/two-step", AgentSpec("text", "s", {}), 1))
    episodes = [e for e in runs[1].outcome.rows]
    for episode in episodes:
        for state, action, reward, next_state, _ in episode["steps"]:
            assert player.state == state
            step = player.act(action)
            assert (step.reward, step.next_state) == (reward, next_state)
    assert player.done
    # option names are the participant's own: the two runs name the first stage's options differently
    assert runs[0].trials[0].prompt != runs[1].trials[0].prompt


def test_a_scripted_participant_plays_a_grid(server, tmp_path):
    with open_store(tmp_path / "s.lbug") as store:
        runs = run_text_participant(store, ChatEndpoint(server, "scripted"), "neuronav/grid/four_rooms/micro",
                                    "scripted", episodes=1, max_steps=6, name="grid text")
        n = store.cypher("MATCH (t:Trial) WHERE t.experiment = 'grid text' AND t.prompt IS NOT NULL "
                         "RETURN count(t)").rows[0][0]
    assert runs[0].status == "completed" and n == len(runs[0].trials) == 6
    assert "row" in runs[0].trials[0].prompt and "go north" in runs[0].trials[0].prompt


def test_a_refusal_is_asked_again_and_three_end_the_run_failed(server, tmp_path):
    Scripted.refuse = 1
    with open_store(tmp_path / "s.lbug") as store:
        runs = run_text_participant(store, ChatEndpoint(server, "scripted"), "rewardgym/two-step", "scripted",
                                    episodes=2, name="once")
        assert runs[0].status == "completed" and runs[0].trials[0].tries == 2
        Scripted.refuse = 3  # every try of the first trial refused
        failed = run_text_participant(store, ChatEndpoint(server, "scripted"), "rewardgym/two-step", "scripted",
                                      episodes=2, name="refused")
        status = store.cypher("MATCH (r:Run) WHERE r.label = 'scripted' AND r.status = 'failed' "
                              "RETURN r.error").rows
    assert failed[0].status == "failed" and failed[0].trials == []
    assert status == [[failed[0].error]]
    assert failed[0].error.startswith("no valid answer at phase 0, episode 0, step 0 in 3 tries: no option name")


def test_an_endpoint_that_cannot_be_reached_fails_in_one_line():
    endpoint = ChatEndpoint("http://127.0.0.1:9/v1", "none", timeout=1, retries=1, backoff=0.01)
    with pytest.raises(ParticipantUnavailable, match=r"after 2 attempts"):
        endpoint([{"role": "user", "content": "hello"}])


def test_the_command_line_records_a_language_model_run(server, tmp_path, capsys):
    from graphtasks.cli import main

    store = str(tmp_path / "cli.lbug")
    assert main(["--store", store, "participants", "text", "--task", "rewardgym/two-step", "--url", server,
                 "--model", "scripted", "--trials", "5", "--seeds", "3", "4"]) == 0
    out = capsys.readouterr().out
    assert "run 0 (seed 3): completed, 10 trials" in out and "run 1 (seed 4): completed, 10 trials" in out
    assert "recorded as experiment 'text scripted rewardgym/two-step'" in out
    assert main(["--store", store, "participants", "text", "--task", "rewardgym/two-step", "--url", "ftp://x",
                 "--model", "m"]) == 2
    assert "--url: expected an http:// or https:// URL" in capsys.readouterr().err


def win_stay_lose_shift(messages):
    """Stay with the last first-stage choice after a reward, switch after none; second stage: first name."""
    prompt = messages[-1]["content"]
    names = OPTION.findall(prompt)
    if "first stage" not in prompt:
        return f"<<{min(names)}>>"
    firsts = [i for i, m in enumerate(messages[:-1]) if m["role"] == "user" and "first stage" in m["content"]]
    if not firsts:
        return f"<<{min(names)}>>"
    last = re.search(r"<<(\w+)>>", messages[firsts[-1] + 1]["content"]).group(1)
    won = re.match(r"You get (-?[\d.]+) points?\.", prompt)
    stay = won is not None and float(won.group(1)) > 0
    return f"<<{last if stay else next(n for n in names if n != last)}>>"


def test_a_text_participants_records_feed_the_stay_analysis_of_people_and_agents(tmp_path):
    from graphtasks.serve.compare import plot_stay, stay_table

    with open_store(tmp_path / "s.lbug") as store:
        run_text_participant(store, win_stay_lose_shift, "rewardgym/two-step", "wsls", seeds=(0, 1, 2),
                             episodes=40, name="wsls")
        table = stay_table(store, "wsls", [])
        out = str(tmp_path / "stay.png")
        plotted = plot_stay(store, "wsls", [], out)
    assert set(table) == {("wsls", after) for after in ("rewarded_common", "rewarded_rare", "unrewarded_common",
                                                          "unrewarded_rare")}
    for (group, after), stays in table.items():
        assert len(stays) == 3 and all(s == (1.0 if after.startswith("rewarded") else 0.0) for s in stays), after
    assert plotted[("wsls", "rewarded_common")][0] == 1.0 and plotted[("wsls", "unrewarded_rare")][0] == 0.0


STAGE = re.compile(r"You see (.+)\.$", re.M)


class ScriptedQ:
    """A known rule read from the text: Q-learning (max bootstrap, gamma 1) with a softmax of
    inverse temperature `beta`; a new learner at each run's first prompt."""

    def __init__(self, lr, beta, seed):
        self.lr, self.beta, self.rng = lr, beta, random.Random(seed)
        self.q, self.last = {}, None

    def __call__(self, messages):
        if len(messages) == 2:  # the instructions and the first prompt: a new run
            self.q, self.last = {}, None
        prompt = messages[-1]["content"]
        names, state = OPTION.findall(prompt), STAGE.findall(prompt)[-1]
        won = re.match(r"You get (-?[\d.]+) points?\.", prompt)
        row = self.q.setdefault(state, [0.0] * len(names))
        if self.last is not None:
            s, a = self.last
            future = 0.0 if state == "first stage" else max(row)
            self.q[s][a] += self.lr * ((float(won.group(1)) if won else 0.0) + future - self.q[s][a])
        weights = [math.exp(self.beta * (v - max(row))) for v in row]
        a = self.rng.choices(range(len(names)), weights)[0]
        self.last = (state, a)
        return f"<<{names[a]}>>"


@pytest.mark.slow
def test_graphtasks_fit_recovers_a_scripted_rule_from_its_text_sessions(tmp_path, capsys):
    from graphtasks.cli import main

    location = str(tmp_path / "q.lbug")
    with open_store(location) as store:
        runs = run_text_participant(store, ScriptedQ(0.5, 5.0, 0), "rewardgym/two-step", "q text", seeds=range(4),
                                    episodes=200, name="qtext")
    assert [r.status for r in runs] == ["completed"] * 4
    assert main(["--store", location, "fit", "run", "qtext", "--model", "q", "--no-record", "--format", "json"]) == 0
    fits = json.loads(capsys.readouterr().out)
    lr = sum(f["params"]["lr"] for f in fits) / len(fits)
    beta = sum(f["params"]["beta"] for f in fits) / len(fits)
    assert len(fits) == 4 and abs(lr - 0.5) < 0.1 and abs(beta - 5.0) < 1.0, (lr, beta)
