"""``skelport.from_arrays``: a ``Document`` built from arrays, the way back from a loaded
document's arrays. A Blender exporter builds one from an armature and its meshes; a batch script
from whatever holds its rigs; then ``Document.save`` writes any format skelport writes."""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from . import _skelport
from ._skelport import Document


def _opt(a: "Optional[npt.ArrayLike]", dtype: type, ndim: int, what: str) -> "Optional[np.ndarray]":
    if a is None:
        return None
    out = np.ascontiguousarray(a, dtype=dtype)
    if out.ndim != ndim:
        raise ValueError(f"{what} must have {ndim} dimensions, not shape {out.shape}")
    return out


def from_arrays(
    bone_names: Sequence[str],
    parents: npt.ArrayLike,
    matrices: npt.ArrayLike,
    *,
    name: str = "armature",
    lengths: "Optional[npt.ArrayLike]" = None,
    positions: "Optional[npt.ArrayLike]" = None,
    faces: "Optional[npt.ArrayLike]" = None,
    uvs: "Optional[npt.ArrayLike]" = None,
    uvs_per_corner: bool = False,
    normals: "Optional[npt.ArrayLike]" = None,
    normals_per_corner: bool = False,
    mesh_name: str = "mesh",
    joints: "Optional[npt.ArrayLike]" = None,
    weights: "Optional[npt.ArrayLike]" = None,
    joint_names: "Optional[Sequence[str]]" = None,
    groups: "Optional[Dict[str, Tuple[Sequence[int], Sequence[float]]]]" = None,
) -> Document:
    """Build a ``Document`` from arrays in the report frame (+Y up, +Z forward, right-handed,
    metres): the frame, shapes and conventions of a loaded document's arrays.

    * Bones: ``bone_names`` (n), ``parents`` ((n,), -1 for roots, each parent before its
      children), ``matrices`` ((n, 4, 4), row-major: each bone's world rest matrix, ``m[:3, 3]``
      its head, its +Y axis along the bone; rotation and translation, no shear or mirror),
      ``lengths`` ((n,), head to tail; optional). ``name`` names the skeleton (and the skin).
    * A mesh (optional): ``positions`` ((v, 3)), ``faces`` ((f, k) vertex indices, shorter faces
      padded with -1, as ``Mesh.faces``), ``uvs`` ((v, 2), or one row per corner with
      ``uvs_per_corner``; origin bottom left, v up), ``normals`` ((v, 3), or per corner).
    * Its skin (optional): ``joints`` ((v, k) indices into ``joint_names``) with ``weights``
      ((v, k); weight 0 pads a row), as ``Skin.influences()`` gives them; or ``groups``, vertex
      groups as Blender has them: ``{bone name: (vertex indices, weights)}`` (groups named after
      no joint are left out). ``joint_names`` default to every bone in bone order; each joint
      binds at its bone's rest matrix.

    Raises ValueError naming the array and the row that is wrong.
    """
    return _skelport._from_arrays(
        list(bone_names),
        np.ascontiguousarray(parents, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(matrices, dtype=np.float64),
        name=name,
        lengths=_opt(lengths, np.float64, 1, "lengths"),
        positions=_opt(positions, np.float64, 2, "positions"),
        faces=_opt(faces, np.int64, 2, "faces"),
        uvs=_opt(uvs, np.float64, 2, "uvs"),
        uvs_per_corner=uvs_per_corner,
        normals=_opt(normals, np.float64, 2, "normals"),
        normals_per_corner=normals_per_corner,
        mesh_name=mesh_name,
        joints=_opt(joints, np.int64, 2, "joints"),
        weights=_opt(weights, np.float64, 2, "weights"),
        joint_names=None if joint_names is None else list(joint_names),
        groups=None
        if groups is None
        else {str(k): (np.asarray(v, dtype=np.int64).reshape(-1).tolist(), np.asarray(w, dtype=np.float64).reshape(-1).tolist()) for k, (v, w) in groups.items()},
    )
