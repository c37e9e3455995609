"""The compiled lane loop of `gym_bridge.compiled_lanes` (imported only where numba is installed).

Kept apart so that importing `gym_bridge` never imports numba; see `compiled_lanes` for what
the loop plays and why its numbers equal the numpy loop's.
"""

from __future__ import annotations

import numba
import numpy as np

from .vector.lanes import GOLDEN, MIX1, MIX2, TO_UNIT

S30, S27, S31, S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
ONE = np.uint64(1)


@numba.njit(cache=True, inline="always")
def uniform(key: np.uint64, counter: np.uint64) -> float:
    """Number `counter` of the lane keyed `key`, as `LaneStreams.uniform` draws it."""
    x = key + counter * GOLDEN
    x = (x ^ (x >> S30)) * MIX1
    x = (x ^ (x >> S27)) * MIX2
    x = x ^ (x >> S31)
    return float(x >> S11) * TO_UNIT


@numba.njit(cache=True, nogil=True)
def lanes_loop(  # numba compiles it for the types of the arrays it gets
    rule, q, lr, gamma, epsilon, learning, agent_keys, agent_counters, env_keys, env_counters,
               pending_state, pending_action, pending_reward, pending_next,
               move, gains, gain, warp, step_reward, collect, slip, random_start, starts, start,
               episode_length, episodes, returns, lengths, start_states, first_actions, first_states):
    n_lanes, _, n_actions = q.shape
    n_starts = starts.size
    for lane in range(n_lanes):
        akey, ac = agent_keys[lane], agent_counters[lane]
        ekey, ec = env_keys[lane], env_counters[lane]
        lane_lr, lane_gamma, lane_eps, lane_learns = lr[lane], gamma[lane], epsilon[lane], learning[lane]
        pending_state[lane] = -1  # begin_episode
        for episode in range(episodes):
            if random_start:
                ec += ONE
                pos = starts[int(np.floor(uniform(ekey, ec) * n_starts))]
            else:
                pos = start
            start_states[lane, episode] = pos
            total = 0.0
            length = 0
            if episode > 0:
                pending_state[lane] = -1
            while True:
                # act: whether to explore, then a key per action that breaks ties
                ac += ONE
                first = uniform(akey, ac)
                top = q[lane, pos, 0]
                action = 0
                ties = 1
                for a in range(1, n_actions):
                    value = q[lane, pos, a]
                    if value > top:
                        top, action, ties = value, a, 1
                    elif value == top:
                        ties += 1
                explore = first < lane_eps
                if explore or ties > 1:  # the keys decide (a lone greedy action needs none)
                    best = -2.0
                    for a in range(n_actions):
                        k = uniform(akey, ac + np.uint64(a + 1))
                        v = k if explore or q[lane, pos, a] == top else -1.0
                        if a == 0 or v > best:
                            best = v
                            action = a
                ac += np.uint64(n_actions)
                # the env's step
                moved = action
                if slip > 0.0:
                    ec += ONE
                    u1 = uniform(ekey, ec)
                    ec += ONE
                    u2 = uniform(ekey, ec)
                    if u1 < slip:
                        moved = int(np.floor(u2 * n_actions))
                target = move[moved, pos]
                reward = step_reward
                terminated = False
                if gains[target] and (collect < 0 or moved == collect):
                    reward += gain[target]
                    terminated = True
                nxt = warp[target]
                # learn
                if lane_learns:
                    if rule == 0:
                        future = 0.0
                        if not terminated:
                            future = q[lane, nxt, 0]
                            for a in range(1, n_actions):
                                if q[lane, nxt, a] > future:
                                    future = q[lane, nxt, a]
                        old = q[lane, pos, action]
                        q[lane, pos, action] = old + lane_lr * (reward + lane_gamma * future - old)
                    else:
                        if pending_state[lane] >= 0 and pending_next[lane] == pos:
                            ps, pa = pending_state[lane], pending_action[lane]
                            old = q[lane, ps, pa]
                            target_value = pending_reward[lane] + lane_gamma * q[lane, pos, action]
                            q[lane, ps, pa] = old + lane_lr * (target_value - old)
                        pending_state[lane] = -1
                        if terminated:
                            old = q[lane, pos, action]
                            q[lane, pos, action] = old + lane_lr * (reward - old)
                        else:
                            pending_state[lane] = pos
                            pending_action[lane] = action
                            pending_reward[lane] = reward
                            pending_next[lane] = nxt
                if length == 0:
                    first_actions[lane, episode] = action
                    first_states[lane, episode] = nxt
                total += reward
                length += 1
                pos = nxt
                if terminated or (episode_length > 0 and length >= episode_length):
                    break
            returns[lane, episode] = total
            lengths[lane, episode] = length
        agent_counters[lane] = ac
        env_counters[lane] = ec

