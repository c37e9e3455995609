"""Choices of a simulated agent: what parameter and model recovery fit back."""

from __future__ import annotations

import dataclasses
from typing import Any

from .behaviour import Choices


def simulate(task_id: str, agent: str, settings: dict[str, Any], trials: int, seed: int, store: Any = None) -> Choices:
    """`trials` episodes of `agent` with `settings` on `task_id`, seeded; every step recorded.

    A simulated participant is a run of the one episode loop (`graphtasks.experiments.runs`),
    with the same seed tree as `graphtasks run` and an experiment's cell of that seed.
    Fitting simulated choices checks that a model's settings can be recovered.

    Parameters
    ----------
    task_id : str
        The task (built in, or in `store`).
    agent : str
        The agent's name (`gym_bridge.agents.make_agent`).
    settings : dict
        Its settings; kept as the choices' `truth`.
    trials : int
        The number of episodes.
    seed : int
        The run's seed.
    store : GraphStore or str, optional
        Where the task is read (None: the default store).

    Returns
    -------
    Choices
        Every step, in order, with the source ``"simulated <agent> seed <seed>"``.

    Raises
    ------
    ExperimentSpecError
        An unknown task or agent, or a bad setting, naming it.

    Examples
    --------
    >>> from graphtasks.fitting import simulate
    >>> choices = simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=20, seed=1, store=":memory:")
    >>> len(choices), choices.trials, choices.source, choices.truth["lr"]
    (40, 20, 'simulated q seed 1', 0.5)
    """
    if "rt" in settings:  # a response-time model: its response model chooses and times each choice
        from .rt import simulate_rt

        return simulate_rt(task_id, agent, settings, trials, seed, store)
    from graphtasks.experiments.runs import cells, play_run
    from graphtasks.experiments.spec import single_run_spec
    from graphtasks.experiments.versions import prepare_versions

    spec = dataclasses.replace(single_run_spec(task_id, agent, seed, trials, settings, store=store), record="steps")
    (cell,) = cells(spec)
    steps: list[tuple[int, int, float, int, bool]] = []
    for played in play_run(spec, cell, prepare_versions(spec, store)):
        episode = played.episode
        for i, (state, action, reward, next_state, _) in enumerate(episode.steps or ()):
            steps.append((state, action, reward, next_state, i == episode.length - 1))
    return Choices.from_steps(task_id, steps, f"simulated {agent} seed {seed}", truth={"agent": agent, **settings})
