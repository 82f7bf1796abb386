//! skelport-anvil (work in progress).
