//! What the IR's `anvil` extension holds: the object ID on each bone, and on the skeleton the
//! form, encoding, source text and a fingerprint of what the IR held when it was read.

use serde_json::Value as Json;
use skelport_ir::{Bone, Skeleton};

/// The extension namespace.
pub const NAMESPACE: &str = "anvil";

/// A 64-bit fingerprint of what the IR holds of a skeleton, to tell whether a document was
/// edited since it was read. It takes a 64-bit word per step (a 65,535-bone skeleton is 6 MB of
/// words, which a byte at a time would be slow to hash on each read and write; docs/performance.md
/// has the figure): `h = (rotl(h, 23) ^ w) ×
/// K`. Each step is a bijection of the state for a given word and injective in the word for a
/// given state, so any edit that changes one word (one coordinate, one link, one name chunk) always
/// changes the result; a collision needs several words changed at once by chance (~2⁻⁶⁴). Names
/// go in as their length, then 8-byte chunks (the last zero-padded).
pub fn fingerprint(sk: &Skeleton) -> String {
    struct H(u64);
    impl H {
        #[inline]
        fn u64(&mut self, w: u64) {
            self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        fn bytes(&mut self, b: &[u8]) {
            self.u64(b.len() as u64);
            let mut chunks = b.chunks_exact(8);
            for c in &mut chunks {
                self.u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
            }
            let rest = chunks.remainder();
            if !rest.is_empty() {
                let mut last = [0u8; 8];
                last[..rest.len()].copy_from_slice(rest);
                self.u64(u64::from_le_bytes(last));
            }
        }
        fn f(&mut self, v: f64) {
            self.u64(v.to_bits());
        }
    }
    let mut h = H(0xcbf2_9ce4_8422_2325);
    h.u64(sk.bones.len() as u64);
    for b in &sk.bones {
        h.bytes(b.name.as_bytes());
        h.u64(b.parent.map(|p| u64::from(p.raw())).unwrap_or(u64::MAX));
        h.u64(b.mirror.map(|p| u64::from(p.raw())).unwrap_or(u64::MAX));
        let t = &b.rest;
        for v in [t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w] {
            h.f(v);
        }
        for v in [t.scale.x, t.scale.y, t.scale.z] {
            h.f(v);
        }
        h.u64(bone_ext_id(b).unwrap_or(u64::MAX));
    }
    // Fold the high bits down so the printed value depends on all of them evenly.
    let x = h.0 ^ (h.0 >> 32);
    format!("{x:016x}")
}

/// The Anvil ID stored on an IR bone.
///
/// The extension is the bare ID (`"anvil": 1091164575`): a JSON object per bone would be three
/// more allocations each for a 65,535-bone file. `{"id": N}` is read too.
pub fn bone_ext_id(b: &Bone) -> Option<u64> {
    match b.ext.raw(NAMESPACE)? {
        Json::Number(n) => n.as_u64(),
        // A scan of the one-entry object: `get` would hash the key with SipHash.
        Json::Object(m) => m.iter().find(|(k, _)| k.as_str() == "id")?.1.as_u64(),
        _ => None,
    }
}
