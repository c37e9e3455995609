"""`graphtasks render TEMPLATE --size small -o file.png`: a picture of a grid world,
drawn from its stored graph (the built-in template is put into the store on first use)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

from .arguments import integer, one_line_errors
from .errors import CommandError
from .files import write_output

RESOLUTION = integer(16, 4096)  # pixels: what GridEnv draws (gym_bridge.grid.rules)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("render", help="draw a grid template (PNG, or text with --ansi)")
    parser.add_argument(
        "template",
        help="grid template name (e.g. four_rooms) or grid task id (neuronav/grid/four_rooms/small, user/grid/...)",
    )
    parser.add_argument("--size", default="small", help="micro, small or large (default small)")
    parser.add_argument(
        "-o", "--output", metavar="FILE.png", help="where to write the picture (default TEMPLATE-SIZE.png)"
    )
    parser.add_argument("--resolution", type=RESOLUTION, default=512,
                        help="picture width and height in pixels, 16..4096 (default 512)")
    parser.add_argument("--templates", metavar="FOLDER", help="also read grid templates (*.txt maps) from this folder")
    parser.add_argument("--ansi", action="store_true", help="print the grid as text instead of writing a picture")
    parser.set_defaults(func=cmd_render)
    one_line_errors(parser)


def image_format(path: str) -> str:
    """PIL's format name for the file's extension (PNG when it has none)."""
    from PIL import Image

    suffix = Path(path).suffix.lower()
    if not suffix:
        return "PNG"
    known = Image.registered_extensions()
    if suffix not in known:
        raise CommandError(f"--output {path}: unknown picture format {suffix!r}; use .png")
    return known[suffix]


def cmd_render(args: argparse.Namespace) -> int:
    from PIL import Image

    from gym_bridge.grid.env import GridEnv
    from tasks import add_template_folder

    if args.templates:
        add_template_folder(args.templates)
    if "/" in args.template:  # a task id: a built-in grid or any grid in the store (a user's map)
        env = GridEnv(task=args.template, store=args.store, resolution=args.resolution, render_mode="ansi")
        label = "-".join(args.template.split("?")[0].split("/")[-2:])
    else:
        env = GridEnv(args.template, args.size, store=args.store, resolution=args.resolution, render_mode="ansi")
        label = f"{args.template}-{args.size}"
    env.reset(seed=0)
    if args.ansi:
        print(env.render(), end="")
        return 0
    path = args.output or f"{label}.png"
    picture = io.BytesIO()
    Image.fromarray(env.picture()).save(picture, format=image_format(path))
    write_output(path, picture.getvalue())
    print(f"wrote {path} ({args.resolution}x{args.resolution})")
    return 0
