"""Psych-101/201 prompts.jsonl (graphtasks.experiments.psych101): sessions of text participants
and of agents exported, re-imported as sessions of the stored task, and exported again the same;
a line whose choices the task cannot produce is refused, naming its line."""

from __future__ import annotations

import json
import re

import pytest

from graphstore import open_store
from graphtasks.experiments.api import run_and_record
from graphtasks.experiments.psych101 import (
    PromptsError,
    export_prompts,
    import_prompts,
    read_prompts,
    write_prompts,
)
from graphtasks.experiments.spec import parse_spec
from graphtasks.experiments.text_participants import run_text_participant

OPTION = re.compile(r"^  ([A-Z]{1,2})(?::|$)", re.M)


def first_alphabetically(messages):
    asked = [m["content"] for m in messages if m["role"] == "user" and OPTION.search(m["content"])]
    return f"<<{min(OPTION.findall(asked[-1]))}>>"


def test_text_sessions_round_trip_through_prompts_jsonl(tmp_path):
    path = tmp_path / "prompts.jsonl"
    with open_store(tmp_path / "s.lbug") as store:
        runs = run_text_participant(store, first_alphabetically, "rewardgym/two-step", "rule", seeds=(5, 6),
                                    episodes=8, name="rule")
        lines = export_prompts(store, "rule")
        assert write_prompts(lines, path) == 2
        imported = import_prompts(store, read_prompts(path), "rewardgym/two-step", "reimported", str(path))
        again = export_prompts(store, "reimported")
    assert [len(CHOICES.findall(line["text"])) for line in lines] == [len(r.trials) for r in runs] == [16, 16]
    assert lines[0]["text"].count("<<") == 16 and "You choose <<" in lines[0]["text"]
    assert [line["seed"] for line in lines] == [5, 6] and all(len(line["RTs"]) == 16 for line in lines)
    # the prompts the participant read are the prompts written
    assert all(t.prompt in lines[0]["text"] for t in runs[0].trials)
    assert [r.status for r in imported] == ["completed", "completed"]
    assert [line["text"] for line in again] == [line["text"] for line in lines]
    assert [line["RTs"] for line in again] == [line["RTs"] for line in lines]
    assert [line["participant"] for line in again] == [line["participant"] for line in lines] == ["rule run 0",
                                                                                                  "rule run 1"]


CHOICES = re.compile(r"<<([^<>]+)>>")


def test_agents_runs_export_as_the_text_view_reads_them(tmp_path):
    spec_text = ('[experiment]\nname = "agents"\ntasks = ["rewardgym/two-step"]\nseeds = 2\n'
                 '[[agents]]\nname = "q"\n[[phases]]\nname = "trials"\nepisodes = 6\n')
    location = str(tmp_path / "a.lbug")
    run_and_record(parse_spec(spec_text), spec_text, store=location, workers=1, batched=False)
    with open_store(location) as store:
        lines = export_prompts(store, "agents")
    assert len(lines) == 2 and all(line["text"].count("<<") == 12 for line in lines)
    assert all("RTs" not in line for line in lines)  # agents take no time
    assert lines[0]["text"] != lines[1]["text"]  # two seeds: two namings of the options


def test_a_line_whose_choices_the_task_cannot_produce_is_refused_naming_it(tmp_path):
    path = tmp_path / "prompts.jsonl"
    with open_store(tmp_path / "s.lbug") as store:
        run_text_participant(store, first_alphabetically, "rewardgym/two-step", "rule", seeds=(1,), episodes=3,
                             name="rule")
        line = export_prompts(store, "rule")[0]
        good = json.dumps(line)
        choices = CHOICES.findall(line["text"])
        pieces = line["text"].split("<<")  # the third choice made a name no option has
        pieces[3] = "QQ>>" + pieces[3].split(">>", 1)[1]
        bad = dict(line, text="<<".join(pieces))
        assert CHOICES.findall(bad["text"]) == choices[:2] + ["QQ"] + choices[3:]
        short = dict(line, text=line["text"].rsplit("<<", 1)[0])
        path.write_text(good + "\n" + json.dumps(bad) + "\n")
        with pytest.raises(PromptsError, match=r"prompts.jsonl: line 2: choice 3 <<QQ>> is not one "
                                               r"rewardgym/two-step can produce there"):
            import_prompts(store, read_prompts(path), "rewardgym/two-step", "bad", "prompts.jsonl")
        path.write_text(json.dumps(short) + "\n")
        with pytest.raises(PromptsError, match=r"line 1: the line's last choices end inside an episode"):
            import_prompts(store, read_prompts(path), "rewardgym/two-step", "short", "prompts.jsonl")
        path.write_text("{not json\n")
        with pytest.raises(PromptsError, match=r"line 1: not JSON"):
            read_prompts(path)
        assert store.cypher("MATCH (x:Experiment) WHERE x.name IN ['bad', 'short'] RETURN count(x)").rows == [[0]]


def test_the_command_line_exports_and_imports(tmp_path, capsys):
    from graphtasks.cli import main

    location = str(tmp_path / "c.lbug")
    with open_store(location) as store:
        run_text_participant(store, first_alphabetically, "rewardgym/two-step", "rule", seeds=(2,), episodes=4,
                             name="rule")
    out = str(tmp_path / "p.jsonl")
    assert main(["--store", location, "participants", "export", "rule", "-o", out]) == 0
    assert f"wrote 1 participants (8 choices) to {out}" in capsys.readouterr().out
    assert main(["--store", location, "participants", "import", out, "--task", "rewardgym/two-step",
                 "--name", "back"]) == 0
    assert "recorded 1 sessions (8 trials) of rewardgym/two-step as experiment 'back'" in capsys.readouterr().out
    (tmp_path / "bad.jsonl").write_text('{"text": "no choices here"}\n')
    assert main(["--store", location, "participants", "import", str(tmp_path / "bad.jsonl"), "--task",
                 "rewardgym/two-step", "--name", "bad"]) == 2
    assert "bad.jsonl: line 1: no choice marked <<...>>" in capsys.readouterr().err
