"""The Blender add-on (crates/skelport-py/blender/) as users install it, run headless:

* Blender 5 as a Python module (PyPI `bpy`, CPython 3.11, in a venv of its own since it needs
  numpy < 2: `$SKELPORT_BPY_PYTHON`, else `target/bpy-venv/bin/python`): the extension zip
  (`cargo xtask blender-extension`) installed with Blender's extension API into a private
  `BLENDER_USER_RESOURCES` folder;
* Debian's Blender 3.4 (`blender` on PATH): the legacy zip installed with Preferences > Add-ons >
  Install into a private user folder.

For every format skelport reads: File > Import (`import_scene.skelport`), then File > Export
(`export_scene.skelport`) to the same format (to .glb for the read-only ones). Checked: every
bone's head and rest orientation in Blender against `skelport inspect --json` (1e-5 m, 1e-4 rad),
every vertex's weights and every corner's UV against skelport's reading of the file (1e-6), and
the export against `skelport convert` of the same input to the same format (`skelport diff`
same, weights and UVs equal). The zips are `$SKELPORT_BLENDER_DIST` (default `dist/`).
Without bpy or blender the tests are skipped with the reason; with CI set they fail instead.
"""

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import skelport
from conftest import DEMO, IN_CI, ROOT

DRIVER = Path(__file__).resolve().parent / "blender_driver.py"
VRM_DRIVER = Path(__file__).resolve().parent / "blender_vrm_addon.py"
MPFB_DRIVER = Path(__file__).resolve().parent / "blender_mpfb.py"
DIST = Path(os.environ.get("SKELPORT_BLENDER_DIST", ROOT / "dist"))
TO_BLENDER = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
HEAD_TOL, ANGLE_TOL, WEIGHT_TOL, UV_TOL = 1e-5, 1e-4, 1e-6, 1e-6
TABLE = ROOT / "target" / "blender-extension"
# Formats whose import then export gives the input back byte for byte.
BYTE_IDENTICAL = {"anvil", "anvil-schema"}
MOVED = ("LeftLeg", [0.05, 0.0, 0.02])  # a bone with a BoneModifier in biped.standard.xml, and an offset (Blender frame)


def _missing(what):
    if IN_CI:
        pytest.fail(f"{what} is missing and CI is set (.ci/python installs it)", pytrace=False)
    pytest.skip(f"{what} is missing")


def _zip(legacy):
    version = skelport.__version__
    z = DIST / (f"skelport-{version}-legacy.zip" if legacy else f"skelport-{version}.zip")
    if not z.is_file():
        _missing(f"{z} (cargo xtask blender-extension)")
    return z


def cases(corpus, out):
    """(key, input, import options, export format, the CLI's convert flags for the reference)."""
    rigs = corpus / "mpfb" / "rigs" / "standard"
    mpfb = {"mesh": str(corpus / "mpfb" / "3dobjs" / "base.obj"), "weights": str(rigs / "weights.game_engine.json")}
    rows = [
        ("anvil", ROOT / "testdata" / "anvil" / "biped.standard.xml", {}, "anvil"),
        ("anvil-schema", ROOT / "testdata" / "anvil" / "biped.schema.xml", {}, "anvil-schema"),
        ("anvil (demo)", DEMO / "sample.anvil.xml", {}, "anvil"),
        ("g4tf", DEMO / "sample.g4tf", {}, "g4tf"),
        ("g4b", DEMO / "sample.g4b", {}, "g4b"),
        ("gltf", DEMO / "sample.gltf", {}, "gltf"),
        ("glb", DEMO / "sample.glb", {}, "glb"),
        ("glb (Fox)", corpus / "gltf" / "Fox" / "Fox.glb", {}, "glb"),
        ("vrm", DEMO / "sample.vrm", {}, "vrm"),
        ("dae", DEMO / "sample.dae", {}, "dae"),
        ("dae (Linden female)", corpus / "sl" / "linden-lab" / "female_2016_08_05.dae", {}, "dae"),
        ("ir-json", DEMO / "sample.ir.json", {}, "ir-json"),
        ("mpfb", rigs / "rig.game_engine.json", mpfb, "glb"),
        ("mhskel", DEMO / "sample.mhskel", {}, "glb"),
        ("fbx", corpus / "fbx" / "ufbx_blender_279_sausage_7400_binary.fbx", {}, "glb"),
        # Avatars: a MakeHuman character and the SL body to VRM (the VRM add-on reads them below).
        ("mpfb to vrm", rigs / "rig.game_engine.json", mpfb, "vrm"),
        ("dae (Linden female) to vrm", corpus / "sl" / "linden-lab" / "female_2016_08_05.dae", {}, "vrm"),
    ]
    ext = {f.name: f.extensions[0] for f in skelport.formats() if f.extensions}
    # Edits between import and export (see test_an_edit_in_blender_is_exported_and_the_rest_kept).
    glb = skelport.load(str(DEMO / "sample.glb"))
    skin = glb.skins[0]
    js, ws = skin.influences()
    other = next(n for k, n in enumerate(skin.joint_names) if k not in set(js[0][ws[0] > 0].tolist()))
    edits = {
        "edit: anvil (bone moved)": {"move_bone": MOVED[0], "by": MOVED[1]},
        "edit: glb (vertex painted)": {"paint": {"group": other, "vertex": 0, "weight": float(ws[0].sum())}},
    }
    rows += [
        ("map: mpfb to SL names", rigs / "rig.game_engine.json", dict(mpfb, map="mpfb-game_engine-to-sl"), "dae"),
        ("edit: anvil (bone moved)", ROOT / "testdata" / "anvil" / "biped.standard.xml", {}, "anvil"),
        ("edit: glb (vertex painted)", DEMO / "sample.glb", {}, "glb"),
    ]
    result = []
    for key, src, opts, to in rows:
        slug = "".join(c if c.isalnum() else "_" for c in key)
        result.append({
            "key": key,
            "input": str(src),
            "import": opts,
            "export": str(out / f"{slug}.{ext[to].lstrip('.')}"),
            "export_options": {"format": to},
            "to": to,
            "edit": edits.get(key),
        })
    return result


