"""Schema fragment of browser sessions (entry point `graphtasks.schema: serve`).

A session served by `graphtasks serve` is recorded with the experiment records' own types (a
`Run` of a `Participant`, its `Episode`s and `Trial`s); this fragment only adds optional
properties to them: what the browser measured on each trial, and how the session was reached.
Runs of agents leave them empty.
"""

from __future__ import annotations

from graphstore.schema import Property, Schema


def add_schema(s: Schema) -> None:
    s.add_node(
        "Trial",
        [
            Property("rt", "float", False, "browser: milliseconds from the screen's display to the key press"),
            Property("shown_ms", "float", False, "browser: performance.now() when the screen was displayed"),
            Property("pressed_ms", "float", False, "browser: performance.now() at the key press"),
            Property("key", "str", False, "browser: the key pressed"),
            Property("timeouts", "int", False, "browser: 'too slow' screens shown before this choice"),
            Property("server_rt", "float", False, "server: ms from sending the screen to receiving the choice"),
            Property("received_at", "str", False, "server: UTC time the choice arrived"),
            Property("prompt", "str", False, "text participant: the text shown (gym_bridge.text)"),
            Property("answer", "str", False, "text participant: the answer given (its last try)"),
            Property("tries", "int", False, "text participant: answers asked for until one named an option"),
        ],
        shared=True,
    )
    s.add_node(
        "Run",
        [
            Property("token_hash", "str", False, "browser session: SHA-256 of its session token"),
            Property("consented_at", "str", False, "browser session: UTC time consent was given"),
            Property("completion_code", "str", False, "browser session: the code shown at the end"),
            Property("check_attempts", "int", False, "browser session: comprehension check attempts"),
            Property("checks_passed_at", "str", False, "browser session: UTC time every check was answered right"),
        ],
        shared=True,
    )
    s.add_node(
        "Participant",
        [
            Property("pid_hash", "str", False, "browser session: hash of the URL's participant id (e.g. PROLIFIC_PID)"),
            Property("study_hash", "str", False, "browser session: hash of the URL's study id"),
            Property("session_hash", "str", False, "browser session: hash of the URL's session id"),
        ],
        shared=True,
    )
