"""Errors: every file of the malformed-input suite (testdata/bad/) fails with exactly the
command line's message (its `.expected` snapshot, its flags in Python's words) as
`skelport.Error`, with the file at fault and the place in it; wrong arguments are Python's TypeError/ValueError; random bytes never
raise anything but `skelport.Error`."""

import random
import re
from pathlib import Path

import pytest

import skelport
from conftest import DEMO, ROOT
from helpers import in_python_words

BAD = ROOT / "testdata" / "bad"
ACCEPTED = {
    line.strip() for line in (BAD / "KNOWN_ACCEPTED.txt").read_text().splitlines() if line.strip() and not line.startswith("#")
}
CASES = sorted(p for p in BAD.glob("*/*") if not p.name.endswith(".expected"))
# Suites of files read with a main file (testdata/bad/<suite>/), as tests/bad_inputs.rs feeds them.
# Each is joined to the demo file of the format that reads it.
COMPANIONS = {
    "mpfb-weights": ("testdata/demo/rig.sample.json", "weights"),
    "obj": ("testdata/demo/rig.sample.json", "mesh"),
    "mhw": ("testdata/demo/sample.mhskel", "weights"),
}


def convert_args(rel: str) -> dict:
    suite = rel.split("/")[2]
    if suite in COMPANIONS:
        main, keyword = COMPANIONS[suite]
        return {"inputs": main, keyword: rel}
    return {"inputs": rel, "from_": suite}


