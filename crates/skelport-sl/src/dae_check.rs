//! Checks on the parsed Collada model that do not depend on how it was parsed: numbers the
//! importer would turn into a broken rig. Kept out of [`crate::collada`] (the parser) and
//! [`crate::read`] (the SL rules) so either can change without touching these.

use crate::collada::Dae;
use crate::error::SlError;

/// Refuse non-finite bind-shape and inverse-bind matrices and non-finite weights: NaN or
/// infinity there has no meaning in a skin (negative weights stay a warning, as the importer
/// drops them).
pub(crate) fn check(dae: &Dae, file: &str) -> Result<(), SlError> {
    for c in &dae.controllers {
        if c.bind_shape.to_cols_array().iter().any(|v| !v.is_finite()) {
            return Err(SlError::invalid(
                file,
                c.pos.line,
                c.pos.column,
                format!("controller \"{}\": <bind_shape_matrix> holds NaN or infinity; write 16 finite numbers (the identity is 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1)", c.id),
            ));
        }
        if let Some(j) = c.inverse_binds.iter().position(|m| m.to_cols_array().iter().any(|v| !v.is_finite())) {
            return Err(SlError::invalid(
                file,
                c.joints_pos.line,
                c.joints_pos.column,
                format!("controller \"{}\": the inverse bind matrix of joint {j} holds NaN or infinity; export the skin again", c.id),
            ));
        }
        for (v, inf) in c.influences().enumerate() {
            if let Some(&(_, w)) = inf.iter().find(|(_, w)| !w.is_finite()) {
                return Err(SlError::invalid(
                    file,
                    c.weights_pos.line,
                    c.weights_pos.column,
                    format!(
                        "controller \"{}\": vertex {v} has weight {w}, not a finite number; fix the WEIGHT source's <float_array>",
                        c.id
                    ),
                ));
            }
        }
    }
    Ok(())
}
