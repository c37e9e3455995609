"""Every family reads as text (gym_bridge.text): a first step with its options, the same text
under the same seed, and option names of another participant's seed a permutation of them."""

from __future__ import annotations

import pytest

import tasks
from gym_bridge import families
from gym_bridge.text import MalformedAnswer, OptionNames, TextPart, TextStep


def first_step(fam, seed):
    task_id = fam.tasks.builtin_ids()[0]
    graph = tasks.build(task_id)
    env = fam.make_env(graph, **fam.text.env_settings)
    obs, info = env.reset(seed=0)
    step = fam.text.step(env, obs, info, OptionNames(seed), graph)
    return step, env


@pytest.mark.parametrize("fam", families(), ids=lambda f: f.name)
def test_every_family_reads_a_first_step_as_text(fam):
    assert fam.text is not None, f"{fam.name} declares no text view"
    step, env = first_step(fam, seed=3)
    prompt = step.prompt()
    assert step.parts and all(part.names for part in step.parts)
    for part in step.parts:
        assert part.question in prompt
        for name in part.names:
            assert f"  {name}" in prompt
        assert len(set(part.names)) == len(part.names)
    again, _ = first_step(fam, seed=3)
    assert again.prompt() == prompt  # the same participant reads the same text
    other, _ = first_step(fam, seed=4)
    assert [p.meanings for p in other.parts] == [p.meanings for p in step.parts]
    assert [p.names for p in other.parts] != [p.names for p in step.parts]  # another participant's names
    # every option's action is one the env takes
    chosen = [0] * len(step.parts)
    assert env.action_space.contains(step.action(chosen)) or env.action_space.contains(int(step.action(chosen)))


def test_option_names_are_a_seeded_permutation_of_the_letters():
    a, b = OptionNames(0).take(0, 26), OptionNames(1).take(0, 26)
    assert sorted(a) == sorted(b) == [chr(65 + i) for i in range(26)] and a != b
    assert len(set(OptionNames(0).take(0, 60))) == 60


def test_answers_are_read_by_the_stated_rule():
    step = TextStep("", (TextPart("Which?", ("K", "Q"), ("", ""), (0, 1)),))
    assert step.parse("Q") == [1] and step.parse("I choose <<K>>.") == [0] and step.parse("option Q please") == [1]
    for bad in ("", "neither", "K or Q", "<<Z>>"):
        with pytest.raises(MalformedAnswer):
            step.parse(bad)
    two = TextStep("", (TextPart("Where?", ("A", "B"), ("x", "y"), (0, 1)), TextPart("Move?", ("C", "D"), ("", ""),
                                                                                       (0, 1))),
                   combine=lambda values: list(values))
    assert two.parse("<<B>> <<C>>") == [1, 0] and two.action([1, 0]) == [1, 0]
    with pytest.raises(MalformedAnswer):
        two.parse("<<B>>")
