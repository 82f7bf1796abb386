//! The Second Life avatar skeleton: the facts of `avatar_skeleton.xml` (bones, collision volumes)
//! and the attachment points of `avatar_lad.xml`, the legal joint-name set the viewer's Collada
//! importer matches skin joints against, and the generator of the compiled-in table
//! ([`crate::sl_table`]).

use crate::error::SlError;
use foldhash::{HashMap, HashMapExt};
use skelport_ir::FaultKind;
use skelport_ir::{DQuat, DVec3, Transform};
use std::fmt::Write as _;
use std::sync::OnceLock;

/// Which skeleton generation a joint belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Support {
    /// The 26 legacy bones and the collision volumes.
    Base,
    /// The Bento bones.
    Extended,
}

/// One bone row of the compiled-in table (see [`crate::sl_table`]).
#[derive(Debug, Clone, Copy)]
pub struct BoneRow {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// Index of the parent in [`crate::sl_table::BONES`]; `None` for `mPelvis`.
    pub parent: Option<u16>,
    pub pos: [f64; 3],
    pub rot: [f64; 3],
    pub scale: [f64; 3],
    pub end: [f64; 3],
    pub pivot: [f64; 3],
    pub connected: bool,
    pub group: &'static str,
    pub support: Support,
}

/// One collision-volume row of the compiled-in table.
#[derive(Debug, Clone, Copy)]
pub struct CollisionVolumeRow {
    pub name: &'static str,
    /// Index of the bone it hangs from in [`crate::sl_table::BONES`].
    pub parent: u16,
    pub pos: [f64; 3],
    pub rot: [f64; 3],
    pub scale: [f64; 3],
    pub end: [f64; 3],
    pub group: &'static str,
    pub support: Support,
}

/// One attachment-point row of the compiled-in table.
#[derive(Debug, Clone, Copy)]
pub struct AttachmentRow {
    pub id: u32,
    /// The name as avatar_lad.xml spells it (may contain spaces).
    pub name: &'static str,
    /// The joint it hangs from (a bone name, `mRoot` or `mScreen`).
    pub joint: &'static str,
    pub position: [f64; 3],
    pub rotation: [f64; 3],
    pub location: &'static str,
    pub group: i32,
    pub pie_slice: Option<i32>,
    pub visible_in_first_person: bool,
    pub hud: bool,
    pub max_attachment_offset: Option<f64>,
}

/// A name of the SL skeleton: borrowed from the compiled-in table (which is assembled on every
/// run that reads or writes SL Collada: a copy of each of its 800 names cost a third of that),
/// owned when read from a user's `avatar_skeleton.xml`.
pub type Name = std::borrow::Cow<'static, str>;

/// A bone of the SL skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct SlBone {
    pub name: Name,
    /// Other names the importer maps to this bone (`avatar_<name>`, Poser/BVH names).
    pub aliases: Vec<Name>,
    /// Parent bone index; `None` for the root (`mPelvis`).
    pub parent: Option<usize>,
    /// Default position relative to the parent, metres (the value the 0.1 mm offset test uses).
    pub pos: DVec3,
    /// Euler angles in degrees, X then Y then Z.
    pub rot: DVec3,
    pub scale: DVec3,
    /// Bone tail relative to the joint, in the joint's frame.
    pub end: DVec3,
    /// The legacy skin offset point (6 decimals); not a joint position.
    pub pivot: DVec3,
    pub connected: bool,
    pub group: Name,
    pub support: Support,
}

/// A collision volume ("fitted mesh" joint).
#[derive(Debug, Clone, PartialEq)]
pub struct SlCollisionVolume {
    pub name: Name,
    /// Index of the bone it hangs from.
    pub parent: usize,
    pub pos: DVec3,
    pub rot: DVec3,
    /// Ellipsoid size.
    pub scale: DVec3,
    pub end: DVec3,
    pub group: Name,
    pub support: Support,
}

/// An attachment point of avatar_lad.xml.
#[derive(Debug, Clone, PartialEq)]
pub struct SlAttachmentPoint {
    pub id: u32,
    /// As avatar_lad.xml spells it (may contain spaces).
    pub name: Name,
    /// The joint it hangs from (a bone name, `mRoot` or `mScreen`).
    pub joint: Name,
    pub position: DVec3,
    pub rotation: DVec3,
    pub location: Name,
    pub group: i32,
    pub pie_slice: Option<i32>,
    pub visible_in_first_person: bool,
    pub hud: bool,
    pub max_attachment_offset: Option<f64>,
}

