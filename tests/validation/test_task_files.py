"""Task JSON files: non-finite numbers, quoted targets and wrongly typed fields are refused with the file's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks import build_from_file
from tasks.data import TaskFileError

BASE = {"graph": {"0": [1], "1": []}, "rewards": {"1": 1}}


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"graph": {"0": [1], "1": []}, "rewards": {"1": {"kind": "fixed", "values": [Infinity]}}}', "finite"),
        ('{"graph": {"0": [1], "1": []}, "rewards": {"1": {"kind": "pseudorandom", "values": [1, -Infinity]}}}',
         "finite"),
        ('{"graph": {"0": [1], "1": []}, "rewards": {"1": {"kind": "fixed", "values": [NaN]}}}', "finite"),
        ('{"graph": {"0": [1], "1": []}, "rewards": {"1": 1e400}}', "finite"),
        ('{"graph": {"0": [1], "1": []}, "rewards": {"1": {"kind": "drifting", "values": [1, 0], "sd": Infinity}}}',
         "sd"),
        ('{"graph": {"0": [1], "1": []}, "conditions": {"c": {"reward": Infinity}}}', "finite"),
        ('{"graph": {"0": ["1"], "1": []}}', "string '1'"),
        ('{"graph": {"0": {"0": "1"}, "1": []}}', "string '1'"),
        ('{"graph": {"0": {"targets": ["1", 0], "p": 0.5}, "1": []}}', "string '1'"),
        ('{"graph": {"0": [1], "1": []}, "names": ["a", "b"]}', "'names' must be a JSON object"),
        ('{"graph": {"0": [1], "1": []}, "rewards": [1]}', "'rewards' must be a JSON object"),
        ('{"graph": {"0": [1], "1": []}, "conditions": [1]}', "'conditions' must be a JSON object"),
        ('{"graph": {"0": [1], "1": []}, "schedule": [1]}', "'schedule' must be a JSON object"),
        ('{"graph": {"0": [1], "1": []}, "names": {"0": 5}}', "names[0]"),
        ('{"graph": {"0": [1], "1": []}, "start": true}', "'start'"),
    ],
)
def test_bad_task_file_is_refused_naming_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "task.json"
    path.write_text(text)
    with pytest.raises(TaskFileError) as info:
        build_from_file(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert expected in message


def test_string_node_and_action_keys_stay_accepted(tmp_path: Path) -> None:
    """JSON object keys are strings by nature; only targets (values) must be integers."""
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"graph": {"0": {"0": 1, "1": 2}, "1": [], "2": []}, "rewards": {"1": 2.5}}))
    graph = build_from_file(path)
    assert graph.task_id == "user/task" and graph.count("State") == 3 and len(list(graph.edges("MOVE"))) == 2
