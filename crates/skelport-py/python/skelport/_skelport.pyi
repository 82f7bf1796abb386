"""Type stubs of skelport's native module (re-exported by the ``skelport`` package).

Every array is a numpy array in the report frame: +Y up, +Z forward, right-handed, metres
(glTF's frame, the frame of ``skelport inspect --json``).
"""

from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

from .types import (
    DiffReport,
    InspectReport,
    Severity,
    Source,
    StrPath,
    ValidateReport,
)

__version__: str
__all__ = [
    "Diagnostic",
    "Document",
    "Error",
    "FileReport",
    "FormatInfo",
    "MapInfo",
    "Mesh",
    "Report",
    "Skeleton",
    "Skin",
    "__version__",
    "_from_arrays",
    "_migrate_file",
    "_migrate_plan",
    "convert",
    "diff",
    "formats",
    "load",
    "maps",
    "validate",
]

# --- errors and reports ------------------------------------------------------------------------

class Error(Exception):
    """A file could not be read, converted or written.

    ``str(e)`` is the command line's message: what is wrong, in which file and where, and what to
    do about it.
    """

    #: Stable kind: "read", "input", "input.kind", "invalid", "map", "write", "strict", "output",
    #: "loss", "format.unknown", "format.unsupported", "format.undetected" or "internal" (a bug).
    code: Optional[str]
    #: For code "read": the kind of fault the reader found ("encoding", "syntax", "container",
    #: "value", "reference", "structure", "unsupported", "buffer", "budget", "write", "other");
    #: else None.
    fault: Optional[str]
    #: The file at fault: the input, or the mesh or weights read with it.
    path: Optional[str]
    #: Where in it: "line 3, column 17", "line 12", "byte 40", "/accessors/1", "$.bones.x",
    #: or None.
    place: Optional[str]
    #: What was reported before the failure.
    diagnostics: Sequence["Diagnostic"]

@final
class Diagnostic:
    """One loss, warning or note (``loss: FILE: MESSAGE`` on the command line)."""

    @property
    def severity(self) -> Severity: ...
    @property
    def code(self) -> str:
        """Stable machine-readable code, e.g. "anvil.geometry"."""
    @property
    def message(self) -> str: ...
    @property
    def place(self) -> Optional[str]:
        """The element the message is about ('bone "calf_l"', "skin 0", "/meshes/0"), or None."""
    @property
    def path(self) -> Optional[str]:
        """The input file it is about."""

