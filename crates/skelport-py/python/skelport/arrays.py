"""``skelport.from_arrays``: a ``Document`` built from arrays, the way back from a loaded
document's arrays. A Blender exporter builds one from an armature and its meshes; a batch script
from whatever holds its rigs; then ``Document.save`` writes any format skelport writes."""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

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


def _json(value: "Optional[Mapping[str, Any]]", what: str) -> "Optional[str]":
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a dict of namespaces, not {type(value).__name__}")
    return json.dumps(dict(value)) if value else None


def _mesh(m: "Mapping[str, Any]", k: int) -> "Dict[str, Any]":
    """One mesh's arrays as the native builder takes them (typed, contiguous)."""
    if not isinstance(m, Mapping):
        raise ValueError(f"meshes[{k}] must be a dict, not {type(m).__name__}")
    out: Dict[str, Any] = dict(m)
    where = f"meshes[{k}]."
    for key, dtype, ndim in (("positions", np.float64, 2), ("faces", np.int64, 2), ("uvs", np.float64, 2), ("normals", np.float64, 2), ("joints", np.int64, 2), ("weights", np.float64, 2)):
        if key in out:
            out[key] = _opt(out[key], dtype, ndim, where + key)
    if out.get("bind_matrices") is not None:
        out["bind_matrices"] = _opt(out["bind_matrices"], np.float64, 3, where + "bind_matrices")
    if out.get("joint_names") is not None:
        out["joint_names"] = [str(n) for n in out["joint_names"]]
    groups = out.get("groups")
    if groups is not None:
        out["groups"] = {str(g): (np.asarray(v, dtype=np.int64).reshape(-1).tolist(), np.asarray(w, dtype=np.float64).reshape(-1).tolist()) for g, (v, w) in groups.items()}
    for key in ("extensions", "skin_extensions"):
        if key in out:
            out[key] = _json(out[key], where + key)
    return out


def from_arrays(
    bone_names: Sequence[str],
    parents: npt.ArrayLike,
    matrices: npt.ArrayLike,
    *,
    name: str = "armature",
    lengths: "Optional[npt.ArrayLike]" = None,
    rolls: "Optional[npt.ArrayLike]" = None,
    deform: "Optional[npt.ArrayLike]" = None,
    mirrors: "Optional[npt.ArrayLike]" = None,
    bone_anchors: "Optional[Sequence[Optional[Mapping[str, Any]]]]" = None,
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
    meshes: "Optional[Sequence[Mapping[str, Any]]]" = None,
    extensions: "Optional[Mapping[str, Any]]" = None,
    skeleton_extensions: "Optional[Mapping[str, Any]]" = None,
    bone_extensions: "Optional[Sequence[Optional[Mapping[str, Any]]]]" = None,
) -> Document:
    """Build a ``Document`` from arrays in the report frame (+Y up, +Z forward, right-handed,
    metres): the frame, shapes and conventions of a loaded document's arrays.

    * Bones: ``bone_names`` (n), ``parents`` ((n,), -1 for roots, each parent before its
      children), ``matrices`` ((n, 4, 4), row-major: each bone's world rest matrix, ``m[:3, 3]``
      its head, its +Y axis along the bone; rotation and translation, no shear or mirror),
      ``lengths`` ((n,), head to tail; NaN or none for none). ``name`` names the skeleton (and
      the skin). Optional, as a loaded ``Skeleton``'s properties of these names give them:
      ``rolls`` ((n,) radians, NaN for none), ``deform`` ((n,) bool), ``mirrors`` ((n,) each
      bone's left/right counterpart, -1 for none), ``bone_anchors`` (per bone, MPFB's placement
      on a base mesh as a dict, or None).
    * A mesh (optional): ``positions`` ((v, 3)), ``faces`` ((f, k) vertex indices, shorter faces
      padded with -1, as ``Mesh.faces``), ``uvs`` ((v, 2), or one row per corner with
      ``uvs_per_corner``; origin bottom left, v up), ``normals`` ((v, 3), or per corner).
    * Its skin (optional): ``joints`` ((v, k) indices into ``joint_names``) with ``weights``
      ((v, k); weight 0 pads a row), as ``Skin.influences()`` gives them; or ``groups``, vertex
      groups as Blender has them: ``{bone name: (vertex indices, weights)}`` (groups named after
      no joint are left out). ``joint_names`` default to every bone in bone order; each joint
      binds at its bone's rest matrix.
    * Several meshes: ``meshes``, a list of dicts with the keys above (``name`` for
      ``mesh_name``), each with its own skin, plus ``skin_name``, ``bind_matrices`` ((j, 4, 4),
      where the skin binds each joint, as ``Skin.bind_matrices``; default: at its bone's rest),
      ``extensions`` and ``skin_extensions``; the one-mesh keywords, when given, are the first mesh.
    * Format data skelport's model does not hold, as the ``extensions`` properties of a loaded
      document give it (namespace -> JSON value): ``extensions`` (the document's),
      ``skeleton_extensions``, ``bone_extensions`` (one per bone, None or {} for none). A
      document loaded, taken apart and built again with them writes its file back as it was
      (an AnvilToolkit skeleton byte for byte, its IDs and modifiers kept for bones not moved).

    Raises ValueError naming the array and the row that is wrong.
    """
    one = {
        "positions": positions, "faces": faces, "uvs": uvs, "uvs_per_corner": uvs_per_corner, "normals": normals,
        "normals_per_corner": normals_per_corner, "name": mesh_name, "joints": joints, "weights": weights,
        "joint_names": joint_names, "groups": groups,
    }
    listed = list(meshes or [])
    if positions is not None:
        listed.insert(0, one)
    elif any(v is not None for k, v in one.items() if k not in ("uvs_per_corner", "normals_per_corner", "name")):
        raise ValueError("a skin or faces need the mesh's positions")
    names = list(bone_names)
    if bone_extensions is not None and len(bone_extensions) != len(names):
        raise ValueError(f"bone_extensions has {len(bone_extensions)} items for {len(names)} bones")
    return _skelport._from_arrays(
        names,
        np.ascontiguousarray(parents, dtype=np.int64).reshape(-1),
        np.ascontiguousarray(matrices, dtype=np.float64),
        name=name,
        lengths=_opt(lengths, np.float64, 1, "lengths"),
        rolls=_opt(rolls, np.float64, 1, "rolls"),
        deform=_opt(deform, np.bool_, 1, "deform"),
        mirrors=_opt(mirrors, np.int64, 1, "mirrors"),
        bone_anchors=None if bone_anchors is None else [None if a is None else json.dumps(dict(a)) for a in bone_anchors],
        meshes=[_mesh(m, k) for k, m in enumerate(listed)],
        extensions=_json(extensions, "extensions"),
        skeleton_extensions=_json(skeleton_extensions, "skeleton_extensions"),
        bone_extensions=None if bone_extensions is None else [_json(e, f"bone_extensions[{i}]") for i, e in enumerate(bone_extensions)],
    )
