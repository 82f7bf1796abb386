//! `skelport render`: a skeleton (and optionally a second one over it) as SVG or PNG.

use super::{file_label, print_diagnostics};
use crate::flags::{RenderArgs, ViewArg};
use anyhow::{anyhow, bail, Result};
use skelport::{registry, OpenOptions};
use std::process::ExitCode;

/// Run `skelport render`.
pub fn run(a: RenderArgs) -> Result<ExitCode> {
    use skelport_render::{render_svg, svg_to_png, Overlay, RenderOptions, View};
    let l = super::open(&a.file, &a.read.options())?;
    print_diagnostics(&l.name, &l.diagnostics);
    let overlay = match &a.overlay {
        Some(p) => {
            let reader = skelport::ir::ReadOptions { mesh: a.read.mesh.clone(), ..Default::default() };
            let mut o = super::open(p, &OpenOptions { from: None, reader })?;
            if let Some(m) = &a.map {
                // `humanoid` renames the overlay to the names of the drawn file's format.
                o.apply_map(m, Some(l.format))?;
            }
            Some(Overlay { doc: o.doc, caption: file_label(p) })
        }
        None => None,
    };
    let view = match a.view {
        ViewArg::Front => View::Front,
        ViewArg::Side => View::Side,
        ViewArg::Top => View::Top,
        ViewArg::All => View::All,
    };
    let opts = RenderOptions { view, size: a.size, labels: a.labels, mesh: !a.no_mesh, caption: file_label(&a.file), overlay };
    let svg = render_svg(&l.doc, &opts).map_err(|e| anyhow!("{}: {e}", a.file.display()))?;
    let bytes = match registry::extension_of(&a.output).as_deref() {
        Some("svg") => svg.into_bytes(),
        Some("png") => svg_to_png(&svg).map_err(|e| anyhow!("{}: {e}", a.output.display()))?,
        _ => bail!("{}: the picture must be .svg or .png", a.output.display()),
    };
    let size = bytes.len();
    skelport::io::write_output(&a.output, &skelport::Output::single(bytes))?;
    if a.json {
        let j = serde_json::json!({
            "file": a.file.display().to_string(),
            "format": l.format.name(),
            "output": a.output.display().to_string(),
            "bytes": size,
            "view": a.view.name(),
            "size": a.size,
            "bones": l.doc.skeletons.iter().map(|s| s.bones.len()).sum::<usize>(),
            "meshes": if a.no_mesh { 0 } else { l.doc.meshes.len() },
            "overlay": opts.overlay.as_ref().map(|o| o.caption.clone()),
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    }
    Ok(ExitCode::SUCCESS)
}
