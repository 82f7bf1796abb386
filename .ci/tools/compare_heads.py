# Compare Blender's import (blender_heads.py output) with `skelport inspect --json` of the same file.
# Usage: python3 compare_heads.py FILE.heads.json FILE.inspect.json FILE
# Frames: Blender's world coordinates are mapped to skelport's report frame (glTF's: +Y up, +Z
# forward, metres). Blender's glTF importer turns Y-up into its own frame (Z up, facing -Y), so a
# glTF's Blender coordinates are in Blender's frame. Its Collada importer (defaults: no "Fix Leaf
# Bones"/"Fix Orientation", no "Import Units") keeps the file's numbers as they are, so a .dae's
# Blender coordinates are in the frame the file is in, which skelport reports as `source_frame`
# (Second Life rigs: Z up, facing +X; generic Collada: Z up, facing -Y).
# Every bone skelport reports must be found in Blender and agree within 0.1 mm:
#   * as an armature bone: its posed head (the viewport skeleton) against skelport's `head` (glTF)
#     or the bind skeleton (Collada, see below), and its rest head against where the importer
#     builds it from skelport's `bind_head` (inverse binds) and `head` (node rest);
#   * as an object (a node Blender does not make a bone of: the skeleton node that becomes the
#     armature object, or a non-joint node such as an SL attachment point or collision volume, an
#     empty parented to its bone): its origin against `head`. These are counted with the reason.
# A bone found in neither way fails the file. Exit status 1 on any failure.
import json, math, sys

TOL = 1e-4  # metres: 0.1 mm
heads_path, inspect_path, label = sys.argv[1], sys.argv[2], sys.argv[3]
bl = json.load(open(heads_path))
rep = json.load(open(inspect_path))

AXES = {"+X": (1, 0, 0), "-X": (-1, 0, 0), "+Y": (0, 1, 0), "-Y": (0, -1, 0), "+Z": (0, 0, 1), "-Z": (0, 0, -1)}
BLENDER = {"up": "+Z", "forward": "-Y", "handedness": "right", "metres_per_unit": 1.0}


def to_report(frame):
    """Map from `frame`'s coordinates to the report frame (left = X, up = Y, forward = Z)."""
    u, f = AXES[frame["up"]], AXES[frame["forward"]]
    cross = lambda a, b: (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    left = cross(u, f) if frame["handedness"] == "right" else cross(f, u)
    s = frame["metres_per_unit"]
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))
    return lambda p: [s * dot(left, p), s * dot(u, p), s * dot(f, p)]


frame = rep["source_frame"] if label.lower().endswith(".dae") else BLENDER
m = to_report(frame)
posed, rest, objects = ({k: m(v) for k, v in bl[key].items()} for key in ("posed", "rest", "objects"))
armatures = set(bl["armatures"])

is_dae = label.lower().endswith(".dae")
worst = {"posed": (0.0, ""), "rest": (0.0, ""), "object": (0.0, ""), "bind": (0.0, "")}
n_bone = n_rest = n_obj = n_arma = n_bind = 0
missing, bad = [], []


def note(kind, name, a, b, strict=True):
    d = math.dist(a, b)
    if d > worst[kind][0]:
        worst[kind] = (d, name)
    if strict and d > TOL:
        bad.append(f"{kind} {name}: Blender {[round(x, 5) for x in a]} vs expected {[round(x, 5) for x in b]} ({d * 1000:.3f} mm)")


def mul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(4)) for j in range(4)] for i in range(4)]


def inv(m):
    """Inverse of an affine 4×4 (row-major)."""
    (a, b, c), (d, e, f), (g, h, i) = (r[:3] for r in m[:3])
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    r = [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
         [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
         [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]
    t = [-sum(r[k][j] * m[j][3] for j in range(3)) for k in range(3)]
    return [r[0] + [t[0]], r[1] + [t[1]], r[2] + [t[2]], [0.0, 0.0, 0.0, 1.0]]


def trs(t, q):
    """T(t)·R(q), q = (x, y, z, w)."""
    x, y, z, w = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w), t[0]],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w), t[1]],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y), t[2]],
            [0.0, 0.0, 0.0, 1.0]]


