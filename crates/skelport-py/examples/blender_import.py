"""Import any skeleton skelport reads into Blender as an armature: AnvilToolkit skeleton XML,
G4MF, MPFB (MakeHuman) rigs placed on their base mesh, glTF, Second Life Collada, ir-json.

As an add-on: install the `skelport` wheel where Blender's Python finds it (for example
``pip install --target ~/.config/blender/3.4/scripts/modules skelport``), then install this file
(Edit > Preferences > Add-ons > Install) and use File > Import > Skeleton (skelport).

As a script (headless too), one file per run:

    blender -b --python blender_import.py -- FILE [--mesh OBJ] [--weights JSON]
                                               [--format NAME] [--heads OUT.json]

``--heads`` writes every bone's head and rest orientation (a 3x3 matrix, rows) as Blender placed
them (world coordinates, metres), and each mesh's vertex, vertex-group and weighted-vertex
counts, to a JSON file, for a test to compare with ``skelport inspect --json``.

Bones keep their exact rest orientation (the bone's +Y along skelport's rotation, the roll from
it), their length from the file's bone tail where it has one; meshes come with one vertex group
per joint and an Armature modifier.
"""

import json
import sys

import bpy
import numpy as np
from bpy.props import StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Matrix

import skelport

bl_info = {
    "name": "Skeleton (skelport)",
    "description": "Import MPFB, AnvilToolkit, G4MF, glTF and Second Life skeletons with skelport",
    "blender": (3, 4, 0),
    "category": "Import-Export",
    "location": "File > Import > Skeleton (skelport)",
}

# skelport's arrays are in its report frame (glTF's: +Y up, +Z forward, right-handed, metres);
# Blender's is +Z up, -Y forward, right-handed, metres: (x, y, z) -> (x, -z, y).
TO_BLENDER = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
MIN_LENGTH = 1e-3  # Blender deletes zero-length bones


def rotation_matrices(q):
    """(n, 4) quaternions x, y, z, w -> (n, 3, 3) rotation matrices."""
    x, y, z, w = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1),
        ],
        axis=1,
    )


def build_armature(context, sk, name):
    """An armature object for one skelport skeleton."""
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    context.view_layer.objects.active = obj
    obj.select_set(True)
    heads = sk.heads @ TO_BLENDER.T
    lengths = np.maximum(np.linalg.norm(sk.tails - sk.heads, axis=1), MIN_LENGTH)
    rot = TO_BLENDER @ rotation_matrices(sk.rotations)  # the bone's own axes kept: +Y along it
    bpy.ops.object.mode_set(mode="EDIT")
    bones = []
    for i, bone_name in enumerate(sk.bone_names):
        eb = arm.edit_bones.new(bone_name)
        eb.head = heads[i]
        eb.tail = heads[i] + rot[i][:, 1] * lengths[i]
        m = Matrix.Identity(4)
        for r in range(3):
            for c in range(3):
                m[r][c] = rot[i][r, c]
            m[r][3] = heads[i][r]
        eb.matrix = m  # the exact orientation (roll included); keeps head and length
        if sk.parents[i] >= 0:
            eb.parent = bones[sk.parents[i]]
        bones.append(eb)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def build_mesh(context, mesh, skin, armature_obj):
    """A mesh object, with vertex groups from the skin and an Armature modifier."""
    positions = mesh.positions @ TO_BLENDER.T
    faces = [f[f >= 0].tolist() for f in mesh.faces]
    me = bpy.data.meshes.new(mesh.name or "mesh")
    me.from_pydata(positions.tolist(), [], faces)
    me.update()
    obj = bpy.data.objects.new(mesh.name or "mesh", me)
    context.collection.objects.link(obj)
    if skin is not None:
        joints, weights = skin.influences()
        groups = [obj.vertex_groups.new(name=n) for n in skin.joint_names]
        for v, (js, ws) in enumerate(zip(joints.tolist(), weights.tolist())):
            for j, w in zip(js, ws):
                if w > 0:
                    groups[j].add([v], w, "REPLACE")
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = armature_obj
        obj.parent = armature_obj
    return obj


def import_file(context, path, mesh=None, weights=None, format=None):
    """Read `path` with skelport and build its armatures (and meshes). Returns the document and
    the armature objects, one per skeleton."""
    doc = skelport.load(path, mesh=mesh or None, weights=weights or None, format=format or None)
    armatures = [build_armature(context, sk, sk.name or "skeleton") for sk in doc.skeletons]
    for k, m in enumerate(doc.meshes):
        skin = next((s for s in doc.skins if s.mesh == k), None)
        build_mesh(context, m, skin, armatures[skin.skeleton] if skin is not None else None)
    return doc, armatures


class ImportSkelport(bpy.types.Operator, ImportHelper):
    """Import a skeleton (and its skinned mesh) with skelport"""

    bl_idname = "import_scene.skelport"
    bl_label = "Import Skeleton (skelport)"
    bl_options = {"REGISTER", "UNDO"}

    filter_glob: StringProperty(default="*.json;*.xml;*.g4tf;*.g4b;*.gltf;*.glb;*.dae", options={"HIDDEN"})
    mesh: StringProperty(name="Mesh (OBJ)", description="The base mesh an MPFB rig is placed on", subtype="FILE_PATH")
    weights: StringProperty(name="Weights", description="An MPFB weights file to join to the rig", subtype="FILE_PATH")

    def execute(self, context):
        try:
            doc, _ = import_file(context, self.filepath, self.mesh, self.weights)
        except skelport.Error as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        for d in doc.diagnostics:
            self.report({"WARNING"} if d.severity != "info" else {"INFO"}, d.message)
        return {"FINISHED"}


def menu_func_import(self, context):
    self.layout.operator(ImportSkelport.bl_idname, text="Skeleton (skelport)")


def register():
    bpy.utils.register_class(ImportSkelport)
    bpy.types.TOPBAR_MT_file_import.append(menu_func_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(menu_func_import)
    bpy.utils.unregister_class(ImportSkelport)


def main(argv):
    """Headless import of one file: blender -b --python blender_import.py -- FILE [options]."""
    args = {"mesh": None, "weights": None, "format": None, "heads": None}
    path, rest = argv[0], argv[1:]
    while rest:
        key, value, rest = rest[0].lstrip("-"), rest[1], rest[2:]
        args[key] = value
    bpy.ops.wm.read_factory_settings(use_empty=True)
    doc, armatures = import_file(bpy.context, path, args["mesh"], args["weights"], args["format"])
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
    if "--" in sys.argv:
        main(sys.argv[sys.argv.index("--") + 1:])
    else:
        register()
