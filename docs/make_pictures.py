"""Draw every grid template at sizes small and large into docs/images/grid_<size>/<template>.png.

Run from the repository root: `python docs/make_pictures.py [--store PATH]`. The pictures
come from the stored graphs, as an environment sees them (agent at the start, facing north).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from gym_bridge.grid.env import GridEnv  # noqa: E402
from tasks.grid.maps import template_names  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--store", default=":memory:", help="store to read the grids from (default: a fresh in-memory store)"
    )
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"))
    args = parser.parse_args()
    from graphstore import open_store

    store = open_store(args.store)
    for size in ("small", "large"):
        folder = Path(args.out) / f"grid_{size}"
        folder.mkdir(parents=True, exist_ok=True)
        for name in template_names():
            env = GridEnv(name, size, store=store, resolution=args.resolution)
            env.reset(seed=0)
            Image.fromarray(env.picture()).save(folder / f"{name}.png")
            print(folder / f"{name}.png")
    store.close()


if __name__ == "__main__":
    main()
