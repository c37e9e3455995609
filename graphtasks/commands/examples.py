"""Examples for every command's help: an "Examples:" epilog of one to three real command lines.

EXAMPLES maps a command's path (`"tasks load"`, `"fit run"`) to its examples; `add_examples`
gives each parser built under the top-level one its epilog (a parser that already has one keeps
it). The lines are real: a test parses every one with the full parser and runs a sample of them
on a fresh store. This module imports nothing heavy: `graphtasks COMMAND -h` loads it.
"""

from __future__ import annotations

import argparse

EXAMPLES: dict[str, tuple[str, ...]] = {
    "tasks": (
        "graphtasks tasks load rewardgym/two-step",
        "graphtasks tasks list",
        "graphtasks tasks show rewardgym/two-step",
    ),
    "tasks load": (
        "graphtasks tasks load rewardgym/two-step --param p_common=0.8",
        "graphtasks tasks load --file my_task.json",
        "graphtasks tasks load --all",
    ),
    "tasks list": ("graphtasks tasks list", "graphtasks tasks list --builtin --format csv"),
    "tasks delete": ("graphtasks tasks delete user/three-arms",),
    "tasks copy": (
        "graphtasks tasks copy --from tasks.lbug --to bolt://localhost:7687 --all",
        "graphtasks tasks copy --from tasks.lbug --to copy.lbug rewardgym/two-step",
    ),
    "tasks show": ("graphtasks tasks show rewardgym/two-step", "graphtasks tasks show poge/world0 --format json"),
    "tasks check": ("graphtasks tasks check user/my-task",),
    "schema": ("graphtasks schema", "graphtasks schema --format json"),
    "cypher": (
        "graphtasks cypher \"MATCH (t:Task) RETURN t.task, t.family ORDER BY t.task\"",
        "graphtasks cypher \"MATCH (s:State) WHERE s.task = $t RETURN count(s) AS states\" "
        "--param t=rewardgym/two-step",
    ),
    "run": (
        "graphtasks run rewardgym/two-step --agent q --episodes 200",
        "graphtasks run neuronav/graph/t_loop --agent sr --episodes 100 --agent-param beta=3 "
        "--env-param time_penalty=0.01",
        "graphtasks run rewardgym/two-step --agent hybrid --schedule --json",
    ),
    "agents": ("graphtasks agents", "graphtasks agents --format json"),
    "families": ("graphtasks families", "graphtasks families --verbose"),
    "sparql": (
        "graphtasks sparql \"SELECT (COUNT(?t) AS ?tasks) WHERE { ?t a gt:Task }\"",
        "graphtasks sparql @query.rq --task rewardgym/two-step --format csv",
    ),
    "export": (
        "graphtasks export rewardgym/two-step -o two-step.ttl",
        "graphtasks export rewardgym/two-step poge/world0 --format nt -o tasks.nt",
    ),
    "import": ("graphtasks import two-step.ttl",),
    "validate": (
        "graphtasks validate rewardgym/two-step",
        "graphtasks validate --all --quiet",
        "graphtasks validate --file two-step.ttl",
    ),
    "entities": (
        "graphtasks entities classes neuronav/graph/neighborhood",
        "graphtasks entities list neuronav/graph/neighborhood --type Reward",
    ),
    "entities create": (
        "graphtasks entities create neuronav/graph/neighborhood --type Reward --param state=3 --param value=5 "
        "--group bonus",
    ),
    "entities update": (
        "graphtasks entities update neuronav/graph/neighborhood --group bonus --param value=7",
    ),
    "entities remove": ("graphtasks entities remove neuronav/graph/neighborhood --group bonus",),
    "entities list": (
        "graphtasks entities list neuronav/graph/neighborhood --type Reward",
        "graphtasks entities list neuronav/graph/neighborhood --group bonus --format json",
    ),
    "entities groups": ("graphtasks entities groups neuronav/graph/neighborhood",),
    "entities classes": ("graphtasks entities classes neuronav/graph/neighborhood",),
    "poge": ("graphtasks poge load myworld.txt", "graphtasks poge stats poge/world1"),
    "poge load": ("graphtasks poge load myworld.txt", "graphtasks poge load myworld.txt --id user/poge/lab-world"),
    "poge show": ("graphtasks poge show poge/world1", "graphtasks poge show user/poge/myworld"),
    "poge stats": ("graphtasks poge stats poge/world1", "graphtasks poge stats myworld.txt"),
    "ingest": ("graphtasks ingest snapshot", "graphtasks ingest status"),
    "ingest api": (
        "graphtasks ingest api --rel /r/AtLocation --start /c/en/laptop",
        "graphtasks ingest api --rel /r/AtLocation --start /c/en/laptop --start /c/en/dog --rate-limit 1",
    ),
    "ingest dump": ("graphtasks ingest dump conceptnet-assertions-5.7.0.csv.gz --rel /r/AtLocation --language en",),
    "ingest snapshot": ("graphtasks ingest snapshot",),
    "ingest status": ("graphtasks ingest status",),
    "room": ("graphtasks room show", "graphtasks room baselines --capacities 32 --seeds 0"),
    "room baselines": (
        "graphtasks room baselines --capacities 32 --seeds 0",
        "graphtasks room baselines --agents episodic,semantic --json",
    ),
    "room show": ("graphtasks room show", "graphtasks room show --room-size big"),
    "render": (
        "graphtasks render rewardgym/two-step -o two-step.svg",
        "graphtasks render four_rooms --size small -o four_rooms.png",
        "graphtasks render neuronav/grid/two_step/micro --ansi",
    ),
    "view": ("graphtasks view rewardgym/two-step -o two-step.html",),
    "play": (
        "graphtasks play neuronav/grid/four_rooms/small",
        "graphtasks play rewardgym/two-step --seed 0",
        "graphtasks play poge/world0 --zoom 2 --env-param max_episode_steps=50",
    ),
    "bench": ("graphtasks bench --quick", "graphtasks bench --help"),
    "experiment": (
        "graphtasks experiment specs",
        "graphtasks experiment run daw2011-two-step",
        "graphtasks experiment export daw2011-two-step -o episodes.csv",
    ),
    "experiment check": ("graphtasks experiment check daw2011-two-step", "graphtasks experiment check my-spec.toml"),
    "experiment run": (
        "graphtasks experiment run daw2011-two-step --workers 2",
        "graphtasks experiment run my-spec.toml -o episodes.csv --plot curves.png",
    ),
    "experiment specs": ("graphtasks experiment specs",),
    "experiment list": ("graphtasks experiment list", "graphtasks experiment list --format json"),
    "experiment show": ("graphtasks experiment show daw2011-two-step",),
    "experiment delete": ("graphtasks experiment delete daw2011-two-step",),
    "experiment plot": (
        "graphtasks experiment plot daw2011-two-step -o stay.png",
        "graphtasks experiment plot daw2011-two-step --kind curves --smooth 10 -o curves.png",
    ),
    "experiment export": (
        "graphtasks experiment export daw2011-two-step -o episodes.csv",
        "graphtasks experiment export daw2011-two-step --trials --format parquet -o trials.parquet",
        "graphtasks experiment export daw2011-two-step --bids events",
    ),
    "experiment migrate": ("graphtasks experiment migrate",),
    "reproduce": (
        "graphtasks reproduce",
        "graphtasks reproduce cools2002-reversal --no-figure",
        "graphtasks reproduce daw2011-two-step -o figures",
    ),
    "fit": (
        "graphtasks fit models",
        "graphtasks fit run daw2011-two-step --model hybrid",
        "graphtasks fit compare daw2011-two-step",
    ),
    "fit models": ("graphtasks fit models",),
    "fit cv": (
        "graphtasks fit cv lab --models q,hybrid --folds 5 --seed 0",
        "graphtasks fit cv lab --models q,hybrid,gru-4-shared --by participant --plot cv.png",
    ),
    "fit simulate": (
        "graphtasks fit simulate sub-01_task-twostep_events.tsv --params lr=0.3,beta=4 --seed 1",
        "graphtasks fit simulate ts_lab.txt --layout ts --participants 4 --model hybrid --params lr=0.5,beta=5,w=0.6",
    ),
    "fit import": (
        "graphtasks fit import lab sub-01_task-twostep_events.tsv sub-02_task-twostep_events.tsv",
        "graphtasks fit import hb ts_lab.txt",
    ),
    "fit run": (
        "graphtasks fit run lab --model q",
        "graphtasks fit run lab --model hybrid --method em --starts 2",
        "graphtasks fit run lab --agent sarsa --free lr=0.01:1,beta=0.1:20 --fixed gamma=1",
    ),
    "fit show": ("graphtasks fit show lab", "graphtasks fit show lab --plot fits.png"),
    "fit compare": ("graphtasks fit compare lab", "graphtasks fit compare lab --random-effects --plot bms.png"),
    "fit parameter-recovery": ("graphtasks fit parameter-recovery --model q --participants 20 -o recovery-q.png",),
    "fit model-recovery": ("graphtasks fit model-recovery --participants 3 --starts 1 --json",),
    "fit group-recovery": ("graphtasks fit group-recovery --model hybrid --participants 30 -o group-recovery.png",),
    "fit group-model-recovery": (
        "graphtasks fit group-model-recovery --models q,model-based --participants 30 -o group-model-recovery.png",
    ),
    "serve": (
        "graphtasks serve study.toml --check",
        "graphtasks serve study.toml --port 8000",
        "graphtasks serve rewardgym/two-step --pilot 4",
    ),
    "participants": ("graphtasks participants stay \"two-step pilot\" -o stay.png",),
    "participants stay": (
        "graphtasks participants stay \"two-step pilot\" -o stay.png",
        "graphtasks participants stay \"two-step pilot\" --agents \"two-step agents\" -o stay.png",
    ),
    "participants text": (
        "graphtasks participants text --task rewardgym/two-step --url http://127.0.0.1:8080/v1 --model local "
        "--trials 20",
        "graphtasks participants text --task neuronav/grid/four_rooms/micro --url http://127.0.0.1:8080/v1 "
        "--model local --trials 1 --max-steps 30 --seeds 0 1 2",
    ),
    "participants jspsych": ("graphtasks participants jspsych study.toml jspsych-study --sessions 20",),
    "participants jatos": ("graphtasks participants jatos study.toml study.jzip --sessions 20",),
    "participants import-jspsych": (
        "graphtasks participants import-jspsych study.toml sub-01.json sub-02.json --name \"two-step online\"",
    ),
    "participants export": ("graphtasks participants export \"two-step pilot\" -o prompts.jsonl",),
    "participants import": (
        "graphtasks participants import prompts.jsonl --task rewardgym/two-step --name \"two-step corpus\"",
    ),
}


