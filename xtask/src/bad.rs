//! The malformed-input suite `testdata/bad/<format>/`: files written by skelport itself (the demo
//! sample through each writer, or a few hand-written lines) and then broken on purpose — truncated,
//! mis-encoded, wrong types, missing keys, out-of-range numbers and indices, cycles, duplicates,
//! entity bombs, deep nesting, lying sizes. `crates/skelport-cli/tests/bad_inputs.rs` runs
//! `skelport convert` on each and compares the message with `<name>.expected`.

use serde_json::{json, Value};
use skelport::Format;

/// One malformed file: its name (with extension) and bytes.
type Case = (String, Vec<u8>);

fn demo(name: &str) -> Vec<u8> {
    let want = format!("demo/{name}");
    skelport::demo::fixtures().into_iter().find(|(r, _)| *r == want).map(|(_, b)| b).unwrap_or_else(|| panic!("no demo fixture {name}"))
}

/// The demo sample's main file as `f` writes it (testdata/demo/): the seed a suite breaks.
fn main_seed(f: &dyn Format) -> Vec<u8> {
    demo(&skelport::demo::file_name(f))
}

/// The weights file `f` writes beside the demo sample (what its reader is given back).
fn weights_seed(f: &dyn Format) -> Vec<u8> {
    let opts = skelport_ir::WriteOptions { file_stem: "sample".into(), ..Default::default() };
    let out = f.write(&skelport::demo::sample(), &opts, &mut skelport_ir::Diagnostics::default()).expect("demo writes");
    f.read_back(&out).weights_data.expect("a weights file beside the demo sample").bytes.to_vec()
}

/// The demo sample through a registered writer with embedded buffers (one self-contained file).
fn embedded(f: &dyn Format) -> Vec<u8> {
    let opts = skelport_ir::WriteOptions { file_stem: "sample".into(), embed: true, ..Default::default() };
    f.write(&skelport::demo::sample(), &opts, &mut skelport_ir::Diagnostics::default()).expect("demo writes").main
}

/// Deterministic filler bytes (xorshift), for "random garbage" cases.
fn garbage(n: usize, mut seed: u32) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u8
        })
        .collect()
}

fn utf16(text: &str, le: bool, bom: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if bom {
        out.extend_from_slice(if le { &[0xFF, 0xFE] } else { &[0xFE, 0xFF] });
    }
    for u in text.encode_utf16() {
        out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
    }
    out
}

/// Replace the `n`th (0-based) occurrence of `from`; panics when it is missing, so a changed
/// writer cannot silently turn a malformed case into a valid one.
fn replace_nth(text: &str, from: &str, to: &str, n: usize) -> String {
    let (i, _) = text.match_indices(from).nth(n).unwrap_or_else(|| panic!("bad-suite seed has no occurrence {n} of {from:?}"));
    format!("{}{}{}", &text[..i], to, &text[i + from.len()..])
}

/// Cases every binary container gets: empty, its header alone, truncations, random bytes.
fn binary_generic(seed: &[u8], ext: &str, header: usize, garbage_seed: u32, out: &mut Vec<Case>) {
    let n = seed.len();
    out.push((format!("empty.{ext}"), Vec::new()));
    out.push((format!("header-only.{ext}"), seed[..header].to_vec()));
    for pct in [1, 10, 25, 50, 75, 99] {
        out.push((format!("truncated-{pct:02}pct.{ext}"), seed[..n * pct / 100].to_vec()));
    }
    out.push((format!("binary-garbage.{ext}"), garbage(512, garbage_seed)));
}

/// `seed` with `bytes` written over it at `at`, as the case `<name>.<ext>`.
fn patched(seed: &[u8], ext: &str, name: &str, at: usize, bytes: &[u8]) -> Case {
    let mut v = seed.to_vec();
    v[at..at + bytes.len()].copy_from_slice(bytes);
    (format!("{name}.{ext}"), v)
}

/// Cases every text format gets: truncation, encodings, stray bytes.
fn text_generic(seed: &[u8], ext: &str, out: &mut Vec<Case>) {
    let n = seed.len();
    out.push((format!("empty.{ext}"), Vec::new()));
    out.push((format!("one-byte.{ext}"), seed[..1].to_vec()));
    for pct in [1, 10, 25, 50, 75, 99] {
        out.push((format!("truncated-{pct:02}pct.{ext}"), seed[..n * pct / 100].to_vec()));
    }
    out.push((format!("truncated-last-byte.{ext}"), seed[..n - 2].to_vec()));
    let mut v = seed.to_vec();
    v.insert(n / 3, 0xC3);
    v.insert(n / 3 + 1, 0x28);
    out.push((format!("invalid-utf8-sequence.{ext}"), v));
    let mut v = seed.to_vec();
    v.insert(n / 2, 0x80);
    out.push((format!("invalid-utf8-continuation.{ext}"), v));
    // The first 4 KiB (at a line break) are enough: readers stop at the encoding.
    let text = String::from_utf8_lossy(seed);
    let head = match text.char_indices().nth(4096) {
        Some((i, _)) => &text[..text[..i].rfind('\n').map_or(i, |l| l + 1)],
        None => &text[..],
    };
    out.push((format!("utf16le-without-bom.{ext}"), utf16(head, true, false)));
    out.push((format!("utf16be-without-bom.{ext}"), utf16(head, false, false)));
    let mut v = seed.to_vec();
    v.splice(n / 2..n / 2, [0u8; 8]);
    out.push((format!("nul-bytes.{ext}"), v));
    out.push((format!("binary-garbage.{ext}"), garbage(512, 0x5eed)));
}

/// Cases every JSON format gets.
fn json_generic(seed: &[u8], ext: &str, out: &mut Vec<Case>) {
    text_generic(seed, ext, out);
    let text = String::from_utf8_lossy(seed).into_owned();
    // Past serde_json's recursion limit (128) with room to spare; deeper only costs bytes.
    out.push((format!("deep-arrays.{ext}"), "[".repeat(1_000).into_bytes()));
    out.push((format!("deep-objects.{ext}"), "{\"a\":".repeat(1_000).into_bytes()));
    out.push((
        format!("deep-inside.{ext}"),
        replace_nth(&text, "{", &format!("{{\"deep\":{}1{},", "[".repeat(300), "]".repeat(300)), 0).into_bytes(),
    ));
    out.push((format!("top-level-array.{ext}"), b"[]\n".to_vec()));
    out.push((format!("top-level-string.{ext}"), b"\"rig\"\n".to_vec()));
    out.push((format!("top-level-number.{ext}"), b"42\n".to_vec()));
    out.push((format!("top-level-null.{ext}"), b"null\n".to_vec()));
    out.push((format!("trailing-comma.{ext}"), format!("{},}}", text.trim_end().trim_end_matches('}')).into_bytes()));
    out.push((format!("trailing-garbage.{ext}"), format!("{text}\n}} extra").into_bytes()));
    out.push((format!("single-quotes.{ext}"), text.replacen('"', "'", 2).into_bytes()));
    out.push((format!("bad-escape.{ext}"), replace_nth(&text, "\"", "\"\\q", 1).into_bytes()));
    out.push((format!("lone-surrogate.{ext}"), replace_nth(&text, "\"", "\"\\ud800", 3).into_bytes()));
    out.push((format!("control-character.{ext}"), replace_nth(&text, "\"", "\"\u{1}", 3).into_bytes()));
}

/// Replace the first number following `key` with `lit` (NaN, Infinity, 1e999 …): JSON has no
/// NaN, so these are text edits.
fn number_after(text: &str, key: &str, lit: &str) -> Vec<u8> {
    let k = text.find(key).unwrap_or_else(|| panic!("bad-suite seed has no {key}"));
    let rest = &text[k + key.len()..];
    let s = k + key.len() + rest.find(|c: char| c == '-' || c.is_ascii_digit()).expect("a number");
    let e = s + text[s..].find(|c: char| !(c == '-' || c == '.' || c == 'e' || c == 'E' || c == '+' || c.is_ascii_digit())).expect("end");
    format!("{}{}{}", &text[..s], lit, &text[e..]).into_bytes()
}

/// JSON number edits under `key`.
fn json_numbers(seed: &[u8], ext: &str, key: &str, out: &mut Vec<Case>) {
    let text = String::from_utf8_lossy(seed);
    for (name, lit) in [("nan", "NaN"), ("infinity", "Infinity"), ("overflow", "1e999"), ("negative-overflow", "-1e999")] {
        out.push((format!("number-{name}.{ext}"), number_after(&text, key, lit)));
    }
}

/// Edit the parsed JSON and write it back pretty.
fn jedit(seed: &[u8], name: &str, ext: &str, f: impl FnOnce(&mut Value)) -> Case {
    let mut v: Value = serde_json::from_slice(seed).expect("seed is JSON");
    f(&mut v);
    let mut b = serde_json::to_vec_pretty(&v).expect("serialises");
    b.push(b'\n');
    (format!("{name}.{ext}"), b)
}

