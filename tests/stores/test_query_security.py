"""Read-only entry points read nothing but the store and send nothing anywhere.

Cypher: an allow-list of read clauses; every trick below (comments, look-alike letters,
WITH/UNWIND prefixes, case, line breaks, backslashes) is refused on the embedded store and
on a Bolt server before it runs. SPARQL: SERVICE and FROM are refused unless allowed; a
real HTTP server on 127.0.0.1 shows that no request leaves.
"""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import tasks
from graphstore import QueryError, open_store
from graphstore import rdf as R
from graphstore.cypher_text import check_read_only
from graphtasks import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "queries.md"
LOAD = "LOAD FROM '{secret}' (file_format='csv', header=false, delim=':') RETURN *"

TRICKS = {
    "with-prefix": "WITH 1 AS x " + LOAD,
    "unwind-prefix": "UNWIND [1] AS x " + LOAD,
    "match-prefix": "MATCH (t:Task) WITH count(t) AS n " + LOAD,
    "bare": LOAD,
    "lower-case": ("with 1 as x " + LOAD).lower().replace("{secret}", "{secret}"),
    "newlines": "WITH\n1\nAS\nx\n" + LOAD.replace(" ", "\n"),
    "carriage-returns": "WITH 1 AS x\r" + LOAD,
    "block-comments": "WITH 1 AS x /* a comment */ LOAD /* another */ FROM '{secret}' RETURN *",
    "line-comment": "WITH 1 AS x // a comment\n" + LOAD,
    "line-comment-cr": "WITH 1 AS x // a comment\r" + LOAD,
    "comment-before": "/* MATCH */ " + LOAD,
    "cyrillic-a": "WITH 1 AS x LO\u0410D FROM '{secret}' RETURN *",
    "fullwidth-L": "WITH 1 AS x \uff2cOAD FROM '{secret}' RETURN *",
    "line-separator": "WITH 1 AS x\u2028" + LOAD,
    "nbsp": "WITH 1 AS x\u00a0" + LOAD,
    "backslash-quote": "RETURN 'a\\' " + LOAD + " //'",
    "keyword-named-variable": "WITH 1 AS count " + LOAD,
    "after-list-element": "WITH 1 AS x, " + LOAD,
    "inside-exists": "MATCH (t:Task) WHERE EXISTS { " + LOAD + " } RETURN t",
    "backticked-variable": "WITH 1 AS `x` " + LOAD,
    "parameter-path": "WITH $p AS x LOAD FROM $path RETURN *",
    "load-csv": "WITH 1 AS x LOAD CSV FROM 'file://{secret}' AS row RETURN row",
    "call-setting": "CALL threads=1",
    "call-setting-after-with": "WITH 1 AS x CALL threads=1 RETURN x",
    "call-project-graph": "MATCH (t:Task) CALL project_graph('g', ['State'], ['MOVE']) RETURN t",
    "call-function": "WITH 1 AS x CALL show_tables() RETURN *",
    "call-procedure": "CALL dbms.components()",
    "call-subquery": "MATCH (t:Task) CALL { MATCH (s) RETURN s } RETURN t",
    "apoc-function": "RETURN apoc.load.json('file://{secret}') AS x",
    "star-create": "WITH * CREATE (n:Task {uid: 'evil'})",
    "copy-to": "WITH 1 AS x COPY (MATCH (t:Task) RETURN t.uid) TO '{secret}.out'",
    "attach": "WITH 1 AS x ATTACH '{secret}' AS d (dbtype duckdb)",
    "install": "RETURN 1 AS x INSTALL json",
    "use": "USE system MATCH (n) RETURN n",
    "two-statements": "RETURN 1; CALL threads=2",
    "foreach": "MATCH (t:Task) FOREACH (x IN [1] | CREATE (m:Task))",
}


@pytest.fixture
def secret(tmp_path) -> str:
    path = tmp_path / "secret.csv"
    path.write_text("root:x:0:0\n")
    return str(path)


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_tricks_are_refused_before_they_run(store, secret, trick):
    store.put(tasks.build("rewardgym/two-armed-bandit"))
    query = TRICKS[trick].replace("{secret}", secret)
    with pytest.raises(QueryError, match=r"read-only quer(y|ies)|single statement") as refused:
        store.cypher(query, {"p": 1, "path": secret})
    assert "root:x" not in str(refused.value)
    assert not Path(secret + ".out").exists()
    assert [t.task_id for t in store.list()] == ["rewardgym/two-armed-bandit"]


