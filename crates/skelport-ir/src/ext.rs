//! Namespaced, typed per-format extension data.
//!
//! Each format owns one namespace (its format name, e.g. `"mpfb"`, `"anvil"`, `"gltf"`) and keeps
//! there, as JSON, whatever it needs to write the same file back that the IR does not model.
//! Other formats must not read another format's namespace; the IR never interprets them.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::BTreeMap;

/// A typed extension payload stored under a fixed namespace.
pub trait Extension: Serialize + DeserializeOwned {
    /// The namespace key, normally the owning format's name.
    const NAMESPACE: &'static str;
}

/// Extension data keyed by namespace. Serialized as a JSON object; empty maps are omitted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Extensions(pub BTreeMap<String, serde_json::Value>);

impl Extensions {
    /// True when no namespace holds data.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Decode the typed payload `T`, if present. A payload that no longer decodes is `None`.
    pub fn get<T: Extension>(&self) -> Option<T> {
        self.0.get(T::NAMESPACE).and_then(|v| serde_json::from_value(v.clone()).ok())
    }
    /// Store a typed payload, replacing what the namespace held.
    pub fn set<T: Extension>(&mut self, value: &T) {
        if let Ok(v) = serde_json::to_value(value) {
            self.0.insert(T::NAMESPACE.to_owned(), v);
        }
    }
    /// Raw access to one namespace.
    pub fn raw(&self, namespace: &str) -> Option<&serde_json::Value> {
        self.0.get(namespace)
    }
    /// Raw insert into one namespace.
    pub fn set_raw(&mut self, namespace: &str, value: serde_json::Value) {
        self.0.insert(namespace.to_owned(), value);
    }
    /// Remove a namespace, returning what it held.
    pub fn remove(&mut self, namespace: &str) -> Option<serde_json::Value> {
        self.0.remove(namespace)
    }
}
