"""The Room task: gymnasium conformance, determinism, knowledge read from the store, the
fixed non-commonsense draw and its compatibility flag, and the paper's baseline table."""

from __future__ import annotations

import gzip
import pickle

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gym_bridge  # noqa: F401  (registers graphtasks/Room-v0)
from graphstore import open_store
from gym_bridge.room.agents import KINDS, PAPER, MemoryAgent, baseline_table
from gym_bridge.room.env import RoomEnv
from ingest.conceptnet_dump import ingest_dump
from ingest.conceptnet_snapshot import ingest_snapshot
from tasks.room import RoomKnowledgeError

from .conftest import run_cli


@pytest.fixture
def store(temp_store):
    with open_store(temp_store) as s:
        ingest_snapshot(s)
    return temp_store


def rollout(env: RoomEnv, seed: int, steps: int = 300) -> list:
    out = [env.reset(seed=seed)[0]]
    for i in range(steps):
        obs, r, term, trunc, info = env.step(i % env.action_space.n)
        out.append((obs, r, term, info["question_text"]))
    return out


@pytest.mark.parametrize("room_size", ["small", "big"])
@pytest.mark.slow
def test_check_env_on_registered_id(store, room_size):
    env = gym.make("graphtasks/Room-v0", store=store, room_size=room_size)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, *_ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)


def test_spaces_and_text(store):
    env = RoomEnv(store=store)
    assert (len(env.heads), len(env.tails), env.n_slots) == (10, 10, 10)
    assert env.action_space.n == 11  # ten locations and "no answer"
    (seen, question), info = env.reset(seed=3)
    (h, r, t, time), = seen
    text = info["observations_text"][0]
    assert text == [env.decode_head(h), "AtLocation", env.decode_tail(t), 0]
    person, obj = env.split_head(h)
    assert text[0] == f"{env.names[person]}'s {env.heads[obj]}" and text[2].startswith(env.names[person] + "'s ")
    assert info["question_text"] == (env.decode_head(question[0]), "AtLocation")
    assert "answer" not in info


@pytest.mark.slow
def test_same_seed_same_episode_and_pickle_continues_identically(store):
    a, b = RoomEnv(store=store), RoomEnv(store=store)
    assert rollout(a, 7) == rollout(b, 7)
    assert rollout(a, 7) != rollout(a, 8)
    a.reset(seed=11)
    for i in range(50):
        a.step(i % 11)
    c = pickle.loads(pickle.dumps(a))
    assert [a.step(i % 11)[:3] for i in range(2000)] == [c.step(i % 11)[:3] for i in range(2000)]


def test_episode_is_1000_questions_and_the_right_answer_scores_1(store):
    env = RoomEnv(store=store)
    env.reset(seed=0)
    total, steps = 0.0, 0
    while True:
        steps += 1
        _, r, term, trunc, _ = env.step(env.answer.upper() if steps % 2 else env.tails.index(env.answer))
        total += r
        if term or trunc:
            break
    assert steps == 1000 and total == 1000.0 and term and not trunc
    env.reset(seed=0)
    assert env.step(env.no_answer)[1] == 0.0 and env.step("nowhere")[1] == 0.0


@pytest.mark.slow
def test_locations_come_from_the_stored_triples(store, tmp_path):
    before = RoomEnv("big", store=store)
    assert "holodeck" not in before.tails
    dump = tmp_path / "more.csv.gz"
    with gzip.open(dump, "wt") as f:
        f.write("/a/[/r/AtLocation/,/c/en/laptop/,/c/en/holodeck/]\t/r/AtLocation\t/c/en/laptop\t/c/en/holodeck\t"
                '{"weight": 50.0, "dataset": "/d/test"}\n')
    with open_store(store) as s:
        ingest_dump(s, dump)
    after = RoomEnv("big", store=store)
    assert "holodeck" in after.tails
    laptop = after.heads.index("laptop")
    assert after.tails[after.knowledge.commonsense[laptop][0][0]] == "holodeck"


def test_an_empty_store_says_how_to_load_knowledge(temp_store):
    with pytest.raises(RoomKnowledgeError, match="graphtasks ingest snapshot"):
        RoomEnv(store=temp_store, load_knowledge=False)  # without it, the env loads the snapshot itself


def locations_drawn(env: RoomEnv, steps: int = 3000) -> list[tuple[int, int]]:
    env.reset(seed=5)
    seen = []
    for _ in range(steps):
        (obs, _), *_ = env.step(0)
        h, _, t, _ = obs[0]
        seen.append((env.split_head(h)[1], env.location_of_tail(t)))
    return seen