/// `v[ptr] = new` (adding the key when its object exists), panicking when the place does not
/// exist, so a changed writer cannot silently turn a case into something else.
fn set(v: &mut Value, ptr: &str, new: Value) {
    if let Some(slot) = v.pointer_mut(ptr) {
        *slot = new;
        return;
    }
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(key.to_string(), new);
        }
        _ => panic!("bad-suite seed has no {ptr}"),
    }
}

fn remove(v: &mut Value, ptr: &str) {
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    let p = v.pointer_mut(parent).unwrap_or_else(|| panic!("bad-suite seed has no {parent}"));
    match p {
        Value::Object(m) => {
            m.shift_remove(key).unwrap_or_else(|| panic!("bad-suite seed has no {ptr}"));
        }
        Value::Array(a) => {
            a.remove(key.parse::<usize>().expect("index"));
        }
        _ => panic!("{parent} is not a container"),
    }
}

/// Cases every XML format gets (on the UTF-8 text; `enc` re-encodes for the format).
fn xml_generic(text: &str, root: &str, ext: &str, enc: &dyn Fn(&str) -> Vec<u8>, out: &mut Vec<Case>) {
    let decl_end = text.find("?>").map(|i| i + 2).unwrap_or(0);
    let (decl, body) = text.split_at(decl_end);
    let bomb = format!(
        "{decl}\n<!DOCTYPE {root} [\n <!ENTITY a \"aaaaaaaaaa\">\n <!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n <!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n <!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n <!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n <!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">\n <!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">\n]>\n<!-- &g; -->{}",
        replace_nth(body, "\">", "\" bomb=\"&g;\">", 0)
    );
    out.push((format!("entity-expansion-bomb.{ext}"), enc(&bomb)));
    let ext_ent = format!(
        "{decl}\n<!DOCTYPE {root} [ <!ENTITY xxe SYSTEM \"file:///etc/passwd\"> ]>{}",
        replace_nth(body, "\">", "\" leak=\"&xxe;\">", 0)
    );
    out.push((format!("external-entity.{ext}"), enc(&ext_ent)));
    out.push((format!("external-dtd.{ext}"), enc(&format!("{decl}\n<!DOCTYPE {root} SYSTEM \"http://example.invalid/evil.dtd\">{body}"))));
    // Past the XML readers' depth caps (256, docs/limits.md) with room to spare; deeper only costs bytes.
    let deep = format!("{}{}", "<n>".repeat(1_000), "</n>".repeat(1_000));
    let close = format!("</{root}>");
    out.push((format!("deep-nesting.{ext}"), enc(&text.replacen(&close, &format!("{deep}{close}"), 1))));
    out.push((format!("unknown-entity.{ext}"), enc(&replace_nth(text, "\">", "\" x=\"&nosuch;\">", 0))));
    out.push((format!("mismatched-close-tag.{ext}"), enc(&text.replacen(&close, &format!("</{root}x>"), 1))));
    out.push((format!("two-roots.{ext}"), enc(&format!("{text}\n<{root}/>\n"))));
    out.push((format!("text-after-root.{ext}"), enc(&format!("{text}\ntrailing text\n"))));
    // The root element's first attribute: earlier ones may sit in the declaration or a processing
    // instruction (AnvilToolkit's `<?info tool="…"?>`), whose content is free text, not attributes.
    let root_at = text.match_indices('<').map(|(i, _)| i).find(|&i| !text[i + 1..].starts_with(['?', '!'])).expect("a root element");
    out.push((
        format!("unquoted-attribute.{ext}"),
        enc(&format!("{}{}", &text[..root_at], replace_nth(&text[root_at..], "=\"", "=x\"", 0))),
    ));
    out.push((format!("unterminated-comment.{ext}"), enc(&format!("{decl}\n<!-- never closed {body}"))));
    out.push((format!("wrong-root.{ext}"), enc(&format!("{decl}\n<html><body/></html>\n"))));
}

fn mpfb(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    json_generic(&seed, "json", out);
    json_numbers(&seed, "json", "\"default_position\"", out);
    let first = serde_json::from_slice::<Value>(&seed).unwrap()["bones"].as_object().unwrap().keys().next().unwrap().clone();
    let second = serde_json::from_slice::<Value>(&seed).unwrap()["bones"].as_object().unwrap().keys().nth(1).unwrap().clone();
    let b = |n: &str| format!("/bones/{n}");
    out.push(jedit(&seed, "bones-not-object", "json", |v| set(v, "/bones", json!([1, 2]))));
    out.push(jedit(&seed, "bones-empty", "json", |v| set(v, "/bones", json!({}))));
    out.push(jedit(&seed, "bone-not-object", "json", |v| set(v, &b(&first), json!("bone"))));
    out.push(jedit(&seed, "missing-head", "json", |v| remove(v, &format!("{}/head", b(&first)))));
    out.push(jedit(&seed, "head-is-joint-name", "json", |v| set(v, &format!("{}/head", b(&first)), json!("joint-pelvis"))));
    out.push(jedit(&seed, "default-position-wrong-type", "json", |v| set(v, &format!("{}/head/default_position", b(&first)), json!("x"))));
    out.push(jedit(&seed, "default-position-two-numbers", "json", |v| {
        set(v, &format!("{}/tail/default_position", b(&first)), json!([0, 1]))
    }));
    out.push(jedit(&seed, "parent-cycle", "json", |v| {
        set(v, &format!("{}/parent", b(&first)), json!(second.clone()));
        set(v, &format!("{}/parent", b(&second)), json!(first.clone()));
    }));
    out.push(jedit(&seed, "self-parent", "json", |v| set(v, &format!("{}/parent", b(&first)), json!(first.clone()))));
    out.push(jedit(&seed, "version-from-the-future", "json", |v| set(v, "/version", json!(999))));
    out.push(jedit(&seed, "missing-tail", "json", |v| remove(v, &format!("{}/tail", b(&second)))));
    out.push(jedit(&seed, "strategy-unknown-no-default", "json", |v| {
        set(v, &format!("{}/head", b(&second)), json!({"strategy": "TELEPORT"}));
    }));
}

fn mpfb_weights(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = weights_seed(f);
    json_generic(&seed, "json", out);
    json_numbers(&seed, "json", "\"weights\"", out);
    let group = serde_json::from_slice::<Value>(&seed).unwrap()["weights"].as_object().unwrap().keys().next().unwrap().clone();
    let g = format!("/weights/{group}");
    out.push(jedit(&seed, "missing-weights", "json", |v| remove(v, "/weights")));
    out.push(jedit(&seed, "weights-not-object", "json", |v| set(v, "/weights", json!([[0, 1.0]]))));
    out.push(jedit(&seed, "group-not-array", "json", |v| set(v, &g, json!({"0": 1.0}))));
    out.push(jedit(&seed, "pair-three-items", "json", |v| set(v, &format!("{g}/0"), json!([0, 1.0, 2]))));
    out.push(jedit(&seed, "pair-wrong-types", "json", |v| set(v, &format!("{g}/0"), json!(["0", "1.0"]))));
    out.push(jedit(&seed, "negative-vertex", "json", |v| set(v, &format!("{g}/0"), json!([-1, 0.5]))));
    out.push(jedit(&seed, "huge-vertex", "json", |v| set(v, &format!("{g}/0"), json!([u64::MAX, 0.5]))));
    out.push(jedit(&seed, "vertex-past-cap", "json", |v| set(v, &format!("{g}/0"), json!([4_000_000_000u64, 0.5]))));
    out.push(jedit(&seed, "fractional-vertex", "json", |v| set(v, &format!("{g}/0"), json!([1.5, 0.5]))));
    out.push(jedit(&seed, "pair-not-array", "json", |v| set(v, &format!("{g}/0"), json!(7))));
}