def test_the_suite_is_there():
    assert len(CASES) > 500


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_malformed_file_fails_with_the_command_lines_message(path, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    rel = path.relative_to(ROOT).as_posix()
    args = convert_args(rel)
    out = tmp_path / "out.ir.json"
    if rel in ACCEPTED:
        skelport.convert(output=out, **args)  # a known tolerance: read, and no crash
        return
    with pytest.raises(skelport.Error) as info:
        skelport.convert(output=out, **args)
    e = info.value
    expected = Path(f"{path}.expected").read_text()
    message = in_python_words(expected[expected.index("error: ") + len("error: "):].rstrip("\n"))
    assert str(e) == message
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert e.code in {"read", "invalid", "input"}, e.code
    # The file at fault is the one the reader names: this file, whether it was the input or
    # the weights or mesh read with it.
    if e.code == "read":
        assert e.path == rel
        # The place the message gives after the file's name.
        # The input is named once, before "cannot read as" (with its place: `rel:6:5:`); a
        # mesh or weights file read with it is named after.
        head, rest = message.split(" cannot read as ", 1)
        detail = rest.split(": ", 1)[1]
        after = head[:-1] + ": " + detail if head.startswith(rel) else detail
        assert after.startswith(rel)
        m = re.match(re.escape(rel) + r"(?: \(([^)]*)\))?:(\d+)(?::(\d+))?: ", after)
        if m:
            place = f"line {m[2]}, column {m[3]}" if m[3] else f"line {m[2]}"
            assert e.place == (f"{m[1]}, {place}" if m[1] else place)
        elif re.match(re.escape(rel) + r": (at |/|byte |\$|JSON chunk, |[A-Za-z]+\[)", after):
            assert e.place, message
    elif e.code == "invalid":
        assert e.path == args["inputs"] and e.place and e.place in message


def test_errors_carry_code_path_place_and_diagnostics(tmp_path):
    with pytest.raises(skelport.Error) as e:
        skelport.load(tmp_path / "missing.glb")
    assert e.value.code == "input" and e.value.path == str(tmp_path / "missing.glb") and e.value.place is None
    assert "missing.glb" in str(e.value)

    with pytest.raises(skelport.Error) as e:
        skelport.load(b'{"bones": {"a": 3}}', name="rig.json", format="mpfb")
    assert (e.value.code, e.value.path, e.value.place) == ("read", "rig.json", "$.bones.a")

    with pytest.raises(skelport.Error) as e:
        skelport.load(DEMO / "rig.sample.json", weights=b'{"weights": {"pelvis": [[0, "x"]]}}')
    assert e.value.code == "read" and e.value.path == "<weights>" and e.value.place.startswith("line 1, column ")

    with pytest.raises(skelport.Error) as e:
        skelport.load(b"\x00\x01 nothing", name="mystery")
    assert e.value.code == "format.undetected" and "mystery" in str(e.value)

    with pytest.raises(skelport.Error) as e:
        skelport.load(DEMO / "sample.glb", format="fbz")
    assert e.value.code == "format.unknown" and "glb" in str(e.value)

    with pytest.raises(skelport.Error) as e:
        skelport.convert(DEMO / "sample.glb", tmp_path / "x.glb", map="no-such-map")
    assert e.value.code == "map" and "mpfb-game_engine-to-sl" in str(e.value)

    with pytest.raises(skelport.Error) as e:
        skelport.convert(DEMO / "sample.glb", tmp_path / "out.unknown")
    assert e.value.code == "format.undetected" and "to=" in str(e.value)

    with pytest.raises(skelport.Error) as e:
        skelport.convert(DEMO / "sample.glb", tmp_path / "x.xml", to="anvil", strict=True)
    assert e.value.code == "strict" and [d.code for d in e.value.diagnostics if d.severity == "loss"] == ["anvil.geometry"]
    assert not (tmp_path / "x.xml").exists()

    with pytest.raises(skelport.Error) as e:
        skelport.convert(DEMO / "sample.glb", tmp_path / "no-such-dir" / "deeper" / "x.glb")
    assert e.value.code == "output"

    # Python code can raise it too; the attributes are there, empty.
    e = skelport.Error("mine")
    assert (e.code, e.path, e.place, e.fault, tuple(e.diagnostics)) == (None, None, None, None, ())


def test_messages_name_python_keywords_not_command_line_flags(tmp_path):
    """The advice is in Python's words: `format=`, `weights=`, `strict=True`; never a flag."""
    flag = re.compile(r"(?<![\w/.-])--[a-z]")
    with pytest.raises(skelport.Error) as e:
        skelport.load(b"garbage")
    assert e.value.code == "format.undetected" and "name it with format= (" in str(e.value)
    assert not flag.search(str(e.value)), str(e.value)

    with pytest.raises(skelport.Error) as e:
        skelport.load(DEMO / "weights.sample.json")
    assert e.value.code == "input.kind" and "pass it with weights=" in str(e.value)
    assert not flag.search(str(e.value)), str(e.value)

    with pytest.raises(skelport.Error) as e:
        skelport.convert(DEMO / "sample.glb", tmp_path / "x.xml", to="anvil", strict=True)
    assert e.value.code == "strict" and ": strict=True: 1 loss(es)" in str(e.value)
    assert not flag.search(str(e.value)), str(e.value)

    # A reader's fault comes with its kind, and the hint that fits it.
    with pytest.raises(skelport.Error) as e:
        skelport.load(b'{"asset": {"version": "2.0"}, "scenes": [{"nodes": [5]}], "nodes": [{}]}', name="r.gltf")
    assert (e.value.code, e.value.fault, e.value.place) == ("read", "reference", "/scenes/0/nodes/0")

    def no_flag(e: skelport.Error) -> None:
        for text in [str(e)] + [d.message for d in e.diagnostics]:
            assert not flag.search(text), text

    # A loss's own advice inside the strict error, and on its diagnostic: a .dae of a rig whose
    # joints are not SL joints says `map=`.
    with pytest.raises(skelport.Error) as e:
        skelport.convert(DEMO / "sample.glb", tmp_path / "x.dae", strict=True)
    assert e.value.code == "strict" and "dae-not-sl" in [d.code for d in e.value.diagnostics], str(e.value)
    assert "use map= (e.g. " in str(e.value)
    assert any("use map= (e.g. " in d.message for d in e.value.diagnostics if d.code == "dae-not-sl")
    no_flag(e.value)

    # Weights with no body to number: the skin-left-behind error says `mesh=` and `allow_loss=True`.
    (tmp_path / "alone").mkdir()
    for f in ("rig.sample.json", "weights.sample.json"):
        (tmp_path / "alone" / f).write_bytes((DEMO / f).read_bytes())
    with pytest.raises(skelport.Error) as e:
        skelport.convert(tmp_path / "alone" / "rig.sample.json", tmp_path / "x.glb", weights=tmp_path / "alone" / "weights.sample.json")
    assert e.value.code == "loss" and " with mesh= (" in str(e.value) and "pass allow_loss=True" in str(e.value), str(e.value)
    no_flag(e.value)

    # A map that does not exist: named as the keyword, with the closest map.
    with pytest.raises(skelport.Error) as e:
        skelport.convert(DEMO / "sample.glb", tmp_path / "x.dae", map="mixamo-to-s1")
    assert e.value.code == "map" and "map= mixamo-to-s1: no built-in map" in str(e.value), str(e.value)
    no_flag(e.value)

    # convert's advice names `format=`, and convert takes it (as `from_=`).
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"garbage")
    with pytest.raises(skelport.Error) as e:
        skelport.convert(garbage, tmp_path / "g.glb")
    assert e.value.code == "format.undetected" and "name it with format= (" in str(e.value)
    no_flag(e.value)
    for keyword in ("format", "from_"):
        with pytest.raises(skelport.Error) as e:
            skelport.convert(garbage, tmp_path / "g.glb", **{keyword: "glb"})
        assert (e.value.code, e.value.path) == ("read", str(garbage)), keyword
    with pytest.raises(TypeError, match="give one"):
        skelport.convert(garbage, tmp_path / "g.glb", format="glb", from_="gltf")


