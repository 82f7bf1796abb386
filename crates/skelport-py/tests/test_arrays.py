"""Document arrays against `skelport inspect --json`, on the demo sample in every format and on
real files from other tools; mesh arrays against the glTF buffers themselves."""

import json
import struct
from pathlib import Path

import numpy as np
import pytest

import skelport
from conftest import DEMO, ROOT
from helpers import assert_matches_inspect

DEMO_FILES = sorted(p.name for p in DEMO.iterdir() if not p.name.endswith((".bin", ".inspect.json")) and not p.name.startswith("weights.") and p.suffix != ".mhw")

CORPUS_FILES = [
    "gltf/Fox/Fox.glb",
    "gltf/SimpleSkin/SimpleSkin.gltf",
    "gltf/webxr-generic-hand/left.glb",
    "sl/linden-lab/female_2016_08_05.dae",
    "sl/linden-lab/Skeleton.Male.dae",
    "sl/viewer/avatar_skeleton.xml",
    "g4mf/extracted-examples/node_child_4d.g4tf",
    "realworld/khr_CesiumMan.glb",
    "realworld/threejs_RobotExpressive.glb",
    "realworld/assimp_simple_skin.gltf",
]


@pytest.mark.parametrize("name", DEMO_FILES)
def test_demo_sample_arrays_equal_inspect(cli, name):
    path = DEMO / name
    extra = ["--weights", DEMO / "weights.sample.json"] if name == "rig.sample.json" else []
    rep = cli.json("inspect", path, *extra)
    doc = skelport.load(path, weights=DEMO / "weights.sample.json" if extra else None)
    assert_matches_inspect(doc, rep)
    assert doc.inspect() == rep


@pytest.mark.parametrize("rel", CORPUS_FILES)
def test_corpus_arrays_equal_inspect(cli, corpus, rel):
    path = corpus / rel
    rep = cli.json("inspect", path)
    doc = skelport.load(path)
    assert_matches_inspect(doc, rep)
    assert doc.inspect() == rep


def test_anvil_arrays_equal_inspect(cli):
    for path in sorted((ROOT / "testdata" / "anvil").glob("*.xml")):
        assert_matches_inspect(skelport.load(path), cli.json("inspect", path))


def test_mpfb_rig_on_its_mesh_equals_inspect(cli, mpfb):
    rep = cli.json("inspect", mpfb["rig"], "--weights", mpfb["weights"], "--mesh", mpfb["mesh"])
    doc = skelport.load(mpfb["rig"], weights=mpfb["weights"], mesh=mpfb["mesh"])
    assert_matches_inspect(doc, rep)
    # The rig is placed on the mesh: every bone head lies inside the body's bounding box.
    lo, hi = doc.meshes[0].positions.min(axis=0), doc.meshes[0].positions.max(axis=0)
    heads = doc.skeletons[0].heads
    assert ((heads >= lo - 0.05) & (heads <= hi + 0.05)).all()
    # Feet on the ground, +Y up, metres: a MakeHuman body is 1.5 to 2 m tall.
    assert abs(lo[1]) < 1e-9 and 1.5 < hi[1] - lo[1] < 2.0


def read_glb(path: Path):
    """The JSON and binary chunks of a GLB."""
    data = path.read_bytes()
    magic, _version, _length = struct.unpack_from("<4sII", data, 0)
    assert magic == b"glTF"
    jlen, _ = struct.unpack_from("<II", data, 12)
    gltf = json.loads(data[20:20 + jlen])
    blen, _ = struct.unpack_from("<II", data, 20 + jlen)
    return gltf, data[28 + jlen:28 + jlen + blen]


def accessor(gltf, binary, index):
    a = gltf["accessors"][index]
    view = gltf["bufferViews"][a["bufferView"]]
    dtype = {5126: np.float32, 5125: np.uint32, 5123: np.uint16, 5121: np.uint8}[a["componentType"]]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[a["type"]]
    start = view.get("byteOffset", 0) + a.get("byteOffset", 0)
    stride = view.get("byteStride", 0) or np.dtype(dtype).itemsize * width
    rows = [np.frombuffer(binary, dtype, width, start + i * stride) for i in range(a["count"])]
    return np.array(rows).reshape(a["count"], width)


def test_mesh_arrays_equal_the_glb_buffers(corpus):
    """Fox.glb: one primitive, so skelport's mesh is the file's POSITION and triangle indices,
    number for number."""
    path = corpus / "gltf" / "Fox" / "Fox.glb"
    gltf, binary = read_glb(path)
    prim = gltf["meshes"][0]["primitives"][0]
    mesh = skelport.load(path).meshes[0]
    positions = accessor(gltf, binary, prim["attributes"]["POSITION"])
    np.testing.assert_array_equal(mesh.positions, positions.astype(np.float64))
    if "indices" in prim:
        tris = accessor(gltf, binary, prim["indices"]).reshape(-1, 3)
    else:
        tris = np.arange(len(positions)).reshape(-1, 3)
    np.testing.assert_array_equal(mesh.faces, tris.astype(np.int32))
    assert (mesh.face_sizes == 3).all()


