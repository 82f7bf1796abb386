//! SL Collada: every corpus file reads, round trips keep joints, bind matrices and influences,
//! the writer follows the importer's rules and `validate_sl` names what breaks them.

use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, ReadOptions, Severity,
    Skeleton, Skin, Transform, WriteOptions,
};
use skelport_sl::{validate_sl, DaeFormat, Level, SlSkeleton};
use std::path::PathBuf;

fn corpus(rel: &str) -> Option<(PathBuf, Vec<u8>)> {
    let root = skelport_ir::testing::corpus_root()?;
    let p = root.join("sl").join(rel);
    let b = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Some((p, b))
}

fn read(bytes: &[u8]) -> (Document, Diagnostics) {
    let mut d = Diagnostics::default();
    let doc = DaeFormat.read(Input { path: None, bytes }, &ReadOptions::default(), &mut d).expect("read");
    (doc, d)
}

fn write(doc: &Document, opts: &WriteOptions) -> (Vec<u8>, Diagnostics) {
    let mut d = Diagnostics::default();
    let out = DaeFormat.write(doc, opts, &mut d).unwrap_or_else(|e| panic!("write: {e}"));
    (out.main, d)
}

const FILES: [(&str, usize, usize); 4] = [
    // (file, skins, distinct skin joints)
    ("linden-lab/female_2016_08_05.dae", 5, 94),
    ("linden-lab/Skeleton.Male.dae", 1, 50),
    ("linden-lab/Little_Bear_90.dae", 1, 52),
    ("ruth2/Ruth2v4Eyelashes.dae", 1, 4),
];

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn every_corpus_file_reads_as_an_sl_rig() {
    for (f, skins, joints) in FILES {
        let Some((_, bytes)) = corpus(f) else { return };
        let (doc, _) = read(&bytes);
        assert!(skelport_ir::validate::validate(&doc).is_empty(), "{f}: {:?}", skelport_ir::validate::validate(&doc));
        assert_eq!(doc.frame, Frame::SECOND_LIFE, "{f}");
        assert_eq!(doc.skins.len(), skins, "{f}");
        let mut used: Vec<BoneId> = doc.skins.iter().flat_map(|s| s.joints.iter().copied()).collect();
        used.sort();
        used.dedup();
        assert_eq!(used.len(), joints, "{f}");
        let sk = &doc.skeletons[0];
        assert_eq!(sk.bones[0].name, "mPelvis", "{f}");
        for s in &doc.skins {
            assert_eq!(s.vertex_count(), doc.mesh(s.mesh.unwrap()).positions.len(), "{f}");
        }
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn female_reference_body_facts() {
    let Some((_, bytes)) = corpus("linden-lab/female_2016_08_05.dae") else { return };
    let (doc, _) = read(&bytes);
    let sk = &doc.skeletons[0];
    assert_eq!(sk.bones.len(), 159, "133 bones + 26 collision volumes");
    let sl = SlSkeleton::builtin();
    // Every joint at its SL default position.
    for b in &sk.bones {
        let j = sl.resolve(&b.name).unwrap();
        assert!((b.rest.translation - sl.default_pos(j)).length() < 1e-9, "{}", b.name);
    }
    let counts: Vec<usize> = doc.skins.iter().map(|s| s.vertex_count()).collect();
    assert_eq!(counts, [145, 145, 957, 842, 1869]);
    let maxes: Vec<usize> = doc.skins.iter().map(|s| s.influences.max_influences()).collect();
    assert_eq!(maxes, [1, 1, 4, 2, 4]);
    // bind_shape_matrix is Rz(+90°).
    let rz = DMat4::from_rotation_z(std::f64::consts::FRAC_PI_2);
    assert!(doc.skins[0].bind_shape.abs_diff_eq(rz, 1e-12));
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn little_bear_reads_despite_its_polylist_counts_and_keeps_joint_offsets() {
    let Some((_, bytes)) = corpus("linden-lab/Little_Bear_90.dae") else { return };
    let (doc, d) = read(&bytes);
    assert_eq!(d.items.iter().filter(|x| x.code == "dae-count-mismatch").count(), 2);
    let sk = &doc.skeletons[0];
    let sl = SlSkeleton::builtin();
    let worst =
        sk.bones.iter().map(|b| (b.rest.translation - sl.default_pos(sl.resolve(&b.name).unwrap())).length()).fold(0.0f64, f64::max);
    assert!(worst > 0.5 && worst < 1.0, "joint offsets up to 0.88 m, got {worst}");
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn male_y_up_file_rests_in_place() {
    // The FBX export carries the Y-up → Z-up turn in its matrices; read, the skinned mesh at rest
    // (joints · inverse binds · bind shape) must sit on the (turned) mesh, Z up, feet at the bottom.
    let Some((_, bytes)) = corpus("linden-lab/Skeleton.Male.dae") else { return };
    let (doc, _) = read(&bytes);
    let rest = skelport_ir::pose::deform(&doc, 0, &Default::default());
    let mut d = doc.clone();
    d.convert_frame(Frame::REPORT);
    let raw = &d.meshes[0].positions;
    let dev = skelport_ir::pose::max_deviation(&rest, raw).unwrap();
    // The 2014 fitted-mesh file's collision-volume nodes are not at the viewer's default rotation
    // and scale (which SL, and the reader, use), so vertices weighted to them move by a few cm.
    assert!(dev < 0.05, "rest deviation {dev}");
    let (lo, hi) = raw.iter().fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p.y), h.max(p.y)));
    assert!(lo < 0.2 && hi > 1.6, "a standing body: y from {lo} to {hi}");
}

fn assert_round_trip(f: &str, opts: &WriteOptions) {
    let Some((_, bytes)) = corpus(f) else { return };
    let (a, _) = read(&bytes);
    let (out, _) = write(&a, opts);
    let (b, _) = read(&out);
    let (sa, sb) = (&a.skeletons[0], &b.skeletons[0]);
    let names = |s: &Skeleton| s.bones.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(sa), names(sb), "{f}");
    for (x, y) in sa.bones.iter().zip(&sb.bones) {
        let want = if !opts.default_joints {
            x.rest.translation
        } else {
            SlSkeleton::builtin().default_pos(SlSkeleton::builtin().resolve(&x.name).unwrap())
        };
        assert!((y.rest.translation - want).length() < 1e-6, "{f}: {} {:?} vs {:?}", x.name, y.rest.translation, want);
    }
    assert_eq!(a.skins.len(), b.skins.len());
    for (s, t) in a.skins.iter().zip(&b.skins) {
        let jn = |d: &Document, s: &Skin| s.joints.iter().map(|j| d.skeletons[0].bones[j.index()].name.clone()).collect::<Vec<_>>();
        assert_eq!(jn(&a, s), jn(&b, t), "{f}");
        for (m, n) in s.inverse_bind.iter().zip(&t.inverse_bind) {
            assert!(m.abs_diff_eq(*n, 1e-6), "{f}: inverse bind {m} vs {n}");
        }
        assert!(s.bind_shape.abs_diff_eq(t.bind_shape, 1e-9));
        let mut expect = s.influences.clone();
        expect.limit(4);
        expect.normalize();
        assert_eq!(expect.vertex_count(), t.influences.vertex_count());
        for v in 0..expect.vertex_count() {
            let mut p: Vec<(u32, f64)> = expect.vertex(v).collect();
            let mut q: Vec<(u32, f64)> = t.influences.vertex(v).collect();
            p.sort_by_key(|e| e.0);
            q.sort_by_key(|e| e.0);
            assert_eq!(p.len(), q.len(), "{f}: vertex {v}");
            for (x, y) in p.iter().zip(&q) {
                assert_eq!(x.0, y.0);
                assert!((x.1 - y.1).abs() < 1e-9, "{f}: vertex {v}: {x:?} vs {y:?}");
            }
        }
        let (ma, mb) = (a.mesh(s.mesh.unwrap()), b.mesh(t.mesh.unwrap()));
        assert_eq!(ma.faces, mb.faces);
        assert_eq!(ma.positions, mb.positions, "positions are written with shortest round-trip text");
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn female_round_trip_keeps_joints_inverse_binds_and_influences() {
    assert_round_trip("linden-lab/female_2016_08_05.dae", &WriteOptions::default());
    assert_round_trip("linden-lab/female_2016_08_05.dae", &WriteOptions { default_joints: true, ..Default::default() });
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn other_corpus_files_round_trip() {
    for f in ["linden-lab/Little_Bear_90.dae", "ruth2/Ruth2v4Eyelashes.dae", "linden-lab/Skeleton.Male.dae"] {
        assert_round_trip(f, &WriteOptions::default());
        assert_round_trip(f, &WriteOptions { default_joints: true, ..Default::default() });
    }
}

/// Linden's own files pass `validate --target sl` (no errors: what the importer degrades is a
/// warning), and so does skelport's .dae of each; the output's warnings are the source's own
/// (a rotated bind shape, weights below 0.001) and nothing the writer added.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn corpus_files_and_own_output_against_the_importer_rules() {
    let sl = SlSkeleton::builtin();
    for (f, ..) in FILES {
        let Some((_, bytes)) = corpus(f) else { return };
        let found = validate_sl(&bytes, f, sl);
        let errors: Vec<String> = found.iter().filter(|v| v.level == Level::Error).map(|v| v.to_string()).collect();
        assert!(errors.is_empty(), "{f}: {errors:?}");
        if f.contains("Male") {
            // 53 vertices with more than 4 influences: the importer keeps 4, a warning.
            assert!(found.iter().any(|v| v.rule == "TooManyInfluences" && v.level == Level::Warning), "{found:?}");
        }
        let (doc, _) = read(&bytes);
        let (out, _) = write(&doc, &WriteOptions::default());
        let all = validate_sl(&out, "out.dae", sl);
        let unexpected: Vec<String> =
            all.iter().filter(|v| !matches!(v.rule, "BindShapeRotation" | "SmallWeight")).map(|v| v.to_string()).collect();
        assert!(unexpected.is_empty(), "{f} → dae: {unexpected:?}");
    }
}

/// A small rig with SL names (and one alias) in Blender's frame, skinned over 6 vertices.
fn sl_doc(joints: &[&str], influences: Vec<Vec<(u32, f64)>>) -> Document {
    let mut d = Document::new(Frame::SECOND_LIFE);
    let mut sk = Skeleton::new("rig");
    let sl = SlSkeleton::builtin();
    let mut ids = Vec::new();
    for n in joints {
        let parent = ids.last().copied();
        let j = sl.resolve(n);
        let t = j.map(|j| sl.default_pos(j)).unwrap_or(DVec3::new(0.0, 0.0, 0.1));
        ids.push(sk.push(Bone::new(*n, parent, Transform { translation: t, ..Transform::IDENTITY })));
    }
    let world = sk.world_matrices();
    d.skeletons.push(sk);
    let n = influences.len();
    d.meshes.push(Mesh {
        name: "m".into(),
        positions: (0..n).map(|i| DVec3::new(0.1 * i as f64, 0.0, 1.0)).collect(),
        faces: Faces { counts: vec![3], indices: vec![0, 1, 2] },
        ..Default::default()
    });
    d.skins.push(Skin {
        name: "s".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints: ids.clone(),
        inverse_bind: ids.iter().map(|b| world[b.index()].inverse()).collect(),
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(influences),
        ext: Default::default(),
    });
    d
}

#[test]
fn writer_limits_influences_and_refuses_unweighted_vertices() {
    let five = vec![(0, 0.3), (1, 0.25), (2, 0.2), (3, 0.15), (4, 0.1)];
    let joints = ["mPelvis", "mTorso", "mChest", "mNeck", "mHead"];
    let d = sl_doc(&joints, vec![five.clone(), vec![(0, 1.0)], vec![(1, 1.0)]]);
    let (out, diag) = write(&d, &WriteOptions::default());
    assert!(diag.of(Severity::Loss).any(|l| l.message.contains("more than 4 influences")));
    let (back, _) = read(&out);
    let v0: Vec<(u32, f64)> = back.skins[0].influences.vertex(0).collect();
    assert_eq!(v0.len(), 4);
    assert!((v0.iter().map(|e| e.1).sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(validate_sl(&out, "x.dae", SlSkeleton::builtin()).is_empty());

    let d = sl_doc(&joints, vec![vec![(0, 1.0)], vec![], vec![(1, 1.0)]]);
    let e = DaeFormat.write(&d, &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("1 vertex(es) have no weights (vertex 1)") && e.contains("--fix"), "{e}");
    let (out, _) = write(&d, &WriteOptions { fix: true, ..Default::default() });
    let (back, _) = read(&out);
    let v1: Vec<(u32, f64)> = back.skins[0].influences.vertex(1).collect();
    assert_eq!(v1.len(), 1, "vertex 1 copies its nearest weighted neighbour (vertex 0 or 2)");
}

#[test]
fn writer_canonicalizes_aliases_and_adds_sl_ancestors() {
    let d = sl_doc(&["hip", "avatar_mChest"], vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(1, 1.0)]]);
    let (out, _) = write(&d, &WriteOptions::default());
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.contains("<Name_array id=\"s-skin-joints-array\" count=\"2\">mPelvis mChest</Name_array>"), "{text}");
    let (back, _) = read(&out);
    let names: Vec<&str> = back.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["mPelvis", "mSpine1", "mSpine2", "mTorso", "mSpine3", "mSpine4", "mChest"]);
}

