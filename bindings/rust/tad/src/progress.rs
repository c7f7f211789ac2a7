//! The progress callback at the FFI boundary. A Rust panic must not unwind through libtad's C
//! frames: the trampoline catches it, cancels the step (TAD_ERR_CANCELLED) and keeps the payload;
//! the session resumes the panic once the C call has returned.
use std::any::Any;
use std::ffi::CStr;
use std::os::raw::{c_char, c_double, c_int, c_void};
use std::panic::{self, AssertUnwindSafe};

use crate::options::ProgressFn;

/// One progress report of a long step.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// e.g. "trace", "generate", "verify", "bench".
    pub stage: &'a str,
    pub message: &'a str,
    /// In [0, 1]; None when unknown.
    pub fraction: Option<f64>,
}

/// What the C payload pointer points at: owned by the session, at a fixed address.
pub(crate) struct ProgressState {
    callback: ProgressFn,
    panic: Option<Box<dyn Any + Send + 'static>>,
}

impl ProgressState {
    pub(crate) fn new(callback: ProgressFn) -> ProgressState {
        ProgressState { callback, panic: None }
    }

    /// The payload of a panic caught during the last call, if any.
    pub(crate) fn take_panic(&mut self) -> Option<Box<dyn Any + Send + 'static>> {
        self.panic.take()
    }
}

fn lossy(text: *const c_char) -> String {
    if text.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }
}

/// The `tad_progress_fn` given to libtad; `payload` is the session's `ProgressState`.
pub(crate) unsafe extern "C" fn trampoline(
    stage: *const c_char,
    message: *const c_char,
    fraction: c_double,
    payload: *mut c_void,
) -> c_int {
    let state = &mut *(payload as *mut ProgressState);
    if state.panic.is_some() {
        return 1; // the step is being cancelled: do not call the panicked closure again
    }
    let (stage, message) = (lossy(stage), lossy(message));
    let progress =
        Progress { stage: &stage, message: &message, fraction: if fraction >= 0.0 { Some(fraction) } else { None } };
    let callback = &mut state.callback;
    match panic::catch_unwind(AssertUnwindSafe(|| callback(&progress))) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(payload) => {
            state.panic = Some(payload);
            1
        }
    }
}