fn obj(_: &'static dyn Format, out: &mut Vec<Case>) {
    let mut seed = String::from("# a box written for skelport's malformed-input suite\n");
    for z in [0, 1] {
        for (x, y) in [(0, 0), (1, 0), (1, 1), (0, 1)] {
            seed.push_str(&format!("v {x}.0 {y}.0 {z}.0\n"));
        }
    }
    seed.push_str("g body\nf 1 2 3 4\nf 5 6 7 8\nf 1 2 6 5\ng helper-box\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n");
    let s = seed.as_bytes();
    text_generic(s, "obj", out);
    // Cutting the box at 50 %, 99 % or two bytes before the end leaves whole `v` lines and faces
    // of at least three corners: a smaller valid OBJ, not a malformed one. Those cuts are replaced
    // by cuts inside a statement.
    out.retain(|(n, _)| !matches!(n.as_str(), "truncated-50pct.obj" | "truncated-99pct.obj" | "truncated-last-byte.obj"));
    let cut_after = |at: &str| {
        let i = seed.find(at).unwrap_or_else(|| panic!("bad-suite seed has no {at:?}")) + at.len();
        seed.as_bytes()[..i].to_vec()
    };
    out.push(("truncated-inside-vertex.obj".into(), cut_after("v 1.0 1.0 1.0\nv 0.0 1.0")));
    out.push(("truncated-inside-face.obj".into(), cut_after("f 4 1")));
    out.push(("truncated-after-first-face.obj".into(), cut_after("f 1 2 3 4\nf 5 6 7 8\nf 1 2 6 5\ng helper-box\nf 2")));
    let edits: &[(&str, &str, &str)] = &[
        ("vertex-nan", "v 1.0 0.0 0.0", "v nan 0.0 0.0"),
        ("vertex-inf", "v 1.0 0.0 0.0", "v 1.0 inf 0.0"),
        ("vertex-overflow", "v 1.0 0.0 0.0", "v 1e999 0.0 0.0"),
        ("vertex-two-numbers", "v 1.0 0.0 0.0", "v 1.0 0.0"),
        ("vertex-word", "v 1.0 0.0 0.0", "v one 0.0 0.0"),
        ("face-index-zero", "f 1 2 3 4", "f 0 2 3 4"),
        ("face-index-huge", "f 1 2 3 4", "f 1 2 3 4000000000"),
        ("face-index-past-end", "f 1 2 3 4", "f 1 2 3 9"),
        ("face-negative-past-start", "f 1 2 3 4", "f -9 2 3 4"),
        ("face-i64-overflow", "f 1 2 3 4", "f 99999999999999999999 2 3 4"),
        ("face-two-corners", "f 1 2 3 4", "f 1 2"),
        ("face-word", "f 1 2 3 4", "f a b c"),
        ("face-slash-only", "f 1 2 3 4", "f / / /"),
        ("face-before-vertices", "# a box", "f 1 2 3\n# a box"),
        ("vertex-hex", "v 1.0 0.0 0.0", "v 0x1 0.0 0.0"),
        ("face-negative-zero", "f 1 2 3 4", "f -0 2 3 4"),
        ("vertex-empty", "v 1.0 0.0 0.0", "v"),
        ("face-float-index", "f 1 2 3 4", "f 1.5 2 3 4"),
        ("face-index-plus-overflow", "f 1 2 3 4", "f 1 2 3 +4294967297"),
        ("vertex-minus-inf", "v 1.0 0.0 0.0", "v -inf 0.0 0.0"),
        ("vertex-nan-z", "v 1.0 1.0 1.0", "v 1.0 1.0 NaN"),
        ("face-texture-only", "f 1 2 3 4", "f /1 /2 /3"),
        ("vertex-comma-decimal", "v 1.0 0.0 0.0", "v 1,0 0,0 0,0"),
        ("face-unicode-digits", "f 1 2 3 4", "f \u{0661} 2 3"),
        ("face-last-line-past-end", "f 4 1 5 8\n", "f 4 1 5 99\n"),
        ("face-empty", "f 1 2 3 4", "f"),
        ("vertex-huge-exponent-neg", "v 1.0 0.0 0.0", "v -1e999 0.0 0.0"),
        ("face-negative-huge", "f 1 2 3 4", "f -99999999999 2 3 4"),
    ];
    for (name, from, to) in edits {
        out.push((format!("{name}.obj"), seed.replacen(from, to, 1).into_bytes()));
    }
}

fn anvil_standard(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    let text = String::from_utf16_lossy(&seed[2..].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect::<Vec<_>>());
    // Standard form is UTF-16 with a BOM: truncation and byte edits apply to those bytes.
    text_generic(&seed, "xml", out);
    let enc = |t: &str| utf16(t, true, true);
    xml_generic(&text, "Skeleton", "xml", &enc, out);
    out.push(("declared-utf16-but-utf8.xml".into(), text.clone().into_bytes()));
    out.push(("utf16-odd-length.xml".into(), {
        let mut v = seed.clone();
        v.push(b'<');
        v
    }));
    let edits: &[(&str, &str, &str, usize)] = &[
        ("position-nan", "<X>0</X>", "<X>NaN</X>", 0),
        ("position-inf", "<X>0</X>", "<X>inf</X>", 1),
        ("position-word", "<Y>0</Y>", "<Y>zero</Y>", 0),
        ("rotation-overflow", "<Z>1</Z>", "<Z>1e999</Z>", 0),
        ("uint32-negative", "Type=\"UInt32\">0<", "Type=\"UInt32\">-1<", 0),
        ("uint32-too-big", "Type=\"UInt32\">0<", "Type=\"UInt32\">99999999999<", 0),
        ("unknown-value-type", "Type=\"UInt32\"", "Type=\"Quaternion9\"", 1),
        ("missing-bones-list", "<List Name=\"Bones\">", "<List Name=\"Bonez\">", 0),
        (
            "parent-link-unknown-id",
            "<Value Name=\"Value\" Type=\"UInt64\">4160749569</Value>",
            "<Value Name=\"Value\" Type=\"UInt64\">12345</Value>",
            0,
        ),
        ("vector-missing-component", "<X>0</X> <Y>0</Y> <Z>0</Z> <W>0</W>", "<X>0</X> <Y>0</Y> <W>0</W>", 0),
        ("bone-id-not-number", "<Bone ID=\"4160749569\">", "<Bone ID=\"root\">", 0),
        ("skeleton-id-negative", "<Skeleton ID=\"4160749568\">", "<Skeleton ID=\"-4\">", 0),
    ];
    for (name, from, to, n) in edits {
        out.push((format!("{name}.xml"), enc(&replace_nth(&text, from, to, *n))));
    }
    let ids: Vec<&str> = text.match_indices("<Bone ID=\"").map(|(i, _)| &text[i + 10..i + 20]).collect();
    out.push((
        "duplicate-bone-id.xml".into(),
        enc(&replace_nth(&text, &format!("<Bone ID=\"{}\"", ids[2]), &format!("<Bone ID=\"{}\"", ids[1]), 0)),
    ));
    // The root's null parent made a link to itself, and to its own child (a cycle).
    let link = |id: &str| format!("<ObjectPtr Name=\"Parent\"><Link><Value Name=\"Value\" Type=\"UInt64\">{id}</Value></Link></ObjectPtr>");
    out.push(("self-parent.xml".into(), enc(&replace_nth(&text, "<ObjectPtr Name=\"Parent\" />", &link(ids[0]), 0))));
    out.push(("parent-cycle.xml".into(), enc(&replace_nth(&text, "<ObjectPtr Name=\"Parent\" />", &link(ids[1]), 0))));
}

fn anvil_schema(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    let text = String::from_utf8(seed.clone()).expect("schema form is UTF-8");
    text_generic(&seed, "xml", out);
    let enc = |t: &str| t.as_bytes().to_vec();
    xml_generic(&text, "Object", "xml", &enc, out);
    let edits: &[(&str, &str, &str, usize)] = &[
        ("vector-nan", "( 0, 0, 0, 0 )", "( NaN, 0, 0, 0 )", 0),
        ("vector-inf", "( 0, 0, 0, 0 )", "( 0, inf, 0, 0 )", 1),
        ("vector-three-components", "( 0, 0, 1, 0 )", "( 0, 0, 1 )", 0),
        ("vector-word", "( 0, 0, 0, 0 )", "( a, b, c, d )", 0),
        ("quaternion-overflow", "( 0, 0, 1, 0 )", "( 0, 0, 1e999, 0 )", 0),
        ("unsigned8-too-big", "<Unsigned8 Name=\"SolvingPriority\">0<", "<Unsigned8 Name=\"SolvingPriority\">300<", 0),
        ("unsigned8-negative", "<Unsigned8 Name=\"SolvingPriority\">0<", "<Unsigned8 Name=\"SolvingPriority\">-1<", 0),
        ("hash-not-number", "<Hash32 Name=\"BoneID\" HashValue=\"root\">385153371<", "<Hash32 Name=\"BoneID\" HashValue=\"root\">root<", 0),
        ("link-unknown-id", "Path=\"4160749569\">4160749569<", "Path=\"1\">1<", 0),
        ("pointer-type-unknown", "PointerType=\"Null\"", "PointerType=\"Teleport\"", 0),
        ("missing-bones-array", "<DynamicSmallArray Name=\"Bones\"", "<DynamicSmallArray Name=\"Bonez\"", 0),
        ("enum-unknown", "Value=\"SKELETONTYPE_BIPED\">0<", "Value=\"SKELETONTYPE_OCTOPUS\">77<", 0),
        ("object-id-word", "<Object ID=\"4160749568\"", "<Object ID=\"skeleton\"", 0),
        ("float-nan", "<Float Name=\"WrinkleFactor\">0<", "<Float Name=\"WrinkleFactor\">NaN<", 0),
    ];
    for (name, from, to, n) in edits {
        out.push((format!("{name}.xml"), enc(&replace_nth(&text, from, to, *n))));
    }
    let ids: Vec<&str> = text.match_indices("Type=\"Bone\"").map(|(i, _)| &text[i - 12..i - 2]).collect();
    out.push((
        "duplicate-bone-id.xml".into(),
        enc(&replace_nth(&text, &format!("ID=\"{}\" Type=\"Bone\"", ids[2]), &format!("ID=\"{}\" Type=\"Bone\"", ids[1]), 0)),
    ));
    out.push(("utf8-declared-utf16.xml".into(), enc(&text.replacen("encoding=\"utf-8\"", "encoding=\"utf-16\"", 1))));
}

