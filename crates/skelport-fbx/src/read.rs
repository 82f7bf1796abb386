//! FBX → IR: ufbx loads the scene (from memory, within the decode budget); this module picks the
//! bones, their rest pose, the skinned meshes and their weights.

use crate::{FbxError, FbxErrorKind};
use skelport_ir::document::{Faces, UvSet};
use skelport_ir::pose::{posed_worlds, random_pose};
use skelport_ir::proc;
use skelport_ir::{
    Axis, Bone, BoneId, DMat3, DMat4, DQuat, DVec2, DVec3, DVec4, Diagnostics, Document, Frame, Handedness, Influences, Input, Mesh,
    MeshId, Place, ReadOptions, Skeleton, SkeletonId, Skin, Transform,
};
use std::collections::HashMap;

/// Diagnostic codes of this reader.
pub mod codes {
    /// The file's axes and unit, said once.
    pub const FRAME: &str = "fbx.frame";
    /// Dual-quaternion skinning read as linear.
    pub const DUAL_QUATERNION: &str = "fbx.dual-quaternion";
    /// Blend shapes dropped.
    pub const BLEND_SHAPES: &str = "fbx.blend-shapes";
    /// Animation dropped.
    pub const ANIMATION: &str = "fbx.animation";
    /// Materials dropped.
    pub const MATERIALS: &str = "fbx.materials";
    /// Constraints dropped.
    pub const CONSTRAINTS: &str = "fbx.constraints";
    /// A mesh without a skin dropped.
    pub const UNSKINNED: &str = "fbx.unskinned-mesh";
    /// A bone's rest scale taken out.
    pub const SCALE: &str = "fbx.bone-scale";
    /// No skin: the limb nodes read as the skeleton.
    pub const SKINLESS: &str = "fbx.no-skin";
    /// Something odd in the file that was read past.
    pub const ODD: &str = "fbx.odd";
    /// A bone name used twice, renamed.
    pub const RENAMED: &str = "fbx.renamed";
}

/// The largest rotation of the pose test that measures dual-quaternion skinning (radians), as
/// `skelport diff` poses.
const POSE_ANGLE: f64 = 0.6;
/// Poses of that test.
const POSES: u64 = 4;

fn mat(m: &ufbx::Matrix) -> DMat4 {
    DMat4::from_cols(
        DVec4::new(m.m00, m.m10, m.m20, 0.0),
        DVec4::new(m.m01, m.m11, m.m21, 0.0),
        DVec4::new(m.m02, m.m12, m.m22, 0.0),
        DVec4::new(m.m03, m.m13, m.m23, 1.0),
    )
}

fn axis(a: ufbx::CoordinateAxis) -> Option<Axis> {
    Some(match a {
        ufbx::CoordinateAxis::PositiveX => Axis::PosX,
        ufbx::CoordinateAxis::NegativeX => Axis::NegX,
        ufbx::CoordinateAxis::PositiveY => Axis::PosY,
        ufbx::CoordinateAxis::NegativeY => Axis::NegY,
        ufbx::CoordinateAxis::PositiveZ => Axis::PosZ,
        ufbx::CoordinateAxis::NegativeZ => Axis::NegZ,
        ufbx::CoordinateAxis::Unknown => return None,
    })
}

/// The file's frame: its up axis, its front axis (where characters face: Mixamo's and Maya's
/// characters face +Z in a +Y-up file), the handedness its right axis makes, and its unit.
fn frame_of(settings: &ufbx::SceneSettings) -> Option<Frame> {
    let (right, up, front) = (axis(settings.axes.right)?, axis(settings.axes.up)?, axis(settings.axes.front)?);
    // A character facing `front` has its left on the viewer's right.
    let handedness = if up.vector().cross(front.vector()) == right.vector() {
        Handedness::Right
    } else if front.vector().cross(up.vector()) == right.vector() {
        Handedness::Left
    } else {
        return None;
    };
    let f = Frame { up, forward: front, handedness, metres_per_unit: settings.unit_meters };
    f.check().ok().map(|()| f)
}

fn axis_name(a: Axis) -> &'static str {
    match a {
        Axis::PosX => "+X",
        Axis::NegX => "-X",
        Axis::PosY => "+Y",
        Axis::NegY => "-Y",
        Axis::PosZ => "+Z",
        Axis::NegZ => "-Z",
    }
}

