"""Load and save of every format, and bytes in and out: the demo sample (a humanoid with a
skinned mesh) saved as each writable format reads back with the same bones; every file read
from bytes (mesh and weights too) equals the same file read from its path; dumps() gives the
bytes save() writes."""

import os
from pathlib import Path

import numpy as np
import pytest

import skelport
from conftest import DEMO

WRITABLE = [f for f in skelport.formats() if f.can_write]
READABLE_DEMO = sorted(p for p in DEMO.iterdir() if p.name.startswith("sample.") and not p.name.endswith((".bin", ".inspect.json")))


def test_formats_and_maps_are_the_registry():
    names = [f.name for f in skelport.formats()]
    assert names[:2] == ["mpfb", "anvil"] and "glb" in names and "ir-json" in names
    glb = next(f for f in skelport.formats() if f.name == "glb")
    assert glb.extensions == ["glb"] and glb.can_read and glb.can_write
    assert glb.holds["skins"] is True and glb.holds["meshes"] is True
    anvil = next(f for f in skelport.formats() if f.name == "anvil")
    assert anvil.holds["skins"] is False
    maps = {m.name: m for m in skelport.maps()}
    sl = maps["mpfb-game_engine-to-sl"]
    assert sl.bones["pelvis"] == "mPelvis" and sl.target and sl.description


def bones(sk):
    """name → (parent name, head)."""
    names = sk.bone_names
    return {n: (names[p] if p >= 0 else None, h) for n, p, h in zip(names, sk.parents, sk.heads)}


@pytest.mark.parametrize("fmt", WRITABLE, ids=lambda f: f.name)
def test_every_format_saves_and_reads_back(fmt, tmp_path):
    src = skelport.load(DEMO / "sample.ir.json")
    out = tmp_path / f"sample.{fmt.extensions[0]}"
    # MPFB writes the weights but not the mesh they number: a skin left behind, which the user
    # opts into (the mesh is the base mesh MPFB's rigs are fitted to).
    report = src.save(out, to=fmt.name, allow_loss=fmt.name == "mpfb")
    assert report.ok and report.outputs[-1] == str(out) and all(Path(o).is_file() for o in report.outputs)
    # The saved main file is the bytes made in memory (`save` writes a GLB's binary chunk from
    # its pieces, `dumps_all` hands them over joined).
    whole = src.dumps_all(fmt.name, stem="sample", allow_loss=fmt.name == "mpfb")
    assert next(iter(whole.values())) == out.read_bytes()
    assert [Path(o).name for o in report.outputs[:-1]] == [n for n in os.listdir(tmp_path) if n != out.name]
    # What the format cannot hold is a loss, with a stable code; what it holds reads back.
    if not fmt.holds["skins"]:
        assert any(d.severity == "loss" for d in report.losses)
    weights = next((o for o in report.outputs if Path(o).name.startswith("weights.")), None)
    back = skelport.load(out, format=fmt.name, weights=weights)
    # Bone by bone (a format may order them its own way): the same parents and heads.
    a, b = bones(src.skeletons[0]), bones(back.skeletons[0])
    assert a.keys() == b.keys()
    # A target that moves the model (VRM stands it on Y = 0 and re-rests it in a T-pose) says
    # so with a loss line; the heads are then not the source's.
    moved = {d.code for d in report.losses} & {"vrm.grounded", "vrm.turned", "rest.t-pose"}
    for name, (parent, head) in a.items():
        assert b[name][0] == parent, name
        if not moved:
            np.testing.assert_allclose(b[name][1], head, atol=1e-6, err_msg=name)
    assert len(back.skins) == (len(src.skins) if fmt.holds["skins"] else 0)
    assert len(back.meshes) == (len(src.meshes) if fmt.holds["meshes"] else 0)
    if fmt.holds["skins"]:
        ja, wa = src.skins[0].influences(max=4)
        jb, wb = back.skins[0].influences(max=4)
        names_a, names_b = src.skins[0].joint_names, back.skins[0].joint_names
        for v in range(src.skins[0].vertex_count):
            ia = {names_a[j]: w for j, w in zip(ja[v], wa[v]) if w > 0}
            ib = {names_b[j]: w for j, w in zip(jb[v], wb[v]) if w > 0}
            assert ia.keys() == ib.keys(), v
            assert all(abs(ia[k] / sum(ia.values()) - ib[k] / sum(ib.values())) < 1e-6 for k in ia), v


