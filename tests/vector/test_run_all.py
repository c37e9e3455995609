"""The benchmark suite runs end to end (tiny budgets: this checks the script, never the speed)."""

from __future__ import annotations

import json

import pytest

from graphtasks.cli import main


@pytest.mark.slow  # a benchmark smoke test
def test_graphtasks_bench_writes_one_row_per_case_with_every_size(tmp_path, capsys):
    out = tmp_path / "bench.json"
    args = ["bench", "--families", "graph,poge", "--sizes", "1,3", "--budget", "0.01", "--repeats", "1"]
    args += ["--output", str(out), "--bolt", "none"]  # the Bolt column: tests/stores/test_bench_on_bolt.py
    assert main(args) == 0
    printed = capsys.readouterr().out
    payload = json.loads(out.read_text())
    rows = payload["rows"]
    assert {r["family"] for r in rows} == {"graph", "poge"}
    assert "neuronav/graph/neighborhood index" in printed and "x ref" in printed
    for row in rows:
        assert "error" not in row, row
        assert row["single"] > 0 and set(row["vector"]) == {"1", "3"} and row["compile_ms"]["embedded"] > 0
        assert row["peak_mib_single"] > 0 and row["peak_mib_vector_n"] == 3
    assert payload["sizes"] == [1, 3] and payload["max_rss_mib"] > 0
    # the saved run renders again without measuring, in Markdown for the README
    assert main(["bench", "--from-json", str(out), "--markdown"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert table[0].startswith("| family | case | reference | single | x ref | N=1 | N=3 |")
    assert len(table) == 2 + len(rows) and "| graph | neuronav/graph/neighborhood index |" in table[2]
    (tmp_path / "broken.json").write_text("{}")
    assert main(["bench", "--from-json", str(tmp_path / "broken.json")]) == 2
    assert "broken.json: not a run_all result" in capsys.readouterr().err


def test_bench_rejects_unknown_families_and_sizes(capsys):
    assert main(["bench", "--families", "graph,chess", "--output", ""]) == 2
    assert "unknown chess" in capsys.readouterr().err
    assert main(["bench", "--sizes", "0", "--output", ""]) == 2
    assert "--sizes" in capsys.readouterr().err
    assert main(["bench", "--bolt", "localhost:7687", "--output", ""]) == 2
    assert "--bolt: expected a bolt:// or neo4j:// URI" in capsys.readouterr().err


def test_a_family_not_installed_is_a_note_not_a_failure(monkeypatch):
    import importlib

    from benchmarks import run_all

    def missing_family(suite):  # what a family whose module is absent does: a real failed import
        importlib.import_module("gym_bridge.no_such_family_env")

    monkeypatch.setitem(run_all.FAMILIES, "absent", missing_family)
    payload = run_all.run(["absent"], (1,), 0.01, 1, False, None, log=lambda *_: None, bolt="none")
    assert payload["rows"] == [] and payload["notes"][0].startswith("absent: not installed")


def test_bench_without_the_suite_says_why_whatever_was_typed(monkeypatch, capsys):
    import sys

    for name in ("benchmarks", "benchmarks.run_all"):  # not importable, as in a copy installed without it
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["bench", "--quick", "--sizes", "1"]) == 2
    assert "the benchmark suite (package `benchmarks`) is not installed" in capsys.readouterr().err
