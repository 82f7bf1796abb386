"""skelport in Blender: File > Import / Export > Skeleton (skelport), for every format skelport
reads and writes (MPFB rigs with their weights, AnvilToolkit skeleton XML, G4MF, glTF, VRM,
Second Life Collada, ir-json).

Import builds each skeleton as an armature with its bones' exact rest orientations, and each
skinned mesh with its UVs, one vertex group per joint and an Armature modifier. Export builds a
skelport document from the selected armature and the meshes it deforms (``skelport.from_arrays``:
no round trip through another exporter) and saves it in the format the file name says. The loss
report goes to Blender's Info area and the operator's report.

As an extension (Blender 4.2+) the abi3 ``skelport`` wheel is bundled; for Blender 3.x the same
file is a legacy add-on (``bl_info``) with the wheel installed beside it (docs/python.md).
"""

import json

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

import skelport

bl_info = {
    "name": "skelport",
    "description": "Import and export rigs and skin weights: MPFB, AnvilToolkit, G4MF, glTF, VRM, SL",
    "blender": (3, 4, 0),
    "version": (0, 1, 0),
    "category": "Import-Export",
    "location": "File > Import / Export > Skeleton (skelport)",
}

# skelport's arrays are in its report frame (glTF's: +Y up, +Z forward, right-handed, metres);
# Blender's is +Z up, -Y forward: (x, y, z) -> (x, -z, y).
TO_BLENDER = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
TO_REPORT = TO_BLENDER.T
MIN_LENGTH = 1e-3  # Blender deletes zero-length bones
# Custom properties the importer leaves for the exporter: what Blender has no place for, so that
# import then export keeps the file (an AnvilToolkit skeleton byte for byte) and an edit keeps the
# rest. On bones: the exact rest matrix (Blender keeps float32), the file's length, roll and mirror
# bone, MPFB placement, format data. On the armature: the skeleton's and document's format data. On
# meshes: their position in the file, format data, and the skin's name and joints.
PROP = "skelport"


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


def _report(op, diagnostics):
    for d in diagnostics:
        op.report({"WARNING"} if d.severity in ("loss", "warning") else {"INFO"}, str(d))


# --------------------------------------------------------------------------------------------
# Import


def _json(value):
    return json.dumps(value, separators=(",", ":")) if value else ""


def _rest_matrices(sk):
    """(n, 4, 4) world rest matrices in the report frame, row-major, as from_arrays takes them."""
    m = np.zeros((len(sk), 4, 4))
    m[:, :3, :3] = rotation_matrices(sk.rotations)
    m[:, :3, 3] = sk.heads
    m[:, 3, 3] = 1.0
    return m


def build_armature(context, sk, name, doc_ext):
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    context.view_layer.objects.active = obj
    obj.select_set(True)
    lengths = np.maximum(np.linalg.norm(sk.tails - sk.heads, axis=1), MIN_LENGTH)
    rest = _rest_matrices(sk)
    # In Blender's frame; the bone's own axes kept (its +Y along it).
    to_blender = np.eye(4)
    to_blender[:3, :3] = TO_BLENDER
    world = to_blender @ rest
    heads, rot = world[:, :3, 3], world[:, :3, :3]
    bpy.ops.object.mode_set(mode="EDIT")
    ebs = arm.edit_bones
    bones = [ebs.new(bone_name) for bone_name in sk.bone_names]
    # In bulk: setting one edit bone's head or tail runs an update over every bone (an import
    # of 65,535 bones took ten minutes bone by bone). The matrix gives the exact orientation (roll
    # included) and keeps head and length.
    ebs.foreach_set("head", np.ascontiguousarray(heads, dtype=np.float32).reshape(-1))
    ebs.foreach_set("tail", np.ascontiguousarray(heads + rot[:, :, 1] * lengths[:, None], dtype=np.float32).reshape(-1))
    ebs.foreach_set("matrix", np.ascontiguousarray(world.transpose(0, 2, 1), dtype=np.float32).reshape(-1))
    for eb, p in zip(bones, sk.parents.tolist()):
        if p >= 0:
            eb.parent = bones[p]
    names = [eb.name for eb in bones]  # as Blender keeps them (at most 63 bytes)
    bpy.ops.object.mode_set(mode="OBJECT")
    shown = lengths
    lengths, rolls, mirrors = sk.lengths, sk.rolls, sk.mirrors
    anchors, exts = sk.bone_anchors, sk.bone_extensions
    deform = sk.deform.tolist()
    for i, bone_name in enumerate(names):
        b = arm.bones[bone_name]
        b.use_deform = deform[i]
        b[PROP] = {
            "rest": rest[i].reshape(-1).tolist(),
            "shown_length": float(shown[i]),
            "length": float(lengths[i]),
            "roll": float(rolls[i]),
            "mirror": names[mirrors[i]] if mirrors[i] >= 0 else "",
            "anchors": _json(anchors[i]),
            "ext": _json(exts[i]),
        }
    obj[PROP] = {"skeleton_ext": _json(sk.extensions), "document_ext": _json(doc_ext), "name": sk.name}
    return obj