@pytest.mark.parametrize("path", READABLE_DEMO, ids=lambda p: p.name)
def test_bytes_in_equal_the_file(path, monkeypatch):
    # A .gltf names its .bin; read from bytes, it is looked up from the current directory.
    monkeypatch.chdir(DEMO)
    a = skelport.load(path)
    b = skelport.load(path.read_bytes(), name=path.name)
    c = skelport.load(memoryview(path.read_bytes()), format=a.format)
    assert b.format == a.format == c.format and b.name == path.name and c.name == "<bytes>"
    assert b.inspect() == a.inspect()
    # Without a name, only what a format takes from the file name (AnvilToolkit's skeleton name)
    # differs.
    unnamed = a.inspect()
    for sk, sc in zip(unnamed["skeletons"], c.inspect()["skeletons"]):
        sk["name"] = sc["name"]
    assert c.inspect() == unnamed
    for x, y in zip(a.meshes, b.meshes):
        np.testing.assert_array_equal(x.positions, y.positions)
        np.testing.assert_array_equal(x.faces, y.faces)


def test_mesh_and_weights_as_bytes(mpfb):
    a = skelport.load(mpfb["rig"], weights=mpfb["weights"], mesh=mpfb["mesh"])
    b = skelport.load(
        bytearray(mpfb["rig"].read_bytes()),
        name="rig.game_engine.json",
        weights=mpfb["weights"].read_bytes(),
        mesh=mpfb["mesh"].read_bytes(),
    )
    np.testing.assert_array_equal(a.skeletons[0].heads, b.skeletons[0].heads)
    np.testing.assert_array_equal(a.meshes[0].positions, b.meshes[0].positions)
    for x, y in zip(a.skins[0].influences(), b.skins[0].influences()):
        np.testing.assert_array_equal(x, y)
    # The in-memory mesh goes to the writer too: MPFB out places the bones on it, as from paths.
    assert a.dumps_all("mpfb", stem="body") == b.dumps_all("mpfb", stem="body")


def test_dumps_equals_save(tmp_path):
    src = skelport.load(DEMO / "sample.ir.json")
    for to, ext in (("glb", "glb"), ("g4b", "g4b"), ("anvil", "xml"), ("dae", "dae"), ("ir-json", "ir.json")):
        out = tmp_path / f"sample.{ext}"
        src.save(out, to=to)
        data = src.dumps(to)
        assert isinstance(data, bytes)
        if to != "dae":  # a .dae names its file inside; the bytes from memory name none
            assert data == out.read_bytes(), to
        back = skelport.load(data, name=f"x.{ext}")
        np.testing.assert_array_equal(back.skeletons[0].heads, skelport.load(out).skeletons[0].heads)
    # glTF from memory embeds its buffers, so the bytes stand alone.
    gltf = src.dumps("gltf")
    assert b"data:application/octet-stream;base64," in gltf
    np.testing.assert_array_equal(skelport.load(gltf, name="x.gltf").skeletons[0].heads, skelport.load(src.dumps("glb"), format="glb").skeletons[0].heads)


def test_files_with_side_files_in_memory():
    src = skelport.load(DEMO / "sample.ir.json")
    # Without allow_loss the MPFB writer refuses first: its weights number a mesh it does not write.
    with pytest.raises(skelport.Error) as e:
        src.dumps("mpfb")
    assert e.value.code == "loss" and "allow_loss=True" in str(e.value), str(e.value)
    with pytest.raises(skelport.Error) as e:
        src.dumps("mpfb", allow_loss=True)
    assert e.value.code == "output" and "dumps_all" in str(e.value)
    files = src.dumps_all("mpfb", stem="sample", allow_loss=True)
    assert list(files) == ["rig.sample.json", "weights.sample.json"]
    back = skelport.load(files["rig.sample.json"], name="rig.sample.json", weights=files["weights.sample.json"])
    assert sorted(back.skeletons[0].bone_names) == sorted(src.skeletons[0].bone_names)
    assert sorted(back.skins[0].joint_names) == sorted(src.skins[0].joint_names)
    files = src.dumps_all("gltf", stem="body")
    assert list(files) == ["body.gltf", "body.bin"] and b'"uri":"body.bin"' in files["body.gltf"].replace(b" ", b"")
