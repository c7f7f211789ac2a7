//! Checks the hand-written declarations of src/lib.rs against include/tad.h: the same functions
//! with the same parameter names and types, the same struct fields in the same order, the same
//! status codes and version constants. Both files are parsed as text (the header is plain C with
//! no macros in declarations but TAD_API), then the declarations are checked against the library
//! itself (status names, options defaults written into the Rust structs).
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::path::PathBuf;
use std::process::Command;

use tad_sys::*;

fn header_path() -> PathBuf {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("TAD_INCLUDE_DIR") {
        candidates.push(PathBuf::from(dir));
    }
    candidates.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../include"));
    if let Ok(out) = Command::new("pkg-config").args(["--variable=includedir", "tad"]).output() {
        if out.status.success() {
            candidates.push(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
        }
    }
    for dir in &candidates {
        if dir.join("tad.h").exists() {
            return dir.join("tad.h");
        }
    }
    panic!("tad.h not found in {:?}: set TAD_INCLUDE_DIR", candidates);
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e))
}

/// Removes /* */ and // comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.map_or(true, |l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b..].find("*/").expect("unterminated comment");
                rest = &rest[b + end + 2..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            (None, None) => {
                out.push_str(rest);
                return out;
            }
            (Some(_), None) => unreachable!(),
        }
    }
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits on commas outside parentheses and angle brackets.
fn split_top(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(s[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(s[start..].trim().to_string());
    parts.retain(|p| !p.is_empty());
    parts
}

/// A C declaration such as "const char **name" as (name, Rust type "*const *mut c_char").
fn c_decl(decl: &str) -> (String, String) {
    let spaced = decl.replace('*', " * ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let pointers = tokens.iter().filter(|t| **t == "*").count();
    let is_const = tokens.first() == Some(&"const");
    let words: Vec<&str> = tokens.iter().copied().filter(|t| *t != "*" && *t != "const").collect();
    let (base, name) = if words.len() > 1 && !matches!(words.join(" ").as_str(), "unsigned int" | "long long") {
        (words[..words.len() - 1].join(" "), words[words.len() - 1].to_string())
    } else {
        (words.join(" "), String::new())
    };
    let base = match base.as_str() {
        "int" => "c_int".to_string(),
        "unsigned int" => "c_uint".to_string(),
        "double" => "c_double".to_string(),
        "long long" => "c_longlong".to_string(),
        "unsigned long long" => "c_ulonglong".to_string(),
        "char" => "c_char".to_string(),
        "void" => "c_void".to_string(),
        other => other.to_string(),
    };
    let mut ty = base;
    for level in 0..pointers {
        let qualifier = if level == 0 && is_const { "*const " } else { "*mut " };
        ty = format!("{}{}", qualifier, ty);
    }
    (name, ty)
}

type Signature = (Vec<(String, String)>, String);

struct Api {
    functions: BTreeMap<String, Signature>,
    structs: BTreeMap<String, Vec<(String, String)>>,
    constants: BTreeMap<String, String>,
}

fn parse_header(text: &str) -> Api {
    let mut constants = BTreeMap::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() == 3 && words[0] == "#define" && words[2].parse::<i64>().is_ok() {
            constants.insert(words[1].to_string(), words[2].to_string());
        }
    }
    // Preprocessor lines go (with their continuations), then comments.
    let mut code = String::new();
    let mut continued = false;
    for line in strip_comments(text).lines() {
        let directive = continued || line.trim_start().starts_with('#');
        continued = directive && line.trim_end().ends_with('\\');
        if !directive {
            code.push_str(line);
            code.push('\n');
        }
    }
    let mut functions = BTreeMap::new();
    for statement in code.split(';').map(squash) {
        if let Some(decl) = statement.find("TAD_API ").map(|i| &statement[i + 8..]) {
            let open = decl.find('(').unwrap();
            let (name, ret) = c_decl(&decl[..open]);
            let params = &decl[open + 1..decl.rfind(')').unwrap()];
            let params = if params.trim() == "void" { Vec::new() } else { split_top(params) };
            functions.insert(name, (params.iter().map(|p| c_decl(p)).collect(), ret));
        } else if let Some(i) = statement.find("typedef enum tad_status {") {
            for entry in split_top(&statement[i + 25..statement.find('}').unwrap()]) {
                let (name, value) = entry.split_once('=').unwrap();
                constants.insert(name.trim().to_string(), value.trim().to_string());
            }
        } else if statement.contains("typedef int (*tad_progress_fn)") {
            let params = &statement[statement.rfind('(').unwrap() + 1..statement.rfind(')').unwrap()];
            let sig = (split_top(params).iter().map(|p| c_decl(p)).collect(), "c_int".to_string());
            functions.insert("tad_progress_fn".to_string(), sig);
        }
    }
    Api { functions, structs: parse_header_structs(text), constants }
}

/// The header's non-opaque structs: "typedef struct NAME { type field; ... } NAME".
fn parse_header_structs(text: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let code = squash(&strip_comments(text));
    let mut structs = BTreeMap::new();
    for chunk in code.split("typedef struct ").skip(1) {
        let words: Vec<&str> = chunk.split_whitespace().collect();
        if words.len() < 2 || words[1] != "{" {
            continue; // "typedef struct tad_session tad_session": opaque
        }
        let body = &chunk[chunk.find('{').unwrap() + 1..chunk.find('}').unwrap()];
        let fields = body.split(';').map(str::trim).filter(|f| !f.is_empty()).map(c_decl).collect();
        structs.insert(words[0].to_string(), fields);
    }
    structs
}

fn parse_rust(text: &str) -> Api {
    let code = squash(&strip_comments(text));
    let mut functions = BTreeMap::new();
    let mut structs = BTreeMap::new();
    let mut constants = BTreeMap::new();
    for item in code.split(';') {
        let item = item.trim();
        if let Some(i) = item.find("pub fn ") {
            let decl = &item[i + 7..];
            let open = decl.find('(').unwrap();
            let close = decl.rfind(')').unwrap();
            let ret = decl[close + 1..].trim().strip_prefix("->").map_or("c_void", str::trim).to_string();
            functions.insert(decl[..open].trim().to_string(), (rust_params(&decl[open + 1..close]), ret));
        } else if let Some(i) = item.find("pub const ") {
            let (name, value) = item[i + 10..].split_once('=').unwrap();
            constants.insert(name.split(':').next().unwrap().trim().to_string(), value.trim().to_string());
        } else if let Some(i) = item.find("pub type tad_progress_fn = ") {
            let decl = &item[i..];
            let params = &decl[decl.find("fn(").unwrap() + 3..decl.rfind(") ->").unwrap()];
            let ret =
                decl[decl.rfind("->").unwrap() + 2..].trim_end_matches(|c: char| c == '>' || c == ',' || c == ' ');
            functions.insert("tad_progress_fn".to_string(), (rust_params(params), ret.trim().to_string()));
        }
    }
    for chunk in code.split("pub struct ").skip(1) {
        let name = chunk.split_whitespace().next().unwrap().to_string();
        let body = &chunk[chunk.find('{').unwrap() + 1..chunk.find('}').unwrap()];
        if name != "tad_session" && name != "tad_kernels" {
            structs.insert(name, rust_params(&body.replace("pub ", "")));
        }
    }
    Api { functions, structs, constants }
}

fn rust_params(params: &str) -> Vec<(String, String)> {
    split_top(params)
        .iter()
        .map(|p| {
            let (name, ty) = p.split_once(':').unwrap();
            (name.trim().to_string(), squash(ty))
        })
        .collect()
}

fn apis() -> (Api, Api) {
    let header = read(header_path());
    let c = parse_header(&header);
    let rust = parse_rust(&read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")));
    (c, rust)
}

#[test]
fn functions_match_the_header() {
    let (c, rust) = apis();
    assert!(c.functions.len() >= 20, "parsed only {:?} from tad.h", c.functions.keys());
    let c_names: Vec<&String> = c.functions.keys().collect();
    let rust_names: Vec<&String> = rust.functions.keys().collect();
    assert_eq!(c_names, rust_names, "functions declared in tad.h vs src/lib.rs");
    for (name, c_sig) in &c.functions {
        assert_eq!(c_sig, &rust.functions[name], "signature of {} (tad.h, then src/lib.rs)", name);
    }
}

#[test]
fn structs_match_the_header() {
    let (c, rust) = apis();
    let names: Vec<&String> = c.structs.keys().collect();
    assert_eq!(
        names,
        vec![
            "tad_bench_options",
            "tad_buffer",
            "tad_export_options",
            "tad_generate_options",
            "tad_kernels_options",
            "tad_launch_options",
            "tad_retrieve_options",
            "tad_session_options",
            "tad_tensor_arg",
            "tad_value_arg",
            "tad_verify_options"
        ]
    );
    assert_eq!(c.structs, rust.structs, "struct fields of tad.h, then src/lib.rs");
}

#[test]
fn constants_match_the_header() {
    let (c, rust) = apis();
    assert!(c.constants.len() >= 20, "parsed only {:?} from tad.h", c.constants);
    assert_eq!(c.constants, rust.constants, "status codes and #defines of tad.h, then src/lib.rs");
}

fn text(p: *const std::os::raw::c_char) -> String {
    assert!(!p.is_null());
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[test]
fn the_library_names_each_status_as_declared() {
    let (_, rust) = apis();
    let mut checked = 0;
    for (name, value) in &rust.constants {
        if name == "TAD_OK" || name.starts_with("TAD_ERR_") {
            let status: i32 = value.parse().unwrap();
            assert_eq!(&text(unsafe { tad_status_name(status) }), name);
            checked += 1;
        }
    }
    assert_eq!(checked, 14);
}

#[test]
fn the_library_version_is_the_declared_one() {
    let version = text(unsafe { tad_version() });
    let expected = format!("{}.{}.", TAD_VERSION_MAJOR, TAD_VERSION_MINOR);
    assert!(version.starts_with(&expected), "libtad {} for declarations of {}x", version, expected);
}

/// The library's options_init writes each field at its C offset: garbage in the Rust struct must
/// come out as the defaults, field by field, if the layouts agree.
fn init_from_garbage<T: Copy>(init: unsafe extern "C" fn(*mut T, u32) -> i32, version: u32) -> T {
    let mut opts = MaybeUninit::<T>::uninit();
    unsafe {
        std::ptr::write_bytes(opts.as_mut_ptr() as *mut u8, 0xAB, std::mem::size_of::<T>());
        assert_eq!(init(opts.as_mut_ptr(), version), TAD_OK, "{}", text(tad_error_last()));
        opts.assume_init()
    }
}

#[test]
fn options_init_fills_the_rust_structs() {
    let s = init_from_garbage(tad_session_options_init, TAD_SESSION_OPTIONS_VERSION);
    let d = tad_session_options::default();
    assert_eq!(format!("{:?}", s), format!("{:?}", d));
    let g = init_from_garbage(tad_generate_options_init, TAD_GENERATE_OPTIONS_VERSION);
    assert_eq!(format!("{:?}", g), format!("{:?}", tad_generate_options::default()));
    let v = init_from_garbage(tad_verify_options_init, TAD_VERIFY_OPTIONS_VERSION);
    assert_eq!(format!("{:?}", v), format!("{:?}", tad_verify_options::default()));
    let b = init_from_garbage(tad_bench_options_init, TAD_BENCH_OPTIONS_VERSION);
    assert_eq!(format!("{:?}", b), format!("{:?}", tad_bench_options::default()));
    let r = init_from_garbage(tad_retrieve_options_init, TAD_RETRIEVE_OPTIONS_VERSION);
    assert_eq!(format!("{:?}", r), format!("{:?}", tad_retrieve_options::default()));
    let e = init_from_garbage(tad_export_options_init, TAD_EXPORT_OPTIONS_VERSION);
    assert_eq!(format!("{:?}", e), format!("{:?}", tad_export_options::default()));
    let k = init_from_garbage(tad_kernels_options_init, TAD_KERNELS_OPTIONS_VERSION);
    assert_eq!(format!("{:?}", k), format!("{:?}", tad_kernels_options::default()));
    let l = init_from_garbage(tad_launch_options_init, TAD_LAUNCH_OPTIONS_VERSION);
    assert_eq!(format!("{:?}", l), format!("{:?}", tad_launch_options::default()));
}

#[test]
fn reports_and_null_arguments_behave_as_tad_h_says() {
    let report = b"{\"passed\": true, \"summary\": {\"max_rel_err\": 0.5}}\0";
    let mut passed = -1;
    let mut value = 0.0;
    unsafe {
        assert_eq!(tad_report_passed(report.as_ptr() as *const _, &mut passed), TAD_OK);
        let key = b"summary.max_rel_err\0";
        assert_eq!(tad_report_number(report.as_ptr() as *const _, key.as_ptr() as *const _, &mut value), TAD_OK);
        assert_eq!(tad_session_new(std::ptr::null(), std::ptr::null_mut()), TAD_ERR_INVALID_ARGUMENT);
        assert_eq!(text(tad_error_last()), "tad_session_new: out is NULL");
        tad_string_free(std::ptr::null_mut());
    }
    assert_eq!((passed, value), (1, 0.5));
}
