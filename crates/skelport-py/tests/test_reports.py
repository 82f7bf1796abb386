"""diff() and validate() give the dicts `skelport diff --json` and `skelport validate --json`
print, for files in any format, from paths, bytes or loaded documents."""

import skelport
from conftest import DEMO


def test_diff_equals_the_command_line(cli, corpus, mpfb, tmp_path):
    # Two formats of one sample: tails differ (Collada has no bone lengths), heads agree.
    a, b = DEMO / "sample.glb", DEMO / "sample.dae"
    assert skelport.diff(a, b) == cli.json("diff", a, b)
    assert skelport.diff(skelport.load(a), b.read_bytes(), tolerance=0.5) == cli.json("diff", a, b, "--tolerance", "0.5")
    # The pose test: both skinned, posed alike.
    r = skelport.diff(a, b, pose_test=True, poses=3)
    assert r == cli.json("diff", a, b, "--pose-test", "--poses", "3")
    assert r["pose_test"]["poses"] == 3 and r["pose_test"]["vertices"] > 0
    # MakeHuman rig retargeted, against the Second Life skeleton.
    args = dict(weights=mpfb["weights"], mesh=mpfb["mesh"], map="mpfb-game_engine-to-sl")
    r = skelport.diff(mpfb["rig"], sl=True, **args)
    assert r == cli.json("diff", mpfb["rig"], "--sl", "--weights", mpfb["weights"], "--mesh", mpfb["mesh"], "--map", "mpfb-game_engine-to-sl")
    assert not r["same"] and "mPelvis" not in r["removed"]
    # map="humanoid" renames A to the SL skeleton's names with sl=True, as `--sl --map humanoid`.
    r = skelport.diff(a, sl=True, map="humanoid")
    assert r == cli.json("diff", a, "--sl", "--map", "humanoid")
    assert r["compared"]["bones"] == 18 and not r["removed"]


def test_validate_equals_the_command_line(cli, corpus):
    for path, target in (
        (DEMO / "sample.glb", None),
        (DEMO / "sample.glb", "sl"),
        (DEMO / "sample.glb", "anvil"),
        (corpus / "sl" / "linden-lab" / "female_2016_08_05.dae", "sl"),
    ):
        args = [path] + (["--target", target] if target else [])
        assert skelport.validate(path, target) == cli.json("validate", *args), (path, target)
    v = skelport.validate(DEMO / "sample.glb", "sl")
    assert not v["valid"] and v["problems"][0]["message"].startswith("[UnrecognizedJoint]")
    assert skelport.validate(DEMO / "sample.glb")["valid"]
