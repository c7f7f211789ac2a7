//! Failed calls: each status arrives as a tad::Error with the library's message, and the session
//! stays usable.
mod common;

use common::{session, TempDir};
use tad::{Status, VerifyOptions};

#[test]
fn the_version_is_the_linked_librarys() {
    assert!(tad::version().starts_with("0.2."), "{}", tad::version());
}

#[test]
fn a_missing_forward_file_is_an_io_error_naming_it() {
    let dir = TempDir::new("missing");
    let mut s = session(&dir);
    let missing = dir.path().join("missing.py");
    let e = s.load_forward(&missing).unwrap_err();
    assert_eq!(e.status(), Status::Io);
    assert!(e.message().contains(missing.to_str().unwrap()), "{}", e.message());
    assert_eq!(e.to_string(), format!("TAD_ERR_IO: {}", e.message()));
    assert!(e.report_json().is_none());
}

#[test]
fn a_syntax_error_names_the_file_and_line() {
    let dir = TempDir::new("syntax");
    let mut s = session(&dir);
    let e = s.load_forward_source("bad.py", "import triton\n\ndef f(:\n    pass\n").unwrap_err();
    assert_eq!(e.status(), Status::Syntax);
    assert!(e.message().starts_with("bad.py:3:"), "{}", e.message());
}

#[test]
fn calls_out_of_order_are_state_errors() {
    let dir = TempDir::new("state");
    let mut s = session(&dir);
    let e = s.verify(&VerifyOptions::cpu()).unwrap_err();
    assert_eq!(e.status(), Status::State);
    assert!(!e.message().is_empty());
    let e = s.candidate_source(None).unwrap_err();
    assert_eq!(e.status(), Status::State, "{}", e);
}

#[test]
fn generate_options_reach_the_library() {
    let dir = TempDir::new("options");
    let mut s = session(&dir);
    s.load_forward(common::repo_file("examples/gelu.py")).unwrap();
    let e = s.generate(&tad::GenerateOptions::new().backend("nope")).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument, "{}", e);
    assert!(e.message().contains("nope"), "{}", e.message());
}

#[test]
fn an_unknown_snapshot_is_not_found() {
    let dir = TempDir::new("notfound");
    let mut s = session(&dir);
    let e = s.rollback("0042-deadbeef").unwrap_err();
    assert_eq!(e.status(), Status::NotFound);
    assert!(e.message().contains("0042-deadbeef"), "{}", e.message());
}

#[test]
fn a_nul_byte_in_an_argument_is_an_invalid_argument() {
    let dir = TempDir::new("nul");
    let mut s = session(&dir);
    let e = s.load_forward_source("a.py", "x = 1\0").unwrap_err();
    assert_eq!((e.status(), e.message()), (Status::InvalidArgument, "source contains a NUL byte"));
}

#[test]
fn statuses_round_trip_through_their_codes_and_names() {
    assert_eq!(Status::from_code(-3), Status::Syntax);
    assert_eq!(Status::Syntax.code(), -3);
    assert_eq!(Status::Cancelled.name(), "TAD_ERR_CANCELLED");
    assert_eq!(Status::from_code(-1234), Status::Unknown(-1234));
    assert_eq!(Status::Unknown(-1234).name(), "TAD_UNKNOWN_STATUS");
}

#[test]
fn report_numbers_follow_dotted_paths() {
    let report = r#"{"results": [{"bwd_ms": 0.25}, {"bwd_ms": null}]}"#;
    assert_eq!(tad::report_number(report, "results.0.bwd_ms").unwrap(), 0.25);
    assert_eq!(tad::report_number(report, "results.1.bwd_ms").unwrap_err().status(), Status::NotFound);
    assert_eq!(tad::report_number(report, "a..b").unwrap_err().status(), Status::InvalidArgument);
}

#[test]
fn interpret_runs_a_launch_on_the_callers_buffers() {
    let source = "import triton\nimport triton.language as tl\n\n\n@triton.jit\n\
                  def scale(X, Y, n, alpha, BLOCK: tl.constexpr):\n\
                  \x20   offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n\
                  \x20   mask = offs < n\n\
                  \x20   tl.store(Y + offs, alpha * tl.load(X + offs, mask=mask), mask=mask)\n";
    let launch = r#"{"kernel": "scale", "grid": [2, 1, 1], "args": [
        {"name": "X", "kind": "tensor", "ref": {"buffer": 0}, "offset": 0, "dtype": "float64"},
        {"name": "Y", "kind": "tensor", "ref": {"buffer": 1}, "offset": 0, "dtype": "float64"},
        {"name": "n", "kind": "int", "value": 5},
        {"name": "alpha", "kind": "float", "value": 0.5},
        {"name": "BLOCK", "kind": "int", "value": 4}]}"#;
    let mut x = vec![1.0, 2.0, 3.0, 4.0, 5.0];
    let mut y = vec![-1.0; 5];
    tad::interpret(source, "k.py", launch, &mut [&mut x, &mut y]).unwrap();
    assert_eq!(y, vec![0.5, 1.0, 1.5, 2.0, 2.5]);
    let e = tad::interpret(source, "k.py", &launch.replace("\"scale\"", "\"nope\""), &mut [&mut x, &mut y]);
    assert_eq!(e.unwrap_err().status(), Status::NoKernel);
}