def rigid(m):
    """Drop scale (normalize the columns), as Blender's glTF importer does with decompose()."""
    out = [row[:] for row in m]
    for j in range(3):
        n = math.sqrt(sum(m[i][j] ** 2 for i in range(3)))
        for i in range(3):
            out[i][j] = m[i][j] / n
    return out


cols = lambda c: [[c[j * 4 + i] for j in range(4)] for i in range(4)]
I4 = [[float(i == j) for j in range(4)] for i in range(4)]
head_of = lambda m: [m[0][3], m[1][3], m[2][3]]
for sk in rep["skeletons"]:
    by = {b["name"]: b for b in sk["bones"]}
    # Where Blender's importer puts each bone's rest (edit-bone) head, from skelport's report
    # (node rest = head + rotation, bind = bind_matrix):
    # * Collada: a skinned joint at its bind matrix; any other bone at its parent's placed matrix
    #   (scale included) times its node transform.
    # * glTF ("Guess Original Bind Pose"): a joint whose parent is a joint too (or the armature)
    #   by bind(parent)⁻¹·bind(joint) with the scale dropped; any other bone by its node
    #   transform; both from the parent's placed (rigid) matrix.
    world = {b["name"]: trs(b["head"], b["rotation"]) for b in sk["bones"]}
    placed, exp = {}, {}
    for b in sk["bones"]:  # parents come first
        name, p = b["name"], by.get(b["parent"]) if b["parent"] else None
        bm = cols(b["bind_matrix"]) if b.get("bind_matrix") else None
        local = mul(inv(world[p["name"]]), world[name]) if p else world[name]
        parent_m = placed[p["name"]] if p else I4
        if is_dae:
            placed[name] = bm if bm else mul(parent_m, local)
        elif bm and (p is None or p.get("bind_matrix")):
            rel = mul(inv(cols(p["bind_matrix"])), bm) if p else bm
            placed[name] = mul(parent_m, rigid(rel))
        else:
            placed[name] = mul(parent_m, local)
        exp[name] = head_of(placed[name])
        if bm:
            n_bind += 1
            note("bind", name, head_of(bm), b["head"], strict=False)
    for b in sk["bones"]:
        name = b["name"]
        if name in posed:
            n_bone += 1
            # glTF: the importer poses the bones to the node transforms (the viewport skeleton is
            # the rest skelport reports). Collada: it sets no pose; the viewport shows the rest.
            note("posed", name, posed[name], exp[name] if is_dae else b["head"])
            n_rest += 1
            note("rest", name, rest[name], exp[name])
        elif name in objects:
            if name in armatures:
                n_arma += 1
            else:
                n_obj += 1
            note("object", name, objects[name], b["head"])
        else:
            missing.append(name)

total = sum(len(sk["bones"]) for sk in rep["skeletons"])
ok = not bad and not missing and n_bone > 0
mm = lambda k: f"{worst[k][0] * 1000:.4f} mm" + (f" ({worst[k][1]})" if worst[k][1] else "")
posed_what = "bind skeleton (no pose set by the Collada importer)" if is_dae else "skelport's head"
print(f"{label}: {total} bones; {n_bone} Blender bones: posed heads vs {posed_what} max {mm('posed')}, rest heads vs the importer's placement max {mm('rest')}")
if n_obj or n_arma:
    print(f"   {n_obj + n_arma} not made bones by Blender, compared as objects, max {mm('object')}: "
          f"{n_arma} became the armature object (a non-joint skeleton node above the joints), "
          f"{n_obj} non-joint node(s) became empties parented to their bones")
if worst["bind"][0] > TOL:
    print(f"   note: the file's inverse binds put {n_bind} skinned joints up to {mm('bind')} from their node rest "
          f"(Blender's rest pose is the bind{'; its viewport too' if is_dae else '; its viewport poses to the node rest'})")
for line in bad[:10]:
    print("   MISMATCH", line)
if len(bad) > 10:
    print(f"   … {len(bad) - 10} more mismatches")
if missing:
    print(f"   MISSING in Blender ({len(missing)}): {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}")
print(f"   {'pass' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
