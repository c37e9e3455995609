"""Record room-env 3.0.6's RoomEnv-v1 replays for tests/room/test_room_v1.py (run with a Python
that has room-env; room-env is MIT licensed, Copyright (c) 2022 Taewoon Kim: the file written
is its output).

    python -m venv /tmp/roomenv && /tmp/roomenv/bin/pip install room-env==3.0.6
    /tmp/roomenv/bin/python tests/data/room_env/record_v1.py tests/data/room_env/v1_trajectories.json

Each case makes `RoomEnv1(des_size, seed, question_prob, allow_random_human,
allow_random_question)` and plays two episodes (two `reset()` calls: room-env seeds Python's
`random` once, when the env is made, so the second episode's questions continue its stream).
The answers come from a separate `random.Random(case index)`: the right location (peeked from
the env) with probability 0.5, else a location drawn from the configuration's sorted list.
Per episode: the first (observation, question), then per step the answer, the reward, the
next (observation, question) and whether the episode ended.
"""

from __future__ import annotations

import json
import random
import sys

from room_env.envs.room1 import RoomEnv1

CASES = [
    {"des_size": "xxs", "seed": 0, "question_prob": 1.0, "allow_random_human": False, "allow_random_question": False},
    {"des_size": "s", "seed": 1, "question_prob": 1.0, "allow_random_human": False, "allow_random_question": False},
    {"des_size": "l", "seed": 42, "question_prob": 1.0, "allow_random_human": False, "allow_random_question": False},
    {"des_size": "xs", "seed": 7, "question_prob": 0.7, "allow_random_human": False, "allow_random_question": False},
    {"des_size": "m", "seed": 3, "question_prob": 0.5, "allow_random_human": True, "allow_random_question": True},
    {"des_size": "s", "seed": 5, "question_prob": 1.0, "allow_random_human": True, "allow_random_question": False},
]


def main(out: str) -> None:
    cases = []
    for k, case in enumerate(CASES):
        env = RoomEnv1(**case)
        answers = random.Random(k)
        locations = list(env.des.object_locations)
        episodes = []
        for _ in range(2):
            (obs, question), _ = env.reset()
            steps, done = [], False
            while not done:
                if env.answer is not None and answers.random() < 0.5:
                    action = env.answer
                else:
                    action = locations[answers.randrange(len(locations))]
                (obs_next, question_next), reward, done, _, _ = env.step(action)
                steps.append([action, reward, obs_next, question_next, done])
            episodes.append({"first": [obs, question], "steps": steps})
        cases.append({"settings": case, "episodes": episodes})
    record = {
        "source": "room-env 3.0.6 (PyPI) RoomEnv-v1, MIT licence, Copyright (c) 2022 Taewoon Kim",
        "recorded_by": "tests/data/room_env/record_v1.py",
        "cases": cases,
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(record, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