fn gltf_json_edits(seed: &[u8], ext: &str, out: &mut Vec<Case>, wrap: &dyn Fn(Case) -> Case) {
    let e = |name: &str, f: &dyn Fn(&mut Value)| wrap(jedit(seed, name, ext, f));
    out.push(e("accessor-count-past-buffer", &|v| set(v, "/accessors/1/count", json!(1_000_000_000))));
    out.push(e("accessor-bufferview-missing", &|v| set(v, "/accessors/1/bufferView", json!(999))));
    out.push(e("accessor-component-type-unknown", &|v| set(v, "/accessors/1/componentType", json!(1234))));
    out.push(e("accessor-type-unknown", &|v| set(v, "/accessors/1/type", json!("VEC7"))));
    out.push(e("accessor-negative-count", &|v| set(v, "/accessors/1/count", json!(-5))));
    out.push(e("accessor-offset-huge", &|v| set(v, "/accessors/1/byteOffset", json!(4_000_000_000u64))));
    out.push(e("bufferview-offset-past-buffer", &|v| set(v, "/bufferViews/1/byteOffset", json!(1_000_000))));
    out.push(e("bufferview-length-past-buffer", &|v| set(v, "/bufferViews/1/byteLength", json!(1_000_000))));
    out.push(e("bufferview-buffer-negative", &|v| set(v, "/bufferViews/1/buffer", json!(-1))));
    out.push(e("buffer-length-larger-than-data", &|v| set(v, "/buffers/0/byteLength", json!(20_000_000))));
    out.push(e("skin-joint-index-huge", &|v| set(v, "/skins/0/joints/3", json!(4_000_000_000u64))));
    out.push(e("skin-joint-index-negative", &|v| set(v, "/skins/0/joints/3", json!(-1))));
    out.push(e("skin-joints-duplicate", &|v| set(v, "/skins/0/joints/3", json!(2))));
    out.push(e("skin-inverse-bind-missing-accessor", &|v| set(v, "/skins/0/inverseBindMatrices", json!(77))));
    out.push(e("node-child-cycle", &|v| set(v, "/nodes/2/children", json!([1]))));
    out.push(e("node-self-child", &|v| set(v, "/nodes/1/children", json!([1]))));
    out.push(e("node-child-index-huge", &|v| set(v, "/nodes/1/children/0", json!(20_000))));
    out.push(e("node-rotation-three-numbers", &|v| set(v, "/nodes/1/rotation", json!([0.0, 0.0, 1.0]))));
    out.push(e("node-translation-wrong-type", &|v| set(v, "/nodes/1/translation", json!(["a", 0, 0]))));
    out.push(e("missing-asset", &|v| remove(v, "/asset")));
    out.push(e("asset-version-3", &|v| set(v, "/asset/version", json!("3.0"))));
    out.push(e("scene-index-missing", &|v| set(v, "/scene", json!(5))));
    out.push(e("scene-node-missing", &|v| set(v, "/scenes/0/nodes", json!([999]))));
    out.push(e("mesh-joints-accessor-missing", &|v| set(v, "/meshes/0/primitives/0/attributes/JOINTS_0", json!(999))));
    out.push(e("extension-required-unknown", &|v| set(v, "/extensionsRequired", json!(["KHR_no_such_extension"]))));
    out.push(e("nodes-wrong-type", &|v| set(v, "/nodes", json!({"root": 0}))));
}

fn gltf(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = embedded(f);
    json_generic(&seed, "gltf", out);
    json_numbers(&seed, "gltf", "\"translation\"", out);
    gltf_json_edits(&seed, "gltf", out, &|c| c);
    out.push(jedit(&seed, "buffer-uri-bad-base64", "gltf", |v| {
        set(v, "/buffers/0/uri", json!("data:application/octet-stream;base64,!!!!"))
    }));
    out.push(jedit(&seed, "buffer-uri-missing-file", "gltf", |v| set(v, "/buffers/0/uri", json!("no-such-file.bin"))));
}

/// A GLB from a JSON chunk and an optional BIN chunk, with true lengths.
fn glb_from(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let mut j = json.to_vec();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    if let Some(b) = bin {
        let mut b = b.to_vec();
        while b.len() % 4 != 0 {
            b.push(0);
        }
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&b);
    }
    let n = out.len() as u32;
    out[8..12].copy_from_slice(&n.to_le_bytes());
    out
}

fn glb(f: &'static dyn Format, out: &mut Vec<Case>) {
    glb_cases(&main_seed(f), "glb", out);
}

/// VRM is a GLB: the GLB cases, plus what breaks the `VRMC_vrm` extension.
fn vrm(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    glb_cases(&seed, "vrm", out);
    let jlen = u32::from_le_bytes(seed[12..16].try_into().unwrap()) as usize;
    let json = seed[20..20 + jlen].to_vec();
    let bin = seed[20 + jlen + 8..].to_vec();
    let e = |name: &str, f: &dyn Fn(&mut Value)| {
        let c = jedit(&json, name, "vrm", f);
        (c.0, glb_from(&c.1, Some(&bin)))
    };
    let h = "/extensions/VRMC_vrm/humanoid/humanBones";
    // What the reader refuses. A humanoid entry it cannot use (a bad node, an unknown role) and
    // odd meta are read with a warning, as glTF data it need not model: not malformed files.
    out.push(e("vrm-humanbones-wrong-type", &|v| set(v, h, json!([1, 2, 3]))));
    out.push(e("vrm-humanoid-missing", &|v| set(v, "/extensions/VRMC_vrm/humanoid", json!(null))));
    out.push(e("vrm-extension-wrong-type", &|v| set(v, "/extensions/VRMC_vrm", json!(true))));
}

fn glb_cases(seed: &[u8], ext: &str, out: &mut Vec<Case>) {
    let seed = seed.to_vec();
    let jlen = u32::from_le_bytes(seed[12..16].try_into().unwrap()) as usize;
    let json = seed[20..20 + jlen].to_vec();
    let bin = seed[20 + jlen + 8..].to_vec();
    let n = seed.len();
    binary_generic(&seed, ext, 12, 0x61b, out);
    let patch = |name: &str, at: usize, bytes: &[u8]| patched(&seed, ext, name, at, bytes);
    out.push(patch("bad-magic", 0, b"glTf"));
    out.push(patch("version-1", 4, &1u32.to_le_bytes()));
    out.push(patch("version-99", 4, &99u32.to_le_bytes()));
    out.push(patch("total-length-larger-than-file", 8, &(n as u32 + 1000).to_le_bytes()));
    out.push(patch("total-length-smaller-than-file", 8, &(n as u32 / 2).to_le_bytes()));
    out.push(patch("total-length-max", 8, &u32::MAX.to_le_bytes()));
    out.push(patch("json-chunk-length-past-end", 12, &(n as u32).to_le_bytes()));
    out.push(patch("json-chunk-length-max", 12, &u32::MAX.to_le_bytes()));
    out.push(patch("json-chunk-length-zero", 12, &0u32.to_le_bytes()));
    out.push(patch("json-chunk-length-unaligned", 12, &(jlen as u32 - 1).to_le_bytes()));
    out.push(patch("first-chunk-not-json", 16, b"BIN\0"));
    out.push(patch("bin-chunk-length-past-end", 20 + jlen, &(bin.len() as u32 * 4).to_le_bytes()));
    out.push(patch("bin-chunk-length-max", 20 + jlen, &u32::MAX.to_le_bytes()));
    out.push(patch("bin-chunk-type-unknown", 24 + jlen, b"XYZW"));
    out.push((format!("bin-chunk-missing.{ext}"), glb_from(&json, None)));
    out.push((format!("json-chunk-not-utf8.{ext}"), glb_from(&[b'{', 0xFF, 0xFE, b'}'], Some(&bin))));
    out.push((format!("json-chunk-not-json.{ext}"), glb_from(b"this is not json", Some(&bin))));
    out.push((format!("json-chunk-truncated.{ext}"), glb_from(&json[..json.len() / 2], Some(&bin))));
    out.push((format!("json-chunk-deep-nesting.{ext}"), glb_from("[".repeat(1_000).as_bytes(), Some(&bin))));
    out.push((format!("bin-chunk-short.{ext}"), glb_from(&json, Some(&bin[..bin.len() / 2]))));
    let wrap = |c: Case| (c.0, glb_from(&c.1, Some(&bin)));
    gltf_json_edits(&json, ext, out, &wrap);
}

