//! The exported LayerNorm and softmax backwards run from Rust, without Python (docs/aot.md): the
//! same program as examples/aot/backward.c, over the tad-sys declarations of tad.h.
//!
//!     aot_backward KERNELS_DIR CASE_DIR [CALLS]
//!
//! KERNELS_DIR is what `tad export` wrote, CASE_DIR one case of bench/aot_proof.py. The program owns
//! the CUDA context, stream and buffers (libcuda opened with dlopen, as libtad opens it), runs the
//! backward of the forward launch the case describes with tad_launch_backward, compares the
//! gradients byte for byte with the case's *.ref files, times CALLS launches, prints one JSON line,
//! and exits 0 when every gradient matches. Build: see Cargo.toml.
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::time::Instant;

use tad_sys::*;

extern "C" {
    fn dlopen(file: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

type Ptr = u64;

/// The driver entry points the program calls itself.
struct Cuda {
    init: extern "C" fn(u32) -> c_int,
    device_get: extern "C" fn(*mut c_int, c_int) -> c_int,
    primary_ctx_retain: extern "C" fn(*mut *mut c_void, c_int) -> c_int,
    ctx_set_current: extern "C" fn(*mut c_void) -> c_int,
    stream_create: extern "C" fn(*mut *mut c_void, u32) -> c_int,
    stream_synchronize: extern "C" fn(*mut c_void) -> c_int,
    mem_alloc: extern "C" fn(*mut Ptr, usize) -> c_int,
    memcpy_htod: extern "C" fn(Ptr, *const c_void, usize) -> c_int,
    memcpy_dtoh: extern "C" fn(*mut c_void, Ptr, usize) -> c_int,
}

fn die(what: &str) -> ! {
    eprintln!("aot_backward: {}", what);
    std::process::exit(2)
}

fn check(r: c_int, call: &str) {
    if r != 0 {
        die(&format!("{}: CUresult {}", call, r));
    }
}

fn check_tad(status: c_int, call: &str) {
    if status != TAD_OK {
        let message = unsafe { CStr::from_ptr(tad_error_last()) }.to_string_lossy().into_owned();
        die(&format!("{}: {}", call, message));
    }
}

impl Cuda {
    /// libcuda, or the library $TAD_LIBCUDA names (as libtad opens it: tests run this on a fake).
    fn open() -> Cuda {
        let path = std::env::var("TAD_LIBCUDA").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "libcuda.so.1".into());
        let c_path = CString::new(path.as_str()).unwrap();
        let lib = unsafe { dlopen(c_path.as_ptr(), 2) };
        if lib.is_null() {
            die(&format!("cannot open the CUDA driver {}", path));
        }
        let sym = |name: &str| -> *mut c_void {
            let c = CString::new(name).unwrap();
            let p = unsafe { dlsym(lib, c.as_ptr()) };
            if p.is_null() {
                die(&format!("the CUDA driver lacks {}", name));
            }
            p
        };
        unsafe {
            Cuda {
                init: std::mem::transmute(sym("cuInit")),
                device_get: std::mem::transmute(sym("cuDeviceGet")),
                primary_ctx_retain: std::mem::transmute(sym("cuDevicePrimaryCtxRetain")),
                ctx_set_current: std::mem::transmute(sym("cuCtxSetCurrent")),
                stream_create: std::mem::transmute(sym("cuStreamCreate")),
                stream_synchronize: std::mem::transmute(sym("cuStreamSynchronize")),
                mem_alloc: std::mem::transmute(sym("cuMemAlloc_v2")),
                memcpy_htod: std::mem::transmute(sym("cuMemcpyHtoD_v2")),
                memcpy_dtoh: std::mem::transmute(sym("cuMemcpyDtoH_v2")),
            }
        }
    }

    fn upload(&self, bytes: &[u8]) -> Ptr {
        let mut p: Ptr = 0;
        check((self.mem_alloc)(&mut p, bytes.len().max(1)), "cuMemAlloc_v2");
        check((self.memcpy_htod)(p, bytes.as_ptr() as *const c_void, bytes.len()), "cuMemcpyHtoD_v2");
        p
    }

    fn download(&self, p: Ptr, bytes: usize) -> Vec<u8> {
        let mut out = vec![0u8; bytes];
        check((self.memcpy_dtoh)(out.as_mut_ptr() as *mut c_void, p, bytes), "cuMemcpyDtoH_v2");
        out
    }
}

struct Case {
    dir: PathBuf,
    meta: HashMap<String, String>,
}

impl Case {
    fn read(dir: &Path) -> Case {
        let text = std::fs::read_to_string(dir.join("meta.txt")).unwrap_or_else(|e| die(&format!("meta.txt: {}", e)));
        let meta =
            text.lines().filter_map(|l| l.split_once(' ').map(|(k, v)| (k.to_string(), v.to_string()))).collect();
        Case { dir: dir.to_path_buf(), meta }
    }
    fn get(&self, key: &str) -> &str {
        self.meta.get(key).map(|s| s.as_str()).unwrap_or_else(|| die(&format!("meta.txt has no {}", key)))
    }
    fn int(&self, key: &str) -> i64 {
        self.get(key).parse().unwrap_or_else(|_| die(&format!("meta.txt: {} is no integer", key)))
    }
    fn file(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(name)).unwrap_or_else(|e| die(&format!("{}: {}", name, e)))
    }
}