impl SlAttachmentPoint {
    /// The joint name used in Collada files: spaces replaced by `_`.
    pub fn joint_name(&self) -> Name {
        if self.name.contains(' ') {
            Name::Owned(self.name.replace(' ', "_"))
        } else {
            self.name.clone()
        }
    }
}

/// Any joint the SL avatar has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlJoint {
    /// `mRoot`, the avatar origin (created by the viewer).
    Root,
    /// `mScreen`, the HUD joint (created by the viewer).
    Screen,
    /// Index into [`SlSkeleton::bones`].
    Bone(usize),
    /// Index into [`SlSkeleton::collision_volumes`].
    CollisionVolume(usize),
    /// Index into [`SlSkeleton::attachment_points`].
    Attachment(usize),
}

/// The SL skeleton's facts: bones, collision volumes, attachment points and the legal names.
#[derive(Debug, Clone, PartialEq)]
pub struct SlSkeleton {
    pub bones: Vec<SlBone>,
    pub collision_volumes: Vec<SlCollisionVolume>,
    pub attachment_points: Vec<SlAttachmentPoint>,
    /// Every legal name → the joint it means (not `mRoot` and `mScreen`, which the viewer
    /// creates in code and the importer does not accept as skin joints).
    names: HashMap<Name, SlJoint>,
    /// All joints, parents before children (depth first, collision volumes before child bones,
    /// as avatar_skeleton.xml lists them).
    order: Vec<SlJoint>,
    /// Position of each joint in `order`.
    rank: HashMap<SlJoint, usize>,
}

/// The importer's per-skin joint limit (`LL_MAX_JOINTS_PER_MESH_OBJECT`).
pub const MAX_JOINTS_PER_SKIN: usize = 110;
/// The importer's per-vertex influence limit.
pub const MAX_INFLUENCES: usize = 4;
/// The smallest weight the upload decoder keeps (it clamps to [0.001, 0.999]).
pub const MIN_WEIGHT: f64 = 0.001;
/// A joint position is an offset only when it is this far (metres) from the default `pos`.
pub const JOINT_OFFSET_THRESHOLD: f64 = 0.0001;

fn v3(a: [f64; 3]) -> DVec3 {
    DVec3::from_array(a)
}

/// Quaternion of SL Euler angles in degrees (viewer `mayaQ(x, y, z, XYZ)`: X first, then Y, then Z).
pub fn euler_xyz_degrees(rot: DVec3) -> DQuat {
    let r = rot * (std::f64::consts::PI / 180.0);
    (DQuat::from_rotation_z(r.z) * DQuat::from_rotation_y(r.y) * DQuat::from_rotation_x(r.x)).normalize()
}

