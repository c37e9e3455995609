"""Tasks written by hand in the database (as in Neo4j Browser) or in Turtle: checked, explained, then run."""

from __future__ import annotations

from graphstore import rdf as R
from gym_bridge import GraphTaskEnv

from .cli_helpers import run_cli
from .conftest import wipe

BROKEN = """
CREATE (t:Task {uid: 'mine/bandit', task: 'mine/bandit', family: 'user', name: 'bandit', reward_on: 'arrival'})
CREATE (a:State {uid: 'mine/bandit/choice', task: 'mine/bandit', index: 0, name: 'choice'})
CREATE (w:State {uid: 'mine/bandit/win', task: 'mine/bandit', index: 1, name: 'win'})
CREATE (l:State {uid: 'mine/bandit/lose', task: 'mine/bandit', index: 2, name: 'lose'})
CREATE (x:State {uid: 'elsewhere/x', task: 'elsewhere', index: 0})
CREATE (r:Reward {uid: 'mine/bandit/r', task: 'mine/bandit', kind: 'fixed', values: [1.0]})
CREATE (a)-[:MOVE {action: 0, p: 0.5}]->(w)
CREATE (a)-[:MOVE {action: 0, p: 0.3}]->(l)
CREATE (a)-[:MOVE {action: 1, p: 1.0}]->(x)
CREATE (w)-[:HAS_REWARD]->(r)
"""

FIX = """
MATCH (t:Task {uid: 'mine/bandit'}), (a:State {uid: 'mine/bandit/choice'}), (l:State {uid: 'mine/bandit/lose'})
CREATE (t)-[:START]->(a)
WITH a, l
MATCH (a)-[m:MOVE {action: 0}]->(l) SET m.p = 0.5
WITH a, l
MATCH (a)-[m:MOVE {action: 1}]->(x:State {uid: 'elsewhere/x'}) DELETE m
WITH a, l
CREATE (a)-[:MOVE {action: 1, p: 1.0}]->(l)
"""


def author(store, text: str) -> None:
    """Write with the raw driver, the way a person would in Neo4j Browser."""
    with store._driver.session(database=store.database) as session:
        session.run(text).consume()


def test_hand_written_task_is_explained_then_runs(bolt_store, capsys, monkeypatch):
    bolt_server_uri = bolt_store.uri
    author(bolt_store, BROKEN)
    monkeypatch.setenv("GRAPHTASKS_NEO4J_USER", bolt_store.user)
    monkeypatch.setenv("GRAPHTASKS_NEO4J_PASSWORD", bolt_store._password)
    if bolt_store.database:
        monkeypatch.setenv("GRAPHTASKS_NEO4J_DATABASE", bolt_store.database)
    code, out, _ = run_cli(["--store", bolt_server_uri, "tasks", "check", "mine/bandit"], capsys)
    assert code == 1
    assert "unknown State 'elsewhere/x'" in out  # edge to a state outside the task

    with bolt_store._driver.session(database=bolt_store.database) as session:
        session.run("MATCH (:State {uid: 'mine/bandit/choice'})-[m:MOVE {action: 1}]->() DELETE m").consume()
    code, out, _ = run_cli(["--store", bolt_server_uri, "tasks", "check", "mine/bandit"], capsys)
    assert code == 1
    assert "no start state" in out
    assert "state 'choice', action 0: MOVE probabilities sum to 0.8, not 1" in out

    author(bolt_store, FIX)
    code, out, _ = run_cli(["--store", bolt_server_uri, "tasks", "check", "mine/bandit"], capsys)
    assert code == 0, out
    env = GraphTaskEnv("mine/bandit", store=bolt_store)
    env.reset(seed=0)
    rewards = {env.reset(seed=s)[0] is not None and env.step(0)[1] for s in range(30)}
    assert rewards == {0.0, 1.0}
    wipe(bolt_store)


def test_turtle_authored_task_is_explained():
    text = """
@prefix gt: <https://graphtasks.dev/ns#> .
<urn:t> a gt:Task ; gt:uid "my/t" ; gt:task "my/t" ; gt:family "user" ; gt:name "t" .
<urn:a> a gt:State ; gt:uid "my/t/a" ; gt:task "my/t" ; gt:index 0 .
<urn:b> a gt:State ; gt:uid "my/t/b" ; gt:task "my/t" ; gt:index 2 .
<urn:e> a gt:Edge ; gt:relationship gt:MOVE ; gt:from <urn:a> ; gt:to <urn:b> ; gt:action 0 ; gt:p 0.9 .
"""
    from graphstore.validate import explain

    (graph,) = R.from_rdf(R.parse(text))
    problems = explain(graph)
    assert any("no start state" in p for p in problems)
    assert any("sum to 0.9" in p for p in problems)
    assert any("indices must be 0..1" in p for p in problems)
