"""`graphtasks serve STUDY`: a study (a study file or a task id) played by people in the browser,
every trial written into the store as it ends (see `graphtasks.serve`)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from .arguments import COUNT, one_line_errors
from .errors import CommandError
from .extras import require_plotting
from .lookups import require_experiment

if TYPE_CHECKING:
    from graphtasks.serve.study import Study

TOKEN_ENV = "GRAPHTASKS_RESEARCHER_TOKEN"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="serve a study to people in the browser (needs graphtasks[web])")
    parser.add_argument("study", help="a study file (an experiment spec with a [study] table) or a task id")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name people reach the server by, behind a proxy (repeatable; e.g. "
                        "study.example.org or *.example.org): requests for other names are refused")
    parser.add_argument("--request-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="a request's headers and body must arrive within this many seconds of the connection's "
                        "start (or its last answer), or the connection is closed: slow or stalled clients cannot "
                        "hold the server (default 10)")
    parser.add_argument("--keep-alive", type=float, default=5.0, metavar="SECONDS",
                        help="an idle connection is closed after this many seconds (default 5)")
    parser.add_argument("--max-connections", type=int, default=1000, metavar="N",
                        help="connections and requests at once; past it requests are answered 503 (default 1000)")
    parser.add_argument("--max-client-connections", type=int, default=100, metavar="N",
                        help="connections one client address holds at once (behind a trusted proxy: its requests "
                        "under way); the next is answered 429 (default 100)")
    parser.add_argument("--start-rate", type=int, default=120, metavar="N",
                        help="sessions one client address may start per minute (a token bucket of N: N at once, then "
                        "one every 60/N s); past it a start is answered 429 with Retry-After and nothing is written "
                        "(default 120)")
    parser.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDRESS",
                        help="a reverse proxy's address or network (repeatable; e.g. 127.0.0.1): its X-Forwarded-For "
                        "names the client of the limits above, and its X-Forwarded-Proto the scheme (default: none; "
                        "those headers are ignored)")
    parser.add_argument("--episodes", type=COUNT, default=20, help="episodes of a task id's study (default 20)")
    parser.add_argument("--check", action="store_true", help="check the study and print what it serves; no server")
    parser.add_argument("--pilot", type=COUNT, metavar="N",
                        help="pilot mode: N simulated participants (the spec's agent) play the study through the "
                        "server, then it stops")
    parser.add_argument("--pilot-agent", metavar="LABEL", help="which of the spec's agents pilots (default: the first)")
    parser.add_argument("--pilot-seed", type=int, default=0, help="seed of the pilot agents and their response times")
    parser.add_argument("--pilot-wait", action="store_true",
                        help="pilots wait out each drawn response time before posting, so that the server's "
                        "server_rt holds it as it holds a person's (default: they post at once; rt is drawn)")
    parser.set_defaults(func=cmd_serve)
    one_line_errors(parser)
    people = subparsers.add_parser("participants", help="a study's sessions beside agents' runs")
    actions = people.add_subparsers(dest="action", metavar="ACTION", required=True)
    stay = actions.add_parser("stay", help="two-step stay probabilities of a study's sessions beside agents' (PNG)")
    stay.add_argument("study", help="the study's experiment name")
    stay.add_argument("--agents", action="append", default=[], metavar="EXPERIMENT",
                      help="an experiment of agents' runs on the same task (repeatable)")
    stay.add_argument("-o", "--output", required=True, metavar="FILE.png", help="the figure to write")
    stay.set_defaults(func=cmd_stay)
    exports = []
    for name, what, target in (("jspsych", "a study as a jsPsych 8 experiment: a folder whose index.html runs it "
                                 "from disk or any web server", "DIR"),
                                ("jatos", "a study as a JATOS study archive (.jzip: JATOS 3, Studies > Import)",
                                 "FILE.jzip")):
        export = actions.add_parser(name, help=what)
        export.add_argument("study", help="a study file or a task id")
        export.add_argument("output", metavar=target, help="where to write it")
        export.add_argument("--sessions", type=COUNT, default=1,
                            help="session slots: slot k has the task, condition and seed of the server's session k "
                            "(the page takes ?session=K, else one at random)")
        export.add_argument("--episodes", type=COUNT, default=20, help="episodes of a task id's one phase")
        export.set_defaults(func=cmd_export, kind=name)
        exports.append(export)
    back = actions.add_parser("import-jspsych", help="record the data an exported study's pages saved (jsPsych's "
                              "JSON or CSV, one file per participant) as runs of participants")
    back.add_argument("study", help="the study file (or task id) that was exported")
    back.add_argument("files", nargs="+", metavar="FILE", help="jsPsych's data: JSON or CSV, one file per participant")
    back.add_argument("--name", help="the experiment to record them as (default: the study's name + ' (jsPsych)')")
    back.add_argument("--episodes", type=COUNT, default=20, help="episodes of a task id's one phase")
    back.set_defaults(func=cmd_import_jspsych)
    one_line_errors(people)
    one_line_errors(stay)
    for export in exports:
        one_line_errors(export)
    one_line_errors(back)


def cmd_serve(args: argparse.Namespace) -> int:
    from graphtasks.serve.study import load_study, plural

    if not 0 < args.port < 65536:
        raise CommandError(f"serve: --port: expected 1..65535, got {args.port}")
    if args.check:
        describe(load_study(args.study, args.store, args.episodes))
        return 0
    try:
        from graphtasks.serve.app import Limits, StudyServer, allowed_hosts, listen_socket, serve
    except ImportError as exc:
        raise CommandError(f"serve: needs the web extra (pip install 'graphtasks[web]'): {exc}") from None
    limits = Limits(request_timeout=args.request_timeout, keep_alive=args.keep_alive,
                    max_connections=args.max_connections, client_connections=args.max_client_connections,
                    start_rate=args.start_rate, trusted_proxies=tuple(args.trusted_proxy))
    token = os.environ.get(TOKEN_ENV) or None
    if token is not None and len(token) < 16:
        raise CommandError(f"serve: ${TOKEN_ENV}: a researcher token has at least 16 characters")
    allowed_hosts(args.host, args.allowed_host)  # a host it would not answer: refused before anything is said
    sock = listen_socket(args.host, args.port)  # a port in use: refused before anything is said
    try:
        study = load_study(args.study, args.store, args.episodes)
        describe(study)
        server = StudyServer(study, args.store, token)
    except KeyboardInterrupt:
        sock.close()
        print("serve: stopped (Ctrl-C) before serving", flush=True)
        return 130
    except BaseException:
        sock.close()
        raise
    then = None
    if args.pilot:
        from graphtasks.serve.pilot import run_pilot

        def then(url: str) -> None:
            for row in run_pilot(url, study, args.pilot, server.researcher_token, args.pilot_agent, args.pilot_seed,
                                 wait=args.pilot_wait):
                print(f"pilot: run {row['run']}: {plural(row['trials'], 'trial')}, reward {row['reward']:g}",
                      flush=True)

    serve(server, args.host, args.port, lambda line: print(line, flush=True), then, sock, args.allowed_host, limits)
    return 0


def describe(study: Study) -> None:
    """The study's one line: its tasks, phases and seeds."""
    from graphtasks.serve.study import plural

    spec = study.spec
    phases = ", ".join(f"{p.name} ({plural(p.episodes, 'episode')})" for p in spec.phases)
    print(f"study {spec.name!r}: tasks {', '.join(spec.tasks)}; phases {phases}; {plural(len(spec.seeds), 'seed')}")


