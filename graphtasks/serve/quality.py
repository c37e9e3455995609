"""Per-session quality flags of browser sessions: evidence for a researcher's decision, not a verdict.

Each trial a page posts carries what the browser saw while it was shown (`TELEMETRY`: window
blurs and the time away, the page hidden, full screen left, pastes, auto-repeated keys, and
whether the browser says it is automated); each session's Run counts its attention-check
answers. `session_quality` turns a session's trials and Run into one row of numbers and the
names of the flags they raise (`FLAGS`, thresholds in `Thresholds`). A flag says a pattern is
there; it does not say why (a slow network, a phone call, a careful person with regular
timing), and nothing is rejected or hidden because of one: the dashboard and the exports show
them beside the data, and the researcher decides (docs/participants.md, "Data quality").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

# what the page counts per trial: name, type, the largest value taken
TELEMETRY: dict[str, tuple[type, float]] = {
    "blurs": (int, 10**6), "away_ms": (float, 8.64e7), "hidden": (int, 10**6), "fullscreen_exits": (int, 10**6),
    "pastes": (int, 10**6), "key_repeats": (int, 10**6), "webdriver": (bool, 1),
}

FLAGS = {
    "too_fast": "at least `fast_share` of the trials have a response time under `fast_ms`",
    "long_absence": "on at least one trial the window was out of focus or hidden for `absence_ms` or more",
    "same_key_run": "`same_run` or more responses in a row gave the same key (or the same button)",
    "failed_checks": "an attention check was answered wrong, or a check that was due was not answered",
    "automation": "a paste (no screen takes text), the browser saying it is automated (navigator.webdriver), or "
                  "response times as regular as a program's (coefficient of variation under `regular_cv` over "
                  "`regular_min` trials or more)",
}


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of the quality flags (see `FLAGS`).

    Parameters
    ----------
    fast_ms : float
        A response time under this is too fast to have followed the stimulus (150 ms: below the
        fastest choice response times people make to a visual stimulus).
    fast_share : float
        The share of a session's trials under `fast_ms` that raises `too_fast`.
    absence_ms : float
        Time away from the page on one trial that raises `long_absence` (30 s).
    same_run : int
        Identical responses in a row that raise `same_key_run` (20; a grid walk along a corridor
        may make long runs: read it with the task in mind).
    regular_cv : float
        Response times' coefficient of variation (sd / mean) below which they look programmed.
    regular_min : int
        Trials needed before `regular_cv` is judged.

    Examples
    --------
    >>> from graphtasks.serve.quality import Thresholds
    >>> Thresholds().fast_ms, Thresholds().absence_ms, Thresholds().same_run
    (150.0, 30000.0, 20)
    """

    fast_ms: float = 150.0
    fast_share: float = 0.10
    absence_ms: float = 30_000.0
    same_run: int = 20
    regular_cv: float = 0.05
    regular_min: int = 10


QUALITY_COLUMNS = (
    "flags", "n_flags", "fast_trials", "longest_same", "away_s", "blurs", "hidden", "fullscreen_exits", "pastes",
    "key_repeats", "webdriver", "rt_cv", "attention_failures", "attention_failed_twice", "checks_missed",
    "inputs", "resolution_ms", "isolated",
)


