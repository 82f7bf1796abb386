"""Runs inside Blender 4.2+ (the PyPI `bpy` module): installs MPFB 2 and the skelport add-on as
extensions into `BLENDER_USER_RESOURCES`, has MPFB build a default human with its game_engine rig
and weights (as New Human > Add rig does), and exports the rig and the human with the skelport
add-on to each case's file. It also writes the human's mesh as MPFB's base.obj with the human's
positions (shape keys applied), so that `skelport convert` of MPFB's rig and weights files can be
run on the same body for test_blender_extension.py to compare.

    python blender_mpfb.py SPEC.json RESULTS.json

SPEC.json: {"mpfb": ZIP, "skelport": ZIP, "base_obj": PATH, "character_obj": PATH, "rig": NAME,
"exports": [{"path", "options"}]}.
"""

import json
import sys
import time

import bpy
import numpy as np

spec = json.loads(open(sys.argv[1]).read())
out_path = sys.argv[2]
for z in (spec["mpfb"], spec["skelport"]):
    r = bpy.ops.extensions.package_install_files(filepath=z, repo="user_default", enable_on_install=True)
    assert r == {"FINISHED"}, (z, r)
from bl_ext.user_default.mpfb.services.humanservice import HumanService  # noqa: E402

results = {"blender": bpy.app.version_string}
start = time.perf_counter()
human = HumanService.create_human()
rig = HumanService.add_builtin_rig(human, spec["rig"])
results["build_seconds"] = time.perf_counter() - start
results["bones"] = len(rig.data.bones)
results["groups"] = len(human.vertex_groups)

# The human's positions as MPFB shaped them (shape keys mixed as Blender does), world space.
me = human.data
co = np.empty(len(me.vertices) * 3)
me.vertices.foreach_get("co", co)
co = co.reshape(-1, 3)
if me.shape_keys is not None:
    base = co.copy()
    for kb in me.shape_keys.key_blocks[1:]:
        if kb.mute or kb.value == 0:
            continue
        k = np.empty(len(me.vertices) * 3)
        kb.data.foreach_get("co", k)
        r = np.empty(len(me.vertices) * 3)
        kb.relative_key.data.foreach_get("co", r)
        co += kb.value * (k - r).reshape(-1, 3)
    results["shape_keys"] = len(me.shape_keys.key_blocks) - 1
    results["shape_moved_max"] = float(np.abs(co - base).max())
w = np.array(human.matrix_world)
co = co @ w[:3, :3].T + w[:3, 3]
# base.obj: decimetres, +Y up (MPFB loads it at 0.1, Z up): (x, y, z) -> (x, z, -y) / 0.1.
obj_co = np.stack([co[:, 0], co[:, 2], -co[:, 1]], axis=1) / 0.1
lines = open(spec["base_obj"]).read().splitlines()
v = 0
out = []
for line in lines:
    if line.startswith("v "):
        x, y, z = obj_co[v]
        out.append(f"v {x:.9g} {y:.9g} {z:.9g}")
        v += 1
    else:
        out.append(line)
assert v == len(obj_co), f"base.obj has {v} vertices, MPFB's human {len(obj_co)}"
open(spec["character_obj"], "w").write("\n".join(out) + "\n")
results["vertices"] = v

bpy.context.view_layer.objects.active = rig
results["exports"] = []
for e in spec["exports"]:
    try:
        start = time.perf_counter()
        r = bpy.ops.export_scene.skelport(filepath=e["path"], **e.get("options", {}))
        results["exports"].append({"path": e["path"], "result": sorted(r), "seconds": time.perf_counter() - start})
    except Exception as ex:  # reported beside the file by the test
        results["exports"].append({"path": e["path"], "exception": f"{type(ex).__name__}: {ex}"})
with open(out_path, "w") as fh:
    json.dump(results, fh)
