//! The generate / verify / snapshot / rollback loop through the safe API, with the worker on
//! CPU torch ($TAD_TEST_PYTHON, default /usr/bin/python3) and the CPU interpreter.
mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{have_torch, python, repo_file, session, TempDir};
use tad::{GenerateOptions, Session, SessionOptions, Status, VerifyOptions};

const GELU_DIMS: &str = r#"[{"n": 1000}]"#;

#[test]
fn the_loop_runs_on_layernorm() {
    if !have_torch("the_loop_runs_on_layernorm") {
        return;
    }
    let dir = TempDir::new("loop");
    let mut s = session(&dir);
    s.load_forward(repo_file("examples/layernorm.py")).unwrap();
    let id = s.generate(&GenerateOptions::new()).unwrap();
    assert!(s.candidate_source(None).unwrap().contains("torch.autograd.Function"));
    assert_eq!(s.candidate_source(Some(&id)).unwrap(), s.candidate_source(None).unwrap());
    assert!(!s.candidate_explain(None).unwrap().is_empty());

    let report = s.verify(&VerifyOptions::cpu()).unwrap();
    assert!(report.passed);
    assert_eq!((report.mode.as_str(), report.device.as_deref()), ("cpu", None));
    let first = &report.results[0];
    assert_eq!((first.status.as_str(), first.dtype.as_str()), ("pass", "float64"));
    let names: Vec<&str> = first.grads.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["x", "weight", "bias"]);
    assert!(first.grads.iter().all(|g| g.ok && g.max_rel_err.unwrap() < 1e-6), "{:?}", first.grads);
    assert_eq!(report.summary.total, report.results.len() as u64);
    assert!(report.summary.passed >= 1);
    let max = tad::report_number(&report.json, "summary.max_rel_err").unwrap();
    assert_eq!(Some(max), report.summary.max_rel_err);

    let labelled = s.snapshot(Some("checked")).unwrap();
    assert_ne!(labelled, id);
    let list = s.snapshots().unwrap();
    let ids: Vec<&str> = list.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, [id.as_str(), labelled.as_str()]);
    let last = &list[1];
    assert_eq!((last.label.as_str(), last.kind.as_str(), last.passed), ("checked", "snapshot", Some(true)));
    assert_eq!(last.parent.as_deref(), Some(id.as_str()));
    s.rollback(&id).unwrap();
}

#[test]
fn a_wrong_backward_is_a_mismatch_carrying_the_report() {
    if !have_torch("a_wrong_backward_is_a_mismatch_carrying_the_report") {
        return;
    }
    let dir = TempDir::new("mismatch");
    let mut s = session(&dir);
    s.load_forward(repo_file("examples/gelu.py")).unwrap();
    let id = s.generate(&GenerateOptions::new()).unwrap();
    // A launcher that doubles the gradient: the whole-stub check runs the module as Python does.
    let path = dir.path().join("snapshots").join(&id).join("backward.py");
    let source = std::fs::read_to_string(&path).unwrap();
    let returned = "return (_as_dtype(d_x, x),)";
    assert!(source.contains(returned), "{}", source);
    std::fs::write(&path, source.replace(returned, "return (_as_dtype(2 * d_x, x),)")).unwrap();

    let e = s.verify(&VerifyOptions::cpu().dims(GELU_DIMS)).unwrap_err();
    assert_eq!(e.status(), Status::Mismatch, "{}", e);
    let report = e.verify_report().expect("a failed verify carries its report");
    assert!(!report.passed);
    assert_eq!(report.results[0].status, "fail");
    assert!(report.results[0].message.as_deref().unwrap_or("").starts_with("whole stub: "), "{:?}", report.results[0]);
    assert_eq!(report.summary.failed, 1);
}

/// A session whose progress closure records the stages, cancels while `cancel` is set and panics
/// while `explode` is set.
struct Probe {
    stages: Arc<Mutex<Vec<String>>>,
    cancel: Arc<AtomicBool>,
    explode: Arc<AtomicBool>,
    calls_after_panic: Arc<AtomicUsize>,
}