#[test]
fn rotated_source_bones_fold_into_inverse_binds() {
    // A source whose joints carry rotations: the SL joints are axis-aligned, and the mesh must
    // still rest exactly where it was.
    let mut d = sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 1.0)], vec![(1, 0.5), (0, 0.5)], vec![(1, 1.0)]]);
    d.skeletons[0].bones[0].rest.rotation = DQuat::from_rotation_y(0.7);
    d.skeletons[0].bones[1].rest.rotation = DQuat::from_rotation_x(-0.4);
    let world = d.skeletons[0].world_matrices();
    d.skins[0].inverse_bind = world.iter().map(|m| m.inverse()).collect();
    let before = skelport_ir::pose::deform(&d, 0, &Default::default());
    let (out, _) = write(&d, &WriteOptions::default());
    let (back, _) = read(&out);
    assert!(back.skeletons[0].bones.iter().all(|b| b.rest.rotation == DQuat::IDENTITY));
    let after = skelport_ir::pose::deform(&back, 0, &Default::default());
    assert!(skelport_ir::pose::max_deviation(&before, &after).unwrap() < 1e-9);
}

#[test]
fn validator_names_each_broken_rule() {
    let sl = SlSkeleton::builtin();
    let good = sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 1.0)]]);
    let (out, _) = write(&good, &WriteOptions::default());
    let text = String::from_utf8(out).unwrap();
    let rules = |t: &str| validate_sl(t.as_bytes(), "bad.dae", sl).into_iter().map(|v| v.rule).collect::<Vec<_>>();
    assert!(rules(&text).is_empty());
    // Unknown joint.
    let bad = text.replace(">mPelvis mTorso</Name_array>", ">mPelvis NotAJoint</Name_array>");
    assert_eq!(rules(&bad), ["UnrecognizedJoint"]);
    let level = |t: &str, rule: &str| validate_sl(t.as_bytes(), "bad.dae", sl).into_iter().find(|v| v.rule == rule).map(|v| v.level);
    // Five influences on vertex 0: the importer keeps 4 (a degradation, not a refusal).
    let bad = text
        .replace("<vcount>1 1 1</vcount>", "<vcount>5 1 1</vcount>")
        .replace("<v>0 0 1 1 0 2</v>", "<v>0 0 1 1 0 0 1 1 0 0 1 1 0 2</v>");
    assert_eq!(level(&bad, "TooManyInfluences"), Some(Level::Warning), "{:?}", rules(&bad));
    // An unweighted vertex: bound to joint 0 once uploaded.
    let bad = text.replace("<vcount>1 1 1</vcount>", "<vcount>1 0 2</vcount>");
    assert_eq!(level(&bad, "UnweightedVertex"), Some(Level::Warning), "{:?}", rules(&bad));
    // vertex_weights count ≠ positions.
    let bad = text.replace("<vertex_weights count=\"3\">", "<vertex_weights count=\"4\">");
    assert!(rules(&bad).contains(&"VertexWeightsCount"));
    // 111 joints.
    let names: Vec<String> = (0..111).map(|i| sl.name(sl.order()[i + 1])).collect();
    let bad = text.replace("count=\"2\">mPelvis mTorso</Name_array>", &format!("count=\"111\">{}</Name_array>", names.join(" ")));
    assert!(rules(&bad).contains(&"TooManyJoint"), "{:?}", rules(&bad));
    // Not XML.
    assert_eq!(rules("<COLLADA"), ["LoadError"]);
}

