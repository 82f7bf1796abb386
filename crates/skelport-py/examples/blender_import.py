"""Import one file skelport reads into Blender, headless, with the add-on's own code
(crates/skelport-py/blender/, loaded from beside this folder; the `skelport` package must be where
Blender's Python finds it, for example ``pip install --target ~/.config/blender/3.4/scripts/modules
skelport``):

    blender -b --python blender_import.py -- FILE [--mesh OBJ] [--weights JSON]
                                               [--format NAME] [--heads OUT.json]

``--heads`` writes every bone's head and rest orientation (a 3x3 matrix, rows) as Blender placed
them (world coordinates, metres), and each mesh's vertex, vertex-group and weighted-vertex
counts, to a JSON file, for a test to compare with ``skelport inspect --json``. To use it from
File > Import, install the add-on instead (docs/python.md, "Blender").
"""

import importlib.util
import json
import sys
from pathlib import Path

import bpy

ADDON = Path(__file__).resolve().parents[1] / "blender" / "__init__.py"


def load_addon():
    spec = importlib.util.spec_from_file_location("skelport_blender_addon", ADDON)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv):
    """Headless import of one file: blender -b --python blender_import.py -- FILE [options]."""
    args = {"mesh": None, "weights": None, "format": None, "heads": None}
    path, rest = argv[0], argv[1:]
    while rest:
        key, value, rest = rest[0].lstrip("-"), rest[1], rest[2:]
        args[key] = value
    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon = load_addon()
    doc, armatures, _ = addon.import_file(bpy.context, path, mesh=args["mesh"], weights=args["weights"], format=args["format"])
    bpy.context.view_layer.update()
    placed = {}
    for obj in armatures:
        for b in obj.data.bones:
            m = obj.matrix_world @ b.matrix_local
            placed[b.name] = {"head": list(m.translation), "rotation": [list(r[:3]) for r in m.to_3x3()]}
    print(f"{path}: {len(placed)} bones in {len(armatures)} armature(s), {len(doc.meshes)} mesh(es)")
    if args["heads"]:
        meshes = [
            {"vertices": len(o.data.vertices), "groups": len(o.vertex_groups), "weighted": sum(1 for v in o.data.vertices if v.groups)}
            for o in bpy.context.scene.objects
            if o.type == "MESH"
        ]
        with open(args["heads"], "w") as f:
            json.dump({"bones": placed, "meshes": meshes}, f)


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1 :])