fn probed_session(dir: &TempDir) -> (Session, Probe) {
    let probe = Probe {
        stages: Arc::new(Mutex::new(Vec::new())),
        cancel: Arc::new(AtomicBool::new(false)),
        explode: Arc::new(AtomicBool::new(false)),
        calls_after_panic: Arc::new(AtomicUsize::new(0)),
    };
    let (stages, cancel, explode) = (probe.stages.clone(), probe.cancel.clone(), probe.explode.clone());
    let after = probe.calls_after_panic.clone();
    let panicked = Arc::new(AtomicBool::new(false));
    let options = SessionOptions::new().work_dir(dir.path()).python(python()).progress(move |p| {
        if panicked.load(Ordering::SeqCst) {
            after.fetch_add(1, Ordering::SeqCst);
        }
        stages.lock().unwrap().push(p.stage.to_string());
        if explode.load(Ordering::SeqCst) {
            panicked.store(true, Ordering::SeqCst);
            panic!("boom in progress");
        }
        !cancel.load(Ordering::SeqCst)
    });
    let mut s = Session::new(options).unwrap();
    s.load_forward(repo_file("examples/gelu.py")).unwrap();
    (s, probe)
}

#[test]
fn progress_reaches_the_closure_and_false_cancels() {
    if !have_torch("progress_reaches_the_closure_and_false_cancels") {
        return;
    }
    let dir = TempDir::new("progress");
    let (mut s, probe) = probed_session(&dir);
    probe.cancel.store(true, Ordering::SeqCst);
    let e = s.generate(&GenerateOptions::new()).unwrap_err();
    assert_eq!(e.status(), Status::Cancelled, "{}", e);
    assert_eq!(s.snapshots().unwrap().len(), 0, "a cancelled generate leaves the session as it was");

    probe.cancel.store(false, Ordering::SeqCst);
    probe.stages.lock().unwrap().clear();
    s.generate(&GenerateOptions::new()).unwrap();
    let stages = probe.stages.lock().unwrap().clone();
    assert!(stages.iter().any(|st| st == "trace"), "{:?}", stages);
    assert!(stages.iter().any(|st| st == "generate"), "{:?}", stages);
}

#[test]
fn a_panic_in_the_closure_resumes_after_the_call() {
    if !have_torch("a_panic_in_the_closure_resumes_after_the_call") {
        return;
    }
    let dir = TempDir::new("panic");
    let (mut s, probe) = probed_session(&dir);
    probe.explode.store(true, Ordering::SeqCst);
    let caught = panic::catch_unwind(AssertUnwindSafe(|| s.generate(&GenerateOptions::new())));
    let payload = caught.expect_err("the closure's panic resumes in the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom in progress"));
    assert_eq!(probe.calls_after_panic.load(Ordering::SeqCst), 0, "the closure is not called again in that call");

    probe.explode.store(false, Ordering::SeqCst);
    assert_eq!(s.snapshots().unwrap().len(), 0);
    s.generate(&GenerateOptions::new()).unwrap();
    let report = s.verify(&VerifyOptions::cpu().dims(GELU_DIMS)).unwrap();
    assert!(report.passed);
}

#[test]
fn a_session_moves_to_another_thread() {
    if !have_torch("a_session_moves_to_another_thread") {
        return;
    }
    fn is_send<T: Send>(_: &T) {}
    let dir = TempDir::new("send");
    let mut s = session(&dir);
    is_send(&s);
    s.load_forward(repo_file("examples/gelu.py")).unwrap();
    let handle = std::thread::spawn(move || {
        s.generate(&GenerateOptions::new().dims(r#"{"n": 1000}"#)).unwrap();
        s.verify(&VerifyOptions::cpu().dims(GELU_DIMS)).map(|r| r.passed)
    });
    assert!(handle.join().unwrap().unwrap());
}