#[test]
fn non_sl_skeletons_are_written_as_generic_collada_and_read_back() {
    let mut d = sl_doc(&["Hips", "Spine", "Head"], vec![vec![(0, 1.0)], vec![(1, 0.5), (2, 0.5)], vec![(2, 1.0)]]);
    d.skeletons[0].bones[1].rest.rotation = DQuat::from_rotation_z(0.3);
    let world = d.skeletons[0].world_matrices();
    d.skins[0].inverse_bind = world.iter().map(|m| m.inverse()).collect();
    let (out, diag) = write(&d, &WriteOptions::default());
    assert!(diag.of(Severity::Loss).any(|l| l.message.contains("not SL joint names")));
    let (back, _) = read(&out);
    // A generic file's node tree becomes one skeleton, named "skeleton".
    assert_eq!(back.skeletons.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["skeleton"]);
    let before = skelport_ir::pose::deform(&d, 0, &skelport_ir::pose::random_pose(["Hips", "Spine", "Head"], 7, 0.5));
    let after = skelport_ir::pose::deform(&back, 0, &skelport_ir::pose::random_pose(["Hips", "Spine", "Head"], 7, 0.5));
    assert!(skelport_ir::pose::max_deviation(&before, &after).unwrap() < 1e-9);
    assert!(!validate_sl(&out, "x.dae", SlSkeleton::builtin()).is_empty());
}

#[test]
fn malformed_files_fail_with_a_place() {
    for (text, want) in [
        ("<COLLADA><library_controllers><controller id=\"c\"><skin source=\"#g\"><joints/></skin></controller></library_controllers></COLLADA>", "1:68"),
        ("<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaa\">]><COLLADA/>", "XML error"),
        ("<x/>", "not a Collada file"),
        ("<COLLADA><asset><up_axis>W_UP</up_axis></asset></COLLADA>", "W_UP"),
    ] {
        let e = DaeFormat.read(Input { path: None, bytes: text.as_bytes() }, &ReadOptions::default(), &mut Diagnostics::default());
        let e = e.unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}

/// The importer's joint map holds 407 names; mRoot and mScreen (which the viewer creates in code)
/// are not among them, so a skin weighted to one loses its weights in the importer
/// (LLModelLoader::determineRigLegacyFlags: "UnrecognizedJoint").
#[test]
fn a_skin_joint_named_mroot_is_not_an_sl_joint() {
    let sl = SlSkeleton::builtin();
    let good = sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 1.0)]]);
    let (out, _) = write(&good, &WriteOptions::default());
    let text = String::from_utf8(out).unwrap();
    for n in ["mRoot", "mScreen"] {
        let bad = text.replace(">mPelvis mTorso</Name_array>", &format!(">mPelvis {n}</Name_array>"));
        let found: Vec<_> = validate_sl(bad.as_bytes(), "bad.dae", sl).into_iter().filter(|v| v.level == Level::Error).collect();
        assert_eq!(found.iter().map(|v| v.rule).collect::<Vec<_>>(), ["UnrecognizedJoint"], "{n}");
        assert!(found[0].location.contains(n), "{:?}", found[0]);
        // Written from the IR: not an SL rig (the loss says so), not silently an SL upload.
        let d = sl_doc(&["mPelvis", n], vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 1.0)]]);
        let (_, diag) = write(&d, &WriteOptions::default());
        assert!(diag.of(Severity::Loss).any(|l| l.code == "dae-not-sl" && l.message.contains(n)), "{n}: {diag:?}");
    }
}

/// Joint positions are kept by default: Linden's Little_Bear (joints up to 0.88 m from the SL
/// defaults) written to .dae and read back has every joint where the source had it (1e-6 m), and
/// the note says what each upload setting shows. With --default-joints the joints sit at the
/// defaults and the loss names how far the vertices move, which deforming the written file at
/// rest (joints at the defaults, as the importer then places them) confirms.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn joint_positions_are_kept_by_default_and_the_upload_settings_are_explained() {
    let Some((_, bytes)) = corpus("linden-lab/Little_Bear_90.dae") else { return };
    let (src, _) = read(&bytes);
    let (out, diag) = write(&src, &WriteOptions::default());
    let (back, _) = read(&out);
    let worst = src.skeletons[0]
        .bones
        .iter()
        .zip(&back.skeletons[0].bones)
        .map(|(a, b)| {
            assert_eq!(a.name, b.name);
            (a.rest.translation - b.rest.translation).length()
        })
        .fold(0.0, f64::max);
    assert!(worst < 1e-6, "joints moved by {worst} m");
    let note = diag.items.iter().find(|d| d.code == "dae-joint-positions").expect("a joint-positions note");
    assert_eq!(note.severity, Severity::Info, "nothing is lost: {note:?}");
    assert!(note.message.contains("\"Include joint positions\" ticked") && note.message.contains("unticked"), "{}", note.message);
    assert!(!diag.items.iter().any(|d| d.severity == Severity::Loss), "{diag:?}");

    let (out, diag) = write(&src, &WriteOptions { default_joints: true, ..Default::default() });
    let loss = diag.of(Severity::Loss).find(|d| d.code == "dae-joint-positions").expect("a joint-positions loss");
    let (back, _) = read(&out);
    let sl = SlSkeleton::builtin();
    for b in &back.skeletons[0].bones {
        assert!((b.rest.translation - sl.default_pos(sl.resolve(&b.name).unwrap())).length() < 1e-9, "{}", b.name);
    }
    // The mesh as the importer binds it to the default joints, against the source at rest.
    let rest_src = skelport_ir::pose::deform(&src, 0, &Default::default());
    let rest_back = skelport_ir::pose::deform(&back, 0, &Default::default());
    let moved = rest_src.iter().zip(&rest_back).map(|(a, b)| (*a - *b).length()).fold(0.0, f64::max);
    assert!(moved > 0.1, "the bear's mesh moves a lot at the default joints: {moved}");
    let said = format!("vertices move up to {:.1} mm", moved * 1000.0);
    assert!(loss.message.contains(&said), "{said} in {}", loss.message);
}

