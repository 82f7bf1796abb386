//! `skelport demo`: the built-in sample humanoid in every format, each read back and compared.

use crate::flags::DemoArgs;
use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use skelport::{diff, stem_of, OpenOptions, Severity, WriteOptions};
use std::process::ExitCode;

/// One written file of `skelport demo --json` (schemas/demo-report.schema.json).
#[derive(Serialize)]
struct DemoFile {
    path: String,
    format: &'static str,
    bones: usize,
    skins: usize,
    skinned_vertices: usize,
    bytes: usize,
    /// The largest distance between a re-read bone head and the sample's, in metres.
    max_head_distance: f64,
    /// The re-read document compares equal to the sample.
    identical: bool,
    /// The writer's loss codes.
    losses: Vec<String>,
    /// Why writing or re-reading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl DemoFile {
    fn failed(path: String, format: &'static str, error: String) -> Self {
        DemoFile {
            path,
            format,
            bones: 0,
            skins: 0,
            skinned_vertices: 0,
            bytes: 0,
            max_head_distance: 0.0,
            identical: false,
            losses: Vec::new(),
            error: Some(error),
        }
    }
}

/// Run `skelport demo`.
pub fn run(a: DemoArgs) -> Result<ExitCode> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("{}: cannot create the directory", a.dir.display()))?;
    let doc = skelport::demo::sample();
    skelport::check(&doc, "built-in sample")?;
    let mut failed = 0;
    let mut files = Vec::new();
    for f in skelport::formats().iter().filter(|f| f.can_write()) {
        let path = a.dir.join(skelport::demo::file_name(*f));
        let result = (|| -> Result<(String, DemoFile)> {
            let (out, d) = skelport::render(&doc, *f, &WriteOptions { file_stem: stem_of(&path), ..Default::default() })?;
            skelport::io::write_output(&path, &out)?;
            let size = out.main.len() + out.side_files.iter().map(|s| s.1.len()).sum::<usize>();
            // With the side files a reader needs given back (MPFB's weights.<name>.json).
            let back = skelport::open(&path, &OpenOptions { from: Some(f.name().into()), reader: f.read_back(&out) })?;
            let r = diff::diff(&doc, &back.doc, diff::Tolerance::default());
            let bones: usize = back.doc.skeletons.iter().map(|s| s.bones.len()).sum();
            let verts: usize = back.doc.skins.iter().map(|s| s.vertex_count()).sum();
            // The losses by name: what the format cannot hold is what differs on re-reading.
            let mut losses: Vec<&str> = d.of(Severity::Loss).map(|d| d.code.as_str()).collect();
            losses.dedup();
            // Heads within 1e-7 m are equal to float32 storage (glTF and AnvilToolkit store f32):
            // not a difference worth the word.
            let heads = if r.max_head_distance == 0.0 {
                "bone heads equal".to_owned()
            } else if r.max_head_distance <= 1e-12 {
                "bone heads equal within 1e-12 m (rounding)".to_owned()
            } else if r.max_head_distance <= 1e-7 {
                "bone heads equal within 1e-7 m (f32)".to_owned()
            } else {
                format!("bone heads up to {:.1e} m apart", r.max_head_distance)
            };
            let record = DemoFile {
                path: path.display().to_string(),
                format: f.name(),
                bones,
                skins: back.doc.skins.len(),
                skinned_vertices: verts,
                bytes: size,
                max_head_distance: r.max_head_distance,
                identical: r.same,
                losses: losses.iter().map(|s| s.to_string()).collect(),
                error: None,
            };
            let line = format!(
                "{:<12} {bones} bones, {} skin(s), {verts} skinned vertices, {size} bytes; re-read: {heads}{}",
                f.name(),
                back.doc.skins.len(),
                match (r.same, losses.is_empty()) {
                    (true, true) => ", identical".to_owned(),
                    (true, false) => format!(", identical; loss: {}", losses.join(", ")),
                    (false, true) => ", differs".to_owned(),
                    (false, false) => format!("; loss: {}", losses.join(", ")),
                },
            );
            Ok((line, record))
        })();
        match result {
            Ok((line, record)) => {
                if !a.json {
                    say!("{}  {line}", path.display());
                }
                files.push(record);
            }
            Err(e) => {
                failed += 1;
                if !a.json {
                    say!("{}  {:<12} FAILED: {e:#}", path.display(), f.name());
                }
                files.push(DemoFile::failed(path.display().to_string(), f.name(), format!("{e:#}")));
            }
        }
    }
    let pic = a.dir.join("sample.svg");
    let mut picture_error = None;
    let opts = skelport_render::RenderOptions {
        view: skelport_render::View::All,
        size: 1024,
        labels: true,
        mesh: true,
        caption: "built-in sample".into(),
        overlay: None,
    };
    match skelport_render::render_svg(&doc, &opts)
        .map_err(|e| anyhow!("{e}"))
        .and_then(|svg| Ok(skelport::io::write_output(&pic, &skelport::Output::single(svg.into_bytes()))?))
    {
        Ok(_) if a.json => {}
        Ok(_) => say!("{}  render       23 bones, front/side/top views", pic.display()),
        Err(e) => {
            failed += 1;
            if !a.json {
                say!("{}  render       FAILED: {e:#}", pic.display());
            }
            picture_error = Some(format!("{e:#}"));
        }
    }
    if a.json {
        let j = serde_json::json!({
            "dir": a.dir.display().to_string(),
            "files": files,
            "picture": { "path": pic.display().to_string(), "error": picture_error },
            "failed": failed,
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    }
    Ok(if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
