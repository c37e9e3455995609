"""Pictures of graph tasks: the static drawing (layout, labels) is made once per task; each
frame only marks the agent's state on a copy.

Layout: decision trees (DAGs) in layers from left to right; other graphs by stress
majorization with Kamada-Kawai's weights (each pair of states as far apart as their
shortest path, near pairs weighted most), then pushed apart until no two states overlap.
States carry their index (and their name when it says more, and their reward); edges carry
the actions that take them, with the probability when it is below 1, where the picture has
room for them. A whole task with a legend, for papers, is `draw_task` (`graphtasks render`).
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache
from typing import Any

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
        """A state's name under its index (unless the name is the index itself), then its reward:
        `r 0.5` when fixed, `r~0.5` (the expected value) when it pays by chance."""
        name = str(self.compiled.names[s])
        name = "" if name == str(s) else name
        spec, value = self.compiled.reward_specs[s], float(self.compiled.reward_value[s])
        if spec is None or (spec.kind == "fixed" and value == 0):
            return name
        reward = f"r {value:.3g}" if spec.kind == "fixed" else f"r~{value:.2g}"
        return f"{name}, {reward}" if name else reward

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
        """The whole task as text, one block per state with its reward and every action's outcomes,
        the agent's state marked `>` (as a grid's text shows the whole grid with the agent on it)."""
        c = self.compiled

        def named(s: int, first: bool) -> str:
            name = str(c.names[s])
            if name == str(s):
                return str(s)
            return f"{s} ({name})" if first else f"{name} ({s})"

        lines = [f"{c.task_id}: {c.n_states} states, {c.n_actions} actions; start {c.start}; "
                 f"the agent is at state {named(state, True)}"]
        for s in range(c.n_states):
            reward = reward_text(c.reward_specs[s], float(c.reward_value[s]))
            notes = ([reward] if reward else []) + (["terminal"] if c.terminal[s] else [])
            notes += ["passed without a choice"] if c.skip[s] else []
            lines.append(f"{'>' if s == state else ' '} state {named(s, True)}"
                         + (f"  [{'; '.join(notes)}]" if notes else ""))
            for a in range(c.n_actions):
                if not c.defined[s, a]:
                    continue
                outs = ", ".join(
                    f"{named(int(t), False)} p={p:.2f}" for t, p in zip(c.targets[s, a], c.probs[s, a]) if t >= 0
                )
                lines.append(f"    action {a} -> {outs}")
        return "\n".join(lines) + "\n"


# ---- whole-task pictures for papers (`graphtasks render`), drawn with matplotlib ----------------

STATE_SIZE = 900  # scatter marker area in points^2
POSITIVE_FACE = "#4a78d6"
NEGATIVE_FACE = "#d64a4a"
ZERO_FACE = "#ffffff"
START_COLOUR = "#1a9850"
MIN_MODULARITY = 0.3  # a partition this modular (and with >= 2 groups of >= 3 states) is drawn as communities


def task_edges(compiled: CompiledGraphTask) -> dict[tuple[int, int], str]:
    """Every (source, target) pair some action can take, self-loops included, with its label
    (`a0`, `a1 (.2)`): what the picture draws, one arrow and one label each."""
    pairs: dict[tuple[int, int], str] = {}
    for s, a, k in zip(*np.nonzero(compiled.targets >= 0)):
        t = int(compiled.targets[s, a, k])
        if compiled.probs[s, a, k] > 0 and (int(s), t) not in pairs:
            pairs[(int(s), t)] = _edge_label(compiled, int(s), t)
    return dict(sorted(pairs.items()))


def reward_text(spec: Any, value: float) -> str:
    """A state's reward in words: `r = 0.5` for a fixed one, else its kind and parameters."""
    if spec is None:
        return ""
    if spec.kind == "fixed":
        return f"r = {value:.3g}"
    props = spec.params.props()  # the kind's own fields that are set
    if "probs" in props:
        values = "r " + " or ".join(f"{v:.3g} (p {p:.2g})" for v, p in zip(spec.values, props["probs"]))
    else:  # a sequence (pseudorandom decks): each value with how often it comes
        counted = Counter(spec.values)
        values = "r " + " or ".join(f"{v:.3g}" + (f" (x{k})" if k > 1 else "") for v, k in counted.items())
    extra = [f"p in [{props['borders'][0]:g}, {props['borders'][1]:g}]"] if "borders" in props else []
    extra += [f"sd {props['sd']:g}"] if "sd" in props else []
    return f"{spec.kind}: {values}" + (f"; {', '.join(extra)}" if extra else "")


