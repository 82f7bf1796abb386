"""`skelport.from_arrays`: a document built from a loaded document's arrays is that document: the
same bones (heads, orientations, lengths), mesh (positions, faces, UVs, normals) and skin
(joints and weights), whether the skin comes as padded arrays or as Blender-style vertex groups;
and it writes every format skelport writes."""

import numpy as np
import pytest

import skelport
from conftest import DEMO


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