def build_mesh(context, mesh, index, skin, armature_obj):
    positions = mesh.positions @ TO_BLENDER.T
    faces = [f[f >= 0].tolist() for f in mesh.faces]
    me = bpy.data.meshes.new(mesh.name or "mesh")
    me.from_pydata(positions.tolist(), [], faces)
    if mesh.uvs is not None:
        layer = me.uv_layers.new(name="UVMap")
        corners = mesh.faces[mesh.faces >= 0]
        uv = mesh.uvs if mesh.uvs_per_corner else mesh.uvs[corners]
        layer.data.foreach_set("uv", np.ascontiguousarray(uv, dtype=np.float32).reshape(-1))
    if mesh.normals is not None:
        normals = np.ascontiguousarray(mesh.normals @ TO_BLENDER.T)
        if bpy.app.version < (4, 1, 0):
            me.use_auto_smooth = True  # custom normals need it before Blender 4.1
        if mesh.normals_per_corner:
            me.normals_split_custom_set(normals.tolist())
        else:
            me.normals_split_custom_set_from_vertices(normals.tolist())
    me.update()
    obj = bpy.data.objects.new(mesh.name or "mesh", me)
    context.collection.objects.link(obj)
    kept = {"index": index, "name": mesh.name, "ext": _json(mesh.extensions)}
    if skin is not None:
        # Which bones are the skin's joints (the bones without weights among them too).
        kept.update(
            skin_name=skin.name,
            skin_ext=_json(skin.extensions),
            joints=list(skin.joint_names),
            binds=skin.bind_matrices.reshape(-1).tolist(),
        )
    obj[PROP] = kept
    if armature_obj is not None:
        obj.parent = armature_obj
    if skin is not None:
        joints, weights = skin.influences()
        groups = [obj.vertex_groups.new(name=n) for n in skin.joint_names]
        for v, (js, ws) in enumerate(zip(joints.tolist(), weights.tolist())):
            for j, w in zip(js, ws):
                if w > 0:
                    groups[j].add([v], w, "REPLACE")
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = armature_obj
    return obj


def import_file(context, path, map=None, **options):
    """Read `path` with skelport (its bones renamed by `map`, a map file or a built-in map's
    name, as `--map` does) and build its armatures and meshes; returns the document, the
    armature objects and the diagnostics."""
    doc = skelport.load(path, **{k: v for k, v in options.items() if v})
    diagnostics = list(doc.diagnostics)
    if map:
        # Renamed in memory, as a conversion renames (the rename's losses follow the reader's).
        doc = doc.renamed(map)
        diagnostics = list(doc.diagnostics)
    doc_ext = doc.extensions
    armatures = [build_armature(context, sk, sk.name or "skeleton", doc_ext) for sk in doc.skeletons]
    for k, m in enumerate(doc.meshes):
        skin = next((s for s in doc.skins if s.mesh == k), None)
        # An unskinned mesh goes with the only armature (so that it is exported with it).
        owner = armatures[skin.skeleton] if skin is not None else (armatures[0] if len(armatures) == 1 else None)
        build_mesh(context, m, k, skin, owner)
    return doc, armatures, diagnostics


