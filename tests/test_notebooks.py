"""The notebooks in notebooks/ run from top to bottom in a fresh Jupyter kernel (nbclient) and
show what they say: the families and their tasks, a study's runs, stay table, figure and
provenance, fits that recover the simulated settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")  # the test extra installs nbclient, nbformat and ipykernel
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def run(name: str) -> tuple[str, list[str]]:
    """Execute a notebook; its printed text and the MIME types of its rich outputs."""
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbclient.NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
    text, rich = [], []
    for cell in book.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            assert output["output_type"] != "error", output
            if output["output_type"] == "stream" and output["name"] == "stdout":
                text.append(output["text"])
            rich.extend(output.get("data", {}))
    return "".join(text), rich


def test_the_notebooks_are_the_three_shipped() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == [
        "01-tour-of-the-task-families.ipynb", "02-study-from-spec-to-figure.ipynb", "03-fitting.ipynb"
    ]
    for path in NOTEBOOKS.glob("*.ipynb"):  # shipped clean: outputs come from running them
        book = nbformat.read(path, as_version=4)
        nbformat.validate(book)
        assert all(not cell.get("outputs") for cell in book.cells if cell.cell_type == "code"), path.name


@pytest.mark.slow  # a whole notebook
def test_tour_of_the_task_families() -> None:
    text, rich = run("01-tour-of-the-task-families.ipynb")
    import tasks

    assert f"total {len(tasks.builtin_ids())}" in text and re.search(r"room\s+2 tasks", text)  # every built-in
    assert "after the first choice 2 0.0 False" in text
    assert "state 0 --action 0--> state 1  p = 0.7" in text
    assert text.count("conforms") == 6
    assert "image/png" in rich


@pytest.mark.slow  # a whole notebook
def test_study_from_spec_to_figure() -> None:
    text, rich = run("02-study-from-spec-to-figure.ipynb")
    assert "8 runs" in text and "ran 8 skipped 0 failed 0" in text and "a second run has nothing to do: 0" in text
    assert "1200 episodes" in text
    stays = dict(re.findall(r"hybrid w=1\.0\s+(\w+)\s+([\d.]+)", text))
    assert set(stays) == {"rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare"}
    assert float(stays["rewarded_common"]) > float(stays["rewarded_rare"])  # the model-based signature
    assert "rewardgym/two-step 8" in text and "image/png" in rich


@pytest.mark.slow  # a whole notebook
def test_fitting_recovers_the_simulated_settings() -> None:
    text, rich = run("03-fitting.ipynb")
    fitted = float(re.search(r"lr\s+true 0\.5\s+fitted ([\d.]+)", text).group(1))
    assert abs(fitted - 0.5) < 0.15
    assert float(re.search(r"correlation ([-\d.]+)", text).group(1)) > 0.8
    assert "image/png" in rich
