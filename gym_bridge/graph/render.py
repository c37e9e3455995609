"""Pictures of graph tasks: the static drawing (layout, labels) is made once per task; each
frame only marks the agent's state on a copy.

Layout: decision trees (DAGs) in layers from left to right; other graphs by stress
majorization with Kamada-Kawai's weights (each pair of states as far apart as their
shortest path, near pairs weighted most), then pushed apart until no two states overlap.
States carry their index (and their name when it says more); edges carry the actions that
take them, with the probability when it is below 1, where the picture has room for them.
"""

from __future__ import annotations

import math
from functools import cache

import networkx as nx
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .compiled import CompiledGraphTask

SIZE = 320
BACKGROUND = (235, 235, 235)
EDGE = (150, 150, 150)
NODE = (255, 255, 255)
OUTLINE = (90, 90, 90)
POSITIVE = (40, 90, 220)
NEGATIVE = (220, 50, 50)
AGENT = (20, 20, 20)
TEXT = (30, 30, 30)
EDGE_TEXT = (70, 70, 70)
MAX_EDGE_LABELS = 24  # more labelled edges than this and the picture labels states only
MIN_SEPARATION = 4.0  # node centres at least this many radii apart


@cache
def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _layout(graph: nx.DiGraph) -> np.ndarray:
    """(n, 2) positions: layers by depth for DAGs, stress majorization otherwise."""
    n = graph.number_of_nodes()
    if n == 1:
        return np.zeros((1, 2))
    if nx.is_directed_acyclic_graph(graph) and graph.number_of_edges():
        return _layered(graph)
    return _stress(graph)


def _layered(graph: nx.DiGraph) -> np.ndarray:
    """Each state one column right of its deepest predecessor; a column's states spread evenly,
    ordered by their predecessors' rows (fewer crossings)."""
    depth = {node: 0 for node in graph}
    for node in nx.topological_sort(graph):
        for succ in graph.successors(node):
            depth[succ] = max(depth[succ], depth[node] + 1)
    columns: dict[int, list[int]] = {}
    for node in sorted(graph):
        columns.setdefault(depth[node], []).append(node)
    height = max(len(c) for c in columns.values())
    xy = np.zeros((graph.number_of_nodes(), 2))
    row: dict[int, float] = {}
    for d in sorted(columns):
        nodes = columns[d]
        if d:
            nodes.sort(key=lambda v: (np.mean([row[u] for u in graph.predecessors(v)]), v))
        for i, node in enumerate(nodes):
            row[node] = (i + 0.5) * height / len(nodes)
            xy[node] = (d * 1.6, row[node])
    return xy


def _stress(graph: nx.DiGraph) -> np.ndarray:
    """Kamada-Kawai's objective (stress with weights 1/d^2) minimised by majorization (SMACOF),
    started from classical scaling; numpy only."""
    n = graph.number_of_nodes()
    lengths = dict(nx.all_pairs_shortest_path_length(graph.to_undirected()))
    distance = np.full((n, n), np.nan)
    for a, row in lengths.items():
        for b, d in row.items():
            distance[a, b] = d
    distance[np.isnan(distance)] = np.nanmax(distance) + 1  # separate components sit one step apart
    centre = np.eye(n) - 1.0 / n
    gram = -0.5 * centre @ (distance**2) @ centre
    values, vectors = np.linalg.eigh(gram)
    order = np.argsort(values)[::-1][:2]
    xy = vectors[:, order] * np.sqrt(np.clip(values[order], 1e-9, None))
    xy = xy + np.random.default_rng(0).normal(0, 1e-2, xy.shape)  # separate coincident starts
    weight = np.zeros((n, n))
    off = ~np.eye(n, dtype=bool)
    weight[off] = distance[off] ** -2.0
    laplacian = -weight
    np.fill_diagonal(laplacian, weight.sum(axis=1))
    pinv = np.linalg.pinv(laplacian)
    for _ in range(300):
        gap = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
        np.fill_diagonal(gap, 1.0)
        b = -weight * distance / np.maximum(gap, 1e-9)
        np.fill_diagonal(b, 0.0)
        np.fill_diagonal(b, -b.sum(axis=1))
        new = pinv @ (b @ xy)
        if np.abs(new - xy).max() < 1e-6:
            xy = new
            break
        xy = new
    return xy


