//! Session::retrieve and tad::dataset_list over the repository's dataset (docs/retrieval.md), with
//! a private cache directory.
mod common;

use common::{repo_file, session, TempDir};
use tad::json::{parse, Value};
use tad::{RetrieveOptions, Status};

fn results(report: &Value) -> &[Value] {
    report.get("results").and_then(Value::as_array).expect("results")
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

#[test]
fn layernorm_finds_the_norms() {
    let dir = TempDir::new("retrieve");
    let mut s = session(&dir);
    let options = RetrieveOptions::new().dataset_dir(repo_file("dataset")).cache_dir(dir.path().join("cache"));
    let e = s.retrieve(&options).unwrap_err();
    assert_eq!(e.status(), Status::State);
    s.load_forward(repo_file("examples/layernorm.py")).unwrap();
    let report = parse(&s.retrieve(&options).unwrap()).unwrap();
    assert_eq!(text(&report, "kind"), "retrieve");
    let families: Vec<&str> = results(&report).iter().map(|r| text(r, "family")).collect();
    assert_eq!(families.len(), 4);
    assert_eq!(families[..3], ["norm", "norm", "norm"]);

    let excluded = options.clone().topk(2).exclude("norm").exclude("softmax");
    let report = parse(&s.retrieve(&excluded).unwrap()).unwrap();
    assert_eq!(results(&report).len(), 2);
    for r in results(&report) {
        assert!(!text(r, "path").contains("norm") && !text(r, "path").contains("softmax"), "{}", text(r, "path"));
    }
    let e = s.retrieve(&options.clone().topk(-1)).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert_eq!(e.message(), "tad_retrieve: topk must not be negative");
}

#[test]
fn dataset_list_names_every_entry() {
    let dir = TempDir::new("dataset-list");
    let options = RetrieveOptions::new().dataset_dir(repo_file("dataset")).cache_dir(dir.path().join("cache"));
    let listing = parse(&tad::dataset_list(&options).unwrap()).unwrap();
    let entries = listing.get("entries").and_then(Value::as_array).unwrap();
    let files = std::fs::read_dir(repo_file("dataset"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().map_or(false, |x| x == "py"))
        .count();
    assert_eq!(entries.len(), files);
    let rms = entries.iter().find(|e| text(e, "name") == "rmsnorm").unwrap();
    assert_eq!(text(rms.get("backward").unwrap(), "kind"), "hand-written");
}