fn g4mf_json_edits(seed: &[u8], ext: &str, out: &mut Vec<Case>, wrap: &dyn Fn(Case) -> Case) {
    let e = |name: &str, f: &dyn Fn(&mut Value)| wrap(jedit(seed, name, ext, f));
    out.push(e("bufferview-length-past-buffer", &|v| set(v, "/bufferViews/1/byteLength", json!(1_000_000_000))));
    out.push(e("bufferview-offset-past-buffer", &|v| set(v, "/bufferViews/1/byteOffset", json!(1_000_000_000))));
    out.push(e("bufferview-offset-u64-max", &|v| set(v, "/bufferViews/1/byteOffset", json!(u64::MAX))));
    out.push(e("bufferview-buffer-missing", &|v| set(v, "/bufferViews/1/buffer", json!(9))));
    out.push(e("accessor-bufferview-missing", &|v| set(v, "/accessors/0/bufferView", json!(999))));
    out.push(e("accessor-component-type-unknown", &|v| set(v, "/accessors/0/componentType", json!("float128"))));
    out.push(e("accessor-vector-size-zero", &|v| set(v, "/accessors/0/vectorSize", json!(0))));
    out.push(e("accessor-vector-size-huge", &|v| set(v, "/accessors/0/vectorSize", json!(4_000_000_000u64))));
    out.push(e("accessor-negative-bufferview", &|v| set(v, "/accessors/0/bufferView", json!(-1))));
    out.push(e("node-child-cycle", &|v| set(v, "/nodes/3/children", json!([2]))));
    out.push(e("node-self-child", &|v| set(v, "/nodes/2/children", json!([2]))));
    out.push(e("node-child-index-huge", &|v| set(v, "/nodes/1/children/0", json!(20_000))));
    out.push(e("skeleton-joint-index-huge", &|v| set(v, "/nodes/1/skeleton/joints/0", json!(4_000_000_000u64))));
    out.push(e("skeleton-joint-duplicate", &|v| set(v, "/nodes/1/skeleton/joints/1", json!(3))));
    out.push(e("mesh-skin-accessor-missing", &|v| set(v, "/meshes/0/skin/weights", json!(999))));
    out.push(e("missing-asset", &|v| remove(v, "/asset")));
    out.push(e("dimension-zero", &|v| set(v, "/asset/dimension", json!(0))));
    out.push(e("dimension-huge", &|v| set(v, "/asset/dimension", json!(1_000_000))));
    out.push(e("nodes-wrong-type", &|v| set(v, "/nodes", json!("nodes"))));
    out.push(e("node-name-duplicate", &|v| {
        let n = v.pointer("/nodes/3/name").cloned().unwrap();
        set(v, "/nodes/4/name", n)
    }));
}

fn g4tf(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    json_generic(&seed, "g4tf", out);
    g4mf_json_edits(&seed, "g4tf", out, &|c| c);
    out.push(jedit(&seed, "buffer-uri-bad-base64", "g4tf", |v| {
        set(v, "/buffers/0/uri", json!("data:application/octet-stream;base64,!!!!"))
    }));
    out.push(jedit(&seed, "buffer-length-larger-than-data", "g4tf", |v| set(v, "/buffers/0/byteLength", json!(1_000_000_000))));
}

fn g4b(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    let n = seed.len();
    let chunks = skelport_g4mf::container::read(&seed, "seed").expect("demo g4b reads");
    let json = chunks.iter().find(|c| c.kind == *b"JSON").unwrap().data.clone();
    let rebuild = |json: &[u8]| {
        let mut cs = chunks.clone();
        for c in &mut cs {
            if c.kind == *b"JSON" {
                c.data = json.to_vec();
            }
        }
        skelport_g4mf::container::write(&cs).unwrap()
    };
    binary_generic(&seed, "g4b", 16, 0x64b, out);
    let patch = |name: &str, at: usize, bytes: &[u8]| patched(&seed, "g4b", name, at, bytes);
    out.push(patch("bad-magic", 0, b"G4MX"));
    out.push(patch("version-1", 4, &1u32.to_le_bytes()));
    out.push(patch("total-size-larger-than-file", 8, &(n as u64 + 4096).to_le_bytes()));
    out.push(patch("total-size-smaller-than-file", 8, &(n as u64 / 2).to_le_bytes()));
    out.push(patch("total-size-u64-max", 8, &u64::MAX.to_le_bytes()));
    out.push(patch("chunk-size-past-end", 24, &(n as u64).to_le_bytes()));
    out.push(patch("chunk-size-u64-max", 24, &u64::MAX.to_le_bytes()));
    out.push(patch("chunk-size-2-pow-62", 24, &(1u64 << 62).to_le_bytes()));
    out.push(patch("chunk-encoding-reserved", 20, &[0xFF; 4]));
    out.push(patch("chunk-encoding-unknown", 20, b"LZMA"));
    out.push(patch("chunk-encoding-zstd-not-zstd", 20, b"Zstd"));
    out.push(patch("first-chunk-not-json", 16, b"BLOB"));
    out.push(("json-chunk-not-json.g4b".into(), rebuild(b"not json at all")));
    out.push(("json-chunk-not-utf8.g4b".into(), rebuild(&[b'{', 0xFF, 0xFE, b'}'])));
    out.push(("json-chunk-truncated.g4b".into(), rebuild(&json[..json.len() / 2])));
    out.push(("json-chunk-deep-nesting.g4b".into(), rebuild("[".repeat(1_000).as_bytes())));
    let wrap = |c: Case| (c.0, rebuild(&c.1));
    g4mf_json_edits(&json, "g4b", out, &wrap);
}

fn dae(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    let text = String::from_utf8(seed.clone()).expect("dae is UTF-8");
    text_generic(&seed, "dae", out);
    let enc = |t: &str| t.as_bytes().to_vec();
    xml_generic(&text, "COLLADA", "dae", &enc, out);
    let vw = text.find("<vertex_weights").unwrap();
    let vc = vw + text[vw..].find("<vcount>").unwrap() + "<vcount>".len();
    let vc_end = vc + text[vc..].find("</vcount>").unwrap();
    let vv = vc_end + text[vc_end..].find("<v>").unwrap() + 3;
    let vv_end = vv + text[vv..].find("</v>").unwrap();
    let splice = |a: usize, b: usize, with: &str| format!("{}{}{}", &text[..a], with, &text[b..]);
    out.push(("vcount-sum-exceeds-v.dae".into(), enc(&splice(vc, vc + 1, "9"))));
    out.push(("vcount-too-few-entries.dae".into(), enc(&splice(vc, vc_end, "1 1 1"))));
    out.push(("vcount-negative.dae".into(), enc(&splice(vc, vc + 1, "-1"))));
    out.push(("vcount-huge.dae".into(), enc(&splice(vc, vc + 1, "4000000000"))));
    out.push(("vcount-word.dae".into(), enc(&splice(vc, vc + 1, "one"))));
    out.push(("v-truncated.dae".into(), enc(&splice(vv + (vv_end - vv) / 2, vv_end, ""))));
    out.push(("v-joint-index-past-joints.dae".into(), enc(&splice(vv, vv + 1, "999"))));
    out.push(("v-weight-index-past-weights.dae".into(), enc(&splice(vv, vv + 3, "0 99999"))));
    out.push(("v-negative-weight-index.dae".into(), enc(&splice(vv, vv + 3, "0 -7"))));
    let edits: &[(&str, &str, &str, usize)] = &[
        ("float-array-count-lies", "count=\"528\"", "count=\"5280000\"", 0),
        (
            "weights-inf",
            "<float_array id=\"sample_skin-skin-weights-array\" count=\"260\">1 ",
            "<float_array id=\"sample_skin-skin-weights-array\" count=\"260\">inf ",
            0,
        ),
        (
            "weights-word",
            "<float_array id=\"sample_skin-skin-weights-array\" count=\"260\">1 ",
            "<float_array id=\"sample_skin-skin-weights-array\" count=\"260\">heavy ",
            0,
        ),
        ("bind-shape-matrix-15-numbers", "<bind_shape_matrix>1 0 0 0 ", "<bind_shape_matrix>1 0 0 ", 0),
        ("bind-shape-matrix-nan", "<bind_shape_matrix>1 0 0 0 ", "<bind_shape_matrix>NaN 0 0 0 ", 0),
        ("name-array-count-lies", "count=\"22\">pelvis", "count=\"2200000\">pelvis", 0),
        ("joint-name-unknown", ">pelvis spine_01", ">pelvis no_such_joint", 0),
        ("skin-source-missing", "<skin source=\"#sample_body-mesh\">", "<skin source=\"#no-such-mesh\">", 0),
        (
            "joints-input-source-missing",
            "<input semantic=\"JOINT\" source=\"#sample_skin-skin-joints\" offset=\"0\"/>",
            "<input semantic=\"JOINT\" source=\"#nowhere\" offset=\"0\"/>",
            0,
        ),
        (
            "input-offset-huge",
            "source=\"#sample_skin-skin-weights\" offset=\"1\"",
            "source=\"#sample_skin-skin-weights\" offset=\"4000000000\"",
            0,
        ),
        ("vertex-weights-count-lies", "<vertex_weights count=\"176\">", "<vertex_weights count=\"1760000\">", 0),
        ("duplicate-node-id", "<node id=\"pelvis\" name=\"pelvis\" sid=\"pelvis\"", "<node id=\"root\" name=\"root\" sid=\"root\"", 0),
        ("polylist-vcount-mismatch", "<vcount>4 4 4", "<vcount>4 9 4", 0),
        ("polylist-vcount-negative", "<vcount>4 4 4", "<vcount>-4 4 4", 0),
        ("p-word", "<p>0 3 2 1 ", "<p>zero 3 2 1 ", 0),
        ("p-vertex-index-past-positions", "<p>0 3 2 1 ", "<p>176 3 2 1 ", 0),
        ("p-vertex-index-negative", "<p>0 3 2 1 ", "<p>-3 3 2 1 ", 0),
        ("p-vertex-index-huge", "<p>0 3 2 1 ", "<p>5000000000 3 2 1 ", 0),
        ("matrix-word", "<matrix sid=\"transform\">", "<matrix sid=\"transform\">identity ", 0),
    ];
    for (name, from, to, n) in edits {
        out.push((format!("{name}.dae"), enc(&replace_nth(&text, from, to, *n))));
    }
    // The first position replaced by NaN (inserting one would make the count lie instead).
    let open = "<float_array id=\"sample_body-mesh-positions-array\" count=\"528\">";
    let first = text.find(open).expect("positions array") + open.len();
    let first_end = first + text[first..].find(' ').expect("a second value");
    out.push(("float-array-nan.dae".into(), enc(&splice(first, first_end, "NaN"))));
}

