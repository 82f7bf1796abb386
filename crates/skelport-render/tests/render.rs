use skelport_ir::{Bone, BoneId, DVec3, Document, Frame, Skeleton, Transform};
use skelport_render::{
    golden_fixtures, project, render_svg, sample_biped, side_from_name, svg_to_png, Overlay, RenderError, RenderOptions, Side, View,
};

fn bone(name: &str, parent: Option<u32>, t: [f64; 3], len: Option<f64>) -> Bone {
    let mut b = Bone::new(name, parent.map(BoneId::new), Transform::from_rt(Default::default(), DVec3::from_array(t)));
    b.length = len;
    b
}

/// `hips` from (0,0,0) to (0,2,0); `hand.L` from (1,1,0.3) to (1,1.5,0.3) (report frame).
fn two_bones() -> Document {
    let mut sk = Skeleton::new("t");
    sk.push(bone("hips", None, [0.0, 0.0, 0.0], Some(2.0)));
    sk.push(bone("hand.L", Some(0), [1.0, 1.0, 0.3], Some(0.5)));
    Document { skeletons: vec![sk], ..Document::new(Frame::GLTF) }
}

/// Every `<title>NAME</title>…<circle cx cy` in the SVG: the bone's head in pixels, per panel.
fn heads(svg: &str, name: &str) -> Vec<(f64, f64)> {
    let key = format!("<title>{name}</title>");
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find(&key) {
        rest = &rest[i + key.len()..];
        let c = rest.find("<circle").expect("a joint dot follows the title");
        let attr = |a: &str| -> f64 {
            let s = &rest[c..];
            let j = s.find(&format!(" {a}=\"")).expect("attribute") + a.len() + 3;
            s[j..j + s[j..].find('"').expect("closing quote")].parse().expect("number")
        };
        out.push((attr("cx"), attr("cy")));
    }
    out
}

fn attr_num(svg: &str, a: &str) -> f64 {
    let j = svg.find(&format!(" {a}=\"")).expect("attribute") + a.len() + 3;
    svg[j..j + svg[j..].find('"').expect("quote")].parse().expect("number")
}

/// The fill colour of a bone's shape: the first `fill` after its `<title>`.
fn fill(svg: &str, name: &str) -> String {
    let i = svg.find(&format!("<title>{name}</title>")).unwrap();
    let s = &svg[i..];
    let j = s.find("fill=\"").unwrap() + 6;
    s[j..j + 7].to_string()
}

fn opts(view: View, size: u32) -> RenderOptions {
    RenderOptions { view, size, labels: false, mesh: false, caption: "t".into(), overlay: None }
}

#[test]
fn projection_follows_the_documented_conventions() {
    // front: looking −Z, +X right, +Y up; side: looking −X, −Z right; top: looking −Y, −Z up.
    assert_eq!(project(View::Front, [1.0, 2.0, 3.0]), [1.0, 2.0]);
    assert_eq!(project(View::Side, [1.0, 2.0, 3.0]), [-3.0, 2.0]);
    assert_eq!(project(View::Top, [1.0, 2.0, 3.0]), [1.0, -3.0]);
}

