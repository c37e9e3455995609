"""`graphtasks view TASK -o task.html`: an interactive picture of any stored task in one HTML
file that needs no network (its SVG drawing, pan and zoom, and the panel are written here in
plain JavaScript, inlined; nothing is fetched).

What it shows: every node of the task graph but the Task node itself (whose properties head
the page), every edge with its action and probability when it has them, the start, rewards
as labelled nodes next to their states, conditions, and a legend of node labels. A click on a
node shows its properties, its edges and the Cypher that reads it from the store.

Layout, by structure alone (no family is named here): nodes with `row` and `col` sit on
their grid; nodes linked by probability-labelled edges (a state graph) are laid out as
`graphtasks render` lays them out (columns for a decision tree, rings for communities,
stress majorization otherwise); every other node sits beside the first placed node it is
linked to, or in rows below.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

import networkx as nx
import numpy as np

from graphstore import TaskGraph
from graphstore.taskgraph import TASK_LOCAL_ID, uid_of

MAX_EDGE_LABELS = 400  # more edges than this: labels only in the panel (a large grid has thousands)


def _state_layout(graph: TaskGraph, nodes: list[str]) -> dict[str, tuple[float, float]]:
    """Positions of the nodes joined by probability-labelled edges, as the task pictures lay them out."""
    from gym_bridge.graph.render import _community_layout, _layered, _stress, communities

    index = {node: i for i, node in enumerate(nodes)}
    g: nx.DiGraph[int] = nx.DiGraph()
    g.add_nodes_from(range(len(nodes)))
    for source, target, data in graph.graph.edges(data=True):
        if source in index and target in index and source != target:
            g.add_edge(index[source], index[target])
    if len(nodes) == 1:
        xy = np.zeros((1, 2))
    elif nx.is_directed_acyclic_graph(g) and g.number_of_edges():
        xy = _layered(g) * np.array([1.0, 1.0]) * 1.4
    else:
        groups = communities(g)
        xy = _community_layout(g, groups) if groups else _stress(g)
        span = float(np.ptp(xy, axis=0).max()) or 1.0
        xy = xy / span * (1.5 + 0.5 * math.sqrt(len(nodes)))
    return {node: (float(xy[i, 0]), float(xy[i, 1])) for node, i in index.items()}


def layout(graph: TaskGraph) -> dict[str, tuple[float, float]]:
    """Every node's position but the Task node's (see the module docstring)."""
    nodes = [n for n in graph.graph.nodes if n != TASK_LOCAL_ID]
    props = {n: graph.props(n) for n in nodes}
    pos: dict[str, tuple[float, float]] = {}
    for n in nodes:
        if isinstance(props[n].get("row"), int) and isinstance(props[n].get("col"), int):
            pos[n] = (float(props[n]["col"]), float(props[n]["row"]))
    linked = {  # a state graph: probability-labelled edges between nodes of one label
        n for s, t, d in graph.graph.edges(data=True)
        if "p" in d["props"] and s != TASK_LOCAL_ID and graph.label(s) == graph.label(t) for n in (s, t)
    } - set(pos)
    if linked:
        ordered = sorted(linked, key=lambda n: (props[n].get("index", 0), n))
        pos.update(_state_layout(graph, ordered))
    rest = [n for n in nodes if n not in pos]
    crowd: dict[str, int] = {}
    unplaced = []
    for n in rest:  # beside the placed node that points at it (a state's reward), else in rows below
        anchor = next((m for m in graph.graph.predecessors(n) if m in pos), None)
        if anchor is None:
            unplaced.append(n)
            continue
        k = crowd.get(anchor, 0)
        crowd[anchor] = k + 1
        angle = -math.pi / 3 + k * math.pi / 3
        pos[n] = (pos[anchor][0] + 0.5 * math.cos(angle), pos[anchor][1] + 0.5 * math.sin(angle))
    if unplaced:
        bottom = max((y for _, y in pos.values()), default=-1.0) + 1.2
        width = max(4, int(math.ceil(math.sqrt(len(unplaced) * 3))))
        left = min((x for x, _ in pos.values()), default=0.0)
        for i, n in enumerate(unplaced):
            pos[n] = (left + (i % width) * 1.1, bottom + (i // width) * 0.9)
    return pos


def _edge_text(rel: str, props: dict[str, Any]) -> str:
    """`a1 (.30)` for an action's edge (the probability when below 1), else the relation's type."""
    if "action" in props:
        p = props.get("p")
        return f"a{props['action']}" + (f" ({p:.2f})".replace("(0.", "(.") if isinstance(p, float) and p < 1 else "")
    return rel


def _links(edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One drawn arrow per (source, target): parallel edges (two actions to one state) share it,
    their labels joined; only action edges are labelled on the drawing."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for e in edges:
        key = (e["source"], e["target"])
        link = merged.setdefault(key, {"source": key[0], "target": key[1], "texts": []})
        if "action" in e["props"]:
            link["texts"].append((e["props"]["action"], e["text"]))
    return [  # the labels in action order, whatever order the store gave the edges in
        {"source": v["source"], "target": v["target"], "text": ", ".join(text for _, text in sorted(v["texts"]))}
        for v in merged.values()
    ]


def view_data(graph: TaskGraph) -> dict[str, Any]:
    """What the page draws: the task's properties, nodes with positions and properties, edges."""
    pos = layout(graph)
    start = {t for s, t, d in graph.graph.edges(data=True) if s == TASK_LOCAL_ID and d["rel"] == "START"}
    nodes = []
    for n, (x, y) in pos.items():
        label, props = graph.label(n), graph.props(n)
        name = props.get("name")
        if label == "Reward":  # its value inside; its kind below when it pays by chance
            values = props.get("values", [])
            fixed = props.get("kind") == "fixed" and values
            text = f"{values[0]:g}" if fixed else "r"
            below = "" if fixed else str(props.get("kind", ""))
        else:  # a state's or cell's index inside (else the label's initial), its name below
            text = str(props["index"]) if "index" in props else label[:1]
            below = str(name) if name is not None and str(name) != text else ""
        nodes.append({
            "id": n, "uid": uid_of(graph.task_id, n), "label": label, "x": x, "y": y, "text": text,
            "name": below, "props": props,
            "start": n in start, "wall": bool(props.get("wall")),
        })
    edges = []
    for s, t, d in graph.graph.edges(data=True):
        if s == TASK_LOCAL_ID or t == TASK_LOCAL_ID:
            continue
        edges.append({"source": s, "target": t, "rel": d["rel"], "props": d["props"],
                      "text": _edge_text(d["rel"], d["props"])})
    links = _links(edges)
    return {"task": graph.task_id, "family": graph.family, "props": graph.task, "nodes": nodes, "edges": edges,
            "links": links, "labelEdges": len(links) <= MAX_EDGE_LABELS}


