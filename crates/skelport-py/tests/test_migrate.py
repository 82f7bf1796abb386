"""`skelport.migrate` on a real Dask `LocalCluster` of two worker processes: 2,000 files generated
from the corpus (every format skelport reads there, MPFB folders with their weights among them)
and a dozen bad ones, checked against the command line's batch of the same files (its `--json`
rows and its outputs, byte for byte); then a run during which one worker is killed and which is
itself interrupted, and a re-run that converts only what is missing.

The throughput of the cluster, the command line's batch and the Python batch on the same files
is printed (not asserted: speed is measured, not tested); docs/performance.md records it.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

import skelport
from conftest import IN_CI, ROOT
from skelport import migration

# 2,000 in CI; SKELPORT_MIGRATE_FILES sets fewer for a quick run against a debug build.
TOTAL = int(os.environ.get("SKELPORT_MIGRATE_FILES", "2000"))
TO = "glb"


def need(module: str):
    try:
        return __import__(module)
    except ImportError:
        if IN_CI:
            pytest.fail(f"{module} is not installed (crates/skelport-py/requirements-test.txt)", pytrace=False)
        pytest.skip(f"{module} is not installed")


# Corpus files converted as they are (self-contained: glTF with embedded buffers), by format.
CORPUS_SEEDS = [
    "gltf/Fox/Fox.glb",
    "gltf/SimpleSkin/SimpleSkin.gltf",
    "gltf/webxr-generic-hand/left.glb",
    "realworld/assimp_quad_skin.glb",
    "realworld/khr_RiggedSimple.glb",
    "realworld/assimp_simple_skin.gltf",
    "realworld/threejs_SimpleSkinning.gltf",
    "realworld/vrmaddon_b52_basic_armature_vrm1.vrm",
    "realworld/univrm_EmissionMigration_v0.107.0.vrm",
    "sl/ruth2/Ruth2v4Eyelashes.dae",
    "realworld/assimp_box_nested_animation.dae",
    "fbx/ufbx_maya_game_sausage_7500_ascii.fbx",
    "fbx/ufbx_blender_279_sausage_7400_binary.fbx",
    "makehuman1/data/rigs/default.mhskel",
]
# Written from corpus files by the command line, for the formats the corpus has no small file of.
GENERATED = [
    ("gltf/Fox/Fox.glb", "anvil", "fox-anvil.xml"),
    ("realworld/khr_RiggedSimple.glb", "anvil", "riggedsimple-anvil.xml"),
    ("realworld/khr_RiggedSimple.glb", "anvil-schema", "riggedsimple-schema.xml"),
    ("gltf/Fox/Fox.glb", "g4tf", "fox-g4tf.g4tf"),
    ("realworld/khr_RiggedSimple.glb", "g4b", "riggedsimple-g4b.g4b"),
    ("gltf/Fox/Fox.glb", "ir-json", "fox-ir.ir.json"),
    ("realworld/assimp_quad_skin.glb", "vrm", "quad-vrm.vrm"),
    ("realworld/khr_RiggedSimple.glb", "dae", "riggedsimple-dae.dae"),
]
MPFB_RIGS = ["game_engine", "openpose", "cmu_mb"]  # each with the weights beside it
MPFB_FOLDERS = 2


def make_inputs(corpus: Path, cli, root: Path) -> "tuple[list[str], list[str]]":
    """2,000 good files from the corpus and the bad ones, as paths in the order a user lists."""
    seeds_dir = root / "seeds"
    seeds_dir.mkdir(parents=True)
    seeds = [corpus / s for s in CORPUS_SEEDS if (corpus / s).is_file()]
    for src, fmt, name in GENERATED:
        out = seeds_dir / name
        cli.run("convert", corpus / src, "--to", fmt, "-o", out, "--allow-loss", check=False)
        if out.is_file():
            seeds.append(out)
    # Keep the seeds the command line converts: the good files are copies of them.
    probe = cli.json("convert", *seeds, "--to", TO, "-o", root / "probe")
    good_seeds = [Path(r["input"]) for r in probe["results"] if r["ok"]]
    print(f"\nseeds: {len(good_seeds)} of {len(seeds)} convert on the command line; formats: "
          f"{sorted(Counter(r['from'] for r in probe['results'] if r['ok']).items())}")

    good: "list[str]" = []
    # MPFB folders as MPFB has them: rigs/standard/rig.<name>.json beside weights.<name>.json,
    # the base mesh in 3dobjs/ (links to the corpus's files: never copied).
    for k in range(MPFB_FOLDERS):
        data = root / "in" / f"mpfb{k}"
        (data / "rigs" / "standard").mkdir(parents=True)
        (data / "3dobjs").mkdir()
        (data / "3dobjs" / "base.obj").symlink_to(corpus / "mpfb" / "3dobjs" / "base.obj")
        for rig in MPFB_RIGS:
            name = f"{rig}{k}"
            r = data / "rigs" / "standard" / f"rig.{name}.json"
            r.write_bytes((corpus / "mpfb" / "rigs" / "standard" / f"rig.{rig}.json").read_bytes())
            (data / "rigs" / "standard" / f"weights.{name}.json").symlink_to(corpus / "mpfb" / "rigs" / "standard" / f"weights.{rig}.json")
            good.append(str(r))
            # The weights are listed too, as a glob over the folder lists them: joined, not inputs.
            good.append(str(r.with_name(f"weights.{name}.json")))
    n_rigs = MPFB_FOLDERS * len(MPFB_RIGS)
    copies = root / "in" / "copies"
    copies.mkdir(parents=True)
    # A MakeHuman 1.x skeleton is placed on the base mesh of the data folder it sits in, with the
    # weights file it names beside it: its copies go into such a folder (links to the corpus).
    mh_rigs = root / "in" / "makehuman1" / "data" / "rigs"
    mh_rigs.mkdir(parents=True)
    (mh_rigs.parent / "3dobjs").mkdir()
    (mh_rigs.parent / "3dobjs" / "base.obj").symlink_to(corpus / "makehuman1" / "data" / "3dobjs" / "base.obj")
    (mh_rigs / "default_weights.mhw").symlink_to(corpus / "makehuman1" / "data" / "rigs" / "default_weights.mhw")
    k = 0
    while n_rigs + k < TOTAL:
        s = good_seeds[k % len(good_seeds)]
        name = s.name
        p = (mh_rigs if s.suffix == ".mhskel" else copies) / f"{k:04d}-{name}"
        p.write_bytes(s.read_bytes())
        good.append(str(p))
        k += 1

    bad_dir = root / "in" / "bad"
    bad_dir.mkdir()
    fox = (corpus / "gltf/Fox/Fox.glb").read_bytes()
    ruth = (corpus / "sl/ruth2/Ruth2v4Eyelashes.dae").read_bytes()
    bad = {
        "truncated-glb.glb": fox[:100],
        "garbage-glb.glb": bytes(range(256)) * 4,
        "empty-gltf.gltf": b"",
        "broken.ir.json": b'{"skelport_ir": 1, "skeletons": [',
        "truncated-dae.dae": ruth[: len(ruth) // 2],
        "cut.xml": (seeds_dir / "riggedsimple-schema.xml").read_bytes()[:300],
        "truncated-g4b.g4b": (seeds_dir / "riggedsimple-g4b.g4b").read_bytes()[:40],
        "text.vrm": b"this is no VRM",
        "unknown.xyz": b"what is this",
        "weights.lonely.json": b'{"copyright": "none", "weights": {"root": [[0, 1.0]]}}',
        "rig.broken.json": b'{"root": {"head": [0, 0',
    }
    bad_paths = []
    for name, data in bad.items():
        (bad_dir / name).write_bytes(data)
        bad_paths.append(str(bad_dir / name))
    mesh = bad_dir / "base.obj"
    mesh.symlink_to(corpus / "mpfb" / "3dobjs" / "base.obj")
    bad_paths.append(str(mesh))
    bad_paths.append(str(bad_dir / "missing.glb"))
    # Mixed in, as a real library has them.
    inputs = list(good)
    for i, b in enumerate(bad_paths):
        inputs.insert(1 + i * (len(inputs) // len(bad_paths)), b)
    return inputs, bad_paths


def cli_batch(cli, inputs: "list[str]", out: Path) -> "tuple[dict, float]":
    start = time.perf_counter()
    p = subprocess.run([str(cli.path), "convert", *inputs, "--to", TO, "-o", f"{out}/", "--json"], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    assert p.returncode == 1, p.stderr  # the bad files fail
    return json.loads(p.stdout), seconds


CLI_FIELDS = ("input", "from", "to", "ok", "skipped", "error", "code", "diagnostics")


def same_as_cli(rows, cli_report, out: Path, cli_out: Path) -> None:
    """Each row has the command line's values for its input (paths of outputs aside)."""
    by_input = {r["input"]: r for r in cli_report["results"]}
    assert sorted(by_input) == sorted(r["input"] for r in rows)
    for r in rows:
        c = json.loads(json.dumps(by_input[r["input"]]).replace(str(cli_out), str(out)))
        assert {k: r[k] for k in CLI_FIELDS} == {k: c.get(k) for k in CLI_FIELDS}, r["input"]
        assert r["output"] == c["output"]