impl SlSkeleton {
    /// The skeleton compiled into skelport (from the viewer's files, see [`crate::sl_table`]).
    pub fn builtin() -> &'static SlSkeleton {
        static CELL: OnceLock<SlSkeleton> = OnceLock::new();
        CELL.get_or_init(|| {
            use crate::sl_table::{BONES, COLLISION_VOLUMES};
            let bones = BONES
                .iter()
                .map(|r| SlBone {
                    name: r.name.into(),
                    aliases: r.aliases.iter().map(|&s| Name::Borrowed(s)).collect(),
                    parent: r.parent.map(usize::from),
                    pos: v3(r.pos),
                    rot: v3(r.rot),
                    scale: v3(r.scale),
                    end: v3(r.end),
                    pivot: v3(r.pivot),
                    connected: r.connected,
                    group: r.group.into(),
                    support: r.support,
                })
                .collect();
            let collision_volumes = COLLISION_VOLUMES
                .iter()
                .map(|r| SlCollisionVolume {
                    name: r.name.into(),
                    parent: r.parent.into(),
                    pos: v3(r.pos),
                    rot: v3(r.rot),
                    scale: v3(r.scale),
                    end: v3(r.end),
                    group: r.group.into(),
                    support: r.support,
                })
                .collect();
            let attachment_points = builtin_attachments();
            // The table was checked when it was generated; a failure here is a build defect.
            Self::assemble(bones, collision_volumes, attachment_points).expect("the compiled-in SL table is consistent")
        })
    }

    /// Parse an `avatar_skeleton.xml` (and optionally an `avatar_lad.xml` for the attachment
    /// points; without it the built-in attachment points are used). `file` names the skeleton
    /// file in errors.
    pub fn from_xml(skeleton_xml: &str, lad_xml: Option<&str>, file: &str) -> Result<SlSkeleton, SlError> {
        let (bones, cvs) = parse_skeleton(skeleton_xml, file)?;
        let aps = match lad_xml {
            Some(l) => parse_lad(l, "avatar_lad.xml")?,
            None => builtin_attachments(),
        };
        Self::assemble(bones, cvs, aps).map_err(|(kind, m)| SlError::invalid(file, 0, 0, m).with_kind(kind))
    }

    /// Read another `avatar_skeleton.xml` from disk (`--sl-skeleton FILE`).
    pub fn from_file(path: &std::path::Path) -> Result<SlSkeleton, SlError> {
        let name = path.display().to_string();
        let bytes = skelport_ir::files::read_user_file(path, None)
            .map_err(|e| SlError::invalid(&name, 0, 0, format!("cannot read the SL skeleton file: {e}")))?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| SlError::encoding(&name, e.valid_up_to(), "not UTF-8 text; avatar_skeleton.xml must be ASCII/UTF-8"))?;
        Self::from_xml(text, None, &name)
    }

    fn assemble(
        bones: Vec<SlBone>,
        collision_volumes: Vec<SlCollisionVolume>,
        attachment_points: Vec<SlAttachmentPoint>,
    ) -> Result<SlSkeleton, (FaultKind, String)> {
        // Sized up front: the built-in table is assembled on every run.
        let aliases: usize = bones.iter().map(|b| b.aliases.len()).sum();
        let mut names: HashMap<Name, SlJoint> =
            HashMap::with_capacity(2 + bones.len() + aliases + collision_volumes.len() + 2 * attachment_points.len());
        fn add(names: &mut HashMap<Name, SlJoint>, n: &Name, j: SlJoint) -> Result<(), (FaultKind, String)> {
            match names.insert(n.clone(), j) {
                Some(prev) if prev != j => Err((FaultKind::Structure, format!("the joint name \"{n}\" is defined twice"))),
                _ => Ok(()),
            }
        }
        // The viewer's own joints: no file may define them (it would shadow them), yet they are
        // not legal skin joints (the importer's joint map, LLModelPreview::getJointAliases, is
        // built from the bones, collision volumes and attachment points only).
        let taken = |n: &str| matches!(n, "mRoot" | "mScreen");
        if let Some(n) = bones
            .iter()
            .flat_map(|b| std::iter::once(&b.name).chain(&b.aliases))
            .chain(collision_volumes.iter().map(|c| &c.name))
            .chain(attachment_points.iter().map(|a| &a.name))
            .find(|n| taken(n))
        {
            return Err((FaultKind::Structure, format!("the joint name \"{n}\" is the viewer's own joint; rename it")));
        }
        for (i, b) in bones.iter().enumerate() {
            if b.parent.is_some_and(|p| p >= i) {
                return Err((FaultKind::Structure, format!("bone {} is listed before its parent", b.name)));
            }
            add(&mut names, &b.name, SlJoint::Bone(i))?;
        }
        for (i, b) in bones.iter().enumerate() {
            for a in &b.aliases {
                // An alias may not shadow a canonical name.
                if names.get(a.as_ref()).is_some_and(|j| *j != SlJoint::Bone(i)) {
                    return Err((FaultKind::Structure, format!("alias \"{a}\" of {} is already a joint name", b.name)));
                }
                add(&mut names, a, SlJoint::Bone(i))?;
            }
        }
        for (i, c) in collision_volumes.iter().enumerate() {
            if c.parent >= bones.len() {
                return Err((FaultKind::Structure, format!("collision volume {} has no parent bone", c.name)));
            }
            add(&mut names, &c.name, SlJoint::CollisionVolume(i))?;
        }
        for (i, a) in attachment_points.iter().enumerate() {
            add(&mut names, &a.name, SlJoint::Attachment(i))?;
            add(&mut names, &a.joint_name(), SlJoint::Attachment(i))?;
        }
        let mut sk = SlSkeleton { bones, collision_volumes, attachment_points, names, order: Vec::new(), rank: HashMap::new() };
        for a in &sk.attachment_points {
            if !matches!(sk.joint(&a.joint), Some(SlJoint::Bone(_) | SlJoint::Root | SlJoint::Screen)) {
                return Err((
                    FaultKind::Reference,
                    format!("attachment point \"{}\" hangs from joint {}, which does not exist", a.name, a.joint),
                ));
            }
        }
        // Depth-first order, parents first; iterative so a malformed file cannot recurse deeply.
        let mut children: HashMap<SlJoint, Vec<SlJoint>> = HashMap::new();
        for (i, c) in sk.collision_volumes.iter().enumerate() {
            children.entry(SlJoint::Bone(c.parent)).or_default().push(SlJoint::CollisionVolume(i));
        }
        for (i, b) in sk.bones.iter().enumerate() {
            if let Some(p) = b.parent {
                children.entry(SlJoint::Bone(p)).or_default().push(SlJoint::Bone(i));
            }
        }
        for i in 0..sk.attachment_points.len() {
            if let Some(p) = sk.parent(SlJoint::Attachment(i)) {
                children.entry(p).or_default().push(SlJoint::Attachment(i));
            }
        }
        let mut roots = vec![SlJoint::Root];
        roots.extend((0..sk.bones.len()).filter(|&i| sk.bones[i].parent.is_none()).map(SlJoint::Bone));
        roots.push(SlJoint::Screen);
        let mut stack: Vec<SlJoint> = roots.into_iter().rev().collect();
        while let Some(j) = stack.pop() {
            sk.order.push(j);
            if let Some(ch) = children.get(&j) {
                stack.extend(ch.iter().rev().copied());
            }
        }
        sk.rank = sk.order.iter().enumerate().map(|(i, j)| (*j, i)).collect();
        Ok(sk)
    }

    /// The joint a legal skin-joint name means (exact, case-sensitive, like the importer):
    /// bones and their aliases, collision volumes, attachment points as spelled and with `_`
    /// for spaces. Not `mRoot` or `mScreen` (see [`SlSkeleton::joint`]).
    pub fn resolve(&self, name: &str) -> Option<SlJoint> {
        self.names.get(name).copied()
    }

    /// Any joint of the viewer's avatar by name: the legal names and `mRoot`, `mScreen` (which
    /// the viewer creates in code: attachment points hang from them, but a skin weighted to
    /// them loses its weights in the importer).
    pub fn joint(&self, name: &str) -> Option<SlJoint> {
        match name {
            "mRoot" => Some(SlJoint::Root),
            "mScreen" => Some(SlJoint::Screen),
            _ => self.resolve(name),
        }
    }

    /// The canonical name of a joint: bone and collision-volume names, attachment names with `_`
    /// for spaces, `mRoot`, `mScreen`.
    pub fn name(&self, j: SlJoint) -> String {
        match j {
            SlJoint::Root => "mRoot".into(),
            SlJoint::Screen => "mScreen".into(),
            SlJoint::Bone(i) => self.bones[i].name.to_string(),
            SlJoint::CollisionVolume(i) => self.collision_volumes[i].name.to_string(),
            SlJoint::Attachment(i) => self.attachment_points[i].joint_name().into_owned(),
        }
    }

    /// The canonical name for a legal name (aliases rewritten), `None` when the name is not legal.
    pub fn canonical(&self, name: &str) -> Option<String> {
        self.resolve(name).map(|j| self.name(j))
    }

    /// The parent joint (`None` for `mPelvis`, `mRoot` and `mScreen`).
    pub fn parent(&self, j: SlJoint) -> Option<SlJoint> {
        match j {
            SlJoint::Root | SlJoint::Screen => None,
            SlJoint::Bone(i) => self.bones[i].parent.map(SlJoint::Bone),
            SlJoint::CollisionVolume(i) => Some(SlJoint::Bone(self.collision_volumes[i].parent)),
            SlJoint::Attachment(i) => self.joint(&self.attachment_points[i].joint),
        }
    }

    /// The default rest transform relative to the parent: `pos` (never `pivot`), the Euler
    /// rotation and scale (non-trivial only on collision volumes and attachment points).
    pub fn default_rest(&self, j: SlJoint) -> Transform {
        match j {
            SlJoint::Root | SlJoint::Screen => Transform::IDENTITY,
            SlJoint::Bone(i) => {
                let b = &self.bones[i];
                Transform { translation: b.pos, rotation: euler_xyz_degrees(b.rot), scale: b.scale }
            }
            SlJoint::CollisionVolume(i) => {
                let c = &self.collision_volumes[i];
                Transform { translation: c.pos, rotation: euler_xyz_degrees(c.rot), scale: c.scale }
            }
            SlJoint::Attachment(i) => {
                let a = &self.attachment_points[i];
                Transform::from_rt(euler_xyz_degrees(a.rotation), a.position)
            }
        }
    }

    /// The default position relative to the parent (`pos`).
    pub fn default_pos(&self, j: SlJoint) -> DVec3 {
        self.default_rest(j).translation
    }

    /// The default position in avatar space (sum of `pos` up the chain: SL joints are
    /// axis-aligned at rest).
    pub fn default_world_pos(&self, j: SlJoint) -> DVec3 {
        let mut p = DVec3::ZERO;
        let mut cur = Some(j);
        let mut guard = 0;
        while let Some(c) = cur {
            p += self.default_pos(c);
            cur = self.parent(c);
            guard += 1;
            if guard > self.order.len() + 2 {
                break;
            }
        }
        p
    }

    /// All joints, parents before children.
    pub fn order(&self) -> &[SlJoint] {
        &self.order
    }

    /// Position of a joint in [`SlSkeleton::order`].
    pub fn rank(&self, j: SlJoint) -> usize {
        self.rank.get(&j).copied().unwrap_or(usize::MAX)
    }

    /// Every legal skin-joint name ([`SlSkeleton::resolve`]), sorted.
    pub fn legal_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.names.keys().map(|k| k.as_ref()).collect();
        v.sort_unstable();
        v
    }
}

