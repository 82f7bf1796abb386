//! skelport-sl (work in progress).
