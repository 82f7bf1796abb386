# Check what Blender made of a MakeHuman body written as glTF (blender_mesh.py's JSON) against
# the base mesh OBJ, read here on its own: every polygon smooth-shaded, custom split normals
# (from NORMAL), one UV layer, and each loop's UV equal to the OBJ's `vt` at the same face
# corner (body faces only, helper geometry left out as skelport does, each polygon
# fan-triangulated as skelport writes it). Exit 1 on any difference.
# Usage: python3 compare_mesh.py BLENDER.json BASE.obj LABEL
import sys, json

blender, obj_path, label = sys.argv[1], sys.argv[2], sys.argv[3]
meshes = json.load(open(blender))["meshes"]
vt, corners, group = [], [], ""
for line in open(obj_path):
    w = line.split()
    if not w:
        continue
    if w[0] == "vt":
        vt.append((float(w[1]), float(w[2])))
    elif w[0] == "g":
        group = " ".join(w[1:])
    elif w[0] == "f" and not (group.startswith("joint-") or group.startswith("helper-")):
        c = [int(x.split("/")[1]) - 1 for x in w[1:]]
        for k in range(1, len(c) - 1):
            corners.extend([c[0], c[k], c[k + 1]])
bad = []
if len(meshes) != 1:
    bad.append(f"{len(meshes)} mesh objects, want 1")
for m in meshes:
    if m["smooth_polygons"] != m["polygons"]:
        bad.append(f"{m['name']}: {m['polygons'] - m['smooth_polygons']} of {m['polygons']} polygons flat-shaded")
    if not m["custom_normals"]:
        bad.append(f"{m['name']}: no custom split normals (NORMAL not imported)")
    if len(m["uv_layers"]) != 1:
        bad.append(f"{m['name']}: {len(m['uv_layers'])} UV layers, want 1")
    uvs = m["loop_uvs"]
    if len(uvs) != len(corners):
        bad.append(f"{m['name']}: {len(uvs)} loops, the OBJ's body faces make {len(corners)} triangle corners")
    else:
        worst = max(max(abs(a[0] - vt[c][0]), abs(a[1] - vt[c][1])) for a, c in zip(uvs, corners))
        if worst > 1e-6:
            bad.append(f"{m['name']}: loop UVs differ from the OBJ's by up to {worst:.2e}")
        else:
            print(f"{label}: {m['polygons']} polygons all smooth, custom normals, UV layer {m['uv_layers'][0]!r}: "
                  f"{len(uvs)} loop UVs equal to base.obj's vt (largest difference {worst:.1e})")
for b in bad:
    print(f"{label}: {b}  <-- FAIL")
sys.exit(1 if bad else 0)