/// A Collada mesh with two texture coordinate sets and per-corner normals over a `<polylist>`
/// (a quad and a triangle) and a `<triangles>`, the inputs in an unusual order, the second
/// primitive using other sources: every corner's normal and (s, t) reach the IR, in corner order.
fn uv_collada(vertex_uv: bool) -> String {
    let pos = "0 0 0 1 0 0 1 1 0 0 1 0 2 0 0";
    let nrm = "0 0 1 0 0 -1 1 0 0";
    let uv0 = "0 0 1 0 1 1 0 1 0.5 0.25";
    let uv1 = "0.1 0.2 9 0.3 0.4 9 0.5 0.6 9";
    let uv0b = "9 8 7 6";
    let vtx_uv = if vertex_uv { r##"<input semantic="TEXCOORD" source="#uv0" set="0"/>"## } else { "" };
    let prim_uv0 = if vertex_uv { "" } else { r##"<input semantic="TEXCOORD" source="#uv0" offset="2" set="0"/>"## };
    let prim_uv0b = if vertex_uv { "" } else { r##"<input semantic="TEXCOORD" source="#uv0b" offset="2" set="0"/>"## };
    format!(
        r##"<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="1"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="g" name="g"><mesh>
    <source id="p"><float_array id="pa" count="15">{pos}</float_array><technique_common><accessor source="#pa" count="5" stride="3"/></technique_common></source>
    <source id="n"><float_array id="na" count="9">{nrm}</float_array><technique_common><accessor source="#na" count="3" stride="3"/></technique_common></source>
    <source id="uv0"><float_array id="u0" count="10">{uv0}</float_array><technique_common><accessor source="#u0" count="5" stride="2"/></technique_common></source>
    <source id="uv0b"><float_array id="u0b" count="4">{uv0b}</float_array><technique_common><accessor source="#u0b" count="2" stride="2"/></technique_common></source>
    <source id="uv1"><float_array id="u1" count="9">{uv1}</float_array><technique_common><accessor source="#u1" count="3" stride="3"/></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/>{vtx_uv}</vertices>
    <polylist count="2">
      <input semantic="TEXCOORD" source="#uv1" offset="3" set="1"/>
      <input semantic="VERTEX" source="#v" offset="0"/>
      <input semantic="NORMAL" source="#n" offset="1"/>
      {prim_uv0}
      <vcount>4 3</vcount>
      <p>0 0 0 0  1 0 1 1  2 0 2 2  3 0 3 0  1 1 1 1  4 1 4 2  2 1 2 0</p>
    </polylist>
    <triangles count="1">
      <input semantic="VERTEX" source="#v" offset="0"/>
      <input semantic="NORMAL" source="#n" offset="1"/>
      {prim_uv0b}
      <input semantic="TEXCOORD" source="#uv1" offset="3" set="1"/>
      <p>0 2 1 2  4 2 0 1  3 2 1 0</p>
    </triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="m" name="m"><instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"##
    )
}

/// Attributes whose corners differ at a vertex are read per corner; one whose corners all agree
/// (set 0 indexed like the positions) per vertex, as the other readers store it.
#[test]
fn texture_coordinates_and_normals_are_read_per_corner_where_corners_differ() {
    use skelport_ir::{DVec2, Normals, Uvs};
    let v2 = |x: f64, y: f64| DVec2::new(x, y);
    for vertex_uv in [false, true] {
        let (doc, d) = read(uv_collada(vertex_uv).as_bytes());
        assert!(skelport_ir::validate::validate(&doc).is_empty(), "{:?}", skelport_ir::validate::validate(&doc));
        assert!(d.items.is_empty(), "{d:?}");
        let m = &doc.meshes[0];
        assert_eq!(m.faces.counts, [4, 3, 3]);
        assert_eq!(m.faces.indices, [0, 1, 2, 3, 1, 4, 2, 0, 4, 3]);
        let z = DVec3::Z;
        let (nz, x) = (DVec3::NEG_Z, DVec3::X);
        assert_eq!(m.normals, Some(Normals::PerCorner(vec![z, z, z, z, nz, nz, nz, x, x, x])));
        assert_eq!(m.uvs.len(), 2, "vertex_uv {vertex_uv}");
        assert_eq!(m.uvs[0].name, "0");
        let want0 = if vertex_uv {
            // Indexed like the positions (vertex 0 1 2 3 1 4 2 0 4 3): one value a vertex.
            Uvs::PerVertex(vec![v2(0., 0.), v2(1., 0.), v2(1., 1.), v2(0., 1.), v2(0.5, 0.25)])
        } else {
            Uvs::PerCorner(vec![
                v2(0., 0.),
                v2(1., 0.),
                v2(1., 1.),
                v2(0., 1.),
                v2(1., 0.),
                v2(0.5, 0.25),
                v2(1., 1.),
                v2(7., 6.),
                v2(9., 8.),
                v2(7., 6.),
            ])
        };
        assert_eq!(m.uvs[0].uvs, want0, "vertex_uv {vertex_uv}");
        // Set 1's source has stride 3 (S T P): the pairs are its first two numbers.
        assert_eq!(m.uvs[1].name, "1");
        let (a, b, c) = (v2(0.1, 0.2), v2(0.3, 0.4), v2(0.5, 0.6));
        assert_eq!(m.uvs[1].uvs, Uvs::PerCorner(vec![a, b, c, a, b, c, a, c, b, a]));
    }
}

/// A quad of two triangles (corners at vertices 0 1 2 and 0 2 3) whose normals are the source
/// `normals` (x y z each), indexed by `index` (one per corner).
fn quad_with_normals(normals: &[[f64; 3]], index: [u32; 6]) -> String {
    let values: Vec<String> = normals.iter().flatten().map(|x| x.to_string()).collect();
    let corners = [0, 1, 2, 0, 2, 3];
    let p: Vec<String> = corners.iter().zip(index).map(|(v, n)| format!("{v} {n}")).collect();
    format!(
        r##"<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="1"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="g" name="g"><mesh>
    <source id="p"><float_array id="pa" count="12">0 0 0 1 0 0 1 1 0 0 1 0</float_array><technique_common><accessor source="#pa" count="4" stride="3"/></technique_common></source>
    <source id="n"><float_array id="na" count="{}">{}</float_array><technique_common><accessor source="#na" count="{}" stride="3"/></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="2">
      <input semantic="VERTEX" source="#v" offset="0"/>
      <input semantic="NORMAL" source="#n" offset="1"/>
      <p>{}</p>
    </triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="m" name="m"><instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"##,
        values.len(),
        values.join(" "),
        normals.len(),
        p.join("  ")
    )
}

/// Normals every corner of a vertex agrees on are read per vertex, whether the file indexes them
/// apart from the positions (as Blender and Linden's bodies do), repeats them per corner in
/// corner order, or names equal values by different indices; where two corners of a vertex
/// differ they stay per corner.
#[test]
fn normals_a_vertex_agrees_on_are_read_per_vertex() {
    use skelport_ir::Normals;
    let [a, b, c, d] = [[0., 0., 1.], [0., 0.6, 0.8], [0.6, 0., 0.8], [0., -0.6, 0.8]];
    let v = |n: [f64; 3]| DVec3::from_array(n);
    let normals = |text: String| read(text.as_bytes()).0.meshes[0].normals.clone();
    // Indexed apart, permuted: vertex 0 → 3, 1 → 2, 2 → 1, 3 → 0.
    let indexed = normals(quad_with_normals(&[a, b, c, d], [3, 2, 1, 3, 1, 0]));
    assert_eq!(indexed, Some(Normals::PerVertex(vec![v(d), v(c), v(b), v(a)])));
    // One per corner in corner order, equal at each vertex.
    let per_corner = normals(quad_with_normals(&[a, b, c, a, c, d], [0, 1, 2, 3, 4, 5]));
    assert_eq!(per_corner, Some(Normals::PerVertex(vec![v(a), v(b), v(c), v(d)])));
    // Equal values under different indices, not in corner order.
    let repeated = normals(quad_with_normals(&[a, b, c, d, a], [0, 1, 2, 4, 2, 3]));
    assert_eq!(repeated, Some(Normals::PerVertex(vec![v(a), v(b), v(c), v(d)])));
    // Vertex 0's corners differ (a hard edge): per corner.
    let seam = normals(quad_with_normals(&[a, b, c, d], [0, 1, 2, 3, 2, 3]));
    assert_eq!(seam, Some(Normals::PerCorner(vec![v(a), v(b), v(c), v(d), v(c), v(d)])));
}

/// Normals and every texture coordinate set survive `.dae → .dae` (generic Collada keeps all
/// sets; an SL rig keeps the first, the importer reading one, and says so).
#[test]
fn texture_coordinates_and_normals_round_trip() {
    let (a, _) = read(uv_collada(false).as_bytes());
    let (out, d) = write(&a, &WriteOptions::default());
    assert!(!d.items.iter().any(|x| x.code == "dae-uv-sets"), "{d:?}");
    let (b, _) = read(&out);
    assert_eq!(a.meshes[0].uvs, b.meshes[0].uvs);
    assert_eq!(a.meshes[0].normals, b.meshes[0].normals);
    assert_eq!(a.meshes[0].faces, b.meshes[0].faces);
    // On an SL rig.
    let mut s = sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 1.0)]; 5]);
    s.meshes[0].positions = a.meshes[0].positions.clone();
    s.meshes[0].faces = a.meshes[0].faces.clone();
    s.meshes[0].normals = a.meshes[0].normals.clone();
    s.meshes[0].uvs = a.meshes[0].uvs.clone();
    let (out, d) = write(&s, &WriteOptions::default());
    assert!(d.of(Severity::Loss).any(|x| x.code == "dae-uv-sets" && x.message.contains("2 texture coordinate sets")), "{d:?}");
    let (b, _) = read(&out);
    assert_eq!(b.meshes[0].uvs, a.meshes[0].uvs[..1]);
    assert_eq!(b.meshes[0].normals, a.meshes[0].normals);
}