def _json_for_script(data: Any) -> str:
    """JSON safe inside a <script> element (no `</`, no `<!--`)."""
    return json.dumps(data, default=str, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")


def task_view_html(graph: TaskGraph) -> str:
    """One self-contained HTML page showing `graph` (see the module docstring).

    Parameters
    ----------
    graph : TaskGraph
        The task, as stored.

    Returns
    -------
    str
        The page: inline CSS and JavaScript, the task as JSON, no external resource.

    Examples
    --------
    >>> import tasks
    >>> from graphtasks.taskview import task_view_html
    >>> page = task_view_html(tasks.build("rewardgym/two-step"))
    >>> "<svg" in page, "http://" in page.replace('http://www.w3.org/2000/svg', '')
    (True, False)
    """
    title = html.escape(f"{graph.task_id} ({graph.family})")
    return PAGE.replace("__TITLE__", title).replace("__DATA__", _json_for_script(view_data(graph)))


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
  body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: #222; display: flex; height: 100vh; }
  #main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
  header { padding: 8px 12px; border-bottom: 1px solid #ddd; }
  header h1 { font-size: 16px; margin: 0 0 2px; }
  header .what { color: #555; font-size: 12px; }
  #canvas { flex: 1; background: #fafafa; cursor: grab; }
  #canvas.dragging { cursor: grabbing; }
  #panel { width: 360px; border-left: 1px solid #ddd; padding: 10px 12px; overflow: auto; font-size: 13px; }
  #panel h2 { font-size: 15px; margin: 4px 0 8px; }
  #panel table { border-collapse: collapse; width: 100%; }
  #panel td { border-bottom: 1px solid #eee; padding: 2px 4px; vertical-align: top; word-break: break-word; }
  #panel td:first-child { color: #555; white-space: nowrap; }
  pre.cypher { background: #f3f3f3; padding: 6px; white-space: pre-wrap; font-size: 12px; }
  .node circle { stroke: #444; stroke-width: 1.2; cursor: pointer; }
  .node.start circle { stroke: #1a9850; stroke-width: 3.5; }
  .node.selected circle { stroke: #000; stroke-width: 3.5; }
  .node text { font-size: 11px; text-anchor: middle; pointer-events: none; }
  .node text.name { font-size: 9px; fill: #333; }
  .edge { stroke: #999; stroke-width: 1.2; fill: none; }
  .edge.hit { stroke: #d62728; stroke-width: 2.5; }
  .edge-label { font-size: 9px; fill: #333; text-anchor: middle; paint-order: stroke; stroke: #fafafa;
                stroke-width: 3px; }
  #legend span { display: inline-block; margin-right: 10px; font-size: 12px; }
  #legend i { display: inline-block; width: 11px; height: 11px; border-radius: 50%; border: 1px solid #444;
              vertical-align: -1px; margin-right: 3px; }
  .hint { color: #777; font-size: 12px; }
</style>
</head>
<body>
<div id="main">
  <header>
    <h1 id="title"></h1>
    <div class="what" id="what"></div>
    <div id="legend"></div>
  </header>
  <svg id="canvas" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="task graph">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7"
      orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#999"/></marker></defs>
    <g id="world"><g id="edges"></g><g id="nodes"></g></g>
  </svg>
</div>
<aside id="panel"><p class="hint">Click a node to see its properties and the Cypher that reads it.
Drag to move, scroll to zoom.</p></aside>
<script type="application/json" id="data">__DATA__</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var SVG = "http://www.w3.org/2000/svg", UNIT = 90, R = 14;
  var palette = ["#ffffff", "#f2b134", "#9ecae1", "#c7e9c0", "#fdd0a2", "#dadaeb", "#fcbba1", "#d9d9d9"];
  var colourOf = {}, labels = [];
  data.nodes.forEach(function (n) {
    if (!(n.label in colourOf)) { colourOf[n.label] = palette[labels.length % palette.length]; labels.push(n.label); }
  });
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  document.getElementById("title").textContent = data.task;
  var what = data.family + " task; " + data.nodes.length + " nodes, " + data.edges.length + " edges";
  if (data.props.description) { what += " - " + data.props.description; }
  document.getElementById("what").textContent = what;
  document.getElementById("legend").innerHTML = labels.map(function (l) {
    return '<span><i style="background:' + colourOf[l] + '"></i>' + esc(l) + "</span>";
  }).join("") + '<span><i style="background:#fff;border:3px solid #1a9850"></i>start</span>' +
    '<span><i style="background:#4a78d6"></i>reward &gt; 0</span>' +
    '<span><i style="background:#d64a4a"></i>reward &lt; 0</span>';

  var byId = {};
  data.nodes.forEach(function (n) { n.px = n.x * UNIT; n.py = n.y * UNIT; byId[n.id] = n; });
  function rewardOf(n) {
    var v = n.props.values;
    if (n.label === "Reward" && v && v.length) { return v.reduce(function (a, b) { return a + b; }, 0) / v.length; }
    return 0;
  }
  var edgesG = document.getElementById("edges"), nodesG = document.getElementById("nodes");
  var pairs = {};
  data.links.forEach(function (e) { pairs[e.source + "\\u0000" + e.target] = true; });
  data.links.forEach(function (e) {
    var a = byId[e.source], b = byId[e.target];
    if (!a || !b) { return; }
    var path, lx, ly;
    if (a === b) {
      path = "M " + (a.px - 6) + " " + (a.py - R) + " C " + (a.px - 26) + " " + (a.py - 52) + " " + (a.px + 26) + " " +
        (a.py - 52) + " " + (a.px + 6) + " " + (a.py - R);
      lx = a.px; ly = a.py - 44;
    } else {
      var dx = b.px - a.px, dy = b.py - a.py, d = Math.sqrt(dx * dx + dy * dy) || 1;
      var bend = pairs[e.target + "\\u0000" + e.source] ? 0.15 : 0;
      var sx = a.px + dx / d * R, sy = a.py + dy / d * R, tx = b.px - dx / d * R, ty = b.py - dy / d * R;
      var cx = (sx + tx) / 2 + bend * dy, cy = (sy + ty) / 2 - bend * dx;
      path = "M " + sx + " " + sy + " Q " + cx + " " + cy + " " + tx + " " + ty;
      lx = (sx + 2 * cx + tx) / 4; ly = (sy + 2 * cy + ty) / 4;
    }
    var line = el("path", {d: path, "class": "edge", "data-source": e.source, "data-target": e.target,
      "marker-end": "url(#arrow)"}, edgesG);
    e.element = line;
    if (data.labelEdges && e.text) {
      var t = el("text", {x: lx, y: ly + 3, "class": "edge-label"}, edgesG);
      t.textContent = e.text;
    }
  });
  data.nodes.forEach(function (n) {
    var g = el("g", {"class": "node" + (n.start ? " start" : ""), "data-id": n.id, transform:
      "translate(" + n.px + "," + n.py + ")"}, nodesG);
    var fill = colourOf[n.label], value = rewardOf(n);
    if (n.wall) { fill = "#a5a5a5"; }
    if (value > 0) { fill = "#4a78d6"; } else if (value < 0) { fill = "#d64a4a"; }
    el("circle", {r: n.label === "Reward" ? R * 0.8 : R, fill: fill}, g);
    var t = el("text", {y: 4, fill: value !== 0 ? "#fff" : "#000"}, g);
    t.textContent = n.text;
    if (n.name) { var s = el("text", {y: R + 11, "class": "name"}, g); s.textContent = n.name; }
    var title = el("title", {}, g);
    title.textContent = n.label + " " + n.id;
    g.addEventListener("click", function (event) { event.stopPropagation(); show(n, g); });
  });

  var selected = null;
  function show(n, g) {
    if (selected) { selected.classList.remove("selected"); }
    selected = g; g.classList.add("selected");
    data.links.forEach(function (e) {
      if (e.element) { e.element.classList.toggle("hit", e.source === n.id || e.target === n.id); }
    });
    var rows = Object.keys(n.props).sort().map(function (k) {
      return "<tr><td>" + esc(k) + "</td><td>" + esc(JSON.stringify(n.props[k])) + "</td></tr>";
    }).join("");
    var out = data.edges.filter(function (e) { return e.source === n.id; });
    var into = data.edges.filter(function (e) { return e.target === n.id; });
    function list(edges, other) {
      return edges.map(function (e) {
        return "<li>" + esc(e.rel) + " " + esc(e.text !== e.rel ? e.text : "") + " " + esc(other(e)) + "</li>";
      }).join("");
    }
    var quote = function (s) { return "'" + String(s).replace(/\\\\/g, "\\\\\\\\").replace(/'/g, "\\\\'") + "'"; };
    var cypher = "MATCH (n:" + n.label + ") WHERE n.uid = " + quote(n.uid) + "\\nRETURN n";
    var around = "MATCH (n:" + n.label + ")-[r]->(m) WHERE n.uid = " + quote(n.uid) + "\\nRETURN type(r), r, m.uid";
    document.getElementById("panel").innerHTML =
      "<h2>" + esc(n.label) + " " + esc(n.id) + (n.start ? " (start)" : "") + "</h2>" +
      '<table id="props">' + rows + "</table>" +
      "<h3>edges out (" + out.length + ")</h3><ul>" + list(out, function (e) { return "-> " + e.target; }) + "</ul>" +
      "<h3>edges in (" + into.length + ")</h3><ul>" + list(into, function (e) { return "<- " + e.source; }) + "</ul>" +
      '<h3>Cypher</h3><pre class="cypher" id="cypher">' + esc(cypher) + "</pre>" +
      '<pre class="cypher">' + esc(around) + "</pre>" +
      '<p class="hint">graphtasks cypher "..." runs it on the store.</p>';
  }

  // pan and zoom: the world group's transform
  var svg = document.getElementById("canvas"), world = document.getElementById("world");
  var view = {x: 0, y: 0, k: 1}, drag = null;
  function apply() {
    world.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")");
  }
  function fit() {
    var xs = data.nodes.map(function (n) { return n.px; }), ys = data.nodes.map(function (n) { return n.py; });
    if (!xs.length) { return; }
    var minX = Math.min.apply(null, xs) - 60, maxX = Math.max.apply(null, xs) + 60;
    var minY = Math.min.apply(null, ys) - 60, maxY = Math.max.apply(null, ys) + 60;
    var box = svg.getBoundingClientRect();
    view.k = Math.min(box.width / (maxX - minX), box.height / (maxY - minY), 2);
    view.x = (box.width - (maxX - minX) * view.k) / 2 - minX * view.k;
    view.y = (box.height - (maxY - minY) * view.k) / 2 - minY * view.k;
    apply();
  }
  svg.addEventListener("mousedown", function (e) {
    drag = {x: e.clientX - view.x, y: e.clientY - view.y};
    svg.classList.add("dragging");
  });
  window.addEventListener("mousemove", function (e) {
    if (drag) { view.x = e.clientX - drag.x; view.y = e.clientY - drag.y; apply(); }
  });
  window.addEventListener("mouseup", function () { drag = null; svg.classList.remove("dragging"); });
  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var box = svg.getBoundingClientRect(), mx = e.clientX - box.left, my = e.clientY - box.top;
    var f = Math.exp(-e.deltaY * 0.0015), k = Math.max(0.05, Math.min(20, view.k * f));
    view.x = mx - (mx - view.x) * k / view.k; view.y = my - (my - view.y) * k / view.k; view.k = k; apply();
  }, {passive: false});
  window.addEventListener("resize", fit);
  fit();
  document.body.setAttribute("data-ready", "true");
})();
</script>
</body>
</html>
"""
