//! Render an ir-json file (until the CLI's `skelport render` is wired):
//! `cargo run -p skelport-render --example render -- IN.ir.json OUT.svg|OUT.png [--view all]
//! [--size 1200] [--labels] [--no-mesh] [--overlay OTHER.ir.json]`.
#![allow(clippy::print_stdout, clippy::print_stderr)]
use skelport_render::{render_svg, svg_to_png, Overlay, RenderOptions, View};

fn load(path: &str) -> skelport_ir::Document {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    skelport_ir::irjson::from_slice(&bytes, path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (input, output) = (&args[0], &args[1]);
    if input.ends_with(".svg") {
        let svg = std::fs::read_to_string(input).expect("read svg");
        std::fs::write(output, svg_to_png(&svg).expect("png")).expect("write");
        return;
    }
    let name = |p: &str| std::path::Path::new(p).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let mut opts = RenderOptions { caption: name(input), ..Default::default() };
    let mut i = 2;
    while i < args.len() {
        match args[i].as_str() {
            "--view" => {
                i += 1;
                opts.view = View::parse(&args[i]).expect("front|side|top|all");
            }
            "--size" => {
                i += 1;
                opts.size = args[i].parse().expect("size");
            }
            "--labels" => opts.labels = true,
            "--no-mesh" => opts.mesh = false,
            "--overlay" => {
                i += 1;
                opts.overlay = Some(Overlay { doc: load(&args[i]), caption: name(&args[i]) });
            }
            a => panic!("unknown argument {a}"),
        }
        i += 1;
    }
    let doc = load(input);
    let t = std::time::Instant::now();
    let svg = render_svg(&doc, &opts).expect("render");
    let t_svg = t.elapsed();
    let bytes = if output.ends_with(".png") { svg_to_png(&svg).expect("png") } else { svg.into_bytes() };
    std::fs::write(output, &bytes).expect("write");
    eprintln!("{output}: {} bytes (svg {:?}, total {:?})", bytes.len(), t_svg, t.elapsed());
}
