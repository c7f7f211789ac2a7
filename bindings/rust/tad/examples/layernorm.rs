//! The tad loop from Rust on examples/layernorm.py: generate a backward, verify it on the CPU
//! interpreter (float64, finite differences), snapshot it, and with --gpu verify and benchmark it
//! on the GPU too.
//!
//!   cargo run --example layernorm -- [--gpu] [--work-dir DIR] [FORWARD.py]
//!
//! The worker's interpreter is $TAD_PYTHON (e.g. /usr/bin/python3, Debian's, with CPU torch).
use std::path::PathBuf;
use std::process::ExitCode;

use tad::{BenchOptions, GenerateOptions, Session, SessionOptions, Status, VerifyOptions, VerifyReport};

struct Args {
    gpu: bool,
    work_dir: PathBuf,
    forward: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        gpu: false,
        work_dir: std::env::temp_dir().join(format!("tad-rust-example-{}", std::process::id())),
        forward: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../examples/layernorm.py"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--gpu" => args.gpu = true,
            "--work-dir" => args.work_dir = it.next().ok_or("--work-dir needs a directory")?.into(),
            flag if flag.starts_with('-') => return Err(format!("unknown option {}", flag)),
            path => args.forward = path.into(),
        }
    }
    Ok(args)
}

fn print_verify(report: &VerifyReport) {
    for r in &report.results {
        let grads: Vec<String> =
            r.grads.iter().map(|g| format!("{} {:.2e}", g.name, g.max_rel_err.unwrap_or(f64::NAN))).collect();
        println!("  {:<4} {:<28} {:<8} {:<8} {}", report.mode, r.dims.to_string(), r.dtype, r.status, grads.join(", "));
    }
    let s = &report.summary;
    println!(
        "[{}] {}: {}/{} passed, {} skipped, max rel err {:.2e}",
        if report.passed { "PASS" } else { "FAIL" },
        report.mode,
        s.passed,
        s.total,
        s.skipped,
        s.max_rel_err.unwrap_or(f64::NAN)
    );
}

fn gpu_steps(session: &mut Session) -> tad::Result<()> {
    match session.verify(&VerifyOptions::gpu()) {
        Err(e) if e.status() == Status::NoGpu => {
            println!("[SKIP] no GPU: {}", e.message());
            return Ok(());
        }
        result => print_verify(&result?),
    }
    let bench = session.bench(&BenchOptions::new())?;
    for r in &bench.results {
        println!("  bench {} {} {} bwd {:?} ms, ref {:?} ms", r.dims, r.dtype, r.status, r.bwd_ms, r.ref_bwd_ms);
    }
    println!("median speedup vs reference: {:?}", bench.median_bwd_speedup_vs_ref);
    Ok(())
}

fn run(args: &Args) -> tad::Result<()> {
    println!("libtad {}", tad::version());
    let options = SessionOptions::new().work_dir(&args.work_dir).progress(|p| {
        println!("[{}] {}", p.stage, p.message);
        true
    });
    let mut session = Session::new(options)?;
    session.load_forward(&args.forward)?;
    let id = session.generate(&GenerateOptions::new())?;
    let source = session.candidate_source(None)?;
    println!("generated {} ({} lines of Python)", id, source.lines().count());
    match session.verify(&VerifyOptions::cpu()) {
        Ok(report) => print_verify(&report),
        Err(e) => {
            if let Some(report) = e.verify_report() {
                print_verify(&report);
            }
            return Err(e);
        }
    }
    if args.gpu {
        gpu_steps(&mut session)?;
    }
    let snapshot = session.snapshot(Some("verified"))?;
    println!("snapshot {}", snapshot);
    for s in session.snapshots()? {
        println!("  {} {:<8} {:<9} passed {:?}", s.id, s.kind, s.label, s.passed);
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("layernorm: {}", message);
            return ExitCode::from(2);
        }
    };
    let result = run(&args);
    let _ = std::fs::remove_dir_all(&args.work_dir);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("layernorm: {}", e);
            ExitCode::FAILURE
        }
    }
}
