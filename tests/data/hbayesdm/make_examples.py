"""Write the hBayesDM-layout example files of this folder, from seeded simulations.

hBayesDM (GPL-3) ships example data for each task; none of it is copied here. These files
have the same layout (a `subjID` column, a `trial` column and the task's documented choice and
outcome columns; `graphtasks.fitting.hbayesdm`) and are made by simulation:

- `ts_example.tsv`: 4 participants x 100 trials of the hybrid agent on rewardgym/two-step
  (graphtasks' own simulation, written by `graphtasks.fitting.hbayesdm.layout_text`);
- the others: a softmax Q-learner (learning rate 0.3, inverse temperature 3) on the task's
  usual schedule, 3 participants x 60 trials, simulated with numpy below.

    python tests/data/hbayesdm/make_examples.py     # rewrites the files; the same bytes every run
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from graphtasks.fitting import simulate  # noqa: E402
from graphtasks.fitting.hbayesdm import layout_text  # noqa: E402


def _q_learner(rng: np.random.Generator, trials: int, options: int, outcome) -> list[tuple[int, float]]:
    """(choice 0.., reward) per trial of a softmax Q-learner; `outcome(t, choice)` pays."""
    q = np.zeros(options)
    out = []
    for t in range(trials):
        p = np.exp(3.0 * (q - q.max()))
        choice = int(rng.choice(options, p=p / p.sum()))
        reward = outcome(t, choice)
        q[choice] += 0.3 * (reward - q[choice])
        out.append((choice, reward))
    return out


def _rows(header: str, participants: dict[str, list[str]]) -> str:
    return "\n".join([header, *(row for rows in participants.values() for row in rows)]) + "\n"


def main() -> None:
    rng = np.random.default_rng(2027)
    ts = [(f"{i + 1}", simulate("rewardgym/two-step", "hybrid",
                                {"lr": lr, "beta": beta, "w": w, "perseveration": 0.0}, 100, seed=i))
          for i, (lr, beta, w) in enumerate(((0.4, 4.0, 0.8), (0.6, 5.0, 0.3), (0.3, 3.0, 0.6), (0.5, 6.0, 0.9)))]
    (HERE / "ts_example.tsv").write_text(layout_text("ts", ts))

    def prl(t: int, choice: int) -> float:  # 0.8 / 0.2, reversed every 20 trials; rewards 1 and -1
        good = (t // 20) % 2
        return 1.0 if rng.random() < (0.8 if choice == good else 0.2) else -1.0

    files: dict[str, dict[str, list[str]]] = {"prl": {}, "pst": {}, "igt": {}, "bandit4arm": {}, "bandit4arm2": {}}
    for subject in ("101", "102", "103"):
        files["prl"][subject] = [f"{subject}\t{t + 1}\t{c + 1}\t{int(r)}"
                                 for t, (c, r) in enumerate(_q_learner(rng, 60, 2, prl))]
        # probabilistic selection: pairs AB, CD, EF (stimuli 1-6) paying 0.8/0.2, 0.7/0.3, 0.6/0.4
        pays = (0.8, 0.2, 0.7, 0.3, 0.6, 0.4)
        q, rows = np.zeros(6), []
        for t in range(60):
            first = 2 * int(rng.integers(3))
            pair = (first, first + 1)
            p = 1 / (1 + np.exp(-3.0 * (q[pair[0]] - q[pair[1]])))
            chose_first = bool(rng.random() < p)
            stimulus = pair[0] if chose_first else pair[1]
            reward = float(rng.random() < pays[stimulus])
            q[stimulus] += 0.3 * (reward - q[stimulus])
            rows.append(f"{subject}\t{t + 1}\t{pair[0] + 1}{pair[1] + 1}\t{int(chose_first)}\t{int(reward)}")
        files["pst"][subject] = rows

        def igt(t: int, choice: int) -> float:  # decks A, B: +100, C, D: +50; losses as in Bechara et al.
            gain = 100.0 if choice < 2 else 50.0
            loss = (250.0 if choice in (0, 2) else 1250.0) if rng.random() < (0.5 if choice in (0, 2) else 0.1) else 0.0
            if choice == 2:
                loss /= 5
            if choice == 3:
                loss /= 5
            return gain - loss

        rows = []
        for t, (c, r) in enumerate(_q_learner(rng, 60, 4, lambda t, c: igt(t, c) / 100)):
            gain = 100 if c < 2 else 50
            rows.append(f"{subject}\t{t + 1}\t{c + 1}\t{gain}\t{-int(round(gain - 100 * r))}")
        files["igt"][subject] = rows

        def gains_losses(t: int, choice: int) -> float:  # each arm: a gain of 1 w.p. g, a loss of 1 w.p. l
            g, lo = (0.6, 0.2, 0.4, 0.3)[choice], (0.3, 0.1, 0.4, 0.2)[choice]
            return float(rng.random() < g) - float(rng.random() < lo)

        rows = []
        for t, (c, r) in enumerate(_q_learner(rng, 60, 4, gains_losses)):
            rows.append(f"{subject}\t{t + 1}\t{c + 1}\t{int(r > 0)}\t{-int(r < 0)}")
        files["bandit4arm"][subject] = rows
        means = rng.uniform(20, 80, 4)

        def restless(t: int, choice: int) -> float:  # Daw et al. 2006: drifting means, points 1-100
            means[:] = np.clip(0.9836 * means + 0.0164 * 50 + rng.normal(0, 2.8, 4), 1, 100)
            return float(np.clip(round(rng.normal(means[choice], 4)), 1, 100)) / 100

        files["bandit4arm2"][subject] = [f"{subject}\t{t + 1}\t{c + 1}\t{int(round(100 * r))}"
                                         for t, (c, r) in enumerate(_q_learner(rng, 60, 4, restless))]
    headers = {"prl": "subjID\ttrial\tchoice\toutcome", "pst": "subjID\ttrial\ttype\tchoice\treward",
               "igt": "subjID\ttrial\tchoice\tgain\tloss", "bandit4arm": "subjID\ttrial\tchoice\tgain\tloss",
               "bandit4arm2": "subjID\ttrial\tchoice\toutcome"}
    for name, participants in files.items():
        (HERE / f"{name}_example.tsv").write_text(_rows(headers[name], participants))


if __name__ == "__main__":
    main()
