//! Namespaced, typed per-format extension data.
//!
//! Each format owns one namespace (its format name, e.g. `"mpfb"`, `"anvil"`, `"gltf"`) and keeps
//! there, as JSON, whatever it needs to write the same file back that the IR does not model.
//! Other formats must not read another format's namespace; the IR never interprets them.
//!
//! A namespace whose name starts with [`RUN_LOCAL`] (`~`, e.g. `"~mpfb.placed"`) is a note a
//! reader leaves for its own writer within one run (MPFB records where it placed each bone on a
//! base mesh it found, so that MPFB → MPFB keeps the file's positions). Such a namespace is never
//! written (serialization skips it, so no output of another format carries it) and never read
//! from a file (deserialization drops it, so a file cannot forge one).

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The first character of a run-local namespace (see the module documentation).
pub const RUN_LOCAL: char = '~';

fn written(namespace: &str) -> bool {
    !namespace.starts_with(RUN_LOCAL)
}

/// A typed extension payload stored under a fixed namespace.
pub trait Extension: Serialize + DeserializeOwned {
    /// The namespace key, normally the owning format's name.
    const NAMESPACE: &'static str;
}

/// Extension data keyed by namespace. Serialized as a JSON object (namespaces in sorted order);
/// empty maps are omitted.
///
/// A sorted `Vec` rather than a `BTreeMap`: every bone carries one, almost always with zero or one
/// namespace, and a `BTreeMap` leaf is sized for eleven entries (docs/performance.md has what a
/// one-entry map costs a 65,535-bone skeleton).
/// Namespaces are mostly format names, `'static`: no allocation per bone for the key either.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extensions(Vec<(Cow<'static, str>, serde_json::Value)>);

impl Extensions {
    /// True when no namespace holds data that is written (run-local namespaces aside).
    pub fn is_empty(&self) -> bool {
        !self.0.iter().any(|(k, _)| written(k))
    }
    /// Decode the typed payload `T`, if present. A payload that no longer decodes is `None`.
    pub fn get<T: Extension>(&self) -> Option<T> {
        self.raw(T::NAMESPACE).and_then(|v| serde_json::from_value(v.clone()).ok())
    }
    /// Store a typed payload, replacing what the namespace held.
    pub fn set<T: Extension>(&mut self, value: &T) {
        if let Ok(v) = serde_json::to_value(value) {
            self.set_raw(T::NAMESPACE, v);
        }
    }
    /// Raw access to one namespace.
    pub fn raw(&self, namespace: &str) -> Option<&serde_json::Value> {
        self.0.iter().find(|(k, _)| k == namespace).map(|(_, v)| v)
    }
    /// Raw insert into one namespace.
    pub fn set_raw(&mut self, namespace: impl Into<Cow<'static, str>>, value: serde_json::Value) {
        let namespace = namespace.into();
        match self.0.binary_search_by(|(k, _)| k.as_ref().cmp(namespace.as_ref())) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => {
                // A first namespace gets room for itself alone: most items hold one, and a first
                // push would make room for four (4 × 96 bytes a bone: 25 MB of a 65,535-bone
                // skeleton, where one is 6 MB).
                if self.0.is_empty() {
                    self.0.reserve_exact(1);
                }
                self.0.insert(i, (namespace, value))
            }
        }
    }
    /// Remove a namespace, returning what it held.
    pub fn remove(&mut self, namespace: &str) -> Option<serde_json::Value> {
        let i = self.0.iter().position(|(k, _)| k == namespace)?;
        Some(self.0.remove(i).1)
    }
    /// Every namespace that is written and its data, in sorted order (run-local ones aside).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.0.iter().filter(|(k, _)| written(k)).map(|(k, v)| (k.as_ref(), v))
    }
}

impl Serialize for Extensions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Extensions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A BTreeMap sorts the keys; of a repeated key the last wins.
        // Run-local namespaces are dropped: only a reader of this run makes them.
        let map = BTreeMap::<String, serde_json::Value>::deserialize(d)?;
        Ok(Extensions(map.into_iter().filter(|(k, _)| written(k)).map(|(k, v)| (Cow::Owned(k), v)).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_namespaces_replace_remove_and_json() {
        let mut e = Extensions::default();
        assert!(e.is_empty());
        e.set_raw("mpfb", serde_json::json!(1));
        e.set_raw("anvil", serde_json::json!({"id": 7}));
        e.set_raw("gltf", serde_json::json!("x"));
        e.set_raw("mpfb", serde_json::json!(2));
        assert_eq!(e.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["anvil", "gltf", "mpfb"]);
        assert_eq!(e.raw("mpfb"), Some(&serde_json::json!(2)));
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"anvil":{"id":7},"gltf":"x","mpfb":2}"#);
        let back: Extensions = serde_json::from_str(r#"{"mpfb":2,"gltf":"x","anvil":{"id":7}}"#).unwrap();
        assert_eq!(back, e);
        assert_eq!(e.remove("gltf"), Some(serde_json::json!("x")));
        assert_eq!(e.remove("gltf"), None);
        assert_eq!(e.iter().count(), 2);
    }

    #[test]
    fn run_local_namespaces_are_neither_written_nor_read() {
        let mut e = Extensions::default();
        e.set_raw("~mpfb.placed", serde_json::json!([1, 2, 3]));
        assert!(e.is_empty(), "only a run-local namespace: nothing to write");
        assert_eq!(e.raw("~mpfb.placed"), Some(&serde_json::json!([1, 2, 3])), "its owner reads it");
        e.set_raw("mpfb", serde_json::json!(2));
        assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"mpfb":2}"#);
        assert_eq!(e.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["mpfb"]);
        let back: Extensions = serde_json::from_str(r#"{"~mpfb.placed":[0],"mpfb":2}"#).unwrap();
        assert_eq!(back.raw("~mpfb.placed"), None, "a file cannot forge one");
        assert_eq!(back.raw("mpfb"), Some(&serde_json::json!(2)));
    }
}
