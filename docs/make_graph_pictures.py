"""Draw every built-in graph task into docs/images/graph/<family>__<name>.png for docs/graph-tasks.md.

Only the graph families (neuro-nav graphs, rewardGym) have a state-graph picture: grids are
drawn by docs/make_pictures.py, and POGE worlds and Room tasks are not state graphs.

    python docs/make_graph_pictures.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image  # noqa: E402

import tasks  # noqa: E402
from gym_bridge import compile_task  # noqa: E402
from gym_bridge.graph.render import GraphRenderer  # noqa: E402

SIZE = 400  # labels readable at the size the README shows
OUT = Path(__file__).resolve().parent / "images" / "graph"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for task_id in tasks.builtin_ids("graph"):
        compiled = compile_task(tasks.build(task_id))
        renderer = GraphRenderer(compiled, size=SIZE)
        frame = renderer.rgb(compiled.start)
        path = OUT / (task_id.replace("/", "__") + ".png")
        Image.fromarray(frame).save(path, optimize=True)
        print(path.relative_to(OUT.parents[1]))


if __name__ == "__main__":
    main()
