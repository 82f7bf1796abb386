"""skelport: convert character skeletons (rigs) and skin weights between formats.

MPFB (MakeHuman) rig and weights JSON, AnvilToolkit skeleton XML, G4MF, glTF 2.0, VRM 1.0, Second Life
Collada and skelport's own ir-json: read any of them, write any of them, and see what a target
could not hold as data (``Report.losses``) instead of finding out later.

    >>> import skelport
    >>> report = skelport.convert("rig.game_engine.json", "human.glb",
    ...                           weights="weights.game_engine.json", mesh="base.obj")
    >>> doc = skelport.load("human.glb")
    >>> doc.skeletons[0].heads.shape          # numpy, metres, +Y up
    (53, 3)

Every array is in the report frame (+Y up, +Z forward, right-handed, metres: glTF's), the frame
of ``skelport inspect --json``, whatever frame the file was in. Reading, converting and saving
release the GIL; ``convert`` of a list of files runs on every core. Failures raise
``skelport.Error`` with the command line's message and ``.code``, ``.path`` and ``.place``.
See docs/python.md in the project for the whole API.
"""

from . import migration, types
from ._skelport import (
    Diagnostic,
    Document,
    Error,
    FileReport,
    FormatInfo,
    MapInfo,
    Mesh,
    Report,
    Skeleton,
    Skin,
    __version__,
    convert,
    diff,
    formats,
    load,
    maps,
    validate,
)
from .arrays import from_arrays
from .migration import Migration, migrate

__all__ = [
    "Diagnostic",
    "Document",
    "Error",
    "FileReport",
    "FormatInfo",
    "MapInfo",
    "Migration",
    "Mesh",
    "Report",
    "Skeleton",
    "Skin",
    "__version__",
    "convert",
    "diff",
    "formats",
    "from_arrays",
    "load",
    "maps",
    "migrate",
    "migration",
    "types",
    "validate",
]