/// Linden's bodies carry TEXCOORD and NORMAL: they reach the IR and come back from skelport's
/// .dae equal.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn linden_uvs_and_normals_survive_dae_to_dae() {
    for f in ["linden-lab/female_2016_08_05.dae", "linden-lab/Little_Bear_90.dae", "linden-lab/Skeleton.Male.dae"] {
        let Some((_, bytes)) = corpus(f) else { return };
        let (a, _) = read(&bytes);
        for m in &a.meshes {
            assert_eq!(m.uvs.len(), 1, "{f}: {}", m.name);
            let want = if m.uvs[0].uvs.is_per_corner() { m.faces.indices.len() } else { m.positions.len() };
            assert_eq!(m.uvs[0].uvs.values().len(), want, "{f}");
            // Smooth meshes whose normals are indexed apart from their positions: one normal a
            // vertex.
            assert!(matches!(&m.normals, Some(skelport_ir::Normals::PerVertex(n)) if n.len() == m.positions.len()), "{f}: {}", m.name);
        }
        let (out, _) = write(&a, &WriteOptions::default());
        let (b, _) = read(&out);
        for (x, y) in a.meshes.iter().zip(&b.meshes) {
            assert_eq!(x.uvs, y.uvs, "{f}: {}", x.name);
            assert_eq!(x.normals, y.normals, "{f}: {}", x.name);
        }
    }
}

/// Of a vertex and a normal index out of range, the corner that comes first is reported, whichever
/// kind its bad index is.
#[test]
fn the_first_corner_with_a_bad_index_is_reported() {
    let read_err = |p: &str| {
        let bad = uv_collada(false).replace("<p>0 0 0 0  1 0 1 1  2 0 2 2", p);
        let e = DaeFormat.read(Input { path: None, bytes: bad.as_bytes() }, &ReadOptions::default(), &mut Diagnostics::default());
        e.unwrap_err().to_string()
    };
    let e = read_err("<p>0 0 0 0  1 7 1 1  9 0 2 2");
    assert!(e.contains("normal index 7 refers to none of the 3 normals"), "{e}");
    let e = read_err("<p>0 0 0 0  9 0 1 1  2 7 2 2");
    assert!(e.contains("vertex index 9 refers to none of the 5 positions"), "{e}");
}

#[test]
fn a_texture_coordinate_index_outside_its_source_is_an_error_with_a_place() {
    let bad = uv_collada(false).replace("<p>0 2 1 2  4 2 0 1", "<p>0 2 5 2  4 2 0 1");
    let e = DaeFormat.read(Input { path: None, bytes: bad.as_bytes() }, &ReadOptions::default(), &mut Diagnostics::default());
    let e = e.unwrap_err().to_string();
    assert!(
        e.contains("<stdin>:19:5:") && e.contains("texture coordinate index 5 is outside the 2 texture coordinates of source \"uv0b\""),
        "{e}"
    );
}

/// A skinned mesh of 50,000 triangles as 10,000 × (a triangle and two quads), every corner its
/// own vertex, on SL joints (or not).
fn mixed_mesh(joints: &[&str]) -> Document {
    let mut counts = Vec::new();
    for _ in 0..10_000 {
        counts.extend([3u32, 4, 4]);
    }
    let corners: usize = counts.iter().map(|&n| n as usize).sum();
    let mut d = sl_doc(joints, vec![vec![(0, 0.5), (1, 0.5)]; corners]);
    let m = &mut d.meshes[0];
    m.positions = (0..corners).map(|c| DVec3::new((c % 400) as f64 * 0.001, (c / 400) as f64 * 0.001, 1.0)).collect();
    m.faces = Faces { counts, indices: (0..corners as u32).collect() };
    d
}

/// The importer cuts a `<polylist>` after 65,532 indices even inside a polygon (the rest of that
/// polygon then refers to the previous face's vertices): the writer puts an SL rig's polygons in
/// `<polylist>`s the importer takes as one face each, so a 50,000-triangle mixed mesh splits only
/// between polygons. Written as one `<polylist>` (as generic Collada still is), the same mesh is
/// cut inside a quad, which the validator reports.
#[test]
fn a_large_mixed_mesh_splits_only_between_polygons() {
    let d = mixed_mesh(&["mPelvis", "mTorso"]);
    assert_eq!(d.meshes[0].faces.triangulate().len() / 3, 50_000);
    let (out, diag) = write(&d, &WriteOptions::default());
    assert!(!diag.items.iter().any(|x| x.code == "dae-model-split"), "{diag:?}");
    let text = String::from_utf8(out.clone()).unwrap();
    let dae = skelport_sl::collada::parse(&text, "x.dae").unwrap();
    let geo = &dae.geometries[0];
    let f = skelport_sl::importer::faces(geo);
    assert_eq!(f.faces, 3, "150,000 indices in faces of at most 65,532");
    assert_eq!(geo.primitives.len(), 3);
    assert!(f.inside_polygon.is_empty() && f.vertex_overflow.is_empty() && f.no_triangle.is_empty(), "{f:?}");
    for &(p, poly, corner) in &f.ends {
        assert_eq!(corner + 1, geo.primitives[p].counts[poly] as usize, "a face ends inside polygon {poly} of primitive {p}");
        assert_eq!(poly + 1, geo.primitives[p].counts.len(), "a face ends before its primitive does");
    }
    let rules: Vec<_> = validate_sl(&out, "x.dae", SlSkeleton::builtin()).into_iter().map(|v| v.rule).collect();
    assert!(rules.is_empty(), "{rules:?}");
    // Read back: the same polygons in the same order.
    let (back, _) = read(&out);
    assert_eq!(back.meshes[0].faces, d.meshes[0].faces);

    // One <polylist> of the same mesh: the importer's cut lands inside a quad.
    let g = mixed_mesh(&["Hips", "Spine"]);
    let (out, _) = write(&g, &WriteOptions::default());
    let text = String::from_utf8(out.clone()).unwrap();
    let dae = skelport_sl::collada::parse(&text, "x.dae").unwrap();
    assert_eq!(dae.geometries[0].primitives.len(), 1);
    let f = skelport_sl::importer::faces(&dae.geometries[0]);
    assert_eq!(f.inside_polygon, [(0, 13_106, 2)], "{f:?}");
    let found = validate_sl(&out, "x.dae", SlSkeleton::builtin());
    assert!(found.iter().any(|v| v.rule == "PolygonSplit" && v.level == Level::Error), "{found:?}");
}

/// skelport's .dae of a two-joint rig, as text, for the crafted cases below.
fn good_text() -> String {
    let good = sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 1.0)]]);
    String::from_utf8(write(&good, &WriteOptions::default()).0).unwrap()
}

fn findings(text: &str) -> Vec<skelport_sl::Violation> {
    validate_sl(text.as_bytes(), "crafted.dae", SlSkeleton::builtin())
}

fn has(text: &str, rule: &str, level: Level) -> bool {
    findings(text).iter().any(|v| v.rule == rule && v.level == level)
}

/// Where the importer finds a joint's position (LLDAELoader::processDomModel): with a
/// <skeleton>, by sid below its root, translation from <matrix sid="transform"> (among others);
/// without, by the name attribute, from <matrix sid="matrix">. A joint it does not find, or finds
/// without a translation it reads, is put at (0, 0, 0) from its parent with "Include joint
/// positions": a warning naming it.
#[test]
fn joints_the_importer_would_not_place_are_named() {
    let text = good_text();
    assert!(findings(&text).is_empty(), "{:?}", findings(&text));
    // A sid that is not the joint name: not found below the skeleton root.
    let bad = text.replace("name=\"mTorso\" sid=\"mTorso\"", "name=\"mTorso\" sid=\"torso\"");
    let f = findings(&bad);
    let v = f.iter().find(|v| v.rule == "JointNotFound").unwrap_or_else(|| panic!("{f:?}"));
    assert!(v.level == Level::Warning && v.message.contains("(mTorso)") && v.message.contains("sid"), "{v}");
    // Another name of the joint as sid is found (the importer tries every alias).
    let ok = text.replace("name=\"mTorso\" sid=\"mTorso\"", "name=\"mTorso\" sid=\"avatar_mTorso\"");
    assert!(!has(&ok, "JointNotFound", Level::Warning), "{:?}", findings(&ok));
    // Matrices without sid="transform" under a <skeleton>: found, but no translation read.
    let bad = text.replace("<matrix sid=\"transform\">", "<matrix>");
    let f: Vec<_> = findings(&bad).into_iter().filter(|v| v.rule == "JointAtOrigin").collect();
    assert_eq!(f.len(), 2, "mPelvis and mTorso: {f:?}");
    assert!(f.iter().all(|v| v.level == Level::Warning), "{f:?}");
    // Only mPelvis's: the sid lookup goes on into its children and takes mSpine1's translation.
    let bad = text.replacen("<matrix sid=\"transform\">", "<matrix>", 1);
    let f = findings(&bad);
    let v = f.iter().find(|v| v.rule == "JointTranslationElsewhere").unwrap_or_else(|| panic!("{f:?}"));
    assert!(v.location.contains("node \"mPelvis\"") && v.message.contains("node \"mSpine1\""), "{v}");
    // A <translate sid="translate"> is read.
    let ok = text.replacen("<matrix sid=\"transform\">", "<translate sid=\"translate\">0 0 1.067</translate><matrix>", 2);
    assert!(!has(&ok, "JointAtOrigin", Level::Warning), "{:?}", findings(&ok));
    // Without <skeleton>: found by name, but only <matrix sid="matrix"> is read.
    let no_skeleton: String = text.lines().filter(|l| !l.contains("<skeleton>")).collect::<Vec<_>>().join("\n");
    assert!(has(&no_skeleton, "JointAtOrigin", Level::Warning), "{:?}", findings(&no_skeleton));
    let ok = no_skeleton.replace("<matrix sid=\"transform\">", "<matrix sid=\"matrix\">");
    assert!(findings(&ok).is_empty(), "{:?}", findings(&ok));
    // Without <skeleton> an alias as node name is not found (the skin's alias is rewritten to
    // mPelvis, the node keeps the name it has).
    let alias = ok.replace("name=\"mPelvis\"", "name=\"hip\"").replace(">mPelvis mTorso</Name_array>", ">hip mTorso</Name_array>");
    let f = findings(&alias);
    assert!(f.iter().any(|v| v.rule == "JointNotFound" && v.message.contains("(hip)")), "{f:?}");
}

