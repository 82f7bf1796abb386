//! The VRM crate's error type.

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
    /// A `.vrm` file is not VRM (or its VRM data is broken).
    #[error("{file}: {pointer}: {message}")]
    Invalid { file: String, pointer: String, message: String },
    /// The rig cannot be put in a T-pose or written as VRM needs.
    #[error("{0}")]
    Rig(String),
}
