//! skelport-g4mf (work in progress).
