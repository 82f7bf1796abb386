//! The `.gltf` JSON layout: serde_json's pretty layout (two-space indent, one value per line),
//! except that the value of any member named `ext` or `skeleton_ext` is written on one line:
//! those are the keys of other formats' extension data (`extras.skelport.ext` and
//! `.skeleton_ext`); a member of that name elsewhere only changes layout, not content. That data
//! is opaque to glTF and often a long list of short values (an AnvilToolkit bone's attribute
//! values and texts), which one value per line would more than double in size.

use serde_json::ser::Formatter;
use std::io::{self, Write};

/// The keys whose values are written compactly.
const COMPACT_KEYS: &[&str] = &["ext", "skeleton_ext"];

/// serde_json's `PrettyFormatter` (same bytes) with compact subtrees under [`COMPACT_KEYS`].
#[derive(Default)]
pub(crate) struct GltfFormatter {
    level: usize,
    has_value: bool,
    /// Whether a key is being written.
    in_key: bool,
    /// The last key written (one buffer for all keys).
    key: String,
    /// The object level whose current value is written compactly.
    compact_at: Option<usize>,
}

impl GltfFormatter {
    fn newline_indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.level {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, w: &mut W, open: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W, close: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.compact_at.is_none() && self.has_value {
            self.newline_indent(w)?;
        }
        w.write_all(close)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.compact_at.is_some() {
            return if first { Ok(()) } else { w.write_all(b",") };
        }
        w.write_all(if first { b"" } else { b"," })?;
        self.newline_indent(w)
    }
}

impl Formatter for GltfFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.compact_at.is_none() {
            self.key.clear();
            self.in_key = true;
        }
        self.item(w, first)
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.in_key = false;
        Ok(())
    }
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        if self.in_key {
            self.key.push_str(fragment);
        }
        w.write_all(fragment.as_bytes())
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.compact_at.is_some() {
            return w.write_all(b":");
        }
        if COMPACT_KEYS.contains(&self.key.as_str()) {
            self.compact_at = Some(self.level);
        }
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        if self.compact_at == Some(self.level) {
            self.compact_at = None;
        }
        self.has_value = true;
        Ok(())
    }
}

/// `v` as `.gltf` text (see the module documentation).
pub(crate) fn to_vec(v: &serde_json::Value) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GltfFormatter::default());
    serde::Serialize::serialize(v, &mut ser)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Without extension data, the bytes of serde_json's pretty layout.
    #[test]
    fn the_same_as_serde_json_pretty_outside_extension_data() {
        for v in [
            json!({}),
            json!([]),
            json!({"a": [], "b": {}, "c": [1, [2, {"d": "e\"\n"}], {}], "ext2": {"x": [1]}, "nodes": [{"name": "ext", "extras": {"mirror": "é"}}]}),
            json!([1.5, null, true, "s", {"k": [[]]}]),
        ] {
            assert_eq!(String::from_utf8(super::to_vec(&v).unwrap()).unwrap(), serde_json::to_string_pretty(&v).unwrap(), "{v}");
        }
    }

    /// Extension data on one line; what follows it pretty again.
    #[test]
    fn extension_data_on_one_line() {
        let v = json!({"nodes": [{"extras": {"skelport": {"ext": {"anvil": {"id": 1, "values": ["a", "b"]}}, "mirror": "x"}}, "name": "n"}], "z": [1]});
        let got = String::from_utf8(super::to_vec(&v).unwrap()).unwrap();
        let want = serde_json::to_string_pretty(&v)
            .unwrap()
            .replace("\"ext\": {\n            \"anvil\": {\n              \"id\": 1,\n              \"values\": [\n                \"a\",\n                \"b\"\n              ]\n            }\n          }", "\"ext\": {\"anvil\":{\"id\":1,\"values\":[\"a\",\"b\"]}}");
        assert!(got.contains("\"ext\": {\"anvil\":{\"id\":1,\"values\":[\"a\",\"b\"]}}"), "{got}");
        assert_eq!(got, want);
        let back: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert_eq!(back, v);
    }
}
