"""Grid worlds: text map files (`maps`), stored grids read back as layouts (`variants`), the
schema fragment, entity classes and the family declaration."""

from .maps import (
    PREFIX,
    GridLayout,
    GridObjects,
    add_template_folder,
    build_grid_task,
    grid_task_id,
    layout,
    objects_from_dict,
    parse_template,
    template_names,
)
from .variants import layout_from_graph

__all__ = [
    "PREFIX", "GridLayout", "GridObjects", "add_template_folder", "build_grid_task", "grid_task_id", "layout",
    "layout_from_graph", "objects_from_dict", "parse_template", "template_names",
]
