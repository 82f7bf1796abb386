//! skelport-mpfb (work in progress).
