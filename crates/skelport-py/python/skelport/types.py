"""Types for annotating code that uses skelport: what its functions take, and the dicts its
``--json``-like reports are (``Document.inspect()``, ``diff()``, ``validate()``)."""

import os
from typing import List, Literal, Optional, TypedDict, Union

# Keys a report may leave out are declared in a `total=False` subclass (NotRequired is 3.11's).

#: A path.
StrPath = Union[str, "os.PathLike[str]"]
#: A file's contents in memory.
Bytes = Union[bytes, bytearray, memoryview]
#: A file: a path, or its contents.
Source = Union[StrPath, Bytes]
Severity = Literal["loss", "warning", "info"]

# --- the --json reports, as dicts --------------------------------------------------------------


class Frame(TypedDict):
    up: str
    forward: str
    handedness: Literal["right", "left"]
    metres_per_unit: float


class _BoneRequired(TypedDict):
    name: str
    parent: Optional[str]
    head: List[float]
    tail: List[float]
    rotation: List[float]


class InspectBone(_BoneRequired, total=False):
    bind_head: List[float]
    bind_matrix: List[float]


class InspectSkeleton(TypedDict):
    name: str
    bones: List[InspectBone]


class InspectSkin(TypedDict):
    vertex_count: int
    weighted_vertices: int
    max_influences: int
    joints: List[str]


class InspectReport(TypedDict):
    """``skelport inspect --json`` (schemas/inspect.schema.json)."""

    format: str
    frame: Frame
    source_frame: Frame
    skeletons: List[InspectSkeleton]
    skins: List[InspectSkin]


# "from" is a Python keyword, so this one is spelt the functional way.
Reparented = TypedDict("Reparented", {"bone": str, "from": Optional[str], "to": Optional[str]})


class Moved(TypedDict):
    bone: str
    head: float
    tail: Optional[float]


class Rotated(TypedDict):
    bone: str
    degrees: float


class PoseTest(TypedDict):
    poses: int
    vertices: int
    joints: int
    matrices: int
    max_deviation: float


class Compared(TypedDict):
    bones: int
    tails: int
    skins: int
    meshes: int


class _DiffRequired(TypedDict):
    same: bool
    added: List[str]
    removed: List[str]
    reparented: List[Reparented]
    moved: List[Moved]
    rotated: List[Rotated]
    skins: List[str]
    meshes: List[str]
    compared: Compared
    notes: List[str]
    max_head_distance: float


class DiffReport(_DiffRequired, total=False):
    """``skelport diff --json`` (schemas/diff-report.schema.json)."""

    pose_test: PoseTest


class Problem(TypedDict):
    location: str
    message: str


class ValidateReport(TypedDict):
    """``skelport validate --json`` (schemas/validate-report.schema.json)."""

    file: str
    format: str
    target: Optional[str]
    valid: bool
    problems: List[Problem]
    warnings: List[str]