def assert_outputs_equal(out: Path, cli_out: Path) -> int:
    cli_files = sorted(p.name for p in cli_out.iterdir())
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith((".jsonl", ".parquet"))) == cli_files
    for name in cli_files:
        assert (out / name).read_bytes() == (cli_out / name).read_bytes(), name
    return len(cli_files)


def temporaries(out: Path) -> "list[str]":
    return [p.name for p in out.iterdir() if p.name.startswith(".skelport-")]


def validate_rows(rows) -> None:
    jsonschema = need("jsonschema")
    schema = json.loads((ROOT / "schemas" / "migrate-manifest.schema.json").read_text())
    convert = json.loads((ROOT / "schemas" / "convert-report.schema.json").read_text())
    # The manifest's fields are the command line's batch rows' fields, and the migration's own.
    assert set(convert["$defs"]["result"]["properties"]) <= set(schema["properties"])
    assert tuple(schema["properties"]) == migration.FIELDS
    v = jsonschema.Draft202012Validator(schema)
    for r in rows:
        errors = list(v.iter_errors(r))
        assert not errors, (r["input"], [e.message for e in errors])


@pytest.fixture(scope="module")
def library(corpus, cli, tmp_path_factory):
    root = tmp_path_factory.mktemp("migrate")
    inputs, bad = make_inputs(corpus, cli, root)
    report, seconds = cli_batch(cli, inputs, root / "out-cli")
    return {"root": root, "inputs": inputs, "bad": bad, "cli": report, "cli_seconds": seconds, "cli_out": root / "out-cli"}


