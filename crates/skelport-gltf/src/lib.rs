//! skelport-gltf (work in progress).
