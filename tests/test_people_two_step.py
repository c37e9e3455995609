"""People's two-step sessions from a trial table (graphtasks.experiments.people_two_step): the
packaged people (Feher da Silva & Hare 2020) recorded as people's sessions of rewardgym/two-step,
read back from the store by the stay analysis and drawn beside agents."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from graphstore import open_store
from graphtasks.experiments.api import run_and_record
from graphtasks.experiments.people_two_step import (
    PeopleDataError,
    import_two_step_people,
    packaged_table,
    read_two_step_people,
)
from graphtasks.experiments.spec import parse_spec
from graphtasks.serve.compare import ORDER, stay_figure, stay_table

PEOPLE, TRIALS = 10, 100  # a small table: the first 100 rows of the first 10 participants
NAME = "people two-step"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first TRIALS rows of the first PEOPLE participants of the packaged table, as a file."""
    rows: list[list[str]] = []
    seen: dict[str, int] = defaultdict(int)
    with open(packaged_table(), encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        for row in reader:
            if row[0] not in seen and len(seen) == PEOPLE:
                break
            seen[row[0]] += 1
            if seen[row[0]] <= TRIALS:
                rows.append(row)
    path = tmp_path_factory.mktemp("people") / "small.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([header, *rows])
    return path


def direct_stay(path: Path) -> dict[str, list[float]]:
    """Each participant's stay probabilities straight from the table: answered trials in order,
    the first choice repeated on the next answered trial, by the trial's reward and transition."""
    answered: dict[str, list[dict[str, str]]] = defaultdict(list)
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            if row["slow"] == "0":
                answered[row["participant"]].append(row)
    out: dict[str, list[float]] = defaultdict(list)
    for trials in answered.values():
        stays: dict[str, list[bool]] = defaultdict(list)
        for before, after in zip(trials, trials[1:]):
            kind = ("rewarded" if before["reward"] == "1" else "unrewarded") + (
                "_common" if before["common"] == "1" else "_rare")
            stays[kind].append(after["choice1"] == before["choice1"])
        for kind, values in stays.items():
            out[kind].append(sum(values) / len(values))
    return out


def answered_rows(path: Path) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            counts[row["participant"]] += row["slow"] == "0"
    return dict(counts)


def test_the_packaged_table_holds_24_people_of_201_answered_trials() -> None:
    people = read_two_step_people(packaged_table())
    assert len(people) == 24
    assert {len(t) for t in people.values()} == {201}
    assert (packaged_table().parent / "LICENSE.txt").read_text(encoding="utf-8").startswith(
        "                    GNU GENERAL PUBLIC LICENSE")
    assert "carolfs/muddled_models" in (packaged_table().parent / "ATTRIBUTION.md").read_text(encoding="utf-8")


def test_the_import_records_each_participant_and_answered_trial(table: Path) -> None:
    expected = answered_rows(table)
    assert len(expected) == PEOPLE and sum(expected.values()) < PEOPLE * TRIALS  # some slow trials are left out
    with open_store(":memory:") as store:
        rows = import_two_step_people(store, table, NAME)
        assert [(r["participant"], r["trials"], r["status"]) for r in rows] == [
            (who, n, "imported") for who, n in expected.items()]
        assert sum(r["slow"] for r in rows) == PEOPLE * TRIALS - sum(expected.values())  # said, not silent
        runs = store.cypher("MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.agent = 'participant' "
                            "RETURN p.participant_id, r.index, r.status ORDER BY r.index").rows
        assert [(who, status) for who, _, status in runs] == [(who, "completed") for who in expected]
        episodes = store.cypher("MATCH (e:Episode) WHERE e.experiment = $x RETURN count(e)", {"x": NAME}).rows[0][0]
        trials = store.cypher("MATCH (t:Trial) WHERE t.experiment = $x RETURN count(t), min(t.rt)", {"x": NAME}).rows[0]
        assert episodes == sum(expected.values()) and trials[0] == 2 * episodes and trials[1] > 0
        again = import_two_step_people(store, table, NAME)  # a participant recorded already is left as it is
        assert {r["status"] for r in again} == {"already imported"}
        assert store.cypher("MATCH (e:Episode) WHERE e.experiment = $x RETURN count(e)", {"x": NAME}).rows[0][0] \
            == episodes


def test_stay_probabilities_read_from_the_store_equal_the_tables(table: Path) -> None:
    direct = direct_stay(table)
    with open_store(":memory:") as store:
        import_two_step_people(store, table, NAME)
        stored = stay_table(store, NAME, [])
    assert set(stored) == {("people", after) for after in ORDER}
    for after in ORDER:
        assert stored[("people", after)] == pytest.approx(direct[after])
    means = {after: np.mean(direct[after]) for after in ORDER}
    # these people's crossing of reward and transition (model-based: stay after rewarded common and unrewarded rare)
    assert means["rewarded_common"] > means["rewarded_rare"] and means["unrewarded_rare"] > means["unrewarded_common"]


def bad_copy(table: Path, tmp_path: Path, line: int, column: str, value: str) -> Path:
    with open(table, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    rows[line - 1][rows[0].index(column)] = value
    path = tmp_path / "bad.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return path


@pytest.mark.parametrize(("column", "value", "message"), [
    ("choice1", "3", "bad.csv: line 5: choice1: expected 1 or 2, got 3"),
    ("reward", "yes", "bad.csv: line 5: reward: expected an integer, got 'yes'"),
    ("final_state", "1", "bad.csv: line 5: final_state: 1 after choice1 2 is a rare transition, but common is 1"),
    ("trial", "0", "bad.csv: line 5: trial: 0 does not follow trial 2 of participant 03187"),
])
def test_a_bad_row_is_refused_in_one_line_and_nothing_is_recorded(table: Path, tmp_path: Path, column: str,
                                                                  value: str, message: str) -> None:
    with open(table, encoding="utf-8") as f:
        assert f.read().splitlines()[4].startswith("03187,3,1,2,2,")  # line 5: a common trial after choice 2
    path = bad_copy(table, tmp_path, 5, column, value)
    with open_store(":memory:") as store:
        with pytest.raises(PeopleDataError) as refused:
            import_two_step_people(store, path, NAME)
        assert str(refused.value) == message and "\n" not in str(refused.value)
        assert store.cypher("MATCH (r:Run) RETURN count(r)").rows[0][0] == 0


def test_a_table_without_a_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("participant,trial,choice1\n1,0,1\n", encoding="utf-8")
    with pytest.raises(PeopleDataError, match=r"^few.csv: line 1: missing column\(s\) common, final_state, "):
        read_two_step_people(path)


AGENTS = """[experiment]
name = "agents"
tasks = ["rewardgym/two-step"]
seeds = 2
[[agents]]
name = "hybrid"
label = "model-based"
params = { lr = 0.4, beta = 5.0, w = 1.0 }
[[phases]]
name = "main"
episodes = 40
"""


def test_the_stay_figure_draws_the_people_beside_agents_on_one_axis(table: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHTASKS_STORE", str(tmp_path / "store.lbug"))
    run_and_record(parse_spec(AGENTS), AGENTS, workers=1)
    with open_store(str(tmp_path / "store.lbug"), "w") as store:
        import_two_step_people(store, table, NAME)
    direct = direct_stay(table)
    with open_store(str(tmp_path / "store.lbug"), "r") as store:
        figure, plotted = stay_figure(store, NAME, ["agents"])
    (ax,) = figure.axes
    people = [p for p in ax.patches if p.get_gid() == "bar:people"]
    agents = [p for p in ax.patches if p.get_gid() == "bar:model-based"]
    assert len(people) == len(agents) == 4
    assert [p.get_height() for p in people] == pytest.approx([np.mean(direct[after]) for after in ORDER])
    assert [plotted[("model-based", after)][2] for after in ORDER] == [2] * 4
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"people (n={PEOPLE})" in legend and "model-based (n=2)" in legend
    assert [t.get_text() for t in ax.get_xticklabels()] == [after.replace("_", "\n") for after in ORDER]
    assert ax.get_ylim()[1] == pytest.approx(1.05)