@pytest.fixture(scope="module")
def client():
    need("distributed")
    need("pyarrow")
    from distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    c = Client(cluster)
    print(f"\nLocalCluster of 2 worker processes up in {time.perf_counter() - start:.2f} s")
    yield c
    c.close()
    cluster.close()


def test_import_needs_no_dask():
    code = "import sys, skelport; assert skelport.migrate; print(sorted(m for m in ('dask', 'distributed', 'pyarrow') if m in sys.modules))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_migration_is_the_command_lines_batch(library, client, cli):
    inputs, report = library["inputs"], library["cli"]
    good = {r["input"] for r in report["results"] if r["ok"]}
    formats = Counter(r["from"] for r in report["results"] if r["ok"])
    print(f"inputs: {len(inputs)}; the command line converts {len(good)} and fails {report['failed']}; read as {sorted(formats.items())}")
    # Every format skelport reads is among the inputs (MPFB rigs joined to their weights).
    assert {"anvil", "anvil-schema", "g4tf", "g4b", "gltf", "glb", "vrm", "dae", "mpfb", "ir-json"} <= set(formats)
    assert report["converted"] == len(good) == TOTAL
    bad = [r for r in report["results"] if not r["ok"]]
    assert sorted(r["input"] for r in bad) == sorted(library["bad"])

    out = library["root"] / "out-dask"
    manifest = library["root"] / "manifest.parquet"
    start = time.perf_counter()
    m = skelport.migrate(inputs, TO, out, client=client, manifest=manifest, progress=False)
    dask_seconds = time.perf_counter() - start
    assert (m.total, m.converted, m.skipped, m.failed) == (report["total"], report["converted"], 0, report["failed"])
    same_as_cli(m.rows, report, out, library["cli_out"])
    files = assert_outputs_equal(out, library["cli_out"])
    assert temporaries(out) == []
    assert migration.read_manifest(manifest) == m.rows
    validate_rows(m.rows)
    assert Counter(r["worker"] for r in m.rows if r["worker"]).keys() == client.nthreads().keys()
    rigs = [r for r in m.rows if r["from"] == "mpfb" and r["ok"]]
    assert len(rigs) == MPFB_FOLDERS * len(MPFB_RIGS) and all(r["weights"] and r["bytes_in"] > 1_000_000 for r in rigs)

    # Python's batch on the same inputs, into another folder: the command line's files, MPFB
    # rigs joined to their weights alike.
    start = time.perf_counter()
    py = skelport.convert(inputs, library["root"] / "out-py", to=TO)
    py_seconds = time.perf_counter() - start
    assert sum(f.ok for f in py.files) == report["converted"]
    assert_outputs_equal(library["root"] / "out-py", library["cli_out"])
    n = len(inputs)
    print(f"{n} inputs, {files} files written: command line batch {library['cli_seconds']:.2f} s ({n / library['cli_seconds']:.0f} files/s), "
          f"Python batch {py_seconds:.2f} s ({n / py_seconds:.0f} files/s; {sum(f.ok for f in py.files)} ok), "
          f"Dask LocalCluster (2 processes) {dask_seconds:.2f} s ({n / dask_seconds:.0f} files/s)")
    print("manifest, first rows:")
    for r in m.rows[:3]:
        print(json.dumps(r))
    print(json.dumps(next(r for r in m.rows if r["status"] == "failed")))


