"""What a call costs: `skelport.load` + `.heads` of the MakeHuman body (game-engine rig, its
weights, the base mesh) and `convert` of that main path to .glb, timed in-process with timeit,
beside the command line's whole-process time for the same conversion (hyperfine when it is
installed, else a loop of subprocess runs). A measurement to read, not a test.

    python crates/skelport-py/bench/calls.py [CORPUS] [SKELPORT_CLI]
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

import skelport

root = Path(__file__).resolve().parents[3]
corpus = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SKELPORT_CORPUS", root.parent / "shared" / "corpus"))
cli = Path(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("SKELPORT_CLI", root / "target" / "release" / "skelport"))
rigs = corpus / "mpfb" / "rigs" / "standard"
rig, weights, mesh = rigs / "rig.game_engine.json", rigs / "weights.game_engine.json", corpus / "mpfb" / "3dobjs" / "base.obj"
out = Path(tempfile.mkdtemp()) / "human.glb"


def stats(name, runs):
    us = sorted(t * 1e6 for t in runs)
    show = (lambda v: f"{v / 1000:8.2f} ms") if us[0] >= 100 else (lambda v: f"{v:8.1f} µs")
    print(f"{name:<58} median {show(statistics.median(us))}  min {show(us[0])}  ({len(us)} runs)")


def repeat(f, n=30, number=1):
    """Per-call seconds of `n` timings of `number` calls each (number > 1 for calls of
    microseconds, below the clock's resolution for one call)."""
    f()  # warm: files in the page cache, pages of the module touched
    return [t / number for t in timeit.repeat(f, number=number, repeat=n)]


stats("skelport.load(rig, weights=, mesh=).skeletons[0].heads", repeat(lambda: skelport.load(rig, weights=weights, mesh=mesh).skeletons[0].heads))
doc = skelport.load(rig, weights=weights, mesh=mesh)
stats("  .skeletons[0].heads of a loaded document", repeat(lambda: doc.skeletons[0].heads, 30, 1000))
stats("  .skins[0].influences(max=4) of a loaded document", repeat(lambda: doc.skins[0].influences(max=4), 30, 10))
stats("skelport.convert(rig, 'human.glb', weights=, mesh=)", repeat(lambda: skelport.convert(rig, out, weights=weights, mesh=mesh)))
args = [str(cli), "convert", str(rig), "--weights", str(weights), "--mesh", str(mesh), "-o", str(out)]
if shutil.which("hyperfine"):
    subprocess.run(["hyperfine", "-N", "--warmup", "3", "--runs", "30", "--style", "basic", " ".join(args)], check=True)
else:
    stats("CLI: skelport convert … -o human.glb (whole process)", repeat(lambda: subprocess.run(args, check=True, capture_output=True)))