def _separate(xy: np.ndarray, minimum: float) -> np.ndarray:
    """Push pairs of states closer than `minimum` apart (each takes half), a few sweeps."""
    xy = xy + np.random.default_rng(0).normal(0, 1e-3, xy.shape)  # coincident states get a direction
    for _ in range(100):
        delta = xy[None] - xy[:, None]  # delta[i, j] points from i to j
        gap = np.linalg.norm(delta, axis=-1)
        np.fill_diagonal(gap, np.inf)
        close = gap < minimum
        if not close.any():
            break
        push = np.where(close, (minimum - gap) / 2 + 1e-6, 0.0) / np.maximum(gap, 1e-9)
        xy = xy - (push[..., None] * delta).sum(axis=1)
    return xy


def _edge_label(compiled: CompiledGraphTask, s: int, t: int) -> str:
    """The actions from s to t, each with its probability when below 1: `a0` or `a0 (.7)`."""
    parts = []
    for a in range(compiled.n_actions):
        p = float(sum(pr for tt, pr in zip(compiled.targets[s, a], compiled.probs[s, a]) if tt == t))
        if p <= 0:
            continue
        parts.append(f"a{a}" if p >= 1 - 1e-9 else f"a{a} ({p:.2f}".rstrip("0").replace("(0.", "(.") + ")")
    return ", ".join(parts)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