class Crash(Exception):
    """The migration's own process stopping mid-run (as Ctrl-C would)."""


def test_kill_a_worker_interrupt_and_resume(library, client):
    inputs, report = library["inputs"], library["cli"]
    good = {r["input"] for r in report["results"] if r["ok"]}
    bad = {r["input"]: r for r in report["results"] if not r["ok"]}
    out = library["root"] / "out-resume"
    m1, m2 = library["root"] / "run1.jsonl", library["root"] / "run2.jsonl"
    events = {}

    def progress(p):
        # The kill and the interruption come in one call. Were the interruption to wait for more
        # rows, the test would hang on scheduling: the client's gather of a result lost with the
        # killed worker blocks until it is computed again, and meanwhile the other worker may
        # convert every file left, leaving none "interrupted before it started" (it did, once,
        # on a loaded CI machine).
        if p["done"] >= p["total"] // 10:
            pids = client.run(os.getpid)
            addr, pid = sorted(pids.items())[0]
            os.kill(pid, signal.SIGKILL)
            events["killed"] = (addr, pid, p["done"])
            raise Crash()

    with pytest.raises(Crash):
        skelport.migrate(inputs, TO, out, client=client, manifest=m1, progress=progress, chunk_size=40)
    run1 = migration.read_manifest(m1)
    assert sorted(r["input"] for r in run1) == sorted(r["input"] for r in report["results"])  # a row for every input
    conv1 = {r["input"] for r in run1 if r["status"] == "converted"}
    interrupted = [r for r in run1 if r["error"] == "interrupted before it started"]
    assert conv1 and interrupted and conv1 <= good
    assert all(r["code"] == bad[r["input"]]["code"] for r in run1 if r["input"] in bad and r["error"] != "interrupted before it started")
    assert temporaries(out) == []

    # The nanny restarts the killed worker (on a loaded machine it may take a while: the re-run
    # goes on with the workers there are); the re-run converts only what is missing.
    client.wait_for_workers(1, timeout=120)
    m = skelport.migrate(inputs, TO, out, client=client, manifest=m2, progress=False)
    run2 = migration.read_manifest(m2)
    assert run2 == m.rows
    conv2 = {r["input"] for r in run2 if r["status"] == "converted"}
    skipped2 = {r["input"] for r in run2 if r["status"] == "skipped"}
    assert conv1.isdisjoint(conv2) and conv1 | conv2 == good  # every good input converted once
    assert skipped2 == conv1
    for r in run2:
        if r["input"] in bad:
            # An output clash names the output folder: this run's, not the command line's.
            want = bad[r["input"]]["error"].replace(str(library["root"] / "out-cli"), str(out))
            assert (r["status"], r["code"], r["error"]) == ("failed", bad[r["input"]]["code"], want)
    assert_outputs_equal(out, library["cli_out"])
    assert temporaries(out) == []
    validate_rows(run1 + run2)
    print(f"\nkill and resume: worker {events['killed'][0]} (pid {events['killed'][1]}) killed after {events['killed'][2]} rows; "
          f"and the run interrupted then; run 1: {len(conv1)} converted, {len(interrupted)} interrupted before they started, "
          f"{sum(r['status'] == 'failed' for r in run1) - len(interrupted)} failed (bad files); "
          f"run 2: {len(conv2)} converted, {len(skipped2)} skipped, {m.failed} failed (the bad files); {len(good)} good files converted once")


