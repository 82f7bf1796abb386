//! # skelport-sl — Second Life bento Collada and the SL avatar skeleton
//!
//! * [`DaeFormat`] (`dae`): a lenient Collada 1.4.1 reader (plain, or zipped as `.zae`: [`zae`]) for rigged SL meshes and a writer that
//!   produces what the viewer's importer accepts (Z-up, metres, canonical joint names, the SL
//!   joint hierarchy, ≤ 110 joints per skin, ≤ 4 influences per vertex, every vertex weighted).
//! * [`SlSkeletonFormat`] (`sl-skeleton`): reads the viewer's `avatar_skeleton.xml`.
//! * [`SlSkeleton`]: the skeleton's facts (compiled in as [`sl_table`], or read from another
//!   `avatar_skeleton.xml`), and [`generate_table`] which produces that table.
//! * [`validate_sl`]: checks a `.dae` against every importer rule, naming vertex and joint;
//!   [`validate_target`] is `validate --target sl` for any document.
//! * [`importer`]: how the viewer's importer cuts a geometry into faces and keys weights.

#![forbid(unsafe_code)]

pub mod error;
pub mod skeleton;
pub mod skelfmt;
#[rustfmt::skip]
pub mod sl_table;

pub use error::SlError;
pub use skeleton::{generate_table, SlAttachmentPoint, SlBone, SlCollisionVolume, SlJoint, SlSkeleton, Support};
pub use skelfmt::{skeleton_document, SlSkeletonFormat};
pub mod collada;
mod dae_check;
pub mod importer;
pub mod read;
pub mod validate;
pub mod write;
mod xml;
pub mod zae;

pub use validate::{validate_bytes as validate_sl, validate_target, Level, TargetReport, Violation};

use skelport_ir::{Diagnostics, Document, Format, FormatError, Holds, Input, InputKind, InputRole, Output, ReadOptions, WriteOptions};

/// `dae`: Collada 1.4.1 rigged for the Second Life importer.
pub struct DaeFormat;

fn skeleton_for(path: Option<&std::path::Path>) -> Result<std::borrow::Cow<'static, SlSkeleton>, SlError> {
    Ok(match path {
        Some(p) => std::borrow::Cow::Owned(SlSkeleton::from_file(p)?),
        None => std::borrow::Cow::Borrowed(SlSkeleton::builtin()),
    })
}

impl Format for DaeFormat {
    fn name(&self) -> &'static str {
        "dae"
    }
    fn description(&self) -> &'static str {
        "Collada 1.4.1 (.dae) rigged to the Second Life skeleton; generic Collada skins too"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["dae"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        if zae::looks_like(head) {
            // Zipped Collada (.zae): found by content; `.zae` is not claimed as an extension
            // because the writer writes plain .dae.
            return 90;
        }
        // The bytes searched, not a lossy copy of them: an ASCII word is found in either alike.
        if memchr::memmem::find(&head[..head.len().min(4096)], b"<COLLADA").is_some() {
            100
        } else {
            0
        }
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        let name = input.display_name();
        Ok(read::read(input.bytes, &name, opts, diag)?)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        let sl = skeleton_for(opts.sl_skeleton.as_deref())?;
        Ok(Output::single(write::write(doc, opts, &sl, diag)?.into_bytes()))
    }
    fn holds(&self) -> Holds {
        // A skeleton of SL joints is mapped onto SL's own (docs/formats/sl.md); any other is
        // written as it is.
        Holds {
            skins: true,
            meshes: true,
            scale: true,
            uvs: true,
            normals: true,
            any_skeleton: true,
            orientations: true,
            bind_pose: true,
            ..Holds::NOTHING
        }
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "dae", fuzz_target: "dae" }]
    }
    #[cfg(feature = "fuzzing")]
    fn fuzz_check(&self, data: &[u8]) -> usize {
        collada::fuzz_check(data)
    }
    fn humanoid_names(&self) -> Option<&'static str> {
        Some("sl-bento")
    }
}
