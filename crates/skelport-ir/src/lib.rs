//! # skelport-ir — the intermediate representation every format meets in
//!
//! A [`Document`] is what a reader produces and a writer consumes. It holds:
//!
//! * **[`Skeleton`]s** — flat arrays of [`Bone`]s kept *parents before children*: a bone's
//!   `parent` is a [`BoneId`] (a typed index into the same skeleton) that is always smaller than
//!   the bone's own index. Every bone has a rest [`Transform`] relative to its parent (roots:
//!   relative to the document's space), an optional `length` (the tail lies at local `+Y × length`,
//!   Blender's convention, so formats with tails keep them), an optional Blender `roll` (kept as a
//!   fact; the orientation itself is always in `rest`), a deform flag, an optional mirror bone and
//!   optional MPFB-style placement [`anchor::BoneAnchors`] used to refit a rig onto another mesh.
//! * **[`Mesh`]es** — optional geometry: positions, faces (polygons), normals and texture
//!   coordinate sets (each per vertex or per face corner), named vertex groups.
//! * **[`Skin`]s** — bind a mesh's vertices to a skeleton's joints: sparse per-vertex
//!   [`Influences`] (joint slot, weight), one inverse bind matrix per joint (the *bind pose*,
//!   which need not equal the rest pose) and a bind-shape matrix.
//! * A **[`Frame`]** — up axis, forward axis, handedness and metres per unit — on every document.
//!   [`Document::convert_frame`] maps a document into another frame exactly; same-format round
//!   trips never call it.
//! * **[`Extensions`]** on the document, skeletons, bones, meshes and skins: namespaced
//!   (`"mpfb"`, `"anvil"`, `"gltf"`, …) JSON values, typed through the [`Extension`] trait, that
//!   let a format round-trip what the IR does not model without the IR knowing about it.
//!
//! ## Invariants and who checks them
//! Readers should produce documents that pass [`validate::validate`]; it is a separate pass (like
//! naga's `valid`) that checks unique bone names, parent order (hence no cycles), finite numbers,
//! unit quaternions, index ranges and non-negative weights, naming the bone or vertex at fault.
//! Writers may assume a validated document.
//!
//! ## Layers
//! * [`frame`] — coordinate frames and the exact change-of-frame maps.
//! * [`skin`] — influence storage and the operations converters share (normalize, limit,
//!   prune, merge, remap).
//! * [`proc`] — algorithms several writers share: world transforms, tail inference.
//! * [`format`](mod@format) — the [`format::Format`] trait every format crate implements, with options and
//!   diagnostics (warnings and the loss report).
//! * [`irjson`] — `ir-json`, the IR as lossless JSON.
//! * [`budget`] and [`files`] — reading untrusted input safely: the decode budget every reader
//!   charges, and the one way to open a file a document names.
//! * [`names`] — unique names in linear time, and the work counter scaling tests read.
//! * [`xml`] — the one XML text escaping every XML writer uses, and names XML cannot hold.

// `deny`, not `forbid`: `num` reads the words of a number list without bounds checks, with its
// proof beside each read (docs/performance.md has the measurement); nothing else may.
#![deny(unsafe_code)]

pub mod anchor;
pub mod budget;
pub mod document;
pub mod ext;
pub mod files;
pub mod format;
pub mod frame;
pub mod irjson;
pub mod jsonskip;
pub mod names;
pub mod num;
pub mod pose;
pub mod proc;
pub mod rest;
pub mod retarget;
pub mod skin;
pub mod suggest;
pub mod testing;
pub mod trace;
pub mod validate;
pub mod xml;

pub use anchor::{Anchor, AnchorStrategy, BoneAnchors};
pub use budget::{Budget, BudgetError};
pub use document::{
    Attribute, Bone, BoneId, Document, Faces, IdOverflow, Mesh, MeshId, Normals, Skeleton, SkeletonId, Transform, UvSet, Uvs, VertexGroup,
};
pub use ext::{Extension, Extensions, RUN_LOCAL};
pub use format::{
    Diagnostic, Diagnostics, ExtensionUse, Fault, FaultKind, Format, FormatError, Holds, InMemoryFile, Input, InputKind, InputRole, Output,
    Place, ReadOptions, Severity, WriteOptions,
};
pub use frame::{Axis, Frame, Handedness};
pub use skin::{Influences, Padded, Skin};

