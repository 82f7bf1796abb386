//! Skipping JSON values with a depth cap.
//!
//! serde's `IgnoredAny` (and anything a derived struct ignores) is skipped by serde_json without
//! its nesting cap, so a million-deep array under an unknown key is walked to the end. Readers
//! that probe a document before their typed parse skip with [`JsonSkip`] instead: it goes
//! through `deserialize_any`, so serde_json refuses nesting deeper than 128 with its place.

/// Any JSON value, skipped without allocating; holds the element count of an array (1 for
/// anything else). It goes through `deserialize_any`, so serde_json's nesting cap (128) refuses
/// deeply nested input with its place.
pub struct JsonSkip(pub usize);

impl<'de> serde::Deserialize<'de> for JsonSkip {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = JsonSkip;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<JsonSkip, A::Error> {
                let mut n = 0;
                while seq.next_element::<JsonSkip>()?.is_some() {
                    n += 1;
                }
                Ok(JsonSkip(n))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<JsonSkip, A::Error> {
                while map.next_entry::<serde::de::IgnoredAny, JsonSkip>()?.is_some() {}
                Ok(JsonSkip(1))
            }
            fn visit_bool<E>(self, _: bool) -> Result<JsonSkip, E> {
                Ok(JsonSkip(1))
            }
            fn visit_i64<E>(self, _: i64) -> Result<JsonSkip, E> {
                Ok(JsonSkip(1))
            }
            fn visit_u64<E>(self, _: u64) -> Result<JsonSkip, E> {
                Ok(JsonSkip(1))
            }
            fn visit_f64<E>(self, _: f64) -> Result<JsonSkip, E> {
                Ok(JsonSkip(1))
            }
            fn visit_str<E>(self, _: &str) -> Result<JsonSkip, E> {
                Ok(JsonSkip(1))
            }
            fn visit_unit<E>(self) -> Result<JsonSkip, E> {
                Ok(JsonSkip(1))
            }
        }
        d.deserialize_any(V)
    }
}