/// A float element (float32, float16 or bfloat16) as f64.
fn element(bytes: &[u8], dtype: &str) -> f64 {
    match dtype {
        "float32" => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64,
        "bfloat16" => f32::from_bits((u16::from_le_bytes([bytes[0], bytes[1]]) as u32) << 16) as f64,
        _ => {
            let h = u16::from_le_bytes([bytes[0], bytes[1]]) as u32;
            let (sign, exp, man) = (if h & 0x8000 != 0 { -1.0 } else { 1.0 }, (h >> 10) & 0x1f, h & 0x3ff);
            match exp {
                0 => sign * man as f64 * 2f64.powi(-24),
                31 => sign * if man == 0 { f64::INFINITY } else { f64::NAN },
                _ => sign * (1.0 + man as f64 / 1024.0) * 2f64.powi(exp as i32 - 15),
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        die("usage: aot_backward KERNELS_DIR CASE_DIR [CALLS]");
    }
    let calls: usize = args.get(3).map(|c| c.parse().unwrap_or(1000)).unwrap_or(1000);
    let case = Case::read(Path::new(&args[2]));
    let dtype = case.get("dtype").to_string();
    let layernorm = case.get("example") == "layernorm";
    let (m, n) = (case.int("M"), case.int("N"));
    let size = if dtype == "float32" { 4 } else { 2 };

    let cuda = Cuda::open();
    let (mut device, mut ctx, mut stream) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    check((cuda.init)(0), "cuInit");
    check((cuda.device_get)(&mut device, 0), "cuDeviceGet");
    check((cuda.primary_ctx_retain)(&mut ctx, device), "cuDevicePrimaryCtxRetain");
    check((cuda.ctx_set_current)(ctx), "cuCtxSetCurrent");
    check((cuda.stream_create)(&mut stream, 0), "cuStreamCreate");
    let dir = CString::new(args[1].as_str()).unwrap();
    let mut kernels: *mut tad_kernels = std::ptr::null_mut();
    check_tad(unsafe { tad_kernels_load(dir.as_ptr(), std::ptr::null(), &mut kernels) }, "tad_kernels_load");

    let mn = (m * n) as usize * size;
    let zeros = |bytes: usize| cuda.upload(&vec![0u8; bytes]);
    let (x, y, dy, dx) = (
        cuda.upload(&case.file("x.bin")),
        cuda.upload(&case.file("y.bin")),
        cuda.upload(&case.file("dy.bin")),
        zeros(mn),
    );
    let (rows, row_strides, vec_shape, unit, m_shape) = ([m, n], [n, 1i64], [n], [1i64], [m]);
    let dtype_c = CString::new(dtype.as_str()).unwrap();
    let f32_c = CString::new("float32").unwrap();
    let name = |s: &str| CString::new(s).unwrap();
    let names: Vec<CString> =
        ["X", "Y", "W", "B", "Mean", "Rstd", "stride", "N", "eps", "BLOCK_SIZE", "stride_x", "stride_y", "n_cols"]
            .iter()
            .map(|s| name(s))
            .collect();
    let tensor = |i: usize, data: Ptr, grad: Ptr, dt: &CString, shape: &[i64], strides: &[i64]| tad_tensor_arg {
        name: names[i].as_ptr(),
        data,
        grad,
        saved: 0,
        dtype: dt.as_ptr(),
        ndim: shape.len() as c_int,
        shape: shape.as_ptr(),
        strides: strides.as_ptr(),
    };
    let int = |i: usize, v: i64| tad_value_arg {
        name: names[i].as_ptr(),
        kind: TAD_VALUE_INT,
        integer: v,
        real: 0.0,
        literal: std::ptr::null(),
    };
    // The forward launch, as the stub made it: every pointer argument with its gradient buffer,
    // every other argument, the grid and num_warps.
    let mut tensors =
        vec![tensor(0, x, dx, &dtype_c, &rows, &row_strides), tensor(1, y, dy, &dtype_c, &rows, &row_strides)];
    let mut values = Vec::new();
    let mut grads = vec![("dx", dx, (m * n) as usize)];
    if layernorm {
        let (dw, db) = (zeros(n as usize * size), zeros(n as usize * size));
        tensors.push(tensor(2, cuda.upload(&case.file("w.bin")), dw, &dtype_c, &vec_shape, &unit));
        tensors.push(tensor(3, cuda.upload(&case.file("b.bin")), db, &dtype_c, &vec_shape, &unit));
        tensors.push(tensor(4, cuda.upload(&case.file("mean.bin")), 0, &f32_c, &m_shape, &unit));
        tensors.push(tensor(5, cuda.upload(&case.file("rstd.bin")), 0, &f32_c, &m_shape, &unit));
        values.push(int(6, n));
        values.push(int(7, n));
        let eps: f64 = case.get("eps").parse().unwrap_or_else(|_| die("meta.txt: eps is no number"));
        values.push(tad_value_arg {
            name: names[8].as_ptr(),
            kind: TAD_VALUE_FLOAT,
            integer: 0,
            real: eps,
            literal: std::ptr::null(),
        });
        grads.push(("dw", dw, n as usize));
        grads.push(("db", db, n as usize));
    } else {
        values.extend([int(10, n), int(11, n), int(12, n)]);
    }
    values.push(int(9, case.int("block")));
    let opts = tad_launch_options {
        stream,
        grid_x: m,
        num_warps: case.int("num_warps") as c_int,
        tensors: tensors.as_ptr(),
        num_tensors: tensors.len() as c_int,
        values: values.as_ptr(),
        num_values: values.len() as c_int,
        ..Default::default()
    };

    check_tad(unsafe { tad_launch_backward(kernels, &opts) }, "tad_launch_backward");
    check((cuda.stream_synchronize)(stream), "cuStreamSynchronize");
    let (mut mismatches, mut max_abs) = (0usize, 0f64);
    for (g, ptr, count) in &grads {
        let got = cuda.download(*ptr, count * size);
        let (reference, module) = (case.file(&format!("{}.ref", g)), case.file(&format!("{}.mod", g)));
        for i in 0..*count {
            let at = i * size..(i + 1) * size;
            mismatches += (got[at.clone()] != reference[at.clone()]) as usize;
            let d = (element(&got[at.clone()], &dtype) - element(&module[at], &dtype)).abs();
            if d > max_abs || d.is_nan() {
                max_abs = d;
            }
        }
    }

    for _ in 0..50 {
        check_tad(unsafe { tad_launch_backward(kernels, &opts) }, "tad_launch_backward");
    }
    check((cuda.stream_synchronize)(stream), "cuStreamSynchronize");
    let start = Instant::now();
    for _ in 0..calls {
        check_tad(unsafe { tad_launch_backward(kernels, &opts) }, "tad_launch_backward");
    }
    let enqueued = start.elapsed().as_secs_f64() * 1e6 / calls as f64;
    check((cuda.stream_synchronize)(stream), "cuStreamSynchronize");
    let total = start.elapsed().as_secs_f64() * 1e6 / calls as f64;
    println!(
        "{{\"program\": \"rust\", \"case\": \"{}\", \"example\": \"{}\", \"dtype\": \"{}\", \"M\": {}, \"N\": {}, \
         \"mismatches\": {}, \"max_abs_vs_module\": {:.9e}, \"enqueue_us\": {:.3}, \"per_call_us\": {:.3}}}",
        case.dir.file_name().unwrap().to_string_lossy(),
        case.get("example"),
        dtype,
        m,
        n,
        mismatches,
        max_abs,
        enqueued,
        total
    );
    unsafe { tad_kernels_free(kernels) };
    std::process::exit(if mismatches == 0 { 0 } else { 1 });
}