def test_wrong_arguments_are_python_errors(tmp_path):
    doc = skelport.load(DEMO / "sample.glb")
    with pytest.raises(TypeError, match="unexpected keyword argument 'embedd'.*embed"):
        doc.save(tmp_path / "x.gltf", embedd=True)
    with pytest.raises(TypeError, match="embed must be True or False"):
        doc.save(tmp_path / "x.gltf", embed="yes")
    with pytest.raises(TypeError, match="skip_existing"):
        doc.save(tmp_path / "x.gltf", skip_existing=True)  # a batch option, not save's
    with pytest.raises(ValueError, match="max must be at least 1"):
        doc.skins[0].influences(max=0)
    with pytest.raises(ValueError, match="max_influences must be at least 1"):
        doc.dumps("glb", max_influences=-2)
    with pytest.raises(TypeError, match="must be a path"):
        skelport.load(42)
    with pytest.raises(TypeError, match="must be a path"):
        doc.save(b"x.glb")
    with pytest.raises(IndexError):
        doc.skeletons[0].index("no such bone")


@pytest.mark.parametrize("fmt", [f.name for f in skelport.formats() if f.can_read])
def test_random_bytes_never_escape_as_anything_but_skelport_error(fmt):
    """Damaged demo files (bytes flipped, cut, spliced): reading and converting raise
    skelport.Error or succeed; nothing else (no PanicException, no crash)."""
    seeds = sorted(DEMO.glob("sample.*")) + [DEMO / "rig.sample.json"]
    rng = random.Random(fmt)
    for k in range(60):
        data = bytearray(rng.choice(seeds).read_bytes())
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            op = rng.randrange(3)
            if op == 0:
                data[i] = rng.randrange(256)
            elif op == 1:
                del data[i:i + rng.randint(1, 64)]
            else:
                data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        try:
            doc = skelport.load(bytes(data), format=fmt, name=f"damaged-{k}")
            doc.dumps("ir-json")
            for sk in doc.skeletons:
                sk.heads, sk.bind_matrices
            for skin in doc.skins:
                skin.influences(max=4)
        except skelport.Error:
            pass


@pytest.mark.parametrize("path", sorted(BAD.glob("ir-json/*.ir.json")), ids=lambda p: p.name)
def test_a_document_that_breaks_the_rules_can_be_looked_at(path, tmp_path):
    """ir-json reads any document of the right shape, broken rules too (influence rows that run
    backwards, face counts past the indices, a skin's mesh out of range): every array of it can be
    read, and writing it raises skelport.Error (code "invalid"); nothing else (no PanicException)."""
    try:
        doc = skelport.load(path)
    except skelport.Error:
        return  # not of the right shape: the reader refuses it
    for sk in doc.skeletons:
        sk.bone_names, sk.parents, sk.heads, sk.tails, sk.rotations, sk.bind_matrices
    for m in doc.meshes:
        m.positions, m.faces, m.face_sizes, m.normals, m.uvs
    for skin in doc.skins:
        skin.joint_names, skin.joint_bones, skin.bind_matrices, skin.vertex_count
        skin.influences(), skin.influences(max=4)
    skelport.validate(path, target="glb")
    valid = skelport.validate(path)["valid"]
    try:
        doc.save(tmp_path / "out.glb")
    except skelport.Error as e:
        assert e.code == "invalid", e
        assert list(tmp_path.iterdir()) == []
    # A retarget and the T-pose follow the document's parents and skins: a document that breaks
    # the rules is refused as invalid before them.
    changes = [
        lambda: doc.renamed("mpfb-game_engine-to-sl"),
        lambda: doc.renamed("humanoid", to="dae"),
        lambda: doc.dumps("glb", map="mpfb-game_engine-to-sl"),
        lambda: doc.dumps("glb", rest_pose="t-pose"),
        lambda: skelport.diff(path, path, map="mpfb-game_engine-to-sl"),
    ]
    for change in changes:
        try:
            change()
        except skelport.Error as e:
            assert valid or e.code == "invalid", e


def test_a_buffer_outside_the_folder_is_refused_unless_allowed(tmp_path):
    """A .gltf naming `../x.bin` reads nothing outside its folder (the error says how to allow it,
    in Python's words); `allow_outside_uris=True` reads it, for `load`, `validate` and `convert`."""
    inside = tmp_path / "models"
    inside.mkdir()
    (tmp_path / "sample.bin").write_bytes((DEMO / "sample.bin").read_bytes())
    text = (DEMO / "sample.gltf").read_text()
    assert '"uri": "sample.bin"' in text or '"uri":"sample.bin"' in text
    gltf = inside / "up.gltf"
    gltf.write_text(text.replace('"sample.bin"', '"../sample.bin"'))
    with pytest.raises(skelport.Error) as e:
        skelport.load(gltf)
    assert "allow_outside_uris=True" in str(e.value) and "--allow" not in str(e.value), str(e.value)
    doc = skelport.load(gltf, allow_outside_uris=True)
    assert len(doc.skeletons[0]) == len(skelport.load(DEMO / "sample.gltf").skeletons[0]) > 0
    assert skelport.validate(gltf, allow_outside_uris=True)["valid"]
    out = tmp_path / "out.glb"
    skelport.convert(gltf, out, allow_outside_uris=True)
    assert len(skelport.load(out).skeletons[0]) == len(doc.skeletons[0])
    with pytest.raises(skelport.Error):
        skelport.convert(gltf, tmp_path / "refused.glb")
    assert not (tmp_path / "refused.glb").exists()
