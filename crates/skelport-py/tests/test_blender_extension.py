"""The Blender add-on (crates/skelport-py/blender/) in Blender as a Python module (PyPI `bpy`,
Blender 5.x for CPython 3.11): File > Import then File > Export of the demo sample keeps it
(`skelport.diff` "same"), and an exported armature is built from Blender's data through
`skelport.from_arrays`. Skipped where `bpy` is not installed (CI does not install it yet)."""

import importlib.util
import sys
from pathlib import Path

import pytest

import skelport
from conftest import DEMO, ROOT

bpy = pytest.importorskip("bpy")


@pytest.fixture(scope="module")
def addon():
    spec = importlib.util.spec_from_file_location("skelport_blender", ROOT / "crates" / "skelport-py" / "blender" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["skelport_blender"] = module
    spec.loader.exec_module(module)
    module.register()
    yield module
    module.unregister()


@pytest.mark.parametrize("name", ["sample.glb", "sample.anvil.xml", "sample.g4b", "sample.dae"])
def test_import_then_export_keeps_the_file(addon, name, tmp_path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    src = DEMO / name
    assert bpy.ops.import_scene.skelport(filepath=str(src)) == {"FINISHED"}
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    out = tmp_path / f"back{src.suffix}"
    assert bpy.ops.export_scene.skelport(filepath=str(out)) == {"FINISHED"}
    report = skelport.diff(str(src), str(out))
    print(f"{name}: import, export: same={report['same']}, max head distance {report['max_head_distance']:.2e} m")
    assert report["same"], report
