"""The world file format: the example worlds' statistics, round trips, and located errors."""

from __future__ import annotations

import pytest
from conftest import DATA, WORLDS

from tasks.poge import PogeFormatError, load_world, parse_world, statistics, write_world

# The reference parser's statistics of the example worlds (rows, doors, floor states, ...).
TABLE = {
    "world0": dict(rows=5, cols=7, doors=0, floor_states=13, goals=[(3, 1)], terminals=[], toggles=[], reward_tiles=0),
    "world1": dict(
        rows=9, cols=9, doors=3, floor_states=36, goals=[(5, 6)], terminals=[(1, 6)], toggles=[], reward_tiles=6
    ),
    "world2": dict(
        rows=5, cols=34, doors=0, floor_states=77, goals=[(1, 30)], terminals=[], toggles=[], reward_tiles=14
    ),
    "world3": dict(
        rows=7, cols=11, doors=0, floor_states=38, goals=[(4, 9)], terminals=[], toggles=[(5, 2)], reward_tiles=0
    ),
    "scaled_world0": dict(
        rows=8, cols=17, doors=0, floor_states=78, goals=[(6, 11)], terminals=[], toggles=[], reward_tiles=0
    ),
}


@pytest.mark.parametrize("name", WORLDS)
def test_example_statistics_match_semantics_table(name: str) -> None:
    stats = statistics(load_world(DATA / f"{name}.txt"))
    for key, value in TABLE[name].items():
        assert stats[key] == value, key
    assert stats["rules"] == ["1", "2", "3"]


def test_world1_reward_values() -> None:
    assert statistics(load_world(DATA / "world1.txt"))["reward_values"] == {"a": 1, "b": 2, "c": 3, "*": -5}


@pytest.mark.parametrize("name", WORLDS)
def test_example_round_trip(name: str) -> None:
    world = load_world(DATA / f"{name}.txt")
    text = write_world(world)
    assert parse_world(text) == world
    assert write_world(parse_world(text)) == text


def test_later_rule_wins_and_spaces_are_ignored() -> None:
    world = load_world(DATA / "world2.txt")  # declares 1-down twice
    rule = {(rid, a): outcomes for rid, a, outcomes in world.rules}[("1", 1)]
    assert rule == ((1, 0.75), (3, 0.25))
    text = (
        "===Layout===\n#####\n#E G#\n#####\n===Behaviour===\n#####\n#1  #\n#####\n 1 - up - [ up : 0.5 , down:0.5 ]\n"
    )
    assert parse_world(text).slip(1, 1, 0) == ((0, 0.5), (1, 0.5))


def test_abstraction_names_and_blank_tiles() -> None:
    world = load_world(DATA / "world1.txt")
    assert world.abstraction_name(1, 5) == "corridor"
    assert world.abstraction_name(1, 1) == "1"  # no `1:name` line: the symbol itself
    assert world.symbol(0, 0) == "#"


LAYOUT = "===Layout===\n// comment\n#######\n#E   G#\n#######\n"


def error_of(text: str) -> PogeFormatError:
    with pytest.raises(PogeFormatError) as info:
        parse_world(text, "w.txt")
    return info.value


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("===Layout===\n#####\n#E G##\n#####\n", 3, 6, "6 column(s), expected 5"),
        (LAYOUT + "===Abstraction===\n#######\n#11  2#\n", 6, 1, "2 row(s), expected 3"),
        (LAYOUT + "===Abstraction===\n#######\n#11  2#\n#######\n#######\n", 10, 1, "more rows than the Layout"),
        (LAYOUT + "===Rewards===\n#######\n#  a  #\n######\n", 9, 7, "6 column(s), expected 7"),
        (LAYOUT + "===Behaviour===\n#######\n# 1   #\n#######\n2-up-[up:1.0]\n", 10, 1, "unknown rule id '2'"),
        (LAYOUT + "===Behaviour===\n#######\n# 1   #\n#######\n1-up-[up:0.5, down:0.4]\n", 10, 6, "sum to 0.9"),
        (LAYOUT + "===Behaviour===\n#######\n# 1   #\n#######\n1-jump-[up:1.0]\n", 10, 3, "unknown action 'jump'"),
        (
            LAYOUT + "===Behaviour===\n#######\n# 1   #\n#######\n1-up-[up:0.5, fly:0.5]\n",
            10,
            15,
            "unknown action 'fly'",
        ),
        (LAYOUT + "===Rewards===\n#######\n#  a b#\n#######\na:1\n", 8, 6, "reward symbol 'b' has no value"),
        (LAYOUT + "===Rewards===\n#######\n#  a  #\n#######\na:x\n", 10, 3, "expected an integer"),
        ("===Layout===\n#####\n#  G#\n#####\n", 1, 1, "no start tile"),
        ("===Layout===\n#####\n#EEG#\n#####\n", 3, 3, "second start tile"),
        ("===Layout===\n#####\n#E  #\n#####\n", 1, 1, "no goal tile"),
        ("===Layout===\n##D##\n#E G#\n#####\n", 2, 3, "leads off the map"),
        ("#####\n===Layout===\n", 1, 1, "expected a section header"),
        ("===Layout===\n#E G#\n===Colours===\n", 3, 4, "unknown section 'Colours'"),
    ],
)
def test_errors_name_file_line_column_and_expectation(text: str, line: int, column: int, words: str | None) -> None:
    err = error_of(text)
    assert (err.source, err.line, err.column) == ("w.txt", line, column), str(err)
    assert str(err).startswith(f"w.txt, line {line}, column {column}: ")
    if words:
        assert words in str(err)
    assert "expected" in str(err)


def test_door_into_a_wall_is_an_error() -> None:
    err = error_of("===Layout===\n#####\n#E G#\n##D##\n#####\n")
    assert (err.line, err.column) == (4, 3) and "into a wall" in str(err)


def test_unreadable_file_names_the_file(tmp_path) -> None:
    from tasks import TaskFileError

    with pytest.raises(TaskFileError, match="nope.txt: cannot read"):
        load_world(tmp_path / "nope.txt")