/// processDomModel reads <v> as joint, weight pairs whatever the input offsets say.
#[test]
fn vertex_weight_offsets_the_importer_ignores_are_named() {
    let text = good_text();
    let swapped = text
        .replace(
            "<input semantic=\"JOINT\" source=\"#s-skin-joints\" offset=\"0\"/>",
            "<input semantic=\"JOINT\" source=\"#s-skin-joints\" offset=\"1\"/>",
        )
        .replace(
            "<input semantic=\"WEIGHT\" source=\"#s-skin-weights\" offset=\"1\"/>",
            "<input semantic=\"WEIGHT\" source=\"#s-skin-weights\" offset=\"0\"/>",
        )
        .replace("<v>0 0 1 1 0 2</v>", "<v>0 0 1 1 2 0</v>");
    assert_ne!(swapped, text);
    assert!(has(&swapped, "VertexWeightsOffsets", Level::Warning), "{:?}", findings(&swapped));
    assert!(!has(&text, "VertexWeightsOffsets", Level::Warning));
}

/// The importer keys weights by position (LLModel::getJointInfluences): two vertices at one
/// place weighted differently end up with one set.
#[test]
fn positions_shared_by_different_weights_are_named() {
    let mut d = sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 1.0)]]);
    d.meshes[0].positions[2] = d.meshes[0].positions[1];
    let (out, diag) = write(&d, &WriteOptions::default());
    let text = String::from_utf8(out).unwrap();
    let v = findings(&text).into_iter().find(|v| v.rule == "SharedPosition").expect("SharedPosition");
    assert!(v.level == Level::Warning && v.message.contains("1 vertex(es)") && v.message.contains("(vertex 1)"), "{v}");
    assert!(diag.of(Severity::Loss).any(|l| l.code == "dae-shared-position-weights"), "{diag:?}");
    // The same weights at one place are no loss.
    let mut same = d.clone();
    same.skins[0].influences = Influences::from_lists(vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(1, 1.0)]]);
    let (out, diag) = write(&same, &WriteOptions::default());
    assert!(!has(&String::from_utf8(out).unwrap(), "SharedPosition", Level::Warning));
    assert!(!diag.items.iter().any(|l| l.code == "dae-shared-position-weights"), "{diag:?}");
}

/// <unit> is ignored for rigged data, a rotated bind shape draws the importer's warning, a
/// TEXCOORD source of stride 3 is read two by two.
#[test]
fn unit_bind_shape_and_texture_stride_warnings() {
    let text = good_text();
    let bad = text.replace("<unit name=\"meter\" meter=\"1\"/>", "<unit name=\"centimeter\" meter=\"0.01\"/>");
    assert!(has(&bad, "Unit", Level::Warning), "{:?}", findings(&bad));
    let bad = text.replace(
        "<bind_shape_matrix>1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1</bind_shape_matrix>",
        "<bind_shape_matrix>0 -1 0 0 1 0 0 0 0 0 1 0 0 0 0 1</bind_shape_matrix>",
    );
    let v = findings(&bad).into_iter().find(|v| v.rule == "BindShapeRotation").expect("BindShapeRotation");
    assert!(v.message.contains("by 90.0°"), "{v}");
    // A scaled bind shape is no rotation.
    let ok = text.replace(
        "<bind_shape_matrix>1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1</bind_shape_matrix>",
        "<bind_shape_matrix>2 0 0 0 0 2 0 0 0 0 2 0 0 0 0 1</bind_shape_matrix>",
    );
    assert!(!has(&ok, "BindShapeRotation", Level::Warning));
    assert!(has(&uv_collada(false), "TexCoordStride", Level::Warning), "{:?}", findings(&uv_collada(false)));
}

/// A Collada file of one mesh whose primitives are `prims` (XML), over `n` positions on a line.
fn mesh_file(n: usize, prims: &str) -> String {
    let pos: Vec<String> = (0..n).map(|i| format!("{} {} 0", i % 1000, i / 1000)).collect();
    format!(
        r##"<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1"><asset><up_axis>Z_UP</up_axis></asset>
<library_geometries><geometry id="g"><mesh>
<source id="p"><float_array id="pa" count="{}">{}</float_array><technique_common><accessor source="#pa" count="{n}" stride="3"/></technique_common></source>
<vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
{prims}
</mesh></geometry></library_geometries>
<library_visual_scenes><visual_scene id="s"><node id="m" name="m"><instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
<scene><instance_visual_scene url="#s"/></scene></COLLADA>"##,
        3 * n,
        pos.join(" ")
    )
}

fn seq(n: usize) -> String {
    (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
}

/// How the importer cuts geometries into faces and models (lldaeloader.cpp): one face per
/// element; 9 faces make 2 models; a <polygons> element past 65,535 distinct vertices wraps its
/// indices; a <polylist> face reaching 65,535 vertices (points and lines add vertices, no
/// triangle) overflows; a face without a triangle drops the model; <triangles> split on
/// triangle boundaries and never overflow.
#[test]
fn faces_and_models_as_the_importer_cuts_them() {
    let tri = r##"<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles>"##;
    let nine = mesh_file(3, &tri.repeat(9));
    let v = findings(&nine).into_iter().find(|v| v.rule == "ModelSplit").expect("ModelSplit");
    assert!(v.level == Level::Warning && v.message.contains("9 faces") && v.message.contains("2 models"), "{v}");
    assert!(findings(&mesh_file(3, &tri.repeat(8))).is_empty());
    // 6,153 faces in the only mesh: the importer keeps (768 + 1) × 8 = 6,152.
    assert!(has(&mesh_file(3, &tri.repeat(6_153)), "FacesDropped", Level::Error));
    // <polygons>: 22,000 triangles of their own vertices.
    let n = 66_000;
    let polys: String = (0..n / 3).map(|t| format!("<p>{} {} {}</p>", 3 * t, 3 * t + 1, 3 * t + 2)).collect();
    let wrap =
        mesh_file(n, &format!(r##"<polygons count="{}"><input semantic="VERTEX" source="#v" offset="0"/>{polys}</polygons>"##, n / 3));
    assert!(has(&wrap, "IndexWrap", Level::Error), "{:?}", findings(&wrap));
    // The same as <triangles>: faces split at 65,532 vertices, on a triangle boundary.
    let tris = mesh_file(
        n,
        &format!(r##"<triangles count="{}"><input semantic="VERTEX" source="#v" offset="0"/><p>{}</p></triangles>"##, n / 3, seq(n)),
    );
    assert!(findings(&tris).is_empty(), "{:?}", findings(&tris));
    let dae = skelport_sl::collada::parse(&tris, "t.dae").unwrap();
    let f = skelport_sl::importer::faces(&dae.geometries[0]);
    assert_eq!((f.faces, f.ends.clone()), (2, vec![(0, 21_843, 2), (0, 21_999, 2)]));
    // A <polylist> of 65,535 points: vertices without a triangle.
    let n = 65_535;
    let points = mesh_file(
        n,
        &format!(
            r##"<polylist count="{n}"><input semantic="VERTEX" source="#v" offset="0"/><vcount>{}</vcount><p>{}</p></polylist>"##,
            "1 ".repeat(n),
            seq(n)
        ),
    );
    let f = findings(&points);
    assert!(f.iter().any(|v| v.rule == "VertexOverflow" && v.level == Level::Error), "{f:?}");
    assert!(f.iter().any(|v| v.rule == "NoTriangles" && v.level == Level::Error), "{f:?}");
}

/// Weights below 0.001 are written as they are (the viewer raises them to 0.001 when it decodes
/// the upload; dropping them changed the file for nothing), and the note says so.
#[test]
fn small_weights_are_kept() {
    let d = sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 0.9995), (1, 0.0005)], vec![(1, 1.0)], vec![(0, 1.0)]]);
    let (out, diag) = write(&d, &WriteOptions::default());
    let note = diag.items.iter().find(|x| x.code == "dae-small-weights").expect("a note");
    assert!(note.severity == Severity::Info && note.message.contains("1 weight(s) below 0.001 written as they are"), "{note:?}");
    let (back, _) = read(&out);
    let v0: Vec<(u32, f64)> = back.skins[0].influences.vertex(0).collect();
    assert_eq!(v0, [(0, 0.9995), (1, 0.0005)]);
    assert!(has(&String::from_utf8(out).unwrap(), "SmallWeight", Level::Warning));
}

