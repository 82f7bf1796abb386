# Blender headless: import a .glb/.gltf/.dae with the importer's default options (what a user gets
# from File > Import) and print, in Blender's world coordinates (compare_heads.py maps them to
# skelport's report frame), as JSON:
#   "posed":   each armature bone's head as shown in the viewport (pose bones, evaluated): the
#              skeleton users see and animate; skelport's `head` (the node rest) must match it.
#   "rest":    each bone's rest (edit-bone) head: the importer builds it from the inverse bind
#              matrices (Collada always; glTF with "Guess Original Bind Pose", on by default), so it
#              is compared with skelport's `bind_head` where the report has one.
#   "objects": every non-armature-bone object's origin (armature objects, empties): nodes Blender
#              does not make bones of (the skeleton's frame node, attachment points, collision
#              volumes) land here, so they are compared too instead of silently dropped.
#   "armatures": armature object names (a skeleton node that became an object, not a bone).
# Usage: blender -b --factory-startup -noaudio --python blender_heads.py -- FILE OUT.json
import sys, json
import numpy
numpy.bool = bool  # Blender 3.4's glTF add-on uses numpy.bool, removed from newer numpy.
import bpy

args = sys.argv[sys.argv.index("--") + 1:]
path, out = args[0], args[1]
bpy.ops.wm.read_factory_settings(use_empty=True)
if path.lower().endswith(".dae"):
    bpy.ops.wm.collada_import(filepath=path)  # defaults: no fix_orientation, no import_units
else:
    bpy.ops.import_scene.gltf(filepath=path)  # defaults: guess_original_bind_pose=True, TEMPERANCE
# Importers set loc/rot/parent; world matrices are only valid after an evaluation.
bpy.context.view_layer.update()


def gl(v):
    return [v.x, v.y, v.z]


res = {"posed": {}, "rest": {}, "objects": {}, "armatures": []}
for ob in bpy.data.objects:
    if ob.type == "ARMATURE":
        res["armatures"].append(ob.name)
        for b in ob.data.bones:
            res["rest"][b.name] = gl(ob.matrix_world @ b.head_local)
        for pb in ob.pose.bones:
            res["posed"][pb.name] = gl(ob.matrix_world @ pb.head)
    if ob.type in ("ARMATURE", "EMPTY"):
        res["objects"][ob.name] = gl(ob.matrix_world.translation)
json.dump(res, open(out, "w"))