def cmd_stay(args: argparse.Namespace) -> int:
    from graphstore import open_store
    from graphtasks.experiments.figures import require_matplotlib
    from graphtasks.serve.compare import ORDER, plot_stay

    require_plotting("participants stay")
    require_matplotlib()
    with open_store(args.store, "r") as store:
        for name in [args.study, *args.agents]:
            require_experiment(store, name)
        table = plot_stay(store, args.study, args.agents, args.output)
    for group in sorted({g for g, _ in table}):
        cells = ", ".join(f"{after} {table[(group, after)][0]:.2f}" for after in ORDER if (group, after) in table)
        runs = max(table[(group, after)][2] for after in ORDER if (group, after) in table)
        print(f"{group} ({runs} runs): {cells}")
    print(f"wrote {args.output}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from graphtasks.serve.study import load_study

    study = load_study(args.study, args.store, args.episodes)
    if args.kind == "jatos":
        from graphtasks.serve.jatos import export_jatos

        path = export_jatos(study, args.output, args.sessions, args.store)
        print(f"wrote {path} (JATOS: Studies > Import; {args.sessions} session slot(s))")
    else:
        from graphtasks.serve.jspsych import export_jspsych

        page = export_jspsych(study, args.output, args.sessions, store=args.store)
        print(f"wrote {page} (open it in a browser, or put the folder on any web server; "
              f"{args.sessions} session slot(s): ?session=K)")
    return 0


def cmd_import_jspsych(args: argparse.Namespace) -> int:
    from graphstore import open_store
    from graphtasks.commands.output import print_rows
    from graphtasks.serve.jspsych import import_jspsych
    from graphtasks.serve.study import load_study

    study = load_study(args.study, args.store, args.episodes)
    with open_store(args.store, "w") as store:
        rows = import_jspsych(study, args.files, store, args.name)
    print_rows(["participant", "run", "trials", "events", "status"], [[r[c] for c in ("participant", "run", "trials",
               "events", "status")] for r in rows], "table")
    return 0
