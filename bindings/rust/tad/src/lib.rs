//! The safe Rust API of libtad (Triton AutoDiff): load a forward Triton kernel file, generate its
//! backward, verify it (CPU interpreter or GPU), benchmark it, and keep every candidate as a
//! snapshot. Built on the raw declarations of `tad-sys`; docs/bindings.md in the repository has
//! the setup.
//!
//! ```no_run
//! let mut session = tad::Session::new(tad::SessionOptions::new().work_dir("/tmp/tad-session"))?;
//! session.load_forward("examples/layernorm.py")?;
//! let id = session.generate(&tad::GenerateOptions::new())?;
//! let report = session.verify(&tad::VerifyOptions::cpu())?;
//! println!("{}: passed {}, max rel err {:?}", id, report.passed, report.summary.max_rel_err);
//! # Ok::<(), tad::Error>(())
//! ```
//!
//! A session moves between threads but is not shared by them (tad.h: one thread at a time):
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<tad::Session>();
//! ```
mod error;
mod interpret;
pub mod json;
mod options;
mod progress;
mod report;
mod session;

pub use error::{Error, Result, Status};
pub use interpret::interpret;
pub use options::{BenchOptions, GenerateOptions, Loops, RetrieveOptions, SessionOptions, VerifyOptions};
pub use progress::Progress;
pub use report::{
    BenchReport, BenchResult, GradCheck, OutputCheck, SnapshotInfo, VerifyReport, VerifyResult, VerifySummary,
};
pub use session::Session;

/// "MAJOR.MINOR.PATCH" of the loaded libtad.
pub fn version() -> String {
    let v = unsafe { std::ffi::CStr::from_ptr(tad_sys::tad_version()) };
    v.to_string_lossy().into_owned()
}

/// tad_kill_workers: SIGKILL to every worker this process's sessions run (with what it started),
/// without waiting. Async-signal-safe: for a host's signal handler that then ends the process.
pub fn kill_workers() {
    unsafe { tad_sys::tad_kill_workers() }
}

/// tad_dataset_list: every entry of the dataset `options` names (its dataset and cache directories)
/// with its metadata, backward and feature counts, as the JSON of docs/reports.md ("Dataset listing").
pub fn dataset_list(options: &RetrieveOptions) -> Result<String> {
    let mut strings = options::CStrings::default();
    let c = options.to_c(&mut strings)?;
    let mut out: *mut std::os::raw::c_char = std::ptr::null_mut();
    let status = unsafe { tad_sys::tad_dataset_list(&c, &mut out) };
    let text = if out.is_null() {
        String::new()
    } else {
        let text = unsafe { std::ffi::CStr::from_ptr(out) }.to_string_lossy().into_owned();
        unsafe { tad_sys::tad_string_free(out) };
        text
    };
    error::check(status)?;
    Ok(text)
}

/// tad_report_number: the number at a dotted path of a report ("summary.max_rel_err",
/// "results.0.grads.1.max_rel_err"). A path that leads nowhere or to null is [`Status::NotFound`].
pub fn report_number(report_json: &str, key: &str) -> Result<f64> {
    let report = options::c_string(report_json.as_bytes(), "report")?;
    let key = options::c_string(key.as_bytes(), "key")?;
    let mut value = 0.0;
    error::check(unsafe { tad_sys::tad_report_number(report.as_ptr(), key.as_ptr(), &mut value) })?;
    Ok(value)
}