fn builtin_attachments() -> Vec<SlAttachmentPoint> {
    crate::sl_table::ATTACHMENT_POINTS
        .iter()
        .map(|r| SlAttachmentPoint {
            id: r.id,
            name: r.name.into(),
            joint: r.joint.into(),
            position: v3(r.position),
            rotation: v3(r.rotation),
            location: r.location.into(),
            group: r.group,
            pie_slice: r.pie_slice,
            visible_in_first_person: r.visible_in_first_person,
            hud: r.hud,
            max_attachment_offset: r.max_attachment_offset,
        })
        .collect()
}

fn parse_xml<'a>(text: &'a str, file: &str) -> Result<roxmltree::Document<'a>, SlError> {
    roxmltree::Document::parse_with_options(text, roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() })
        .map_err(|e| SlError::xml(file, &e))
}

struct At<'a, 'b> {
    doc: &'b roxmltree::Document<'a>,
    file: &'b str,
}

impl At<'_, '_> {
    fn err(&self, node: roxmltree::Node, msg: impl Into<String>) -> SlError {
        let p = self.doc.text_pos_at(node.range().start);
        SlError::invalid(self.file, p.row as usize, p.col as usize, msg)
    }
    fn attr<'n>(&self, node: roxmltree::Node<'n, '_>, name: &str) -> Result<&'n str, SlError> {
        node.attribute(name)
            .ok_or_else(|| self.err(node, format!("<{}> has no `{name}` attribute", node.tag_name().name())).with_kind(FaultKind::Value))
    }
    fn vec3(&self, node: roxmltree::Node, name: &str) -> Result<DVec3, SlError> {
        let s = self.attr(node, name)?;
        let v: Vec<f64> = s
            .split_ascii_whitespace()
            .map(str::parse::<f64>)
            .collect::<Result<_, _>>()
            .map_err(|_| self.err(node, format!("attribute {name}=\"{s}\" is not three numbers")).with_kind(FaultKind::Value))?;
        match v.as_slice() {
            [x, y, z] if x.is_finite() && y.is_finite() && z.is_finite() => Ok(DVec3::new(*x, *y, *z)),
            _ => Err(self.err(node, format!("attribute {name}=\"{s}\" must be three finite numbers")).with_kind(FaultKind::Value)),
        }
    }
    fn opt_vec3(&self, node: roxmltree::Node, name: &str, default: DVec3) -> Result<DVec3, SlError> {
        if node.has_attribute(name) {
            self.vec3(node, name)
        } else {
            Ok(default)
        }
    }
    fn support(&self, node: roxmltree::Node) -> Result<Support, SlError> {
        match node.attribute("support").unwrap_or("base") {
            "base" => Ok(Support::Base),
            "extended" => Ok(Support::Extended),
            s => Err(self.err(node, format!("support=\"{s}\" must be `base` or `extended`")).with_kind(FaultKind::Value)),
        }
    }
}

