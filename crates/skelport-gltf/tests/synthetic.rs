//! A synthetic Blender-frame rig (Z-up, quads, several roots, non-joint helper bones, any bone
//! names, more than 4 influences, an unweighted vertex, a bind pose that differs from the rest
//! pose, tails/roll/anchors/mirror/extension data) written as glTF and read back.
//! Set `SKELPORT_GLTF_OUT=<dir>` to keep the written files for the Khronos validator.

use skelport_gltf::{GlbFormat, GltfFormat};
use skelport_ir::{
    Anchor, AnchorStrategy, Bone, BoneAnchors, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input,
    Mesh, Normals, ReadOptions, Severity, Skeleton, Skin, Transform, WriteOptions,
};

fn bone(name: &str, parent: Option<u32>, t: [f64; 3], rot: DQuat) -> Bone {
    Bone::new(name, parent.map(BoneId::new), Transform::from_rt(rot, DVec3::from_array(t)))
}

fn rig(extra_joints: usize) -> Document {
    let mut doc = Document::new(Frame::BLENDER);
    let mut sk = Skeleton::new("human");
    sk.push(Bone { deform: false, ..bone("root", None, [0.0, 0.0, 0.0], DQuat::IDENTITY) });
    sk.push(bone("pelvis", Some(0), [0.0, 0.1, 1.0], DQuat::from_rotation_x(-1.2)));
    let mut spine = bone("spine 01/ä", Some(1), [0.0, 0.2, 0.0], DQuat::from_rotation_z(0.1));
    spine.length = Some(0.25);
    spine.roll = Some(0.3);
    spine.ext.set_raw("mpfb", serde_json::json!({"layer": 3}));
    spine.anchors = Some(BoneAnchors {
        head: Anchor { strategy: AnchorStrategy::Vertex { index: 2 }, offset: DVec3::new(0.0, 0.0, 0.01), default_position: None },
        tail: Anchor {
            strategy: AnchorStrategy::Cube { group: "joint-neck".into() },
            offset: DVec3::ZERO,
            default_position: Some(DVec3::new(0.0, 0.0, 1.5)),
        },
    });
    sk.push(spine);
    sk.push(Bone { deform: false, ..bone("spine_helper", Some(2), [0.0, 0.1, 0.0], DQuat::IDENTITY) });
    sk.push(bone("head", Some(3), [0.0, 0.15, 0.0], DQuat::from_rotation_y(0.2)));
    sk.push(bone("upperarm.L", Some(2), [0.15, 0.2, 0.0], DQuat::from_rotation_z(-1.4)));
    sk.push(bone("upperarm.R", Some(2), [-0.15, 0.2, 0.0], DQuat::from_rotation_z(1.4)));
    sk.bones[5].mirror = Some(BoneId::new(6));
    sk.bones[6].mirror = Some(BoneId::new(5));
    // A second root that is not a joint (an IK target), so a common root node is needed.
    sk.push(Bone { deform: false, ..bone("ik_foot.L", None, [0.1, 0.0, 0.0], DQuat::IDENTITY) });
    for k in 0..extra_joints {
        sk.push(bone(&format!("extra{k}"), Some(4), [0.0, 0.001 * k as f64, 0.0], DQuat::IDENTITY));
    }
    let world = sk.world_matrices();
    let joints: Vec<BoneId> = (0..sk.bones.len()).filter(|&i| sk.bones[i].deform).map(BoneId::from_index).collect();
    // Bind pose ≠ rest pose: the body was bound 2 cm lower.
    let inverse_bind = joints.iter().map(|j| (DMat4::from_translation(DVec3::new(0.0, 0.0, -0.02)) * world[j.index()]).inverse()).collect();
    doc.skeletons.push(sk);
    // A 3×2 grid of quads standing in the XZ plane (Blender: Z up).
    let mut positions = Vec::new();
    for z in 0..3 {
        for x in 0..4 {
            positions.push(DVec3::new(x as f64 * 0.1 - 0.15, 0.0, 1.0 + z as f64 * 0.3));
        }
    }
    let mut faces = Faces::default();
    for z in 0..2u32 {
        for x in 0..3u32 {
            let a = z * 4 + x;
            faces.counts.push(4);
            faces.indices.extend([a, a + 1, a + 5, a + 4]);
        }
    }
    let normals = Normals::PerVertex(vec![DVec3::new(0.0, -1.0, 0.0); positions.len()]);
    let nv = positions.len();
    doc.meshes.push(Mesh { name: "body".into(), positions, normals: Some(normals), faces, ..Default::default() });
    let n = joints.len() as u32;
    let lists: Vec<Vec<(u32, f64)>> = (0..nv)
        .map(|v| match v {
            0 => vec![],                                                                     // unweighted
            1 => (0..5).map(|k| (k % n, [0.3, 0.25, 0.2, 0.15, 0.1][k as usize])).collect(), // 5 influences
            2 => vec![(1 % n, 0.1), (0, 0.2), (2 % n, 0.7)],                                 // unsorted
            _ => vec![((v as u32) % n, 1.0 / 3.0), (((v + 1) as u32) % n, 2.0 / 3.0)],
        })
        .collect();
    doc.skins.push(Skin {
        name: "body_skin".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints,
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(lists),
        ext: Default::default(),
    });
    // A second skeleton with no skin and no mesh.
    let mut lone = Skeleton::new("prop");
    lone.push(bone("prop_root", None, [1.0, 0.0, 0.0], DQuat::IDENTITY));
    lone.push(bone("prop_tip", Some(0), [0.0, 0.5, 0.0], DQuat::IDENTITY));
    doc.skeletons.push(lone);
    doc.ext.set_raw("mpfb", serde_json::json!({"rig": "game_engine"}));
    assert!(skelport_ir::validate::validate(&doc).is_empty(), "{:?}", skelport_ir::validate::validate(&doc));
    doc
}