def communities(graph: nx.DiGraph) -> list[list[int]]:
    """Groups of states more connected inside than out (greedy modularity), when the graph
    has them clearly (modularity >= MIN_MODULARITY, >= 2 groups of >= 3 states); else []."""
    undirected: nx.Graph[int] = nx.Graph(graph.to_undirected())
    undirected.remove_edges_from(nx.selfloop_edges(undirected))
    if undirected.number_of_edges() == 0:
        return []
    groups = [sorted(g) for g in nx.community.greedy_modularity_communities(undirected)]
    if len(groups) < 2 or min(len(g) for g in groups) < 3:
        return []
    if nx.community.modularity(undirected, [set(g) for g in groups]) < MIN_MODULARITY:
        return []
    return sorted(groups, key=min)


def _community_layout(graph: nx.DiGraph, groups: list[list[int]]) -> np.ndarray:
    """Each community on its own circle, the circles around a larger one; within a group the
    states keep the order they have around their group's centre in the stress layout (so
    states linking two groups face each other)."""
    base = _stress(graph)
    centre = base.mean(axis=0)
    means = [base[g].mean(axis=0) for g in groups]
    order = np.argsort([math.atan2(m[1] - centre[1], m[0] - centre[0]) for m in means])
    ring = 0.55 * max(len(g) for g in groups) / math.pi + 0.5
    big = 1.2 * ring / math.sin(math.pi / len(groups)) + 0.6 if len(groups) > 1 else 0.0
    xy = np.zeros((graph.number_of_nodes(), 2))
    for slot, gi in enumerate(order):
        group, mean = groups[gi], means[gi]
        angle = 2 * math.pi * slot / len(groups) + math.pi / 2
        middle = np.array([math.cos(angle), math.sin(angle)]) * big
        small = 0.55 * len(group) / math.pi + 0.5
        outward = math.atan2(*(middle[::-1]))
        angles = [math.atan2(base[v][1] - mean[1], base[v][0] - mean[0]) for v in group]
        ranked = [group[i] for i in np.argsort(angles)]
        toward = np.array([math.atan2(*(base[v] - mean)[::-1]) for v in ranked])
        # rotate the ring so its states sit nearest their stress-layout directions
        shifts = [np.mean(np.cos(toward - (outward + 2 * math.pi * np.arange(len(ranked)) / len(ranked) + o)))
                  for o in np.linspace(0, 2 * math.pi, 36, endpoint=False)]
        offset = outward + np.linspace(0, 2 * math.pi, 36, endpoint=False)[int(np.argmax(shifts))]
        for i, v in enumerate(ranked):
            a = offset + 2 * math.pi * i / len(ranked)
            xy[v] = middle + small * np.array([math.cos(a), math.sin(a)])
    return xy


