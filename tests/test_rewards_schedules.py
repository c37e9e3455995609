from collections import Counter
from itertools import pairwise

import numpy as np
import pytest

from tasks import RandomStream, make_source, reward_spec, trial_schedule
from tasks.rewards import RewardSpecError


def stream(seed=0):
    return RandomStream(np.random.default_rng(seed))


def test_fixed_and_probabilistic():
    s = stream()
    assert make_source(reward_spec(2.5)).draw(s) == 2.5
    source = make_source(reward_spec({"kind": "probabilistic", "values": [-0.5, 0, 1], "probs": [0.4, 0.2, 0.4]}))
    counts = Counter(source.draw(s) for _ in range(50_000))
    assert counts[-0.5] / 50_000 == pytest.approx(0.4, abs=0.01)
    assert counts[0.0] / 50_000 == pytest.approx(0.2, abs=0.01)


def test_drifting_stays_within_borders_and_moves():
    s = stream(1)
    source = make_source(reward_spec({"kind": "drifting", "values": [1, 0], "borders": [0.25, 0.75], "sd": 0.025}))
    source.reset(s)
    ps = []
    for _ in range(5000):
        source.draw(s)
        ps.append(source.p)
    assert 0.25 <= min(ps) and max(ps) <= 0.75
    assert np.ptp(ps) > 0.2  # it really drifts


def test_pseudorandom_deals_whole_decks_without_replacement():
    s = stream(2)
    deck = [40] * 4 + [0] * 4
    source = make_source(reward_spec({"kind": "pseudorandom", "values": deck}))
    source.reset(s)
    for _ in range(5):
        assert sorted(source.draw(s) for _ in range(8)) == sorted(deck)


def test_same_seed_same_draws():
    spec = reward_spec({"kind": "drifting", "values": [1, 0]})
    a, b = make_source(spec), make_source(spec)
    sa, sb = stream(7), stream(7)
    a.reset(sa), b.reset(sb)
    assert [a.draw(sa) for _ in range(100)] == [b.draw(sb) for _ in range(100)]


@pytest.mark.parametrize(
    "value, message",
    [
        ({"kind": "lottery", "values": [1]}, "'kind' must be one of"),
        ({"kind": "probabilistic", "values": [0, 1], "probs": [0.5]}, "one probability per value"),
        ({"kind": "probabilistic", "values": [0, 1], "probs": [0.5, 0.6]}, "sum to 1"),
        ({"kind": "drifting", "values": [1, 0], "borders": [0.8, 0.2]}, "'borders'"),
        ({"kind": "fixed", "values": ["a"]}, "'values' must hold finite numbers"),
        ({"kind": "sequence", "values": [100, 100]}, "needs 'losses'"),
        ({"kind": "sequence", "values": [100, 100], "losses": [0]}, "one loss per gain"),
        ({"kind": "sequence", "values": [100], "losses": [150]}, "written <= 0"),
        ({"kind": "walk", "values": [50, 60]}, "one value"),
        ({"kind": "walk", "values": [50], "decay": 1.5}, "'decay' must be within"),
        ({"kind": "walk", "values": [50], "noise": -1}, "'noise' must be >= 0"),
        ({"kind": "walk", "values": [50], "borders": [100, 1]}, "'borders'"),
        ({"kind": "walk", "values": [50], "rounded": 1}, "'rounded' must be true or false"),
        ({"kind": "walk", "values": [50], "drift": 1}, "unknown field"),
        ({"kind": "reversal", "values": [1, -1], "probs": [0.8, 0.2]}, "'criterion' must be a whole number"),
        ({"kind": "reversal", "values": [1, -1], "probs": [0.8], "criterion": 5}, "'probs' must be"),
        ({"kind": "reversal", "values": [1], "probs": [0.8, 0.2], "criterion": 5}, "two values"),
    ],
)
def test_bad_reward_specs_name_the_field(value, message):
    with pytest.raises(RewardSpecError, match=message):
        reward_spec(value, "rewards[3]")


def test_a_sequence_deals_its_cards_in_order_and_starts_again():
    s = stream(3)
    source = make_source(reward_spec({"kind": "sequence", "values": [100, 100, 50], "losses": [0, -150, -25]}))
    source.reset(s)
    assert [source.draw(s) for _ in range(7)] == [100, -50, 25, 100, -50, 25, 100]
    source.reset(s)  # a new session starts at the first card
    assert source.draw(s) == 100


