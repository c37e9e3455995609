"""Behaviour and fits on every store: an imported participant reads back as the same choices,
its fit is the same number on each backend, and the RDF view carries the fit."""

from __future__ import annotations

import numpy as np
from rdflib import Graph, Literal

from graphstore.rdf import GT, shared_to_rdf
from graphtasks.experiments.api import delete_records
from graphtasks.fitting import MODELS, fit, load_run, simulate
from graphtasks.fitting.behaviour import events_text
from graphtasks.fitting.records import fit_runs, import_behaviour, record_fits, recorded_fits


def test_import_fit_and_read_back(store, tmp_path) -> None:
    choices = simulate("rewardgym/two-step", "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, 80, seed=3)
    path = tmp_path / "sub-Z_task-twostep_events.tsv"
    path.write_text(events_text(choices, "Z"))
    import_behaviour(store, "people", [path])
    back = load_run(store, "people", 0)
    for column in ("states", "actions", "rewards", "next_states", "ends"):
        assert np.array_equal(getattr(back, column), getattr(choices, column)), column
    [stored] = fit_runs(store, "people", [0], MODELS["q"], starts=2)
    assert stored.params == fit(MODELS["q"], choices, starts=2).params  # the store changes nothing
    record_fits(store, "people", [stored])
    [row] = recorded_fits(store, "people")
    assert row["label"] == "Z" and row["params"] == stored.params and row["choices"] == 160
    assert row["stderr"] == stored.stderr and all(v > 0 for v in row["stderr"].values())
    rdf = shared_to_rdf(store, Graph())
    fits = list(rdf.subjects(predicate=None, object=GT["Fit"]))
    assert len(fits) == 1 and (fits[0], GT["starts"], Literal(2)) in rdf
    assert delete_records(store, "people")["Fit"] == 1


def test_rdf_view_of_one_experiments_records(store, tmp_path) -> None:
    """`owners` puts only the named experiments' records in the RDF view, with their edges."""
    from graphstore.rdf import store_to_rdf

    for name, seed in (("one", 1), ("two", 2)):
        path = tmp_path / f"sub-{name}_task-twostep_events.tsv"
        path.write_text(events_text(simulate("rewardgym/two-step", "q", {"beta": 3.0}, 10, seed=seed), name))
        import_behaviour(store, name, [path])
    view = store_to_rdf(store, [], owners=["experiment/one"])
    runs = set(view.subjects(predicate=None, object=GT["Run"]))
    trials = set(view.subjects(predicate=None, object=GT["Trial"]))
    assert len(runs) == 1 and len(trials) == 20 and not list(view.subjects(predicate=None, object=GT["Task"]))
    assert len(list(view.triples((None, GT["HAS_TRIAL"], None)))) == 20
    everything = store_to_rdf(store, [], shared=True)
    assert len(set(everything.subjects(predicate=None, object=GT["Run"]))) == 2
