"""`graphtasks render TEMPLATE --size small -o file.png` and `--ansi` on grids (every family: test_render_tasks.py)."""

from __future__ import annotations

import argparse

import numpy as np
from PIL import Image

from graphtasks.commands import grid_cmd


def run(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default=None)
    grid_cmd.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


def test_render_writes_a_png(tmp_path, capsys):
    out = tmp_path / "fr.png"
    assert run(["render", "four_rooms", "--size", "small", "-o", str(out), "--resolution", "132"]) == 0
    image = np.asarray(Image.open(out).convert("RGB"))
    assert image.shape[0] > 132 and image.shape[1] > 132  # the grid, its title and its legend
    blue = np.all(image == (30, 80, 230), axis=-1)  # the reward at (1, 1), and its legend entry
    assert blue.sum() > 100
    assert "wrote" in capsys.readouterr().out


def test_render_ansi_and_task_ids(capsys):
    assert run(["render", "neuronav/grid/two_step/micro", "--ansi"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[5] == "BBBABBB" and lines[1] == "BRBBBRB"


def test_render_from_a_user_folder(tmp_path, capsys):
    folder = tmp_path / "maps"
    folder.mkdir()
    (folder / "corridor.txt").write_text("name corridor\n[tiny]\n#####\n#A.R#\n#####\n#####\n#####\nreward 1 3 1\n")
    assert run(["render", "corridor", "--size", "tiny", "--templates", str(folder), "--ansi"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "BA RB"
