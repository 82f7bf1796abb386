"""Checks shared by the tests: a Document's arrays against `skelport inspect --json`; a command
line message in Python's words."""

import re

import numpy as np

# The command line's flags as Python names them (skelport::Opt::said); a flag Python has no
# keyword for stays as it is.
KEYWORDS = {
    "--from": "format=",
    "--to": "to=",
    "--weights": "weights=",
    "--mesh": "mesh=",
    "--map": "map=",
    "--strict": "strict=True",
    "--allow-loss": "allow_loss=True",
    "--embed": "embed=True",
    "--rest-pose": "rest_pose=",
    "--pose-test": "pose_test=True",
    "--target": "target=",
    "--fix": "fix=True",
    "--limit": "limit=",
    "--keep-helpers": "keep_helpers=True",
    "--keep-origin": "keep_origin=True",
    "--names": "names=",
    "--default-joints": "default_joints=True",
    "--max-influences": "max_influences=",
    "--vrm-meta": "vrm_meta=",
    "--allow-outside-uris": "allow_outside_uris=True",
}


def in_python_words(message: str) -> str:
    """A command line message as Python says it: each flag standing as a word of its own, in
    Python's words."""
    return re.sub(r"(?<![\w/.-])--[a-z-]+(?![\w-])", lambda m: KEYWORDS.get(m[0], m[0]), message)


def assert_matches_inspect(doc, rep: dict) -> None:
    """Every array of `doc` equals the command line's report, number for number (both print and
    parse floats exactly, so equality is exact, not within a tolerance)."""
    assert doc.format == rep["format"]
    assert len(doc.skeletons) == len(rep["skeletons"])
    for sk, rs in zip(doc.skeletons, rep["skeletons"]):
        bones = rs["bones"]
        n = len(bones)
        assert sk.name == rs["name"] and len(sk) == n
        assert sk.bone_names == [b["name"] for b in bones]
        names = sk.bone_names
        assert sk.parents.dtype == np.int32 and sk.parents.shape == (n,)
        assert [names[p] if p >= 0 else None for p in sk.parents] == [b["parent"] for b in bones]
        for attr, key, width in (("heads", "head", 3), ("tails", "tail", 3), ("rotations", "rotation", 4)):
            got = getattr(sk, attr)
            assert got.dtype == np.float64 and got.shape == (n, width), attr
            np.testing.assert_array_equal(got, np.array([b[key] for b in bones], dtype=np.float64).reshape(n, width), err_msg=attr)
        bound = [b for b in bones if "bind_matrix" in b]
        if not bound:
            assert sk.bind_matrices is None
        else:
            m = sk.bind_matrices
            assert m.shape == (n, 4, 4)
            for i, b in enumerate(bones):
                if "bind_matrix" in b:
                    # The report is column-major (glTF's order); the array is row-major.
                    np.testing.assert_array_equal(m[i], np.array(b["bind_matrix"]).reshape(4, 4).T)
                    np.testing.assert_array_equal(m[i][:3, 3], b["bind_head"])
                else:
                    assert np.isnan(m[i]).all()
    assert len(doc.skins) == len(rep["skins"])
    for skin, rs in zip(doc.skins, rep["skins"]):
        assert skin.joint_names == rs["joints"]
        assert skin.vertex_count == rs["vertex_count"]
        joints, weights = skin.influences()
        assert joints.dtype == np.int32 and weights.dtype == np.float32
        assert joints.shape == weights.shape and joints.shape[1] == rs["max_influences"]
        assert int((weights > 0).any(axis=1).sum()) == rs["weighted_vertices"]
        if joints.size:
            assert 0 <= joints.min() and joints.max() < len(rs["joints"])
        sk = doc.skeletons[skin.skeleton]
        assert [sk.bone_names[b] for b in skin.joint_bones] == rs["joints"]
