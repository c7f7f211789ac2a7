//! The program's rpath: the directory tad-sys found libtad in (DEP_TAD_LIB_DIR), and $ORIGIN, so
//! that a copy placed next to libtad (a build directory carried to a GPU machine) finds it too.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TAD_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN");
}