/// A small linden_skeleton written for the suite (not the viewer's file).
const SL_SEED: &str = r#"<?xml version="1.0" encoding="US-ASCII" standalone="yes"?>
<linden_skeleton num_bones="3" num_collision_volumes="1" version="2.0">
  <bone name="mPelvis" pos="0.000 0.000 1.067" rot="0 0 0" scale="1 1 1" pivot="0 0 1.067" end="0 0 0.084" support="base" connected="false" group="Torso">
    <collision_volume name="PELVIS" pos="-0.01 0 -0.02" rot="0 8 0" scale="0.12 0.16 0.17" end="0 0 0.1" support="base" group="Collision"/>
    <bone name="mTorso" pos="0 0 0.084" rot="0 0 0" scale="1 1 1" pivot="0 0 0.084" end="0 0 0.2" support="base" connected="true" group="Spine">
      <bone name="mChest" pos="-0.015 0 0.205" rot="0 0 0" scale="1 1 1" pivot="-0.015 0 0.205" end="0 0 0.3" support="base" connected="true" group="Spine"/>
    </bone>
  </bone>
</linden_skeleton>
"#;

fn sl_skeleton(_: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = SL_SEED.as_bytes();
    text_generic(seed, "xml", out);
    let enc = |t: &str| t.as_bytes().to_vec();
    xml_generic(SL_SEED, "linden_skeleton", "xml", &enc, out);
    let edits: &[(&str, &str, &str)] = &[
        ("num-bones-lies", "num_bones=\"3\"", "num_bones=\"4000000000\""),
        ("num-bones-missing", "num_bones=\"3\" ", ""),
        ("num-bones-negative", "num_bones=\"3\"", "num_bones=\"-3\""),
        ("num-collision-volumes-lies", "num_collision_volumes=\"1\"", "num_collision_volumes=\"7\""),
        ("pos-nan", "pos=\"0 0 0.084\"", "pos=\"0 NaN 0.084\""),
        ("pos-inf", "pos=\"0 0 0.084\"", "pos=\"0 inf 0.084\""),
        ("pos-two-numbers", "pos=\"0 0 0.084\"", "pos=\"0 0.084\""),
        ("pos-missing", "pos=\"0 0 0.084\" ", ""),
        ("rot-word", "rot=\"0 8 0\"", "rot=\"zero 8 0\""),
        ("scale-overflow", "scale=\"1 1 1\"", "scale=\"1e999 1 1\""),
        ("name-missing", "name=\"mTorso\" ", ""),
        ("name-with-space", "name=\"mTorso\"", "name=\"m Torso\""),
        ("duplicate-bone-name", "name=\"mChest\"", "name=\"mTorso\""),
        (
            "collision-volume-outside-bone",
            "<bone name=\"mPelvis\"",
            "<collision_volume name=\"LOOSE\" pos=\"0 0 0\"/>\n  <bone name=\"mPelvis\"",
        ),
        ("unknown-element", "<bone name=\"mChest\"", "<muscle name=\"mChest\""),
        (
            "support-unknown",
            "support=\"base\" connected=\"true\" group=\"Spine\">",
            "support=\"imaginary\" connected=\"true\" group=\"Spine\">",
        ),
        ("name-is-mroot", "name=\"mChest\"", "name=\"mRoot\""),
        ("alias-shadows-name", "name=\"mChest\"", "name=\"mChest\" aliases=\"mTorso\""),
    ];
    for (name, from, to) in edits {
        out.push((format!("{name}.xml"), replace_nth(SL_SEED, from, to, 0).into_bytes()));
    }
}

fn ir_json(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    json_generic(&seed, "ir.json", out);
    json_numbers(&seed, "ir.json", "\"translation\"", out);
    let b = "/skeletons/0/bones";
    out.push(jedit(&seed, "missing-skelport-ir", "ir.json", |v| remove(v, "/skelport_ir")));
    out.push(jedit(&seed, "version-from-the-future", "ir.json", |v| set(v, "/skelport_ir", json!(99))));
    out.push(jedit(&seed, "missing-frame", "ir.json", |v| remove(v, "/frame")));
    out.push(jedit(&seed, "frame-up-unknown", "ir.json", |v| set(v, "/frame/up", json!("+W"))));
    out.push(jedit(&seed, "parent-cycle", "ir.json", |v| set(v, &format!("{b}/1/parent"), json!(2))));
    out.push(jedit(&seed, "self-parent", "ir.json", |v| set(v, &format!("{b}/1/parent"), json!(1))));
    out.push(jedit(&seed, "parent-index-huge", "ir.json", |v| set(v, &format!("{b}/1/parent"), json!(4_000_000_000u64))));
    out.push(jedit(&seed, "parent-index-negative", "ir.json", |v| set(v, &format!("{b}/1/parent"), json!(-1))));
    out.push(jedit(&seed, "duplicate-bone-name", "ir.json", |v| set(v, &format!("{b}/2/name"), json!("pelvis"))));
    out.push(jedit(&seed, "bone-missing-rest", "ir.json", |v| remove(v, &format!("{b}/1/rest"))));
    out.push(jedit(&seed, "rotation-three-numbers", "ir.json", |v| set(v, &format!("{b}/1/rest/rotation"), json!([0.0, 0.0, 1.0]))));
    out.push(jedit(&seed, "rotation-zero", "ir.json", |v| set(v, &format!("{b}/1/rest/rotation"), json!([0.0, 0.0, 0.0, 0.0]))));
    out.push(jedit(&seed, "name-wrong-type", "ir.json", |v| set(v, &format!("{b}/1/name"), json!(7))));
    out.push(jedit(&seed, "skin-joint-index-huge", "ir.json", |v| set(v, "/skins/0/joints/0", json!(4_000_000_000u64))));
    out.push(jedit(&seed, "skin-skeleton-missing", "ir.json", |v| set(v, "/skins/0/skeleton", json!(9))));
    out.push(jedit(&seed, "weight-negative", "ir.json", |v| set(v, "/skins/0/influences/weights/5", json!(-0.25))));
    out.push(jedit(&seed, "influence-joint-slot-huge", "ir.json", |v| set(v, "/skins/0/influences/joints/0", json!(4_000_000_000u64))));
    out.push(jedit(&seed, "influence-offsets-past-end", "ir.json", |v| set(v, "/skins/0/influences/offsets/3", json!(1_000_000))));
    // Structure the reader takes as it is and the IR's rules refuse: every command that reads a
    // document (inspect, diff, drawing, validate's targets) must live with it.
    out.push(jedit(&seed, "influence-offsets-decreasing", "ir.json", |v| set(v, "/skins/0/influences/offsets/5", json!(0))));
    let shorten = |v: &mut Value, at: &str, keep: usize| {
        let a = v.pointer_mut(at).and_then(Value::as_array_mut).unwrap_or_else(|| panic!("bad-suite seed has no array {at}"));
        assert!(a.len() > keep, "bad-suite seed's {at} has {} items, not more than {keep}", a.len());
        a.truncate(keep);
    };
    out.push(jedit(&seed, "influence-weights-short", "ir.json", |v| shorten(v, "/skins/0/influences/weights", 10)));
    out.push(jedit(&seed, "inverse-binds-short", "ir.json", |v| shorten(v, "/skins/0/inverse_bind", 2)));
    out.push(jedit(&seed, "face-index-past-positions", "ir.json", |v| set(v, "/meshes/0/faces/indices/0", json!(99_999))));
    out.push(jedit(&seed, "face-count-past-indices", "ir.json", |v| set(v, "/meshes/0/faces/counts/0", json!(99_999))));
    out.push(jedit(&seed, "group-vertex-past-positions", "ir.json", |v| set(v, "/meshes/0/groups/0/vertices/0", json!(99_999))));
    out.push(jedit(&seed, "skin-mesh-missing", "ir.json", |v| set(v, "/skins/0/mesh", json!(7))));
    out.push(jedit(&seed, "bones-wrong-type", "ir.json", |v| set(v, b, json!({"root": {}}))));
}

