"""Exported tables are tidy: each agent setting is a typed column of its own (`param_<name>`),
not a JSON string, and the CSV and parquet exports of one experiment read back with pandas'
defaults to the same columns, dtypes and values."""

from __future__ import annotations

from pathlib import Path

import pandas
import pytest

from graphtasks.cli import main
from graphtasks.experiments.export import ExportError, tidy_table

SPEC = """
[experiment]
name = "tidy"
tasks = ["rewardgym/two-step"]
seeds = 2
record = "steps"

[[agents]]
name = "q"
params = { beta = 2 }
grid = { lr = [0.1, 0.5] }

[[agents]]
name = "random"

[[phases]]
name = "learning"
episodes = 3
"""

CONDITIONS = """
[[conditions]]
name = "control"

[[conditions]]
name = "longer"
[conditions.phases.learning]
episodes = 4
"""


@pytest.fixture(scope="module", params=["plain", "conditions"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, str]:
    folder = tmp_path_factory.mktemp(request.param)
    spec = folder / "tidy.toml"
    spec.write_text(SPEC + (CONDITIONS if request.param == "conditions" else ""), encoding="utf-8")
    path = str(folder / "store.lbug")
    assert main(["--store", path, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    return path, folder, request.param


@pytest.mark.parametrize("trials", [False, True])
@pytest.mark.slow
def test_csv_and_parquet_read_back_alike_with_a_column_per_setting(store, trials: bool) -> None:
    path, folder, kind = store
    name = f"{'trials' if trials else 'episodes'}"
    extra = ["--trials"] if trials else []
    assert main(["--store", path, "experiment", "export", "tidy", *extra, "-o", str(folder / f"{name}.csv")]) == 0
    assert main(["--store", path, "experiment", "export", "tidy", *extra, "--format", "parquet",
                 "-o", str(folder / f"{name}.parquet")]) == 0
    from_csv = pandas.read_csv(folder / f"{name}.csv")
    from_parquet = pandas.read_parquet(folder / f"{name}.parquet")
    assert list(from_csv.columns) == list(from_parquet.columns)
    assert from_csv.dtypes.to_dict() == from_parquet.dtypes.to_dict()
    pandas.testing.assert_frame_equal(from_csv, from_parquet)
    assert "params" not in from_csv.columns
    settings = [c for c in from_csv.columns if c.startswith("param_")]
    assert settings == ["param_beta", "param_lr"]
    assert from_csv.columns.get_loc("param_beta") == from_csv.columns.get_loc("label") + 1  # where params was
    assert from_csv["param_lr"].dtype == "float64" and from_csv["param_beta"].dtype == "float64"  # random: empty
    q = from_csv[from_csv["agent"] == "q"]
    assert sorted(set(q["param_lr"])) == [0.1, 0.5] and set(q["param_beta"]) == {2.0}
    assert from_csv.loc[from_csv["agent"] == "random", ["param_lr", "param_beta"]].isna().all().all()
    conditions = {"plain": {"none"}, "conditions": {"control", "longer"}}[kind]
    assert set(from_csv["condition"]) == conditions and from_csv["condition"].dtype == from_parquet["condition"].dtype
    if trials:
        assert set(from_csv["trial_type"]) == {"none"}  # two-step has no trial schedule


def test_settings_keep_their_type_and_bad_settings_are_refused() -> None:
    rows = [{"run": 0, "params": {"on": True, "n": 3, "x": 1, "name": "a", "grid": [1, 2]}},
            {"run": 1, "params": '{"on": false, "n": 4, "x": 0.5, "name": "b", "grid": [3]}'}]
    tidy, columns, types = tidy_table(rows, ("run", "params"))
    assert columns == ("run", "param_grid", "param_n", "param_name", "param_on", "param_x")
    assert types == {"run": "int", "param_grid": "str", "param_n": "int", "param_name": "str", "param_on": "bool",
                     "param_x": "float"}
    assert tidy[0] == {"run": 0, "param_grid": "[1, 2]", "param_n": 3, "param_name": "a", "param_on": True,
                       "param_x": 1.0}
    with pytest.raises(ExportError, match=r"^params: expected a JSON object of agent settings, got '\[1\]'"):
        tidy_table([{"run": 0, "params": "[1]"}], ("run", "params"))
