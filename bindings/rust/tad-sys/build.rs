//! Finds libtad for the linker: $TAD_LIB_DIR (a directory holding libtad.so, e.g. a CMake build
//! directory) or else the `pkg-config` program's `tad` package (an installed libtad). The directory
//! goes to dependents as DEP_TAD_LIB_DIR (this package `links = "tad"`), because a library's
//! `rustc-link-arg` does not reach the binaries built on it: their build scripts emit the rpath.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn from_env() -> Option<PathBuf> {
    let dir = env::var_os("TAD_LIB_DIR")?;
    if dir.is_empty() {
        return None;
    }
    let dir = PathBuf::from(dir);
    if !dir.join("libtad.so").exists() {
        panic!("TAD_LIB_DIR={} holds no libtad.so", dir.display());
    }
    Some(dir)
}

fn from_pkg_config() -> Option<PathBuf> {
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = Command::new(program).args(["--variable=libdir", "tad"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = String::from_utf8(out.stdout).ok()?;
    let dir = dir.trim();
    if dir.is_empty() {
        return None;
    }
    // tad.pc computes its prefix from its own location: canonicalize "<pcdir>/../../lib".
    Some(Path::new(dir).canonicalize().unwrap_or_else(|_| PathBuf::from(dir)))
}

fn main() {
    println!("cargo:rerun-if-env-changed=TAD_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG");
    let dir = match from_env().or_else(from_pkg_config) {
        Some(dir) => dir,
        None => panic!(
            "libtad not found: set TAD_LIB_DIR to the directory holding libtad.so (e.g. the CMake build \
             directory), or install libtad where `pkg-config --variable=libdir tad` finds it"
        ),
    };
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=tad");
    println!("cargo:lib_dir={}", dir.display());
    // This crate's own tests run against the same library.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}
