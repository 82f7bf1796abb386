# Blender headless: import a .glb/.gltf/.dae and print every armature bone's head in glTF's frame
# (+Y up, +Z forward, metres) as JSON, for comparison with `skelport inspect --json`.
# Usage: blender -b --factory-startup -noaudio --python blender_heads.py -- FILE OUT.json
import sys, json
import numpy
numpy.bool = bool  # Blender 3.4's glTF add-on uses numpy.bool, removed from newer numpy.
import bpy

args = sys.argv[sys.argv.index("--") + 1:]
path, out = args[0], args[1]
bpy.ops.wm.read_factory_settings(use_empty=True)
if path.lower().endswith(".dae"):
    bpy.ops.wm.collada_import(filepath=path)
else:
    bpy.ops.import_scene.gltf(filepath=path)
heads = {}
for ob in bpy.data.objects:
    if ob.type != "ARMATURE":
        continue
    for b in ob.data.bones:
        h = ob.matrix_world @ b.head_local
        # Blender Z-up → glTF Y-up: (x, y, z) → (x, z, -y)
        heads[b.name] = [h.x, h.z, -h.y]
json.dump(heads, open(out, "w"))
