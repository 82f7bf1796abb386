"""A 1,000-file batch generated in a temporary folder: the demo sample in four formats under
1,000 names (and a few bad files), converted into one folder in one call on every core with
the GIL released; failures are reported per file and the rest goes on; a second run with
skip_existing converts nothing."""

import _thread
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import skelport
from conftest import DEMO

FORMATS = [("glb", "glb"), ("g4b", "g4b"), ("anvil", "xml"), ("ir-json", "ir.json")]


def make_inputs(folder: Path) -> "tuple[list[Path], list[Path], list[Path]]":
    """996 good files (the sample in 4 formats), 2 broken ones and 2 whose stems collide."""
    folder.mkdir()
    src = skelport.load(DEMO / "sample.ir.json")
    data = {to: src.dumps(to) for to, _ in FORMATS}
    good = []
    for k in range(996):
        to, ext = FORMATS[k % len(FORMATS)]
        p = folder / f"rig{k:04d}.{ext}"
        p.write_bytes(data[to])
        good.append(p)
    broken = [folder / "broken1.glb", folder / "broken2.ir.json"]
    broken[0].write_bytes(data["glb"][:200])
    broken[1].write_bytes(b'{"skelport_ir": 1, "skeletons": [')
    (folder / "a").mkdir()
    (folder / "b").mkdir()
    twins = [folder / "a" / "twin.glb", folder / "b" / "twin.g4b"]
    twins[0].write_bytes(data["glb"])
    twins[1].write_bytes(data["g4b"])
    return good, broken, twins


def test_thousand_file_batch(tmp_path):
    good, broken, twins = make_inputs(tmp_path / "in")
    inputs = good[:500] + broken + twins + good[500:]
    out = tmp_path / "out"

    # A Python thread notes the time while the batch runs. It can only run while the call has
    # let go of the GIL; holding it, the thread would run only once the call had returned.
    stamps, stop = [], threading.Event()

    def note_time():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=note_time)
    t.start()
    start = time.perf_counter()
    report = skelport.convert(inputs, out, to="glb", max_influences=4)
    end = time.perf_counter()
    stop.set()
    t.join()
    first_half = [s for s in stamps if start < s < (start + end) / 2]
    assert len(first_half) > 10, f"{len(first_half)} notes in the first half of the batch: the GIL was held"

    assert len(report.files) == 1000 and not report.ok
    assert [f.input for f in report.files] == [str(p) for p in inputs]
    failed = [f for f in report.files if not f.ok]
    assert [f.input for f in failed] == [str(p) for p in broken + twins]
    assert [e.code for e in report.errors] == ["read", "read", "output", "output"]
    assert all(isinstance(e, skelport.Error) for e in report.errors)
    assert report.errors[0].path == str(broken[0]) and report.errors[1].place is not None
    assert str(twins[1]) in str(report.errors[2]) and str(twins[0]) in str(report.errors[3])
    assert failed[2].output is None and not (out / "twin.glb").exists()
    # Every good file written once, as <stem>.glb, and only those.
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{p.name.split('.')[0]}.glb" for p in good)
    assert report.outputs == [f.output for f in report.files if f.ok]
    # The AnvilToolkit inputs had no skin to carry: each reported its loss, on its own file.
    anvil = [f for f in report.files if f.from_format == "anvil"]
    assert len(anvil) == 249 and all(f.to_format == "glb" for f in anvil)
    assert all(d.path == f.input for f in report.files for d in f.diagnostics)
    # A batch output is the bytes a single conversion of the same file writes.
    single = tmp_path / "single.glb"
    skelport.convert(good[1], single, max_influences=4)
    assert (out / "rig0001.glb").read_bytes() == single.read_bytes()
    for k in range(4):  # one of each format, bone by bone (AnvilToolkit orders bones its own way)
        a, b = skelport.load(good[k]).skeletons[0], skelport.load(out / f"rig{k:04d}.glb").skeletons[0]
        assert sorted(a.bone_names) == sorted(b.bone_names)
        order = [b.index(n) for n in a.bone_names]
        np.testing.assert_allclose(b.heads[order], a.heads, atol=1e-6)

    # Resumed: everything written is skipped, the failures fail again.
    again = skelport.convert(inputs, out, to="glb", skip_existing=True)
    assert sum(f.skipped for f in again.files) == 996 and len(again.errors) == 4
    assert again.outputs == []


def test_one_input_into_a_folder_is_a_batch(tmp_path):
    out = tmp_path / "folder"
    out.mkdir()
    report = skelport.convert(DEMO / "sample.glb", out, to="g4tf")
    assert report.outputs == [str(out / "sample.g4tf")]
    # A list is always a batch: a failure is in the report, not raised.
    report = skelport.convert([tmp_path / "nope.glb"], tmp_path / "new", to="glb")
    assert not report.ok and report.errors[0].code == "input"


