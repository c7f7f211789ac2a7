//! tad_interpret: one launch of a @triton.jit kernel on tad's CPU interpreter, in float64.
use std::convert::TryFrom;

use tad_sys as sys;

use crate::error::{check, Error, Result, Status};
use crate::options::c_string;

/// Runs one launch of a kernel defined in `source` (`path` names it in diagnostics).
/// `launch_json` is {"kernel": name, "grid": [x, y, z], "args": [...]} as docs/worker-protocol.md
/// describes, where a tensor argument's {"buffer": i} is `buffers[i]`. The kernel reads and
/// writes the buffers in place; on failure they are left as they were. Any thread may call it.
pub fn interpret(source: &str, path: &str, launch_json: &str, buffers: &mut [&mut [f64]]) -> Result<()> {
    let source = c_string(source.as_bytes(), "source")?;
    let path = c_string(path.as_bytes(), "path")?;
    let launch = c_string(launch_json.as_bytes(), "launch_json")?;
    let mut c_buffers =
        buffers.iter_mut().map(|b| sys::tad_buffer { data: b.as_mut_ptr(), size: b.len() as i64 }).collect::<Vec<_>>();
    let count = i32::try_from(c_buffers.len())
        .map_err(|_| Error::new(Status::InvalidArgument, "interpret: too many buffers"))?;
    check(unsafe { sys::tad_interpret(source.as_ptr(), path.as_ptr(), launch.as_ptr(), c_buffers.as_mut_ptr(), count) })
}
