//! The VRM crate's error type.

use skelport_ir::{Fault, FaultKind, FormatError, Place};

/// Why a VRM file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum VrmError {
    /// The glTF underneath (reading or writing).
    #[error(transparent)]
    Gltf(#[from] skelport_gltf::GltfError),
    /// The humanoid is missing or breaks VRM's rules.
    #[error("{0}")]
    Humanoid(String),
    /// A humanoid map file is not valid.
    #[error("{file}: {message}")]
    MapFile { file: String, message: String },
    /// The `--vrm-meta` file is not valid.
    #[error("{file}: {message}")]
    Meta { file: String, message: String },
    /// A `.vrm` file is not VRM (or its VRM data is broken), at `place`.
    #[error("{}", FormatError::of(self))]
    Invalid { file: String, place: Place, message: String, kind: FaultKind },
    /// The rig cannot be put in a T-pose or written as VRM needs.
    #[error("{0}")]
    Rig(String),
}

impl Fault for VrmError {
    fn file(&self) -> Option<&str> {
        match self {
            VrmError::Gltf(e) => e.file(),
            VrmError::MapFile { file, .. } | VrmError::Meta { file, .. } | VrmError::Invalid { file, .. } => Some(file),
            VrmError::Humanoid(_) | VrmError::Rig(_) => None,
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            VrmError::Gltf(e) => e.place(),
            VrmError::Invalid { place, .. } => Some(place.clone()),
            _ => None,
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            VrmError::Gltf(e) => e.kind(),
            VrmError::Invalid { kind, .. } => *kind,
            VrmError::Humanoid(_) | VrmError::Rig(_) => FaultKind::Write,
            VrmError::MapFile { .. } | VrmError::Meta { .. } => FaultKind::Other,
        }
    }
    fn what(&self) -> String {
        match self {
            VrmError::Gltf(e) => e.what(),
            VrmError::MapFile { message, .. } | VrmError::Meta { message, .. } | VrmError::Invalid { message, .. } => message.clone(),
            VrmError::Humanoid(m) | VrmError::Rig(m) => m.clone(),
        }
    }
    fn fix(&self) -> Option<String> {
        match self {
            VrmError::Gltf(e) => e.fix(),
            _ => None,
        }
    }
}