def session_quality(trials: Sequence[Mapping[str, Any]], run: Mapping[str, Any], due_checks: int = 0,
                    thresholds: Thresholds = Thresholds()) -> dict[str, Any]:
    """One session's quality row: its numbers (`QUALITY_COLUMNS`) and the flags they raise.

    Parameters
    ----------
    trials : sequence of mappings
        The session's trials in order, each with the Trial's browser properties (`rt`, `key`,
        `input`, `timer_resolution_ms`, `isolated` and the `TELEMETRY` counts; missing ones count
        as none).
    run : mapping
        The session's Run (`attention_done`, `attention_failures`, `attention_failed_twice`).
    due_checks : int
        Attention checks the study had placed before the trials done so far.
    thresholds : Thresholds
        The flags' thresholds.

    Returns
    -------
    dict
        `flags` (the raised flags' names, comma-separated, "" for none), `n_flags`, and the
        numbers behind them.

    Examples
    --------
    >>> from graphtasks.serve.quality import session_quality
    >>> trials = [{"rt": 90.0, "key": "f"}, {"rt": 600.0, "key": "f", "pastes": 1}]
    >>> row = session_quality(trials, {"attention_failures": 1, "attention_done": 1}, due_checks=1)
    >>> row["flags"], row["fast_trials"], row["pastes"]
    ('too_fast,failed_checks,automation', 1, 1)
    """
    rts = [float(t["rt"]) for t in trials if _number(t.get("rt"))]
    fast = sum(rt < thresholds.fast_ms for rt in rts)
    longest = run_length(_response(t) for t in trials)
    away = [float(t.get("away_ms") or 0.0) for t in trials]
    totals = {name: sum(int(t.get(name) or 0) for t in trials)
              for name in ("blurs", "hidden", "fullscreen_exits", "pastes", "key_repeats")}
    webdriver = any(bool(t.get("webdriver")) for t in trials)
    cv = None
    if len(rts) >= 2:
        mean = sum(rts) / len(rts)
        sd = math.sqrt(sum((r - mean) ** 2 for r in rts) / (len(rts) - 1))
        cv = round(sd / mean, 4) if mean > 0 else None
    failures = int(run.get("attention_failures") or 0)
    twice = int(run.get("attention_failed_twice") or 0)
    missed = max(0, int(due_checks) - int(run.get("attention_done") or 0))
    inputs = sorted({str(t["input"]) for t in trials if t.get("input")})
    resolutions = [float(t["timer_resolution_ms"]) for t in trials if _number(t.get("timer_resolution_ms"))]
    isolated = [bool(t["isolated"]) for t in trials if t.get("isolated") is not None]
    raised = []
    if rts and fast / len(rts) >= thresholds.fast_share:
        raised.append("too_fast")
    if any(a >= thresholds.absence_ms for a in away):
        raised.append("long_absence")
    if longest >= thresholds.same_run:
        raised.append("same_key_run")
    if failures or missed:
        raised.append("failed_checks")
    if totals["pastes"] or webdriver or (cv is not None and len(rts) >= thresholds.regular_min
                                         and cv < thresholds.regular_cv):
        raised.append("automation")
    return {
        "flags": ",".join(raised), "n_flags": len(raised), "fast_trials": fast, "longest_same": longest,
        "away_s": round(sum(away) / 1000.0, 3), **totals, "webdriver": webdriver, "rt_cv": cv,
        "attention_failures": failures, "attention_failed_twice": twice, "checks_missed": missed,
        "inputs": ",".join(inputs), "resolution_ms": min(resolutions) if resolutions else None,
        "isolated": all(isolated) if isolated else None,
    }


def study_quality(store: Any, study: Any, thresholds: Thresholds = Thresholds()) -> list[dict[str, Any]]:
    """Every browser session of a study, from its store (the server need not run): one row per
    session, the dashboard's and `/researcher/sessions.csv`'s flags and numbers.

    Parameters
    ----------
    store : GraphStore
        The store the study's server wrote.
    study : Study
        The study (`graphtasks.serve.study.load_study`): its experiment's name and attention checks.
    thresholds : Thresholds
        The flags' thresholds.

    Returns
    -------
    list of dict
        Per session, in run order: `run`, `participant`, `status`, `trials`, then `QUALITY_COLUMNS`.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.serve.quality import study_quality
    >>> from graphtasks.serve.study import load_study
    >>> with open_store(":memory:", "w") as store:
    ...     study_quality(store, load_study("rewardgym/two-step", episodes=2))
    []
    """
    from graphtasks.experiments.ids import experiment_uid

    names = ("rt", "key", "action", "input", "timer_resolution_ms", "isolated", *TELEMETRY)
    runs = store.cypher(
        "MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.owner = $uid AND r.token_hash IS NOT NULL "
        "RETURN r.uid, r.index, p.participant_id, r.status, r.attention_done, r.attention_failures, "
        "r.attention_failed_twice ORDER BY r.index", {"uid": experiment_uid(study.spec.name)}).rows
    trials: dict[str, list[dict[str, Any]]] = {row[0]: [] for row in runs}
    for uid, *values in store.cypher(
        "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.uid IN $runs RETURN r.uid, "
        + ", ".join(f"t.{n}" for n in names) + " ORDER BY r.uid, e.phase_index, e.index, t.step",
        {"runs": list(trials)},
    ).rows:
        trials[uid].append(dict(zip(names, values)))
    out = []
    for uid, index, participant, status, done, failures, twice in runs:
        mine = trials[uid]
        due = sum(after <= len(mine) for after, *_ in study.attention_checks)
        run = {"attention_done": done, "attention_failures": failures, "attention_failed_twice": twice}
        out.append({"run": index, "participant": participant, "status": status, "trials": len(mine),
                    **session_quality(mine, run, due, thresholds)})
    return out


def run_length(values: Iterable[Any]) -> int:
    """The longest run of equal values in a row (None breaks a run).

    Examples
    --------
    >>> from graphtasks.serve.quality import run_length
    >>> run_length("ffjfff"), run_length([]), run_length([None, None])
    (3, 0, 0)
    """
    best = length = 0
    last: Any = None
    for value in values:
        length = length + 1 if value is not None and value == last else (1 if value is not None else 0)
        last = value
        best = max(best, length)
    return best


def _response(trial: Mapping[str, Any]) -> Any:
    key = trial.get("key")
    return key if key is not None else trial.get("action")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
