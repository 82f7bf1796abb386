//! `sl-skeleton`: the viewer's `avatar_skeleton.xml` as a read-only format, so `skelport inspect
//! avatar_skeleton.xml` shows the SL skeleton (133 bones and 26 collision volumes).

use crate::skeleton::{SlJoint, SlSkeleton, Support};
use serde::{Deserialize, Serialize};
use skelport_ir::{
    Bone, BoneId, Diagnostics, Document, Extension, Format, FormatError, Frame, Holds, Input, InputKind, InputRole, Output, ReadOptions,
    Skeleton, WriteOptions,
};
use std::collections::HashMap;

/// The `sl-skeleton` format (read-only).
pub struct SlSkeletonFormat;

/// What each bone keeps of avatar_skeleton.xml that the IR does not model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlSkeletonBoneExt {
    /// `bone` or `collision_volume`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub end: [f64; 3],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pivot: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected: Option<bool>,
    pub group: String,
    pub support: Support,
}

impl Extension for SlSkeletonBoneExt {
    const NAMESPACE: &'static str = "sl-skeleton";
}

/// One attachment point as kept in the skeleton's `sl-skeleton` extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttachmentPointExt {
    pub id: u32,
    pub name: String,
    pub joint: String,
    pub position: [f64; 3],
    pub rotation: [f64; 3],
    pub location: String,
    pub hud: bool,
}

/// The skeleton-level extension: the attachment points (from the built-in avatar_lad.xml table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlSkeletonExt {
    pub attachment_points: Vec<AttachmentPointExt>,
}

impl Extension for SlSkeletonExt {
    const NAMESPACE: &'static str = "sl-skeleton";
}

/// The SL skeleton (bones and collision volumes) as an IR document in the SL frame.
pub fn skeleton_document(sl: &SlSkeleton) -> Document {
    let mut doc = Document::new(Frame::SECOND_LIFE);
    doc.source_format = Some("sl-skeleton".into());
    let mut sk = Skeleton::new("avatar_skeleton");
    let mut ids: HashMap<SlJoint, BoneId> = HashMap::new();
    for &j in sl.order() {
        let e = match j {
            SlJoint::Bone(i) => {
                let b = &sl.bones[i];
                SlSkeletonBoneExt {
                    kind: "bone".into(),
                    aliases: b.aliases.iter().map(|a| a.to_string()).collect(),
                    end: b.end.to_array(),
                    pivot: Some(b.pivot.to_array()),
                    connected: Some(b.connected),
                    group: b.group.to_string(),
                    support: b.support,
                }
            }
            SlJoint::CollisionVolume(i) => {
                let c = &sl.collision_volumes[i];
                SlSkeletonBoneExt {
                    kind: "collision_volume".into(),
                    aliases: Vec::new(),
                    end: c.end.to_array(),
                    pivot: None,
                    connected: None,
                    group: c.group.to_string(),
                    support: c.support,
                }
            }
            _ => continue,
        };
        let parent = sl.parent(j).and_then(|p| ids.get(&p).copied());
        let mut bone = Bone::new(sl.name(j), parent, sl.default_rest(j));
        bone.ext.set(&e);
        ids.insert(j, sk.push(bone));
    }
    sk.ext.set(&SlSkeletonExt {
        attachment_points: sl
            .attachment_points
            .iter()
            .map(|a| AttachmentPointExt {
                id: a.id,
                name: a.name.to_string(),
                joint: a.joint.to_string(),
                position: a.position.to_array(),
                rotation: a.rotation.to_array(),
                location: a.location.to_string(),
                hud: a.hud,
            })
            .collect(),
    });
    doc.skeletons.push(sk);
    doc
}

impl Format for SlSkeletonFormat {
    fn name(&self) -> &'static str {
        "sl-skeleton"
    }
    fn description(&self) -> &'static str {
        "Second Life avatar_skeleton.xml (read-only)"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        if memchr::memmem::find(&head[..head.len().min(4096)], b"<linden_skeleton").is_some() {
            100
        } else {
            0
        }
    }
    fn can_write(&self) -> bool {
        false
    }
    fn holds(&self) -> Holds {
        // The one SL skeleton: each bone's rotation and scale.
        Holds { scale: true, orientations: true, ..Holds::NOTHING }
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "sl-skeleton", fuzz_target: "sl_skeleton" }]
    }
    fn namespace(&self) -> Option<&'static str> {
        Some(<SlSkeletonBoneExt as Extension>::NAMESPACE)
    }
    fn read(&self, input: Input<'_>, _opts: &ReadOptions, _diag: &mut Diagnostics) -> Result<Document, FormatError> {
        let name = input.display_name();
        let text = std::str::from_utf8(input.bytes)
            .map_err(|e| crate::SlError::encoding(&name, e.valid_up_to(), "not UTF-8 text; avatar_skeleton.xml is ASCII"))?;
        let sl = SlSkeleton::from_xml(text, None, &name)?;
        Ok(skeleton_document(&sl))
    }
    fn write(&self, _doc: &Document, _opts: &WriteOptions, _diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Err(crate::SlError::write("sl-skeleton is read-only; write `dae` instead").into())
    }
    fn humanoid_names(&self) -> Option<&'static str> {
        Some("sl-bento")
    }
}
