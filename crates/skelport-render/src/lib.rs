//! skelport-render (work in progress).
