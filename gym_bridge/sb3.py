"""Stable-Baselines3 on the native vector envs: `to_sb3` wraps one as an SB3 `VecEnv`.

SB3 takes only its own `stable_baselines3.common.vec_env.VecEnv` as a vector env, and its
rules differ from gymnasium's: `step` returns (obs, rewards, dones, infos) with one info
dict per copy, and a copy that ends is reset in the same step: the returned observation is
the next episode's first, the last one is in `infos[i]["terminal_observation"]`, and
`infos[i]["TimeLimit.truncated"]` says whether the episode was cut by its length limit
rather than ended by the task. The native envs (`gym_bridge.vector`) reset in gymnasium's
ways (`metadata["autoreset_mode"]`); the adapter converts each:

- SAME_STEP: the step already returns the start observations; the final ones come from
  `info["final_obs"]`, their infos from `info["final_info"]`.
- NEXT_STEP (the default) and DISABLED: the adapter resets the copies that ended at once,
  with `reset(options={"reset_mask": ended})`, and returns their start observations; the
  native env then has nothing left to reset on the next step, so no action is ignored.

Stable-Baselines3 is the optional extra `sb3`; it is imported only when `to_sb3` is called,
so `import gym_bridge` never needs it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

INSTALL = "pip install 'graphtasks[sb3]'"


def to_sb3(vector_env: VectorEnv) -> Any:
    """Wrap a native vector env (or any gymnasium vector env) as a Stable-Baselines3 `VecEnv`.

    The result steps the vector env itself (no copy of it, no per-copy Python env): SB3's
    `reset`, `step_async`/`step_wait`, `seed`, `set_options`, `get_attr`, `set_attr`,
    `env_method`, `env_is_wrapped` and `close` all act on it. Rules:

    - Ended copies: the step returns the next episode's first observation; the last one is
      in `infos[i]["terminal_observation"]`, and every info has `"TimeLimit.truncated"`
      (truncated and not terminated), whichever autoreset mode the vector env has.
    - Infos: gymnasium's one dict of batched arrays becomes one dict per copy (an entry
      with a `"_key"` mask only for the copies it marks; nested dicts the same way).
      Rewards are float32, dones bool, as in SB3's own `DummyVecEnv`.
    - Seeds: the batch has one generator, so `seed(s)` then `reset()` reseeds it with `s`
      (SB3 gives copy i the seed `s + i`; the native env draws for all copies from `s`).
    - Options (`set_options`): one dict for the whole batch, as the vector env's `reset`
      takes them; per-copy options go inside it as lists (graph tasks' `condition`).
    - Attributes and methods belong to the batch: `get_attr` and `env_method` split a
      numpy array with one row per copy into its rows (so `env_method("action_masks")`
      gives each copy's mask) and give anything else to every copy as it is; `set_attr`
      sets the batch's attribute, for all copies at once only.

    Parameters
    ----------
    vector_env : gymnasium.vector.VectorEnv
        The vector env, e.g. from `gymnasium.make_vec(id, num_envs=N)` with a `graphtasks/...`
        id. Its action space must be one SB3 can take (Discrete, MultiDiscrete, Box, ...);
        its observations arrays or dicts of arrays. A NEXT_STEP or DISABLED env must accept
        `reset(options={"reset_mask": mask})`, as every native one does.

    Returns
    -------
    stable_baselines3.common.vec_env.VecEnv
        An SB3 vector env of `vector_env.num_envs` copies, with the single-copy spaces as
        `observation_space` and `action_space`; `.vector_env` is the wrapped env.

    Raises
    ------
    ImportError
        Without Stable-Baselines3: the message names the `sb3` extra.
    ValueError
        When `vector_env` is not a gymnasium vector env.

    Examples
    --------
    Four copies of a 5 x 5 grid cut after 5 steps, all walking up (action 0) into the wall:

    >>> import gymnasium as gym
    >>> import numpy as np
    >>> import gym_bridge
    >>> from gym_bridge.sb3 import to_sb3
    >>> venv = to_sb3(gym.make_vec("graphtasks/GridEmpty-v0", num_envs=4, size="micro", max_episode_steps=5))
    >>> venv.seed(0)
    [0, 1, 2, 3]
    >>> venv.reset()
    array([40, 40, 40, 40])
    >>> for _ in range(5):
    ...     obs, rewards, dones, infos = venv.step(np.zeros(4, dtype=np.int64))
    >>> obs, dones                          # cut: each copy is back at its start
    (array([40, 40, 40, 40]), array([ True,  True,  True,  True]))
    >>> int(infos[0]["terminal_observation"]), infos[0]["TimeLimit.truncated"]
    (12, True)

    Any SB3 algorithm takes it:

    >>> from stable_baselines3 import PPO
    >>> model = PPO("MlpPolicy", venv, n_steps=16, batch_size=32, seed=0, device="cpu").learn(64)
    >>> model.num_timesteps
    64
    """
    adapter = _adapter_class()
    if not isinstance(vector_env, VectorEnv):
        raise ValueError(
            f"to_sb3: expected a gymnasium vector env (gymnasium.make_vec(...)), got {type(vector_env).__name__}"
        )
    return adapter(vector_env)


def _split(value: Any, n: int, indices: Sequence[int]) -> list[Any]:
    """A batch value for the copies `indices`: the rows of an array with n rows, else the value itself."""
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n:
        return [value[i] for i in indices]
    return [value for _ in indices]


def _per_copy(info: dict[str, Any], n: int, skip: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """gymnasium's batched info (arrays of n rows, `_key` masks, nested dicts) as n dicts."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in info.items():
        if key.startswith("_") or key in skip:
            continue
        mask = info.get(f"_{key}")
        rows = range(n) if mask is None else np.flatnonzero(mask).tolist()
        if isinstance(value, dict):
            nested = _per_copy(value, n)
            for i in rows:
                out[i][key] = nested[i]
        elif isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n:
            for i in rows:
                out[i][key] = value[i]
        elif isinstance(value, (list, tuple)) and len(value) == n:
            for i in rows:
                out[i][key] = value[i]
        else:
            for i in rows:
                out[i][key] = value
    return out


def _row(space: spaces.Space, batch: Any, i: int) -> Any:
    """Copy i's observation out of a batch, as its own object (the batch may be changed later)."""
    if isinstance(space, spaces.Dict):
        return {key: _row(sub, batch[key], i) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(_row(sub, batch[j], i) for j, sub in enumerate(space.spaces))
    item = batch[i]
    return item.copy() if isinstance(item, np.ndarray) else item


def _replace_rows(space: spaces.Space, batch: Any, source: Any, rows: np.ndarray) -> Any:
    """`batch` with the copies `rows` taken from `source` (arrays in place, tuples rebuilt)."""
    if isinstance(space, spaces.Dict):
        return {key: _replace_rows(sub, batch[key], source[key], rows) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(_replace_rows(sub, batch[j], source[j], rows) for j, sub in enumerate(space.spaces))
    if isinstance(batch, np.ndarray):
        batch[rows] = source[rows]
        return batch
    items = list(batch)  # e.g. a tuple of strings (a Text space's batch)
    for i in rows.tolist():
        items[i] = source[i]
    return type(batch)(items) if isinstance(batch, tuple) else items


@functools.cache
def _adapter_class() -> type:
    """The SB3 VecEnv subclass, made on first use (importing Stable-Baselines3 only then)."""
    try:
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError:
        raise ImportError(f"to_sb3 needs Stable-Baselines3: {INSTALL}") from None

    class NativeVecEnv(VecEnv):
        """A gymnasium vector env seen by Stable-Baselines3 (made by `gym_bridge.sb3.to_sb3`)."""

        def __init__(self, vector_env: VectorEnv) -> None:
            self.vector_env = vector_env
            mode = vector_env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
            self.autoreset_mode = AutoresetMode(mode)
            self._actions: np.ndarray | None = None
            super().__init__(vector_env.num_envs, vector_env.single_observation_space, vector_env.single_action_space)

        # -- reset and step ------------------------------------------------------------
        def reset(self) -> Any:
            seed = self._seeds[0]  # the batch's one generator takes SB3's first seed
            options = self._options[0]
            if any(option != options for option in self._options[1:]):
                raise ValueError(
                    "set_options: the vector env resets with one options dict for the batch; "
                    "put per-copy values inside it as lists"
                )
            obs, info = self.vector_env.reset(seed=seed, options=deepcopy(options) if options else None)
            self.reset_infos = _per_copy(info, self.num_envs)
            self._reset_seeds()
            self._reset_options()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            if self._actions is None:
                raise RuntimeError("step_wait() without step_async(actions)")
            actions, self._actions = self._actions, None
            obs, reward, terminated, truncated, info = self.vector_env.step(actions)
            terminated = np.asarray(terminated, dtype=bool)
            truncated = np.asarray(truncated, dtype=bool)
            dones = terminated | truncated
            ended = np.flatnonzero(dones)
            space = self.observation_space
            if self.autoreset_mode is AutoresetMode.SAME_STEP:
                infos = _per_copy(info, self.num_envs, skip=frozenset({"final_obs", "final_info"}))
                if ended.size:
                    finals = _per_copy(info["final_info"], self.num_envs) if "final_info" in info else None
                    for i in ended.tolist():
                        # the info of the step that ended; entries only the top level has (a vector
                        # wrapper's "episode") are kept; the top level's own is the reset's info
                        self.reset_infos[i] = infos[i]
                        infos[i] = {**infos[i], **finals[i]} if finals is not None else dict(infos[i])
                        infos[i]["terminal_observation"] = _row(space, info["final_obs"], i)
            else:
                infos = _per_copy(info, self.num_envs)
                if ended.size:
                    for i in ended.tolist():
                        infos[i]["terminal_observation"] = _row(space, obs, i)
                    start, start_info = self.vector_env.reset(options={"reset_mask": dones})
                    obs = _replace_rows(space, obs, start, ended)
                    reset_infos = _per_copy(start_info, self.num_envs)
                    for i in ended.tolist():
                        self.reset_infos[i] = reset_infos[i]
            cut = (truncated & ~terminated).tolist()
            for i, info_i in enumerate(infos):
                info_i["TimeLimit.truncated"] = cut[i]
            return obs, np.asarray(reward, dtype=np.float32), dones, infos

        def close(self) -> None:
            self.vector_env.close()

        # -- the batch's attributes and methods -------------------------------------------
        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return _split(getattr(self.vector_env, attr_name), self.num_envs, list(self._get_indices(indices)))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            if sorted(self._get_indices(indices)) != list(range(self.num_envs)):
                raise ValueError(
                    f"set_attr({attr_name!r}): the copies share one vector env; set it for all of them (indices=None)"
                )
            setattr(self.vector_env, attr_name, value)

        def env_method(
            self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
        ) -> list[Any]:
            result = getattr(self.vector_env, method_name)(*method_args, **method_kwargs)
            return _split(result, self.num_envs, list(self._get_indices(indices)))

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            # the copies are rows of arrays, never single gymnasium envs, so no gym.Wrapper wraps one
            return [False for _ in self._get_indices(indices)]

        def __repr__(self) -> str:
            return f"NativeVecEnv({self.vector_env!r})"

    return NativeVecEnv
