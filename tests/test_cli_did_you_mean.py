"""A mistyped agent, task or experiment name gets one line naming the closest (difflib)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphtasks.cli import main

SPEC = """
[experiment]
name = "reversal-tiny"
tasks = ["rewardgym/two-step"]
seeds = [1]

[[agents]]
name = "q"

[[phases]]
name = "learning"
episodes = 3
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store with the experiment 'reversal-tiny' recorded and the task rewardgym/two-step."""
    folder = tmp_path_factory.mktemp("did-you-mean")
    spec = folder / "tiny.toml"
    spec.write_text(SPEC, encoding="utf-8")
    location = str(folder / "store.lbug")
    assert main(["--store", location, "experiment", "run", str(spec), "--workers", "1", "--no-progress"]) == 0
    assert main(["--store", location, "tasks", "load", "rewardgym/two-step"]) == 0
    return location


def last_error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines, "no error line"
    assert not any(line.startswith("Traceback") for line in lines)
    return lines[-1]


@pytest.mark.parametrize(
    "typed, near",
    [("qlearnig", "'q'"), ("Q-learning", "'q'"), ("hybird", "'hybrid'"), ("actor-critic", "'ac'"),
     ("episodic-semantic", "'episodic_semantic'")],
)
def test_a_mistyped_agent_names_the_closest(typed: str, near: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["--store", ":memory:", "run", "rewardgym/two-step", "--agent", typed])
    assert exit.value.code == 2
    assert last_error(capsys) == (
        f"graphtasks: error: run: --agent: unknown agent {typed!r}; did you mean {near}? (graphtasks agents lists them)"
    )


def test_an_agent_far_from_every_name_gets_the_listing(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--store", ":memory:", "run", "rewardgym/two-step", "--agent", "reinforce"])
    expected = "unknown agent 'reinforce' (graphtasks agents lists them)"
    assert last_error(capsys) == f"graphtasks: error: run: --agent: {expected}"


def test_the_run_help_does_not_list_every_agent(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--agent NAME" in out and "episodic_semantic_pretrain" not in out


@pytest.mark.parametrize(
    "command",
    [
        ["experiment", "show", "reversal-tiy"],
        ["experiment", "delete", "reversal-tiy"],
        ["experiment", "export", "reversal-tiy"],
        ["experiment", "export", "reversal-tiy", "--format", "turtle"],
        ["fit", "run", "reversal-tiy"],
        ["fit", "show", "reversal-tiy"],
        ["fit", "compare", "reversal-tiy"],
        ["participants", "stay", "reversal-tiy", "-o", "stay.png"],
        ["participants", "stay", "reversal-tiny", "--agents", "reversal-tiy", "-o", "stay.png"],
        ["sparql", "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1", "--experiment", "reversal-tiy"],
    ],
    ids=lambda command: " ".join(command[:2] if command[0] != "sparql" else command[:1])
    + (" --agents" if "--agents" in command else "") + (" turtle" if "turtle" in command else ""),
)
def test_a_mistyped_recorded_experiment_names_the_closest(store: str, command: list[str], capsys) -> None:
    assert main(["--store", store, *command]) == 2
    assert last_error(capsys) == (
        "graphtasks: error: no recorded experiment 'reversal-tiy'; recorded: reversal-tiny; "
        "did you mean 'reversal-tiny'?"
    )


@pytest.mark.parametrize("action", ["check", "run"])
def test_a_mistyped_experiment_to_check_or_resume_names_recorded_and_shipped_ones(
    store: str, action: str, tmp_path: Path, capsys
) -> None:
    assert main(["--store", store, "experiment", action, "reversal-tiy"]) == 2
    error = last_error(capsys)
    assert error.startswith(
        "graphtasks: error: reversal-tiy: no such file, shipped spec or recorded experiment; "
        "did you mean 'reversal-tiny'? (shipped: "
    )
    assert error.endswith("; recorded: reversal-tiny)")
    assert main(["--store", store, "experiment", action, "daw2011-twostep"]) == 2
    assert "; did you mean 'daw2011-two-step'? (shipped: " in last_error(capsys)
    assert main(["--store", store, "experiment", action, str(tmp_path / "nothing.toml")]) == 2  # a file: named so
    assert last_error(capsys).endswith("nothing.toml: cannot read: No such file or directory")


def test_deleting_a_mistyped_task_names_the_closest(store: str, capsys) -> None:
    assert main(["--store", store, "tasks", "delete", "rewardgym/two-stp"]) == 0
    assert capsys.readouterr().out == "rewardgym/two-stp: not stored; did you mean 'rewardgym/two-step'?\n"


def test_a_mistyped_room_agent_kind_names_the_closest(capsys) -> None:
    assert main(["--store", ":memory:", "room", "baselines", "--agents", "episodc"]) == 2
    assert last_error(capsys) == (
        "graphtasks: error: --agents: unknown kind(s) episodc; known: episodic, semantic, episodic_semantic, "
        "episodic_semantic_pretrain; did you mean 'episodic'?"
    )