/// Parse avatar_skeleton.xml into bones and collision volumes.
fn parse_skeleton(text: &str, file: &str) -> Result<(Vec<SlBone>, Vec<SlCollisionVolume>), SlError> {
    let doc = parse_xml(text, file)?;
    let at = At { doc: &doc, file };
    let root = doc.root_element();
    if root.tag_name().name() != "linden_skeleton" {
        return Err(at.err(root, format!("root element is <{}>, expected <linden_skeleton>: this is not an avatar_skeleton.xml; give the viewer's avatar_skeleton.xml or one edited from it", root.tag_name().name())));
    }
    let mut bones: Vec<SlBone> = Vec::new();
    let mut cvs: Vec<SlCollisionVolume> = Vec::new();
    // Explicit stack of (element, parent bone index) instead of recursion.
    let mut stack: Vec<(roxmltree::Node, Option<usize>)> = root.children().filter(|n| n.is_element()).rev().map(|n| (n, None)).collect();
    while let Some((n, parent)) = stack.pop() {
        match n.tag_name().name() {
            "bone" => {
                let b = SlBone {
                    name: at.attr(n, "name")?.to_string().into(),
                    aliases: n.attribute("aliases").unwrap_or("").split_ascii_whitespace().map(|a| Name::Owned(a.into())).collect(),
                    parent,
                    pos: at.vec3(n, "pos")?,
                    rot: at.opt_vec3(n, "rot", DVec3::ZERO)?,
                    scale: at.opt_vec3(n, "scale", DVec3::ONE)?,
                    end: at.opt_vec3(n, "end", DVec3::ZERO)?,
                    pivot: at.opt_vec3(n, "pivot", DVec3::ZERO)?,
                    connected: n.attribute("connected") == Some("true"),
                    group: n.attribute("group").unwrap_or("").to_string().into(),
                    support: at.support(n)?,
                };
                if b.name.is_empty() || b.name.contains(char::is_whitespace) {
                    return Err(at
                        .err(n, format!("bone name \"{}\" must be non-empty without spaces", b.name))
                        .with_kind(FaultKind::Value));
                }
                bones.push(b);
                let me = bones.len() - 1;
                stack.extend(n.children().filter(|c| c.is_element()).rev().map(|c| (c, Some(me))));
            }
            "collision_volume" => {
                let Some(p) = parent else {
                    return Err(at.err(n, "a <collision_volume> fits only inside a <bone>"));
                };
                cvs.push(SlCollisionVolume {
                    name: at.attr(n, "name")?.to_string().into(),
                    parent: p,
                    pos: at.vec3(n, "pos")?,
                    rot: at.opt_vec3(n, "rot", DVec3::ZERO)?,
                    scale: at.opt_vec3(n, "scale", DVec3::ONE)?,
                    end: at.opt_vec3(n, "end", DVec3::ZERO)?,
                    group: n.attribute("group").unwrap_or("").to_string().into(),
                    support: at.support(n)?,
                });
            }
            other => return Err(at.err(n, format!("unexpected element <{other}>: only <bone> and <collision_volume> fit here"))),
        }
    }
    let count = |name: &str| root.attribute(name).and_then(|s| s.trim().parse::<usize>().ok());
    match count("num_bones") {
        Some(n) if n == bones.len() => {}
        Some(n) => {
            return Err(at
                .err(root, format!("num_bones=\"{n}\" but the file has {} <bone> elements", bones.len()))
                .with_kind(FaultKind::Value))
        }
        None => {
            return Err(at.err(root, "<linden_skeleton> needs a num_bones attribute (the viewer requires it)").with_kind(FaultKind::Value))
        }
    }
    if let Some(n) = count("num_collision_volumes") {
        if n != cvs.len() {
            return Err(at
                .err(root, format!("num_collision_volumes=\"{n}\" but the file has {} <collision_volume> elements", cvs.len()))
                .with_kind(FaultKind::Value));
        }
    }
    Ok((bones, cvs))
}

