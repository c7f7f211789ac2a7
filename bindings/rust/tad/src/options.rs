//! Options of the session's calls, as builders. Unset fields are the library's defaults (NULL or
//! zero in the C structs); JSON arguments are JSON text as tad.h takes them.
use std::ffi::{CString, OsStr, OsString};
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tad_sys as sys;

use crate::error::{Error, Result, Status};
use crate::progress::Progress;

pub(crate) type ProgressFn = Box<dyn FnMut(&Progress<'_>) -> bool + Send>;

/// Options of [`crate::Session::new`].
#[derive(Default)]
pub struct SessionOptions {
    pub(crate) work_dir: Option<PathBuf>,
    pub(crate) python: Option<OsString>,
    pub(crate) device_index: i32,
    pub(crate) worker_timeout: Option<Duration>,
    pub(crate) startup_timeout: Option<Duration>,
    pub(crate) progress: Option<ProgressFn>,
}

impl SessionOptions {
    pub fn new() -> SessionOptions {
        SessionOptions::default()
    }

    /// The session directory (default "./.tad"); an existing one keeps its snapshots.
    pub fn work_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.work_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The worker's interpreter (default $TAD_PYTHON, else "python3").
    pub fn python(mut self, python: impl AsRef<OsStr>) -> Self {
        self.python = Some(python.as_ref().to_os_string());
        self
    }

    /// The CUDA device the worker uses.
    pub fn device_index(mut self, index: i32) -> Self {
        self.device_index = index;
        self
    }

    /// The limit of one worker request (default 600 s).
    pub fn worker_timeout(mut self, limit: Duration) -> Self {
        self.worker_timeout = Some(limit);
        self
    }

    /// The limit for the worker to import torch and triton (default 120 s).
    pub fn startup_timeout(mut self, limit: Duration) -> Self {
        self.startup_timeout = Some(limit);
        self
    }

    /// Called during long steps; returning false cancels the step ([`Status::Cancelled`]). A
    /// panic in it cancels the step and resumes once the call has returned to Rust.
    pub fn progress<F>(mut self, callback: F) -> Self
    where
        F: FnMut(&Progress<'_>) -> bool + Send + 'static,
    {
        self.progress = Some(Box::new(callback));
        self
    }
}

/// How loops whose carried float state is nonlinear are reversed (docs/compiler.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loops {
    /// Rerun the loop up to each iteration: O(T^2) work, no memory.
    Recompute,
    /// Store the state per iteration in scratch memory: O(T) work.
    Tape,
    /// Recompute, then the tape for each loop whose rerun the backward still needs and whose trip
    /// count the host computes (the default).
    Auto,
}

/// Options of [`crate::Session::generate`].
#[derive(Clone, Debug, Default)]
pub struct GenerateOptions {
    pub(crate) backend: Option<String>,
    pub(crate) dims_json: Option<String>,
    pub(crate) launch_json: Option<String>,
    pub(crate) loops: Option<Loops>,
}

impl GenerateOptions {
    pub fn new() -> GenerateOptions {
        GenerateOptions::default()
    }

    /// "ad" (the default): the compiler's reverse mode.
    pub fn backend(mut self, backend: &str) -> Self {
        self.backend = Some(backend.to_string());
        self
    }

    /// Dims to trace the stub with, e.g. `{"M":4,"N":64}`, or a JSON list of them (default: the
    /// file's SWEEP).
    pub fn dims(mut self, json: &str) -> Self {
        self.dims_json = Some(json.to_string());
        self
    }

    /// A trace record (docs/reports.md) used instead of running the worker.
    pub fn launch(mut self, json: &str) -> Self {
        self.launch_json = Some(json.to_string());
        self
    }

    pub fn loops(mut self, loops: Loops) -> Self {
        self.loops = Some(loops);
        self
    }
}

/// Options of [`crate::Session::verify`]: on the CPU interpreter in float64 or on the GPU.
#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    pub(crate) cpu: bool,
    pub(crate) dims_json: Option<String>,
    pub(crate) dtypes: Option<String>,
    pub(crate) max_elements: i64,
    pub(crate) seed: u32,
}

