//! How MakeHuman 1.x places and orients a bone (learnt from its `shared/skeleton.py`; written
//! here from that description):
//! * a joint is the mean of the base-mesh vertices listed for it in `joints` (a joint with no
//!   list is the mean of the mesh's face group `joint-<name>`);
//! * a plane of joints (p1, p2, p3) has the normal `normalize(normalize(p3 − p2) ×
//!   normalize(p2 − p1))`;
//! * a bone's normal is its `rotation_plane`'s normal; a list of planes averages the normals that
//!   are not zero; no plane, a plane that is not defined or a zero normal give +Y;
//! * the bone's rest matrix has Y along head → tail, Z = normalize(normal × Y) and
//!   X = normalize(Y × Z), and the head as its origin.

use skelport_ir::{DMat3, DQuat, DVec3};

/// `v / |v|`, or `v` itself when it is zero (as MakeHuman's `matrix.normalize`).
pub fn normalize(v: DVec3) -> DVec3 {
    let m = v.length();
    if m == 0.0 {
        v
    } else {
        v / m
    }
}

/// Whether every component is within 1e-5 of zero (numpy's `allclose(v, 0, atol=1e-05)`).
fn near_zero(v: DVec3) -> bool {
    v.abs().max_element() <= 1e-5
}

/// The normal of the plane through joints `p1`, `p2`, `p3`, wound counter-clockwise.
pub fn plane_normal(p1: DVec3, p2: DVec3, p3: DVec3) -> DVec3 {
    let pvec = normalize(p2 - p1);
    let yvec = normalize(p3 - p2);
    normalize(yvec.cross(pvec))
}

/// What a bone's `rotation_plane` names.
#[derive(Debug, Clone, PartialEq)]
pub enum RollPlanes {
    /// No plane (`null`, `0`, absent): the normal is +Y.
    None,
    /// One plane's name.
    One(String),
    /// Several planes, whose normals are averaged.
    Many(Vec<String>),
}

/// The bone's normal. `normal_of` gives a plane's normal, `None` when the rig defines no plane of
/// that name (MakeHuman then uses +Y for that plane).
pub fn bone_normal(planes: &RollPlanes, mut normal_of: impl FnMut(&str) -> Option<DVec3>) -> DVec3 {
    match planes {
        RollPlanes::None => DVec3::Y,
        RollPlanes::One(p) => {
            let n = normal_of(p).unwrap_or(DVec3::Y);
            if near_zero(n) {
                DVec3::Y
            } else {
                n
            }
        }
        RollPlanes::Many(ps) => {
            let mut sum = DVec3::ZERO;
            let mut count = 0;
            for p in ps {
                let n = normal_of(p).unwrap_or(DVec3::Y);
                if !near_zero(n) {
                    count += 1;
                    sum += n;
                }
            }
            if count > 0 && !near_zero(sum) {
                sum / count as f64
            } else {
                DVec3::Y
            }
        }
    }
}

/// The rest matrix's axes (columns X, Y, Z) of a bone from `head` to `tail` with `normal`, as
/// MakeHuman builds it. Not a rotation when the bone has no length or the normal lies along it
/// (see [`orientation`]).
pub fn rest_axes(head: DVec3, tail: DVec3, normal: DVec3) -> DMat3 {
    let y = normalize(tail - head);
    let n = normalize(normal);
    let z = normalize(n.cross(y));
    let x = normalize(y.cross(z));
    DMat3::from_cols(x, y, z)
}

/// The bone's world rest orientation, or `None` when MakeHuman's construction gives no rotation
/// (a bone without length, or a normal along the bone).
pub fn orientation(head: DVec3, tail: DVec3, normal: DVec3) -> Option<DQuat> {
    let m = rest_axes(head, tail, normal);
    let ortho = (m.transpose() * m - DMat3::IDENTITY).to_cols_array().iter().all(|e| e.abs() < 1e-9);
    (ortho && m.determinant() > 0.5).then(|| DQuat::from_mat3(&m).normalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_follow_the_bone_and_the_plane() {
        // A bone along +Y with a plane normal along +X keeps the world axes.
        let q = orientation(DVec3::ZERO, DVec3::Y, DVec3::X).unwrap();
        assert!(q.angle_between(DQuat::IDENTITY) < 1e-12);
        // The plane (0,0,0) → (0,1,0) → (0,1,-1) has the normal +X: (p3-p2) × (p2-p1) = -Z × Y.
        assert!((plane_normal(DVec3::ZERO, DVec3::Y, DVec3::new(0.0, 1.0, -1.0)) - DVec3::X).length() < 1e-12);
        // A normal not perpendicular to the bone is made so.
        let m = rest_axes(DVec3::ZERO, DVec3::Y * 2.0, DVec3::new(1.0, 1.0, 0.0));
        assert!((m.x_axis - DVec3::X).length() < 1e-12 && (m.z_axis - DVec3::Z).length() < 1e-12);
        // No length, or a normal along the bone: no rotation.
        assert!(orientation(DVec3::ONE, DVec3::ONE, DVec3::X).is_none());
        assert!(orientation(DVec3::ZERO, DVec3::Y, DVec3::Y).is_none());
        // Several planes average; zero normals do not count; none at all is +Y.
        let n = bone_normal(&RollPlanes::Many(vec!["a".into(), "b".into(), "z".into()]), |p| match p {
            "a" => Some(DVec3::X),
            "b" => Some(DVec3::Z),
            _ => Some(DVec3::ZERO),
        });
        assert_eq!(n, DVec3::new(0.5, 0.0, 0.5));
        assert_eq!(bone_normal(&RollPlanes::One("missing".into()), |_| None), DVec3::Y);
        assert_eq!(bone_normal(&RollPlanes::None, |_| Some(DVec3::X)), DVec3::Y);
    }
}