def run_blender(command, env, spec, tmp):
    cases_file, results_file = tmp / "cases.json", tmp / "results.json"
    cases_file.write_text(json.dumps(spec))
    p = subprocess.run([*command, str(cases_file), str(results_file)], capture_output=True, text=True, env=env, timeout=3000)
    assert p.returncode == 0 and results_file.exists(), p.stdout[-4000:] + p.stderr[-4000:]
    return json.loads(results_file.read_text()), p.stdout


def bpy_python():
    exe = os.environ.get("SKELPORT_BPY_PYTHON") or str(ROOT / "target" / "bpy-venv" / "bin" / "python")
    if not Path(exe).is_file() or subprocess.run([exe, "-c", "import bpy"], capture_output=True).returncode:
        _missing(f"Blender as a Python module (pip install bpy; {exe})")
    return exe


@pytest.fixture(scope="module", params=["bpy", "blender-3.4"])
def blender_run(request, corpus, tmp_path_factory):
    """Install the add-on in one Blender and run every case there."""
    tmp = tmp_path_factory.mktemp(request.param)
    user = tmp / "user-resources"
    user.mkdir()
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(user))
    if request.param == "bpy":
        command = [bpy_python(), str(DRIVER)]
        addon = _zip(legacy=False)
    else:
        exe = shutil.which("blender")
        if exe is None:
            _missing("blender (apt-get install blender)")
        command = [exe, "-b", "--factory-startup", "-noaudio", "--python-exit-code", "1", "--python", str(DRIVER), "--"]
        addon = _zip(legacy=True)
        # Blender 3.4 reads its user folders from these (BLENDER_USER_RESOURCES is 4.2+).
        env.update(BLENDER_USER_CONFIG=str(user / "config"), BLENDER_USER_SCRIPTS=str(user / "scripts"))
    (tmp / "out").mkdir()
    spec = {"addon": str(addon), "cases": cases(corpus, tmp / "out")}
    results, stdout = run_blender(command, env, spec, tmp)
    return request.param, spec, results, stdout, tmp


