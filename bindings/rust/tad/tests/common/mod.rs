//! Shared by the integration tests: temporary session directories, the worker's interpreter and
//! the repository's example files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("tad-rust-{}-{}-{}", name, std::process::id(), n));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The worker's interpreter: $TAD_TEST_PYTHON, $TAD_PYTHON, else /usr/bin/python3 (Debian's, with
/// CPU torch).
pub fn python() -> String {
    for var in ["TAD_TEST_PYTHON", "TAD_PYTHON"] {
        if let Ok(p) = std::env::var(var) {
            if !p.is_empty() {
                return p;
            }
        }
    }
    "/usr/bin/python3".to_string()
}

/// Whether the worker can run (its interpreter imports torch); prints a visible [SKIP] otherwise.
pub fn have_torch(test: &str) -> bool {
    let ok = Command::new(python()).args(["-c", "import torch"]).output().map_or(false, |o| o.status.success());
    if !ok {
        println!("[SKIP] {}: {} cannot import torch", test, python());
    }
    ok
}

/// A file of the repository (examples/..., ...): $TAD_SOURCE_DIR or this crate's checkout.
pub fn repo_file(relative: &str) -> PathBuf {
    let root = std::env::var_os("TAD_SOURCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.."));
    root.join(relative)
}

pub fn session(dir: &TempDir) -> tad::Session {
    tad::Session::new(tad::SessionOptions::new().work_dir(dir.path()).python(python())).unwrap()
}
