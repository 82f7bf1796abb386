"""`skelport.from_arrays`: a document built from a loaded document's arrays is that document: the
same bones (heads, orientations, lengths), mesh (positions, faces, UVs, normals) and skin
(joints and weights), whether the skin comes as padded arrays or as Blender-style vertex groups;
and it writes every format skelport writes."""

import numpy as np
import pytest

import skelport
from conftest import DEMO, ROOT


def quat_matrices(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        1,
    )


def rest_matrices(sk) -> np.ndarray:
    m = np.tile(np.eye(4), (len(sk.bone_names), 1, 1))
    m[:, :3, :3] = quat_matrices(sk.rotations)
    m[:, :3, 3] = sk.heads
    return m


def rebuild(doc, *, as_groups=False):
    sk, mesh, skin = doc.skeletons[0], doc.meshes[0], doc.skins[0]
    joints, weights = skin.influences()
    skin_args = {"joints": joints, "weights": weights, "joint_names": skin.joint_names}
    if as_groups:
        groups = {}
        for slot, name in enumerate(skin.joint_names):
            v, k = np.nonzero((joints == slot) & (weights > 0))
            groups[name] = (v, weights[v, k])
        skin_args = {"groups": groups, "joint_names": skin.joint_names}
    return skelport.from_arrays(
        sk.bone_names,
        sk.parents,
        rest_matrices(sk),
        name=sk.name,
        lengths=np.linalg.norm(sk.tails - sk.heads, axis=1),
        positions=mesh.positions,
        faces=mesh.faces,
        uvs=mesh.uvs,
        uvs_per_corner=mesh.uvs_per_corner,
        normals=mesh.normals,
        normals_per_corner=mesh.normals_per_corner,
        **skin_args,
    )


def same_rotation(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.minimum(np.abs(a - b).max(1), np.abs(a + b).max(1)) < 1e-9))


@pytest.mark.parametrize("as_groups", [False, True], ids=["joints-weights", "vertex-groups"])
def test_rebuilt_document_is_the_document(as_groups):
    doc = skelport.load(DEMO / "sample.glb")
    # Rest and bind agree in the sample: each joint binds at its bone's rest matrix.
    sk = doc.skeletons[0]
    bound = ~np.isnan(sk.bind_matrices[:, 0, 0])
    np.testing.assert_allclose(sk.bind_matrices[bound], rest_matrices(sk)[bound], atol=1e-6)

    new = rebuild(doc, as_groups=as_groups)
    a, b = doc.skeletons[0], new.skeletons[0]
    assert b.bone_names == a.bone_names and (b.parents == a.parents).all()
    np.testing.assert_allclose(b.heads, a.heads, atol=1e-9)
    np.testing.assert_allclose(b.tails, a.tails, atol=1e-9)
    assert same_rotation(b.rotations, a.rotations)
    ma, mb = doc.meshes[0], new.meshes[0]
    np.testing.assert_array_equal(mb.positions, ma.positions)
    np.testing.assert_array_equal(mb.faces, ma.faces)
    np.testing.assert_array_equal(mb.uvs, ma.uvs)
    np.testing.assert_array_equal(mb.normals, ma.normals)
    ja, wa = doc.skins[0].influences()
    jb, wb = new.skins[0].influences()
    assert new.skins[0].joint_names == doc.skins[0].joint_names
    np.testing.assert_array_equal(wb, wa)
    np.testing.assert_array_equal(jb[wb > 0], ja[wa > 0])
    report = skelport.diff(doc, new)
    assert report["same"], report


@pytest.mark.parametrize("to", [f.name for f in skelport.formats() if f.can_write])
def test_rebuilt_document_writes_every_format(to, tmp_path):
    doc = rebuild(skelport.load(DEMO / "sample.glb"))
    files = doc.dumps_all(to, stem="rebuilt", allow_loss=True)
    assert files and all(files.values())