class ImportSkelport(bpy.types.Operator, ImportHelper):
    """Import a skeleton (and its skinned mesh) with skelport"""

    bl_idname = "import_scene.skelport"
    bl_label = "Import Skeleton (skelport)"
    bl_options = {"REGISTER", "UNDO"}

    filter_glob: StringProperty(default="*.json;*.xml;*.g4tf;*.g4b;*.gltf;*.glb;*.vrm;*.dae;*.fbx;*.mhskel", options={"HIDDEN"})
    mesh: StringProperty(name="Mesh (OBJ)", description="The base mesh an MPFB rig is placed on (--mesh)", subtype="FILE_PATH")
    weights: StringProperty(name="Weights", description="An MPFB weights file joined to the rig (--weights)", subtype="FILE_PATH")
    names: StringProperty(name="Bone names", description="A bone-name list for AnvilToolkit hashes (--names)", subtype="FILE_PATH")
    map: StringProperty(name="Bone map", description="Rename bones with a map file or a built-in map, e.g. mpfb-game_engine-to-sl (--map)")

    def execute(self, context):
        try:
            _, _, diagnostics = import_file(context, self.filepath, map=self.map, mesh=self.mesh, weights=self.weights, names=self.names)
        except skelport.Error as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        _report(self, diagnostics)
        return {"FINISHED"}


# --------------------------------------------------------------------------------------------
# Export


def _parents_first(bones):
    order, seen = [], set()

    def visit(b):
        if b.name in seen:
            return
        if b.parent is not None:
            visit(b.parent)
        seen.add(b.name)
        order.append(b)

    for b in bones:
        visit(b)
    return order


# How far Blender's float32 copy of a bone's rest matrix may be from the exact one the importer
# kept for the bone to count as not edited (then the exact one is exported).
SAME_REST = 1e-5


def _unchanged(exact, current):
    return bool(np.all(np.abs(exact - current) <= SAME_REST * np.maximum(1.0, np.abs(exact))))


def _evaluated(context, mesh_obj):
    """The mesh as Blender shows it at rest: shape keys and modifiers applied (MPFB's human hides
    its helper geometry with a Mask modifier), but not the armature's deformation. A context
    manager giving a temporary mesh (vertex groups kept)."""

    class Evaluated:
        def __enter__(self):
            self.off = [m for m in mesh_obj.modifiers if m.type == "ARMATURE" and m.show_viewport]
            for m in self.off:
                m.show_viewport = False
            context.view_layer.update()
            self.obj = mesh_obj.evaluated_get(context.evaluated_depsgraph_get())
            return self.obj.to_mesh()

        def __exit__(self, *exc):
            self.obj.to_mesh_clear()
            for m in self.off:
                m.show_viewport = True
            context.view_layer.update()

    return Evaluated()


def _mesh_arrays(mesh_obj, me):
    """One mesh object's arrays (`me`: its mesh as evaluated), in the report frame, as
    from_arrays' `meshes` takes them."""
    kept = mesh_obj.get(PROP)
    kept = kept.to_dict() if kept is not None else {}
    n = len(me.vertices)
    co = np.empty(n * 3)
    me.vertices.foreach_get("co", co)
    m = np.array(mesh_obj.matrix_world)
    co = co.reshape(n, 3) @ m[:3, :3].T + m[:3, 3]
    loops = np.empty(len(me.loops), dtype=np.int64)
    me.loops.foreach_get("vertex_index", loops)
    sizes = np.empty(len(me.polygons), dtype=np.int64)
    me.polygons.foreach_get("loop_total", sizes)
    starts = np.empty(len(me.polygons), dtype=np.int64)
    me.polygons.foreach_get("loop_start", starts)
    faces = np.full((len(sizes), int(sizes.max()) if len(sizes) else 3), -1, dtype=np.int64)
    # Corner c of face f is loop starts[f] + c; `order` lists the loops face by face (Blender
    # keeps them so, but does not promise it).
    first = np.repeat(np.cumsum(sizes) - sizes, sizes)
    corner = np.arange(int(sizes.sum())) - first
    order = np.repeat(starts, sizes) + corner
    faces[np.repeat(np.arange(len(sizes)), sizes), corner] = loops[order]
    out = {"positions": co @ TO_REPORT.T, "faces": faces, "name": kept.get("name", mesh_obj.name), "extensions": _loads(kept.get("ext"))}
    if me.uv_layers.active is not None:
        uv = np.empty(len(me.loops) * 2)
        me.uv_layers.active.data.foreach_get("uv", uv)
        out.update(uvs=uv.reshape(-1, 2)[order], uvs_per_corner=True)
    normals = _corner_normals(me)
    if normals is not None:
        out.update(normals=(normals @ m[:3, :3].T @ TO_REPORT.T)[order], normals_per_corner=True)
    return out, kept