impl VerifyOptions {
    /// Verification on the CPU interpreter in float64 against finite differences.
    pub fn cpu() -> VerifyOptions {
        VerifyOptions { cpu: true, ..VerifyOptions::default() }
    }

    /// Verification on the GPU through the worker.
    pub fn gpu() -> VerifyOptions {
        VerifyOptions::default()
    }

    /// A JSON list of dims to check (default: the file's SWEEP).
    pub fn dims(mut self, json: &str) -> Self {
        self.dims_json = Some(json.to_string());
        self
    }

    /// GPU: comma-separated torch dtype names (default: the file's DTYPES, else "float32,float16").
    pub fn dtypes(mut self, dtypes: &str) -> Self {
        self.dtypes = Some(dtypes.to_string());
        self
    }

    /// CPU: skip dims whose tensors exceed this many elements (default 1 << 20).
    pub fn max_elements(mut self, n: i64) -> Self {
        self.max_elements = n;
        self
    }

    pub fn seed(mut self, seed: u32) -> Self {
        self.seed = seed;
        self
    }
}

/// Options of [`crate::Session::bench`].
#[derive(Clone, Debug, Default)]
pub struct BenchOptions {
    pub(crate) dims_json: Option<String>,
    pub(crate) dtypes: Option<String>,
    pub(crate) reps: i32,
}

impl BenchOptions {
    pub fn new() -> BenchOptions {
        BenchOptions::default()
    }

    pub fn dims(mut self, json: &str) -> Self {
        self.dims_json = Some(json.to_string());
        self
    }

    pub fn dtypes(mut self, dtypes: &str) -> Self {
        self.dtypes = Some(dtypes.to_string());
        self
    }

    /// The time budget of each measurement in ms (default 100).
    pub fn reps(mut self, ms: i32) -> Self {
        self.reps = ms;
        self
    }
}

/// Options of [`crate::Session::retrieve`] and [`crate::dataset_list`] (docs/retrieval.md).
#[derive(Clone, Debug, Default)]
pub struct RetrieveOptions {
    pub(crate) topk: i32,
    pub(crate) min_sim: f64,
    pub(crate) exclude: Vec<String>,
    pub(crate) dataset_dir: Option<PathBuf>,
    pub(crate) cache_dir: Option<PathBuf>,
}

impl RetrieveOptions {
    pub fn new() -> RetrieveOptions {
        RetrieveOptions::default()
    }

    /// The number of results (default 4).
    pub fn topk(mut self, k: i32) -> Self {
        self.topk = k;
        self
    }

    /// Results less similar are left out (default 0: none is).
    pub fn min_sim(mut self, similarity: f64) -> Self {
        self.min_sim = similarity;
        self
    }

    /// Entries whose path contains `substring` are left out; may be given several times.
    pub fn exclude(mut self, substring: &str) -> Self {
        self.exclude.push(substring.to_string());
        self
    }

    /// The dataset directory (default $TAD_DATASET, else tad's own dataset/).
    pub fn dataset_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dataset_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Where the index and the generated backwards are kept (default <dataset>/.cache).
    pub fn cache_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cache_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    pub(crate) fn to_c(&self, strings: &mut CStrings) -> Result<sys::tad_retrieve_options> {
        let exclude = self.exclude.join("\n");
        let exclude = if self.exclude.is_empty() { None } else { Some(exclude.as_bytes()) };
        Ok(sys::tad_retrieve_options {
            topk: self.topk,
            min_sim: self.min_sim,
            exclude: strings.add(exclude, "exclude")?,
            dataset_dir: strings.add(self.dataset_dir.as_ref().map(|p| p.as_os_str().as_bytes()), "dataset_dir")?,
            cache_dir: strings.add(self.cache_dir.as_ref().map(|p| p.as_os_str().as_bytes()), "cache_dir")?,
            ..sys::tad_retrieve_options::default()
        })
    }
}

