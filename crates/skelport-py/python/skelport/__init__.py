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

from typing import TYPE_CHECKING, Any

from . import types
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

if TYPE_CHECKING:
    from . import migration
    from .arrays import from_arrays
    from .migration import Migration, migrate

# Loaded when first used: numpy (about 100 ms to import) comes with `from_arrays`, and the
# migration machinery (sockets, uuid, dataclasses: about 60 ms) with `migrate`, so a script that
# only loads or converts files does not wait for either. (An array a document gives imports
# numpy then.)
_LAZY = {
    "from_arrays": ("arrays", "from_arrays"),
    "migration": ("migration", None),
    "Migration": ("migration", "Migration"),
    "migrate": ("migration", "migrate"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    m = importlib.import_module(f".{module}", __name__)
    value = m if attr is None else getattr(m, attr)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))


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