#[test]
fn known_bones_land_on_the_expected_pixels() {
    let svg = render_svg(&two_bones(), &opts(View::Front, 400)).unwrap();
    // Layout at size 400: margin 12, font 9, line 14, title 14, footer 2 lines = 28 → scale
    // min((400-24)/1 m, (400-66)/2 m) = 167 px/m; picture 326 × 400: as wide as the legend line
    // needs ((6 + 3.6 + 0.62·20 + 0.62·5) em · 4/3 + 24 px margins at 9 px a em, rounded up);
    // the 1 m wide content is centred in a 302 px panel at x 12: x = 12 + 67.5 + 167·X;
    // y = 26 + 167·(2 − Y).
    assert_eq!((attr_num(&svg, "width"), attr_num(&svg, "height")), (326.0, 400.0));
    assert_eq!(heads(&svg, "hips"), vec![(79.5, 360.0)]);
    assert_eq!(heads(&svg, "hand.L"), vec![(246.5, 193.0)]);

    // The character's left (+X) is on the viewer's right in front view; up is up.
    let all = render_svg(&two_bones(), &opts(View::All, 900)).unwrap();
    let (h, k) = (heads(&all, "hips"), heads(&all, "hand.L"));
    assert_eq!((h.len(), k.len()), (3, 3), "one head per panel");
    assert!(k[0].0 > h[0].0 && k[0].1 < h[0].1, "front: hand right of and above the hips");
    // Side (looking −X): forward +Z is to the viewer's left, so the hand (z = 0.3) is left.
    assert!(k[1].0 < h[1].0 && k[1].1 < h[1].1, "side: hand left of and above the hips");
    assert!((h[1].1 - h[0].1).abs() < 1e-9 && (k[1].1 - k[0].1).abs() < 1e-9, "front and side share heights");
    // Top (looking −Y): +X right, forward +Z down.
    assert!(k[2].0 > h[2].0 && k[2].1 > h[2].1, "top: hand right of and below the hips");
    assert!(((k[2].0 - h[2].0) - (k[0].0 - h[0].0)).abs() < 1e-9, "front and top share the X scale");
}

#[test]
fn sides_from_names() {
    for (name, side) in [
        ("upperarm01.L", Some(Side::Left)),
        ("upperarm_l", Some(Side::Left)),
        ("L_CLAVICLE", Some(Side::Left)),
        ("mCollarLeft", Some(Side::Left)),
        ("mixamorig:LeftHand", Some(Side::Left)),
        ("Bip01 R Thigh", Some(Side::Right)),
        ("hand_right", Some(Side::Right)),
        ("RightUpLeg", Some(Side::Right)),
        ("r_foot", Some(Side::Right)),
        ("spine_01", None),
        ("Bright", None),
        ("lowerLeg", None),
        ("Root", None),
    ] {
        assert_eq!(side_from_name(name), side, "{name}");
    }
}

#[test]
fn unnamed_bones_get_their_side_from_position() {
    let mut sk = Skeleton::new("t");
    sk.push(bone("a", None, [0.0, 1.0, 0.0], Some(0.1)));
    sk.push(bone("b", Some(0), [0.5, 0.0, 0.0], Some(0.1)));
    sk.push(bone("c", Some(0), [-0.5, 0.0, 0.0], Some(0.1)));
    let doc = Document { skeletons: vec![sk], ..Document::new(Frame::GLTF) };
    let svg = render_svg(&doc, &opts(View::Front, 300)).unwrap();
    assert_eq!(fill(&svg, "a"), "#2e8b57", "centre");
    assert_eq!(fill(&svg, "b"), "#1f6fd1", "+X is the character's left");
    assert_eq!(fill(&svg, "c"), "#d1402a", "right");

    // A right arm much longer than the left (a prop in the hand) and more helper bones on the
    // left do not move the centre line: the root's X sets it, so the spine stays centre.
    let mut sk = Skeleton::new("t");
    sk.push(bone("spine", None, [0.0, 1.0, 0.0], Some(0.5)));
    sk.push(bone("LeftArm", Some(0), [0.2, 0.5, 0.0], Some(0.1)));
    sk.push(bone("LeftHand", Some(1), [0.3, 0.0, 0.0], Some(0.1)));
    sk.push(bone("RightArm", Some(0), [-0.2, 0.5, 0.0], Some(0.1)));
    sk.push(bone("RightHand", Some(3), [-0.3, 0.0, 0.0], Some(0.1)));
    sk.push(bone("prop", Some(4), [-1.5, 0.0, 0.0], Some(0.1)));
    for i in 0..6 {
        sk.push(bone(&format!("LeftHelper{i}"), Some(2), [0.8, 0.0, 0.0], Some(0.1)));
    }
    sk.push(bone("chest", Some(0), [0.0, 0.3, 0.0], Some(0.1)));
    let doc = Document { skeletons: vec![sk], ..Document::new(Frame::GLTF) };
    let svg = render_svg(&doc, &opts(View::Front, 300)).unwrap();
    assert_eq!(fill(&svg, "spine"), "#2e8b57", "centre although the heads' X range is lopsided");
    assert_eq!(fill(&svg, "chest"), "#2e8b57", "centre although more bones are named left");
    assert_eq!(fill(&svg, "prop"), "#d1402a", "the prop is on the right");
}

