//! Errors: a failed call's status with the library's message (tad_error_last()), copied at once
//! because the next failing call on the thread overwrites it.
use std::ffi::CStr;
use std::fmt;

use tad_sys as sys;

use crate::report::VerifyReport;

/// The `tad_status` of a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    InvalidArgument,
    Io,
    Syntax,
    Unsupported,
    NoKernel,
    Worker,
    Timeout,
    Mismatch,
    NotFound,
    State,
    Cancelled,
    NoGpu,
    Internal,
    /// A code this binding does not know (a newer libtad).
    Unknown(i32),
}

const CODES: [(Status, i32); 13] = [
    (Status::InvalidArgument, sys::TAD_ERR_INVALID_ARGUMENT),
    (Status::Io, sys::TAD_ERR_IO),
    (Status::Syntax, sys::TAD_ERR_SYNTAX),
    (Status::Unsupported, sys::TAD_ERR_UNSUPPORTED),
    (Status::NoKernel, sys::TAD_ERR_NO_KERNEL),
    (Status::Worker, sys::TAD_ERR_WORKER),
    (Status::Timeout, sys::TAD_ERR_TIMEOUT),
    (Status::Mismatch, sys::TAD_ERR_MISMATCH),
    (Status::NotFound, sys::TAD_ERR_NOT_FOUND),
    (Status::State, sys::TAD_ERR_STATE),
    (Status::Cancelled, sys::TAD_ERR_CANCELLED),
    (Status::NoGpu, sys::TAD_ERR_NO_GPU),
    (Status::Internal, sys::TAD_ERR_INTERNAL),
];

impl Status {
    /// The status of a non-zero code.
    pub fn from_code(code: i32) -> Status {
        CODES.iter().find(|(_, c)| *c == code).map_or(Status::Unknown(code), |(s, _)| *s)
    }

    /// The `tad_status` value.
    pub fn code(self) -> i32 {
        match self {
            Status::Unknown(code) => code,
            known => CODES.iter().find(|(s, _)| *s == known).map(|(_, c)| *c).unwrap(),
        }
    }

    /// The library's name of the status, e.g. "TAD_ERR_SYNTAX".
    pub fn name(self) -> &'static str {
        // tad_status_name returns static storage.
        let name = unsafe { CStr::from_ptr(sys::tad_status_name(self.code())) };
        name.to_str().unwrap_or("TAD_UNKNOWN_STATUS")
    }
}

/// A failed tad call: its status, its message and, for a verification that disagreed
/// ([`Status::Mismatch`]), the report.
#[derive(Clone, Debug)]
pub struct Error {
    status: Status,
    message: String,
    report: Option<String>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into(), report: None }
    }

    /// The error of a call that returned `code`, with tad_error_last()'s message.
    pub(crate) fn last(code: i32) -> Error {
        let message = unsafe { CStr::from_ptr(sys::tad_error_last()) };
        Error::new(Status::from_code(code), message.to_string_lossy().into_owned())
    }

    pub(crate) fn with_report(mut self, report: Option<String>) -> Error {
        self.report = report;
        self
    }

    pub fn status(&self) -> Status {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON text the failed call returned with its status (the report of a failed verify).
    pub fn report_json(&self) -> Option<&str> {
        self.report.as_deref()
    }

    /// The report of a failed verify, parsed.
    pub fn verify_report(&self) -> Option<VerifyReport> {
        self.report.as_deref().and_then(|text| VerifyReport::parse(text).ok())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for TAD_OK, else the error with the thread's last message.
pub(crate) fn check(code: i32) -> Result<()> {
    if code == sys::TAD_OK {
        Ok(())
    } else {
        Err(Error::last(code))
    }
}
