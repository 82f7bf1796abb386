//! The generated SL table: regenerating it from the corpus gives the committed file, and its counts.

use skelport_sl::{generate_table, SlSkeleton};

fn corpus_xml() -> Option<(String, String)> {
    let root = skelport_ir::testing::corpus_root()?;
    let sk = std::fs::read_to_string(root.join("sl/viewer/avatar_skeleton.xml")).expect("avatar_skeleton.xml");
    let lad = std::fs::read_to_string(root.join("sl/viewer/avatar_lad.xml")).expect("avatar_lad.xml");
    Some((sk, lad))
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn regenerated_table_equals_committed_file() {
    let Some((sk, lad)) = corpus_xml() else { return };
    let generated = generate_table(&sk, &lad).expect("generate");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sl_table.rs");
    if std::env::var_os("SKELPORT_REGEN_SL_TABLE").is_some() {
        std::fs::write(&path, &generated).expect("write table");
    }
    let committed = std::fs::read_to_string(&path).expect("committed table");
    assert!(committed == generated, "src/sl_table.rs is stale: run `cargo xtask gen-sl-table`");
}

#[test]
fn builtin_table_counts_and_facts() {
    let sl = SlSkeleton::builtin();
    assert_eq!(sl.bones.len(), 133);
    assert_eq!(sl.collision_volumes.len(), 26);
    assert_eq!(sl.attachment_points.len(), 55);
    assert_eq!(sl.bones.iter().filter(|b| b.support == skelport_sl::Support::Base).count(), 26);
    assert_eq!(sl.bones.iter().filter(|b| b.connected).count(), 62);
    // 133 bones + 153 aliases + 26 volumes + 55 attachment names + 40 with `_`: the importer's
    // joint map (LLModelPreview::getJointAliases). The viewer's own mRoot and mScreen are not in it.
    assert_eq!(sl.legal_names().len(), 407);
    assert_eq!(skelport_sl::sl_table::LEGAL_NAMES.len(), 407);
    assert_eq!(sl.legal_names(), skelport_sl::sl_table::LEGAL_NAMES.to_vec());
    for n in ["Left_Shoulder", "Left Shoulder", "Avatar_Center", "avatar_mPelvis", "hip", "L_UPPER_ARM", "mFaceRoot"] {
        assert!(sl.resolve(n).is_some(), "{n} must be legal");
    }
    for n in ["mRoot", "mScreen"] {
        assert!(sl.resolve(n).is_none(), "{n} is not a legal skin joint");
        assert!(sl.joint(n).is_some(), "{n} is still a joint of the avatar");
    }
    let center = sl.resolve("Avatar_Center").unwrap();
    assert_eq!(sl.parent(center).map(|p| sl.name(p)).as_deref(), Some("mRoot"));
    assert_eq!(sl.canonical("hip").as_deref(), Some("mPelvis"));
    assert_eq!(sl.canonical("avatar_mHandThumb3Left").as_deref(), Some("mHandThumb3Left"));
    assert_eq!(sl.canonical("Left Shoulder").as_deref(), Some("Left_Shoulder"));
    assert!(sl.resolve("mpelvis").is_none() && sl.resolve("Left").is_none());
    // Default positions: pos, not pivot.
    let pelvis = sl.resolve("mPelvis").unwrap();
    assert_eq!(sl.default_pos(pelvis), skelport_ir::DVec3::new(0.0, 0.0, 1.067));
    let toe = sl.resolve("mToeLeft").unwrap();
    let skelport_sl::SlJoint::Bone(t) = toe else { panic!() };
    assert!(sl.bones[t].pivot != sl.bones[t].pos);
    assert_eq!(sl.default_pos(toe), sl.bones[t].pos);
    // Depth-first order: parents before children, every joint once.
    let order = sl.order();
    assert_eq!(order.len(), 2 + 133 + 26 + 55);
    for (i, j) in order.iter().enumerate() {
        if let Some(p) = sl.parent(*j) {
            assert!(sl.rank(p) < i, "parent of {} after it", sl.name(*j));
        }
    }
    // Maximum bone depth 14 (mPelvis = 1): mPelvis … mChest, mCollarLeft … mHandThumb3Left.
    let depth = |mut j| {
        let mut d = 0;
        while let Some(p) = sl.parent(j) {
            d += 1;
            j = p;
        }
        d + 1
    };
    assert_eq!((0..133).map(|i| depth(skelport_sl::SlJoint::Bone(i))).max(), Some(14));
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn corpus_skeleton_equals_builtin() {
    let Some((sk, lad)) = corpus_xml() else { return };
    let parsed = SlSkeleton::from_xml(&sk, Some(&lad), "avatar_skeleton.xml").unwrap();
    assert!(&parsed == SlSkeleton::builtin());
}

#[test]
fn bad_skeleton_files_are_refused_with_a_location() {
    let e = SlSkeleton::from_xml("<linden_skeleton num_bones=\"2\"><bone name=\"a\" pos=\"0 0 0\"/></linden_skeleton>", None, "x.xml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.xml:1:1") && e.contains("num_bones"), "{e}");
    let e = SlSkeleton::from_xml("<linden_skeleton num_bones=\"1\"><bone name=\"a\" pos=\"0 nope 0\"/></linden_skeleton>", None, "x.xml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.xml:1:32") && e.contains("pos"), "{e}");
    let e = SlSkeleton::from_xml("<linden_skeleton", None, "x.xml").unwrap_err().to_string();
    assert!(e.contains("XML error"), "{e}");
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn sl_skeleton_format_reads_the_viewer_file() {
    use skelport_ir::Format;
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    let bytes = std::fs::read(root.join("sl/viewer/avatar_skeleton.xml")).unwrap();
    let f = skelport_sl::SlSkeletonFormat;
    assert_eq!(f.sniff(&bytes[..4096]), 100);
    let doc = f
        .read(skelport_ir::Input { path: None, bytes: &bytes }, &Default::default(), &mut Default::default())
        .expect("read avatar_skeleton.xml");
    assert!(skelport_ir::validate::validate(&doc).is_empty());
    let sk = &doc.skeletons[0];
    assert_eq!(sk.bones.len(), 159);
    let world = sk.world_transforms();
    let head = sk.find("mHead").unwrap();
    // mPelvis 1.067 + 0.084 - 0.084 + 0.084 + 0.205 - 0.205 + 0.205 + 0.251 + 0.076 (x: -0.015+0.015-0.015-0.01).
    assert!((world[head.index()].translation - skelport_ir::DVec3::new(-0.025, 0.0, 1.683)).length() < 1e-9);
}
