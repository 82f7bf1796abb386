//! The decode budget: how much memory the readers of one conversion may take, in proportion to
//! the bytes they were given.
//!
//! A file can describe far more data than it holds: a glTF accessor without a buffer view is
//! `count` zeros, a hundred G4MF mesh instances copy one mesh a hundred times, a Zstd chunk of a
//! few kilobytes can inflate to gigabytes. Readers charge a [`Budget`] *before* they allocate such
//! data, so a file asking for memory out of proportion to its size is refused with a message
//! instead of exhausting the machine.
//!
//! The budget is [`BUDGET_FACTOR`] × the input's bytes (the main file plus every distinct side
//! file read for it), and at least [`BUDGET_FLOOR`]. One budget is shared by every reader of one
//! conversion ([`crate::ReadOptions::budget`]); clones share the same account. What is charged is
//! cumulative (memory given back is not credited), which keeps the accounting simple and errs on
//! the safe side: the real corpus uses at most a few times its input (docs/limits.md).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The budget is this many times the input's bytes…
pub const BUDGET_FACTOR: u64 = 64;
/// …and at least this many bytes (64 MiB), so small files are never refused for overhead.
pub const BUDGET_FLOOR: u64 = 64 << 20;
/// Largest input, in bytes: the main file, or the main file and the side files read for it
/// together (1 GiB).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// A shared account of the memory the readers of one conversion take. Cheap to clone; clones
/// share the account.
#[derive(Debug, Clone)]
pub struct Budget(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    /// Bytes of input the budget is proportional to.
    input: AtomicU64,
    /// Bytes charged so far.
    used: AtomicU64,
    /// A fixed limit instead of the proportional one.
    fixed: Option<u64>,
    /// Side files already counted into `input` (a file named twice counts once).
    seen: Mutex<HashSet<PathBuf>>,
}

/// Which kind of inflation ran out of budget; the message names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetKind {
    /// Decoded data (accessors, meshes, copies of them).
    Decode,
    /// Decompressed data (Zstd chunks).
    Decompression,
}

/// A charge the budget could not take: which file, which element, how much.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", crate::FormatError::of(self))]
pub struct BudgetError {
    /// The file being read.
    pub file: String,
    /// The element that asked for the memory (a JSON pointer, a chunk).
    pub element: String,
    /// What ran out.
    pub kind: BudgetKind,
    /// Bytes asked for.
    pub needed: u64,
    /// Bytes already charged.
    pub used: u64,
    /// The limit.
    pub limit: u64,
    /// The input bytes the limit came from.
    pub input: u64,
}

impl crate::Fault for BudgetError {
    fn file(&self) -> Option<&str> {
        Some(&self.file)
    }
    fn place(&self) -> Option<crate::Place> {
        Some(crate::Place::Path(self.element.clone()))
    }
    fn kind(&self) -> crate::FaultKind {
        crate::FaultKind::Budget
    }
    fn what(&self) -> String {
        format!(
            "{} budget exceeded: it needs {} more bytes, and {} of the {} bytes allowed are already taken (the budget is {BUDGET_FACTOR} × the input's {} bytes, at least {} MiB); the file asks for far more memory than its size justifies: it is damaged or made to exhaust memory",
            match self.kind {
                BudgetKind::Decode => "decode",
                BudgetKind::Decompression => "decompression",
            },
            self.needed,
            self.used,
            self.limit,
            self.input,
            BUDGET_FLOOR >> 20
        )
    }
}

impl Budget {
    /// The budget for a conversion whose input is `bytes` long: `max(64 × bytes, 64 MiB)`.
    pub fn for_input(bytes: u64) -> Budget {
        Budget::make(bytes, None)
    }

    /// A budget with a fixed limit, whatever the input's size (tests; trusted callers that know
    /// better).
    pub fn with_limit(limit: u64) -> Budget {
        Budget::make(0, Some(limit))
    }

    /// No limit at all.
    pub fn unlimited() -> Budget {
        Budget::with_limit(u64::MAX)
    }