/// A zip of `files` (name, bytes), deflated.
fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        w.start_file(*name, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn read_named(bytes: &[u8], name: &str) -> Result<(Document, Diagnostics), String> {
    let mut d = Diagnostics::default();
    let p = std::path::Path::new(name);
    DaeFormat.read(Input { path: Some(p), bytes }, &ReadOptions::default(), &mut d).map(|doc| (doc, d)).map_err(|e| e.to_string())
}

/// Zipped Collada (.zae): a zip with manifest.xml naming the .dae (assimp's human.zae is one) is
/// found by its content and read as the .dae it holds; without a manifest, its only .dae.
#[test]
fn zipped_collada_is_read_as_the_dae_it_holds() {
    let (dae, _) = write(&sl_doc(&["mPelvis", "mTorso"], vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 1.0)]]), &WriteOptions::default());
    let (want, _) = read(&dae);
    let manifest = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<dae_root>./models/rig.dae</dae_root>\n";
    let zae = zip_of(&[("manifest.xml", manifest), ("models/rig.dae", &dae), ("textures/skin.png", b"not read")]);
    assert!(DaeFormat.sniff(&zae[..zae.len().min(8192)]) > 0, "found by content");
    let (got, d) = read_named(&zae, "rig.zae").unwrap();
    assert_eq!(got.skeletons, want.skeletons);
    assert_eq!(got.meshes, want.meshes);
    assert_eq!(got.skins, want.skins);
    assert!(d.items.iter().any(|x| x.code == "dae-zae" && x.message.contains("rig.zae/models/rig.dae")), "{d:?}");
    // The validator checks the .dae inside.
    assert!(validate_sl(&zae, "rig.zae", SlSkeleton::builtin()).is_empty());
    // No manifest: the one .dae.
    let (got, _) = read_named(&zip_of(&[("rig.dae", &dae)]), "rig.zae").unwrap();
    assert_eq!(got.skins, want.skins);
    // Errors name the archive and say what to do.
    let e = read_named(&zip_of(&[("manifest.xml", manifest)]), "rig.zae").unwrap_err();
    assert!(e.contains("rig.zae") && e.contains("names \"./models/rig.dae\", which is not in the archive"), "{e}");
    let e = read_named(&zip_of(&[("a.dae", &dae), ("b.dae", &dae)]), "rig.zae").unwrap_err();
    assert!(e.contains("2 .dae files") && e.contains("unzip"), "{e}");
    // An error inside the .dae names the archive and the entry.
    let broken = String::from_utf8(dae.clone()).unwrap().replace("<vcount>1 1 1</vcount>", "<vcount>1 1 x</vcount>");
    let e = read_named(&zip_of(&[("rig.dae", broken.as_bytes())]), "rig.zae").unwrap_err();
    assert!(e.starts_with("rig.zae/rig.dae:"), "{e}");
}

/// A zip bomb is refused before its memory is taken: the entry's declared size is checked
/// against the bound (100 × the archive, at least 16 MiB), and a declared size that lies stops
/// the decompression one byte past the bound.
#[test]
fn a_zip_bomb_is_an_error_before_the_memory_is_taken() {
    let zeros = vec![0u8; 40 << 20];
    let bomb = zip_of(&[("bomb.dae", &zeros)]);
    assert!(bomb.len() < 200_000, "{} bytes", bomb.len());
    assert_eq!(skelport_sl::zae::bound(bomb.len()), 16 << 20);
    let e = read_named(&bomb, "bomb.zae").unwrap_err();
    assert!(
        e.contains("decompresses to 41943040 bytes, over the limit of 16777216 bytes") && e.contains("zip bomb; if it is none, unzip"),
        "{e}"
    );
    // The same archive claiming 1,000 bytes in both headers: decompression stops at the bound.
    let mut lying = bomb.clone();
    for (sig, at) in [(&b"PK\x03\x04"[..], 22), (&b"PK\x01\x02"[..], 24)] {
        let p = lying.windows(4).position(|w| w == sig).unwrap();
        lying[p + at..p + at + 4].copy_from_slice(&1000u32.to_le_bytes());
    }
    let e = read_named(&lying, "bomb.zae").unwrap_err();
    assert!(e.contains("bomb.zae") && e.contains("decompresses to more than 16777216 bytes (it declares fewer)"), "{e}");
}

/// The file-level refusals (LLDAELoader::OpenFile, verifyController, load_face_from_dom_*), each
/// from one edit of a good file: an error naming its rule.
#[test]
fn refusals_are_errors_with_their_rule() {
    let text = good_text();
    let cases: [(&str, String); 8] = [
        ("NoVisualScene", {
            let a = text.find("<library_visual_scenes>").unwrap();
            let b = text.find("</library_visual_scenes>").unwrap() + "</library_visual_scenes>".len();
            format!("{}{}", &text[..a], &text[b..]).replace("<instance_visual_scene url=\"#Scene\"/>", "")
        }),
        (
            "NaNPosition",
            text.replacen(
                "<float_array id=\"m-mesh-positions-array\" count=\"9\">0 ",
                "<float_array id=\"m-mesh-positions-array\" count=\"9\">NaN ",
                1,
            ),
        ),
        ("SkinSource", text.replace("<skin source=\"#m-mesh\">", "<skin source=\"#elsewhere\">")),
        ("VcountLength", text.replace("<vcount>1 1 1</vcount>", "<vcount>1 1</vcount>").replace("<v>0 0 1 1 0 2</v>", "<v>0 0 1 1</v>")),
        ("VLength", text.replace("<v>0 0 1 1 0 2</v>", "<v>0 0 1 1 0 2 0 0</v>")),
        ("InvBindMatrixCount", {
            let a = text.find("<float_array id=\"s-skin-bind_poses-array\" count=\"32\">").unwrap();
            let start = a + "<float_array id=\"s-skin-bind_poses-array\" count=\"32\">".len();
            let end = text[start..].find("</float_array>").unwrap() + start;
            let nums: Vec<&str> = text[start..end].split(' ').collect();
            format!(
                "{}{}{}",
                &text[..a],
                format_args!("<float_array id=\"s-skin-bind_poses-array\" count=\"16\">{}", nums[..16].join(" ")),
                &text[end..]
            )
        }),
        (
            "NaNBindMatrix",
            text.replacen(
                "<float_array id=\"s-skin-bind_poses-array\" count=\"32\">1 ",
                "<float_array id=\"s-skin-bind_poses-array\" count=\"32\">inf ",
                1,
            ),
        ),
        ("LoadError", text.replace("</COLLADA>", "")),
    ];
    for (rule, bad) in cases {
        assert_ne!(bad, text, "{rule}: the edit did not apply");
        let f = findings(&bad);
        assert!(f.iter().any(|v| v.rule == rule && v.level == Level::Error), "{rule}: {f:?}");
    }
}