/// Parse the `<attachment_point>`s of avatar_lad.xml.
fn parse_lad(text: &str, file: &str) -> Result<Vec<SlAttachmentPoint>, SlError> {
    let doc = parse_xml(text, file)?;
    let at = At { doc: &doc, file };
    let mut out = Vec::new();
    let int = |n: roxmltree::Node, name: &str| -> Result<Option<i64>, SlError> {
        match n.attribute(name) {
            None => Ok(None),
            Some(s) => s.trim().parse::<i64>().map(Some).map_err(|_| at.err(n, format!("{name}=\"{s}\" is not an integer"))),
        }
    };
    for n in doc.descendants().filter(|n| n.has_tag_name("attachment_point")) {
        let id = int(n, "id")?.ok_or_else(|| at.err(n, "<attachment_point> has no id"))?;
        let max_off = match n.attribute("max_attachment_offset") {
            None => None,
            Some(s) => Some(s.trim().parse::<f64>().map_err(|_| at.err(n, format!("max_attachment_offset=\"{s}\" is not a number")))?),
        };
        out.push(SlAttachmentPoint {
            id: u32::try_from(id).map_err(|_| at.err(n, format!("id {id} out of range")))?,
            name: at.attr(n, "name")?.to_string().into(),
            joint: at.attr(n, "joint")?.to_string().into(),
            position: at.opt_vec3(n, "position", DVec3::ZERO)?,
            rotation: at.opt_vec3(n, "rotation", DVec3::ZERO)?,
            location: n.attribute("location").unwrap_or("").to_string().into(),
            group: int(n, "group")?.unwrap_or(0) as i32,
            pie_slice: int(n, "pie_slice")?.map(|v| v as i32),
            visible_in_first_person: n.attribute("visible_in_first_person") == Some("true"),
            hud: n.attribute("hud") == Some("true"),
            max_attachment_offset: max_off,
        });
    }
    if out.is_empty() {
        return Err(SlError::invalid(file, 0, 0, "no <attachment_point> elements found; is this avatar_lad.xml?"));
    }
    Ok(out)
}

