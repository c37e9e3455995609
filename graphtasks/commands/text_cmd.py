"""`graphtasks participants text`: a language model (any OpenAI-compatible chat-completions
server) plays a task as text, recorded as people's and agents' runs are
(`graphtasks.experiments.text_participants`)."""

from __future__ import annotations

import argparse

from .arguments import max_episode_steps, one_line_errors
from .errors import CommandError


def _actions(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The `participants` command's sub-commands (made by `serve_cmd`, which registers first)."""
    parser = subparsers.choices.get("participants")
    if parser is None:
        parser = subparsers.add_parser("participants", help="a study's sessions beside agents' runs")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return parser.add_subparsers(dest="action", metavar="ACTION", required=True)


def register(subparsers: argparse._SubParsersAction) -> None:
    actions = _actions(subparsers)
    text = actions.add_parser(
        "text", help="a language model plays a task as text through a chat-completions server (URL)",
        description="Each run's steps are read as text (option names drawn from its seed) and sent to an "
        "OpenAI-compatible server's /chat/completions; answers that name no option are asked again (--tries), "
        "then the run ends failed. Runs are recorded in the store as people's are.",
    )
    text.add_argument("--task", required=True, help="the task id (built in, or stored)")
    text.add_argument("--url", required=True, help="the API's base URL, e.g. http://127.0.0.1:8080/v1")
    text.add_argument("--model", required=True, help="the model the server is asked for (the runs' label)")
    text.add_argument("--trials", type=int, default=20, help="episodes (trials) per run (default 20)")
    text.add_argument("--seeds", type=int, nargs="+", default=[0], help="one run (participant) per seed")
    text.add_argument("--name", default=None, help="the experiment's name (default 'text <model> <task>')")
    text.add_argument("--max-episode-steps", type=int, default=None, metavar="N",
                      help="steps per episode (default: the env's)")
    text.add_argument("--max-steps", type=int, default=None, metavar="N", dest="old_max_steps",
                      help="deprecated: --max-episode-steps")
    text.add_argument("--tries", type=int, default=3, help="answers asked for per trial (default 3)")
    text.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for one answer (default 60)")
    text.add_argument("--retries", type=int, default=2, help="further requests after a failed one (default 2)")
    text.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    text.set_defaults(func=cmd_text)
    one_line_errors(text)
    export = actions.add_parser("export", help="write an experiment's sessions as Psych-101/201 prompts.jsonl lines",
                                description="One line per completed run (people's, agents', text participants'): "
                                "the session as the task's text view reads it, choices marked <<...>>, RTs where "
                                "the trials have them.")
    export.add_argument("experiment", help="the experiment's name")
    export.add_argument("-o", "--output", required=True, metavar="FILE.jsonl", help="the file to write")
    export.set_defaults(func=cmd_export)
    one_line_errors(export)
    imported = actions.add_parser("import", help="record Psych-101/201 prompts.jsonl lines as sessions of a task",
                                  description="Each line is replayed on the task under its seed with its marked "
                                  "choices; a line whose choices the task cannot produce is refused (nothing is "
                                  "recorded then).")
    imported.add_argument("file", help="the prompts.jsonl file")
    imported.add_argument("--task", required=True, help="the task the sessions played")
    imported.add_argument("--name", required=True, help="the experiment to record them as")
    imported.set_defaults(func=cmd_import)
    one_line_errors(imported)


def cmd_text(args: argparse.Namespace) -> int:
    from graphstore import open_store
    from graphtasks.experiments.text_participants import ChatEndpoint, run_text_participant

    for option, value in (("--trials", args.trials), ("--tries", args.tries)):
        if value < 1:
            raise CommandError(f"participants text: {option}: expected a positive number, got {value}")
    if not args.url.startswith(("http://", "https://")):
        raise CommandError(f"participants text: --url: expected an http:// or https:// URL, got {args.url!r}")
    endpoint = ChatEndpoint(args.url, args.model, timeout=args.timeout, retries=args.retries,
                            temperature=args.temperature)
    name = args.name or f"text {args.model} {args.task}"
    with open_store(args.store, "w") as store:
        runs = run_text_participant(store, endpoint, args.task, args.model, seeds=args.seeds, episodes=args.trials,
                                    name=name, tries=args.tries, max_steps=max_episode_steps(args))
    for run in runs:
        cell = run.outcome.cell
        reward = sum(t.reward for t in run.trials)
        retried = sum(t.tries > 1 for t in run.trials)
        line = f"run {cell.index} (seed {cell.seed}): {run.status}, {len(run.trials)} trials, reward {reward:g}"
        print(line + (f", {retried} answered after a retry" if retried else "") +
              (f": {run.error}" if run.error else ""))
    print(f"recorded as experiment {name!r}")
    return 0 if all(r.status == "completed" for r in runs) else 1


def cmd_export(args: argparse.Namespace) -> int:
    from graphstore import open_store
    from graphtasks.experiments.psych101 import export_prompts, write_prompts

    with open_store(args.store, "r") as store:
        lines = export_prompts(store, args.experiment)
    n = write_prompts(lines, args.output)
    print(f"wrote {n} participants ({sum(line['text'].count('<<') for line in lines)} choices) to {args.output}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from graphstore import open_store
    from graphtasks.experiments.psych101 import import_prompts, read_prompts

    lines = read_prompts(args.file)
    with open_store(args.store, "w") as store:
        runs = import_prompts(store, lines, args.task, args.name, args.file)
    print(f"recorded {len(runs)} sessions ({sum(len(r.trials) for r in runs)} trials) of {args.task} as "
          f"experiment {args.name!r}")
    return 0
