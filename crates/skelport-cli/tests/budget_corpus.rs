//! The decode budget (skelport_ir::budget) against the real corpus: every file reads as it did
//! without one, and none comes near its budget. Prints the largest share of a budget taken.

use skelport::registry;
use skelport_ir::{Budget, Diagnostics, Input, ReadOptions};

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn the_corpus_reads_well_inside_the_budget() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    let mut stack = vec![root];
    let (mut read, mut worst, mut densest) = (0, (0.0f64, String::new()), (0.0f64, String::new()));
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let bytes = std::fs::read(&p).unwrap();
            let Some(f) = registry::detect_reader(Some(&p), &bytes[..bytes.len().min(8192)]) else { continue };
            let unbudgeted = ReadOptions { budget: Some(Budget::unlimited()), ..Default::default() };
            let Ok(_) = f.read(Input { path: Some(&p), bytes: &bytes }, &unbudgeted, &mut Diagnostics::default()) else { continue };
            let budget = Budget::for_input(bytes.len() as u64);
            let opts = ReadOptions { budget: Some(budget.clone()), ..Default::default() };
            if let Err(e) = f.read(Input { path: Some(&p), bytes: &bytes }, &opts, &mut Diagnostics::default()) {
                panic!("{}: reads without a budget, not with one: {e}", p.display());
            }
            read += 1;
            let share = budget.used() as f64 / budget.limit() as f64;
            let ratio = budget.used() as f64 / budget.input().max(1) as f64;
            let what = format!("{} ({} of {} bytes, {ratio:.1} × its input)", p.display(), budget.used(), budget.limit());
            if share > worst.0 {
                worst = (share, what.clone());
            }
            // Density is judged on files of 64 KiB or more (the rule and its reason are in
            // docs/fuzzing.md, "The corpus against the budget"): a smaller file is held by the
            // floor (the share asserted above), and its ratio measures the fixed charge of a few
            // structures at their in-memory size, not what a file of its kind grows to.
            if ratio > densest.0 && bytes.len() >= 64 * 1024 {
                densest = (ratio, what);
            }
        }
    }
    eprintln!("{read} corpus files read; the largest share of a budget taken: {:.1} % by {}", worst.0 * 100.0, worst.1);
    eprintln!("the most charged per input byte: {}", densest.1);
    assert!(read >= 30, "{read}");
    assert!(worst.0 < 0.25, "{}", worst.1);
    // Well inside the factor too, so a file 64 MiB / 16 = 4 MiB or larger of the same kind fits.
    assert!(densest.0 < skelport_ir::budget::BUDGET_FACTOR as f64 / 4.0, "{}", densest.1);
}