def document_from_blender(armature_obj, mesh_objs=(), context=None):
    """A skelport Document of an armature object and the meshes it deforms, in the report frame,
    from Blender's data directly; what the importer kept (exact rest matrices, format data) is
    used for every bone and mesh not edited since."""
    bones = _parents_first(list(armature_obj.data.bones))
    index = {b.name: i for i, b in enumerate(bones)}
    to_report = np.eye(4)
    to_report[:3, :3] = TO_REPORT
    world = np.array(armature_obj.matrix_world)
    matrices = np.array([to_report @ world @ np.array(b.matrix_local) for b in bones])
    # Blender computes a bone's matrix from head, tail and roll in float32: its axes can be off
    # square by 1e-5 (MPFB's thighs). The nearest rotation (polar decomposition) is the bone's.
    u, _, vt = np.linalg.svd(matrices[:, :3, :3])
    matrices[:, :3, :3] = u @ vt
    n = len(bones)
    lengths = np.array([b.length for b in bones])
    rolls = np.full(n, np.nan)
    mirrors = np.full(n, -1, dtype=np.int64)
    anchors, exts = [None] * n, [None] * n
    unchanged = np.zeros(n, dtype=bool)
    for i, b in enumerate(bones):
        kept = b.get(PROP)
        if kept is None:
            continue
        kept = kept.to_dict()
        exact = np.array(kept["rest"]).reshape(4, 4)
        if _unchanged(exact, matrices[i]):
            unchanged[i] = True
            matrices[i] = exact
            rolls[i] = kept["roll"]
            anchors[i] = _loads(kept["anchors"]) or None
            if abs(lengths[i] - kept["shown_length"]) <= SAME_REST * max(1.0, kept["shown_length"]):
                lengths[i] = kept["length"]  # NaN: the file gave none
        mirrors[i] = index.get(kept["mirror"], -1)
        exts[i] = _loads(kept["ext"])
    arm_kept = armature_obj.get(PROP)
    arm_kept = arm_kept.to_dict() if arm_kept is not None else {}
    meshes = []
    for mesh_obj in mesh_objs:
        with _evaluated(context or bpy.context, mesh_obj) as me:
            mesh, kept = _mesh_arrays(mesh_obj, me)
            names = {g.index: g.name for g in mesh_obj.vertex_groups}
            groups = {}
            for v in me.vertices:
                for g in v.groups:
                    name = names.get(g.group)
                    if name in index and g.weight > 0:
                        groups.setdefault(name, ([], []))
                        groups[name][0].append(v.index)
                        groups[name][1].append(g.weight)
        if groups:
            # The joints the file had (the importer keeps them), else every bone with weights.
            joints = [str(j) for j in kept.get("joints", [])]
            if not (joints and set(groups) <= set(joints) <= set(index)):
                joints = [b.name for b in bones if b.name in groups]
            mesh.update(groups=groups, joint_names=joints, skin_name=kept.get("skin_name"), skin_extensions=_loads(kept.get("skin_ext")))
            if joints == [str(j) for j in kept.get("joints", [])] and "binds" in kept:
                # Where the file bound each joint, for joints whose bones were not edited (an
                # edited bone binds at its new rest, as Blender shows it).
                binds = np.array(kept["binds"]).reshape(-1, 4, 4)
                rows = [index[j] for j in joints]
                keep = unchanged[rows] & np.isfinite(binds).all(axis=(1, 2))  # a file's singular bind: the rest
                mesh["bind_matrices"] = np.where(keep[:, None, None], binds, matrices[rows])
        meshes.append(mesh)
    return skelport.from_arrays(
        [b.name for b in bones],
        [index[b.parent.name] if b.parent else -1 for b in bones],
        matrices,
        name=arm_kept.get("name", armature_obj.name),
        lengths=lengths,
        rolls=rolls,
        deform=np.array([b.use_deform for b in bones]),
        mirrors=mirrors,
        bone_anchors=anchors,
        meshes=meshes,
        extensions=_loads(arm_kept.get("document_ext")),
        skeleton_extensions=_loads(arm_kept.get("skeleton_ext")),
        bone_extensions=exts,
    )


