"""Runs inside Blender 4.2+ (the PyPI `bpy` module): installs the VRM add-on for Blender
(saturday06/VRM-Addon-for-Blender, an extension zip) into `BLENDER_USER_RESOURCES`, imports each
VRM file with it and records which bone it assigned to each VRM humanoid role, for
test_blender_extension.py to compare with the roles skelport wrote.

    python blender_vrm_addon.py ADDON.zip RESULTS.json FILE.vrm...
"""

import json
import sys

import bpy

addon, out_path, files = sys.argv[1], sys.argv[2], sys.argv[3:]
r = bpy.ops.extensions.package_install_files(filepath=addon, repo="user_default", enable_on_install=True)
assert r == {"FINISHED"}, r
results = {"blender": bpy.app.version_string, "files": {}}
for f in files:
    # (Not read_factory_settings: it would disable the add-on.)
    for coll in (bpy.data.objects, bpy.data.meshes, bpy.data.armatures):
        for item in list(coll):
            coll.remove(item)
    res = {}
    try:
        res["import"] = sorted(bpy.ops.import_scene.vrm(filepath=f))
        arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
        human = arm.data.vrm_addon_extension.vrm1.humanoid.human_bones
        roles = {}
        for role, bone in human.human_bone_name_to_human_bone().items():
            if bone.node.bone_name:
                roles[role.value] = bone.node.bone_name
        res["roles"] = roles
        res["bones"] = len(arm.data.bones)
        res["meshes"] = sum(1 for o in bpy.context.scene.objects if o.type == "MESH")
    except Exception as e:  # reported beside the file by the test
        res["exception"] = f"{type(e).__name__}: {e}"
    results["files"][f] = res
with open(out_path, "w") as fh:
    json.dump(results, fh)