#[test]
fn golden_pictures_match_testdata() {
    let root = skelport_ir::testing::workspace_root().join("testdata");
    let files = golden_fixtures();
    assert_eq!(files.len(), 4);
    for (rel, bytes) in files {
        let have = std::fs::read(root.join(&rel)).unwrap_or_default();
        assert!(
            have == bytes,
            "testdata/{rel} is stale: run `cargo run -p skelport-render --example regen_golden` (or cargo xtask regen-fixtures) and review the picture"
        );
    }
}

#[test]
fn png_has_the_svg_size() {
    let svg = render_svg(&sample_biped(), &RenderOptions { view: View::All, size: 300, labels: true, ..Default::default() }).unwrap();
    let png = svg_to_png(&svg).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((w as f64, h as f64), (attr_num(&svg, "width"), attr_num(&svg, "height")));
    assert_eq!(w.max(h), 300, "the longest side is the size");
    // Deterministic: same input, same bytes.
    assert_eq!(svg_to_png(&svg).unwrap(), png);
}

#[test]
fn overlay_colours_the_moved_bone_hot_and_names_it() {
    let svg = golden_fixtures().into_iter().find(|f| f.0.ends_with("overlay.svg")).map(|f| String::from_utf8(f.1).unwrap()).unwrap();
    let i = svg.find("<title>hand.L</title>").unwrap();
    assert!(svg[i..].starts_with("<title>hand.L</title><path d=") && svg[i..i + 400].contains("fill=\"#d62728\""), "3 cm off: red");
    let j = svg.find("<title>spine</title>").unwrap();
    assert!(svg[j..j + 400].contains("fill=\"#2ca02c\""), "unmoved: green");
    let k = svg.find("<title>toe.R</title>").unwrap();
    assert!(svg[k..k + 400].contains("fill=\"#9a9a9a\""), "unmatched: grey");
    assert!(svg.contains(">3 cm  hand.L</text>"), "worst bone named first");
    assert!(svg.contains("matched by name 21 of 22"));
}

#[test]
fn big_chain_renders_without_labels_and_stays_small() {
    let mut sk = Skeleton::new("chain");
    for i in 0..65_535u32 {
        let a = i as f64 * 0.01;
        let t = if i == 0 { [0.0, 0.0, 0.0] } else { [0.0005 * a.cos(), 0.00003, 0.0005 * a.sin()] };
        sk.push(bone(&format!("b{i}"), i.checked_sub(1), t, None));
    }
    let doc = Document { skeletons: vec![sk], ..Document::new(Frame::GLTF) };
    let svg = render_svg(&doc, &RenderOptions { view: View::All, size: 800, labels: true, ..Default::default() }).unwrap();
    eprintln!("65,535-bone chain: SVG {} bytes", svg.len());
    assert!(svg.len() < 3_000_000, "SVG is {} bytes", svg.len());
    assert!(!svg.contains("<title>") && !svg.contains(">b100<"), "no per-bone titles or labels past the limits");
    assert!(svg.contains("65535 bones"));
    let png = svg_to_png(&svg).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
}

#[test]
fn bad_input_is_refused_not_panicked_on() {
    assert!(matches!(render_svg(&two_bones(), &opts(View::Front, 10)), Err(RenderError::BadSize { size: 10 })));
    assert!(matches!(svg_to_png("<not svg"), Err(RenderError::Svg(_))));
    // Non-finite positions, an empty document and odd names still draw.
    let mut doc = two_bones();
    doc.skeletons[0].bones[1].rest.translation = DVec3::new(f64::NAN, 0.0, f64::INFINITY);
    doc.skeletons[0].bones[0].name = "a<b&\"c\"\u{1}".into();
    let svg = render_svg(&doc, &opts(View::All, 200)).unwrap();
    svg_to_png(&svg).unwrap();
    let empty = render_svg(&Document::new(Frame::GLTF), &opts(View::Top, 200)).unwrap();
    assert!(empty.contains("0 bones"));
    // An overlay with no bones in common.
    let o = RenderOptions { overlay: Some(Overlay { doc: Document::new(Frame::GLTF), caption: "x".into() }), ..opts(View::Front, 200) };
    assert!(render_svg(&two_bones(), &o).unwrap().contains("matched by name 0 of 2"));
}

