//! `skelport demo`: the built-in sample humanoid in every format, each read back and compared.

use crate::flags::DemoArgs;
use anyhow::{anyhow, Context, Result};
use skelport::{diff, stem_of, ReadOptions, Severity, WriteOptions};
use std::process::ExitCode;

/// Run `skelport demo`.
pub fn run(a: DemoArgs) -> Result<ExitCode> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("{}: cannot create the directory", a.dir.display()))?;
    let doc = skelport::demo::sample();
    skelport::check(&doc, "built-in sample")?;
    let mut failed = 0;
    for f in skelport::formats().iter().filter(|f| f.can_write()) {
        let path = a.dir.join(skelport::demo::file_name(*f));
        let result = (|| -> Result<String> {
            let (out, d) = skelport::render(&doc, *f, &WriteOptions { file_stem: stem_of(&path), ..Default::default() })?;
            skelport::io::write_output(&path, &out)?;
            let size = out.main.len() + out.side_files.iter().map(|s| s.1.len()).sum::<usize>();
            // With the side files a reader needs given back (MPFB's weights.<name>.json).
            let back = skelport::open(&path, &ReadOptions { from: Some(f.name().into()), reader: f.read_back(&out) })?;
            let r = diff::diff(&doc, &back.doc, diff::Tolerance::default());
            let bones: usize = back.doc.skeletons.iter().map(|s| s.bones.len()).sum();
            let verts: usize = back.doc.skins.iter().map(|s| s.vertex_count()).sum();
            let losses = d.of(Severity::Loss).count();
            Ok(format!(
                "{:<12} {bones} bones, {} skin(s), {verts} skinned vertices, {size} bytes; re-read {} (max head Δ {:.1e} m){}",
                f.name(),
                back.doc.skins.len(),
                if r.same { "identical" } else { "differs" },
                r.max_head_distance,
                if losses > 0 { format!(", {losses} loss(es)") } else { String::new() }
            ))
        })();
        match result {
            Ok(line) => println!("{}  {line}", path.display()),
            Err(e) => {
                failed += 1;
                println!("{}  {:<12} FAILED: {e:#}", path.display(), f.name());
            }
        }
    }
    let pic = a.dir.join("sample.svg");
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
        .and_then(|svg| skelport::io::write_output(&pic, &skelport::Output::single(svg.into_bytes())))
    {
        Ok(_) => println!("{}  render       23 bones, front/side/top views", pic.display()),
        Err(e) => {
            failed += 1;
            println!("{}  render       FAILED: {e:#}", pic.display());
        }
    }
    Ok(if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
