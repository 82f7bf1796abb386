//! FBX (issue 32) on the corpus's eight files (`fbx/`: Blender, Maya, 3ds Max, MotionBuilder,
//! binary and ASCII, FBX 6.1 to 7.7): each reads; bone world heads agree with Blender's FBX
//! import (a table of Blender 3.4.1's figures, below) within 1e-5 of the model's size; the
//! weights are the clusters' own; `--to fbx` is refused naming what to write instead; a budget
//! too small for the file ends in "decode budget exceeded". That each file survives every
//! writer is `realworld.rs`'s (`fbx_corpus_survives_every_writer`).

#![allow(clippy::print_stderr, reason = "the test reports what it measured, as the #[test] functions may")]

use skelport_ir::{Budget, DVec3, Document, Frame, ReadOptions};
use std::path::PathBuf;

const FILES: &[&str] = &[
    "assimp_huesitos.fbx",
    "ufbx_blender_279_sausage_7400_binary.fbx",
    "ufbx_max_transformed_skin_6100_binary.fbx",
    "ufbx_maya_dq_weights_7500_binary.fbx",
    "ufbx_maya_game_sausage_7500_ascii.fbx",
    "ufbx_maya_kenney_character_7700_binary.fbx",
    "ufbx_maya_skinned_pivot_7700_ascii.fbx",
    "ufbx_motionbuilder_sausage_rrss_7700_binary.fbx",
];

fn corpus(name: &str) -> Option<PathBuf> {
    skelport_ir::testing::corpus_file(&format!("fbx/{name}"))
}

