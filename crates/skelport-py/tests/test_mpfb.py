"""The MakeHuman main path from Python: the game-engine rig with its weights on the base mesh,
converted to glTF (and retargeted to Second Life), must give the command line's bytes and its
diagnostics (their advice in Python's words), and read back as the same skeleton."""

import json

import numpy as np

import skelport
from helpers import assert_matches_inspect, in_python_words


def cli_convert(cli, tmp_path, name, *args):
    out = tmp_path / "cli" / name
    out.parent.mkdir(exist_ok=True)
    return out, json.loads(cli.run("convert", *args, "-o", out, "--json").stdout)


def triples(diagnostics):
    return [(d.severity, d.code, d.message) for d in diagnostics]


def test_main_path_to_glb_equals_the_command_line(cli, mpfb, tmp_path):
    out = tmp_path / "human.glb"
    report = skelport.convert(mpfb["rig"], out, weights=mpfb["weights"], mesh=mpfb["mesh"])
    ref, ref_json = cli_convert(cli, tmp_path, "human.glb", mpfb["rig"], "--weights", mpfb["weights"], "--mesh", mpfb["mesh"])
    assert out.read_bytes() == ref.read_bytes()
    assert report.ok and report.outputs == [str(out)] and report.errors == []
    assert triples(report.diagnostics) == [(d["severity"], d["code"], in_python_words(d["message"])) for d in ref_json["diagnostics"]]
    assert report.losses == []  # glb holds a skinned body
    (f,) = report.files
    assert (f.input, f.output, f.from_format, f.to_format) == (str(mpfb["rig"]), str(out), "mpfb", "glb")
    assert all(d.path == str(mpfb["rig"]) for d in report.diagnostics)
    # Read back: the command line's report of the file, array for array.
    assert_matches_inspect(skelport.load(out), cli.json("inspect", out))


def test_main_path_retargeted_to_second_life_reports_its_losses(cli, mpfb, tmp_path):
    out = tmp_path / "human-sl.dae"
    report = skelport.convert(mpfb["rig"], out, weights=mpfb["weights"], mesh=mpfb["mesh"], map="mpfb-game_engine-to-sl")
    ref, ref_json = cli_convert(
        cli, tmp_path, "human-sl.dae", mpfb["rig"], "--weights", mpfb["weights"], "--mesh", mpfb["mesh"], "--map", "mpfb-game_engine-to-sl"
    )
    assert out.read_bytes() == ref.read_bytes()
    assert triples(report.diagnostics) == [(d["severity"], d["code"], in_python_words(d["message"])) for d in ref_json["diagnostics"]]
    dropped = [d for d in report.losses if d.code == "retarget.dropped"]
    assert dropped and all(d.place and d.place.startswith("bone ") for d in dropped)
    # strict refuses the same conversion, listing the losses, and writes nothing.
    strict_out = tmp_path / "strict.dae"
    try:
        skelport.convert(mpfb["rig"], strict_out, weights=mpfb["weights"], mesh=mpfb["mesh"], map="mpfb-game_engine-to-sl", strict=True)
    except skelport.Error as e:
        assert e.code == "strict" and e.path == str(mpfb["rig"])
        assert [d.code for d in e.diagnostics if d.severity == "loss"] == [d.code for d in report.losses]
    else:
        raise AssertionError("strict=True converted with losses")
    assert not strict_out.exists()


def test_rig_on_mesh_arrays(mpfb):
    doc = skelport.load(mpfb["rig"], weights=mpfb["weights"], mesh=mpfb["mesh"])
    sk, skin, mesh = doc.skeletons[0], doc.skins[0], doc.meshes[0]
    assert doc.format == "mpfb" and len(sk) == 53
    assert sk.parents[0] == -1 and (sk.parents[1:] < np.arange(1, len(sk))).all()
    # Every bone is a unit quaternion; the tails of MPFB bones lie on the bone's local +Y.
    np.testing.assert_allclose(np.linalg.norm(sk.rotations, axis=1), 1.0, atol=1e-12)
    x, y, z, w = sk.rotations.T
    local_y = np.stack([2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w)], axis=1)
    d = sk.tails - sk.heads
    np.testing.assert_allclose(d / np.linalg.norm(d, axis=1)[:, None], local_y, atol=1e-9)
    # The skin covers the mesh; limited to 4, every weighted row sums to 1 and keeps its largest.
    assert skin.vertex_count == len(mesh.positions) and skin.mesh == 0 and skin.skeleton == 0
    full_j, full_w = skin.influences()
    j4, w4 = skin.influences(max=4)
    assert j4.shape == (skin.vertex_count, 4)
    weighted = w4.sum(axis=1) > 0
    cut = (full_w > 0).sum(axis=1) > 4
    np.testing.assert_allclose(w4[cut].sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(j4[weighted, 0], full_j[weighted, 0])
    assert (np.diff(full_w, axis=1) <= 0).all(), "rows are largest first"
    assert len(mesh.faces) == len(mesh.face_sizes) and mesh.faces.max() < len(mesh.positions)