def test_walks_decay_towards_their_center_and_all_move_when_one_pays():
    """Without noise a walk's mean after t steps is center + decay**t (start - center), exactly;
    the walks of one task step together whichever of them pays (once per trial)."""
    from tasks import make_sources
    from tasks.rewards import REWARD_KINDS

    specs = [reward_spec({"kind": "walk", "values": [v], "decay": 0.9, "center": 50, "sd": 0, "noise": 0})
             for v in (90, 10)]
    first, second = make_sources(specs)
    s = stream(4)
    first.reset(s), second.reset(s)
    paid = [first.draw(s) for _ in range(3)] + [second.draw(s)]
    assert paid == pytest.approx([90, 86, 82.4, 50 - 40 * 0.9**3])
    batch = REWARD_KINDS["walk"].batch(specs, 2)
    rng = np.random.default_rng(0)
    batch.new_session(rng, np.arange(2))
    drawn = [batch.draw(rng, np.array([0, 1]), np.array([0, 1])) for _ in range(4)]
    np.testing.assert_allclose(np.array(drawn)[:, 0], [90, 86, 82.4, 50 + 40 * 0.9**3])
    np.testing.assert_allclose(np.array(drawn)[:, 1], [10, 14, 17.6, 50 - 40 * 0.9**3])
    rounded = make_source(reward_spec({"kind": "walk", "values": [120.4], "noise": 0, "sd": 0,
                                       "borders": [1, 100], "rounded": True}))
    rounded.reset(s)
    assert rounded.draw(s) == 100.0  # clipped into the borders


def test_reversal_options_hand_over_the_lead_after_a_run_of_correct_choices():
    """With certain outcomes (probs [1, 0]) a reward is the better-or-worse flag itself: option 0
    leads until it has been chosen 3 times in a row, then option 1 does; a wrong choice breaks a
    run. The single sources and the batch agree choice by choice."""
    from tasks import make_sources
    from tasks.rewards import REWARD_KINDS

    specs = [reward_spec({"kind": "reversal", "values": [1, -1], "probs": [1, 0], "criterion": 3})] * 2
    choices = [0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0]
    expected = [1, 1, -1, 1, 1, 1, -1, 1, 1, 1, -1, 1]  # reversals after choices 6 and 10 (0-based 5 and 9)
    a, b = make_sources(specs)
    s = stream(5)
    a.reset(s), b.reset(s)
    assert [(a, b)[c].draw(s) for c in choices] == expected
    batch = REWARD_KINDS["reversal"].batch(specs, 3)
    rng = np.random.default_rng(0)
    batch.new_session(rng, np.arange(3))
    got = [batch.draw(rng, np.arange(3), np.full(3, c)).tolist() for c in choices]
    assert got == [[e] * 3 for e in expected]


def test_two_step_schedule_structure():
    spec = {"repeat": 9, "blocks": [{"counts": {"expected": 14, "unexpected": 6}, "no_repeat": ["unexpected"]}]}
    order = trial_schedule(spec, np.random.default_rng(0))
    assert len(order) == 180
    for b in range(9):
        block = order[20 * b : 20 * (b + 1)]
        assert Counter(block) == {"expected": 14, "unexpected": 6}
        assert not any(x == y == "unexpected" for x, y in zip(block, block[1:]))
    assert order == trial_schedule(spec, np.random.default_rng(0))
    assert order != trial_schedule(spec, np.random.default_rng(1))


def test_one_of_and_apart_groups():
    spec = {"blocks": [{"counts": {"a": 6, "b": 1, "c": 1}, "one_of": [["a", "b"], ["c"]], "apart": [["b", "c"]]}]}
    drawn = Counter()
    for seed in range(40):
        order = trial_schedule(spec, np.random.default_rng(seed))
        assert len(order) == 10 and Counter(order)["c"] == 2 and Counter(order)["a"] + Counter(order)["b"] == 8
        assert not any(x in "bc" and y in "bc" for x, y in pairwise(order))
        drawn[Counter(order)["b"]] += 1
    assert set(drawn) == {1, 2}  # the one_of draw picks either


def test_risk_sensitive_schedule_is_reward_gyms_trial_set():
    """rewardGym (risksensitive/core/configs.py): 3 blocks of 61 trials, 28 named conditions."""
    import tasks

    graph = tasks.build("rewardgym/risk-sensitive")
    spec = graph.task["schedule"]
    conditions = {props["name"]: props for _, props in graph.nodes("Condition")}
    assert len(conditions) == 28
    order = trial_schedule(spec, np.random.default_rng(0))
    assert len(order) == 183

    def pair(name):
        return frozenset(side for side in name.split("_") if side != "none")

    for b in range(3):
        block = order[61 * b : 61 * (b + 1)]
        pairs = Counter(pair(name) for name in block)
        for option in ("null", "save-20", "save-40", "risky-40", "risky-80"):
            assert pairs[frozenset([option])] == 5  # forced choices
        assert pairs[frozenset(["save-20", "risky-40"])] == pairs[frozenset(["save-40", "risky-80"])] == 7
        assert pairs[frozenset(["save-20", "risky-80"])] == 8
        tests = [frozenset(p.split()) for p in ("save-40 risky-40", "null save-20", "null save-40",
                                                  "null risky-40", "null risky-80", "save-20 save-40")]
        assert all(pairs[t] >= 2 for t in tests) and sum(pairs[t] for t in tests) == 14
        assert frozenset(["save-40", "risky-80"]) not in tests and len(pairs) == 5 + 3 + 6
        test_names = {n for n in conditions if pair(n) in tests}
        assert not any(x in test_names and y in test_names for x, y in pairwise(block))
        assert not any(pair(x) == pair(y) and len(pair(x)) == 1 for x, y in pairwise(block))