/// Load the scene: from memory only, nothing else opened, both allocators within the budget.
fn load(input: &Input<'_>, opts: &ReadOptions) -> Result<ufbx::SceneRoot, FbxError> {
    let file = input.display_name();
    let budget = opts.budget_for(input);
    let left = budget.limit().saturating_sub(budget.used());
    // Half of what is left for each allocator; 0 would mean "no limit" to ufbx.
    let share = usize::try_from(left / 2).unwrap_or(usize::MAX).max(1);
    let allocator = |limit: usize| ufbx::AllocatorOpts { memory_limit: limit, ..Default::default() };
    // The last read offset ufbx reports (every ~1,024 units of parse work): where its error
    // names no place, the failure is in the records after it.
    let mut reached = 0u64;
    let mut progress = |p: &ufbx::Progress| {
        reached = reached.max(p.bytes_read);
        ufbx::ProgressResult::Continue
    };
    let load_opts = ufbx::LoadOpts {
        temp_allocator: allocator(share),
        result_allocator: allocator(share),
        // Untrusted input: never open another file (external references, geometry caches).
        load_external_files: false,
        evaluate_caches: false,
        ignore_embedded: true,
        // Animation is dropped with a loss line: its curves stay as elements (the line counts
        // them) but their key arrays are neither inflated nor parsed, which was most of the read
        // time of an animated file (Mixamo's: 230 M instructions, half of them inflating keys).
        ignore_animation: true,
        file_format: ufbx::FileFormat::Fbx,
        progress_cb: ufbx::ProgressCb::Mut(&mut progress),
        ..Default::default()
    };
    let loaded = ufbx::load_memory(input.bytes, load_opts);
    match loaded {
        Ok(scene) => {
            let used = scene.metadata.result_memory_used as u64 + scene.metadata.temp_memory_used as u64;
            budget.charge(used, &file, "the FBX scene")?;
            Ok(scene)
        }
        Err(e) => Err(parse_error(&file, &e, &budget, left, input.bytes.len() as u64, reached)),
    }
}

/// ufbx's error as data. Its place: the stage of the parse ufbx's error stack names (the stack
/// is compiled out of the `ufbx` crate's C build, so this is rare); else the place the kind
/// implies (byte 0, the header, for a file that is no FBX or of a version not read; the end of
/// a cut-short file); else the records after `reached`, the last offset ufbx reported reading.
fn parse_error(file: &str, e: &ufbx::Error, budget: &skelport_ir::Budget, left: u64, len: u64, reached: u64) -> FbxError {
    // ufbx's stack names the stage of the parse that failed, innermost first.
    let stack: Vec<String> =
        e.stack[..(e.stack_size as usize).min(e.stack.len())].iter().map(|f| f.description.to_string()).filter(|d| !d.is_empty()).collect();
    let stage = stack.first().cloned();
    let after = || stage.clone().map(Place::Element).unwrap_or_else(|| Place::Element(format!("the records after byte {reached}")));
    use ufbx::ErrorType as T;
    let (kind, fix, place) = match e.type_ {
        T::MemoryLimit | T::AllocationLimit | T::OutOfMemory => {
            // Report it as every reader reports its budget.
            let element = match &stage {
                Some(s) => format!("the FBX scene ({s})"),
                // ufbx names no stage: the failure is in the records after the last offset it
                // reported reading.
                None => format!("the FBX scene (the records after byte {reached})"),
            };
            return match budget.charge(left.saturating_add(1), file, &element) {
                Err(b) => FbxError::Budget(b),
                Ok(()) => FbxError::Parse {
                    file: file.into(),
                    place: after(),
                    kind: FbxErrorKind::Invalid,
                    message: "out of memory while parsing".into(),
                    fix: "the file asks for far more memory than its size justifies: it is damaged or made to exhaust memory",
                },
            };
        }
        T::TruncatedFile | T::EmptyFile => (FbxErrorKind::Truncated, "the file is cut short: copy or export it again", Place::Byte(len)),
        T::UnrecognizedFileFormat => {
            (FbxErrorKind::Unrecognized, "this is not an FBX file: give `--from` the format it is in", Place::Byte(0))
        }
        T::UnsupportedVersion => {
            (FbxErrorKind::Unrecognized, "re-export it from a current FBX exporter (FBX 6.1 to 7.7 are read), or as glTF", Place::Byte(0))
        }
        T::NodeDepthLimit => (FbxErrorKind::TooDeep, "the file nests deeper than any real scene: it is damaged", after()),
        _ => (FbxErrorKind::Invalid, "the file is damaged: export it again", after()),
    };
    let mut message =
        if stack.len() > 1 { format!("{} (in {})", e.description, stack[1..].join(" < ")) } else { e.description.to_string() };
    match e.type_ {
        T::TruncatedFile | T::EmptyFile => message.push_str(" (the file ends there)"),
        T::UnrecognizedFileFormat | T::UnsupportedVersion => message.push_str(" (its header)"),
        _ if stage.is_none() => message.push_str(" (ufbx names no record)"),
        _ => {}
    }
    if !e.info().is_empty() {
        message.push_str(&format!(": {}", e.info()));
    }
    FbxError::Parse { file: file.into(), place, kind, message, fix }
}

/// The rotation part of an affine matrix, with scale and shear taken out (X kept, then Y
/// orthogonalised; a mirror is dropped); `None` when the matrix has no rotation to find.
fn rotation_of(m: &DMat4) -> Option<DQuat> {
    let x = m.x_axis.truncate();
    let y = m.y_axis.truncate();
    let x = x.try_normalize()?;
    let y = (y - x * x.dot(y)).try_normalize()?;
    let z = x.cross(y);
    let q = DQuat::from_mat3(&DMat3::from_cols(x, y, z)).normalize();
    q.is_finite().then_some(q)
}