def test_bad_arrays_are_named():
    eye = np.tile(np.eye(4), (2, 1, 1))
    with pytest.raises(ValueError, match=r"parents\[1\]"):
        skelport.from_arrays(["a", "b"], [-1, 1], eye)
    with pytest.raises(ValueError, match=r"shape \(2, 4, 4\)"):
        skelport.from_arrays(["a", "b"], [-1, 0], np.eye(4)[None])
    sheared = eye.copy()
    sheared[1, 0, 1] = 0.5
    with pytest.raises(ValueError, match=r"matrices\[1\]"):
        skelport.from_arrays(["a", "b"], [-1, 0], sheared)
    with pytest.raises(ValueError, match="named twice"):
        skelport.from_arrays(["a", "a"], [-1, 0], eye)
    with pytest.raises(ValueError, match=r"faces\[0\]"):
        skelport.from_arrays(["a", "b"], [-1, 0], eye, positions=np.zeros((3, 3)), faces=[[0, 1, 7]])
    with pytest.raises(ValueError, match="joint_names"):
        skelport.from_arrays(["a", "b"], [-1, 0], eye, positions=np.zeros((3, 3)), joints=np.zeros((3, 1)), weights=np.ones((3, 1)), joint_names=["c"])
    with pytest.raises(ValueError, match=r"mirrors\[1\]"):
        skelport.from_arrays(["a", "b"], [-1, 0], eye, mirrors=[1, 5])
    with pytest.raises(ValueError, match=r"meshes\[0\]: unknown key \"colour\""):
        skelport.from_arrays(["a", "b"], [-1, 0], eye, meshes=[{"positions": np.zeros((3, 3)), "colour": 1}])
    with pytest.raises(ValueError, match=r"bone_extensions has 1 items for 2 bones"):
        skelport.from_arrays(["a", "b"], [-1, 0], eye, bone_extensions=[{}])
    with pytest.raises(ValueError, match=r"skeleton_extensions must be a dict"):
        skelport.from_arrays(["a", "b"], [-1, 0], eye, skeleton_extensions="anvil")


def take_apart(doc):
    """Every skeleton property, mesh and skin of a one-skeleton document, built again."""
    sk = doc.skeletons[0]
    meshes = []
    for k, mesh in enumerate(doc.meshes):
        skin = next((s for s in doc.skins if s.mesh == k), None)
        m = {
            "positions": mesh.positions, "faces": mesh.faces, "uvs": mesh.uvs, "uvs_per_corner": mesh.uvs_per_corner,
            "normals": mesh.normals, "normals_per_corner": mesh.normals_per_corner, "name": mesh.name, "extensions": mesh.extensions,
        }
        if skin is not None:
            joints, weights = skin.influences()
            m.update(joints=joints, weights=weights, joint_names=skin.joint_names, skin_name=skin.name, skin_extensions=skin.extensions,
                     bind_matrices=skin.bind_matrices)
        meshes.append(m)
    return skelport.from_arrays(
        sk.bone_names, sk.parents, rest_matrices(sk), name=sk.name, lengths=sk.lengths, rolls=sk.rolls, deform=sk.deform,
        mirrors=sk.mirrors, bone_anchors=sk.bone_anchors, meshes=meshes, extensions=doc.extensions,
        skeleton_extensions=sk.extensions, bone_extensions=sk.bone_extensions,
    )


@pytest.mark.parametrize("path", [
    "testdata/anvil/biped.standard.xml", "testdata/anvil/biped.schema.xml", "testdata/demo/sample.anvil.xml",
    "testdata/demo/sample.glb", "testdata/demo/sample.vrm", "testdata/demo/sample.dae", "testdata/demo/sample.g4b",
    "testdata/demo/sample.ir.json", "sl/linden-lab/female_2016_08_05.dae", "gltf/Fox/Fox.glb", "mpfb/rigs/standard/rig.game_engine.json",
])
def test_taken_apart_and_built_again_is_the_file(path, corpus, tmp_path):
    """A loaded document taken apart into arrays, properties and format data, and built again
    with from_arrays, is the document (`diff` same, as many meshes and skins); an AnvilToolkit
    skeleton writes back byte for byte (its IDs, modifiers and layout are format data)."""
    src = ROOT / path if path.startswith("testdata/") else corpus / path
    doc = skelport.load(src)
    new = take_apart(doc)
    assert len(new.meshes) == len(doc.meshes) and len(new.skins) == len(doc.skins)
    report = skelport.diff(doc, new)
    assert report["same"], report
    if doc.format.startswith("anvil"):
        assert doc.skeletons[0].extensions.get("anvil"), "the skeleton's format data is given"
        assert all(e.get("anvil") for e in doc.skeletons[0].bone_extensions), "each bone's ID is given"
        new.save(tmp_path / src.name, to=doc.format)
        assert (tmp_path / src.name).read_bytes() == src.read_bytes()
    if doc.format == "mpfb":
        a, b = doc.skeletons[0], new.skeletons[0]
        assert a.bone_anchors == b.bone_anchors and any(a.bone_anchors)
        np.testing.assert_array_equal(a.rolls, b.rolls)
        np.testing.assert_array_equal(a.deform, b.deform)
