# Blender headless: import a .glb/.gltf with the importer's default options and print, as JSON,
# what a user sees of each mesh: polygon and loop counts, how many polygons are smooth-shaded,
# whether the mesh has custom split normals (the glTF importer makes them from NORMAL), its UV
# layers, and the first UV layer's coordinates loop by loop (Blender's v runs up, as the IR's).
# compare_mesh.py checks them against the source OBJ.
# Usage: blender -b --factory-startup -noaudio --python blender_mesh.py -- FILE OUT.json
import sys, json
import numpy
numpy.bool = bool  # Blender 3.4's glTF add-on uses numpy.bool, removed from newer numpy.
import bpy

args = sys.argv[sys.argv.index("--") + 1:]
path, out = args[0], args[1]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=path)
res = {"meshes": []}
for ob in bpy.data.objects:
    if ob.type != "MESH":
        continue
    me = ob.data
    uv = me.uv_layers[0].data if me.uv_layers else []
    res["meshes"].append({
        "name": ob.name,
        "vertices": len(me.vertices),
        "polygons": len(me.polygons),
        "loops": len(me.loops),
        "smooth_polygons": sum(1 for p in me.polygons if p.use_smooth),
        "custom_normals": bool(me.has_custom_normals),
        "uv_layers": [l.name for l in me.uv_layers],
        # Loop by loop, polygon after polygon (the importer keeps glTF's triangle order).
        "loop_uvs": [[round(d.uv[0], 7), round(d.uv[1], 7)] for d in uv],
    })
json.dump(res, open(out, "w"))
