"""Blender (Debian's 3.4, its system Python 3.11) imports the built wheel and runs the example
script headless (the add-on's import, loaded from its source folder, without installing it): each file becomes an armature whose every bone head is where the command
line's `skelport inspect --json` says, within 0.1 mm, and whose every bone points as its
rotation says, within 0.01°; a skinned mesh arrives with its vertices and one vertex group per
joint. The files: an AnvilToolkit skeleton, G4MF (text and binary), an
MPFB rig placed on its base mesh with its weights, and Linden Lab's Second Life body."""

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import skelport
from conftest import DEMO, IN_CI, ROOT

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "blender_import.py"
# skelport's report frame (+Y up, +Z forward) to Blender's (+Z up, -Y forward).
TO_BLENDER = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


@pytest.fixture(scope="module")
def blender(tmp_path_factory):
    exe = shutil.which("blender")
    if exe is None:
        if IN_CI:
            pytest.fail("blender is missing and CI is set (.ci/run installs it)")
        pytest.skip("blender is missing")
    # Blender's Python finds the installed package (the wheel's files) and nothing else of the
    # test environment: its own numpy is Debian's.
    site = tmp_path_factory.mktemp("blender-site")
    shutil.copytree(Path(skelport.__file__).parent, site / "skelport")
    return exe, site


def cases(corpus):
    rigs = corpus / "mpfb" / "rigs" / "standard"
    return {
        "anvil": [ROOT / "testdata" / "anvil" / "biped.standard.xml"],
        "anvil-schema": [ROOT / "testdata" / "anvil" / "biped.schema.xml"],
        "g4tf": [DEMO / "sample.g4tf"],
        "g4b": [DEMO / "sample.g4b"],
        "mpfb": [rigs / "rig.game_engine.json", "--mesh", corpus / "mpfb" / "3dobjs" / "base.obj", "--weights", rigs / "weights.game_engine.json"],
        "sl": [corpus / "sl" / "linden-lab" / "female_2016_08_05.dae"],
    }


def quat_matrix(q):
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def angle(a, b):
    """Degrees between two rotation matrices, from the sine and the cosine of the difference:
    acos of the cosine alone would read Blender's float32 rounding (|column| = 1 - 4e-7) as 0.05°."""
    r = a.T @ b
    s = np.linalg.norm([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / 2
    return math.degrees(math.atan2(s, (np.trace(r) - 1) / 2))


@pytest.mark.parametrize("kind", ["anvil", "anvil-schema", "g4tf", "g4b", "mpfb", "sl"])
def test_blender_builds_every_bone_where_skelport_reports_it(blender, corpus, cli, kind, tmp_path):
    exe, site = blender
    args = [str(a) for a in cases(corpus)[kind]]
    heads_file = tmp_path / "heads.json"
    env = dict(os.environ, PYTHONPATH=str(site))
    p = subprocess.run(
        [exe, "-b", "--factory-startup", "-noaudio", "--python-use-system-env", "--python-exit-code", "1",
         "--python", str(EXAMPLE), "--", *args, "--heads", str(heads_file)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert p.returncode == 0 and heads_file.exists(), p.stdout[-3000:] + p.stderr[-3000:]
    result = json.loads(heads_file.read_text())
    placed = result["bones"]
    rep = cli.json("inspect", *args)
    worst, worst_bone, worst_angle, n = 0.0, "", 0.0, 0
    for sk in rep["skeletons"]:
        for b in sk["bones"]:
            assert b["name"] in placed, f"{b['name']} is not in Blender's armature"
            got = placed[b["name"]]
            d = float(np.linalg.norm(np.array(got["head"]) - TO_BLENDER @ np.array(b["head"])))
            if d >= worst:
                worst, worst_bone = d, b["name"]
            want = TO_BLENDER @ quat_matrix(b["rotation"])
            worst_angle = max(worst_angle, angle(np.array(got["rotation"]), want))
            n += 1
    assert n == len(placed) and n > 0
    print(f"Blender {kind}: {Path(args[0]).name}: {n} bones, worst head {worst * 1000:.6f} mm ({worst_bone}), worst orientation {worst_angle:.6f}°")
    assert worst <= 1e-4, f"{worst_bone} is {worst * 1000:.4f} mm from skelport's head"
    assert worst_angle <= 0.01
    # Skinned meshes: every vertex, one group per joint, the weighted vertices skelport counts.
    skins = [s for s in rep["skins"] if s["vertex_count"]]
    if kind in ("g4tf", "g4b", "mpfb", "sl"):
        assert skins and len(result["meshes"]) >= len(skins)
    for m, s in zip(result["meshes"], skins):
        assert (m["vertices"], m["groups"], m["weighted"]) == (s["vertex_count"], len(s["joints"]), s["weighted_vertices"])
