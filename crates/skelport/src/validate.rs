//! `skelport validate`: a file against the IR's rules and, optionally, a target's: what the
//! target's writer refuses or cannot hold, or (target `sl`) every rule of the Second Life
//! importer.

use crate::{render, stem_of, Error, ErrorCode, Loaded, Result};
use serde::Serialize;
use skelport_ir::validate::Problem;
use skelport_ir::{Format, Severity, WriteOptions};
use std::path::Path;

/// The target name that checks the Second Life importer's rules (not a format name).
pub const SL_TARGET: &str = "sl";

/// What [`validate`] found.
#[derive(Debug, Serialize)]
pub struct Validation {
    /// The format the file was read as.
    #[serde(skip)]
    pub format: &'static dyn Format,
    /// Broken rules: each makes the file invalid.
    pub problems: Vec<Problem>,
    /// What the reader warned about, and what the target would lose.
    pub warnings: Vec<String>,
}

impl Validation {
    /// No problem.
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Check `loaded` (read from the file at `path`) against the IR's rules and, when `target` is
/// given, that target's: a format name, or [`SL_TARGET`] for the SL importer (checked on the
/// `.dae` skelport would upload, or on the file itself when it is one; `sl_skeleton` replaces the
/// built-in SL skeleton).
pub fn validate(path: &Path, loaded: &Loaded, target: Option<&str>, sl_skeleton: Option<&Path>) -> Result<Validation> {
    let mut problems = skelport_ir::validate::validate(&loaded.doc);
    let mut warnings: Vec<String> =
        loaded.diagnostics.items.iter().filter(|d| d.severity != Severity::Info).map(|d| d.message.clone()).collect();
    if let Some(t) = target {
        if t.eq_ignore_ascii_case(SL_TARGET) {
            let (p, w) = sl_problems(path, loaded, sl_skeleton).map_err(|e| Error::from_chain(ErrorCode::Input, Some(&loaded.name), &e))?;
            problems.extend(p);
            warnings.extend(w);
        } else {
            problems.extend(target_problems(path, loaded, t)?);
        }
    }
    Ok(Validation { format: loaded.format, problems, warnings })
}

/// The SL importer's rules: a `.dae` is checked as it is; anything else is first written as the
/// `.dae` skelport would upload (writer errors are problems, its losses warnings).
fn sl_problems(file: &Path, l: &Loaded, sl_skeleton: Option<&Path>) -> anyhow::Result<(Vec<Problem>, Vec<String>)> {
    let sl = match sl_skeleton {
        Some(p) => std::borrow::Cow::Owned(skelport_sl::SlSkeleton::from_file(p)?),
        None => std::borrow::Cow::Borrowed(skelport_sl::SlSkeleton::builtin()),
    };
    let name = file.display().to_string();
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let dae = &skelport_sl::DaeFormat;
    let bytes = if l.format.name() == dae.name() {
        crate::io::read_input(file)?
    } else {
        let opts = WriteOptions { file_stem: stem_of(file), sl_skeleton: sl_skeleton.map(Path::to_path_buf), ..Default::default() };
        match render(&l.doc, dae, &opts) {
            Err(e) => {
                problems.push(Problem { location: format!("target {SL_TARGET}"), message: format!("{e:#}") });
                return Ok((problems, warnings));
            }
            Ok((out, d)) => {
                warnings.extend(d.of(Severity::Loss).map(|d| format!("as .dae: {}", d.message)));
                crate::io::InputBytes::Read(out.main)
            }
        }
    };
    for v in skelport_sl::validate_sl(&bytes, &name, &sl) {
        match v.level {
            skelport_sl::Level::Error => {
                problems.push(Problem { location: v.location.clone(), message: format!("[{}] {}", v.rule, v.message) })
            }
            skelport_sl::Level::Warning => warnings.push(format!("{} [{}] {}", v.location, v.rule, v.message)),
        }
    }
    Ok((problems, warnings))
}

/// The target format's rules: whatever the target's writer refuses or cannot hold.
fn target_problems(file: &Path, l: &Loaded, target: &str) -> Result<Vec<Problem>> {
    let fmt = crate::format_for(target, false)?;
    let mut out = Vec::new();
    match render(&l.doc, fmt, &WriteOptions { file_stem: stem_of(file), ..Default::default() }) {
        Err(e) => out.push(Problem { location: format!("target {}", fmt.name()), message: format!("{e:#}") }),
        Ok((_, d)) => {
            out.extend(d.of(Severity::Loss).map(|d| Problem { location: format!("target {}", fmt.name()), message: d.message.clone() }))
        }
    }
    Ok(out)
}
