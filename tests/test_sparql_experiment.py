"""`graphtasks sparql --experiment NAME`: the RDF view of one experiment's records only."""

from __future__ import annotations

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.fitting import simulate
from graphtasks.fitting.behaviour import events_text
from graphtasks.fitting.records import import_behaviour

RUNS = "SELECT ?label WHERE { ?x a mls:Experiment ; mls:hasPart ?run . ?run gt:label ?label } ORDER BY ?label"


def test_sparql_over_one_experiment(tmp_path, capsys) -> None:
    store = tmp_path / "store"
    with open_store(store) as opened:
        for name in ("one", "two"):
            path = tmp_path / f"sub-{name}_task-twostep_events.tsv"
            path.write_text(events_text(simulate("rewardgym/two-step", "q", {"beta": 3.0}, 5, seed=0), name))
            import_behaviour(opened, name, [path])
    assert main(["--store", str(store), "sparql", RUNS, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["label", "one", "two"]
    assert main(["--store", str(store), "sparql", RUNS, "--experiment", "two", "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["label", "two"]
    tasks = "SELECT (COUNT(?t) AS ?n) WHERE { ?t a gt:Task }"
    assert main(["--store", str(store), "sparql", tasks, "--experiment", "two", "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["n", "0"]  # no tasks unless --task names them
    assert main(["--store", str(store), "sparql", tasks, "--experiment", "two", "--task", "rewardgym/two-step",
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["n", "1"]
    assert main(["--store", str(store), "sparql", RUNS, "--experiment", "three"]) == 2
    assert "no recorded experiment 'three'; recorded: one, two" in capsys.readouterr().err