def angle(a, b):
    """Radians between two rotation matrices (from the sine and the cosine of the difference:
    acos of the cosine alone reads float32 rounding as 5e-4 rad)."""
    r = a.T @ b
    s = np.linalg.norm([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / 2
    return math.atan2(s, (np.trace(r) - 1) / 2)


def quat_matrix(q):
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def bones_against_inspect(armatures, rep, lengths):
    """Worst head distance (m) and orientation (rad) of Blender's bones against the report; where
    the file gives a bone's length (`lengths`: the bones that have one), the Blender bone (its +Y)
    ends at the report's tail (bones shorter than the 1 mm Blender keeps aside)."""
    placed = {}
    for bones in armatures.values():
        placed.update(bones)
    worst_head = worst_angle = 0.0
    n = 0
    for sk in rep["skeletons"]:
        for b in sk["bones"]:
            got = placed[b["name"]]
            worst_head = max(worst_head, float(np.linalg.norm(np.array(got["head"]) - TO_BLENDER @ np.array(b["head"]))))
            want = TO_BLENDER @ quat_matrix(b["rotation"])
            worst_angle = max(worst_angle, angle(np.array(got["rotation"]), want))
            length = float(np.linalg.norm(np.array(b["tail"]) - np.array(b["head"])))
            if length >= 1e-3 and b["name"] in lengths:
                worst_head = max(worst_head, float(np.linalg.norm(np.array(got["tail"]) - TO_BLENDER @ np.array(b["tail"]))))
            n += 1
    assert n == len(placed)
    return n, worst_head, worst_angle


def corner_uvs(mesh):
    """UVs per face corner, in face order (as Blender's loops)."""
    if mesh.uvs is None:
        return None
    faces = mesh.faces
    corners = faces[faces >= 0]
    return mesh.uvs if mesh.uvs_per_corner else mesh.uvs[corners]


def vertex_weights(doc):
    """Per mesh, per vertex: {joint name: weight} of its skin."""
    out = []
    for k, _ in enumerate(doc.meshes):
        skin = next((s for s in doc.skins if s.mesh == k), None)
        if skin is None:
            out.append(None)
            continue
        joints, weights = skin.influences()
        out.append([{skin.joint_names[j]: float(w) for j, w in zip(js, ws) if w > 0} for js, ws in zip(joints.tolist(), weights.tolist())])
    return out


def weights_diff(a, b):
    """Largest weight difference between two per-vertex weight lists (inf when the joints differ)."""
    worst = 0.0
    for va, vb in zip(a, b):
        if set(va) != set(vb):
            return math.inf
        worst = max([worst] + [abs(va[j] - vb[j]) for j in va])
    return worst if len(a) == len(b) else math.inf


def compare_documents(ref, got):
    """Worst weight and UV differences between two documents whose meshes have the same vertices
    in the same order (inf when they do not): an export from Blender against the command line's
    conversion of the same input."""
    if len(ref.meshes) != len(got.meshes):
        return math.inf, math.inf
    worst_w = worst_uv = 0.0
    for mr, mg, a, b in zip(ref.meshes, got.meshes, vertex_weights(ref), vertex_weights(got)):
        if mr.positions.shape != mg.positions.shape or float(np.abs(mr.positions - mg.positions).max(initial=0)) > HEAD_TOL:
            return math.inf, math.inf
        if (a is None) != (b is None):
            return math.inf, worst_uv
        if a is not None:
            worst_w = max(worst_w, weights_diff(a, b))
        ua, ub = corner_uvs(mr), corner_uvs(mg)
        if (ua is None) != (ub is None) or (ua is not None and ua.shape != ub.shape):
            return worst_w, math.inf
        if ua is not None:
            worst_uv = max(worst_uv, float(np.abs(ua - ub).max(initial=0)))
    return worst_w, worst_uv


def import_args(case):
    args = [case["input"]]
    for k, v in case["import"].items():
        args += [f"--{k}", v]
    return args


def test_blender_imports_and_exports_every_format(blender_run, cli, corpus):
    which, spec, results, stdout, tmp = blender_run
    table = [f"{which}: Blender {results['blender']}, add-on module {results['module']}",
             "| format (file) | bones | head, tail err (m) | angle err (rad) | weights err | UV err | export | export vs `skelport convert` |",
             "|---|---|---|---|---|---|---|---|"]
    failures = []
    for case, res in zip(spec["cases"], results["cases"]):
        key = case["key"]
        if case.get("edit") or key.startswith("map:"):
            continue
        if "exception" in res or res.get("import") != ["FINISHED"]:
            failures.append(f"{key}: import {res}")
            continue
        rep = cli.json("inspect", *import_args(case))
        doc = skelport.load(case["input"], **case["import"])
        lengths = {n for sk in doc.skeletons for n, x in zip(sk.bone_names, sk.lengths) if not math.isnan(x)}
        n, head, ang = bones_against_inspect(res["armatures"], rep, lengths)
        want_w = [w for w in vertex_weights(doc)]
        got = res["meshes"]
        skinned = [(m, w) for m, w in zip(doc.meshes, want_w)]
        assert len(got) == len(doc.meshes), key
        w_err, uv_err, weighted, corners = 0.0, 0.0, 0, 0
        for (m, w), g in zip(skinned, got):
            assert g["vertices"] == len(m.positions), key
            if w is not None:
                assert g["armature_modifier"], key
                w_err = max(w_err, weights_diff(w, g["groups"]))
                weighted += sum(1 for v in w if v)
            uv = corner_uvs(m)
            if uv is not None:
                uv_err = max(uv_err, float(np.abs(np.array(g["uvs"]).reshape(-1, 2) - uv).max(initial=0)) if g["uvs"] is not None else math.inf)
                corners += len(uv)
        # The export against the command line's conversion of the same input.
        ref = tmp / "ref" / Path(case["export"]).name
        ref.parent.mkdir(exist_ok=True)
        cli.run("convert", *import_args(case), "--to", case["to"], "-o", ref, "--allow-loss", check=False)
        export_cell, same_cell = "-", "-"
        if res.get("export") == ["FINISHED"] and ref.is_file():
            d = skelport.diff(str(ref), case["export"])
            we, uve = compare_documents(skelport.load(str(ref)), skelport.load(case["export"]))
            export_cell = "ok"
            same_cell = f"diff {'same' if d['same'] else 'differs'}, max head {d['max_head_distance']:.1e} m, weights {we:.1e}, UVs {uve:.1e}"
            agrees = d["same"] and we <= WEIGHT_TOL and uve <= UV_TOL
            if case["to"] in BYTE_IDENTICAL and Path(case["input"]).suffix == Path(case["export"]).suffix:
                identical = Path(case["input"]).read_bytes() == Path(case["export"]).read_bytes()
                same_cell += ", bytes identical to the input" if identical else ", bytes DIFFER from the input"
                agrees = agrees and identical
            if not agrees:
                failures.append(f"{key}: export {same_cell}")
        else:
            failures.append(f"{key}: export {res.get('export', res.get('exception'))} (reference written: {ref.is_file()})")
        weights_cell = f"{w_err:.1e} ({weighted} vertices)" if weighted else "no skin"
        uv_cell = f"{uv_err:.1e} ({corners} corners)" if corners else "no UVs"
        table.append(f"| {key} ({Path(case['input']).name}) | {n} | {head:.1e} | {ang:.1e} | {weights_cell} | {uv_cell} | {export_cell} | {same_cell} |")
        if not (head <= HEAD_TOL and ang <= ANGLE_TOL and w_err <= WEIGHT_TOL and uv_err <= UV_TOL):
            failures.append(f"{key}: import head {head:.2e} m, angle {ang:.2e} rad, weights {w_err:.2e}, UVs {uv_err:.2e}")
    text = "\n".join(table)
    print("\n" + text)
    TABLE.mkdir(parents=True, exist_ok=True)
    (TABLE / f"{which}.md").write_text(text + "\n")
    assert not failures, "\n".join(failures)


def _vector_line(line):
    """An AnvilToolkit vector's values on one line (`<X>0.1</X> <Y>0</Y> <Z>0</Z> <W>0</W>`)."""
    return re.fullmatch(r"\s*(<([XYZW])>[^<]*</\2>\s*)+", line) is not None


def test_an_edit_in_blender_is_exported_and_the_rest_kept(blender_run):
    """A bone moved in Blender and a vertex group painted: the export has the edit, and
    everything else as the file had it (AnvilToolkit: every bone's ID, links and modifiers, each
    line of the file but the moved values; glTF: every other vertex's weights)."""
    which, spec, results, stdout, tmp = blender_run
    by_key = {c["key"]: (c, r) for c, r in zip(spec["cases"], results["cases"])}

    case, res = by_key["edit: anvil (bone moved)"]
    assert res.get("export") == ["FINISHED"], res
    src, out = Path(case["input"]), Path(case["export"])
    a, b = skelport.load(str(src)).skeletons[0], skelport.load(str(out)).skeletons[0]
    assert a.bone_names == b.bone_names
    # Each bone's extension is its ID, shape and values; the moved bone's values hold the move.
    def ids(sk):
        return [e["anvil"]["id"] if isinstance(e["anvil"], dict) else e["anvil"] for e in sk.bone_extensions]

    assert ids(a) == ids(b), "every bone keeps its AnvilToolkit ID"
    assert a.bone_extensions[a.index(MOVED[0])] != b.bone_extensions[b.index(MOVED[0])], "the moved bone's element has the move"
    assert (a.mirrors == b.mirrors).all() and (a.parents == b.parents).all()
    moved = a.index(MOVED[0])
    offset = TO_BLENDER.T @ np.array(MOVED[1])
    err = np.abs(b.heads - a.heads - np.where(np.arange(len(a))[:, None] == moved, offset, 0.0)).max()
    assert err < HEAD_TOL, f"{which}: heads off by {err} m"
    old, new = src.read_bytes().decode("utf-16").splitlines(), out.read_bytes().decode("utf-16").splitlines()
    assert len(old) == len(new)
    changed = [(x, y) for x, y in zip(old, new) if x != y]
    assert changed, "the move is in the file"
    assert all(_vector_line(x) and _vector_line(y) for x, y in changed), changed
    print(f"{which}: {MOVED[0]} moved by {MOVED[1]}: {len(changed)} of {len(old)} lines changed (vector values only), heads within {err:.1e} m, IDs, links and modifiers kept")

    case, res = by_key["edit: glb (vertex painted)"]
    assert res.get("export") == ["FINISHED"], res
    a, b = skelport.load(case["input"]), skelport.load(case["export"])
    wa, wb = vertex_weights(a)[0], vertex_weights(b)[0]
    group = case["edit"]["paint"]["group"]
    assert abs(wb[0].get(group, 0.0) - 0.5) < 1e-6, wb[0]
    assert weights_diff(wa[1:], wb[1:]) <= WEIGHT_TOL
    print(f"{which}: vertex 0 painted into {group!r}: {wb[0]}; the other {len(wa) - 1} vertices' weights unchanged")


def test_the_vrm_addon_finds_every_humanoid_bone(blender_run):
    """The VRM add-on for Blender (saturday06/VRM-Addon-for-Blender) imports each VRM the
    skelport add-on exported and assigns every humanoid role to the bone skelport wrote for it.
    The add-on is on none of the registries CI installs from (PyPI, npm, Debian): give its
    extension zip as `$SKELPORT_VRM_ADDON` (`git archive --format=zip -o vrm.zip HEAD:src/io_scene_vrm`
    in its repository); without it the test skips."""
    which, spec, results, stdout, tmp = blender_run
    addon = os.environ.get("SKELPORT_VRM_ADDON")
    if not addon or not Path(addon).is_file():
        pytest.skip("$SKELPORT_VRM_ADDON (the VRM add-on's extension zip) is not given")
    files = [c["export"] for c, r in zip(spec["cases"], results["cases"]) if c["to"] == "vrm" and r.get("export") == ["FINISHED"] and not c.get("edit")]
    assert len(files) == 3, files
    user = tmp / "vrm-user-resources"
    user.mkdir(exist_ok=True)
    out = tmp / "vrm-addon.json"
    p = subprocess.run([bpy_python(), str(VRM_DRIVER), addon, str(out), *files], capture_output=True, text=True, timeout=1200,
                       env=dict(os.environ, BLENDER_USER_RESOURCES=str(user)))
    assert p.returncode == 0 and out.exists(), p.stdout[-3000:] + p.stderr[-3000:]
    got = json.loads(out.read_text())
    lines = [f"{which} exports, read by the VRM add-on in Blender {got['blender']}:"]
    for f in files:
        res = got["files"][f]
        assert res.get("import") == ["FINISHED"], res
        want = skelport.load(f).skeletons[0].extensions["vrm"]["humanoid"]
        assert res["roles"] == want, {k: (want.get(k), res["roles"].get(k)) for k in set(want) | set(res["roles"]) if want.get(k) != res["roles"].get(k)}
        lines.append(f"  {Path(f).name}: {len(want)} humanoid roles, every one on skelport's bone; {res['bones']} bones, {res['meshes']} mesh(es)")
    print("\n".join(lines))


def test_an_mpfb_human_exports_as_the_command_line_converts_it(cli, corpus, tmp_path):
    """MPFB 2 (makehumancommunity/mpfb2) builds a default human with its game_engine rig and
    weights in `bpy`; the skelport add-on exports it to Second Life Collada (with the
    mpfb-game_engine-to-sl map), VRM, AnvilToolkit and G4MF, one operator call each. Each export
    is what `skelport convert` makes of MPFB's rig and weights files on the same body (MPFB's
    base.obj with the human's positions): `diff` same, weights and UVs equal. MPFB is on none of
    the registries CI installs from: give its extension zip as `$SKELPORT_MPFB` (its `src/mpfb`
    folder zipped); without it the test skips."""
    addon = os.environ.get("SKELPORT_MPFB")
    if not addon or not Path(addon).is_file():
        pytest.skip("$SKELPORT_MPFB (MPFB 2's extension zip) is not given")
    rigs = corpus / "mpfb" / "rigs" / "standard"
    character = tmp_path / "character.obj"
    targets = [("dae", {"map": "mpfb-game_engine-to-sl"}), ("vrm", {}), ("anvil", {"allow_loss": True}), ("g4b", {})]
    ext = {f.name: f.extensions[0].lstrip(".") for f in skelport.formats() if f.extensions}
    exports = [{"path": str(tmp_path / f"human.{ext[to]}"), "options": dict(opts, format=to)} for to, opts in targets]
    spec = {"mpfb": addon, "skelport": str(_zip(legacy=False)), "base_obj": str(corpus / "mpfb" / "3dobjs" / "base.obj"),
            "character_obj": str(character), "rig": "game_engine", "exports": exports}
    (tmp_path / "user").mkdir()
    res, _ = run_blender([bpy_python(), str(MPFB_DRIVER)], dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user")), spec, tmp_path)
    lines = [f"MPFB human in Blender {res['blender']}: {res['bones']} bones, {res['vertices']} vertices, {res['groups']} vertex groups, "
             f"{res.get('shape_keys', 0)} shape keys (moving vertices up to {res.get('shape_moved_max', 0):.3f} m); built in {res['build_seconds']:.1f} s"]
    failures = []
    for (to, opts), e in zip(targets, res["exports"]):
        if e.get("result") != ["FINISHED"]:
            failures.append(f"{to}: {e}")
            continue
        ref = tmp_path / f"ref.{ext[to]}"
        flags = ["--map", opts["map"]] if "map" in opts else []
        cli.run("convert", rigs / "rig.game_engine.json", "--weights", rigs / "weights.game_engine.json", "--mesh", character,
                "--to", to, *flags, "-o", ref, "--allow-loss")
        d = skelport.diff(str(ref), e["path"])
        we, uve = compare_documents(skelport.load(str(ref)), skelport.load(e["path"]))
        ok = d["same"] and we <= WEIGHT_TOL and uve <= UV_TOL
        lines.append(f"  {to}: export {e['seconds']:.2f} s; against `skelport convert`: diff {'same' if d['same'] else 'DIFFERS'} "
                     f"({d['compared']['bones']} bones, {d['compared']['meshes']} meshes), max head {d['max_head_distance']:.1e} m, "
                     f"weights {we:.1e}, UVs {uve:.1e}")
        if not ok:
            failures.append(lines[-1])
    print("\n".join(lines))
    (TABLE).mkdir(parents=True, exist_ok=True)
    (TABLE / "mpfb.md").write_text("\n".join(lines) + "\n")
    assert not failures, "\n".join(failures)


def test_import_with_a_map_renames_the_bones(blender_run, cli, corpus):
    """Import with a bone map (`map`, as `--map`): Blender's bones carry the map's names, where
    skelport puts them, and export to SL Collada as the command line converts with that map."""
    which, spec, results, stdout, tmp = blender_run
    case, res = next((c, r) for c, r in zip(spec["cases"], results["cases"]) if c["key"].startswith("map:"))
    assert res.get("import") == ["FINISHED"], res
    opts = dict(case["import"])
    mapping = opts.pop("map")
    doc = skelport.load(case["input"], **opts)
    mapped = skelport.load(doc.dumps("ir-json", map=mapping), format="ir-json")
    sk = mapped.skeletons[0]
    bones = next(iter(res["armatures"].values()))
    assert set(bones) == set(sk.bone_names) and "mPelvis" in bones
    err = max(float(np.linalg.norm(np.array(bones[n]["head"]) - TO_BLENDER @ h)) for n, h in zip(sk.bone_names, sk.heads))
    assert err < HEAD_TOL, err
    ref = tmp / "ref" / "mapped.dae"
    ref.parent.mkdir(exist_ok=True)
    cli.run("convert", case["input"], "--mesh", opts["mesh"], "--weights", opts["weights"], "--map", mapping, "-o", ref)
    d = skelport.diff(str(ref), case["export"])
    assert res.get("export") == ["FINISHED"] and d["same"], d
    print(f"{which}: imported with map {mapping}: {len(bones)} bones named as the map says, heads within {err:.1e} m; SL export same as convert --map")
