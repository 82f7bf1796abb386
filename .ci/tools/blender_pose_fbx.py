# Blender headless: the pose test of an FBX against skelport's .glb of it (issue 32's reference).
# Imports FBX (Blender's FBX importer) and GLB (Blender's glTF importer) into separate scenes,
# poses both armatures with the same world-space pose (per bone a rotation of up to 0.6 rad about
# its head, composed down the hierarchy, seeded by the bone's name), evaluates the deformed meshes
# and compares: each GLB vertex against the FBX vertex at its rest position.
# Fails (exit 1 with --python-exit-code 1) when a posed vertex is further than 1e-5 of the
# model's size from Blender's own deformation of the FBX.
# Usage: blender -b --factory-startup -noaudio --python-exit-code 1 --python blender_pose_fbx.py -- FILE.fbx FILE.glb
import bpy, sys, json, math, zlib, random
import numpy
if not hasattr(numpy, "bool"):
    numpy.bool = bool  # Blender 3.4's glTF importer still says np.bool
from mathutils import Matrix, Vector, Quaternion
from mathutils.kdtree import KDTree

bpy.ops.wm.read_factory_settings(use_empty=True)
fbx, glb = sys.argv[sys.argv.index("--") + 1:][:2]


def load(path, importer):
    # Both files go into one scene (the depsgraph of the context's view layer), told apart by
    # the objects each import added.
    scene = bpy.context.scene
    before = set(scene.objects)
    importer(filepath=path)
    new = [o for o in scene.objects if o not in before]
    arms = [o for o in new if o.type == "ARMATURE"]
    meshes = [o for o in new if o.type == "MESH" and any(m.type == "ARMATURE" for m in o.modifiers)]
    for o in new:  # the file's animation would set the pose again on every frame change
        o.animation_data_clear()
    return scene, arms, meshes


def rotation(name, seed):
    r = random.Random(zlib.crc32(name.encode()) ^ seed)
    axis = Vector((r.uniform(-1, 1), r.uniform(-1, 1), r.uniform(-1, 1))).normalized()
    return Quaternion(axis, r.uniform(-0.6, 0.6)).to_matrix().to_4x4()


def pose(scene, arms, seed):
    for arm in arms:
        mw = arm.matrix_world
        world = {}  # bone name -> posed world transform P (world space)
        for b in arm.data.bones:  # parents come before children
            head = mw @ b.head_local
            local = Matrix.Translation(head) @ rotation(b.name, seed) @ Matrix.Translation(-head)
            parent = world.get(b.parent.name) if b.parent else None
            world[b.name] = (parent @ local) if parent is not None else local
        for b in arm.data.bones:
            pb = arm.pose.bones[b.name]
            pb.matrix = mw.inverted() @ world[b.name] @ mw @ b.matrix_local
            bpy.context.view_layer.update()
    scene.frame_set(scene.frame_current)


def vertices(scene, meshes, posed):
    dg = bpy.context.evaluated_depsgraph_get()
    out = []
    for o in meshes:
        if posed:
            ev = o.evaluated_get(dg)
            me = ev.to_mesh()
            out += [o.matrix_world @ v.co for v in me.vertices]
            ev.to_mesh_clear()
        else:
            out += [o.matrix_world @ v.co for v in o.data.vertices]
    return out


a_scene, a_arms, a_meshes = load(fbx, bpy.ops.import_scene.fbx)
a_rest = vertices(a_scene, a_meshes, False)
b_scene, b_arms, b_meshes = load(glb, bpy.ops.import_scene.gltf)
b_rest = vertices(b_scene, b_meshes, False)
size = max((max(v[i] for v in a_rest) - min(v[i] for v in a_rest)) for i in range(3))
tree = KDTree(len(a_rest))
for i, v in enumerate(a_rest):
    tree.insert(v, i)
tree.balance()
match = [tree.find(v) for v in b_rest]
rest_gap = max(d for _, _, d in match)
worst = 0.0
for seed in range(4):
    pose(a_scene, a_arms, seed)
    a_posed = vertices(a_scene, a_meshes, True)
    pose(b_scene, b_arms, seed)
    b_posed = vertices(b_scene, b_meshes, True)
    moved = max((a_posed[i] - a_rest[i]).length for i in range(len(a_rest)))
    for (co, i, d), p in zip(match, b_posed):
        worst = max(worst, (p - a_posed[i]).length)
result = {
    "fbx": fbx.split("/")[-1], "bones": [len(a.data.bones) for a in a_arms], "glb_bones": [len(b.data.bones) for b in b_arms],
    "vertices": [len(a_rest), len(b_rest)], "model_size": size, "rest_gap": rest_gap,
    "posed_gap": worst, "largest_move": moved,
}
print("RESULT " + json.dumps(result))
if not b_rest or moved == 0.0 or worst > 1e-5 * size:
    raise SystemExit(f"{fbx}: posed vertices {worst:.3e} m from Blender's (limit {1e-5 * size:.3e} m), largest move {moved:.3e} m")
