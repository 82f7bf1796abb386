"""Render an AnvilToolkit skeleton imported into Blender with the skelport add-on, with a mesh
skinned to it and a few bones posed, with Blender's Workbench engine (headless: under Xvfb for
Blender 3.x's OpenGL).

    xvfb-run -a blender -b --factory-startup --python blender_render.py -- \\
        ADDON.zip SKELETON.xml SKINNED.glb OUT.png

ADDON.zip is `cargo xtask blender-extension`'s zip (the legacy one for Blender 3.x), installed
into the user folders Blender is told (BLENDER_USER_SCRIPTS, or BLENDER_USER_RESOURCES for 4.2+).
SKINNED.glb is a skinned mesh whose joints are named as the skeleton's bones (both written by
`skelport convert` from the same rig): its mesh is bound to the AnvilToolkit armature, which
then deforms it. Bones are drawn as sticks from each joint to its children (Workbench renders no armatures), the skin in
X-ray so that they show through.
"""

import math
import os
import sys

import bpy
from mathutils import Euler, Matrix, Vector

addon, skeleton, skinned, out = map(os.path.abspath, sys.argv[sys.argv.index("--") + 1 :][:4])

if bpy.app.version >= (4, 2, 0):
    bpy.ops.extensions.package_install_files(filepath=addon, repo="user_default", enable_on_install=True)
else:
    bpy.ops.preferences.addon_install(filepath=addon, overwrite=True)
    bpy.ops.preferences.addon_enable(module="skelport_blender")

for o in list(bpy.data.objects):
    bpy.data.objects.remove(o)

assert bpy.ops.import_scene.skelport(filepath=skeleton) == {"FINISHED"}
anvil = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
before = set(bpy.context.scene.objects)
assert bpy.ops.import_scene.skelport(filepath=skinned) == {"FINISHED"}
new = set(bpy.context.scene.objects) - before
body = next(o for o in new if o.type == "MESH")
bound = 0
for m in body.modifiers:
    if m.type == "ARMATURE":
        m.object = anvil
        bound += 1
body.parent = anvil
missing = [g.name for g in body.vertex_groups if g.name not in anvil.data.bones]
assert bound == 1 and not missing, f"vertex groups with no bone in the AnvilToolkit skeleton: {missing[:5]}"
for o in new:
    if o.type == "ARMATURE":
        bpy.data.objects.remove(o)

# A pose, so that the picture shows the skin following the skeleton: the upper arms lowered and
# the forearms bent forward, turned in world axes about each joint (bones' own axes are the
# file's, whichever way they point).
pose = {"upperarm": ((0, 1, 0), 35), "lowerarm": ((1, 0, 0), 40)}
posed = []
for pb in anvil.pose.bones:  # parents first
    low = pb.name.lower()
    for part, (axis, degrees) in pose.items():
        if low.startswith(part) and "twist" not in low:
            pivot = pb.head.copy()
            sign = (1 if pivot.x > 0 else -1) if axis == (0, 1, 0) else 1
            turn = Matrix.Translation(pivot) @ Matrix.Rotation(math.radians(degrees * sign), 4, axis) @ Matrix.Translation(-pivot)
            pb.matrix = turn @ pb.matrix
            bpy.context.view_layer.update()
            posed.append(pb.name)

# The skeleton as sticks from each bone's head to its children's heads (octahedra: Workbench
# renders no armatures), at their posed places.
verts, faces = [], []


def stick(head, tail):
    axis = tail - head
    length = axis.length
    if length < 1e-6:
        return
    x = axis.orthogonal().normalized()
    z = axis.cross(x).normalized()
    mid = head + axis * 0.2
    r = min(0.1 * length, 0.025)
    base = len(verts)
    verts.extend([head, mid + x * r, mid + z * r, mid - x * r, mid - z * r, tail])
    for k in range(4):
        a, b = base + 1 + k, base + 1 + (k + 1) % 4
        faces.extend([(base, b, a), (a, b, base + 5)])


for pb in anvil.pose.bones:
    head = anvil.matrix_world @ pb.head
    kids = [anvil.matrix_world @ c.head for c in pb.children]
    for k in kids:
        stick(head, k)
    if not kids:
        stick(head, head + (anvil.matrix_world @ pb.tail - head).normalized() * 0.04)
me = bpy.data.meshes.new("bones")
me.from_pydata([tuple(v) for v in verts], [], faces)
bones = bpy.data.objects.new("bones", me)
bpy.context.collection.objects.link(bones)
bones.color = (0.95, 0.45, 0.1, 1.0)
body.color = (0.55, 0.7, 0.85, 1.0)

scene = bpy.context.scene
scene.render.engine = "BLENDER_WORKBENCH"
shading = scene.display.shading
shading.light = "STUDIO"
shading.color_type = "OBJECT"
shading.show_xray = True
shading.xray_alpha = 0.55
scene.render.resolution_x, scene.render.resolution_y = 600, 800
scene.render.film_transparent = False
scene.render.image_settings.file_format = "PNG"

# An orthographic camera in front (-Y), framing the posed body.
points = [body.matrix_world @ Vector(c) for c in body.bound_box] + [Vector(v) for v in verts]
lo = Vector((min(p.x for p in points), min(p.y for p in points), min(p.z for p in points)))
hi = Vector((max(p.x for p in points), max(p.y for p in points), max(p.z for p in points)))
centre = (lo + hi) / 2
cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
scene.collection.objects.link(cam)
cam.data.type = "ORTHO"
cam.data.ortho_scale = max(hi.z - lo.z, (hi.x - lo.x) * 1.2 / 0.75) * 1.08
cam.location = (centre.x, lo.y - 5.0, centre.z)
cam.rotation_euler = Euler((math.radians(90), 0, 0))
scene.camera = cam
scene.render.filepath = out
bpy.ops.render.render(write_still=True)
print(f"rendered {out}: {len(anvil.data.bones)} bones of {skeleton}, {len(body.data.vertices)} skinned vertices, posed: {', '.join(posed)}")