fn mhskel(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = main_seed(f);
    json_generic(&seed, "mhskel", out);
    json_numbers(&seed, "mhskel", "\"skelport_positions\"", out);
    let v: Value = serde_json::from_slice(&seed).unwrap();
    let first = v["bones"].as_object().unwrap().keys().next().unwrap().clone();
    let head = v["bones"][&first]["head"].as_str().unwrap().to_string();
    let plane = v["planes"].as_object().unwrap().keys().next().unwrap().clone();
    let b = format!("/bones/{first}");
    let e = "mhskel";
    out.push(jedit(&seed, "bones-not-object", e, |v| set(v, "/bones", json!([1, 2]))));
    out.push(jedit(&seed, "bones-empty", e, |v| set(v, "/bones", json!({}))));
    out.push(jedit(&seed, "bone-not-object", e, |v| set(v, &b, json!("bone"))));
    out.push(jedit(&seed, "missing-head", e, |v| remove(v, &format!("{b}/head"))));
    out.push(jedit(&seed, "head-is-mpfb-strategy", e, |v| set(v, &format!("{b}/head"), json!({"strategy": "VERTEX", "vertex_index": 0}))));
    out.push(jedit(&seed, "tail-not-string", e, |v| set(v, &format!("{b}/tail"), json!(7))));
    out.push(jedit(&seed, "parent-not-string", e, |v| set(v, &format!("{b}/parent"), json!(5))));
    out.push(jedit(&seed, "rotation-plane-object", e, |v| set(v, &format!("{b}/rotation_plane"), json!({"plane": 1}))));
    out.push(jedit(&seed, "joints-not-object", e, |v| set(v, "/joints", json!([1]))));
    out.push(jedit(&seed, "joint-negative-vertex", e, |v| set(v, &format!("/joints/{head}"), json!([-1]))));
    out.push(jedit(&seed, "joint-fractional-vertex", e, |v| set(v, &format!("/joints/{head}"), json!([1.5]))));
    out.push(jedit(&seed, "joint-huge-vertex", e, |v| set(v, &format!("/joints/{head}"), json!([u64::MAX]))));
    // A joint on the base mesh, and no base mesh beside the file.
    out.push(jedit(&seed, "joint-needs-base-mesh", e, |v| {
        set(v, &format!("/joints/{head}"), json!([0, 1]));
        remove(v, &format!("/skelport_positions/{head}"));
    }));
    out.push(jedit(&seed, "planes-not-object", e, |v| set(v, "/planes", json!("plane"))));
    out.push(jedit(&seed, "plane-two-joints", e, |v| set(v, &format!("/planes/{plane}"), json!(["a", "b"]))));
    out.push(jedit(&seed, "positions-two-numbers", e, |v| set(v, &format!("/skelport_positions/{head}"), json!([0.0, 1.0]))));
    out.push(jedit(&seed, "positions-not-object", e, |v| set(v, "/skelport_positions", json!([0.0, 1.0, 2.0]))));
}

fn mhw(f: &'static dyn Format, out: &mut Vec<Case>) {
    let seed = weights_seed(f);
    json_generic(&seed, "mhw", out);
    json_numbers(&seed, "mhw", "\"weights\"", out);
    let group = serde_json::from_slice::<Value>(&seed).unwrap()["weights"].as_object().unwrap().keys().next().unwrap().clone();
    let g = format!("/weights/{group}");
    let e = "mhw";
    out.push(jedit(&seed, "missing-weights", e, |v| remove(v, "/weights")));
    out.push(jedit(&seed, "weights-not-object", e, |v| set(v, "/weights", json!([[0, 1.0]]))));
    out.push(jedit(&seed, "group-not-array", e, |v| set(v, &g, json!({"0": 1.0}))));
    out.push(jedit(&seed, "pair-three-items", e, |v| set(v, &format!("{g}/0"), json!([0, 1.0, 2]))));
    out.push(jedit(&seed, "pair-wrong-types", e, |v| set(v, &format!("{g}/0"), json!(["0", "1.0"]))));
    out.push(jedit(&seed, "negative-vertex", e, |v| set(v, &format!("{g}/0"), json!([-1, 0.5]))));
    out.push(jedit(&seed, "huge-vertex", e, |v| set(v, &format!("{g}/0"), json!([u64::MAX, 0.5]))));
    out.push(jedit(&seed, "vertex-past-cap", e, |v| set(v, &format!("{g}/0"), json!([4_000_000_000u64, 0.5]))));
    out.push(jedit(&seed, "fractional-vertex", e, |v| set(v, &format!("{g}/0"), json!([1.5, 0.5]))));
    out.push(jedit(&seed, "pair-not-array", e, |v| set(v, &format!("{g}/0"), json!(7))));
    out.push(jedit(&seed, "weight-string", e, |v| set(v, &format!("{g}/0"), json!([0, "heavy"]))));
}

/// The FBX sample scene with `edit` applied, as binary FBX (`<name>.fbx`).
fn fbx_edit(name: &str, edit: impl FnOnce(&mut Vec<skelport_fbx::sample::Node>)) -> Case {
    let mut nodes = skelport_fbx::sample::scene();
    edit(&mut nodes);
    (format!("{name}.fbx"), skelport_fbx::sample::binary(&nodes))
}

/// The first node called `path[0]`, then its first child called `path[1]`, …
fn fbx_find<'a>(nodes: &'a mut [skelport_fbx::sample::Node], path: &[&str]) -> &'a mut skelport_fbx::sample::Node {
    let (first, rest) = path.split_first().expect("a path");
    let n = nodes.iter_mut().find(|n| n.name == *first).unwrap_or_else(|| panic!("FBX sample has no {first}"));
    if rest.is_empty() {
        n
    } else {
        fbx_find(&mut n.children, rest)
    }
}

