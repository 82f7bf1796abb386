//! Property check over random rigs: random trees with random TRS, random bind poses, random
//! sparse weights with up to 9 influences, written as .glb and .gltf and read back.

use skelport_gltf::{GlbFormat, GltfFormat};
use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, ReadOptions, Skeleton, Skin,
    Transform, WriteOptions,
};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn f(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn random_doc(r: &mut Rng) -> Document {
    let frame = [Frame::GLTF, Frame::BLENDER, Frame::SECOND_LIFE][r.below(3)];
    let mut doc = Document::new(frame);
    let mut sk = Skeleton::new("rig");
    let nb = 1 + r.below(40);
    for i in 0..nb {
        let parent = if i == 0 || r.below(10) == 0 { None } else { Some(BoneId::from_index(r.below(i))) };
        let rot = DQuat::from_euler(glam::EulerRot::XYZ, r.f() * 6.0, r.f() * 6.0, r.f() * 6.0);
        let mut b = Bone::new(format!("b{i} \"x\""), parent, Transform::from_rt(rot, DVec3::new(r.f() - 0.5, r.f(), r.f() - 0.5)));
        b.deform = r.below(5) != 0 || i == 0;
        sk.push(b);
    }
    let world = sk.world_matrices();
    let joints: Vec<BoneId> = (0..nb).filter(|&i| sk.bones[i].deform).map(BoneId::from_index).collect();
    let inverse_bind = joints.iter().map(|j| (DMat4::from_translation(DVec3::splat(r.f() * 0.01)) * world[j.index()]).inverse()).collect();
    doc.skeletons.push(sk);
    let nv = 3 + r.below(50);
    let positions: Vec<DVec3> = (0..nv).map(|_| DVec3::new(r.f(), r.f(), r.f())).collect();
    let mut faces = Faces::default();
    for _ in 0..r.below(30) {
        let c = 3 + r.below(3) as u32;
        faces.counts.push(c);
        for _ in 0..c {
            faces.indices.push(r.below(nv) as u32);
        }
    }
    doc.meshes.push(Mesh { name: "m".into(), positions, faces, ..Default::default() });
    let nj = joints.len();
    let lists: Vec<Vec<(u32, f64)>> = (0..nv)
        .map(|_| {
            let k = 1 + r.below(9.min(nj));
            let mut slots: Vec<u32> = (0..nj as u32).collect();
            (0..k).map(|_| (slots.swap_remove(r.below(slots.len())), 0.01 + r.f())).collect()
        })
        .collect();
    doc.skins.push(Skin {
        name: "s".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints,
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(lists),
        ext: Default::default(),
    });
    assert!(skelport_ir::validate::validate(&doc).is_empty(), "{:?}", skelport_ir::validate::validate(&doc));
    doc
}

#[test]
fn random_rigs_round_trip() {
    let mut r = Rng(0x9E3779B97F4A7C15);
    for case in 0..60 {
        let doc = random_doc(&mut r);
        let mut expect = doc.clone();
        expect.convert_frame(Frame::GLTF);
        for format in [&GltfFormat as &dyn Format, &GlbFormat] {
            let out = format.write(&doc, &WriteOptions { embed: true, ..Default::default() }, &mut Diagnostics::default()).unwrap();
            let back = format.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
            assert!(skelport_ir::validate::validate(&back).is_empty(), "case {case}");
            let (a, b) = (&expect.skeletons[0], &back.skeletons[0]);
            assert_eq!(a.bones.len(), b.bones.len(), "case {case}");
            // The reader orders bones depth-first; compare by name.
            let (wa, wb) = (a.world_matrices(), b.world_matrices());
            let names = b.name_map();
            let parent_name = |s: &Skeleton, i: usize| s.bones[i].parent.map(|p| s.bones[p.index()].name.clone());
            for i in 0..a.bones.len() {
                let j = names[a.bones[i].name.as_str()].index();
                assert_eq!(parent_name(a, i), parent_name(b, j), "case {case}");
                assert_eq!(a.bones[i].deform, b.bones[j].deform, "case {case}");
                assert!((wa[i].w_axis - wb[j].w_axis).length() < 1e-5, "case {case} bone {i}");
            }
            let (sa, sb) = (&expect.skins[0], &back.skins[0]);
            let jn = |s: &Skeleton, k: &Skin| k.joints.iter().map(|j| s.bones[j.index()].name.clone()).collect::<Vec<_>>();
            assert_eq!(jn(a, sa), jn(b, sb), "case {case}");
            for (x, y) in sa.inverse_bind.iter().zip(&sb.inverse_bind) {
                let d = x.to_cols_array().iter().zip(y.to_cols_array()).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
                assert!(d < 1e-5, "case {case}: ibm {d}");
            }
            let (mut ia, ib) = (sa.influences.clone(), sb.influences.clone());
            ia.normalize();
            ia.sort_descending();
            for v in 0..ia.vertex_count() {
                let (la, lb): (Vec<_>, Vec<_>) = (ia.vertex(v).collect(), ib.vertex(v).collect());
                assert_eq!(la.iter().map(|e| e.0).collect::<Vec<_>>(), lb.iter().map(|e| e.0).collect::<Vec<_>>(), "case {case} v {v}");
                for (x, y) in la.iter().zip(&lb) {
                    assert!((x.1 - y.1).abs() < 1e-6, "case {case} v {v}");
                }
            }
            assert_eq!(back.meshes[0].faces.indices.len(), expect.meshes[0].faces.triangulate().len(), "case {case}");
        }
    }
}
