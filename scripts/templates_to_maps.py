"""One-off conversion of the reference layouts (templates.json) into the text maps in
data/neuronav/grids/. Kept for provenance: after the first run the map files are the
source of truth and are edited by hand (the micro fixes below were written this way).

Usage: python scripts/templates_to_maps.py PATH/TO/templates.json [OUT_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HEADER = """\
# {name}: neuro-nav GridEnv template '{name}', converted from the reference layouts (neuro-nav 2.5.0).
# Map legend: '#' wall, '.' free, 'A' agent start, 'R' reward > 0, 'L' reward <= 0,
# 'K' key, 'D' door, 'W' warp. Object lines under a map (row col counted from the top-left, 0-based):
#   reward ROW COL VALUE [visible|hidden] [terminate|continue]
#   key ROW COL          door ROW COL h|v          warp ROW COL TARGET_ROW TARGET_COL
#   marker ROW COL RED GREEN BLUE
name {name}
"""


def convert(name: str, layouts: dict, reference: str) -> str:
    out = [HEADER.format(name=name)]
    if reference:
        out.append(f"reference {reference}\n")
    for size in ("micro", "small", "large"):
        layout = layouts[size]
        n = layout["n"]
        grid = [["."] * n for _ in range(n)]
        for r, c in layout["walls"]:
            if r < n and c < n:
                grid[r][c] = "#"
        lines: list[str] = []
        objects = layout["objects"]
        for item in objects.get("rewards", []):
            (r, c), value = item["pos"], item["value"]
            if r >= n or c >= n:
                continue
            v = value[0] if isinstance(value, list) else value
            grid[r][c] = "R" if v > 0 else "L"
            lines.append(f"reward {r} {c} {float(v):g}")
        for r, c in objects.get("keys", []):
            grid[r][c] = "K"
            lines.append(f"key {r} {c}")
        for item in objects.get("doors", []):
            (r, c) = item["pos"]
            grid[r][c] = "D"
            lines.append(f"door {r} {c} {item['value']}")
        for item in objects.get("warps", []):
            (r, c), (tr, tc) = item["pos"], item["value"]
            grid[r][c] = "W"
            lines.append(f"warp {r} {c} {tr} {tc}")
        for item in objects.get("markers", []):
            (r, c), colour = item["pos"], item["value"]
            lines.append(f"marker {r} {c} {' '.join(str(int(x)) for x in colour)}")
        r, c = layout["agent_start"]
        grid[r][c] = "A"
        out.append(f"\n[{size}]\n")
        out.extend("".join(row) + "\n" for row in grid)
        out.extend(line + "\n" for line in lines)
    return "".join(out)


REFERENCES = {
    "detour": "Russek et al., 2017, PLoS Comput Biol, doi:10.1371/journal.pcbi.1005768",
    "detour_block": "Russek et al., 2017, PLoS Comput Biol, doi:10.1371/journal.pcbi.1005768",
    "obstacle": "Stachenfeld et al., 2017, Nat Neurosci, doi:10.1038/nn.4650",
    "narrow": "Zorowitz et al., 2020, Comput Psychiatr, PMC8143038",
}


def main() -> None:
    source = Path(sys.argv[1])
    out_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parents[1] / "data/neuronav/grids"
    grid = json.loads(source.read_text())["grid"]
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, layouts in grid.items():
        (out_dir / f"{name}.txt").write_text(convert(name, layouts, REFERENCES.get(name, "")))


if __name__ == "__main__":
    main()