/// FBX: no project writer, so the seed is a tiny rigged scene built in code
/// (`skelport_fbx::sample`), broken in its binary records, its node tree and its ASCII form.
fn fbx(_: &'static dyn Format, out: &mut Vec<Case>) {
    use skelport_fbx::sample::{ascii, binary, scene, Node, Prop};
    let seed = binary(&scene());
    binary_generic(&seed, "fbx", 27, 0xfb1, out);
    // The first top-level record starts at byte 27: its end offset, property count, property
    // list length, name length.
    out.push(patched(&seed, "fbx", "bad-magic", 0, b"Kaydara FBX Binarx"));
    out.push(patched(&seed, "fbx", "version-from-the-future", 23, &9900u32.to_le_bytes()));
    out.push(patched(&seed, "fbx", "version-ancient", 23, &2000u32.to_le_bytes()));
    out.push(patched(&seed, "fbx", "record-end-zero", 27, &0u32.to_le_bytes()));
    out.push(patched(&seed, "fbx", "record-end-past-file", 27, &u32::MAX.to_le_bytes()));
    out.push(patched(&seed, "fbx", "record-end-backwards", 27, &30u32.to_le_bytes()));
    out.push(patched(&seed, "fbx", "property-count-huge", 31, &u32::MAX.to_le_bytes()));
    out.push(patched(&seed, "fbx", "property-length-huge", 35, &u32::MAX.to_le_bytes()));
    out.push(patched(&seed, "fbx", "name-length-past-record", 39, &[255]));
    let vertices = seed.windows(8).position(|w| w == b"Vertices").expect("Vertices record") + 8;
    // After the name: 'd', then the array's length, encoding and byte length.
    out.push(patched(&seed, "fbx", "array-length-huge", vertices + 1, &0x7fff_ffffu32.to_le_bytes()));
    out.push(patched(&seed, "fbx", "array-byte-length-huge", vertices + 9, &u32::MAX.to_le_bytes()));
    out.push(patched(&seed, "fbx", "array-encoding-unknown", vertices + 5, &7u32.to_le_bytes()));
    out.push(patched(&seed, "fbx", "array-deflate-garbage", vertices + 5, &1u32.to_le_bytes()));
    out.push(patched(&seed, "fbx", "property-type-unknown", vertices, b"Z"));
    {
        // A deflate bomb: 256 MiB of zeros in a few hundred kilobytes, declared as the vertices.
        let zeros = vec![0u8; 1 << 20];
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        for _ in 0..256 {
            std::io::Write::write_all(&mut z, &zeros).expect("in memory");
        }
        let packed = z.finish().expect("in memory");
        let mut v = seed[..vertices + 1].to_vec();
        v.extend_from_slice(&((256u32 << 20) / 8).to_le_bytes());
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&(packed.len() as u32).to_le_bytes());
        v.extend_from_slice(&packed);
        out.push(("array-deflate-bomb.fbx".into(), v));
    }
    // Deep nesting: records inside records far past any real scene.
    {
        let mut deep = Node { name: "Deep".into(), props: vec![], children: vec![] };
        for _ in 0..2000 {
            deep = Node { name: "Deep".into(), props: vec![], children: vec![deep] };
        }
        let mut nodes = scene();
        nodes.insert(0, deep);
        out.push(("deep-nesting.fbx".into(), binary(&nodes)));
    }
    let weights = |name: &str, w: Vec<f64>| {
        fbx_edit(name, |n| {
            let cl = fbx_find(n, &["Objects"]).children.iter_mut().filter(|c| c.name == "Deformer").nth(1).expect("a cluster");
            fbx_find(&mut cl.children, &["Weights"]).props = vec![Prop::Doubles(w)];
        })
    };
    out.push(weights("cluster-weight-nan", vec![f64::NAN, 1.0, 0.5, 0.5]));
    out.push(weights("cluster-weight-negative", vec![-1.0, 1.0, 0.5, 0.5]));
    out.push(weights("cluster-weights-fewer-than-indexes", vec![1.0, 1.0]));
    let cluster = |name: &str, child: &'static str, prop: Prop| {
        fbx_edit(name, move |n| {
            let cl = fbx_find(n, &["Objects"]).children.iter_mut().filter(|c| c.name == "Deformer").nth(1).expect("a cluster");
            fbx_find(&mut cl.children, &[child]).props = vec![prop];
        })
    };
    out.push(cluster("cluster-index-past-vertices", "Indexes", Prop::Ints(vec![0, 1, 2, 4000])));
    out.push(cluster("cluster-index-negative", "Indexes", Prop::Ints(vec![0, -1, 2, 3])));
    out.push(cluster("cluster-transform-link-short", "TransformLink", Prop::Doubles(vec![1.0; 8])));
    out.push(cluster("cluster-transform-link-nan", "TransformLink", Prop::Doubles(vec![f64::NAN; 16])));
    out.push(cluster("cluster-transform-link-zero", "TransformLink", Prop::Doubles(vec![0.0; 16])));
    let geometry = |name: &str, child: &'static str, prop: Prop| {
        fbx_edit(name, move |n| fbx_find(n, &["Objects", "Geometry", child]).props = vec![prop])
    };
    out.push(geometry("polygon-index-past-vertices", "PolygonVertexIndex", Prop::Ints(vec![0, 1, -4, 0, 3, -3, 2, 3, -6, 2, 5, -100])));
    out.push(geometry("polygon-never-closed", "PolygonVertexIndex", Prop::Ints(vec![0, 1, 3, 0, 3, 2])));
    out.push(geometry("vertices-not-triples", "Vertices", Prop::Doubles(vec![0.0; 7])));
    out.push(geometry("vertices-infinite", "Vertices", Prop::Doubles(vec![f64::INFINITY; 18])));
    out.push(geometry("vertices-empty", "Vertices", Prop::Doubles(vec![])));
    let connections = |name: &str, pairs: &'static [(i64, i64)]| {
        fbx_edit(name, move |n| {
            fbx_find(n, &["Connections"]).children = pairs
                .iter()
                .map(|&(a, b)| Node {
                    name: "C".into(),
                    props: vec![Prop::Str("OO".into()), Prop::Long(a), Prop::Long(b)],
                    children: vec![],
                })
                .collect()
        })
    };
    out.push(connections(
        "bone-parent-cycle",
        &[(200, 0), (100, 200), (300, 0), (301, 302), (302, 301), (400, 100), (401, 400), (402, 400), (301, 401), (302, 402)],
    ));
    out.push(connections(
        "bone-parent-self",
        &[(200, 0), (100, 200), (300, 0), (301, 301), (302, 301), (400, 100), (401, 400), (402, 400), (301, 401), (302, 402)],
    ));
    out.push(connections("no-clusters-bound", &[(200, 0), (100, 200), (300, 0), (301, 300), (302, 301), (400, 100)]));
    out.push(connections(
        "connection-to-missing-object",
        &[(200, 0), (100, 200), (300, 0), (301, 300), (302, 301), (400, 100), (401, 400), (402, 400), (999, 401), (302, 402)],
    ));
    out.push(fbx_edit("no-objects", |n| n.retain(|x| x.name != "Objects")));
    out.push(fbx_edit("duplicate-object-id", |n| {
        let objects = fbx_find(n, &["Objects"]);
        let geometry = objects.children[0].clone();
        objects
            .children
            .push(Node { props: vec![Prop::Long(301), Prop::Str("Other\0\u{1}Geometry".into()), Prop::Str("Mesh".into())], ..geometry });
    }));
    let setting = |name: &str, key: &'static str, value: Prop| {
        fbx_edit(name, move |n| {
            let p = fbx_find(n, &["GlobalSettings", "Properties70"]).children.iter_mut().find(|p| p.props[0] == Prop::Str(key.into()));
            let p = p.expect("a setting");
            *p.props.last_mut().expect("a value") = value;
        })
    };
    out.push(setting("unit-scale-zero", "UnitScaleFactor", Prop::Double(0.0)));
    out.push(setting("unit-scale-nan", "UnitScaleFactor", Prop::Double(f64::NAN)));
    out.push(setting("front-axis-is-up-axis", "FrontAxis", Prop::Int(1)));
    out.push(setting("up-axis-out-of-range", "UpAxis", Prop::Int(7)));
    // The ASCII form.
    let text = ascii(&scene());
    out.push(("ascii-valid-seed-truncated-50pct.fbx".into(), text.as_bytes()[..text.len() / 2].to_vec()));
    out.push(("ascii-unbalanced-braces.fbx".into(), replace_nth(&text, "}", "", 3).into_bytes()));
    out.push(("ascii-array-count-lies.fbx".into(), replace_nth(&text, "*18 {", "*2000000000 {", 0).into_bytes()));
    out.push(("ascii-number-is-a-word.fbx".into(), replace_nth(&text, "a: -10.0", "a: minus-ten", 0).into_bytes()));
    out.push(("ascii-deep-braces.fbx".into(), format!("{text}Deep: {}", "{\nDeep: ".repeat(5000)).into_bytes()));
    out.push(("ascii-utf16le.fbx".into(), utf16(&text, true, true)));
    out.push((
        "ascii-garbage-after-header.fbx".into(),
        format!("; FBX 7.4.0 project file\nFBXHeaderExtension: {{\n{}", String::from_utf8_lossy(&garbage(400, 0xa5c11))).into_bytes(),
    ));
}

/// The cases of one suite (a format's input, `Format::inputs`), written by hand per suite: what
/// breaks a file depends on its structure. A registered suite with none here makes
/// `cargo xtask regen-fixtures` fail, naming it.
fn generator(suite: &str) -> Option<fn(&'static dyn Format, &mut Vec<Case>)> {
    Some(match suite {
        "mpfb" => mpfb,
        "mpfb-weights" => mpfb_weights,
        "mhskel" => mhskel,
        "mhw" => mhw,
        "obj" => obj,
        "anvil" => anvil_standard,
        "anvil-schema" => anvil_schema,
        "g4tf" => g4tf,
        "g4b" => g4b,
        "gltf" => gltf,
        "glb" => glb,
        "vrm" => vrm,
        "dae" => dae,
        "sl-skeleton" => sl_skeleton,
        "ir-json" => ir_json,
        "fbx" => fbx,
        _ => return None,
    })
}

/// Every malformed file, as (path relative to testdata/, bytes): every suite of every registered
/// format's inputs.
pub fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for f in skelport::formats().iter().filter(|f| f.can_read()) {
        for kind in f.inputs() {
            let dir = kind.suite;
            let make =
                generator(dir).unwrap_or_else(|| panic!("{}: no malformed-input cases for suite {dir} in xtask/src/bad.rs", f.name()));
            let mut cases = Vec::new();
            make(*f, &mut cases);
            let mut seen = std::collections::HashSet::new();
            for (name, bytes) in cases {
                assert!(seen.insert(name.clone()), "two bad-suite cases named {dir}/{name}");
                out.push((format!("bad/{dir}/{name}"), bytes));
            }
        }
    }
    out
}
