"""How long File > Import > Skeleton (skelport) takes in Blender 5 (PyPI `bpy`), for big files:
the add-on installed from the extension zip into a private user folder, each file imported once
into an empty scene by `tests/blender_driver.py`, the operator's call timed. A measurement to
read, not a test.

    python crates/skelport-py/bench/blender_import.py BPY_PYTHON dist/skelport-0.1.0.zip FILE...
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

driver = Path(__file__).resolve().parents[1] / "tests" / "blender_driver.py"
python, addon, files = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3:]
with tempfile.TemporaryDirectory() as tmp:
    user = Path(tmp) / "user"
    user.mkdir()
    cases = [{"key": Path(f).name, "input": os.path.abspath(f), "record": False} for f in files]
    (Path(tmp) / "cases.json").write_text(json.dumps({"addon": addon, "cases": cases}))
    subprocess.run([python, str(driver), str(Path(tmp) / "cases.json"), str(Path(tmp) / "results.json")],
                   env=dict(os.environ, BLENDER_USER_RESOURCES=str(user)), check=True, capture_output=True)
    results = json.loads((Path(tmp) / "results.json").read_text())
print(f"Blender {results['blender']}")
for r in results["cases"]:
    print(f"{r['key']}: {r.get('bone_count')} bones, import {r.get('import_seconds', float('nan')):.2f} s {r.get('exception', '')}")
