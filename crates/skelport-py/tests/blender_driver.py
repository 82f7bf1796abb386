"""Runs inside Blender (the PyPI `bpy` module, or `blender -b --python`): installs the built
add-on the way a user does, then for each case runs File > Import > Skeleton (skelport) and
File > Export > Skeleton (skelport) headless and records what Blender holds, for
test_blender_extension.py to compare with skelport's own reading of the files.

    python blender_driver.py CASES.json RESULTS.json            (bpy module; BLENDER_USER_RESOURCES set)
    blender -b --factory-startup --python blender_driver.py -- CASES.json RESULTS.json

CASES.json: {"addon": ZIP, "cases": [{"key", "input", "import": {...}, "export": PATH,
"export_options": {...}}]}. RESULTS.json: per case the bones (world head, 3x3 world rest
orientation, rows) of every armature, and per mesh its vertex groups and per-corner UVs; the
operators' results and reports; seconds for the import.
"""

import json
import os
import sys
import time

import bpy
import mathutils

args = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]
spec = json.loads(open(args[0]).read())
out_path = args[1]
VERSION = bpy.app.version


def install(addon):
    """As a user installs it: an extension (Blender 4.2+) from the zip into the user repository,
    or a legacy add-on (Blender 3.x) through Preferences > Add-ons > Install."""
    if VERSION >= (4, 2, 0):
        r = bpy.ops.extensions.package_install_files(filepath=addon, repo="user_default", enable_on_install=True)
        assert r == {"FINISHED"}, r
        module = "bl_ext.user_default.skelport"
    else:
        r = bpy.ops.preferences.addon_install(filepath=addon, overwrite=True)
        assert r == {"FINISHED"}, r
        module = "skelport_blender"
        assert bpy.ops.preferences.addon_enable(module=module) == {"FINISHED"}
    assert hasattr(bpy.ops.import_scene, "skelport") and hasattr(bpy.ops.export_scene, "skelport"), "the operators are not registered"
    import addon_utils

    return module, [m.__name__ for m in addon_utils.modules() if m.__name__.endswith("skelport") or m.__name__ == "skelport_blender"]


def clear():
    for coll in (bpy.data.objects, bpy.data.meshes, bpy.data.armatures):
        for item in list(coll):
            coll.remove(item)


def record():
    arms, meshes = {}, []
    for o in bpy.context.scene.objects:
        if o.type == "ARMATURE":
            w = o.matrix_world
            bones = {}
            for b in o.data.bones:
                m = w @ b.matrix_local
                bones[b.name] = {
                    "head": list(m.translation),
                    "tail": list(w @ b.tail_local),
                    "rotation": [list(m[r][:3]) for r in range(3)],
                    "parent": b.parent.name if b.parent else None,
                }
            arms[o.name] = bones
    for o in bpy.context.scene.objects:
        if o.type != "MESH":
            continue
        me = o.data
        names = {g.index: g.name for g in o.vertex_groups}
        groups = [{names[g.group]: g.weight for g in v.groups if g.weight > 0} for v in me.vertices]
        uv = None
        if me.uv_layers.active is not None:
            flat = [0.0] * (len(me.loops) * 2)
            me.uv_layers.active.data.foreach_get("uv", flat)
            uv = flat
        loops = [0] * len(me.loops)
        me.loops.foreach_get("vertex_index", loops)
        meshes.append({
            "name": o.name,
            "vertices": len(me.vertices),
            "positions": [list(o.matrix_world @ v.co) for v in me.vertices],
            "corners": loops,
            "uvs": uv,
            "groups": groups,
            "armature_modifier": any(m.type == "ARMATURE" and m.object is not None for m in o.modifiers),
        })
    return arms, meshes


def edit(case):
    """A user's edit between import and export: a bone moved in Edit Mode (head and tail by the
    same offset, Blender's frame), a vertex given weight in another vertex group."""
    e = case.get("edit") or {}
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    if "move_bone" in e:
        bpy.context.view_layer.objects.active = arm
        bpy.ops.object.mode_set(mode="EDIT")
        eb = arm.data.edit_bones[e["move_bone"]]
        d = mathutils.Vector(e["by"])
        eb.head, eb.tail = eb.head + d, eb.tail + d
        bpy.ops.object.mode_set(mode="OBJECT")
    if "paint" in e:
        p = e["paint"]
        obj = next(o for o in bpy.context.scene.objects if o.type == "MESH" and p["group"] in o.vertex_groups)
        obj.vertex_groups[p["group"]].add([p["vertex"]], p["weight"], "REPLACE")


def run(case):
    clear()
    opts = {k: v for k, v in case.get("import", {}).items() if v}
    start = time.perf_counter()
    r = bpy.ops.import_scene.skelport(filepath=case["input"], **opts)
    seconds = time.perf_counter() - start
    res = {"key": case["key"], "import": sorted(r), "import_seconds": seconds}
    if r != {"FINISHED"}:
        return res
    arms, meshes = record()
    if case.get("record", True):
        res.update(armatures=arms, meshes=meshes)
    res["bone_count"] = sum(len(a) for a in arms.values())
    if case.get("edit"):
        edit(case)
    if case.get("export"):
        arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
        bpy.context.view_layer.objects.active = arm
        start = time.perf_counter()
        r = bpy.ops.export_scene.skelport(filepath=case["export"], **case.get("export_options", {}))
        res["export"] = sorted(r)
        res["export_seconds"] = time.perf_counter() - start
    return res


module, found = install(spec["addon"])
results = {"blender": bpy.app.version_string, "module": module, "addons": found, "cases": []}
for case in spec["cases"]:
    try:
        results["cases"].append(run(case))
    except Exception as e:  # the test reports it beside the case's key
        results["cases"].append({"key": case["key"], "exception": f"{type(e).__name__}: {e}"})
with open(out_path, "w") as f:
    json.dump(results, f)
