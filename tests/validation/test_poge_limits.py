"""POGE world files past the documented limits are refused by the parser, with file, line and column."""

from __future__ import annotations

import pytest

from tasks.data import TaskFileError
from tasks.poge import PogeFormatError, parse_world
from tasks.poge.parser import MAX_COLS, MAX_REWARD_DIGITS, MAX_ROWS


def layout(rows: int, cols: int) -> str:
    top = "E" + "." * (cols - 2) + "G"
    return "===Layout===\n" + "\n".join([top] + ["." * cols] * (rows - 1)) + "\n"


def rewards(value: str) -> str:
    return f"===Layout===\nE.G\n===Rewards===\nEaG\na:{value}\n"  # the reward on the floor tile (paid)


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        (layout(700, 700), 2, MAX_COLS + 1, "at most 256 columns"),
        (layout(1, 1_000_000), 2, MAX_COLS + 1, "at most 256 columns"),
        (layout(MAX_ROWS + 1, 3), MAX_ROWS + 2, 1, "at most 256 rows"),
        (rewards("9" * 5000), 5, 3, "5000 digits"),
        (rewards("-" + "9" * 30), 5, 3, "30 digits"),
        (rewards("1" + "0" * MAX_REWARD_DIGITS), 5, 3, "16 digits"),
    ],
)
def test_world_past_the_limits_is_refused_in_the_parse(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(PogeFormatError) as info:
        parse_world(text, "big.txt")
    err = info.value
    assert (err.source, err.line, err.column) == ("big.txt", line, column), str(err)
    assert str(err).startswith(f"big.txt, line {line}, column {column}: ") and words in str(err)


def test_worlds_at_the_limits_parse() -> None:
    world = parse_world(layout(MAX_ROWS, MAX_COLS), "max.txt")
    assert (world.rows, world.cols) == (MAX_ROWS, MAX_COLS)
    largest = "9" * MAX_REWARD_DIGITS
    assert dict(parse_world(rewards("-" + largest)).reward_values) == {"a": -int(largest)}
    # leading zeros are not digits
    assert dict(parse_world(rewards("000" + largest)).reward_values) == {"a": int(largest)}


def test_env_refuses_a_too_large_world_file_naming_it(tmp_path) -> None:
    import gymnasium as gym

    import gym_bridge  # noqa: F401  (registers the ids)

    path = tmp_path / "big.txt"
    path.write_text(layout(700, 700))
    with pytest.raises(TaskFileError, match=rf"^world: {path}, line 2, column 257: "):
        gym.make("graphtasks/Poge-v0", world=str(path))
