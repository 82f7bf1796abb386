//! # skelport-vrm — VRM 1.0 avatars (`.vrm`)
//!
//! [`VrmFormat`] (`"vrm"`) writes a GLB with the `VRMC_vrm` 1.0 extension: the humanoid (each
//! VRM bone role → the node of the rig's bone playing it), the meta (name, authors, licence terms)
//! and the rest pose VRM needs (a T-pose facing +Z, standing on Y = 0, in metres, uniform scales,
//! unique node names). It builds on skelport-gltf, which writes the skeleton, skins and meshes.
//!
//! * The humanoid comes from a humanoid map: one of the [`humanoid::BUILT_IN`] maps, chosen by
//!   matching bone names (MPFB default, game_engine, cmu_mb, Mixamo names and the MPFB mixamo
//!   rigs, Second Life bento, the AnvilToolkit AC biped), the roles a VRM source carried, or a
//!   map file ([`WriteOptions::humanoid_map`]). A missing required bone is an error naming it.
//! * The T-pose is [`skelport_ir::rest::t_pose`], baked into the mesh.
//! * The meta is [`WriteOptions::vrm_meta`]'s file, a VRM source's meta, or placeholders with a
//!   warning; licence terms not given are the most restrictive VRM allows.
//!
//! Reading a `.vrm` (1.0, or 0.x, migrated as UniVRM does: turned to face +Z, its meta mapped by
//! [`meta::from_v0`]) gives the glTF document with the humanoid as roles on the skeleton
//! (`ext["vrm"]`, read only here; the humanoid's nodes are bones even where no skin binds them),
//! from which [`humanoid::retarget_map`] makes the rename map the CLI's `--map humanoid` needs.
//!
//! See `docs/formats/vrm.md` for what is written and lost.

mod error;
pub mod humanoid;
pub mod meta;
mod read;
pub mod spec;
mod write;

pub use error::VrmError;
pub use humanoid::HumanoidMap;
pub use write::{human_bones, prepare, Prepared};

use skelport_ir::{Diagnostics, Document, Format, FormatError, Holds, Input, InputKind, InputRole, Output, ReadOptions, WriteOptions};

/// VRM 1.0 (`.vrm`): a glTF binary with the `VRMC_vrm` extension.
#[derive(Debug, Clone, Copy, Default)]
pub struct VrmFormat;

impl Format for VrmFormat {
    fn name(&self) -> &'static str {
        "vrm"
    }
    fn description(&self) -> &'static str {
        "VRM avatar (.vrm): reads VRM 1.0 and 0.x (migrated as UniVRM does); writes a glTF binary + VRMC_vrm 1.0 humanoid and meta, in a T-pose facing +Z"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["vrm"]
    }
    /// A VRM is a GLB read by the glTF reader: the same structural rules, and a humanoid whose
    /// bones all name existing nodes and that has every required bone.
    fn structural(&self) -> &'static [&'static str] {
        &[skelport_gltf::ACCESSOR_RANGE, skelport_gltf::IBM_STRIDE, read::BONE_NOT_READ, read::MISSING_REQUIRED]
    }
    /// A GLB naming a VRM extension in its first bytes is surely VRM; any other GLB may be (the
    /// extension usually comes last in the JSON): enough for a `.vrm` file, less than `glb`'s.
    fn sniff(&self, head: &[u8]) -> u8 {
        if !head.starts_with(b"glTF") {
            return 0;
        }
        let text = skelport_ir::format::head_text(head);
        if text.contains("\"VRMC_vrm\"") || text.contains("\"VRM\"") {
            100
        } else {
            60
        }
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        read::read(input, opts, diag).map_err(Into::into)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        write::write(doc, opts, diag).map_err(Into::into)
    }
    fn write_frame(&self) -> Option<skelport_ir::Frame> {
        Some(skelport_ir::Frame::GLTF)
    }
    /// A glTF binary underneath, written in a T-pose: rest orientations change (the re-rest is
    /// reported as a loss) and the skin is re-bound at the new rest; uniform bone scales are
    /// kept, others moved into children and inverse binds (VRM allows only uniform scale).
    fn holds(&self) -> Holds {
        Holds { orientations: false, bind_pose: false, humanoid_only: true, ..Holds::EVERYTHING }
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "vrm", fuzz_target: "vrm" }]
    }
    fn applies_rest_pose(&self) -> bool {
        true
    }
}

/// Re-rest `doc` into the T-pose for any target format (`--rest-pose t-pose`): the humanoid is
/// found as the VRM writer finds it (`humanoid_map`, stored roles or the built-in maps), the pose
/// baked into the mesh; the change is reported as a loss (`rest.t-pose`). `doc` must keep the IR's
/// rules (`skelport_ir::validate::validate`), as a writer's document does: the humanoid is found by
/// walking its parents, and the mesh re-bound through its skins (`skelport::convert` checks first).
pub fn t_pose(doc: &mut Document, humanoid_map: Option<&std::path::Path>, diag: &mut Diagnostics) -> Result<(), VrmError> {
    let map = match humanoid_map {
        Some(p) => Some(HumanoidMap::parse(&write::read_file(p, "humanoid map")?, &p.display().to_string())?),
        None => None,
    };
    let found = humanoid::find(doc, map.as_ref())?;
    let report = skelport_ir::rest::t_pose(doc, found.skeleton, &found.humanoid, skelport_ir::rest::Rebind::Bake)
        .map_err(|e| VrmError::Rig(e.to_string()))?;
    let turned: Vec<String> = report.turned.iter().map(|(n, d)| format!("\"{n}\" {d:.1}°")).collect();
    if turned.is_empty() {
        diag.info("rest.t-pose", "already in the T-pose: no bone turned");
    } else {
        diag.loss(
            "rest.t-pose",
            format!(
                "rest pose changed to a T-pose ({}): {} bones turned ({}), the mesh re-bound in that pose ({} vertices moved)",
                found.source,
                turned.len(),
                turned.join(", "),
                report.vertices_moved
            ),
        );
    }
    Ok(())
}