def _loads(text):
    return json.loads(text) if text else None


def _corner_normals(me):
    """(corners, 3) normals as Blender shades the mesh (custom ones included), or None when it has
    neither custom normals nor sharp edges (skelport computes the same smooth ones)."""
    if not me.has_custom_normals:
        return None
    n = np.empty(len(me.loops) * 3)
    if bpy.app.version >= (4, 1, 0):
        me.corner_normals.foreach_get("vector", n)
    else:
        me.calc_normals_split()
        me.loops.foreach_get("normal", n)
    n = n.reshape(-1, 3)
    return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)


def _meshes_of(context, armature_obj):
    """The meshes an armature deforms or holds as children, in the file's order where they came
    from one (then the others by name)."""
    found = [
        o for o in context.scene.objects
        if o.type == "MESH" and (o.parent == armature_obj or any(m.type == "ARMATURE" and m.object == armature_obj for m in o.modifiers))
    ]
    def key(o):
        kept = o.get(PROP)
        return (0, kept["index"], "") if kept is not None and "index" in kept else (1, 0, o.name)
    return sorted(found, key=key)


class ExportSkelport(bpy.types.Operator, ExportHelper):
    """Export the selected armature (and the mesh it deforms) with skelport"""

    bl_idname = "export_scene.skelport"
    bl_label = "Export Skeleton (skelport)"
    filename_ext = ".glb"

    filter_glob: StringProperty(default="*.json;*.xml;*.g4tf;*.g4b;*.gltf;*.glb;*.vrm;*.dae", options={"HIDDEN"})
    format: EnumProperty(
        name="Format",
        description="The format to write (default: from the file name's extension, as on the command line)",
        items=[("AUTO", "From the extension", "")] + [(f.name, f.name, f.description) for f in skelport.formats() if f.can_write],
        default="AUTO",
    )
    strict: BoolProperty(name="Strict", description="Fail on any loss (--strict)", default=False)
    default_joints: BoolProperty(name="SL default joints", description="Second Life: joints at the default skeleton's positions (--default-joints)", default=False)
    max_influences: IntProperty(name="Max influences", description="Joints per vertex, 0 for the target's own limit (--max-influences)", default=0, min=0, max=64)
    limit: IntProperty(name="Bone limit", description="Most bones the target may hold, 0 for none (--limit)", default=0, min=0)
    t_pose: BoolProperty(name="VRM T-pose", description="Bake the rest pose into a T-pose (--rest-pose t-pose)", default=False)
    map: StringProperty(
        name="Bone map",
        description="Rename bones with a map file or a built-in map, e.g. mpfb-game_engine-to-sl for an SL rig (--map)",
    )
    vrm_meta: StringProperty(name="VRM meta", description="The avatar's VRM meta: name, authors, licence (--vrm-meta)", subtype="FILE_PATH")
    allow_loss: BoolProperty(name="Allow loss", description="Write even where the result would be skinless or a skin is left behind (--allow-loss)", default=False)

    def execute(self, context):
        arm = context.active_object if context.active_object and context.active_object.type == "ARMATURE" else None
        if arm is None:
            self.report({"ERROR"}, "select an armature to export")
            return {"CANCELLED"}
        try:
            doc = document_from_blender(arm, _meshes_of(context, arm), context)
            report = doc.save(
                self.filepath,
                to=None if self.format == "AUTO" else self.format,
                strict=self.strict,
                max_influences=self.max_influences or None,
                default_joints=self.default_joints,
                limit=self.limit or None,
                rest_pose="t-pose" if self.t_pose else None,
                map=self.map or None,
                vrm_meta=bpy.path.abspath(self.vrm_meta) if self.vrm_meta else None,
                allow_loss=self.allow_loss,
            )
        except (skelport.Error, ValueError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        _report(self, report.diagnostics)
        return {"FINISHED"}


def menu_import(self, context):
    self.layout.operator(ImportSkelport.bl_idname, text="Skeleton (skelport)")


def menu_export(self, context):
    self.layout.operator(ExportSkelport.bl_idname, text="Skeleton (skelport)")


CLASSES = (ImportSkelport, ExportSkelport)


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
