//! # skelport-fbx — FBX rigs, read-only
//!
//! Autodesk FBX (`.fbx`, binary and ASCII, FBX 6.1 to 7.7) is read through the `ufbx` crate
//! (bindings to the ufbx C library, MIT OR Unlicense): it parses every version and resolves skin
//! clusters, bind poses, pivots, geometry transforms and scale-inheritance modes into matrices.
//! skelport writes no FBX parser of its own; this crate maps ufbx's scene to the IR ([`read`]).
//!
//! * Bones: the nodes skin clusters bind, and their ancestors up to the armature (the first
//!   ancestor that is neither a limb node nor below one), as Blender builds them.
//! * Rest pose: each bone's world transform from its cluster's bind matrix, else the file's bind
//!   pose, else the node hierarchy; scale is taken out (bones are rigid in the IR), and the
//!   inverse bind matrices are made from the clusters so the skinned mesh is where the file
//!   binds it.
//! * Frame: the file's own axes (its up and front axis) and unit (`UnitScaleFactor`); writers
//!   convert.
//! * FBX is read-only: writing refuses and names the formats engines import instead.
//!
//! Inputs are untrusted: ufbx reads from memory only (no external files, no geometry caches),
//! and its two allocators are limited to the decode budget (`skelport_ir::budget`).

#![forbid(unsafe_code)]

pub mod read;
pub mod sample;

use skelport_ir::{
    Diagnostics, Document, Fault, FaultKind, Format, FormatError, Holds, Input, InputKind, InputRole, Output, Place, ReadOptions,
    WriteOptions,
};

/// Why an FBX file could not be read (or written: never).
#[derive(Debug, thiserror::Error)]
pub enum FbxError {
    /// ufbx refused the file: what it says, where, and the fix.
    #[error("{}", FormatError::of(self))]
    Parse {
        /// The file being read.
        file: String,
        /// Where: the stage of the parse ufbx's error stack names, when it names one (the stack
        /// is compiled out of the `ufbx` crate's build); else the place the kind implies (the
        /// header at byte 0 of a file that is no FBX, the end of a cut-short file), else the
        /// records after the last offset ufbx reported reading ([`read`]).
        place: Place,
        /// What kind of failure, as data.
        kind: FbxErrorKind,
        /// ufbx's description.
        message: String,
        /// What the user can do.
        fix: &'static str,
    },
    /// The file is read but holds nothing skelport can use, at `place` (a mesh, the scene).
    #[error("{}", FormatError::of(self))]
    Content {
        /// The file being read.
        file: String,
        /// The element at fault.
        place: Place,
        /// What is missing, with the fix.
        message: String,
    },
    /// The file asks for more memory than the decode budget allows.
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
    /// FBX is read-only.
    #[error("{0}")]
    Write(String),
}

impl Fault for FbxError {
    fn file(&self) -> Option<&str> {
        match self {
            FbxError::Parse { file, .. } | FbxError::Content { file, .. } => Some(file),
            FbxError::Budget(e) => e.file(),
            FbxError::Write(_) => None,
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            FbxError::Parse { place, .. } | FbxError::Content { place, .. } => Some(place.clone()),
            FbxError::Budget(e) => e.place(),
            FbxError::Write(_) => None,
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            FbxError::Parse { kind: FbxErrorKind::Truncated | FbxErrorKind::Invalid | FbxErrorKind::TooDeep, .. } => FaultKind::Container,
            FbxError::Parse { kind: FbxErrorKind::Unrecognized, .. } => FaultKind::Unsupported,
            FbxError::Content { .. } => FaultKind::Structure,
            FbxError::Budget(e) => e.kind(),
            FbxError::Write(_) => FaultKind::Write,
        }
    }
    fn what(&self) -> String {
        match self {
            FbxError::Parse { message, .. } | FbxError::Content { message, .. } => message.clone(),
            FbxError::Budget(e) => e.what(),
            FbxError::Write(m) => m.clone(),
        }
    }
    fn fix(&self) -> Option<String> {
        match self {
            FbxError::Parse { fix, .. } => Some((*fix).to_owned()),
            _ => None,
        }
    }
}

/// The kind of a parse failure, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FbxErrorKind {
    /// The file ends before its structure does.
    Truncated,
    /// Not an FBX file (or an FBX version ufbx does not read).
    Unrecognized,
    /// A value or index in the file is invalid.
    Invalid,
    /// Nesting deeper than the limit.
    TooDeep,
}

/// What FBX's reader puts in a document: skins, meshes with UVs and normals, bind matrices of
/// their own. The writer refuses, so nothing is claimed for it.
const HOLDS: Holds = Holds::NOTHING;

/// `.fbx`: Autodesk FBX, binary or ASCII (read-only).
pub struct FbxFormat;

/// The first bytes of every binary FBX file.
pub const BINARY_MAGIC: &[u8] = b"Kaydara FBX Binary  \0";

/// The refusal `--to fbx` gets: FBX is an interchange format skelport only reads.
pub const READ_ONLY: &str = "FBX is read-only in skelport (writing it needs Autodesk's SDK); game engines and DCC tools import glTF instead: convert to `glb` (Unity through UnityGLTF/glTFast, Unreal through Interchange, Godot and Blender natively), `vrm` for avatars or `dae` for Second Life";

/// How sure the bytes are FBX: the binary magic, or an ASCII FBX's header.
pub fn sniff(head: &[u8]) -> u8 {
    if head.starts_with(BINARY_MAGIC) {
        return 100;
    }
    let text = skelport_ir::format::head_text(&head[..head.len().min(4096)]);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with("; FBX") && text.contains("FBXHeaderExtension") {
        100
    } else if text.contains("FBXHeaderExtension:") && text.contains("FBXVersion:") {
        90
    } else {
        0
    }
}

impl Format for FbxFormat {
    fn name(&self) -> &'static str {
        "fbx"
    }
    fn description(&self) -> &'static str {
        "Autodesk FBX (.fbx, binary and ASCII, 6.1-7.7; read-only): skin clusters, bind poses, skinned meshes"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["fbx"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        sniff(head)
    }
    fn can_write(&self) -> bool {
        false
    }
    fn holds(&self) -> Holds {
        HOLDS
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "fbx", fuzz_target: "fbx" }]
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        read::read(input, opts, diag).map_err(Into::into)
    }
    fn write(&self, _doc: &Document, _opts: &WriteOptions, _diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Err(FbxError::Write(READ_ONLY.into()).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"Kaydara FBX Binary  \0\x1a\0\xe8\x1c\0\0"), 100);
        assert_eq!(sniff(b"; FBX 7.5.0 project file\n; ----\nFBXHeaderExtension:  {\n"), 100);
        assert_eq!(sniff(b"FBXHeaderExtension:  {\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7500\n"), 90);
        assert_eq!(sniff(b"Kaydara FBX Binary"), 0);
        assert_eq!(sniff(b"{\"asset\":{\"version\":\"2.0\"}}"), 0);
        assert_eq!(sniff(b""), 0);
    }

    #[test]
    fn writing_is_refused_with_the_formats_to_use() {
        let doc = Document::new(skelport_ir::Frame::GLTF);
        let err = FbxFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
        assert!(err.contains("read-only") && err.contains("`glb`"), "{err}");
    }
}