def test_format_names_the_reader_as_in_load_and_convert(corpus, tmp_path):
    """The advice a failure gives (`name it with format=`) works here too: `format` is `from_`."""
    with pytest.raises(TypeError, match="give one"):
        skelport.migrate([corpus / "gltf/Fox/Fox.glb"], "anvil", tmp_path / "out", format="glb", from_="gltf")


def test_per_file_timeout_writes_nothing(corpus, tmp_path):
    """A file not converted within the timeout is a row (code `timeout`), and its conversion,
    running on, writes nothing."""
    big = corpus / "sl" / "linden-lab" / "female_2016_08_05.dae"
    p = migration.plan([big], TO, tmp_path / "out")
    [row] = migration.run_jobs(p.jobs, {"to": p.to, "timeout": 1e-6})
    assert (row["status"], row["code"], row["output"]) == ("failed", "timeout", str(tmp_path / "out" / "female_2016_08_05.glb"))
    assert "timeout" in row["error"] and row["error"].startswith(str(big))
    # The abandoned conversion ends (a few tenths of a second) without saving.
    [again] = migration.run_jobs(p.jobs, {"to": p.to, "timeout": 60})
    assert again["status"] == "converted"
    time.sleep(0.5)
    assert sorted(x.name for x in (tmp_path / "out").iterdir()) == ["female_2016_08_05.glb"]


def test_skip_rules(corpus, tmp_path):
    """Up to date: an output newer than its input and older than the run. A newer input, or an
    output written during this run (by an attempt whose worker died), is converted again."""
    src = tmp_path / "fox.glb"
    src.write_bytes((corpus / "gltf/Fox/Fox.glb").read_bytes())
    # The input is an hour old: written in the same clock tick as its output, the two would
    # have the same mtime, and an output no newer than its input is converted again.
    hour_ago = time.time_ns() - 3_600_000_000_000
    os.utime(src, ns=(hour_ago, hour_ago))
    p = migration.plan([src], "anvil", tmp_path / "out")
    opts = {"to": p.to}
    assert migration.run_jobs(p.jobs, opts)[0]["status"] == "converted"
    since = time.time_ns() + 1_000_000_000
    assert migration.run_jobs(p.jobs, opts, since_ns=since)[0]["status"] == "skipped"
    assert migration.run_jobs(p.jobs, opts, since_ns=0)[0]["status"] == "converted"
    os.utime(src, ns=(since, since))
    assert migration.run_jobs(p.jobs, opts, since_ns=since + 1)[0]["status"] == "converted"
    assert migration.run_jobs(p.jobs, {**opts, "skip_existing": False}, since_ns=since * 2)[0]["status"] == "converted"