@final
class FileReport:
    """One input of a ``convert`` call."""

    @property
    def input(self) -> str: ...
    @property
    def output(self) -> Optional[str]: ...
    @property
    def from_format(self) -> Optional[str]: ...
    @property
    def to_format(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def skipped(self) -> bool: ...
    @property
    def error(self) -> Optional[Error]: ...
    @property
    def diagnostics(self) -> List[Diagnostic]: ...
    @property
    def outputs(self) -> List[str]:
        """Every file written for this input (side files first, the main file last)."""

@final
class Report:
    """What a ``convert`` call or ``Document.save`` did."""

    @property
    def files(self) -> List[FileReport]: ...
    @property
    def outputs(self) -> List[str]:
        """Every file written, side files included."""
    @property
    def losses(self) -> List[Diagnostic]:
        """What the targets could not hold."""
    @property
    def warnings(self) -> List[Diagnostic]: ...
    @property
    def notes(self) -> List[Diagnostic]: ...
    @property
    def diagnostics(self) -> List[Diagnostic]:
        """Losses, warnings and notes in the order reported."""
    @property
    def errors(self) -> List[Error]:
        """The error of each input that failed (a batch goes on past them)."""
    @property
    def ok(self) -> bool:
        """True when every input was converted (or skipped)."""

# --- documents ---------------------------------------------------------------------------------

@final
class Skeleton:
    """A skeleton: bones in order, parents before children; rows of every array follow it."""

    @property
    def name(self) -> str: ...
    @property
    def bone_names(self) -> List[str]: ...
    @property
    def parents(self) -> npt.NDArray[np.int32]:
        """Parent index of each bone, shape (n,); -1 for roots."""
    @property
    def heads(self) -> npt.NDArray[np.float64]:
        """World rest head of each bone, shape (n, 3), metres, +Y up."""
    @property
    def tails(self) -> npt.NDArray[np.float64]:
        """Each bone's tail, shape (n, 3): from its length where the file has one, else inferred."""
    @property
    def rotations(self) -> npt.NDArray[np.float64]:
        """World rest orientation, unit quaternions x, y, z, w, shape (n, 4)."""
    @property
    def bind_matrices(self) -> Optional[npt.NDArray[np.float64]]:
        """Where skins bind each bone, shape (n, 4, 4), row-major (m[:3, 3] is the position);
        NaN rows for bones no skin binds; None when no skin binds this skeleton."""
    @property
    def extensions(self) -> Dict[str, Any]:
        """What formats keep of it beyond skelport's model (namespace -> JSON value), as
        ``from_arrays`` takes it back."""
    @property
    def lengths(self) -> npt.NDArray[np.float64]:
        """Head-to-tail length where the file gives one, shape (n,); NaN where it gives none."""
    @property
    def rolls(self) -> npt.NDArray[np.float64]:
        """Blender roll in radians as the file gave it, shape (n,); NaN where it gave none."""
    @property
    def deform(self) -> npt.NDArray[np.bool_]:
        """Whether each bone deforms geometry, shape (n,)."""
    @property
    def mirrors(self) -> npt.NDArray[np.int32]:
        """Each bone's mirror counterpart as a bone index, shape (n,); -1 for none."""
    @property
    def bone_anchors(self) -> List[Optional[Dict[str, Any]]]:
        """Per bone, MPFB's placement of head and tail on a base mesh, or None."""
    @property
    def bone_extensions(self) -> List[Dict[str, Any]]:
        """The same per bone, in bone order (empty dicts for none)."""
    def index(self, name: str) -> int:
        """The index of the bone called ``name`` (IndexError when there is none)."""
    def __len__(self) -> int: ...

@final
class Skin:
    """A mesh's vertices bound to a skeleton's joints."""

    @property
    def name(self) -> str: ...
    @property
    def skeleton(self) -> int:
        """Index into ``Document.skeletons``."""
    @property
    def mesh(self) -> Optional[int]:
        """Index into ``Document.meshes``, or None when the file has no geometry."""
    @property
    def joint_names(self) -> List[str]:
        """Joint bone names, in joint order (``influences()`` indexes this list)."""
    @property
    def joint_bones(self) -> npt.NDArray[np.int32]:
        """Each joint's bone index in its skeleton, shape (j,)."""
    @property
    def extensions(self) -> Dict[str, Any]:
        """What formats keep of it beyond skelport's model (namespace -> JSON value), as
        ``from_arrays`` takes it back."""
    @property
    def bind_matrices(self) -> npt.NDArray[np.float64]:
        """Where the skin binds each joint, shape (j, 4, 4), row-major (m[:3, 3] the position)."""
    @property
    def vertex_count(self) -> int: ...
    def influences(self, max: Optional[int] = None) -> Tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        """(joints, weights), each shape (v, k): rows largest first, padded with joint 0 and weight 0.

        With ``max``, k is ``max`` and vertices with more influences keep their ``max`` largest,
        renormalized to sum to 1; without it, k is the most any vertex has and the weights are
        as the file gives them.
        """

@final
class Mesh:
    """A mesh in the report frame."""

    @property
    def name(self) -> str: ...
    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """Vertex positions, shape (n, 3)."""
    @property
    def faces(self) -> npt.NDArray[np.int32]:
        """Vertex indices per face, shape (f, k), shorter faces padded with -1;
        ``faces[faces >= 0]`` lists every corner in order."""
    @property
    def face_sizes(self) -> npt.NDArray[np.int32]:
        """Corners of each face, shape (f,)."""
    @property
    def normals(self) -> Optional[npt.NDArray[np.float64]]:
        """Shape (n, 3), per vertex or (when ``normals_per_corner``) per face corner."""
    @property
    def normals_per_corner(self) -> bool: ...
    @property
    def uvs(self) -> Optional[npt.NDArray[np.float64]]:
        """The first UV set, shape (n, 2), origin bottom left, v up; per vertex or (when
        ``uvs_per_corner``) per face corner."""
    @property
    def uvs_per_corner(self) -> bool: ...
    @property
    def extensions(self) -> Dict[str, Any]:
        """What formats keep of it beyond skelport's model (namespace -> JSON value), as
        ``from_arrays`` takes it back."""

@final
class Document:
    """A document read by ``load``."""

    @property
    def format(self) -> str:
        """The format it was read as ("mpfb", "gltf", "anvil", ...)."""
    @property
    def name(self) -> str:
        """The input's name in messages."""
    @property
    def diagnostics(self) -> List[Diagnostic]:
        """What the reader reported."""
    @property
    def skeletons(self) -> List[Skeleton]: ...
    @property
    def skins(self) -> List[Skin]: ...
    @property
    def meshes(self) -> List[Mesh]: ...
    @property
    def extensions(self) -> Dict[str, Any]:
        """What formats keep of it beyond skelport's model (namespace -> JSON value), as
        ``from_arrays`` takes it back."""
    def save(
        self,
        path: StrPath,
        *,
        to: Optional[str] = None,
        map: Optional[StrPath] = None,
        max_influences: Optional[int] = None,
        strict: bool = False,
        embed: bool = False,
        compress: bool = False,
        default_joints: bool = False,
        allow_loss: bool = False,
        fix: bool = False,
        limit: Optional[int] = None,
        keep_helpers: bool = False,
        keep_origin: bool = False,
        sl_skeleton: Optional[StrPath] = None,
        rest_pose: Optional[Literal["t-pose", "as-is"]] = None,
        vrm_meta: Optional[StrPath] = None,
    ) -> Report:
        """Write to ``path`` (side files beside it), all or nothing, as ``to`` or as the
        extension says. Raises Error."""
    def dumps(
        self,
        to: str,
        *,
        map: Optional[StrPath] = None,
        max_influences: Optional[int] = None,
        strict: bool = False,
        embed: bool = True,
        compress: bool = False,
        default_joints: bool = False,
        allow_loss: bool = False,
        fix: bool = False,
        limit: Optional[int] = None,
        keep_helpers: bool = False,
        keep_origin: bool = False,
        sl_skeleton: Optional[StrPath] = None,
        rest_pose: Optional[Literal["t-pose", "as-is"]] = None,
        vrm_meta: Optional[StrPath] = None,
    ) -> bytes:
        """The document as ``to``, in memory (glTF with its buffers embedded). Raises Error when
        the target writes side files too (use ``dumps_all``)."""
    def dumps_all(
        self,
        to: str,
        *,
        stem: str = "out",
        map: Optional[StrPath] = None,
        max_influences: Optional[int] = None,
        strict: bool = False,
        embed: bool = False,
        compress: bool = False,
        default_joints: bool = False,
        allow_loss: bool = False,
        fix: bool = False,
        limit: Optional[int] = None,
        keep_helpers: bool = False,
        keep_origin: bool = False,
        sl_skeleton: Optional[StrPath] = None,
        rest_pose: Optional[Literal["t-pose", "as-is"]] = None,
        vrm_meta: Optional[StrPath] = None,
    ) -> Dict[str, bytes]:
        """Every file of the document as ``to`` by file name, the main file first."""
    def renamed(self, map: StrPath, *, to: Optional[str] = None) -> Document:
        """This document with its bones renamed by ``map`` (a built-in map's name or a map
        file), as ``convert(map=...)`` renames them; ``"humanoid"`` needs ``to``. Raises Error."""
    def inspect(self) -> InspectReport:
        """The ``skelport inspect --json`` report, as a dict."""

# --- functions ---------------------------------------------------------------------------------

def load(
    source: Source,
    *,
    format: Optional[str] = None,
    mesh: Optional[Source] = None,
    weights: Optional[Source] = None,
    name: Optional[str] = None,
    keep_helpers: bool = False,
    keep_origin: bool = False,
    names: Optional[StrPath] = None,
    sl_skeleton: Optional[StrPath] = None,
    allow_outside_uris: bool = False,
) -> Document:
    """Read a file (a path) or its bytes; ``mesh`` and ``weights`` too may be bytes. ``format``
    names the reader (default: from the name and the content); ``name`` names bytes in messages.
    Raises Error."""

def convert(
    inputs: Union[StrPath, Sequence[StrPath]],
    output: StrPath,
    *,
    to: Optional[str] = None,
    from_: Optional[str] = None,
    format: Optional[str] = None,
    mesh: Optional[Source] = None,
    weights: Optional[Source] = None,
    map: Optional[StrPath] = None,
    max_influences: Optional[int] = None,
    strict: bool = False,
    embed: bool = False,
    compress: bool = False,
    default_joints: bool = False,
    allow_loss: bool = False,
    fix: bool = False,
    limit: Optional[int] = None,
    keep_helpers: bool = False,
    keep_origin: bool = False,
    names: Optional[StrPath] = None,
    sl_skeleton: Optional[StrPath] = None,
    allow_outside_uris: bool = False,
    rest_pose: Optional[Literal["t-pose", "as-is"]] = None,
    vrm_meta: Optional[StrPath] = None,
    skip_existing: bool = False,
) -> Report:
    """Convert as ``skelport convert`` does.

    One path into a file: raises Error on failure. A list of paths, a folder among the inputs
    (the files in it a reader claims, each MPFB rig joined to the weights beside it), or an
    existing folder or a path ending in '/' as ``output``: a batch into the folder as
    ``<stem>.<extension>``, run on every core without the GIL; failures are in
    ``Report.errors`` and the rest goes on; Ctrl-C stops it between files. ``format`` (or
    ``from_``) names the reader, as ``load``'s ``format`` does.
    """

def diff(
    a: Union[Source, Document],
    b: Union[Source, Document, None] = None,
    *,
    sl: bool = False,
    sl_skeleton: Optional[StrPath] = None,
    tolerance: float = 1e-4,
    angle_tolerance: float = 0.01,
    map: Optional[StrPath] = None,
    mesh: Optional[Source] = None,
    weights: Optional[Source] = None,
    pose_test: bool = False,
    poses: int = 20,
) -> DiffReport:
    """Compare two documents bone by bone (``skelport diff --json``)."""

def validate(
    path: StrPath,
    target: Optional[str] = None,
    *,
    format: Optional[str] = None,
    mesh: Optional[Source] = None,
    weights: Optional[Source] = None,
    keep_helpers: bool = False,
    keep_origin: bool = False,
    names: Optional[StrPath] = None,
    sl_skeleton: Optional[StrPath] = None,
    allow_outside_uris: bool = False,
) -> ValidateReport:
    """Check a file against the IR's rules and a target's (``skelport validate --json``)."""

@final
class FormatInfo:
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def extensions(self) -> List[str]: ...
    @property
    def can_read(self) -> bool: ...
    @property
    def can_write(self) -> bool: ...
    @property
    def holds(self) -> Dict[str, Any]:
        """What its files can hold (skins, meshes, uvs, normals, ..., max_bones)."""

@final
class MapInfo:
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def bones(self) -> Dict[str, str]:
        """Source bone name → target bone name."""

def formats() -> List[FormatInfo]:
    """Every format skelport knows (``skelport formats``)."""

def maps() -> List[MapInfo]:
    """The built-in retarget maps (``skelport maps``)."""

# Private: the native halves of skelport.migration and skelport.arrays (called through them).
def _migrate_file(
    input: StrPath,
    output: StrPath,
    to: str,
    *,
    weights: Optional[Source] = None,
    from_: Optional[str] = None,
    mesh: Optional[Source] = None,
    map: Optional[StrPath] = None,
    max_influences: Optional[int] = None,
    strict: bool = False,
    timeout: Optional[float] = None,
    **writer_options: Any,
) -> Dict[str, Any]: ...
def _migrate_plan(
    inputs: Sequence[StrPath],
    out_dir: StrPath,
    to: str,
    *,
    weights: Optional[StrPath] = None,
    embed: bool = False,
    compress: bool = False,
) -> Dict[str, Any]: ...
def _from_arrays(
    bone_names: Sequence[str],
    parents: npt.NDArray[np.int64],
    matrices: npt.NDArray[np.float64],
    *,
    name: str = "armature",
    lengths: Optional[npt.NDArray[np.float64]] = None,
    rolls: Optional[npt.NDArray[np.float64]] = None,
    deform: Optional[npt.NDArray[np.bool_]] = None,
    mirrors: Optional[npt.NDArray[np.int64]] = None,
    bone_anchors: Optional[Sequence[Optional[str]]] = None,
    meshes: List[Dict[str, Any]] = ...,
    extensions: Optional[str] = None,
    skeleton_extensions: Optional[str] = None,
    bone_extensions: Optional[Sequence[Optional[str]]] = None,
) -> Document: ...
