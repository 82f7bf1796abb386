//! Making names unique in linear time, and the work counter the readers' scaling tests read.
//!
//! Every reader and writer that renames a repeated name (`Hips`, `Hips.001`, … or `Hips_2`, …)
//! goes through [`UniqueNames`]: a set of the names taken and, per base name, the next suffix to
//! try. Trying `.001`, `.002`, … from the start for every repeat was quadratic: 40,000 nodes
//! with one name took more than a minute.

use std::cell::Cell;
// foldhash (seeded per process) as elsewhere for names from files: SipHash was half the cost of
// naming a skeleton's nodes.
use foldhash::{HashMap, HashSet};

/// How a repeated name is told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    /// `base.001`, `base.002`, … (Blender's style; the glTF and Collada readers).
    Dot3,
    /// `base_2`, `base_3`, … (the G4MF writer, XML names).
    Underscore,
}

impl Suffix {
    fn first(self) -> u64 {
        match self {
            Suffix::Dot3 => 1,
            Suffix::Underscore => 2,
        }
    }

    fn apply(self, base: &str, k: u64) -> String {
        match self {
            Suffix::Dot3 => format!("{base}.{k:03}"),
            Suffix::Underscore => format!("{base}_{k}"),
        }
    }
}

/// The names taken so far, and per base name the next suffix to try, so that `n` repeats of one
/// name cost `O(n)` tries, not `O(n²)`.
#[derive(Debug, Default, Clone)]
pub struct UniqueNames {
    taken: HashSet<String>,
    next: HashMap<String, u64>,
}

impl UniqueNames {
    /// No name taken.
    pub fn new() -> UniqueNames {
        UniqueNames::default()
    }

    /// Whether `name` is taken.
    pub fn contains(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// Take `name` as it is; false if it was already taken.
    pub fn insert(&mut self, name: impl Into<String>) -> bool {
        self.taken.insert(name.into())
    }

    /// `base` if it is free, else the first free `base` + suffix, taken.
    pub fn unique(&mut self, base: &str, suffix: Suffix) -> String {
        self.unique_avoiding(base, suffix, |_| false)
    }

    /// [`UniqueNames::unique`], also skipping every name `avoid` refuses (names reserved for
    /// others). `avoid` must refuse the same names on every call for one base, or the count
    /// resumed from an earlier call may pass over a name it would now accept (still unique).
    pub fn unique_avoiding(&mut self, base: &str, suffix: Suffix, avoid: impl Fn(&str) -> bool) -> String {
        add_work(1);
        if !self.taken.contains(base) && !avoid(base) {
            self.taken.insert(base.to_owned());
            return base.to_owned();
        }
        let mut k = self.next.get(base).copied().unwrap_or(suffix.first());
        loop {
            add_work(1);
            let name = suffix.apply(base, k);
            k += 1;
            if !self.taken.contains(&name) && !avoid(&name) {
                self.next.insert(base.to_owned(), k);
                self.taken.insert(name.clone());
                return name;
            }
        }
    }
}

thread_local! {
    static WORK: Cell<u64> = const { Cell::new(0) };
}

/// Count `n` steps of work that a file can make repeat (a name tried, an attribute compared, a
/// byte scanned back), on this thread. Readers call it in the loops whose length a file
/// controls; tests double a repeated element and check that the count doubles, not quadruples.
pub fn add_work(n: u64) {
    WORK.with(|w| w.set(w.get().wrapping_add(n)));
}

/// The work counted on this thread so far ([`add_work`]); tests read it before and after a read.
pub fn work() -> u64 {
    WORK.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_get_suffixes_in_linear_work() {
        let mut u = UniqueNames::new();
        assert_eq!(u.unique("a", Suffix::Dot3), "a");
        assert_eq!(u.unique("a", Suffix::Dot3), "a.001");
        assert!(u.insert("a.002"));
        assert_eq!(u.unique("a", Suffix::Dot3), "a.003");
        assert_eq!(u.unique("b", Suffix::Underscore), "b");
        assert_eq!(u.unique("b", Suffix::Underscore), "b_2");
        assert_eq!(u.unique_avoiding("c", Suffix::Underscore, |s| s == "c" || s == "c_2"), "c_3");
        assert!(u.contains("c_3") && !u.contains("c"));
        let cost = |n: usize| {
            let mut u = UniqueNames::new();
            let before = work();
            for _ in 0..n {
                u.unique("x", Suffix::Dot3);
            }
            work() - before
        };
        let (one, two) = (cost(2000), cost(4000));
        assert!(two <= 2 * one + 2, "{one} then {two}");
    }
}