/// Re-exported math types (glam, f64) so format crates use the same versions.
pub use glam::{DMat3, DMat4, DQuat, DVec2, DVec3, DVec4};

/// Vertices plus corners (see [`mesh_work`]) from which per-mesh and per-skin passes (reading,
/// frame conversion, validation, encoding) run on every core: below it, starting threads costs
/// more than it saves.
pub const PARALLEL_FROM: usize = 200_000;

/// The size of the per-mesh work in `meshes`: vertices plus face corners.
pub fn mesh_work(meshes: &[Mesh]) -> usize {
    meshes.iter().map(|m| m.positions.len() + m.faces.indices.len()).sum()
}

/// `f` over `items`, on rayon's pool when `parallel`, else on this thread. Results keep the
/// items' order either way, so output (and which error comes first) never depends on the thread
/// count: the one mechanism behind every parallel pass in a single conversion.
pub fn map_in_order<T: Send, R: Send>(items: Vec<T>, parallel: bool, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
    if parallel {
        use rayon::prelude::*;
        items.into_par_iter().map(f).collect()
    } else {
        items.into_iter().map(f).collect()
    }
}

/// Bones from which [`big_to_free`] calls a document big: a few thousand small allocations (a
/// bone's name, its extension's JSON) take about as long to free as the pool to start.
pub const DROP_ASIDE_FROM: usize = 4096;

/// Whether `doc`, or a tree made from it (a writer's JSON), is big enough to be freed on the pool
/// ([`drop_aside`]): [`DROP_ASIDE_FROM`] bones, or meshes of [`PARALLEL_FROM`] work (their
/// arrays, and a writer's accessors and per-mesh lists).
pub fn big_to_free(doc: &Document) -> bool {
    doc.skeletons.iter().map(|s| s.bones.len()).sum::<usize>() >= DROP_ASIDE_FROM || mesh_work(&doc.meshes) >= PARALLEL_FROM
}

/// Drop `value` on rayon's pool when `big`, else here. Freeing a tree of millions of small
/// allocations (the glTF JSON of a 65,535-bone skeleton: 128 ms) is work nothing waits for: on
/// the pool it overlaps what the caller does next (assembling and saving the file), and a process
/// that ends first simply leaves it to the kernel. Small values are dropped here, as starting the
/// pool would cost more than the drop.
///
/// Callers ask [`big_to_free`] of the document the value is or was made from.
pub fn drop_aside<T: Send + 'static>(value: T, big: bool) {
    if big {
        rayon::spawn(move || drop(value));
    } else {
        drop(value);
    }
}

/// Whether this CPU runs the AVX2 copies of the hot loops (`xml::scan_bytes`, the validator's
/// block tests, `num::decimals_into`, the glTF mesh encoder): AVX2 with BMI1 and BMI2, all
/// x86-64 CPUs since 2013. Each copy is compiled for (at most) these features, so this one test
/// makes every call of one safe. Cached by the standard library after the first call.
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    /// Sends the thread it is dropped on.
    struct Tell(std::sync::mpsc::Sender<std::thread::ThreadId>);
    impl Drop for Tell {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }

    /// Big from 4,096 bones or from meshes of `PARALLEL_FROM` work, not below either.
    #[test]
    fn big_to_free_counts_bones_and_mesh_work() {
        use crate::testing::synthetic_body;
        let small = synthetic_body(crate::Frame::GLTF, 4095, 4, 4);
        assert!(!super::big_to_free(&small));
        assert!(super::big_to_free(&synthetic_body(crate::Frame::GLTF, 4096, 4, 4)));
        // Three bones: big by its mesh alone (160,000 vertices and their corners).
        assert!(super::big_to_free(&synthetic_body(crate::Frame::GLTF, 3, 400, 400)));
        assert!(!super::big_to_free(&synthetic_body(crate::Frame::GLTF, 3, 40, 40)));
    }

    #[test]
    fn drop_aside_frees_a_big_value_on_the_pool_and_a_small_one_here() {
        let (tx, rx) = std::sync::mpsc::channel();
        super::drop_aside(Tell(tx.clone()), false);
        assert_eq!(rx.try_recv(), Ok(std::thread::current().id()), "dropped before returning, here");
        super::drop_aside(Tell(tx), true);
        let on = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("dropped on the pool");
        assert_ne!(on, std::thread::current().id());
    }
}
