"""Small recurrent models (issue 38, part 4): a GRU read from the same Choices as the agents
(previous action one-hot, previous reward, state one-hot), its softmax over the offered actions
only, checked against a GRU written here in numpy; trained with JAX per participant or shared,
seeded, and scored on the same folds as the RL models."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("jax")

from graphtasks.fitting import Choices, cross_validate, simulate, task_shape  # noqa: E402
from graphtasks.fitting.behaviour import BehaviourError  # noqa: E402
from graphtasks.fitting.cv import make_folds  # noqa: E402
from graphtasks.fitting.neural import (  # noqa: E402
    GRUModel,
    gru_heldout,
    init_params,
    inputs_of,
    make_batch,
    sequence_log_probs,
)
from graphtasks.fitting.shape import TaskShape  # noqa: E402

TASK = "rewardgym/two-step"


def test_inputs_are_the_previous_action_and_reward_and_the_state():
    steps = [(0, 1, 0.0, 2, False), (2, 0, 1.0, 0, True), (0, 0, 0.0, 1, False), (1, 1, 0.0, 0, True)]
    choices = Choices.from_steps("toy", steps)
    shape = TaskShape("toy", 3, 2, ((0, 1), (0, 1), (0,)))
    x, offered = inputs_of(choices, shape)
    # columns: previous action (2), previous reward (1), state (3)
    assert x.tolist() == [[0, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 1], [1, 0, 1, 1, 0, 0], [1, 0, 0, 0, 1, 0]]
    assert offered.tolist() == [[True, True], [True, False], [True, True], [True, True]]


def reference_log_probs(params: dict, x: np.ndarray, offered: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """A GRU (PyTorch's equations) in numpy, step by step."""
    p = {k: np.asarray(v, dtype=float) for k, v in params.items()}
    units = p["wh"].shape[0]
    h, out = np.zeros(units), []
    for t in range(len(x)):
        gx, gh = x[t] @ p["wx"] + p["b"], h @ p["wh"]
        r = 1 / (1 + np.exp(-(gx[:units] + gh[:units])))
        z = 1 / (1 + np.exp(-(gx[units:2 * units] + gh[units:2 * units])))
        n = np.tanh(gx[2 * units:] + r * (gh[2 * units:] + p["bhn"]))
        h = (1 - z) * n + z * h
        logits = h @ p["wo"] + p["bo"]
        allowed = np.flatnonzero(offered[t])
        top = logits[allowed].max()
        log_norm = top + np.log(np.exp(logits[allowed] - top).sum())
        out.append(logits[actions[t]] - log_norm if offered[t, actions[t]] else -np.inf)
    return np.array(out)


@pytest.mark.slow
def test_the_network_is_a_gru_over_the_offered_actions():
    import jax

    steps = [(0, 1, 0.0, 2, False), (2, 0, 1.0, 0, True), (0, 0, 0.0, 1, False), (1, 1, 0.0, 0, True)] * 3
    choices = Choices.from_steps("toy", steps)
    shape = TaskShape("toy", 3, 2, ((0, 1), (0, 1), (0,)))
    x, offered = inputs_of(choices, shape)
    params = init_params(jax.random.PRNGKey(3), 5, x.shape[1], 2)
    params = {k: v * 3 for k, v in params.items()}  # larger weights: saturating gates are compared too
    got = np.asarray(sequence_log_probs(params, x, offered, choices.actions))
    want = reference_log_probs(params, x, offered, choices.actions)
    assert np.allclose(got, want, atol=1e-5)
    assert np.all(got[choices.states == 2] == 0.0)  # state 2 offers one action: probability 1


@pytest.mark.slow
def test_training_is_seeded_and_scored_on_the_same_folds_as_the_agents():
    people = [simulate(TASK, "hybrid", {"lr": 0.5, "beta": 8.0, "w": 0.9}, trials=30, seed=s) for s in range(3)]
    model = GRUModel(3, steps=40)
    folds = make_folds(people, "block", 2, seed=0)
    shapes = [[task_shape(TASK)] for _ in people]
    sessions = [[c] for c in people]
    first = gru_heldout(model, sessions, shapes, folds, seed=1)
    assert first.shape == (3, 2) and np.all(first < 0)
    assert np.array_equal(first, gru_heldout(model, sessions, shapes, folds, seed=1))
    assert not np.array_equal(first, gru_heldout(model, sessions, shapes, folds, seed=2))
    result = cross_validate(["q", GRUModel(3, shared=True, steps=40)], people, by="block", folds=2, seed=0, starts=1)
    assert sorted(result.models) == ["gru-3-shared", "q"]
    assert result.of("gru-3-shared").kind == "gru" and result.of("gru-3-shared").settings["units"] == 3
    assert sum(result.folds.choices()) == 180


@pytest.mark.slow
def test_a_trained_network_predicts_held_out_choices_better_than_chance():
    """A participant who always repeats its first-stage choice after a reward and switches after none."""
    steps = []
    rng = np.random.default_rng(0)
    action = 0
    for _ in range(120):
        reward = float(rng.random() < 0.5)
        steps += [(0, action, 0.0, 1 + action, False), (1 + action, 0, reward, 0, True)]
        action = action if reward else 1 - action
    choices = Choices.from_steps(TASK, steps)
    batch = make_batch([[choices]], [[task_shape(TASK)]])
    folds = make_folds([choices], "block", 2, seed=0)
    from graphtasks.fitting.neural import fold_masks, train_and_score

    kept, held = fold_masks(batch, folds)
    scored, _ = train_and_score(GRUModel(4, steps=150, learning_rate=0.05), batch, kept, held, seed=0)
    assert scored.sum() / len(choices) > np.log(0.5) + 0.1, scored


def test_refusals_are_one_line():
    people = [simulate(TASK, "q", {"lr": 0.5, "beta": 5.0}, trials=10, seed=s) for s in range(4)]
    with pytest.raises(BehaviourError, match="cannot score a participant it never saw .* use gru-2-shared"):
        cross_validate(["gru-2"], people, by="participant", folds=2)
    with pytest.raises(BehaviourError, match="units: expected a whole number from 2 to 16"):
        GRUModel(1)


def test_without_jax_the_command_names_the_extra(tmp_path):
    code = ("import sys; sys.modules['jax'] = None\n"
            "from graphtasks.cli import main\n"
            "sys.exit(main(['--store', sys.argv[1], 'fit', 'cv', 'lab', '--models', 'q,gru-4']))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "store.lbug")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "graphtasks: error: gru-4 needs JAX: pip install 'graphtasks[bayes]'"]