fn load(path: &std::path::Path) -> skelport::Loaded {
    skelport::open(path, &skelport::OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

/// The diagonal of the bones' and vertices' box, in metres (Blender's frame).
fn size(doc: &Document) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for p in doc
        .meshes
        .iter()
        .flat_map(|m| m.positions.iter())
        .copied()
        .chain(doc.skeletons.iter().flat_map(|s| s.world_matrices()).map(|m| m.w_axis.truncate()))
    {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    (hi - lo).length()
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn every_corpus_file_reads_with_a_skeleton_skins_uvs_and_normals() {
    for name in FILES {
        let Some(path) = corpus(name) else { return };
        let loaded = load(&path);
        let doc = &loaded.doc;
        assert_eq!(loaded.format.name(), "fbx", "{name}");
        let bones: usize = doc.skeletons.iter().map(|s| s.bones.len()).sum();
        assert!(bones >= 2, "{name}: {bones} bones");
        assert!(!doc.skins.is_empty(), "{name}: no skin");
        for skin in &doc.skins {
            assert!(skin.influences.weighted_vertices() > 0, "{name}: skin {} has no weights", skin.name);
            let mesh = doc.mesh_of(skin).expect("the skin's mesh");
            assert!(mesh.normals.is_some(), "{name}: mesh {} has no normals", mesh.name);
        }
        let problems = skelport_ir::validate::validate(doc);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        eprintln!("{name}: {bones} bones, {} skin(s), frame {:?}", doc.skins.len(), doc.frame);
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn bone_heads_agree_with_blenders_fbx_import() {
    let mut compared = 0;
    for (name, heads) in BLENDER_HEADS {
        let Some(path) = corpus(name) else { return };
        let mut doc = load(&path).doc;
        doc.convert_frame(Frame::BLENDER);
        let tol = 1e-5 * size(&doc);
        let mut worst = 0.0f64;
        let mut matched = 0;
        for sk in &doc.skeletons {
            for (bone, w) in sk.bones.iter().zip(sk.world_matrices()) {
                let Some((_, want)) = heads.iter().find(|(n, _)| *n == bone.name) else {
                    panic!("{name}: bone \"{}\" is not one of Blender's", bone.name);
                };
                let d = w.w_axis.truncate().distance(DVec3::from_array(*want));
                worst = worst.max(d);
                matched += 1;
                assert!(d <= tol, "{name}: bone \"{}\" is {d:.3e} m from Blender's head (tolerance {tol:.1e})", bone.name);
            }
        }
        assert!(matched >= 2, "{name}: {matched} bones compared");
        compared += 1;
        eprintln!("{name}: {matched} of Blender's {} bones compared, worst {worst:.2e} m (tolerance {tol:.1e})", heads.len());
    }
    assert_eq!(compared, BLENDER_HEADS.len());
}

#[test]
fn writing_fbx_is_refused_naming_the_formats_to_use() {
    let err = skelport::format_to_write("fbx").map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("glb"), "{err}");
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn a_budget_too_small_for_the_file_is_refused_by_name() {
    let Some(path) = corpus("ufbx_maya_kenney_character_7700_binary.fbx") else { return };
    let opts =
        skelport::OpenOptions { from: None, reader: ReadOptions { budget: Some(Budget::with_limit(64 << 10)), ..Default::default() } };
    let err = skelport::open(&path, &opts).map(|_| ()).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("decode budget exceeded") && msg.contains("FBX scene"), "{msg}");
}
/// Mixamo's names on a real FBX: the corpus holds no Mixamo file (Mixamo's licence keeps its
/// characters out), so the Maya ASCII file's four joints are given Mixamo's names in memory (the
/// rename touches only the `Model::` names), written to a temporary folder, and converted with
/// `--map mixamo` as a user with a Mixamo character would. The names are kept on reading, the
/// map takes them (its `mixamorig:` prefix) to MPFB's mixamo rig, and no bone moves.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn mixamo_names_are_kept_and_map_mixamo_converts_them() {
    let Some(path) = corpus("ufbx_maya_game_sausage_7500_ascii.fbx") else { return };
    let mixamo = ["Hips", "Spine", "Spine1", "Spine2"];
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (i, to) in mixamo.iter().enumerate() {
        let from = format!("Model::joint{}\"", i + 1);
        assert!(text.contains(&from), "{from}");
        text = text.replace(&from, &format!("Model::mixamorig:{to}\""));
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("mixamo_sausage.fbx");
    std::fs::write(&src, &text).unwrap();
    let read = load(&src).doc;
    // joint4 is an end no cluster binds: skelport reads the three bound joints.
    let names: Vec<&str> = read.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, mixamo[..3].iter().map(|n| format!("mixamorig:{n}")).collect::<Vec<_>>());

    let run = |args: &[&std::ffi::OsStr]| std::process::Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).output().unwrap();
    let (plain, mapped) = (dir.path().join("plain.glb"), dir.path().join("mapped.glb"));
    for (out, map) in [(&plain, None), (&mapped, Some("mixamo"))] {
        let mut args = vec![std::ffi::OsStr::new("convert"), src.as_os_str(), std::ffi::OsStr::new("-o"), out.as_os_str()];
        if let Some(m) = map {
            args.extend([std::ffi::OsStr::new("--map"), std::ffi::OsStr::new(m)]);
        }
        let o = run(&args);
        assert!(o.status.success(), "{map:?}: {}", String::from_utf8_lossy(&o.stderr));
        if map.is_some() {
            // Every bone has a counterpart in the map: nothing merged.
            assert!(!String::from_utf8_lossy(&o.stderr).contains("no counterpart"), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let (a, b) = (load(&plain).doc, load(&mapped).doc);
    let (wa, wb) = (a.skeletons[0].world_matrices(), b.skeletons[0].world_matrices());
    assert_eq!(b.skeletons[0].bones.len(), 3);
    for (i, bone) in b.skeletons[0].bones.iter().enumerate() {
        assert_eq!(bone.name, format!("mixamorig:{}", mixamo[i]), "MPFB's mixamo rig names");
        assert!((wa[i].w_axis - wb[i].w_axis).length() < 1e-9, "{} moved", bone.name);
    }
    // The skin still binds every bone.
    assert_eq!(b.skins[0].joints.len(), 3);
    // The diff of the two outputs: the same rig.
    let o = run(&[std::ffi::OsStr::new("diff"), plain.as_os_str(), mapped.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    eprintln!("--map mixamo: {:?} -> {:?}", names, b.skeletons[0].bones.iter().map(|b| &b.name).collect::<Vec<_>>());
}

/// Blender 3.4.1's FBX import of the corpus files it reads (it refuses ASCII and FBX before 7.1):
/// `blender -b --factory-startup --python-expr` with `bpy.ops.import_scene.fbx(filepath=FILE)`
/// (default options), then for each armature object `ob` and bone `b`,
/// `ob.matrix_world @ b.head_local`: world heads in Blender's frame (+Z up, metres), float32.
/// Facts, measured once; Blender's end bones (`*_end`) and unbound IK controls are in the table,
/// skelport reads only the bones clusters bind and their ancestors.
/// A file and its bones' heads as Blender imports them.
type Heads = (&'static str, &'static [(&'static str, [f64; 3])]);

const BLENDER_HEADS: &[Heads] = &[
    (
        "assimp_huesitos.fbx",
        &[
            ("Bone", [-0.04023992642760277, 3.0713536739349365, 0.0]),
            ("Bone.001", [-0.04023992642760277, 3.0713536739349365, 0.7050103545188904]),
            ("Bone.002", [-0.04023992642760277, 3.0713536739349365, 2.111884117126465]),
            ("Bone.004", [0.8825480937957764, 3.411726474761963, 2.111884117126465]),
            ("Bone.005", [1.9944322109222412, 3.888248920440674, 2.111884117126465]),
            ("Bone.006", [3.144134521484375, 4.500920295715332, 2.111884355545044]),
            ("Bone.006_end", [4.180380344390869, 5.022825241088867, 2.1118838787078857]),
            ("Bone.003", [-0.04023992642760277, 3.0713536739349365, 2.111884117126465]),
            ("Bone.007", [-0.04023992642760277, 3.0713539123535156, 3.359916925430298]),
            ("Bone.008", [-0.04023992642760277, 3.0713541507720947, 4.623077392578125]),
            ("Bone.008_end", [-0.04023992642760277, 3.0713541507720947, 5.387024879455566]),
        ],
    ),
    (
        "ufbx_blender_279_sausage_7400_binary.fbx",
        &[
            ("Bottom", [0.0, 0.0, 0.0]),
            ("Middle", [0.0, 3.095493070759403e-07, 1.9000000953674316]),
            ("Top", [0.0, 6.190986141518806e-07, 3.8000001907348633]),
            ("Top_end", [0.0, 9.12355915261287e-07, 5.600000381469727]),
        ],
    ),
    (
        "ufbx_maya_dq_weights_7500_binary.fbx",
        &[
            ("joint1", [-0.000983835430815816, 9.215316704169751e-11, -0.0021082188468426466]),
            ("joint2", [-0.0015460271388292313, -2.4881354754313634e-09, 0.056921906769275665]),
            ("joint3", [-0.0021082188468426466, -5.424750870730577e-09, 0.12410382926464081]),
            ("joint4", [0.04820793494582176, -5.510759848448288e-09, 0.1260714828968048]),
            ("joint5", [0.12297942489385605, -5.523046908706419e-09, 0.12635257840156555]),
            ("joint6", [0.18150494992733002, -5.437037486899499e-09, 0.12438491731882095]),
        ],
    ),
    (
        "ufbx_maya_kenney_character_7700_binary.fbx",
        &[
            ("LeftFootCtrl", [0.30285507440567017, 0.14880989491939545, 0.19320496916770935]),
            ("LeftHeelRoll", [0.32509520649909973, 0.21966291964054108, 0.013303359970450401]),
            ("LeftToeRoll", [0.3539334535598755, -0.08725579082965851, 0.013154953718185425]),
            ("LeftFootIK", [0.30285465717315674, 0.14881032705307007, 0.19320490956306458]),
            ("LeftFootIK_end", [0.3539338707923889, -0.08725568652153015, 0.013154848478734493]),
            ("LeftFootRollCtrl", [0.302854984998703, 0.14881008863449097, 0.19320492446422577]),
            ("LeftFootRollCtrl_end", [0.302854984998703, 0.4415769875049591, 0.19320480525493622]),
            ("LeftKneeCtrl", [0.276967853307724, -0.46914786100387573, 0.7799050211906433]),
            ("LeftKneeCtrl_end", [0.2769677937030792, -0.46914780139923096, 1.1167210340499878]),
            ("RightFootCtrl", [-0.30237293243408203, 0.14881014823913574, 0.19320496916770935]),
            ("RightHeelRoll", [-0.3246133625507355, 0.219662606716156, 0.013303331099450588]),
            ("RightToeRoll", [-0.35345199704170227, -0.08725565671920776, 0.013154891319572926]),
            ("RightFootIK", [-0.3023722469806671, 0.14880985021591187, 0.1932043731212616]),
            ("RightFootIK_end", [-0.3534514605998993, -0.08725616335868835, 0.013154267333447933]),
            ("RightFootRollCtrl", [-0.3023729920387268, 0.14881007373332977, 0.19320492446422577]),
            ("RightFootRollCtrl_end", [-0.3023729920387268, 0.4415769875049591, 0.19320480525493622]),
            ("RightKneeCtrl", [-0.27317413687705994, -0.4691478908061981, 0.7799059152603149]),
            ("RightKneeCtrl_end", [-0.2731741964817047, -0.46914783120155334, 1.1167219877243042]),
            ("HipsCtrl", [-0.00022340755094774067, -0.03123997151851654, 1.564171552658081]),
            ("Hips", [0.00024118932196870446, -0.03123999387025833, 1.2422208786010742]),
            ("Spine", [0.00024117645807564259, -0.031239954754710197, 1.5641720294952393]),
            ("Chest", [0.00024119726731441915, 0.003738547209650278, 1.8490811586380005]),
            ("UpperChest", [0.00024119706358760595, 0.033721230924129486, 2.1528820991516113]),
            ("Neck", [0.0002411972382105887, 0.03372165560722351, 2.42374587059021]),
            ("Head", [0.00024119732552208006, -0.008753149770200253, 2.698493719100952]),
            ("Head_end", [0.00024118674627970904, -0.013749875128269196, 3.7028920650482178]),
            ("LeftShoulder", [0.08852136880159378, -0.03123975358903408, 2.4339661598205566]),
            ("LeftArm", [0.335762619972229, -0.016665143892169, 2.3588836193084717]),
            ("LeftForeArm", [0.8045262694358826, -0.004172585904598236, 2.3172409534454346]),
            ("LeftHand", [1.3289122581481934, -0.039568573236465454, 2.2755990028381348]),
            ("LeftHandIndex1", [1.4671926498413086, -0.03956804424524307, 2.266160488128662]),
            ("LeftHandIndex2", [1.5781564712524414, -0.039567649364471436, 2.2457783222198486]),
            ("LeftHandIndex3", [1.6742844581604004, -0.03956814482808113, 2.211277961730957]),
            ("LeftHandIndex3_end", [1.7941523790359497, -0.039568156003952026, 2.159686803817749]),
            ("LeftHandThumb1", [1.3792545795440674, -0.10430926084518433, 2.2644827365875244]),
            ("LeftHandThumb2", [1.416847825050354, -0.19808374345302582, 2.232840061187744]),
            ("LeftHandThumb2_end", [1.5075874328613281, -0.28522196412086487, 2.1944735050201416]),
            ("RightShoulder", [-0.08804000169038773, -0.031238941475749016, 2.4339637756347656]),
            ("RightArm", [-0.3352810740470886, -0.01666480489075184, 2.358881950378418]),
            ("RightForeArm", [-0.8040434122085571, -0.004172511864453554, 2.3172409534454346]),
            ("RightHand", [-1.328431248664856, -0.039567649364471436, 2.275599718093872]),
            ("RightHandIndex1", [-1.4667093753814697, -0.03956812992691994, 2.2661616802215576]),
            ("RightHandIndex2", [-1.5776740312576294, -0.03956853970885277, 2.2457776069641113]),
            ("RightHandIndex3", [-1.6738001108169556, -0.03956800326704979, 2.211275815963745]),
            ("RightHandIndex3_end", [-1.793651819229126, -0.03956803306937218, 2.15964674949646]),
            ("RightHandThumb1", [-1.3787710666656494, -0.10431104898452759, 2.264481544494629]),
            ("RightHandThumb2", [-1.4163644313812256, -0.1980835646390915, 2.232837677001953]),
            ("RightHandThumb2_end", [-1.5071040391921997, -0.2852218449115753, 2.1944711208343506]),
            ("LeftUpLeg", [0.20177043974399567, -0.031240079551935196, 1.3006843328475952]),
            ("LeftLeg", [0.27421319484710693, -0.011233987286686897, 0.7799050211906433]),
            ("LeftFoot", [0.30285412073135376, 0.14880973100662231, 0.19320553541183472]),
            ("LeftToes", [0.3539334833621979, -0.08725605905056, 0.013155483640730381]),
            ("LeftToes_end", [0.37944671511650085, -0.29879260063171387, 0.004716087598353624]),
            ("RightUpLeg", [-0.20128796994686127, -0.03124009631574154, 1.300683856010437]),
            ("RightLeg", [-0.27373042702674866, -0.011234703473746777, 0.7799046635627747]),
            ("RightFoot", [-0.30237147212028503, 0.14880988001823425, 0.19320417940616608]),
            ("RightToes", [-0.35344985127449036, -0.08725605905056, 0.013154457323253155]),
            ("RightToes_end", [-0.3789665997028351, -0.29879218339920044, 0.004715874325484037]),
        ],
    ),
    (
        "ufbx_motionbuilder_sausage_rrss_7700_binary.fbx",
        &[
            ("Skeleton", [0.0, 0.0, 0.0]),
            ("Bottom", [0.0, 0.0, 0.0]),
            ("Middle", [0.0, -8.305163778921099e-10, 0.01900000125169754]),
            ("Top", [2.8421708795129297e-16, -1.6610327557842197e-09, 0.03800000250339508]),
        ],
    ),
];