    fn make(input: u64, fixed: Option<u64>) -> Budget {
        Budget(Arc::new(Inner { input: AtomicU64::new(input), used: AtomicU64::new(0), fixed, seen: Mutex::new(HashSet::new()) }))
    }

    /// The limit now (it grows as side files are read).
    pub fn limit(&self) -> u64 {
        self.0.fixed.unwrap_or_else(|| self.input().saturating_mul(BUDGET_FACTOR).max(BUDGET_FLOOR))
    }

    /// Bytes charged so far.
    pub fn used(&self) -> u64 {
        self.0.used.load(Ordering::Relaxed)
    }

    /// Bytes of input the budget is proportional to.
    pub fn input(&self) -> u64 {
        self.0.input.load(Ordering::Relaxed)
    }

    /// Count a side file of `bytes` into the input (once per `key`, its canonical path). Returns
    /// whether it was new.
    pub fn add_input(&self, key: &Path, bytes: u64) -> bool {
        let new = self.0.seen.lock().map(|mut s| s.insert(key.to_path_buf())).unwrap_or(true);
        if new {
            self.0.input.fetch_add(bytes, Ordering::Relaxed);
        }
        new
    }

    /// The side files counted into the input so far ([`Budget::add_input`]), by the key they
    /// were counted under (their canonical path): the files a read opened besides its input,
    /// which a caller protects from being overwritten by its outputs.
    pub fn side_files(&self) -> Vec<PathBuf> {
        self.0.seen.lock().map(|s| s.iter().cloned().collect()).unwrap_or_default()
    }

    /// Take `bytes` of decoded data for `element` of `file`, or refuse before anything is
    /// allocated.
    pub fn charge(&self, bytes: u64, file: &str, element: &str) -> Result<(), BudgetError> {
        self.take(bytes, file, element, BudgetKind::Decode)
    }

    /// [`Budget::charge`] for `count` values of `T`.
    pub fn charge_items<T>(&self, count: usize, file: &str, element: &str) -> Result<(), BudgetError> {
        self.charge_items_named::<T>(count, file, || element.to_owned())
    }

    /// Take what a JSON value tree (or a typed model) parsed from `text` may cost, before it is
    /// parsed: see [`json_tree_bytes`].
    pub fn charge_json(&self, text: &[u8], file: &str, element: &str) -> Result<(), BudgetError> {
        self.charge(json_tree_bytes(text), file, element)
    }