def test_a_folder_is_a_batch_of_the_files_in_it(tmp_path):
    """As on the command line: the files a reader claims (no hidden file, no subfolder, no
    other extension), sorted; an MPFB weights file with no rig beside it is refused, saying
    where it goes."""
    folder = tmp_path / "in"
    folder.mkdir()
    for src, f in (("sample.glb", "a.glb"), ("sample.ir.json", "b.ir.json"), ("weights.sample.json", "weights.sample.json")):
        (folder / f).write_bytes((DEMO / src).read_bytes())
    (folder / ".hidden.glb").write_bytes(b"not read")
    (folder / "notes.txt").write_text("not read")
    (folder / "sub").mkdir()
    (folder / "sub" / "deeper.glb").write_bytes((DEMO / "sample.glb").read_bytes())
    out = tmp_path / "out"
    report = skelport.convert(folder, out, to="g4tf")
    assert [f.input for f in report.files] == [str(folder / f) for f in ("a.glb", "b.ir.json", "weights.sample.json")]
    assert [f.ok for f in report.files] == [True, True, False]
    assert [f.output for f in report.files[:2]] == [str(out / "a.g4tf"), str(out / "b.g4tf")]
    assert all(Path(o).is_file() for f in report.files[:2] for o in f.outputs)
    (weights,) = report.errors
    assert weights.code == "input.kind" and "pass it with weights=" in str(weights) and "--" not in str(weights)
    # Resumed: what exists is skipped.
    again = skelport.convert(folder, out, to="g4tf", skip_existing=True)
    assert [f.skipped for f in again.files if f.ok] == [True] * len([f for f in again.files if f.ok])

    # A folder with nothing to read, and one output file for a folder: errors that say so.
    (tmp_path / "empty").mkdir()
    with pytest.raises(skelport.Error, match="the folder holds no file skelport reads"):
        skelport.convert(tmp_path / "empty", out, to="glb")
    with pytest.raises(skelport.Error, match="needs to= to name the output format"):
        skelport.convert(folder, tmp_path / "one.glb")
    # load reads one file: a folder is refused, naming what converts it.
    with pytest.raises(skelport.Error, match=r"is a folder.*skelport\.convert\(folder, out_dir, to=") as e:
        skelport.load(folder)
    assert e.value.code == "input"


def test_an_mpfb_folder_converts_as_the_command_line_converts_it(cli, corpus, tmp_path):
    """corpus/mpfb/rigs/standard: each rig joined to the weights beside it, the bytes the
    command line's folder batch writes."""
    folder = corpus / "mpfb" / "rigs" / "standard"
    report = skelport.convert(folder, tmp_path / "py", to="glb")
    cli.run("convert", folder, "--to", "glb", "-o", tmp_path / "cli")
    rigs = sorted(p.name for p in folder.glob("rig.*.json"))
    assert [Path(f.input).name for f in report.files] == rigs, [f.input for f in report.files]
    assert report.ok, [str(e) for e in report.errors]
    written = sorted(p.name for p in (tmp_path / "py").iterdir())
    assert written == sorted(p.name for p in (tmp_path / "cli").iterdir()) and len(written) == len(rigs)
    for name in written:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    # A list of rigs, and one rig alone, are joined to the weights beside them too.
    rig = folder / "rig.game_engine.json"
    listed = skelport.convert([rig, folder / "rig.cmu_mb.json"], tmp_path / "listed", to="glb")
    assert listed.ok and all(any(d.code == "mpfb.base-mesh" for d in f.diagnostics) for f in listed.files)
    for name in ("game_engine.glb", "cmu_mb.glb"):
        assert (tmp_path / "listed" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    alone = skelport.convert(rig, tmp_path / "alone.glb")
    cli.run("convert", rig, "-o", tmp_path / "alone-cli.glb")
    assert alone.ok and (tmp_path / "alone.glb").read_bytes() == (tmp_path / "alone-cli.glb").read_bytes()
    assert skelport.load(tmp_path / "alone.glb").skins, "the weights beside the rig were joined"


def test_ctrl_c_stops_a_batch_between_files(tmp_path):
    """KeyboardInterrupt while a batch runs: the files in flight finish their all-or-nothing
    save, no new one starts, the interrupt reaches Python; skip_existing resumes it."""
    good, _, _ = make_inputs(tmp_path / "in")
    # Four times the files, so that the watcher sees the batch running even on a busy machine.
    inputs = list(good)
    for k in range(len(good), 4 * len(good)):
        p = good[0].parent / f"rig{k:04d}{''.join(good[k % len(good)].suffixes)}"
        p.write_bytes(good[k % len(good)].read_bytes())
        inputs.append(p)
    # Python installs its Ctrl-C handler only when SIGINT is not ignored at its start, and a
    # shell starts background jobs with SIGINT ignored (interrupt_main then does nothing):
    # install it, as an interactive session has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        out = run_until_interrupted(inputs, tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)
    written = sorted(out.iterdir())
    print(f"interrupted after {len(written)} of {len(inputs)} files")
    assert 20 <= len(written) < len(inputs)
    # Every file there is whole (temporaries are renamed into place or removed).
    assert all(p.suffix == ".glb" and not p.name.startswith(".") for p in written)
    for p in written:
        assert len(skelport.load(p).skeletons[0]) == 23
    resumed = skelport.convert(inputs, out, to="glb", skip_existing=True)
    assert resumed.ok and sum(f.skipped for f in resumed.files) == len(written)
    assert len(list(out.iterdir())) == len(inputs)


def run_until_interrupted(inputs, tmp_path):
    """Convert `inputs` into a fresh folder while a thread interrupts the main thread once 20
    outputs exist; the folder of the batch that was interrupted. A machine busy elsewhere can
    starve the thread until the batch is over: then the batch runs again into a fresh folder
    (at most three times), so the test passes only on a run that was interrupted."""
    for attempt in range(3):
        out, done = tmp_path / f"out{attempt}", threading.Event()

        def interrupt_when_started(out=out, done=done):
            while not done.is_set():
                if out.is_dir() and len(list(out.iterdir())) >= 20:
                    _thread.interrupt_main()
                    return
                time.sleep(0.001)

        t = threading.Thread(target=interrupt_when_started)
        t.start()
        try:
            skelport.convert(inputs, out, to="glb")
        except KeyboardInterrupt:
            t.join()
            return out
        done.set()
        try:  # an interrupt the thread sent as the batch ended lands here, not later
            t.join()
            time.sleep(0.05)
        except KeyboardInterrupt:
            pass
        print(f"attempt {attempt + 1}: the batch finished before the interrupt")
    raise AssertionError("three batches finished before the interrupt: nothing was tested")
