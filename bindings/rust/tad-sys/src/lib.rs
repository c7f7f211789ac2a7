//! Raw declarations of libtad's C ABI, written by hand from `include/tad.h` (ABI version 2, libtad
//! 0.2). Every item keeps its C name. `tests/header.rs` parses the header and checks that the
//! functions, structs, status codes and version constants here match it.
//!
//! The header's conventions hold here as they are: every function returns a `tad_status` code,
//! strings returned through `char **out` are freed with [`tad_string_free`], and a session is used
//! by one thread at a time. The `tad` crate is the safe API over these.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_double, c_int, c_longlong, c_uint, c_ulonglong, c_void};

pub const TAD_VERSION_MAJOR: c_int = 0;
pub const TAD_VERSION_MINOR: c_int = 2;
pub const TAD_VERSION_PATCH: c_int = 0;

/// `enum tad_status`: an `int` at the ABI.
pub type tad_status = c_int;
pub const TAD_OK: tad_status = 0;
pub const TAD_ERR_INVALID_ARGUMENT: tad_status = -1;
pub const TAD_ERR_IO: tad_status = -2;
pub const TAD_ERR_SYNTAX: tad_status = -3;
pub const TAD_ERR_UNSUPPORTED: tad_status = -4;
pub const TAD_ERR_NO_KERNEL: tad_status = -5;
pub const TAD_ERR_WORKER: tad_status = -6;
pub const TAD_ERR_TIMEOUT: tad_status = -7;
pub const TAD_ERR_MISMATCH: tad_status = -8;
pub const TAD_ERR_NOT_FOUND: tad_status = -9;
pub const TAD_ERR_STATE: tad_status = -10;
pub const TAD_ERR_CANCELLED: tad_status = -11;
pub const TAD_ERR_NO_GPU: tad_status = -12;
pub const TAD_ERR_INTERNAL: tad_status = -99;

/// Opaque session handle.
#[repr(C)]
pub struct tad_session {
    _private: [u8; 0],
}

pub type tad_progress_fn = Option<
    unsafe extern "C" fn(
        stage: *const c_char,
        message: *const c_char,
        fraction: c_double,
        payload: *mut c_void,
    ) -> c_int,
>;

pub const TAD_SESSION_OPTIONS_VERSION: c_uint = 2;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_session_options {
    pub version: c_uint,
    pub work_dir: *const c_char,
    pub python: *const c_char,
    pub device_index: c_int,
    pub worker_timeout_s: c_double,
    pub startup_timeout_s: c_double,
    pub progress: tad_progress_fn,
    pub progress_payload: *mut c_void,
    pub worker_memory_mb: c_longlong,
}

pub const TAD_GENERATE_OPTIONS_VERSION: c_uint = 3;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_generate_options {
    pub version: c_uint,
    pub backend: *const c_char,
    pub dims_json: *const c_char,
    pub launch_json: *const c_char,
    pub loops: *const c_char,
    // Since version 3: the LLM optimizer (backend "llm").
    pub provider: *const c_char,
    pub model: *const c_char,
    pub base_url: *const c_char,
    pub api_key_env: *const c_char,
    pub max_iterations: c_int,
    pub parallel: c_int,
    pub temperature: c_double,
    pub reasoning_effort: *const c_char,
    pub wall_clock_s: c_double,
    pub max_tokens: c_longlong,
    pub max_cost_usd: c_double,
    pub usd_per_mtok_input: c_double,
    pub usd_per_mtok_output: c_double,
    pub max_output_tokens: c_longlong,
    pub request_timeout_s: c_double,
    pub max_retries: c_int,
    pub topk: c_int,
}

pub const TAD_VERIFY_OPTIONS_VERSION: c_uint = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_verify_options {
    pub version: c_uint,
    pub cpu: c_int,
    pub dims_json: *const c_char,
    pub dtypes: *const c_char,
    pub max_elements: c_longlong,
    pub seed: c_uint,
}

pub const TAD_BENCH_OPTIONS_VERSION: c_uint = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_bench_options {
    pub version: c_uint,
    pub dims_json: *const c_char,
    pub dtypes: *const c_char,
    pub reps: c_int,
}