    /// [`Budget::charge_items`] naming the element only when it refuses: for readers that charge
    /// once per number list, where formatting a label each time cost more than the charge.
    pub fn charge_items_named<T>(&self, count: usize, file: &str, element: impl FnOnce() -> String) -> Result<(), BudgetError> {
        let bytes = (count as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        self.take(bytes, file, "", BudgetKind::Decode).map_err(|e| BudgetError { element: element(), ..e })
    }

    /// Take `bytes` of decompressed data, or refuse ("decompression budget exceeded").
    pub fn charge_decompressed(&self, bytes: u64, file: &str, element: &str) -> Result<(), BudgetError> {
        self.take(bytes, file, element, BudgetKind::Decompression)
    }

    fn take(&self, bytes: u64, file: &str, element: &str, kind: BudgetKind) -> Result<(), BudgetError> {
        let limit = self.limit();
        let mut used = self.0.used.load(Ordering::Relaxed);
        loop {
            let next = used.saturating_add(bytes);
            if next > limit {
                return Err(BudgetError {
                    file: file.to_owned(),
                    element: element.to_owned(),
                    kind,
                    needed: bytes,
                    used,
                    limit,
                    input: self.input(),
                });
            }
            match self.0.used.compare_exchange_weak(used, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(now) => used = now,
            }
        }
    }
}

/// Bytes charged per JSON value: a 32-byte `serde_json::Value` (or a field of a typed model),
/// doubled for a vector's spare capacity.
pub const JSON_VALUE_BYTES: u64 = 64;
/// Bytes charged per object member on top of its value: the key's `String` and its slot in a
/// B-tree node, with the node's spare room.
pub const JSON_MEMBER_BYTES: u64 = 128;
/// Bytes charged per object on top of its value and members: an `IndexMap`'s first entries and
/// hash table, or a typed model's struct (a glTF node is about 300 bytes; the reader charges its
/// node graph on top).
pub const JSON_OBJECT_BYTES: u64 = 320;

/// An upper bound of the memory a tree parsed from the JSON `text` takes, found in one pass over
/// the text without parsing it: its length (strings and keys are copied) plus
/// [`JSON_VALUE_BYTES`] per value, [`JSON_MEMBER_BYTES`] per object member and
/// [`JSON_OBJECT_BYTES`] per object. Readers charge it before they parse, so that the
/// ~450 bytes a `{"":0}` takes as a `serde_json::Value` (64 × its 7 bytes with a comma) are paid for (646
/// are charged). Text
/// that is not JSON is counted the same way; the parse that follows refuses it.
pub fn json_tree_bytes(text: &[u8]) -> u64 {
    let (mut values, mut members, mut objects) = (1u64, 0u64, 0u64);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => {
                objects += 1;
                values += 1;
            }
            b'[' | b',' => values += 1,
            b':' => members += 1,
            _ => {}
        }
    }
    (text.len() as u64)
        .saturating_add(values.saturating_mul(JSON_VALUE_BYTES))
        .saturating_add(members.saturating_mul(JSON_MEMBER_BYTES))
        .saturating_add(objects.saturating_mul(JSON_OBJECT_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_with_a_floor_and_shared_by_clones() {
        assert_eq!(Budget::for_input(10).limit(), BUDGET_FLOOR);
        assert_eq!(Budget::for_input(10 << 20).limit(), 640 << 20);
        let b = Budget::for_input(0);
        let c = b.clone();
        b.charge(BUDGET_FLOOR - 10, "f", "a").unwrap();
        let e = c.charge(11, "f", "/accessors/3").unwrap_err();
        assert_eq!((e.needed, e.used, e.limit), (11, BUDGET_FLOOR - 10, BUDGET_FLOOR));
        let m = e.to_string();
        assert!(m.starts_with("f: /accessors/3: decode budget exceeded: it needs 11 more bytes"), "{m}");
        // A refused charge takes nothing.
        c.charge(10, "f", "a").unwrap();
        assert_eq!(b.used(), BUDGET_FLOOR);
    }

    #[test]
    fn json_trees_are_charged_by_their_structure() {
        // Brackets, commas and colons inside strings do not count.
        assert_eq!(json_tree_bytes(br#""{[,:]}""#), 8 + JSON_VALUE_BYTES);
        assert_eq!(json_tree_bytes(br#"{"":0}"#), 6 + 2 * JSON_VALUE_BYTES + JSON_MEMBER_BYTES + JSON_OBJECT_BYTES);
        assert_eq!(json_tree_bytes(br#"[0,"\"",1]"#), 10 + 4 * JSON_VALUE_BYTES);
        // A megabyte of `{"":0}` asks for more than 64 times itself: refused past the floor.
        let bomb = format!("[{}]", vec![r#"{"":0}"#; 150_000].join(","));
        let b = Budget::for_input(bomb.len() as u64);
        let e = b.charge_json(bomb.as_bytes(), "x.json", "$").unwrap_err();
        assert!(e.to_string().contains("x.json: $: decode budget exceeded"), "{e}");
    }

    #[test]
    fn side_files_grow_the_budget_once_each() {
        let b = Budget::for_input(1 << 20);
        assert!(b.add_input(Path::new("/x/a.bin"), 2 << 20));
        assert!(!b.add_input(Path::new("/x/a.bin"), 2 << 20));
        assert_eq!(b.limit(), (3 * 64) << 20);
        let e = b.charge_decompressed(u64::MAX, "f.g4b", "chunk 2").unwrap_err();
        assert!(e.to_string().contains("decompression budget exceeded"), "{e}");
        assert_eq!(Budget::with_limit(5).limit(), 5);
        assert!(Budget::unlimited().charge(u64::MAX, "f", "a").is_ok());
    }
}