@pytest.mark.parametrize("trick", ["with-prefix", "cyrillic-a", "call-setting"])
def test_the_cli_refuses_them_in_one_line(secret, trick, capsys):
    code = cli.main(["cypher", TRICKS[trick].replace("{secret}", secret)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("graphtasks: error: read-only quer")


DOC_QUERIES = re.findall(r"```cypher\n(.*?)```", DOC.read_text(), re.DOTALL)
LEGITIMATE = [
    "MATCH (t:Task) RETURN t.uid AS task ORDER BY task;",
    "MATCH (s:State) WHERE s.task = $task AND s.name IS NOT NULL "
    "RETURN s.uid AS uid, CASE WHEN s.index > 1 THEN 'far' ELSE 'near' END AS where_ ORDER BY uid",
    "MATCH (a:State)-[m:MOVE]->(b:State) WHERE a.task = $task RETURN count(DISTINCT a) AS count ORDER BY count DESC",
    "OPTIONAL MATCH (t:Task) WITH * RETURN count(*) AS n",
    "UNWIND [1, 2] AS x RETURN x * 2 AS y",
    "MATCH (t:Task) WHERE t.uid STARTS WITH 'rewardgym' AND NOT t.uid CONTAINS 'hcp' RETURN t.uid SKIP 0 LIMIT 5",
    "MATCH (t:Task) // the task\nRETURN t.uid /* its id */ AS id",
    "MATCH (s:State) WHERE s.task = 'x; y' OR s.name = 'LOAD FROM x' RETURN s.uid",
    "MATCH (s:State) WHERE s.task = $task AND s.index IN [0, 1] RETURN s.uid AS uid, -s.index AS neg ORDER BY uid",
]


@pytest.mark.parametrize("query", DOC_QUERIES + LEGITIMATE)
def test_legitimate_queries_pass_the_check(query):
    check_read_only(query)


@pytest.mark.parametrize("query", LEGITIMATE)
def test_legitimate_queries_run_on_every_store(store, query):
    store.put(tasks.build("rewardgym/two-step"))
    store.cypher(query, {"task": "rewardgym/two-step"})


# -- SPARQL ------------------------------------------------------------------------------------------
class Recorder(ThreadingHTTPServer):
    """A SPARQL endpoint on 127.0.0.1 that records every request and answers none usefully."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """Quiet: clients that hang up early are part of the tests, and a handler thread still
        running after the test must not print into a later test's captured stderr."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                recorder.requests.append(f"{self.command} {self.path}")
                self.send_response(500)
                self.end_headers()

            do_GET = do_POST = _record

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def endpoint():
    server = Recorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


REMOTE = {
    "service": "SELECT * WHERE {{ SERVICE <{url}/sparql> {{ ?s ?p ?o }} }}",
    "service-silent-lower": "select * where {{ service silent <{url}/s> {{ ?s ?p ?o }} }}",
    "service-escaped": "SELECT * WHERE {{ \\u0053ERVICE <{url}/esc> {{ ?s ?p ?o }} }}",
    "service-after-comment": "SELECT * WHERE {{ ?a ?b ?c # SERVICE\n SERVICE <{url}/c> {{ ?s ?p ?o }} }}",
    "service-in-exists": "ASK {{ FILTER EXISTS {{ SERVICE <{url}/ask> {{ ?s ?p ?o }} }} }}",
    "service-in-optional": "SELECT * WHERE {{ OPTIONAL {{ SERVICE <{url}/o> {{ ?s ?p ?o }} }} }}",
    "from": "SELECT * FROM <{url}/data.ttl> WHERE {{ ?s ?p ?o }}",
    "from-named": "SELECT * FROM NAMED <{url}/named.ttl> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
}


@pytest.mark.parametrize("name", sorted(REMOTE))
def test_sparql_reaching_out_is_refused_and_sends_nothing(endpoint, name):
    rdf = R.to_rdf(tasks.build("rewardgym/two-armed-bandit"))
    with pytest.raises(QueryError, match="reaches outside the local store"):
        R.sparql(rdf, REMOTE[name].format(url=endpoint.url))
    assert endpoint.requests == []


def test_sparql_cli_refuses_service_and_sends_nothing(endpoint, capsys):
    code = cli.main(["sparql", REMOTE["service"].format(url=endpoint.url)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and "--allow-service" in captured.err
    assert endpoint.requests == []


def test_sparql_cli_with_allow_service_does_send(endpoint, capsys):
    """The opt-in works (and shows the endpoint above would have seen a request)."""
    open_store(None, "w").close()  # sparql only reads: the (default) store must exist
    code = cli.main(["sparql", "--allow-service", REMOTE["service"].format(url=endpoint.url)])
    captured = capsys.readouterr()
    assert code == 2 and "SPARQL query failed" in captured.err  # the endpoint answers 500
    assert endpoint.requests and endpoint.requests[0].startswith(("POST /sparql", "GET /sparql"))


def test_sparql_updates_are_refused():
    rdf = R.to_rdf(tasks.build("rewardgym/two-armed-bandit"))
    with pytest.raises(QueryError, match="does not parse"):
        R.sparql(rdf, "LOAD <http://127.0.0.1:9/x.ttl>")
