//! skelport-obj (work in progress).
