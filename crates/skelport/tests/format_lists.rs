//! The lists of formats written in prose (the facade's crate docs, the Cargo descriptions, the
//! CLI's `--help`, the Python package's description, the inspect schema) name every registered
//! format: a format added to the registry fails here until each list names it.

use std::path::Path;

/// The word a prose list knows each registered format by; `None`: named only where every format
/// is (skelport's own `ir-json`). A format missing here fails [`every_format_has_a_prose_name`].
fn prose_name(format: &str) -> Option<Option<&'static str>> {
    Some(match format {
        "mpfb" => Some("MPFB"),
        "anvil" | "anvil-schema" => Some("AnvilToolkit"),
        "gltf" | "glb" => Some("glTF"),
        "g4tf" | "g4b" => Some("G4MF"),
        "dae" | "sl-skeleton" => Some("Second Life Collada"),
        "vrm" => Some("VRM"),
        "mhskel" => Some("MakeHuman 1.x"),
        "fbx" => Some("FBX"),
        "ir-json" => None,
        _ => return None,
    })
}

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The one-line lists: each names every format family.
#[test]
fn every_prose_list_names_every_format() {
    let crate_docs = read("crates/skelport/src/lib.rs");
    let crate_docs: String = crate_docs.lines().take_while(|l| l.starts_with("//!")).take(8).collect::<Vec<_>>().join(" ");
    let places = [
        ("crates/skelport/src/lib.rs (crate docs)", crate_docs.replace("//! ", "").replace("//!", "")),
        ("crates/skelport/Cargo.toml", line_with(&read("crates/skelport/Cargo.toml"), "description")),
        ("crates/skelport-cli/Cargo.toml", line_with(&read("crates/skelport-cli/Cargo.toml"), "description")),
        ("crates/skelport-cli/src/flags/mod.rs (--help)", line_with(&read("crates/skelport-cli/src/flags/mod.rs"), "about = ")),
        ("crates/skelport-py/pyproject.toml", line_with(&read("crates/skelport-py/pyproject.toml"), "description")),
    ];
    let mut checked = 0;
    for f in skelport::registry::formats() {
        let Some(Some(word)) = prose_name(f.name()) else { continue };
        for (place, text) in &places {
            assert!(text.contains(word), "{place} does not name {word} (format {}): {text}", f.name());
            checked += 1;
        }
    }
    assert!(checked >= places.len() * 6, "{checked}");
}

/// The inspect schema's `format` description lists every format name.
#[test]
fn the_inspect_schema_lists_every_format_name() {
    let schema: serde_json::Value = serde_json::from_str(&read("schemas/inspect.schema.json")).unwrap();
    let text = schema["properties"]["format"]["description"].as_str().expect("a description of format");
    for f in skelport::registry::formats() {
        let listed = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).any(|w| w == f.name());
        assert!(listed, "schemas/inspect.schema.json: the format description does not list {}: {text}", f.name());
    }
}

#[test]
fn every_format_has_a_prose_name() {
    for f in skelport::registry::formats() {
        assert!(
            prose_name(f.name()).is_some(),
            "{}: add the word prose lists name it by to prose_name, and name it in each list",
            f.name()
        );
    }
}

fn line_with(text: &str, key: &str) -> String {
    text.lines().find(|l| l.trim_start().starts_with(key)).unwrap_or_else(|| panic!("no line starting with {key}")).to_string()
}
