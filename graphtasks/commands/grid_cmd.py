"""`graphtasks render TASK -o file.png|.svg`: a picture of any task, drawn the way its family
draws its tasks (graphs with actions, probabilities, rewards and the start; grids; POGE
worlds; Room tasks), each with a legend. A bare grid template name (four_rooms) with
`--size` names a neuro-nav grid; `--ansi` prints the task's text rendering instead."""

from __future__ import annotations

import argparse
from pathlib import Path

from .arguments import integer, one_line_errors
from .errors import CommandError
from .extras import require_plotting
from .files import write_output

RESOLUTION = integer(16, 4096)  # pixels: what GridEnv draws (gym_bridge.grid.rules)
FORMATS = (".png", ".svg", ".pdf")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("render", help="draw any task with a legend (PNG, SVG or PDF; text with --ansi)")
    parser.add_argument(
        "template",
        metavar="TASK",
        help="a task id (rewardgym/two-step, neuronav/graph/human_b, neuronav/grid/four_rooms/small, poge/world0, "
        "room/small, user/...) or a grid template name with --size (four_rooms)",
    )
    parser.add_argument("--size", default="small",
                        help="for a grid template name: micro, small or large (default small)")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="where to write the picture: .png, .svg or .pdf (default TASK.png)"
    )
    parser.add_argument("--resolution", type=RESOLUTION, default=None,
                        help="grids: the grid's width and height in pixels, 16..4096 (default 512)")
    parser.add_argument("--templates", metavar="FOLDER", help="also read grid templates (*.txt maps) from this folder")
    parser.add_argument("--ansi", action="store_true", help="print the task as text instead of writing a picture")
    parser.set_defaults(func=cmd_render)
    one_line_errors(parser)


def cmd_render(args: argparse.Namespace) -> int:
    from gym_bridge import family_of
    from gym_bridge.render import PictureError, draw_task
    from tasks import add_template_folder

    if not args.ansi:
        require_plotting("render (a picture; --ansi draws the task as text without it)")
    if args.templates:
        add_template_folder(args.templates)
    task = args.template
    if "/" not in task:  # a grid template name: this command module is the grid family's
        from gym_bridge.grid.env import GridEnv

        task = GridEnv(args.template, args.size, store=args.store).compiled.task_id
    path = args.output or "-".join(task.split("?")[0].split("/")[-2:]) + ".png"
    if not args.ansi and Path(path).suffix.lower() not in FORMATS:
        raise CommandError(f"--output {path}: unknown picture format {Path(path).suffix or '(none)'!r}; "
                           f"use {', '.join(FORMATS)}")
    if args.ansi:
        env = family_of(task, args.store).make_env(task, store=args.store, render_mode="ansi")
        env.reset(seed=0)
        print(env.render(), end="")
        return 0
    options = {} if args.resolution is None else {"resolution": args.resolution}
    try:
        picture = draw_task(task, args.store, **options)
    except PictureError as exc:
        raise CommandError(str(exc)) from None
    except TypeError as exc:
        if "unexpected keyword argument" not in str(exc):
            raise
        raise CommandError(f"{task}: --resolution is for grid tasks only") from None
    write_output(path, picture.encode(Path(path).suffix))
    shown = ", ".join(f"{v} {k}" for k, v in picture.counts.items() if v)
    print(f"wrote {path} ({shown})")
    return 0