/// Rust literal of an f64 that parses back to the same value.
fn lit(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains(['.', 'e', 'E']) || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

fn lit3(v: DVec3) -> String {
    format!("[{}, {}, {}]", lit(v.x), lit(v.y), lit(v.z))
}

fn string_lit(s: &str) -> String {
    format!("{s:?}")
}

fn support_lit(s: Support) -> &'static str {
    match s {
        Support::Base => "Support::Base",
        Support::Extended => "Support::Extended",
    }
}

/// Generate the Rust source of [`crate::sl_table`] from the viewer's `avatar_skeleton.xml` and
/// `avatar_lad.xml` (what `cargo xtask gen-sl-table` writes to `crates/skelport-sl/src/sl_table.rs`).
pub fn generate_table(skeleton_xml: &str, lad_xml: &str) -> Result<String, SlError> {
    let sk = SlSkeleton::from_xml(skeleton_xml, Some(lad_xml), "avatar_skeleton.xml")?;
    let mut o = String::new();
    let _ = writeln!(o, "// generated by `cargo xtask gen-sl-table`; do not edit");
    let _ = writeln!(o, "//");
    let _ = writeln!(o, "// Facts of the Second Life avatar skeleton, from the viewer's avatar_skeleton.xml and the");
    let _ = writeln!(o, "// attachment points of avatar_lad.xml (secondlife/viewer, indra/newview/character/).");
    let _ = writeln!(o, "// Columns: name, aliases, parent index, pos, rot (degrees), scale, end, pivot, connected, group, support.");
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "//! The compiled-in SL skeleton table ({} bones, {} collision volumes, {} attachment points).",
        sk.bones.len(),
        sk.collision_volumes.len(),
        sk.attachment_points.len()
    );
    let _ = writeln!(o);
    let _ = writeln!(o, "use crate::skeleton::{{AttachmentRow, BoneRow, CollisionVolumeRow, Support}};");
    let _ = writeln!(o);
    let _ = writeln!(o, "/// Number of bones.");
    let _ = writeln!(o, "pub const NUM_BONES: usize = {};", sk.bones.len());
    let _ = writeln!(o, "/// Number of collision volumes.");
    let _ = writeln!(o, "pub const NUM_COLLISION_VOLUMES: usize = {};", sk.collision_volumes.len());
    let _ = writeln!(o, "/// Number of attachment points.");
    let _ = writeln!(o, "pub const NUM_ATTACHMENT_POINTS: usize = {};", sk.attachment_points.len());
    let _ = writeln!(o);
    let _ = writeln!(o, "/// The bones, parents before children.");
    let _ = writeln!(o, "pub static BONES: [BoneRow; NUM_BONES] = [");
    for b in &sk.bones {
        let aliases: Vec<String> = b.aliases.iter().map(|a| string_lit(a)).collect();
        let _ = writeln!(
            o,
            "    BoneRow {{ name: {}, aliases: &[{}], parent: {}, pos: {}, rot: {}, scale: {}, end: {}, pivot: {}, connected: {}, group: {}, support: {} }},",
            string_lit(&b.name),
            aliases.join(", "),
            b.parent.map(|p| format!("Some({p})")).unwrap_or_else(|| "None".into()),
            lit3(b.pos),
            lit3(b.rot),
            lit3(b.scale),
            lit3(b.end),
            lit3(b.pivot),
            b.connected,
            string_lit(&b.group),
            support_lit(b.support)
        );
    }
    let _ = writeln!(o, "];");
    let _ = writeln!(o);
    let _ = writeln!(o, "/// The collision volumes; `parent` indexes [`BONES`].");
    let _ = writeln!(o, "pub static COLLISION_VOLUMES: [CollisionVolumeRow; NUM_COLLISION_VOLUMES] = [");
    for c in &sk.collision_volumes {
        let _ = writeln!(
            o,
            "    CollisionVolumeRow {{ name: {}, parent: {}, pos: {}, rot: {}, scale: {}, end: {}, group: {}, support: {} }},",
            string_lit(&c.name),
            c.parent,
            lit3(c.pos),
            lit3(c.rot),
            lit3(c.scale),
            lit3(c.end),
            string_lit(&c.group),
            support_lit(c.support)
        );
    }
    let _ = writeln!(o, "];");
    let _ = writeln!(o);
    let _ = writeln!(o, "/// The attachment points of avatar_lad.xml (names as spelled there; Collada uses `_` for spaces).");
    let _ = writeln!(o, "pub static ATTACHMENT_POINTS: [AttachmentRow; NUM_ATTACHMENT_POINTS] = [");
    for a in &sk.attachment_points {
        let _ = writeln!(
            o,
            "    AttachmentRow {{ id: {}, name: {}, joint: {}, position: {}, rotation: {}, location: {}, group: {}, pie_slice: {}, visible_in_first_person: {}, hud: {}, max_attachment_offset: {} }},",
            a.id,
            string_lit(&a.name),
            string_lit(&a.joint),
            lit3(a.position),
            lit3(a.rotation),
            string_lit(&a.location),
            a.group,
            a.pie_slice.map(|p| format!("Some({p})")).unwrap_or_else(|| "None".into()),
            a.visible_in_first_person,
            a.hud,
            a.max_attachment_offset.map(|m| format!("Some({})", lit(m))).unwrap_or_else(|| "None".into())
        );
    }
    let _ = writeln!(o, "];");
    let _ = writeln!(o);
    let legal = sk.legal_names();
    let _ = writeln!(o, "/// Every joint name the importer accepts in a skin (bones, aliases, collision volumes, attachment");
    let _ = writeln!(o, "/// points as spelled and with `_` for spaces; not mRoot or mScreen), sorted.");
    let _ = writeln!(o, "pub static LEGAL_NAMES: [&str; {}] = [", legal.len());
    for chunk in legal.chunks(8) {
        let items: Vec<String> = chunk.iter().map(|s| string_lit(s)).collect();
        let _ = writeln!(o, "    {},", items.join(", "));
    }
    let _ = writeln!(o, "];");
    Ok(o)
}