pub const TAD_RETRIEVE_OPTIONS_VERSION: c_uint = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_retrieve_options {
    pub version: c_uint,
    pub topk: c_int,
    pub min_sim: c_double,
    pub exclude: *const c_char,
    pub dataset_dir: *const c_char,
    pub cache_dir: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_buffer {
    pub data: *mut c_double,
    pub size: c_longlong,
}

// ---- Generated backwards without Python (docs/aot.md)

pub const TAD_EXPORT_OPTIONS_VERSION: c_uint = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_export_options {
    pub version: c_uint,
    pub out_dir: *const c_char,
    pub dims_json: *const c_char,
    pub dtypes: *const c_char,
}

/// Opaque handle of loaded kernels.
#[repr(C)]
pub struct tad_kernels {
    _private: [u8; 0],
}

pub const TAD_KERNELS_OPTIONS_VERSION: c_uint = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_kernels_options {
    pub version: c_uint,
    pub libcuda: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_tensor_arg {
    pub name: *const c_char,
    pub data: c_ulonglong,
    pub grad: c_ulonglong,
    pub saved: c_ulonglong,
    pub dtype: *const c_char,
    pub ndim: c_int,
    pub shape: *const c_longlong,
    pub strides: *const c_longlong,
}

pub const TAD_VALUE_INT: c_int = 0;
pub const TAD_VALUE_FLOAT: c_int = 1;
pub const TAD_VALUE_BOOL: c_int = 2;
pub const TAD_VALUE_LITERAL: c_int = 3;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_value_arg {
    pub name: *const c_char,
    pub kind: c_int,
    pub integer: c_longlong,
    pub real: c_double,
    pub literal: *const c_char,
}

pub const TAD_LAUNCH_OPTIONS_VERSION: c_uint = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tad_launch_options {
    pub version: c_uint,
    pub stream: *mut c_void,
    pub kernel: *const c_char,
    pub grid_x: c_longlong,
    pub grid_y: c_longlong,
    pub grid_z: c_longlong,
    pub num_warps: c_int,
    pub num_stages: c_int,
    pub tensors: *const tad_tensor_arg,
    pub num_tensors: c_int,
    pub values: *const tad_value_arg,
    pub num_values: c_int,
}

impl Default for tad_export_options {
    fn default() -> Self {
        tad_export_options {
            version: TAD_EXPORT_OPTIONS_VERSION,
            out_dir: std::ptr::null(),
            dims_json: std::ptr::null(),
            dtypes: std::ptr::null(),
        }
    }
}

impl Default for tad_kernels_options {
    fn default() -> Self {
        tad_kernels_options { version: TAD_KERNELS_OPTIONS_VERSION, libcuda: std::ptr::null() }
    }
}

impl Default for tad_launch_options {
    fn default() -> Self {
        tad_launch_options {
            version: TAD_LAUNCH_OPTIONS_VERSION,
            stream: std::ptr::null_mut(),
            kernel: std::ptr::null(),
            grid_x: 0,
            grid_y: 0,
            grid_z: 0,
            num_warps: 0,
            num_stages: 0,
            tensors: std::ptr::null(),
            num_tensors: 0,
            values: std::ptr::null(),
            num_values: 0,
        }
    }
}

/// The `TAD_*_OPTIONS_INIT` macros: the version this declaration was written for, every other
/// field zero / NULL ("default").
impl Default for tad_session_options {
    fn default() -> Self {
        tad_session_options {
            version: TAD_SESSION_OPTIONS_VERSION,
            work_dir: std::ptr::null(),
            python: std::ptr::null(),
            device_index: 0,
            worker_timeout_s: 0.0,
            startup_timeout_s: 0.0,
            progress: None,
            progress_payload: std::ptr::null_mut(),
            worker_memory_mb: 0,
        }
    }
}

impl Default for tad_generate_options {
    fn default() -> Self {
        tad_generate_options {
            version: TAD_GENERATE_OPTIONS_VERSION,
            backend: std::ptr::null(),
            dims_json: std::ptr::null(),
            launch_json: std::ptr::null(),
            loops: std::ptr::null(),
            provider: std::ptr::null(),
            model: std::ptr::null(),
            base_url: std::ptr::null(),
            api_key_env: std::ptr::null(),
            max_iterations: 0,
            parallel: 0,
            temperature: 0.0,
            reasoning_effort: std::ptr::null(),
            wall_clock_s: 0.0,
            max_tokens: 0,
            max_cost_usd: 0.0,
            usd_per_mtok_input: 0.0,
            usd_per_mtok_output: 0.0,
            max_output_tokens: 0,
            request_timeout_s: 0.0,
            max_retries: 0,
            topk: 0,
        }
    }
}

impl Default for tad_verify_options {
    fn default() -> Self {
        tad_verify_options {
            version: TAD_VERIFY_OPTIONS_VERSION,
            cpu: 0,
            dims_json: std::ptr::null(),
            dtypes: std::ptr::null(),
            max_elements: 0,
            seed: 0,
        }
    }
}

impl Default for tad_bench_options {
    fn default() -> Self {
        tad_bench_options {
            version: TAD_BENCH_OPTIONS_VERSION,
            dims_json: std::ptr::null(),
            dtypes: std::ptr::null(),
            reps: 0,
        }
    }
}

impl Default for tad_retrieve_options {
    fn default() -> Self {
        tad_retrieve_options {
            version: TAD_RETRIEVE_OPTIONS_VERSION,
            topk: 0,
            min_sim: 0.0,
            exclude: std::ptr::null(),
            dataset_dir: std::ptr::null(),
            cache_dir: std::ptr::null(),
        }
    }
}

extern "C" {
    pub fn tad_version() -> *const c_char;
    pub fn tad_error_last() -> *const c_char;
    pub fn tad_status_name(status: c_int) -> *const c_char;
    pub fn tad_string_free(s: *mut c_char);

    pub fn tad_session_options_init(opts: *mut tad_session_options, version: c_uint) -> c_int;
    pub fn tad_session_new(opts: *const tad_session_options, out: *mut *mut tad_session) -> c_int;
    pub fn tad_session_free(session: *mut tad_session);
    pub fn tad_kill_workers();
    pub fn tad_load_forward(session: *mut tad_session, path: *const c_char, source: *const c_char) -> c_int;

    pub fn tad_generate_options_init(opts: *mut tad_generate_options, version: c_uint) -> c_int;
    pub fn tad_generate(
        session: *mut tad_session,
        opts: *const tad_generate_options,
        out_id: *mut *mut c_char,
    ) -> c_int;
    pub fn tad_optimize_report(
        session: *mut tad_session,
        format: *const c_char,
        out_report: *mut *mut c_char,
    ) -> c_int;
    pub fn tad_candidate_source(session: *mut tad_session, id: *const c_char, out_source: *mut *mut c_char) -> c_int;
    pub fn tad_candidate_explain(session: *mut tad_session, id: *const c_char, out_text: *mut *mut c_char) -> c_int;

    pub fn tad_verify_options_init(opts: *mut tad_verify_options, version: c_uint) -> c_int;
    pub fn tad_verify(
        session: *mut tad_session,
        opts: *const tad_verify_options,
        out_report: *mut *mut c_char,
    ) -> c_int;

    pub fn tad_bench_options_init(opts: *mut tad_bench_options, version: c_uint) -> c_int;
    pub fn tad_bench(session: *mut tad_session, opts: *const tad_bench_options, out_report: *mut *mut c_char) -> c_int;

    pub fn tad_snapshot(session: *mut tad_session, label: *const c_char, out_id: *mut *mut c_char) -> c_int;
    pub fn tad_rollback(session: *mut tad_session, id: *const c_char) -> c_int;
    pub fn tad_snapshot_list(session: *mut tad_session, out_json: *mut *mut c_char) -> c_int;

    pub fn tad_report_passed(report_json: *const c_char, passed: *mut c_int) -> c_int;
    pub fn tad_report_number(report_json: *const c_char, key: *const c_char, value: *mut c_double) -> c_int;

    pub fn tad_retrieve_options_init(opts: *mut tad_retrieve_options, version: c_uint) -> c_int;
    pub fn tad_retrieve(
        session: *mut tad_session,
        opts: *const tad_retrieve_options,
        out_report: *mut *mut c_char,
    ) -> c_int;
    pub fn tad_dataset_list(opts: *const tad_retrieve_options, out_json: *mut *mut c_char) -> c_int;
    pub fn tad_dataset_import(
        source_dir: *const c_char,
        dataset_dir: *const c_char,
        out_report: *mut *mut c_char,
    ) -> c_int;

    pub fn tad_interpret(
        source: *const c_char,
        path: *const c_char,
        launch_json: *const c_char,
        buffers: *mut tad_buffer,
        num_buffers: c_int,
    ) -> c_int;

    pub fn tad_export_options_init(opts: *mut tad_export_options, version: c_uint) -> c_int;
    pub fn tad_export(
        session: *mut tad_session,
        opts: *const tad_export_options,
        out_report: *mut *mut c_char,
    ) -> c_int;
    pub fn tad_kernels_options_init(opts: *mut tad_kernels_options, version: c_uint) -> c_int;
    pub fn tad_kernels_load(dir: *const c_char, opts: *const tad_kernels_options, out: *mut *mut tad_kernels) -> c_int;
    pub fn tad_kernels_free(kernels: *mut tad_kernels);
    pub fn tad_kernels_manifest(kernels: *mut tad_kernels, out_json: *mut *mut c_char) -> c_int;
    pub fn tad_launch_options_init(opts: *mut tad_launch_options, version: c_uint) -> c_int;
    pub fn tad_launch_backward(kernels: *mut tad_kernels, opts: *const tad_launch_options) -> c_int;
}
