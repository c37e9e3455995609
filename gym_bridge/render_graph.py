"""Pictures of graph tasks: the static drawing is made once per task; each frame only
marks the agent's state on a copy."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from PIL import Image, ImageDraw

from .compile import CompiledGraphTask

SIZE = 320
BACKGROUND = (235, 235, 235)
EDGE = (150, 150, 150)
NODE = (255, 255, 255)
OUTLINE = (90, 90, 90)
POSITIVE = (40, 90, 220)
NEGATIVE = (220, 50, 50)
AGENT = (20, 20, 20)


def _layout(graph: nx.DiGraph, start: int) -> list[tuple[float, float]]:
    """Layers by depth for trees of decisions (DAGs), a seeded spring layout otherwise."""
    if nx.is_directed_acyclic_graph(graph) and graph.number_of_edges():
        depth = {node: 0 for node in graph}
        for node in nx.topological_sort(graph):
            for succ in graph.successors(node):
                depth[succ] = max(depth[succ], depth[node] + 1)
        for node in graph:
            graph.nodes[node]["layer"] = depth[node]
        pos = nx.multipartite_layout(graph, subset_key="layer")
        return [(float(pos[i][0]), float(pos[i][1])) for i in range(graph.number_of_nodes())]
    return _distance_layout(graph)


def _distance_layout(graph: nx.DiGraph) -> list[tuple[float, float]]:
    """Classical multidimensional scaling of shortest-path distances: nodes sit as far apart
    as the graph says they are (what Kamada-Kawai aims at, with numpy alone)."""
    n = graph.number_of_nodes()
    lengths = dict(nx.all_pairs_shortest_path_length(graph.to_undirected()))
    distance = np.full((n, n), np.nan)
    for a, row in lengths.items():
        for b, d in row.items():
            distance[a, b] = d
    distance[np.isnan(distance)] = np.nanmax(distance) + 1 if n > 1 else 0
    centre = np.eye(n) - 1.0 / n
    gram = -0.5 * centre @ (distance**2) @ centre
    values, vectors = np.linalg.eigh(gram)
    order = np.argsort(values)[::-1][:2]
    xy = vectors[:, order] * np.sqrt(np.clip(values[order], 1e-9, None))
    if xy.shape[1] < 2:
        xy = np.column_stack([xy, np.zeros(n)])
    xy = xy + np.random.default_rng(0).normal(0, 1e-3, xy.shape)  # separate coincident nodes
    for _ in range(200):  # SMACOF: move towards positions whose distances match the graph's
        gap = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
        np.fill_diagonal(gap, 1.0)
        b = -distance / gap
        np.fill_diagonal(b, 0.0)
        np.fill_diagonal(b, -b.sum(axis=1))
        xy = b @ xy / n
    return [tuple(p) for p in xy]


class GraphRenderer:
    def __init__(self, compiled: CompiledGraphTask, size: int = SIZE) -> None:
        self.compiled = compiled
        self.size = size
        graph: nx.DiGraph[int] = nx.DiGraph()
        graph.add_nodes_from(range(compiled.n_states))
        for s, a, k in zip(*np.nonzero(compiled.targets >= 0)):
            t = int(compiled.targets[s, a, k])
            if t != s:
                graph.add_edge(int(s), t)
        xy = np.array(_layout(graph, compiled.start))
        span = np.ptp(xy, axis=0)
        span[span == 0] = 1.0
        margin = 0.1 * size
        self.positions = ((xy - xy.min(axis=0)) / span * (size - 2 * margin) + margin).tolist()
        self.radius = max(5.0, min(16.0, size / (4.5 * math.sqrt(compiled.n_states) + 4)))
        self.background = self._draw_static(graph)

    def _draw_static(self, graph: nx.DiGraph) -> Image.Image:
        image = Image.new("RGB", (self.size, self.size), BACKGROUND)
        draw = ImageDraw.Draw(image)
        for s, t in graph.edges:
            (x0, y0), (x1, y1) = self.positions[s], self.positions[t]
            draw.line([(x0, y0), (x1, y1)], fill=EDGE, width=2)
            angle = math.atan2(y1 - y0, x1 - x0)  # arrow head at the target's rim
            tip = (x1 - self.radius * math.cos(angle), y1 - self.radius * math.sin(angle))
            for side in (-0.4, 0.4):
                back = (tip[0] - 8 * math.cos(angle + side), tip[1] - 8 * math.sin(angle + side))
                draw.line([tip, back], fill=EDGE, width=2)
        for s, (x, y) in enumerate(self.positions):
            value = self.compiled.reward_value[s]
            fill = POSITIVE if value > 0 else NEGATIVE if value < 0 else NODE
            r = self.radius
            draw.ellipse([x - r, y - r, x + r, y + r], fill=fill, outline=OUTLINE, width=2)
            if self.compiled.terminal[s]:
                draw.ellipse([x - r + 3, y - r + 3, x + r - 3, y + r - 3], outline=OUTLINE, width=1)
        return image

    def rgb(self, state: int) -> np.ndarray:
        frame = self.background.copy()
        draw = ImageDraw.Draw(frame)
        x, y = self.positions[state]
        r = self.radius * 0.55
        draw.ellipse([x - r, y - r, x + r, y + r], fill=AGENT)
        return np.asarray(frame)

    def ansi(self, state: int) -> str:
        c = self.compiled
        lines = [f"{c.task_id}: state {state} ({c.names[state]})" + ("  [terminal]" if c.terminal[state] else "")]
        for a in range(c.n_actions):
            if not c.defined[state, a]:
                continue
            outs = ", ".join(
                f"{c.names[t]} ({t}) p={p:.2f}" for t, p in zip(c.targets[state, a], c.probs[state, a]) if t >= 0
            )
            lines.append(f"  action {a} -> {outs}")
        return "\n".join(lines) + "\n"