def test_mesh_arrays_are_in_the_report_frame_whatever_the_file(corpus, tmp_path):
    """The fox written as Collada (Z up) reads back with the same positions and bone heads:
    arrays do not depend on the file's own frame."""
    src = skelport.load(corpus / "gltf" / "Fox" / "Fox.glb")
    out = tmp_path / "fox.dae"
    src.save(out)
    back = skelport.load(out)
    assert back.inspect()["source_frame"]["up"] == "+Z" and src.inspect()["source_frame"]["up"] == "+Y"
    np.testing.assert_allclose(back.meshes[0].positions, src.meshes[0].positions, atol=1e-6)
    np.testing.assert_allclose(back.skeletons[0].heads, src.skeletons[0].heads, atol=1e-6)


def ir_mesh(frame: dict, **mesh) -> bytes:
    """An ir-json document holding one mesh, a quad and a triangle."""
    base = {
        "name": "m",
        "positions": [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0]],
        "faces": {"counts": [4, 3], "indices": [0, 1, 2, 3, 1, 4, 2]},
    }
    base.update(mesh)
    return json.dumps({"skelport_ir": 1, "frame": frame, "skeletons": [], "meshes": [base]}).encode()


REPORT_FRAME = {"up": "+Y", "forward": "+Z", "handedness": "right", "metres_per_unit": 1.0}


def test_faces_are_padded_for_mixed_polygons():
    """A quad and a triangle: (2, 4) with -1 after the triangle; faces[faces >= 0] is the corner list."""
    m = skelport.load(ir_mesh(REPORT_FRAME), name="mixed.ir.json").meshes[0]
    np.testing.assert_array_equal(m.faces, [[0, 1, 2, 3], [1, 4, 2, -1]])
    np.testing.assert_array_equal(m.faces[m.faces >= 0], [0, 1, 2, 3, 1, 4, 2])
    np.testing.assert_array_equal(m.face_sizes, [4, 3])
    assert m.normals is None and m.uvs is None and not m.normals_per_corner and not m.uvs_per_corner


def test_per_corner_values_follow_their_corners_into_the_report_frame():
    """A left-handed, Z-up document in centimetres: positions are turned and scaled into the
    report frame, and because the frame change mirrors, each face's corners are reversed, with
    the per-corner normals and UVs reversed alongside so every value stays on its corner."""
    corner_uv = [[k / 10, k / 20] for k in range(7)]
    corner_n = [[0, 0, 1]] * 7
    frame = {"up": "+Z", "forward": "+Y", "handedness": "left", "metres_per_unit": 0.01}
    m = skelport.load(
        ir_mesh(frame, uvs=[{"uvs": {"kind": "per_corner", "values": corner_uv}}], normals={"kind": "per_corner", "values": corner_n}),
        name="left.ir.json",
    ).meshes[0]
    assert m.uvs_per_corner and m.normals_per_corner
    # Each face reversed: corner k of a face went to the mirrored place, its UV with it.
    np.testing.assert_array_equal(m.faces, [[3, 2, 1, 0], [2, 4, 1, -1]])
    np.testing.assert_allclose(m.uvs, [corner_uv[i] for i in (3, 2, 1, 0, 6, 5, 4)])
    # Left is +X in both frames; the file's up (+Z) is the report's +Y, its forward (+Y) the
    # report's +Z (two axes swapped: the mirror); 1 unit is 1 cm.
    np.testing.assert_allclose(m.positions, [[0, 0, 0], [0.01, 0, 0], [0.01, 0, 0.01], [0, 0, 0.01], [0.02, 0, 0]], atol=1e-15)
    np.testing.assert_allclose(m.normals, [[0, 1, 0]] * 7, atol=1e-15)


def test_renamed_in_memory_is_what_a_conversion_with_the_map_writes(mpfb):
    """`Document.renamed(map)` renames as `convert(map=...)` does (compared with the ir-json such a
    conversion writes: names, heads, weights, the rename's losses), and leaves the document as
    it was."""
    doc = skelport.load(mpfb["rig"], weights=mpfb["weights"], mesh=mpfb["mesh"])
    before = doc.skeletons[0].bone_names
    renamed = doc.renamed("mpfb-game_engine-to-sl")
    written = skelport.load(doc.dumps("ir-json", map="mpfb-game_engine-to-sl"), format="ir-json")
    names = renamed.skeletons[0].bone_names
    assert names == written.skeletons[0].bone_names and "mPelvis" in names and names != before
    assert doc.skeletons[0].bone_names == before
    np.testing.assert_array_equal(renamed.skeletons[0].heads, written.skeletons[0].heads)
    for a, b in zip(renamed.skins[0].influences(max=4), written.skins[0].influences(max=4)):
        np.testing.assert_array_equal(a, b)
    added = [d.code for d in renamed.diagnostics][len(doc.diagnostics):]
    assert added and all(c.startswith("retarget.") for c in added), added
    assert renamed.format == doc.format == "mpfb"


def test_renamed_by_humanoid_needs_a_target_and_unknown_maps_are_errors():
    vrm = skelport.load(DEMO / "sample.vrm")
    sl = vrm.renamed("humanoid", to="dae")
    assert "mPelvis" in sl.skeletons[0].bone_names
    with pytest.raises(skelport.Error) as e:
        vrm.renamed("humanoid")
    assert "to=" in str(e.value)
    with pytest.raises(skelport.Error) as e:
        vrm.renamed("mixamo-to-s1")
    assert e.value.code == "map" and "no built-in map" in str(e.value) and "--map" not in str(e.value), str(e.value)