def draw_task(task: str, store: Any = None) -> Any:
    """A picture of a graph task: states coloured by reward with their names and reward
    values or kinds, every transition with its actions and probabilities, the start state,
    terminal states, stages (columns) for decision trees and communities for modular graphs,
    and a legend.

    Parameters
    ----------
    task : str
        A graph task id (neuro-nav graph, rewardGym task, a user's graph file).
    store : GraphStore or str, optional
        Where it is read (a built-in is put there first).

    Returns
    -------
    gym_bridge.picture.TaskPicture
        counts: states, edges, edge labels, rewards, stages, communities.

    Examples
    --------
    >>> from gym_bridge.graph.render import draw_task
    >>> picture = draw_task("neuronav/graph/neighborhood", store=":memory:")
    >>> picture.counts["communities"], picture.counts["states"]
    (3, 15)
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, FancyArrowPatch, Patch

    from ..picture import TaskPicture, new_figure
    from .compiled import load_compiled

    compiled = load_compiled(task, store)
    n = compiled.n_states
    edges = task_edges(compiled)
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((s, t) for s, t in edges if s != t)
    layered = nx.is_directed_acyclic_graph(graph) and graph.number_of_edges() > 0
    groups = [] if layered else communities(graph)
    if layered:
        xy = _layered(graph)
        xy[:, 1] = -xy[:, 1]
        columns = sorted(set(np.round(xy[:, 0], 6)))
        rows = max(np.unique(np.round(xy[:, 0], 6), return_counts=True)[1])
        width, height = 2.6 * len(columns) + 1.5, 1.5 * rows + 2.2
    else:
        xy = _community_layout(graph, groups) if groups else (_stress(graph) if n > 1 else np.zeros((1, 2)))
        if not groups:  # rings of communities are drawn at their own scale: neighbours about one unit apart
            span = float(np.ptp(xy, axis=0).max()) or 1.0
            xy = xy / span * (1.0 + 0.35 * math.sqrt(n))
        width = min(13.0, 4.0 + 0.9 * math.sqrt(n) * 1.6)
        spans = np.ptp(xy, axis=0) + np.array([2.1, 1.65])  # the axes' limits below: the layout and its margins
        height = float(np.clip(width * spans[1] / spans[0], 4.0, 13.0))  # no blank band under a flat layout
        columns = []
    figure = new_figure(width, height + 1.0)
    ax = figure.add_subplot()
    ax.set_axis_off()
    ax.set_aspect("equal" if not layered else "auto")
    pos = {v: (float(xy[v, 0]), float(xy[v, 1])) for v in range(n)}

    if groups:
        for i, group in enumerate(groups):
            middle = xy[group].mean(axis=0)
            radius = float(np.linalg.norm(xy[group] - middle, axis=1).max()) * 1.12 + 0.3
            ax.add_patch(Circle(tuple(middle), radius, facecolor="#f1e9d2", edgecolor="#c9b98a", lw=1,
                                zorder=0, gid="community"))
            out = middle - xy.mean(axis=0)
            out = out / (np.linalg.norm(out) or 1.0)
            at = middle + out * (radius + 0.25)
            ax.text(float(at[0]), float(at[1]), f"community {i + 1}", ha="center", va="center",
                    fontsize=9, color="#8a7a4a", gid="community-label")
    if layered:
        top = float(xy[:, 1].max()) + 0.9
        for i, x in enumerate(columns):
            ax.text(x, top, f"stage {i + 1}", ha="center", va="bottom", fontsize=11, fontweight="bold",
                    color="#555555", gid="stage-label")

    # edges: straight, or bent apart when both directions exist; labels at the middle of each
    node_radius_pt = math.sqrt(STATE_SIZE / math.pi)
    label_count = 0
    for (s, t), text in edges.items():
        if s == t:
            x, y = pos[s]
            ax.add_patch(FancyArrowPatch((x - 0.12, y + 0.05), (x + 0.12, y + 0.05),
                                         connectionstyle="arc3,rad=-2.2", arrowstyle="-|>", mutation_scale=10,
                                         color="#888888", lw=1, shrinkA=node_radius_pt * 0.8,
                                         shrinkB=node_radius_pt * 0.8, zorder=1, gid="edge"))
            label_xy = (x, y + 0.42)  # just above the loop
        else:
            rad = 0.18 if (t, s) in edges else 0.0
            ax.add_patch(FancyArrowPatch(pos[s], pos[t], connectionstyle=f"arc3,rad={rad}", arrowstyle="-|>",
                                         mutation_scale=13, color="#888888", lw=1.2, shrinkA=node_radius_pt,
                                         shrinkB=node_radius_pt, zorder=1, gid="edge"))
            (x0, y0), (x1, y1) = pos[s], pos[t]
            # arc3's control point is the chord's middle moved by rad * (dy, -dx); the curve's middle half of that
            frac = 0.5 if rad else (0.42 if layered else 0.5)
            label_xy = (x0 + frac * (x1 - x0) + 0.5 * rad * (y1 - y0), y0 + frac * (y1 - y0) - 0.5 * rad * (x1 - x0))
        ax.text(*label_xy, text, ha="center", va="center", fontsize=8, color="#333333", zorder=3, gid="edge-label",
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
        label_count += 1

    values = compiled.reward_value
    faces = [POSITIVE_FACE if v > 0 else NEGATIVE_FACE if v < 0 else ZERO_FACE for v in values]
    strength = np.abs(values) / (np.abs(values).max() or 1.0)
    alphas = [0.35 + 0.65 * float(a) if v != 0 else 1.0 for a, v in zip(strength, values)]
    from matplotlib.colors import to_rgba

    colours = [to_rgba(f, a) for f, a in zip(faces, alphas)]
    outlines = [START_COLOUR if v == compiled.start else "#444444" for v in range(n)]
    widths = [3.0 if v == compiled.start else 1.2 for v in range(n)]
    ax.scatter(xy[:, 0], xy[:, 1], s=STATE_SIZE, c=colours, edgecolors=outlines, linewidths=widths, zorder=2,
               gid="state")
    terminal = np.nonzero(compiled.terminal)[0]
    if len(terminal):
        ax.scatter(xy[terminal, 0], xy[terminal, 1], s=STATE_SIZE * 0.6, facecolors="none", edgecolors="#444444",
                   linewidths=1.0, zorder=2.5, gid="terminal")
    skipped = np.nonzero(compiled.skip)[0]
    if len(skipped):
        ax.scatter(xy[skipped, 0], xy[skipped, 1], s=STATE_SIZE * 1.6, facecolors="none", edgecolors="#777777",
                   linewidths=1.0, linestyles=":", zorder=2, gid="skip")
    for v in range(n):
        ax.text(*pos[v], str(v), ha="center", va="center", fontsize=10, zorder=4, gid="state-index",
                color="white" if strength[v] > 0.5 and values[v] != 0 else "black")
    reward_labels = 0
    for v in range(n):
        name = str(compiled.names[v])
        lines = [name] if name != str(v) else []
        reward = reward_text(compiled.reward_specs[v], float(values[v]))
        if reward:
            lines.append(reward)
            reward_labels += 1
        if lines:
            ax.annotate("\n".join(lines), xy=pos[v], xytext=(0, -(node_radius_pt + 3)), textcoords="offset points",
                        ha="center", va="top", fontsize=8, zorder=3, gid="state-label",
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.7})
    x, y = pos[compiled.start]
    ax.annotate("start", xy=(x, y), xytext=(x - 0.75, y + 0.55 if not layered else y),
                ha="center", va="center", fontsize=10, color=START_COLOUR, fontweight="bold", zorder=5,
                arrowprops={"arrowstyle": "-|>", "color": START_COLOUR, "lw": 1.8, "shrinkB": node_radius_pt + 2},
                gid="start")
    # room for the start arrow at the left, loops and stage names above, names and rewards below
    ax.set_xlim(float(xy[:, 0].min()) - 1.1, float(xy[:, 0].max()) + 1.0)
    ax.set_ylim(float(xy[:, 1].min()) - 0.8, float(xy[:, 1].max()) + (1.2 if layered or groups else 0.85))

    handles: list[Any] = [
        Line2D([], [], ls="", marker="o", ms=11, mfc=POSITIVE_FACE, mec="#444444", label="reward > 0 (paler: smaller)"),
        Line2D([], [], ls="", marker="o", ms=11, mfc=NEGATIVE_FACE, mec="#444444", label="reward < 0"),
        Line2D([], [], ls="", marker="o", ms=11, mfc=ZERO_FACE, mec="#444444", label="no reward"),
        Line2D([], [], ls="", marker="o", ms=11, mfc="white", mec=START_COLOUR, mew=3, label="start state"),
    ]
    if len(terminal):
        handles.append((Line2D([], [], ls="", marker="o", ms=13, mfc="white", mec="#444444"),
                        Line2D([], [], ls="", marker="o", ms=8, mfc="none", mec="#444444",
                               label="terminal (inner ring)")))
    if len(skipped):
        handles.append(Line2D([], [], ls="", marker="o", ms=14, mfc="none", mec="#777777",
                              label="passed without a choice"))
    handles.append(Line2D([], [], color="#888888", marker=">", ms=6, label="a1 (.7): action 1, probability .7"))
    if groups:
        handles.append(Patch(facecolor="#f1e9d2", edgecolor="#c9b98a", label="community"))
    labels = [h[-1].get_label() if isinstance(h, tuple) else h.get_label() for h in handles]
    legend = ax.legend(handles=handles, labels=labels, loc="upper center", bbox_to_anchor=(0.5, -0.01),
                       ncol=min(4, len(handles)), fontsize=8, frameon=False)
    legend.set_gid("legend")
    paid = "rewards paid at the end of a trial" if compiled.reward_on == "terminal" else "rewards paid on arrival"
    title = f"{compiled.task_id}\n{n} states, {compiled.n_actions} actions; {paid}"
    if compiled.conditions:
        title += "\nconditions (forced outcomes): " + ", ".join(compiled.conditions)
    ax.set_title(title, fontsize=11)
    counts = {"states": n, "edges": len(edges), "edge labels": label_count, "rewards": reward_labels,
              "stages": len(columns), "communities": len(groups), "terminal": len(terminal)}
    return TaskPicture(figure, compiled.task_id, counts, labels)
