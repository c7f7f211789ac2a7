//! `Session`: one forward file, its candidates and their reports, kept in a work directory.
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int};
use std::path::Path;
use std::ptr::{self, NonNull};

use tad_sys as sys;

use crate::error::{check, Error, Result};
use crate::options::{
    c_path, c_string, BenchOptions, CStrings, GenerateOptions, RetrieveOptions, SessionOptions, VerifyOptions,
};
use crate::progress::{trampoline, ProgressState};
use crate::report::{BenchReport, SnapshotInfo, VerifyReport};

/// A tad session. Freed (and its worker stopped) on drop.
///
/// tad.h: "A session is used by one thread at a time; distinct sessions are independent." So a
/// `Session` is `Send` (it may move to another thread) but not `Sync` (it cannot be shared), and
/// every call takes `&mut self`.
pub struct Session {
    raw: NonNull<sys::tad_session>,
    /// Box::into_raw of the progress state, or null; libtad holds the pointer as its payload.
    progress: *mut ProgressState,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

// SAFETY: libtad allows a session to be used from any thread, one at a time; the progress closure
// is Send, and &mut self on every call gives the one-at-a-time rule.
unsafe impl Send for Session {}

/// A string returned through `char **out`: freed with tad_string_free.
struct OutString(*mut c_char);

impl OutString {
    fn take(&mut self) -> Option<String> {
        if self.0.is_null() {
            return None;
        }
        let text = unsafe { std::ffi::CStr::from_ptr(self.0) }.to_string_lossy().into_owned();
        unsafe { sys::tad_string_free(self.0) };
        self.0 = ptr::null_mut();
        Some(text)
    }
}

impl Drop for OutString {
    fn drop(&mut self) {
        unsafe { sys::tad_string_free(self.0) };
    }
}

impl Session {
    /// Opens (creating if needed) the session directory.
    pub fn new(options: SessionOptions) -> Result<Session> {
        let mut strings = CStrings::default();
        let mut c = options.to_c(&mut strings)?;
        let progress = match options.progress {
            Some(callback) => Box::into_raw(Box::new(ProgressState::new(callback))),
            None => ptr::null_mut(),
        };
        if !progress.is_null() {
            c.progress = Some(trampoline);
            c.progress_payload = progress as *mut _;
        }
        let mut raw = ptr::null_mut();
        let status = unsafe { sys::tad_session_new(&c, &mut raw) };
        match (check(status), NonNull::new(raw)) {
            (Ok(()), Some(raw)) => Ok(Session { raw, progress, _not_sync: PhantomData }),
            (result, _) => {
                if !progress.is_null() {
                    drop(unsafe { Box::from_raw(progress) });
                }
                Err(result.err().unwrap_or_else(|| Error::last(sys::TAD_ERR_INTERNAL)))
            }
        }
    }

    /// Runs one C call: a panic its progress callback caught resumes here, after the call.
    fn call(&mut self, f: impl FnOnce(*mut sys::tad_session) -> c_int) -> c_int {
        let status = f(self.raw.as_ptr());
        if !self.progress.is_null() {
            if let Some(payload) = unsafe { (*self.progress).take_panic() } {
                std::panic::resume_unwind(payload);
            }
        }
        status
    }

    /// A call returning a string through `char **out`; `report` keeps it on failure (verify).
    fn call_out(
        &mut self,
        report: bool,
        f: impl FnOnce(*mut sys::tad_session, *mut *mut c_char) -> c_int,
    ) -> Result<String> {
        let mut out = OutString(ptr::null_mut());
        let status = self.call(|raw| f(raw, &mut out.0));
        match check(status) {
            Ok(()) => Ok(out.take().unwrap_or_default()),
            Err(e) if report => Err(e.with_report(out.take())),
            Err(e) => Err(e),
        }
    }

    /// Loads the forward file at `path`: parses it and finds the kernels and the stub.
    pub fn load_forward(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref(), "path")?;
        check(self.call(|s| unsafe { sys::tad_load_forward(s, path.as_ptr(), ptr::null()) }))
    }

