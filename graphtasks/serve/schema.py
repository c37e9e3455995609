"""Schema fragment of browser sessions (entry point `graphtasks.schema: serve`).

A session served by `graphtasks serve` is recorded with the experiment records' own types (a
`Run` of a `Participant`, its `Episode`s and `Trial`s); this fragment only adds optional
properties to them: what the browser measured on each trial, and how the session was reached.
Runs of agents leave them empty.
"""

from __future__ import annotations

from graphstore.schema import OWNER_PROPERTY, OWNER_RENAMED, Property, Schema

KEY = Property("key", "str", True, "unique edge key")


def add_schema(s: Schema) -> None:
    s.add_node(
        "Trial",
        [
            Property("rt", "float", False, "response time in milliseconds (every reader takes ms): browser: from the "
                     "screen's display to the key press; agent: its response model's draw (graphtasks.responses)"),
            Property("shown_ms", "float", False, "browser: performance.now() when the screen was displayed"),
            Property("pressed_ms", "float", False, "browser: performance.now() at the key press"),
            Property("key", "str", False, "browser: the key pressed"),
            Property("timeouts", "int", False, "browser: 'too slow' screens shown before this choice"),
            Property("server_rt", "float", False, "server: ms from sending the screen to receiving the choice"),
            Property("received_at", "str", False, "server: UTC time the choice arrived"),
            Property("prompt", "str", False, "text participant: the text shown (gym_bridge.text)"),
            Property("answer", "str", False, "text participant: the answer given (its last try)"),
            Property("tries", "int", False, "text participant: answers asked for until one named an option"),
            Property("timer_resolution_ms", "float", False, "browser: the smallest step of performance.now() seen in "
                     "the page (ms; 0.1 when the page is not cross-origin isolated, about 0.005 when it is)"),
            Property("isolated", "bool", False, "browser: the page was cross-origin isolated (crossOriginIsolated)"),
            Property("input", "str", False, "browser: what gave the response: key, touch, mouse or pen"),
            Property("blurs", "int", False, "browser: times the window lost focus while the trial was shown"),
            Property("away_ms", "float", False, "browser: ms the window was out of focus or hidden during the trial"),
            Property("hidden", "int", False, "browser: times the page became hidden (another tab, minimised)"),
            Property("fullscreen_exits", "int", False, "browser: times full screen was left during the trial"),
            Property("pastes", "int", False, "browser: paste events during the trial"),
            Property("key_repeats", "int", False, "browser: auto-repeated key presses (a key held down)"),
            Property("webdriver", "bool", False, "browser: navigator.webdriver (the browser says it is automated)"),
        ],
        shared=True,
        owner=OWNER_PROPERTY,
        renamed=OWNER_RENAMED,
    )
    s.add_node(
        "Run",
        [
            Property("token_hash", "str", False, "browser session: SHA-256 of its session token"),
            Property("consented_at", "str", False, "browser session: UTC time consent was given"),
            Property("completion_code", "str", False, "browser session: the code shown at the end"),
            Property("check_attempts", "int", False, "browser session: comprehension check attempts"),
            Property("checks_passed_at", "str", False, "browser session: UTC time every check was answered right"),
            Property("attention_done", "int", False, "browser session: attention checks finished (passed, or failed "
                     "twice)"),
            Property("attention_attempt", "int", False, "browser session: wrong answers to the current attention "
                     "check"),
            Property("attention_failures", "int", False, "browser session: wrong answers to attention checks"),
            Property("attention_failed_twice", "int", False, "browser session: attention checks answered wrong "
                     "twice"),
        ],
        shared=True,
        owner=OWNER_PROPERTY,
        renamed=OWNER_RENAMED,
    )
    s.add_node(
        "Participant",
        [
            Property("pid_hash", "str", False, "browser session: hash of the URL's participant id (e.g. PROLIFIC_PID)"),
            Property("study_hash", "str", False, "browser session: hash of the URL's study id"),
            Property("session_hash", "str", False, "browser session: hash of the URL's session id"),
        ],
        shared=True,
        owner=OWNER_PROPERTY,
        renamed=OWNER_RENAMED,
    )
    s.add_node(
        "StudyEvent",
        [
            Property("kind", "str", True, "what happened: attention_check (an answer to one); a screen the page "
                     "showed besides the trials: consent, instructions, banner (a phase's start), break"),
            Property("at", "str", True, "server: UTC time it was recorded"),
            Property("trial", "int", True, "the session's trials done when it happened"),
            Property("check", "int", False, "attention_check: the check's number in the study, from 0"),
            Property("answer", "int", False, "attention_check: the option chosen, from 0"),
            Property("passed", "bool", False, "attention_check: the answer was the instructed one"),
            Property("attempt", "int", False, "attention_check: 1 for the first answer, 2 for the second"),
            Property("rt", "float", False, "browser: ms from the screen's display to the answer"),
            Property("input", "str", False, "browser: what gave the answer: key, touch, mouse or pen"),
            Property("onset_ms", "float", False, "screen: performance.now() when the page showed it (ms, the page's "
                     "clock, as the trials' shown_ms)"),
            Property("duration_ms", "float", False, "screen: ms from its display until the participant went on"),
            Property("page", "int", False, "screen: instructions: the page, from 0; break: the block done, from 1"),
            Property("phase_index", "int", False, "screen: the phase the session was in"),
        ],
        "Something a browser session did besides its trials (graphtasks serve), in order.",
        shared=True,
        owner=OWNER_PROPERTY,
        renamed=OWNER_RENAMED,
    )
    s.add_rel("HAS_EVENT", [("Run", "StudyEvent")], [KEY], "A browser session's events.")