#[test]
fn other_frames_are_drawn_in_the_report_frame() {
    // The same two bones written in Blender's frame (+Z up, facing −Y) land on the same pixels.
    let mut doc = two_bones();
    doc.convert_frame(Frame::BLENDER);
    assert_eq!(doc.frame, Frame::BLENDER);
    let a = render_svg(&two_bones(), &opts(View::All, 600)).unwrap();
    let b = render_svg(&doc, &opts(View::All, 600)).unwrap();
    assert_eq!(heads(&a, "hand.L"), heads(&b, "hand.L"));
}

#[test]
fn footer_text_fits_inside_a_narrow_overlay_picture() {
    // One narrow panel (a tall skeleton, front view) with an overlay: the caption, the heat legend
    // and the overlay lines are longer than the panel is wide, so the picture widens for them.
    let mut moved = two_bones();
    moved.skeletons[0].bones[1].rest.translation.x += 0.03;
    let o = RenderOptions {
        overlay: Some(Overlay { doc: moved, caption: "a_rather_long_file_name_for_the_overlay.glb".into() }),
        caption: "a_long_source_file_name.json".into(),
        ..opts(View::Front, 800)
    };
    let svg = render_svg(&two_bones(), &o).unwrap();
    let width = attr_num(&svg, "width");
    let font = attr_num(&svg, "font-size");
    let mut checked = 0;
    // Every <text> after the last panel: the footer.
    let footer = &svg[svg.rfind("</g>").unwrap()..];
    for el in footer.split("<text ").skip(1) {
        let x = attr_num(&format!(" {el}"), "x");
        let text = &el[el.find('>').unwrap() + 1..el.find("</text>").unwrap()];
        // 0.62 em a character is the layout's own estimate; DejaVu Sans averages about 0.6.
        assert!(x + 0.6 * font * text.chars().count() as f64 <= width, "{text:?} at x {x} runs past the width {width}");
        checked += 1;
    }
    assert!(checked >= 4, "caption, legend and overlay lines checked ({checked})");
}

/// The largest distance, in pixels, between two corners of the outline drawn for `name`.
fn outline_extent(svg: &str, name: &str) -> f64 {
    let key = format!("<title>{name}</title><path d=\"");
    let i = svg.find(&key).expect("bone outline") + key.len();
    let d = &svg[i..i + svg[i..].find('"').unwrap()];
    let pts: Vec<(f64, f64)> = d
        .trim_end_matches('Z')
        .split(['M', 'L'])
        .filter(|s| !s.is_empty())
        .map(|p| {
            let (x, y) = p.trim().split_once(' ').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    pts.iter().flat_map(|a| pts.iter().map(move |b| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt())).fold(0.0, f64::max)
}

/// A root at the origin with no stored length reaches its pelvis 1 m up when inferred; drawn,
/// it is capped at the median bone length (0.1 m here), so it no longer dwarfs the body.
#[test]
fn inferred_lengths_are_capped_at_the_median() {
    let mut sk = Skeleton::new("t");
    sk.push(bone("root", None, [0.0, 0.0, 0.0], None));
    sk.push(bone("pelvis", Some(0), [0.0, 1.0, 0.0], Some(0.1)));
    sk.push(bone("spine", Some(1), [0.0, 1.1, 0.0], Some(0.1)));
    sk.push(bone("chest", Some(2), [0.0, 1.2, 0.0], Some(0.1)));
    sk.push(bone("neck", Some(3), [0.0, 1.3, 0.0], Some(0.1)));
    let doc = Document { skeletons: vec![sk], ..Document::new(Frame::GLTF) };
    let svg = render_svg(&doc, &opts(View::Front, 400)).unwrap();
    let (root, pelvis) = (outline_extent(&svg, "root"), outline_extent(&svg, "pelvis"));
    assert!(pelvis > 1.0 && root <= pelvis * 1.01, "root {root} px, pelvis {pelvis} px");
}