def test_noncommonsense_draw_excludes_commonsense_unless_reference_flag(store):
    fixed = RoomEnv(store=store, p_commonsense=0.0)
    cs = {h: set(tails) for h, tails in enumerate(fixed._cs_tails)}
    assert not any(loc in cs[obj] for obj, loc in locations_drawn(fixed))
    ref = RoomEnv(store=store, p_commonsense=0.0, reference_noncommonsense=True)
    hits = sum(loc in cs[obj] for obj, loc in locations_drawn(ref))
    assert 150 < hits < 450  # about one in ten (10 locations), as in room-env 0.1.5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"p_commonsense": 1.5}, "p_commonsense: expected a probability"),
        ({"room_size": "huge"}, "room_size: expected 'small' or 'big'"),
        ({"weighting_mode": "max"}, "weighting_mode"),
        ({"max_step": 0}, "max_step: expected a positive integer"),
        ({"task": "rewardgym/two-step"}, "not a Room task"),
    ],
)
def test_bad_parameters_name_the_field(store, kwargs, message):
    with pytest.raises(ValueError, match=message):
        RoomEnv(store=store, **kwargs)


def test_two_agents_see_their_own_cycles(store):
    env = RoomEnv(store=store, num_agents=2)
    check_env(env, skip_render_check=True)
    (seen, _), info = env.reset(seed=1)
    assert len(seen) == 2 and len(info["observations_text"]) == 2
    score = MemoryAgent("episodic", 16).run_episode(env)
    assert 300 < score < 1000


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.slow
def test_paper_table_at_capacity_32_within_10_percent(store, reference):
    env = RoomEnv(store=store, text_info=False, reference_noncommonsense=reference)
    table = baseline_table(lambda: env, capacities=(32,), seeds=range(5))
    for kind in KINDS:
        assert table[kind][32] == pytest.approx(PAPER[kind][32], rel=0.10), kind
    assert max(table, key=lambda k: table[k][32]) == "episodic_semantic_pretrain"
    assert table["episodic_semantic"][32] > max(table["episodic"][32], table["semantic"][32])


def test_agent_arguments_are_checked():
    with pytest.raises(ValueError, match="kind: expected one of"):
        MemoryAgent("clever", 8)
    with pytest.raises(ValueError, match="capacity"):
        MemoryAgent("episodic", 1)


def test_cli_room_baselines_loads_snapshot_when_needed(capsys):
    assert run_cli(["room", "baselines", "--capacities", "8", "--seeds", "0,1", "--agents", "episodic,semantic"]) == 0
    captured = capsys.readouterr()
    assert "loading the bundled snapshot (740 assertions)" in captured.err
    assert "episodic" in captured.out and "( 399.8)" in captured.out
    assert run_cli(["room", "baselines", "--agents", "clever"]) == 2
    assert "--agents: unknown kind(s) clever" in capsys.readouterr().err


def test_run_room_hook_for_the_run_group(store, capsys):
    import argparse

    from graphtasks.commands import room_cmd

    parser = argparse.ArgumentParser()
    parser.add_argument("--store")
    run = parser.add_subparsers().add_parser("run").add_subparsers()
    room_cmd.register_run(run)
    args = parser.parse_args(["--store", store, "run", "room", "--capacities", "32", "--seeds", "0", "--json",
                              "--agents", "episodic_semantic_pretrain"])
    assert args.func(args) == 0
    score = float(__import__("json").loads(capsys.readouterr().out)["episodic_semantic_pretrain"]["32"])
    assert 550 < score < 800


def test_weighted_mode_draws_commonsense_locations_by_weight(store):
    env = RoomEnv("big", store=store, weighting_mode="weighted")
    cat = env.heads.index("cat")
    cs = env.knowledge.commonsense[cat]
    total = sum(w for _, w in cs)
    n = 20000
    counts: dict[int, int] = {}
    for i in range(n):
        t = env._tail_for(cat, 0.0, (i + 0.5) / n)  # u_cs = 0: always commonsense
        counts[t] = counts.get(t, 0) + 1
    for t, w in cs:
        assert counts.get(t, 0) / n == pytest.approx(w / total, abs=2 / n)
    highest = RoomEnv("big", store=store)
    assert {highest._tail_for(cat, 0.0, u / 10) for u in range(10)} == {cs[0][0]}
    assert env.tails[cs[0][0]] == "lap"


def test_ansi_render_shows_the_room(store):
    env = RoomEnv(store=store, render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert text.startswith("t=0") and text.count("AtLocation") == 11 and "question:" in text
    with pytest.raises(ValueError, match="render_mode"):
        RoomEnv(store=store, render_mode="human")