class GraphRenderer:
    def __init__(self, compiled: CompiledGraphTask, size: int = SIZE) -> None:
        self.compiled = compiled
        self.size = size
        graph: nx.DiGraph[int] = nx.DiGraph()
        graph.add_nodes_from(range(compiled.n_states))
        for s, a, k in zip(*np.nonzero(compiled.targets >= 0)):
            t = int(compiled.targets[s, a, k])
            if t != s and compiled.probs[s, a, k] > 0:
                graph.add_edge(int(s), t)
        n = compiled.n_states
        self.radius = max(6.0, min(15.0, size / (3.2 * math.sqrt(n) + 4)))
        self.label_edges = graph.number_of_edges() <= MAX_EDGE_LABELS
        self.names = [self._name(s) for s in range(n)]
        self._small = max(8, int(self.radius * 0.8))  # font size of names and edge labels
        self.layered = nx.is_directed_acyclic_graph(graph) and graph.number_of_edges() > 0
        xy = _layout(graph)
        self.height = size  # a tall column of states gets the rows its names need
        if self.layered:
            rows = max(np.unique(xy[:, 0], return_counts=True)[1])
            self._row = 2 * self.radius + (1.3 * self._small if any(self.names) else 0) + 12
            self.height = max(size, int(rows * self._row + 2 * self.radius + 8))
        self.positions = self._fit(xy, graph)
        self.background = self._draw_static(graph)

    def _name(self, s: int) -> str:
        """A state's name under its index, unless the name is the index itself."""
        name = str(self.compiled.names[s])
        return "" if name == str(s) else name

    def _fit(self, xy: np.ndarray, graph: nx.DiGraph) -> list[tuple[float, float]]:
        """Scale to the picture, keeping the aspect ratio, with room for the names, then
        push overlapping states apart (in pixels) and clip back inside."""
        r = self.radius
        widest = max((_font(self._small).getlength(name) for name in self.names), default=0.0)
        margin = np.array([max(r, widest / 2) + 4, r + 4 + (1.3 * self._small if any(self.names) else 0)])
        extent = np.array([self.size, self.height], dtype=float)
        span = np.maximum(np.ptp(xy, axis=0), 1e-9)
        if self.layered:  # columns across the width, rows down the height (a few rows stay close)
            room = extent - 2 * margin
            room[1] = min(room[1], span[1] * self._row * 2.5)
            px = (xy - xy.min(axis=0)) * (room / span)
        else:
            px = (xy - xy.min(axis=0)) * float(((extent - 2 * margin) / span).min())
        px += (extent - px.max(axis=0)) / 2  # centred in both directions
        if graph.number_of_nodes() > 1:
            px = _separate(px, MIN_SEPARATION * r)
            px = np.clip(px, margin, extent - margin)
        return [(float(x), float(y)) for x, y in px]

    def _draw_static(self, graph: nx.DiGraph) -> Image.Image:
        image = Image.new("RGB", (self.size, self.height), BACKGROUND)
        draw = ImageDraw.Draw(image)
        r = self.radius
        small = _font(self._small)
        taken = [(x - r, y - r, x + r, y + r) for x, y in self.positions]  # what a label must not cover
        spots: list[tuple[list[tuple[float, float]], str]] = []  # edge labels: candidate centres, text
        for s, t in graph.edges:
            (x0, y0), (x1, y1) = self.positions[s], self.positions[t]
            angle = math.atan2(y1 - y0, x1 - x0)
            both = graph.has_edge(t, s)
            if both and not self.label_edges and s > t:
                continue  # unlabelled: one line with a head at each end stands for the pair
            # labelled, both directions of a pair are drawn side by side, not on top of each other
            shift = 0.3 * r if both and self.label_edges else 0.0
            nx_, ny_ = -math.sin(angle) * shift, math.cos(angle) * shift
            start = (x0 + r * math.cos(angle) + nx_, y0 + r * math.sin(angle) + ny_)
            tip = (x1 - r * math.cos(angle) + nx_, y1 - r * math.sin(angle) + ny_)
            draw.line([start, tip], fill=EDGE, width=2)
            heads = [(tip, angle)] + ([(start, angle + math.pi)] if both and not shift else [])
            for point, towards in heads:
                for side in (-0.4, 0.4):
                    angle = towards + side
                    back = (point[0] - 0.6 * r * math.cos(angle), point[1] - 0.6 * r * math.sin(angle))
                    draw.line([point, back], fill=EDGE, width=2)
            if self.label_edges:
                # near the source's end first, so the two directions of a pair keep their labels apart
                fractions = (0.38, 0.25, 0.5) if shift else (0.35, 0.5, 0.65, 0.25, 0.75)
                centres = [
                    (start[0] + f * (tip[0] - start[0]) + 1.6 * nx_, start[1] + f * (tip[1] - start[1]) + 1.6 * ny_)
                    for f in fractions
                ]
                spots.append((centres, _edge_label(self.compiled, s, t)))
        for s, (x, y) in enumerate(self.positions):
            value = self.compiled.reward_value[s]
            fill = POSITIVE if value > 0 else NEGATIVE if value < 0 else NODE
            draw.ellipse([x - r, y - r, x + r, y + r], fill=fill, outline=OUTLINE, width=2)
            if self.compiled.terminal[s]:
                draw.ellipse([x - r + 3, y - r + 3, x + r - 3, y + r - 3], outline=OUTLINE, width=1)
            ink = (255, 255, 255) if value != 0 else TEXT
            draw.text((x, y), str(s), fill=ink, font=_font(max(8, int(r * 1.05))), anchor="mm")
        for s, (x, y) in enumerate(self.positions):  # names: below, else beside, else above the state
            if self.names[s]:
                width = small.getlength(self.names[s])
                candidates = [(x, y + r + 2 + self._small / 2), (x + r + 3 + width / 2, y),
                              (x - r - 3 - width / 2, y), (x, y - r - 2 - self._small / 2)]
                self._label(draw, candidates, self.names[s], TEXT, taken, always=True)
        for centres, text in spots:  # edge labels where they fit
            self._label(draw, centres, text, EDGE_TEXT, taken, always=False)
        return image

    def _label(self, draw: ImageDraw.ImageDraw, centres: list[tuple[float, float]], text: str,
               ink: tuple[int, int, int], taken: list[tuple[float, float, float, float]], always: bool) -> None:
        """Write `text` at the first centre where it covers no state and no other label (on a
        patch of background, readable over edges); else at the first centre if `always`."""
        font = _font(self._small)
        boxes = [draw.textbbox(c, text, font=font, anchor="mm") for c in centres]
        inside = [b for b in boxes if b[0] >= 0 and b[1] >= 0 and b[2] <= self.size and b[3] <= self.height]
        free = [b for b in inside if not any(_overlap(b, t) for t in taken)]
        if not free and not always:
            return
        box = free[0] if free else boxes[0]
        draw.rectangle([box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1], fill=BACKGROUND)
        draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), text, fill=ink, font=font, anchor="mm")
        taken.append((box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2))

    def rgb(self, state: int) -> np.ndarray:
        frame = self.background.copy()
        draw = ImageDraw.Draw(frame)
        x, y = self.positions[state]
        r = self.radius + 3
        draw.ellipse([x - r, y - r, x + r, y + r], outline=AGENT, width=3)  # a ring: the index stays readable
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
