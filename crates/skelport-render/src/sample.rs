//! A small synthetic biped for golden pictures and demos, and the golden files themselves.

use crate::{render_svg, svg_to_png, Overlay, RenderOptions, View};
use skelport_ir::{Bone, BoneId, DVec3, Document, Faces, Frame, Mesh, Skeleton, Transform};

/// A 21-bone biped in the glTF/report frame (+Y up, facing +Z, left = +X), 1.75 m tall, with a
/// box mesh around it. Bones have identity rest rotations, so world heads are sums of offsets.
pub fn sample_biped() -> Document {
    let mut sk = Skeleton::new("biped");
    let add = |sk: &mut Skeleton, name: &str, parent: Option<BoneId>, t: [f64; 3]| {
        sk.push(Bone::new(name, parent, Transform::from_rt(Default::default(), DVec3::from_array(t))))
    };
    let root = add(&mut sk, "root", None, [0.0, 0.0, 0.0]);
    let hips = add(&mut sk, "hips", Some(root), [0.0, 1.0, 0.0]);
    let spine = add(&mut sk, "spine", Some(hips), [0.0, 0.2, 0.0]);
    let chest = add(&mut sk, "chest", Some(spine), [0.0, 0.25, 0.0]);
    let neck = add(&mut sk, "neck", Some(chest), [0.0, 0.1, 0.0]);
    let head = add(&mut sk, "head", Some(neck), [0.0, 0.1, 0.02]);
    sk.bones[head.index()].length = Some(0.2);
    for (side, sx) in [("L", 1.0), ("R", -1.0)] {
        let sh = add(&mut sk, &format!("shoulder.{side}"), Some(chest), [0.05 * sx, 0.05, 0.0]);
        let ua = add(&mut sk, &format!("upper_arm.{side}"), Some(sh), [0.15 * sx, 0.0, 0.0]);
        let fa = add(&mut sk, &format!("forearm.{side}"), Some(ua), [0.28 * sx, -0.05, 0.02]);
        add(&mut sk, &format!("hand.{side}"), Some(fa), [0.25 * sx, -0.03, 0.03]);
    }
    for (side, sx) in [("L", 1.0), ("R", -1.0)] {
        let th = add(&mut sk, &format!("thigh.{side}"), Some(hips), [0.1 * sx, -0.05, 0.0]);
        let sn = add(&mut sk, &format!("shin.{side}"), Some(th), [0.0, -0.45, 0.02]);
        let ft = add(&mut sk, &format!("foot.{side}"), Some(sn), [0.0, -0.42, -0.03]);
        add(&mut sk, &format!("toe.{side}"), Some(ft), [0.0, -0.06, 0.15]);
    }
    let mut mesh = Mesh { name: "body".into(), ..Default::default() };
    let boxes: [([f64; 3], [f64; 3]); 6] = [
        ([-0.16, 0.95, -0.1], [0.16, 1.52, 0.1]),
        ([-0.09, 1.6, -0.09], [0.09, 1.85, 0.12]),
        ([0.03, 0.0, -0.07], [0.16, 0.95, 0.08]),
        ([-0.16, 0.0, -0.07], [-0.03, 0.95, 0.08]),
        ([0.16, 1.38, -0.05], [0.85, 1.52, 0.1]),
        ([-0.85, 1.38, -0.05], [-0.16, 1.52, 0.1]),
    ];
    for (lo, hi) in boxes {
        add_box(&mut mesh, DVec3::from_array(lo), DVec3::from_array(hi));
    }
    Document { skeletons: vec![sk], meshes: vec![mesh], ..Document::new(Frame::GLTF) }
}

fn add_box(m: &mut Mesh, lo: DVec3, hi: DVec3) {
    let base = m.positions.len() as u32;
    for i in 0..8 {
        m.positions.push(DVec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        ));
    }
    let quads = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
    let f: &mut Faces = &mut m.faces;
    for q in quads {
        f.counts.push(4);
        f.indices.extend(q.iter().map(|&v| base + v));
    }
}

/// The biped as another tool might have exported it: the left hand 3 cm off, the head 1 cm
/// off, and `toe.R` renamed (so it is unmatched). The overlay golden picture uses it.
pub fn sample_biped_moved() -> Document {
    let mut d = sample_biped();
    let sk = &mut d.skeletons[0];
    for b in &mut sk.bones {
        match b.name.as_str() {
            "hand.L" => b.rest.translation += DVec3::new(0.0, -0.03, 0.0),
            "head" => b.rest.translation += DVec3::new(0.0, 0.0, 0.01),
            "toe.R" => b.name = "toe_r".into(),
            _ => {}
        }
    }
    d.meshes.clear();
    d
}

/// The golden pictures under `testdata/`: `(path relative to testdata/, bytes)`, for
/// `cargo xtask regen-fixtures` and the golden tests.
pub fn golden_fixtures() -> Vec<(String, Vec<u8>)> {
    let doc = sample_biped();
    let base = RenderOptions { caption: "biped (synthetic)".into(), ..Default::default() };
    let front = RenderOptions { view: View::Front, size: 480, labels: true, ..base.clone() };
    let all = RenderOptions { view: View::All, size: 960, labels: false, ..base.clone() };
    let overlay = RenderOptions {
        view: View::All,
        size: 960,
        labels: false,
        mesh: false,
        overlay: Some(Overlay { doc: sample_biped_moved(), caption: "biped (moved)".into() }),
        ..base.clone()
    };
    let mut out = Vec::new();
    // The options above are always valid, so rendering cannot fail; skip a file rather than panic.
    if let Ok(svg) = render_svg(&doc, &front) {
        if let Ok(png) = svg_to_png(&svg) {
            out.push(("render/biped_front.png".to_string(), png));
        }
        out.push(("render/biped_front.svg".to_string(), svg.into_bytes()));
    }
    if let Ok(svg) = render_svg(&doc, &all) {
        out.push(("render/biped_all.svg".to_string(), svg.into_bytes()));
    }
    if let Ok(svg) = render_svg(&doc, &overlay) {
        out.push(("render/biped_overlay.svg".to_string(), svg.into_bytes()));
    }
    out
}