fn scale_of(m: &DMat4) -> DVec3 {
    DVec3::new(m.x_axis.truncate().length(), m.y_axis.truncate().length(), m.z_axis.truncate().length())
}

/// Read an FBX file into a document.
pub fn read(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FbxError> {
    let file = input.display_name();
    let scene = load(&input, opts)?;
    let scene: &ufbx::Scene = &scene;

    let frame = match frame_of(&scene.settings) {
        Some(f) => f,
        None => {
            diag.warn(codes::ODD, "the file's axis system is not a valid frame: read as +Y up, characters facing +Z, centimetres");
            Frame { metres_per_unit: 0.01, ..Frame::GLTF }
        }
    };
    diag.info(
        codes::FRAME,
        format!(
            "the file's frame is {} up, characters facing {}, {}-handed, {} m per unit (FBX {}, {}, written by {}); each writer converts it to its own",
            axis_name(frame.up),
            axis_name(frame.forward),
            if frame.handedness == Handedness::Right { "right" } else { "left" },
            frame.metres_per_unit,
            scene.metadata.version,
            if scene.metadata.ascii { "ASCII" } else { "binary" },
            if scene.metadata.creator.is_empty() { "an unnamed exporter" } else { &scene.metadata.creator },
        ),
    );

    let n = scene.nodes.len();
    let nodes: Vec<&ufbx::Node> = scene.nodes.iter().map(|r| &**r).collect();
    let id = |node: &ufbx::Node| node.element.typed_id as usize;

    // What binds each node: the first cluster's bind matrix, then the first bind pose's.
    let mut cluster_bind: Vec<Option<DMat4>> = vec![None; n];
    for skin in &scene.skin_deformers {
        for cl in &skin.clusters {
            if let Some(b) = cl.bone_node.as_ref() {
                if let Some(slot) = cluster_bind.get_mut(id(b)) {
                    slot.get_or_insert(mat(&cl.bind_to_world));
                }
            }
        }
    }
    let mut pose_bind: Vec<Option<DMat4>> = vec![None; n];
    for pose in scene.poses.iter().filter(|p| p.is_bind_pose) {
        for bp in pose.bone_poses.iter() {
            if let Some(slot) = pose_bind.get_mut(id(&bp.bone_node)) {
                slot.get_or_insert(mat(&bp.bone_to_world));
            }
        }
    }

    // Parents before children, from the root.
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut stack: Vec<&ufbx::Node> = vec![&scene.root_node];
    let mut seen = vec![false; n];
    while let Some(node) = stack.pop() {
        let i = id(node);
        if i >= n || std::mem::replace(&mut seen[i], true) {
            continue;
        }
        order.push(i);
        for c in node.children.iter().rev() {
            stack.push(&**c);
        }
    }
    let parent_of = |i: usize| nodes[i].parent.as_ref().map(|p| id(p)).filter(|&p| p < n);
    let mut bound: Vec<bool> = cluster_bind.iter().map(Option::is_some).collect();
    // A skeleton without a skin (an animation export, a rig before binding): its limb nodes.
    let skinless = !bound.contains(&true);
    if skinless {
        for (i, node) in nodes.iter().enumerate() {
            bound[i] = !node.is_root && node.attrib_type == ufbx::ElementType::Bone;
        }
    }
    let boneish = |i: usize| !nodes[i].is_root && (bound[i] || nodes[i].attrib_type == ufbx::ElementType::Bone);
    // Below a limb node (or a bound one): such nodes are bones whatever they are.
    let mut below_bone = vec![false; n];
    for &i in &order {
        if let Some(p) = parent_of(i) {
            below_bone[i] = below_bone[p] || boneish(p);
        }
    }
    let mut bound_below = bound.clone();
    for &i in order.iter().rev() {
        if bound_below[i] {
            if let Some(p) = parent_of(i) {
                bound_below[p] = true;
            }
        }
    }
    let include: Vec<bool> = (0..n).map(|i| !nodes[i].is_root && bound_below[i] && (boneish(i) || below_bone[i])).collect();
    let included = order.iter().filter(|&&i| include[i]).count();
    if included == 0 {
        let meshes = scene.meshes.len();
        return Err(FbxError::Content {
            file,
            // Models (nodes) and deformers (skin clusters) are the records of FBX's Objects.
            place: Place::Element("record \"Objects\"".into()),
            message: format!(
                "the file has no bones: no skin cluster binds a node and no node is a limb node ({meshes} mesh(es), {} node(s)): there is no rig to read; export it with its armature and skin (in Blender: the armature and its meshes selected, \"Armature\" and \"Mesh\" object types)",
                n.saturating_sub(1)
            ),
        });
    }

    // Rest pose: world matrices (as the file binds them), then made rigid.
    let mut skeleton = Skeleton::new("Armature");
    let mut bone_of: Vec<Option<BoneId>> = vec![None; n];
    let mut raw_world: Vec<DMat4> = vec![DMat4::IDENTITY; n];
    let mut rigid: Vec<(DQuat, DVec3)> = vec![(DQuat::IDENTITY, DVec3::ZERO); n];
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut scaled = 0usize;
    for &i in order.iter().filter(|&&i| include[i]) {
        let node = nodes[i];
        // The nearest included ancestor.
        let mut p = parent_of(i);
        while let Some(q) = p {
            if include[q] {
                break;
            }
            p = parent_of(q);
        }
        let world = if let Some(m) = cluster_bind[i] {
            m
        } else if let Some(m) = pose_bind[i] {
            m
        } else if let Some(q) = p {
            // Unbound and out of the bind pose: where the hierarchy puts it relative to its
            // parent's bind.
            raw_world[q] * mat(&nodes[q].node_to_world).inverse() * mat(&node.node_to_world)
        } else {
            mat(&node.node_to_world)
        };
        let world = if world.is_finite() { world } else { mat(&node.node_to_world) };
        raw_world[i] = world;
        let rot = rotation_of(&world).unwrap_or_else(|| {
            diag.warn_at(
                codes::ODD,
                Place::bone(&node.element.name),
                format!("bone \"{}\": its bind matrix has no rotation (a zero scale); read unrotated", node.element.name),
            );
            DQuat::IDENTITY
        });
        let head = world.w_axis.truncate();
        if (scale_of(&world) - DVec3::ONE).abs().max_element() > 1e-4 {
            scaled += 1;
        }
        rigid[i] = (rot, head);
        let (prot, phead) = p.map(|q| rigid[q]).unwrap_or((DQuat::IDENTITY, DVec3::ZERO));
        let inv = prot.inverse();
        let rest = Transform::from_rt((inv * rot).normalize(), inv * (head - phead));
        let mut name = node.element.name.to_string();
        if name.is_empty() {
            name = format!("node_{}", node.element.element_id);
        }
        let count = names.entry(name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            let new = format!("{name}.{:03}", *count - 1);
            diag.warn_at(
                codes::RENAMED,
                Place::bone(&name),
                format!("bone \"{name}\" is named twice in the file; the second is called \"{new}\""),
            );
            name = new;
        }
        let mut bone = Bone::new(name, p.and_then(|q| bone_of[q]), rest);
        bone.deform = cluster_bind[i].is_some();
        bone_of[i] = Some(skeleton.push(bone));
    }
    if scaled > 0 {
        diag.info(
            codes::SCALE,
            format!("{scaled} bone(s) are bound with a scale (the file's unit or a scaled armature): the bones are read rigid, the scale kept in the inverse bind matrices, so the mesh stands as the file binds it"),
        );
    }
    // The armature's name: the node above the root bones, where there is one.
    if let Some(&first) = order.iter().find(|&&i| include[i]) {
        if let Some(p) = parent_of(first).filter(|&p| !nodes[p].is_root) {
            let name = nodes[p].element.name.to_string();
            if !name.is_empty() {
                skeleton.name = name;
            }
        }
    }

    let mut doc = Document::new(frame);
    doc.source_format = Some("fbx".into());
    doc.skeletons.push(skeleton);
    let skeleton_id = SkeletonId::from_index(0);
    let budget = opts.budget_for(&input);

    // Skinned meshes.
    let mut dq = Vec::new();
    let mut unskinned = 0usize;
    for mesh in &scene.meshes {
        // A deformer whose clusters bind no bone skins nothing.
        let binds = |d: &ufbx::SkinDeformer| d.clusters.iter().any(|c| c.bone_node.is_some());
        let Some(deformer) = mesh.skin_deformers.iter().find(|d| binds(d)) else {
            unskinned += 1;
            continue;
        };
        let Some(node) = mesh.element.instances.iter().next() else { continue };
        let mesh_name = if node.element.name.is_empty() { mesh.element.name.to_string() } else { node.element.name.to_string() };
        if mesh.skin_deformers.len() > 1 {
            diag.warn_at(
                codes::ODD,
                Place::named("mesh", &mesh_name),
                format!("mesh \"{mesh_name}\": {} skin deformers; the first is read", mesh.skin_deformers.len()),
            );
        }
        budget.charge_items::<DVec3>(mesh.num_vertices + 2 * mesh.num_indices, &file, &format!("mesh \"{mesh_name}\""))?;
        budget.charge_items::<(u32, u32, f64)>(deformer.weights.len(), &file, &format!("skin \"{mesh_name}\""))?;
        // The mesh's world transform at bind: what the first cluster binds it with.
        let bind_shape = deformer
            .clusters
            .iter()
            .find(|c| c.bone_node.is_some())
            .map(|c| mat(&c.bind_to_world) * mat(&c.geometry_to_bone))
            .filter(|m| m.is_finite() && m.determinant().abs() > 1e-30)
            .unwrap_or_else(|| mat(&node.geometry_to_world));
        let inv_bind_shape = bind_shape.inverse();
        let normal_matrix = DMat3::from_mat4(bind_shape).inverse().transpose();
        let mirrored = bind_shape.determinant() < 0.0;

        let positions: Vec<DVec3> = mesh.vertices.iter().map(|v| bind_shape.transform_point3(DVec3::new(v.x, v.y, v.z))).collect();
        let mut counts = Vec::with_capacity(mesh.num_faces);
        let mut corners: Vec<u32> = Vec::with_capacity(mesh.num_indices);
        for face in mesh.faces.iter() {
            if face.num_indices < 3 {
                continue;
            }
            counts.push(face.num_indices);
            let range = face.index_begin..face.index_begin + face.num_indices;
            if mirrored {
                // A mirroring bind flips the winding: turn it back.
                corners.extend(range.rev());
            } else {
                corners.extend(range);
            }
        }
        let vertex_of = |c: u32| mesh.vertex_indices.get(c as usize).copied().unwrap_or(0);
        let indices: Vec<u32> = corners.iter().map(|&c| vertex_of(c)).collect();
        if indices.iter().any(|&v| v as usize >= positions.len()) {
            return Err(FbxError::Content {
                file,
                place: Place::Element(format!("mesh \"{mesh_name}\"")),
                message: format!("a face names a vertex past its {} vertices; the file is damaged: export it again", positions.len()),
            });
        }
        // Per vertex where every corner of a vertex agrees (a smooth mesh stored by polygon
        // vertex, as Mixamo's are), as the other readers store them.
        let normals = mesh.vertex_normal.exists.then(|| {
            let attr = &mesh.vertex_normal;
            proc::per_vertex_if_uniform(
                positions.len(),
                &indices,
                corners
                    .iter()
                    .map(|&c| {
                        let v = attr.indices.get(c as usize).and_then(|&k| attr.values.get(k as usize));
                        v.map(|n| (normal_matrix * DVec3::new(n.x, n.y, n.z)).try_normalize().unwrap_or(DVec3::Y)).unwrap_or(DVec3::Y)
                    })
                    .collect(),
                DVec3::ZERO,
            )
        });
        let uvs: Vec<UvSet> = mesh
            .uv_sets
            .iter()
            .filter(|s| s.vertex_uv.exists)
            .map(|s| {
                let attr = &s.vertex_uv;
                let values = corners
                    .iter()
                    .map(|&c| {
                        attr.indices
                            .get(c as usize)
                            .and_then(|&k| attr.values.get(k as usize))
                            .map(|u| DVec2::new(u.x, u.y))
                            .unwrap_or(DVec2::ZERO)
                    })
                    .collect();
                UvSet { name: s.name.to_string(), uvs: proc::per_vertex_if_uniform(positions.len(), &indices, values, DVec2::ZERO) }
            })
            .collect();

        // Joints: one slot per bound bone, its inverse bind from its cluster.
        let mut slots: Vec<BoneId> = Vec::new();
        let mut inverse_bind: Vec<DMat4> = Vec::new();
        let mut slot_of_cluster: Vec<Option<u32>> = Vec::with_capacity(deformer.clusters.len());
        for cl in &deformer.clusters {
            let bone = cl.bone_node.as_ref().and_then(|b| bone_of.get(id(b)).copied().flatten());
            let Some(bone) = bone else {
                diag.warn_at(
                    codes::ODD,
                    Place::named("skin", &mesh_name),
                    format!("skin \"{mesh_name}\": cluster \"{}\" binds no node; its weights are dropped", cl.element.name),
                );
                slot_of_cluster.push(None);
                continue;
            };
            let slot = match slots.iter().position(|&b| b == bone) {
                Some(s) => s,
                None => {
                    let i = id(cl.bone_node.as_deref().unwrap_or(node));
                    let (rot, head) = rigid.get(i).copied().unwrap_or((DQuat::IDENTITY, DVec3::ZERO));
                    let rest_world = DMat4::from_rotation_translation(rot, head);
                    let ibm = rest_world.inverse() * mat(&cl.bind_to_world) * mat(&cl.geometry_to_bone) * inv_bind_shape;
                    slots.push(bone);
                    inverse_bind.push(if ibm.is_finite() { ibm } else { rest_world.inverse() });
                    slots.len() - 1
                }
            };
            slot_of_cluster.push(Some(slot as u32));
        }
        let vcount = positions.len();
        let mut triples = Vec::with_capacity(deformer.weights.len());
        let mut dq_weights = vec![0.0; vcount];
        for (v, sv) in deformer.vertices.iter().enumerate().take(vcount) {
            dq_weights[v] = sv.dq_weight;
            let begin = sv.weight_begin as usize;
            for w in deformer.weights.iter().skip(begin).take(sv.num_weights as usize) {
                if let Some(Some(slot)) = slot_of_cluster.get(w.cluster_index as usize) {
                    if w.weight.is_finite() && w.weight > 0.0 {
                        triples.push((v as u32, *slot, w.weight));
                    }
                }
            }
        }
        let influences = Influences::from_triples(vcount, triples);
        let mesh_id = MeshId::from_index(doc.meshes.len());
        doc.meshes.push(Mesh {
            name: mesh_name.clone(),
            positions,
            normals,
            uvs,
            faces: Faces { counts, indices },
            groups: Vec::new(),
            ext: Default::default(),
        });
        let skin_index = doc.skins.len();
        doc.skins.push(Skin {
            name: mesh_name.clone(),
            skeleton: skeleton_id,
            mesh: Some(mesh_id),
            joints: slots,
            inverse_bind,
            bind_shape: DMat4::IDENTITY,
            influences,
            ext: Default::default(),
        });
        let dq_share = match deformer.skinning_method {
            ufbx::SkinningMethod::DualQuaternion => Some(None),
            ufbx::SkinningMethod::BlendedDqLinear => Some(Some(dq_weights)),
            _ => None,
        };
        if let Some(share) = dq_share {
            dq.push((skin_index, share));
        }
    }
    for (skin, share) in dq {
        let moved = dual_quaternion_gap(&doc, skin, share.as_deref());
        let size = model_size(&doc);
        let name = &doc.skins[skin].name;
        diag.loss_at(
            codes::DUAL_QUATERNION,
            Place::named("skin", name),
            format!(
                "skin \"{name}\": dual-quaternion skinning{} becomes linear blend skinning (what every target format does); under the pose test (rotations up to {POSE_ANGLE} rad) vertices move up to {:.3} mm from where dual quaternions put them ({:.3}% of the model's size)",
                if share.is_some() { " (blended with linear per vertex)" } else { "" },
                moved * 1000.0,
                if size > 0.0 { 100.0 * moved / size } else { 0.0 }
            ),
        );
    }

    if unskinned > 0 {
        diag.loss(codes::UNSKINNED, format!("{unskinned} mesh(es) without a skin dropped: skelport reads rigs and skinned meshes"));
    }
    let blend = scene.blend_channels.len();
    if blend > 0 {
        diag.loss(codes::BLEND_SHAPES, format!("{blend} blend shape channel(s) dropped: skelport converts skeletons and skin weights"));
    }
    let curves = scene.anim_curves.len();
    if curves > 0 {
        diag.loss(
            codes::ANIMATION,
            format!(
                "animation dropped ({} take(s), {curves} curve(s)): skelport converts rest skeletons, not motion",
                scene.anim_stacks.len()
            ),
        );
    }
    let materials = scene.materials.len();
    if materials > 0 {
        diag.loss(codes::MATERIALS, format!("{materials} material(s) dropped: skelport keeps geometry, UVs and normals, not shading"));
    }
    let constraints = scene.constraints.len();
    if constraints > 0 {
        diag.loss(codes::CONSTRAINTS, format!("{constraints} constraint(s) dropped: the rest pose is kept, not the rig's controls"));
    }
    if skinless {
        diag.warn(codes::SKINLESS, format!("the file has no skin: its skeleton ({included} limb node(s)) is read without a mesh"));
    } else if doc.skins.is_empty() {
        diag.warn(codes::ODD, "the file binds bones but no mesh reads with them: only the skeleton was read");
    }
    Ok(doc)
}

/// The model's size in metres: the diagonal of its bones' and vertices' box.
fn model_size(doc: &Document) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for m in &doc.meshes {
        for p in &m.positions {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
    }
    for w in doc.skeletons.iter().flat_map(|s| s.world_matrices()) {
        lo = lo.min(w.w_axis.truncate());
        hi = hi.max(w.w_axis.truncate());
    }
    if lo.x > hi.x {
        return 0.0;
    }
    (hi - lo).length() * doc.frame.metres_per_unit
}

/// A rigid transform as a dual quaternion (real, dual).
fn dual(m: &DMat4) -> Option<(DQuat, DQuat)> {
    let r = rotation_of(m)?;
    let t = m.w_axis.truncate();
    let d = DQuat::from_xyzw(t.x, t.y, t.z, 0.0) * r * 0.5;
    Some((r, d))
}

/// How far the skin's vertices are from where dual-quaternion skinning puts them, at most, in
/// metres, over the pose test's poses; `share` is each vertex's dual-quaternion share (all 1
/// when `None`).
fn dual_quaternion_gap(doc: &Document, skin: usize, share: Option<&[f64]>) -> f64 {
    let s = &doc.skins[skin];
    let Some(mesh) = doc.mesh_of(s) else { return 0.0 };
    let sk = doc.skeleton(s.skeleton);
    let names: Vec<&str> = sk.bones.iter().map(|b| b.name.as_str()).collect();
    let mut worst = 0.0f64;
    for k in 0..POSES {
        let pose = random_pose(names.iter().copied(), 11 + k, POSE_ANGLE);
        let posed = posed_worlds(sk, &pose);
        let mats: Vec<DMat4> = s.joints.iter().zip(&s.inverse_bind).map(|(j, ibm)| posed[j.index()] * *ibm).collect();
        // The skin's matrices carry the bind's scale; dual quaternions blend their rigid part
        // and apply the rest as a linear blend would (ufbx and Maya do the same).
        let duals: Vec<Option<(DQuat, DQuat)>> = mats.iter().map(dual).collect();
        for (v, p) in mesh.positions.iter().enumerate().take(s.vertex_count()) {
            let (mut lin, mut total) = (DVec3::ZERO, 0.0);
            let (mut real, mut du) = (DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0), DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0));
            let mut pivot: Option<DQuat> = None;
            let mut ok = true;
            for (j, w) in s.influences.vertex(v) {
                let m = mats[j as usize];
                lin += m.transform_point3(*p) * w;
                total += w;
                match duals[j as usize] {
                    Some((r, d)) => {
                        let sign = if pivot.get_or_insert(r).dot(r) < 0.0 { -1.0 } else { 1.0 };
                        real += r * (w * sign);
                        du += d * (w * sign);
                    }
                    None => ok = false,
                }
            }
            if total <= 0.0 || !ok {
                continue;
            }
            let lin = lin / total;
            let len = real.length();
            if len <= 1e-12 {
                continue;
            }
            let (r, d) = (real / len, du / len);
            let t = (d * 2.0) * r.conjugate();
            // The rigid part of the bind-to-pose transform, applied to where the linear blend's
            // non-rigid part (scale from the file's unit) puts the vertex at rest.
            let rest = {
                let (mut acc, mut tw) = (DVec3::ZERO, 0.0);
                for (j, w) in s.influences.vertex(v) {
                    let m = mats[j as usize];
                    let rigid = duals[j as usize].map(|(r, _)| DMat4::from_rotation_translation(r, m.w_axis.truncate())).unwrap_or(m);
                    acc += (rigid.inverse() * m).transform_point3(*p) * w;
                    tw += w;
                }
                acc / tw
            };
            let dqp = r * rest + DVec3::new(t.x, t.y, t.z);
            let share = share.and_then(|s| s.get(v).copied()).unwrap_or(1.0).clamp(0.0, 1.0);
            let target = lin * (1.0 - share) + dqp * share;
            worst = worst.max(target.distance(lin));
        }
    }
    worst * doc.frame.metres_per_unit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    fn read_bytes(bytes: &[u8], opts: &ReadOptions) -> (Result<Document, FbxError>, Diagnostics) {
        let mut diag = Diagnostics::default();
        let doc = read(Input { path: None, bytes }, opts, &mut diag);
        (doc, diag)
    }

    fn check_sample(doc: &Document) {
        assert_eq!(doc.frame, Frame { metres_per_unit: 0.01, ..Frame::GLTF });
        let sk = &doc.skeletons[0];
        assert_eq!(sk.name, "Armature");
        let names: Vec<&str> = sk.bones.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["Hips", "Spine"]);
        let heads: Vec<DVec3> = sk.world_matrices().iter().map(|m| m.w_axis.truncate()).collect();
        assert!(heads[0].distance(DVec3::ZERO) < 1e-12 && heads[1].distance(DVec3::new(0.0, 100.0, 0.0)) < 1e-12, "{heads:?}");
        let skin = &doc.skins[0];
        let mesh = doc.mesh_of(skin).unwrap();
        assert_eq!(mesh.positions.len(), 6);
        assert_eq!(mesh.faces.counts, [3, 3, 3, 3]);
        assert_eq!(mesh.faces.indices, [0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4]);
        assert_eq!(mesh.uvs.len(), 1);
        assert_eq!(mesh.uvs[0].name, "UVMap");
        // Stored by polygon vertex in the file, equal at each vertex: read per vertex.
        assert!(!mesh.uvs[0].uvs.is_per_corner());
        assert_eq!(mesh.uvs[0].uvs.values()[3], DVec2::new(1.0, 0.5));
        let normals = mesh.normals.as_ref().unwrap();
        assert!(!normals.is_per_corner() && normals.values().len() == 6);
        assert!(normals.values().iter().all(|n| *n == DVec3::Z));
        let w: Vec<Vec<(u32, f64)>> = skin.influences.to_lists();
        assert_eq!(w[0], [(0, 1.0)]);
        assert_eq!(w[2], [(0, 0.5), (1, 0.5)]);
        assert_eq!(w[5], [(1, 1.0)]);
        // The inverse binds put every vertex where the file binds it: identity at rest.
        for (j, ibm) in skin.joints.iter().zip(&skin.inverse_bind) {
            let rest = sk.world_matrices()[j.index()];
            assert!((rest * *ibm).abs_diff_eq(DMat4::IDENTITY, 1e-12), "{}", sk.bones[j.index()].name);
        }
        assert!(skelport_ir::validate::validate(doc).is_empty());
    }

    #[test]
    fn the_sample_reads_in_both_forms_alike() {
        let nodes = sample::scene();
        let (bin, diag) = read_bytes(&sample::binary(&nodes), &ReadOptions::default());
        let bin = bin.unwrap();
        check_sample(&bin);
        assert!(diag.items.iter().any(|d| d.code == codes::FRAME), "{diag:?}");
        assert!(diag.of(skelport_ir::Severity::Loss).next().is_none(), "{diag:?}");
        let (text, _) = read_bytes(sample::ascii(&nodes).as_bytes(), &ReadOptions::default());
        let text = text.unwrap();
        check_sample(&text);
        assert_eq!(bin, text);
    }

    /// The fuzz seed of two meshes: the copy is a second mesh of the same geometry, skinned to
    /// the same bones.
    #[test]
    fn the_sample_with_a_second_mesh_reads_two() {
        let (doc, _) = read_bytes(&sample::binary(&sample::with_second_mesh(&sample::scene())), &ReadOptions::default());
        let doc = doc.unwrap();
        let names: Vec<&str> = doc.meshes.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["Body", "Body2"]);
        assert_eq!(doc.meshes[0].positions, doc.meshes[1].positions);
        assert_eq!(doc.skins.len(), 2);
        assert_eq!(doc.skins[0].influences, doc.skins[1].influences);
        assert!(skelport_ir::validate::validate(&doc).is_empty());
    }

    #[test]
    fn a_budget_smaller_than_the_scene_is_refused_by_name() {
        let opts = ReadOptions { budget: Some(skelport_ir::Budget::with_limit(4096)), ..Default::default() };
        let (doc, _) = read_bytes(&sample::binary(&sample::scene()), &opts);
        let msg = doc.unwrap_err().to_string();
        assert!(msg.contains("decode budget exceeded") && msg.contains("the FBX scene"), "{msg}");
    }

    #[test]
    fn a_scene_without_clusters_reads_its_limb_nodes_and_one_without_either_is_refused() {
        let mut nodes = sample::scene();
        let c = nodes.iter_mut().find(|n| n.name == "Connections").unwrap();
        c.children.retain(|n| !matches!(n.props[1], sample::Prop::Long(401 | 402)));
        let (doc, diag) = read_bytes(&sample::binary(&nodes), &ReadOptions::default());
        let doc = doc.unwrap();
        let names: Vec<&str> = doc.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["Hips", "Spine"]);
        assert!(doc.skins.is_empty());
        assert!(diag.items.iter().any(|d| d.code == codes::SKINLESS), "{diag:?}");
        // No limb nodes either: nothing to read.
        for n in nodes.iter_mut().filter(|n| n.name == "Objects").flat_map(|o| o.children.iter_mut()) {
            if n.props.last() == Some(&sample::Prop::Str("LimbNode".into())) {
                *n.props.last_mut().unwrap() = sample::Prop::Str("Null".into());
            }
        }
        let (doc, _) = read_bytes(&sample::binary(&nodes), &ReadOptions::default());
        let msg = doc.unwrap_err().to_string();
        assert!(msg.contains("the file has no bones"), "{msg}");
    }

    /// Dual-quaternion skinning: a loss naming how far vertices move, more than nothing for the
    /// blended vertices and nothing when every vertex has one bone (where both blends agree).
    #[test]
    fn dual_quaternion_skinning_is_a_loss_with_its_distance() {
        let gap = |weights: Option<[Vec<f64>; 2]>| {
            let mut nodes = sample::scene();
            let objects = nodes.iter_mut().find(|n| n.name == "Objects").unwrap();
            let mut deformers = objects.children.iter_mut().filter(|n| n.name == "Deformer");
            let skin = deformers.next().unwrap();
            skin.children.push(sample::Node {
                name: "SkinningType".into(),
                props: vec![sample::Prop::Str("DualQuaternion".into())],
                children: vec![],
            });
            if let Some([a, b]) = weights {
                for (cl, w) in deformers.zip([a, b]) {
                    cl.children.iter_mut().find(|n| n.name == "Weights").unwrap().props = vec![sample::Prop::Doubles(w)];
                }
            }
            let (doc, diag) = read_bytes(&sample::binary(&nodes), &ReadOptions::default());
            doc.unwrap();
            let d = diag.items.iter().find(|d| d.code == codes::DUAL_QUATERNION).expect("a dual-quaternion loss");
            assert_eq!(d.severity, skelport_ir::Severity::Loss);
            let m = d.message.split("move up to ").nth(1).unwrap();
            m.split(' ').next().unwrap().parse::<f64>().unwrap()
        };
        let blended = gap(None);
        assert!(blended > 0.1 && blended < 500.0, "{blended} mm");
        // Vertices 2 and 3 on one bone each: no blend, no difference.
        let single = gap(Some([vec![1.0, 1.0, 1.0, 0.0], vec![0.0, 1.0, 1.0, 1.0]]));
        assert!(single < 1e-6, "{single} mm");
    }

    #[test]
    fn damage_is_an_error_naming_the_place_and_a_fix() {
        let bytes = sample::binary(&sample::scene());
        let (doc, _) = read_bytes(&bytes[..bytes.len() / 2], &ReadOptions::default());
        match doc.unwrap_err() {
            FbxError::Parse { kind, fix, place, .. } => {
                assert_eq!(kind, FbxErrorKind::Truncated);
                assert!(fix.contains("again"), "{place}: {fix}");
                assert_eq!(place, Place::Byte(bytes.len() as u64 / 2), "a cut-short file fails at its end");
            }
            e => panic!("{e}"),
        }
    }
}