fn write_read(doc: &Document, format: &dyn Format, name: &str, opts: WriteOptions) -> (Document, Diagnostics, Vec<u8>) {
    let mut wd = Diagnostics::default();
    let opts = WriteOptions { file_stem: name.into(), embed: true, ..opts };
    let out = format.write(doc, &opts, &mut wd).unwrap();
    assert!(out.side_files.is_empty());
    if let Some(keep) = std::env::var_os("SKELPORT_GLTF_OUT") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::write(std::path::Path::new(&keep).join(format!("{name}.{}", format.extensions()[0])), &out.main).unwrap();
    }
    let mut rd = Diagnostics::default();
    let back = format.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut rd).unwrap();
    assert!(skelport_ir::validate::validate(&back).is_empty(), "{:?}", skelport_ir::validate::validate(&back));
    wd.items.extend(rd.items);
    (back, wd, out.main)
}

fn max_diff(a: &DMat4, b: &DMat4) -> f64 {
    a.to_cols_array().iter().zip(b.to_cols_array()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn blender_rig_round_trips_through_gltf_and_glb() {
    let doc = rig(0);
    for (format, name) in [(&GltfFormat as &dyn Format, "synthetic"), (&GlbFormat, "synthetic")] {
        let (back, diag, _) = write_read(&doc, format, name, WriteOptions::default());
        assert_eq!(back.frame, Frame::GLTF);
        assert!(diag.of(Severity::Loss).any(|d| d.code == "gltf.unweighted-vertices"), "{diag:?}");
        let mut back = back;
        back.convert_frame(Frame::BLENDER);
        // Two skeletons, same bones (the synthetic common root is dropped again), same extras.
        assert_eq!(back.skeletons.len(), 2);
        let (a, b) = (&doc.skeletons[0], &back.skeletons[0]);
        assert_eq!(b.name, "human");
        let names = |s: &Skeleton| s.bones.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(a), names(b));
        let (wa, wb) = (a.world_matrices(), b.world_matrices());
        for i in 0..a.bones.len() {
            assert!(max_diff(&wa[i], &wb[i]) < 1e-6, "bone {} moved", a.bones[i].name);
            let (x, y) = (&a.bones[i], &b.bones[i]);
            assert_eq!((x.parent, x.deform, x.mirror, x.length, x.roll), (y.parent, y.deform, y.mirror, y.length, y.roll), "{}", x.name);
            assert_eq!(x.ext, y.ext);
        }
        let (ha, hb) = (a.bones[2].anchors.as_ref().unwrap(), b.bones[2].anchors.as_ref().unwrap());
        assert_eq!(ha.head.strategy, hb.head.strategy);
        assert!((ha.head.offset - hb.head.offset).length() < 1e-12);
        assert!((ha.tail.default_position.unwrap() - hb.tail.default_position.unwrap()).length() < 1e-12);
        assert_eq!(back.ext, doc.ext);
        // Inverse bind matrices are the bind pose, not rebuilt from the rest pose.
        let (sa, sb) = (&doc.skins[0], &back.skins[0]);
        assert_eq!(sa.joints.len(), sb.joints.len());
        for (ma, mb) in sa.inverse_bind.iter().zip(&sb.inverse_bind) {
            assert!(max_diff(ma, mb) < 1e-6);
        }
        // Quads were triangulated; positions came back.
        let mb = back.mesh(sb.mesh.unwrap());
        assert_eq!(mb.faces.counts, vec![3; 12]);
        let d = doc.meshes[0].positions.iter().zip(&mb.positions).map(|(p, q)| (*p - *q).length()).fold(0.0, f64::max);
        assert!(d < 1e-6);
        // Influences: sorted largest first, 5 on vertex 1 (two sets), vertex 0 bound to slot 0.
        let v1: Vec<_> = sb.influences.vertex(1).collect();
        assert_eq!(v1.len(), 5);
        assert!(v1.windows(2).all(|w| w[0].1 >= w[1].1));
        assert_eq!(sb.influences.vertex(0).collect::<Vec<_>>(), vec![(0, 1.0)]);
        assert_eq!(sb.influences.vertex(2).map(|e| e.0).collect::<Vec<_>>(), vec![2, 0, 1]);
        // The float32 weights sum to 1 as tightly as float32 allows.
        for v in 0..sb.influences.vertex_count() {
            let s: f64 = sb.influences.vertex(v).map(|e| e.1).sum();
            assert!((s - 1.0).abs() < 2.5e-7, "vertex {v} sums to {s}");
        }
        // The rig without a skin comes back as a skeleton with a mesh-less skin.
        assert_eq!(names(&back.skeletons[1]), vec!["prop_root", "prop_tip"]);
        assert!(back.skins.iter().any(|s| s.skeleton.index() == 1 && s.mesh.is_none()));
    }
}

#[test]
fn max_influences_limits_sets() {
    let doc = rig(0);
    let (back, diag, bytes) =
        write_read(&doc, &GltfFormat, "synthetic-max4", WriteOptions { max_influences: Some(4), ..Default::default() });
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let attrs = &json["meshes"][0]["primitives"][0]["attributes"];
    assert!(attrs.get("JOINTS_0").is_some() && attrs.get("JOINTS_1").is_none(), "{attrs}");
    assert!(diag.of(Severity::Loss).any(|d| d.code == "gltf.max-influences"));
    let s = &back.skins[0];
    assert_eq!(s.influences.max_influences(), 4);
    let v1: Vec<_> = s.influences.vertex(1).collect();
    // 0.3, 0.25, 0.2, 0.15 kept (of 0.9) and renormalized.
    assert!((v1[0].1 - 0.3 / 0.9).abs() < 1e-6, "{v1:?}");
    // Without a limit the five influences need two sets.
    let (_, _, bytes) = write_read(&doc, &GltfFormat, "synthetic-nolimit", WriteOptions::default());
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(json["meshes"][0]["primitives"][0]["attributes"].get("WEIGHTS_1").is_some());
}

#[test]
fn many_joints_use_unsigned_short() {
    let doc = rig(300);
    let (back, _, bytes) = write_read(&doc, &GltfFormat, "synthetic-300", WriteOptions::default());
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let j = json["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"].as_u64().unwrap() as usize;
    assert_eq!(json["accessors"][j]["componentType"], 5123);
    assert!(back.skins[0].joints.len() > 256);
    let small = rig(0);
    let (_, _, bytes) = write_read(&small, &GltfFormat, "synthetic-small", WriteOptions::default());
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let j = json["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"].as_u64().unwrap() as usize;
    assert_eq!(json["accessors"][j]["componentType"], 5121);
}

#[test]
fn garbage_never_panics() {
    let doc = rig(0);
    for format in [&GltfFormat as &dyn Format, &GlbFormat] {
        let mut d = Diagnostics::default();
        let bytes = format.write(&doc, &WriteOptions { embed: true, ..Default::default() }, &mut d).unwrap().main;
        // Truncations and byte flips of a valid file: errors are fine, panics are not.
        let mut state = 0x2545F4914F6CDD1Du64;
        for k in 0..400 {
            let mut b = bytes.clone();
            if k % 2 == 0 {
                b.truncate((k * 37) % b.len());
            } else {
                for _ in 0..4 {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let i = (state as usize) % b.len();
                    b[i] = (state >> 32) as u8;
                }
            }
            let _ = format.read(Input { path: None, bytes: &b }, &ReadOptions::default(), &mut Diagnostics::default());
        }
    }
}

#[test]
fn per_corner_normals_split_at_hard_edges_and_come_back_per_corner() {
    let mut doc = rig(0);
    let m = &mut doc.meshes[0];
    let corners = vec![DVec3::new(0.0, -1.0, 0.0); m.faces.indices.len()];
    m.normals = Some(Normals::PerCorner(corners.clone()));
    let (back, diag, _) = write_read(&doc, &GltfFormat, "synthetic-corners", WriteOptions::default());
    assert!(diag.of(Severity::Loss).all(|d| !d.code.contains("normal")), "{diag:?}");
    match &back.meshes[0].normals {
        // Blender −Y is glTF +Z.
        Some(Normals::PerVertex(n)) => assert!(n.iter().all(|v| (*v - DVec3::Z).length() < 1e-6), "{n:?}"),
        other => panic!("{other:?}"),
    }
    // A hard edge: corners of one vertex disagree → the vertex is split in the file (one copy)
    // and folded back on reading: the same vertices, each corner with its own normal, no loss.
    let mut hard = corners;
    hard[2] = DVec3::new(1.0, 0.0, 0.0); // vertex 5, shared by four quads
    doc.meshes[0].normals = Some(Normals::PerCorner(hard.clone()));
    let (back, diag, bytes) = write_read(&doc, &GltfFormat, "synthetic-hard", WriteOptions::default());
    assert!(diag.of(Severity::Loss).all(|d| !d.code.contains("normal")), "{diag:?}");
    let root: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(root["meshes"][0]["extras"]["skelport"]["split_from"], serde_json::json!([5]));
    let position = root["meshes"][0]["primitives"][0]["attributes"]["POSITION"].as_u64().unwrap() as usize;
    assert_eq!(root["accessors"][position]["count"], 13, "12 vertices and one copy");
    let (src, got) = (&doc.meshes[0], &back.meshes[0]);
    assert_eq!(got.positions.len(), src.positions.len());
    assert_eq!(got.faces.indices, src.faces.triangulate(), "the copy folded back into vertex 5");
    assert!(got.normals.as_ref().is_some_and(|n| n.is_per_corner()));
    // Compared in the source's frame, corner by corner.
    let mut back_b = back.clone();
    back_b.convert_frame(Frame::BLENDER);
    let d = skelport_ir::testing::normal_delta(src, &back_b.meshes[0]).expect("comparable");
    assert!(d < 1e-6, "normals moved by {d}");
    // The copy carries vertex 5's influences: the skin reads back per source vertex.
    assert_eq!(back.skins[0].influences.vertex_count(), src.positions.len());
}

/// A mesh without normals gets smooth ones, said in a note; glTF viewers would draw it faceted.
#[test]
fn missing_normals_are_computed_smooth() {
    let mut doc = rig(0);
    doc.meshes[0].normals = None;
    let (back, diag, _) = write_read(&doc, &GlbFormat, "synthetic-no-normals", WriteOptions::default());
    assert!(diag.items.iter().any(|d| d.code == "gltf.computed-normals" && d.severity == Severity::Info), "{diag:?}");
    // The grid is flat in Blender's XZ plane facing −Y (its winding): glTF +Z, every vertex.
    match &back.meshes[0].normals {
        Some(Normals::PerVertex(n)) => assert!(n.iter().all(|v| (*v - DVec3::Z).length() < 1e-6), "{n:?}"),
        other => panic!("{other:?}"),
    }
}

/// The Khronos validator gate over the synthetic rigs (see `corpus.rs`); runs when
/// `GLTF_VALIDATOR` points at the npm package.
#[test]
fn khronos_validator_gate_synthetic() {
    let Some(validator) = std::env::var_os("GLTF_VALIDATOR") else {
        eprintln!("note: GLTF_VALIDATOR not set; skipping the Khronos validator gate");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut corners = rig(0);
    corners.meshes[0].normals = Some(Normals::PerCorner(vec![DVec3::new(0.0, -1.0, 0.0); corners.meshes[0].faces.indices.len()]));
    let mut bare = rig(0);
    bare.skins.clear();
    bare.meshes.clear();
    // UV seams, a hard edge and a second UV set: split vertices, TEXCOORD_0 and _1.
    let mut seams = rig(0);
    {
        let m = &mut seams.meshes[0];
        let uv: Vec<skelport_ir::DVec2> =
            m.faces.indices.iter().enumerate().map(|(c, &v)| skelport_ir::DVec2::new(v as f64 * 0.05, (c / 4) as f64 * 0.1)).collect();
        m.uvs.push(skelport_ir::UvSet { name: "map".into(), uvs: skelport_ir::Uvs::PerCorner(uv) });
        m.uvs.push(skelport_ir::UvSet { name: String::new(), uvs: skelport_ir::Uvs::PerVertex(vec![skelport_ir::DVec2::splat(0.5); 12]) });
        let mut n = vec![DVec3::new(0.0, -1.0, 0.0); m.faces.indices.len()];
        n[2] = DVec3::X;
        m.normals = Some(Normals::PerCorner(n));
    }
    let mut computed = rig(0);
    computed.meshes[0].normals = None;
    let cases = [
        ("rig", rig(0), WriteOptions::default()),
        ("rig300", rig(300), WriteOptions::default()),
        ("rig-max4", rig(0), WriteOptions { max_influences: Some(4), ..Default::default() }),
        ("rig-corners", corners, WriteOptions::default()),
        ("skeleton-only", bare, WriteOptions::default()),
        ("rig-seams", seams, WriteOptions::default()),
        ("rig-computed-normals", computed, WriteOptions::default()),
    ];
    for (name, doc, opts) in cases {
        for format in [&GltfFormat as &dyn Format, &GlbFormat] {
            let out = format.write(&doc, &WriteOptions { file_stem: name.into(), ..opts.clone() }, &mut Diagnostics::default()).unwrap();
            let p = dir.path().join(format!("{name}.{}", format.extensions()[0]));
            std::fs::write(&p, &out.main).unwrap();
            for (n, b) in &out.side_files {
                std::fs::write(dir.path().join(n), b).unwrap();
            }
            files.push(p);
        }
    }
    let script = skelport_ir::testing::workspace_root().join(".ci/tools/gltf-validate.mjs");
    let out = std::process::Command::new("node").arg(script).args(&files).env("GLTF_VALIDATOR", validator).output().expect("run node");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success(), "validator found errors or warnings:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.lines().filter(|l| l.contains(": 0 errors, 0 warnings")).count(), files.len());
}

/// A single root that is not a joint and faces forward (the demo's `root`): the writer puts an
/// identity node above it, so Blender's importer, which makes a non-joint skeleton root its
/// armature object and reads inverse binds relative to it, keeps `root` a bone and does not turn
/// the rest pose. skelport's reader drops the node again.
#[test]
fn non_joint_root_gets_an_identity_node_above_it() {
    let mut doc = Document::new(Frame::GLTF);
    let mut sk = Skeleton::new("turned");
    sk.push(Bone { deform: false, ..bone("root", None, [0.0, 0.0, 0.0], DQuat::from_rotation_y(std::f64::consts::PI)) });
    sk.push(bone("pelvis", Some(0), [0.0, 0.95, 0.0], DQuat::IDENTITY));
    let world = sk.world_matrices();
    doc.skins.push(Skin {
        name: "turned-skin".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: None,
        joints: vec![BoneId::new(1)],
        inverse_bind: vec![world[1].inverse()],
        bind_shape: DMat4::IDENTITY,
        influences: Influences::default(),
        ext: Default::default(),
    });
    doc.skeletons.push(sk);
    let (back, diag, bytes) = write_read(&doc, &GltfFormat, "non-joint-root", WriteOptions::default());
    assert!(diag.items.iter().any(|d| d.code == "gltf.synthetic-root" && d.message.contains("'root' is not a joint")), "{diag:?}");
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let top = json["scenes"][0]["nodes"][0].as_u64().unwrap() as usize;
    let node = &json["nodes"][top];
    assert_eq!(node["extras"]["skelport"]["synthetic_root"], true, "{node}");
    assert!(node.get("rotation").is_none() && node.get("translation").is_none() && node.get("matrix").is_none(), "{node}");
    assert_eq!(json["nodes"][node["children"][0].as_u64().unwrap() as usize]["name"], "root");
    assert_eq!(json["skins"][0]["skeleton"].as_u64(), Some(top as u64));
    let b = &back.skeletons[0];
    assert_eq!(b.bones.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["root", "pelvis"]);
    let wb = b.world_matrices();
    assert!(max_diff(&wb[0], &world[0]) < 1e-6 && max_diff(&wb[1], &world[1]) < 1e-6);
    assert!(!b.bones[0].deform && b.bones[1].deform);
}