/// A C string for an argument; a NUL byte inside is TAD_ERR_INVALID_ARGUMENT.
pub(crate) fn c_string(bytes: &[u8], argument: &str) -> Result<CString> {
    CString::new(bytes).map_err(|_| Error::new(Status::InvalidArgument, format!("{} contains a NUL byte", argument)))
}

pub(crate) fn c_path(path: &Path, argument: &str) -> Result<CString> {
    c_string(path.as_os_str().as_bytes(), argument)
}

/// Optional C strings, kept alive while the C struct that points at them is used.
#[derive(Default)]
pub(crate) struct CStrings(Vec<CString>);

impl CStrings {
    pub(crate) fn add(&mut self, value: Option<&[u8]>, argument: &str) -> Result<*const c_char> {
        match value {
            None => Ok(std::ptr::null()),
            Some(bytes) => {
                // The CString's heap buffer does not move when the Vec grows.
                self.0.push(c_string(bytes, argument)?);
                Ok(self.0.last().unwrap().as_ptr())
            }
        }
    }
}

fn seconds(limit: Option<Duration>) -> f64 {
    limit.map_or(0.0, |d| d.as_secs_f64())
}

impl SessionOptions {
    pub(crate) fn to_c(&self, strings: &mut CStrings) -> Result<sys::tad_session_options> {
        let work_dir = self.work_dir.as_ref().map(|p| p.as_os_str().as_bytes());
        Ok(sys::tad_session_options {
            work_dir: strings.add(work_dir, "work_dir")?,
            python: strings.add(self.python.as_ref().map(|p| p.as_bytes()), "python")?,
            device_index: self.device_index,
            worker_timeout_s: seconds(self.worker_timeout),
            startup_timeout_s: seconds(self.startup_timeout),
            ..sys::tad_session_options::default()
        })
    }
}

impl GenerateOptions {
    pub(crate) fn to_c(&self, strings: &mut CStrings) -> Result<sys::tad_generate_options> {
        let loops = self.loops.map(|l| match l {
            Loops::Recompute => "recompute",
            Loops::Tape => "tape",
            Loops::Auto => "auto",
        });
        Ok(sys::tad_generate_options {
            backend: strings.add(self.backend.as_ref().map(|s| s.as_bytes()), "backend")?,
            dims_json: strings.add(self.dims_json.as_ref().map(|s| s.as_bytes()), "dims")?,
            launch_json: strings.add(self.launch_json.as_ref().map(|s| s.as_bytes()), "launch")?,
            loops: strings.add(loops.map(str::as_bytes), "loops")?,
            ..sys::tad_generate_options::default()
        })
    }
}

impl VerifyOptions {
    pub(crate) fn to_c(&self, strings: &mut CStrings) -> Result<sys::tad_verify_options> {
        Ok(sys::tad_verify_options {
            cpu: self.cpu as i32,
            dims_json: strings.add(self.dims_json.as_ref().map(|s| s.as_bytes()), "dims")?,
            dtypes: strings.add(self.dtypes.as_ref().map(|s| s.as_bytes()), "dtypes")?,
            max_elements: self.max_elements,
            seed: self.seed,
            ..sys::tad_verify_options::default()
        })
    }
}

impl BenchOptions {
    pub(crate) fn to_c(&self, strings: &mut CStrings) -> Result<sys::tad_bench_options> {
        Ok(sys::tad_bench_options {
            dims_json: strings.add(self.dims_json.as_ref().map(|s| s.as_bytes()), "dims")?,
            dtypes: strings.add(self.dtypes.as_ref().map(|s| s.as_bytes()), "dtypes")?,
            reps: self.reps,
            ..sys::tad_bench_options::default()
        })
    }
}