    /// Loads `source` as the forward file; `path` names it in diagnostics and is where the worker
    /// imports it from (the text is written to the session directory when `path` does not exist).
    pub fn load_forward_source(&mut self, path: impl AsRef<Path>, source: &str) -> Result<()> {
        let path = c_path(path.as_ref(), "path")?;
        let source = c_string(source.as_bytes(), "source")?;
        check(self.call(|s| unsafe { sys::tad_load_forward(s, path.as_ptr(), source.as_ptr()) }))
    }

    /// Generates a backward; it becomes the current candidate. Returns its snapshot id.
    pub fn generate(&mut self, options: &GenerateOptions) -> Result<String> {
        let mut strings = CStrings::default();
        let c = options.to_c(&mut strings)?;
        self.call_out(false, |s, out| unsafe { sys::tad_generate(s, &c, out) })
    }

    /// The generated Python source of snapshot `id` (None: the current candidate).
    pub fn candidate_source(&mut self, id: Option<&str>) -> Result<String> {
        let id = optional(id, "id")?;
        let id_ptr = id.as_ref().map_or(ptr::null(), |c| c.as_ptr());
        self.call_out(false, |s, out| unsafe { sys::tad_candidate_source(s, id_ptr, out) })
    }

    /// How the backward of snapshot `id` (None: the current candidate) writes each gradient.
    pub fn candidate_explain(&mut self, id: Option<&str>) -> Result<String> {
        let id = optional(id, "id")?;
        let id_ptr = id.as_ref().map_or(ptr::null(), |c| c.as_ptr());
        self.call_out(false, |s, out| unsafe { sys::tad_candidate_explain(s, id_ptr, out) })
    }

    /// Verifies the current candidate. A gradient that disagrees is an error of status
    /// [`crate::Status::Mismatch`] carrying the report ([`Error::verify_report`]).
    pub fn verify(&mut self, options: &VerifyOptions) -> Result<VerifyReport> {
        let mut strings = CStrings::default();
        let c = options.to_c(&mut strings)?;
        let text = self.call_out(true, |s, out| unsafe { sys::tad_verify(s, &c, out) })?;
        VerifyReport::parse(&text)
    }

    /// Benchmarks the current candidate on the GPU (it must have passed verification).
    pub fn bench(&mut self, options: &BenchOptions) -> Result<BenchReport> {
        let mut strings = CStrings::default();
        let c = options.to_c(&mut strings)?;
        let text = self.call_out(false, |s, out| unsafe { sys::tad_bench(s, &c, out) })?;
        BenchReport::parse(&text)
    }

    /// Stores the current candidate with its reports as a new snapshot; returns its id.
    pub fn snapshot(&mut self, label: Option<&str>) -> Result<String> {
        let label = optional(label, "label")?;
        let label_ptr = label.as_ref().map_or(ptr::null(), |c| c.as_ptr());
        self.call_out(false, |s, out| unsafe { sys::tad_snapshot(s, label_ptr, out) })
    }

    /// Makes snapshot `id` the current candidate again.
    pub fn rollback(&mut self, id: &str) -> Result<()> {
        let id = c_string(id.as_bytes(), "id")?;
        check(self.call(|s| unsafe { sys::tad_rollback(s, id.as_ptr()) }))
    }

    /// The dataset entries closest to the loaded forward, as the JSON of docs/reports.md ("Retrieve
    /// report"; [`crate::json::parse`] reads it).
    pub fn retrieve(&mut self, options: &RetrieveOptions) -> Result<String> {
        let mut strings = CStrings::default();
        let c = options.to_c(&mut strings)?;
        self.call_out(false, |s, out| unsafe { sys::tad_retrieve(s, &c, out) })
    }

    /// The session's snapshots, oldest first.
    pub fn snapshots(&mut self) -> Result<Vec<SnapshotInfo>> {
        let text = self.call_out(false, |s, out| unsafe { sys::tad_snapshot_list(s, out) })?;
        SnapshotInfo::parse_list(&text)
    }
}

fn optional(value: Option<&str>, argument: &str) -> Result<Option<std::ffi::CString>> {
    value.map(|v| c_string(v.as_bytes(), argument)).transpose()
}

impl Drop for Session {
    fn drop(&mut self) {
        unsafe { sys::tad_session_free(self.raw.as_ptr()) };
        if !self.progress.is_null() {
            // After tad_session_free: libtad no longer holds the payload.
            drop(unsafe { Box::from_raw(self.progress) });
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("raw", &self.raw).finish()
    }
}
