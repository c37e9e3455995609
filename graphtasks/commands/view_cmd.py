"""`graphtasks view TASK -o task.html`: an interactive, self-contained HTML view of any task
(nodes, edges with probabilities, rewards, conditions; a click shows a node's properties and
its Cypher). The page fetches nothing: it opens offline."""

from __future__ import annotations

import argparse

from .arguments import one_line_errors
from .files import write_output


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("view", help="write an interactive HTML view of a task (opens offline)")
    parser.add_argument("task", metavar="TASK", help="a task id (built in, or any task in the store)")
    parser.add_argument("-o", "--output", metavar="FILE.html", help="where to write the page (default TASK.html)")
    parser.set_defaults(func=cmd_view)
    one_line_errors(parser)


def cmd_view(args: argparse.Namespace) -> int:
    from graphtasks.taskview import task_view_html
    from gym_bridge.loading import load_task_graph

    graph = load_task_graph(args.task, args.store)
    path = args.output or "-".join(graph.task_id.split("?")[0].split("/")[-2:]) + ".html"
    page = task_view_html(graph)
    write_output(path, page)
    print(f"wrote {path} ({graph.task_id}: {len(graph.graph) - 1} nodes, {graph.graph.number_of_edges()} edges)")
    return 0
