"""Record room-env 3.0.6's behaviour for tests/roommap (run with a Python that has room-env).

    python -m venv /tmp/roomenv && /tmp/roomenv/bin/pip install room-env==3.0.6
    /tmp/roomenv/bin/python tests/data/room_env/record.py tests/data/room_env      # both (about 2 min)
    /tmp/roomenv/bin/python tests/data/room_env/record.py tests/data/room_env v3   # v3 only

Writes
- v3_trajectories.json: for each v3 map shipped in data/room_env, one episode of RoomEnv3
  under a seeded action sequence: per step the action (answer, move), the reward, the agent's
  room, every object's room and the closed inner walls ("room|direction" of each room side
  that is a wall now but a door in the base map), before the first step and after each step.
- v2_counts.json: for v2 maps, 1,000 episodes of RoomEnv2 (100,000 steps, seed 0, the agent
  moving at random): after each step, how often each independent and dependent object was in
  each room, how often each dependent object was attached to each independent one (or to
  none), and how often each object was asked about.

room-env is MIT licensed (Copyright (c) 2022 Taewoon Kim); these files are its outputs.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

MOVES = ["north", "east", "south", "west", "stay"]
V3_MAPS = ["dev", "small-01", "small-02", "medium-01", "medium-02", "large-01"]  # indexes: rooms in room_names
# order, objects in static_names + moving_names order, moves in MOVES order
V2_MAPS = ["xl-different-prob", "m"]


def closed_walls(env) -> list[int]:
    out = []
    for r, room in enumerate(env.room_names):
        for k, d in enumerate(("north", "east", "south", "west")):
            if env.room_connections[room][d] == "wall" and env.base_room_connections[room][d] != "wall":
                out.append(4 * r + k)
    return out


def v3_state(env) -> list:
    """[agent's room, [room of each static then moving object], [4 * room + direction of each closed side]]."""
    index = {r: i for i, r in enumerate(env.room_names)}
    locations = {**env.static_locations, **env.moving_locations}
    return [index[env.agent_location], [index[locations[o]] for o in env.static_names + env.moving_names],
            closed_walls(env)]


def record_v3(name: str) -> dict:
    from room_env.envs.room3 import RoomEnv3

    env = RoomEnv3(room_size=name)
    rng = random.Random(12345)
    obs, _ = env.reset()
    states, actions, rewards, questions = [v3_state(env)], [], [], [obs["question"][0]]
    done = False
    while not done:
        obj = obs["question"][0]
        truth = env.static_locations.get(obj) or env.moving_locations.get(obj)
        answer = truth if rng.random() < 0.5 else rng.choice(env.room_names)
        move = rng.choice(MOVES)
        obs, reward, done, _, _ = env.step((answer, move))
        actions.append([env.room_names.index(answer), MOVES.index(move)])
        rewards.append(reward)
        states.append(v3_state(env))
        questions.append(obs["question"][0])
    names = env.static_names + env.moving_names
    return {"actions": actions, "rewards": rewards, "states": states,
            "questions": [names.index(q) for q in questions]}


def record_v2(name: str, episodes: int = 1000) -> dict:
    from room_env.envs.room2 import RoomEnv2

    env = RoomEnv2(room_size=name, seed=0)
    rng = random.Random(0)
    rooms = list(env.rooms)
    ind = [o.name for o in env.objects["independent"]]
    dep = [o.name for o in env.objects["dependent"]]
    where = {o: {r: 0 for r in rooms} for o in ind + dep}
    attached = {d: {i: 0 for i in ind + ["none"]} for d in dep}
    asked: dict[str, int] = {}
    steps = 0
    start = time.process_time()
    for _ in range(episodes):
        obs, _ = env.reset()
        done = False
        while not done:
            n_q = len(obs["questions"])
            obs, _, done, _, _ = env.step((["wall"] * n_q, rng.choice(MOVES)))
            steps += 1
            for o in env.objects["independent"]:
                where[o.name][o.location] += 1
            for o in env.objects["dependent"]:
                where[o.name][o.location] += 1
                attached[o.name][o.attached.name if o.attached is not None else "none"] += 1
            for q in obs["questions"]:
                asked[q[0]] = asked.get(q[0], 0) + 1
    seconds = time.process_time() - start
    return {"steps": steps, "cpu_seconds": round(seconds, 1), "rooms": rooms, "independent": ind, "dependent": dep,
            "where": where, "attached": attached, "asked": asked}


def main(out: str, which: str = "v2 v3") -> None:
    folder = Path(out)
    v3 = {name: record_v3(name) for name in V3_MAPS}
    try:
        from room_env.envs.room3 import RoomEnv3

        RoomEnv3()
        default_error = None
    except Exception as exc:  # noqa: BLE001 - the point is to record what it raises
        default_error = f"{type(exc).__name__}: {exc}".replace(str(Path(sys.prefix)), "...")
    v3_doc = {"source": "room-env 3.0.6 (MIT, Copyright (c) 2022 Taewoon Kim), RoomEnv3, answers and moves from "
                        "random.Random(12345): the true room with probability 0.5, else a random room",
              "default_config_error": default_error, "maps": v3}
    (folder / "v3_trajectories.json").write_text(json.dumps(v3_doc, separators=(",", ":")) + "\n")
    if "v2" not in which:
        return
    v2 = {name: record_v2(name) for name in V2_MAPS}
    v2_doc = {"source": "room-env 3.0.6 (MIT, Copyright (c) 2022 Taewoon Kim), RoomEnv2(room_size=..., seed=0), "
                        "1000 episodes of 100 steps, counts after each step", "maps": v2}
    (folder / "v2_counts.json").write_text(json.dumps(v2_doc, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent), " ".join(sys.argv[2:]) or "v2 v3")