/// The importer finds joints by `name` over every scene node when a file has no <skeleton>: a
/// mesh named like a joint gets a node name of its own (a note says so), and the joints keep
/// theirs, each name once in the file.
#[test]
fn a_mesh_named_like_a_joint_gets_a_node_name_of_its_own() {
    let joints = ["mPelvis", "mTorso", "mChest"];
    let mut d = sl_doc(&joints, vec![vec![(0, 1.0)], vec![(1, 1.0)], vec![(2, 1.0)]]);
    d.meshes[0].name = "mTorso".into();
    let (out, diag) = write(&d, &WriteOptions::default());
    assert!(diag.items.iter().any(|i| i.code == "dae-renamed-node"), "{diag:?}");
    let text = String::from_utf8(out.clone()).unwrap();
    let nodes = text.lines().filter(|l| l.contains("<node ") && l.contains("name=\"mTorso\"")).count();
    assert_eq!(nodes, 1, "{text}");
    let (back, _) = read(&out);
    assert!(back.skeletons[0].find("mTorso").is_some());
    assert!(validate_sl(&out, "x.dae", SlSkeleton::builtin()).is_empty());
}

/// Issue 38: the `.dae` inside a `.zae` is charged as the input it stands for (64 × its bytes),
/// so an archive of 2 MB of Collada that zips to a few kilobytes (1.17 GB from 32 KB before) is
/// refused naming the entry; the same archive without the padding reads.
#[test]
fn the_dae_inside_a_zae_is_charged_as_input() {
    let text = good_text();
    let at = text.find("<COLLADA").unwrap();
    let padded = format!("{}<!--{}-->{}", &text[..at], " ".repeat(2 << 20), &text[at..]);
    let bomb = zip_of(&[("rig.dae", padded.as_bytes())]);
    assert!(bomb.len() < 64 << 10, "{}", bomb.len());
    let e = read_named(&bomb, "rig.zae").unwrap_err();
    assert!(e.starts_with("rig.zae: ") && e.contains("rig.dae: decode budget exceeded"), "{e}");
    read_named(&zip_of(&[("rig.dae", text.as_bytes())]), "rig.zae").unwrap();
}

/// A Collada scene of a root joint with `n` child joints all named `j`.
fn alike_joints(n: usize, attrs: usize) -> String {
    let extra: String = (0..attrs).map(|k| format!(" a{k}=\"\"")).collect();
    let kids: String = (0..n).map(|k| format!("<node id=\"j{k}\" name=\"j\" type=\"JOINT\"{extra}/>")).collect();
    format!(
        r##"<?xml version="1.0"?><COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1"><asset><unit meter="1"/><up_axis>Y_UP</up_axis></asset><library_visual_scenes><visual_scene id="s"><node id="root" name="root" type="JOINT">{kids}</node></visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene></COLLADA>"##
    )
}

/// Issue 38: repeated names were made unique by trying `.001`, `.002`, … from the start (40,000
/// alike took over a minute), and quick-xml compared each attribute with every earlier one
/// (400,000 on one element took over a minute). Twice the joints or attributes count about
/// twice the work; past 256 attributes on one element the file is refused, and an attribute
/// given twice is an error.
#[test]
fn repeated_names_and_attributes_take_linear_work() {
    let work = |n: usize, attrs: usize| {
        let before = skelport_ir::names::work();
        let (doc, _) = read(alike_joints(n, attrs).as_bytes());
        let names: std::collections::HashSet<&str> = doc.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names.len(), n + 1);
        skelport_ir::names::work() - before
    };
    let (one, two) = (work(2000, 0), work(4000, 0));
    assert!(one >= 2000 && two <= 2 * one + 100, "{one} then {two}");
    let (one, two) = (work(500, 100), work(500, 200));
    assert!(two <= 2 * one, "{one} then {two}");
    let e = read_named(alike_joints(1, 300).as_bytes(), "many.dae").unwrap_err();
    assert!(e.contains("more than 256 attributes on one element"), "{e}");
    let twice = alike_joints(1, 0).replace("name=\"j\"", "name=\"j\" name=\"k\"");
    let e = read_named(twice.as_bytes(), "twice.dae").unwrap_err();
    // roxmltree's verdict on the file (it says "already defined") is kept where it has one.
    assert!(e.contains("attribute 'name'") && (e.contains("given twice") || e.contains("already defined")), "{e}");
}

/// Issue 38: the element tree and the number lists a Collada file builds are charged to the
/// decode budget before they are built. A file of empty elements (`<a/>`: 4 bytes, an 80-byte
/// element in the tree) takes 40 times its text; under a budget of 16 times the file it stops at
/// the tree, naming it, and so does a number list under a budget too small for its values.
#[test]
fn the_element_tree_and_number_lists_are_charged_before_they_are_built() {
    use skelport_ir::Budget;
    let read_with = |text: &str, limit: u64| {
        let opts = ReadOptions { budget: Some(Budget::with_limit(limit)), ..Default::default() };
        let p = std::path::Path::new("crafted.dae");
        DaeFormat.read(Input { path: Some(p), bytes: text.as_bytes() }, &opts, &mut Diagnostics::default()).map_err(|e| e.to_string())
    };
    let empty: String = (0..200_000).map(|_| "<a/>").collect();
    let crafted = alike_joints(1, 0).replace("</COLLADA>", &format!("<extra>{empty}</extra></COLLADA>"));
    let e = read_with(&crafted, 16 * crafted.len() as u64).unwrap_err();
    assert!(e.starts_with("crafted.dae: the element tree (200") && e.contains("decode budget exceeded"), "{e}");
    // The same file within 64 times its size reads.
    read_with(&crafted, 64 * crafted.len() as u64).unwrap();
    // A geometry's 300,000 zeros ("0 ", 2 bytes, an 8-byte value each) need 2.4 MB.
    let demo = std::fs::read(skelport_ir::testing::workspace_root().join("testdata/demo/sample.dae")).unwrap();
    let demo = String::from_utf8(demo).unwrap();
    let at = demo.find("<float_array").unwrap();
    let end = at + demo[at..].find('>').unwrap() + 1;
    let zeros = format!("{}{}{}", &demo[..end], "0 ".repeat(300_000), &demo[end..]);
    let e = read_with(&zeros, 2_000_000).unwrap_err();
    assert!(e.contains(": <float_array> at ") && e.contains("decode budget exceeded"), "{e}");
}

/// Bone names that differ only in characters an XML ID cannot hold (`b#$`, `b$#`: both `b__`)
/// get IDs numbered in work linear in their count (trying `.001`, `.002`, … from the start for
/// each was quadratic), and every ID is unique.
#[test]
fn ids_alike_once_sanitized_take_linear_work() {
    use skelport_ir::{Bone, BoneId, Diagnostics, Document, Format, Frame, Skeleton, Transform, WriteOptions};
    let work = |n: usize| {
        let mut sk = Skeleton::new("rig");
        sk.push(Bone::new("root", None, Transform::default()));
        // n distinct names of seven characters from four an ID cannot hold.
        let name = |k: usize| -> String { (0..7).map(|d| ['#', '$', '%', '&'][(k >> (2 * d)) & 3]).collect() };
        for k in 0..n {
            sk.push(Bone::new(format!("b{}", name(k)), Some(BoneId::new(0)), Transform::default()));
        }
        let mut doc = Document::new(Frame::GLTF);
        doc.skeletons.push(sk);
        let before = skelport_ir::names::work();
        let out = DaeFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap();
        let spent = skelport_ir::names::work() - before;
        let text = String::from_utf8(out.main).unwrap();
        let ids: std::collections::HashSet<&str> =
            text.match_indices("id=\"b_______").map(|(at, _)| text[at + 4..].split('"').next().unwrap()).collect();
        assert_eq!(ids.len(), n, "every bone's ID is unique");
        assert!(ids.contains("b_______") && ids.contains(format!("b_______.{:03}", n - 1).as_str()));
        spent
    };
    let (one, two) = (work(1000), work(2000));
    assert!(one >= 1000, "work was counted: {one}");
    assert!(two <= 2 * one + 100, "{one} then {two}");
}
