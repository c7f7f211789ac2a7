//! The rpath of the tests and examples: tad-sys found libtad (TAD_LIB_DIR or pkg-config) and
//! passes its directory as DEP_TAD_LIB_DIR; a library's link arguments do not reach the binaries
//! built on it, so this crate emits them for its own.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TAD_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
}