class ExamplesFormatter(argparse.HelpFormatter):
    """The default help layout, with an "Examples:" epilog kept line by line (not re-wrapped)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("Examples:"):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


def epilog(path: str) -> str | None:
    """The "Examples:" epilog of the command at `path` (e.g. "tasks load"), or None when it has none.

    Parameters
    ----------
    path : str
        The command's words after `graphtasks`, separated by one space.

    Returns
    -------
    str or None
        "Examples:" and the command lines, each on its own line indented by two spaces.

    Examples
    --------
    >>> print(epilog("tasks delete"))
    Examples:
      graphtasks tasks delete user/three-arms
    """
    lines = EXAMPLES.get(path)
    return "Examples:\n" + "\n".join("  " + line for line in lines) if lines else None


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The sub-command parsers of `parser` by name ({} when it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def add_examples(parser: argparse.ArgumentParser, path: str = "") -> None:
    """Give every parser under `parser` (a command's, at `path`) its EXAMPLES epilog.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The top-level parser (or a command's, with its `path`).
    path : str
        The command words of `parser`; "" for the top level.

    Examples
    --------
    >>> top = argparse.ArgumentParser(prog="graphtasks")
    >>> _ = top.add_subparsers().add_parser("schema")
    >>> add_examples(top)
    >>> subparsers_of(top)["schema"].epilog.splitlines()[1]
    '  graphtasks schema'
    """
    for name, child in subparsers_of(parser).items():
        child_path = f"{path} {name}".strip()
        text = epilog(child_path)
        if text and not child.epilog:
            child.epilog = text
            if child.formatter_class is argparse.HelpFormatter:
                child.formatter_class = ExamplesFormatter
        add_examples(child, child_path)
