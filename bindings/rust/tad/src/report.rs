//! Reports as typed structs, read from the JSON text tad returns (docs/reports.md has the
//! schemas). Members a struct does not name are ignored, as the schemas ask of readers; each
//! struct keeps the whole text in `json` for them (and for tad_report_number).
use crate::error::{Error, Result, Status};
use crate::json::{self, Value};

/// A malformed report is a bug in tad, not in the caller: TAD_ERR_INTERNAL.
fn malformed(what: &str, why: &str) -> Error {
    Error::new(Status::Internal, format!("malformed {}: {}", what, why))
}

/// Typed reads of an object's members, naming the report in errors.
struct Members<'a> {
    value: &'a Value,
    what: &'a str,
}

impl<'a> Members<'a> {
    fn new(value: &'a Value, what: &'a str) -> Result<Members<'a>> {
        match value {
            Value::Object(_) => Ok(Members { value, what }),
            _ => Err(malformed(what, "not an object")),
        }
    }

    fn get(&self, key: &str) -> Result<&'a Value> {
        self.value.get(key).ok_or_else(|| malformed(self.what, &format!("no member '{}'", key)))
    }

    fn typed<T>(&self, key: &str, kind: &str, read: impl FnOnce(&'a Value) -> Option<T>) -> Result<T> {
        read(self.get(key)?).ok_or_else(|| malformed(self.what, &format!("'{}' is not {}", key, kind)))
    }

    fn string(&self, key: &str) -> Result<String> {
        self.typed(key, "a string", |v| v.as_str().map(str::to_string))
    }

    fn boolean(&self, key: &str) -> Result<bool> {
        self.typed(key, "a boolean", Value::as_bool)
    }

    fn count(&self, key: &str) -> Result<u64> {
        self.typed(key, "a count", |v| v.as_f64().filter(|n| *n >= 0.0 && n.fract() == 0.0).map(|n| n as u64))
    }

    fn array(&self, key: &str) -> Result<&'a [Value]> {
        self.typed(key, "an array", Value::as_array)
    }

    /// An array that may be missing (results that did not run have no checks).
    fn array_or_empty(&self, key: &str) -> Result<&'a [Value]> {
        Ok(self.optional(key, "an array", Value::as_array)?.unwrap_or(&[]))
    }

    /// A member that may be missing or null.
    fn optional<T>(&self, key: &str, kind: &str, read: impl FnOnce(&'a Value) -> Option<T>) -> Result<Option<T>> {
        match self.value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => read(v).map(Some).ok_or_else(|| malformed(self.what, &format!("'{}' is not {}", key, kind))),
        }
    }

    fn number_or_null(&self, key: &str) -> Result<Option<f64>> {
        self.optional(key, "a number", Value::as_f64)
    }

    fn string_or_null(&self, key: &str) -> Result<Option<String>> {
        self.optional(key, "a string", |v| v.as_str().map(str::to_string))
    }
}

fn parse_text(text: &str, what: &str) -> Result<Value> {
    json::parse(text).map_err(|e| malformed(what, &e.to_string()))
}

/// One gradient of a verify result.
#[derive(Clone, Debug, PartialEq)]
pub struct GradCheck {
    pub name: String,
    pub shape: Vec<u64>,
    pub max_abs_err: Option<f64>,
    pub max_rel_err: Option<f64>,
    pub ok: bool,
}

/// One output of a verify result.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputCheck {
    pub index: u64,
    pub max_abs_err: Option<f64>,
    pub max_rel_err: Option<f64>,
    pub ok: bool,
}

/// One dims × dtype case of a verify report.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyResult {
    /// The SWEEP entry as the file wrote it.
    pub dims: Value,
    pub dtype: String,
    /// "pass", "fail", "error" or "skipped".
    pub status: String,
    pub message: Option<String>,
    /// "reference" or "finite_differences"; None for a case that did not run.
    pub method: Option<String>,
    pub grads: Vec<GradCheck>,
    pub outputs: Vec<OutputCheck>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VerifySummary {
    pub total: u64,
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub max_rel_err: Option<f64>,
}

/// The report of [`crate::Session::verify`].
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyReport {
    /// "cpu" or "gpu".
    pub mode: String,
    pub passed: bool,
    pub device: Option<String>,
    pub results: Vec<VerifyResult>,
    pub summary: VerifySummary,
    pub json: String,
}

fn grad_check(v: &Value) -> Result<GradCheck> {
    let m = Members::new(v, "verify report grad")?;
    let shape = m.array("shape")?;
    let shape = shape.iter().map(|d| d.as_f64().map(|n| n as u64)).collect::<Option<Vec<u64>>>();
    Ok(GradCheck {
        name: m.string("name")?,
        shape: shape.ok_or_else(|| malformed("verify report grad", "'shape' is not a list of integers"))?,
        max_abs_err: m.number_or_null("max_abs_err")?,
        max_rel_err: m.number_or_null("max_rel_err")?,
        ok: m.boolean("ok")?,
    })
}

fn output_check(v: &Value) -> Result<OutputCheck> {
    let m = Members::new(v, "verify report output")?;
    Ok(OutputCheck {
        index: m.count("index")?,
        max_abs_err: m.number_or_null("max_abs_err")?,
        max_rel_err: m.number_or_null("max_rel_err")?,
        ok: m.boolean("ok")?,
    })
}

fn verify_result(v: &Value) -> Result<VerifyResult> {
    let m = Members::new(v, "verify result")?;
    Ok(VerifyResult {
        dims: m.get("dims")?.clone(),
        dtype: m.string("dtype")?,
        status: m.string("status")?,
        message: m.string_or_null("message")?,
        method: m.string_or_null("method")?,
        grads: m.array_or_empty("grads")?.iter().map(grad_check).collect::<Result<_>>()?,
        outputs: m.array_or_empty("outputs")?.iter().map(output_check).collect::<Result<_>>()?,
    })
}

impl VerifyReport {
    pub fn parse(text: &str) -> Result<VerifyReport> {
        let value = parse_text(text, "verify report")?;
        let m = Members::new(&value, "verify report")?;
        let s = Members::new(m.get("summary")?, "verify report summary")?;
        Ok(VerifyReport {
            mode: m.string("mode")?,
            passed: m.boolean("passed")?,
            device: m.string_or_null("device")?,
            results: m.array("results")?.iter().map(verify_result).collect::<Result<_>>()?,
            summary: VerifySummary {
                total: s.count("total")?,
                passed: s.count("passed")?,
                failed: s.count("failed")?,
                skipped: s.count("skipped")?,
                max_rel_err: s.number_or_null("max_rel_err")?,
            },
            json: text.to_string(),
        })
    }
}

/// One dims × dtype case of a bench report; times in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    pub dims: Value,
    pub dtype: String,
    /// "ok", "error" or "skipped".
    pub status: String,
    pub fwd_ms: Option<f64>,
    pub bwd_ms: Option<f64>,
    pub ref_bwd_ms: Option<f64>,
    pub compiled_ref_bwd_ms: Option<f64>,
    pub bwd_gbps: Option<f64>,
    pub message: Option<String>,
}

/// The report of [`crate::Session::bench`].
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    pub device: String,
    pub results: Vec<BenchResult>,
    pub median_bwd_speedup_vs_ref: Option<f64>,
    pub json: String,
}

fn bench_result(v: &Value) -> Result<BenchResult> {
    let m = Members::new(v, "bench result")?;
    Ok(BenchResult {
        dims: m.get("dims")?.clone(),
        dtype: m.string("dtype")?,
        status: m.string("status")?,
        fwd_ms: m.number_or_null("fwd_ms")?,
        bwd_ms: m.number_or_null("bwd_ms")?,
        ref_bwd_ms: m.number_or_null("ref_bwd_ms")?,
        compiled_ref_bwd_ms: m.number_or_null("compiled_ref_bwd_ms")?,
        bwd_gbps: m.number_or_null("bwd_gbps")?,
        message: m.string_or_null("message")?,
    })
}

impl BenchReport {
    pub fn parse(text: &str) -> Result<BenchReport> {
        let value = parse_text(text, "bench report")?;
        let m = Members::new(&value, "bench report")?;
        let s = Members::new(m.get("summary")?, "bench report summary")?;
        Ok(BenchReport {
            device: m.string("device")?,
            results: m.array("results")?.iter().map(bench_result).collect::<Result<_>>()?,
            median_bwd_speedup_vs_ref: s.number_or_null("median_bwd_speedup_vs_ref")?,
            json: text.to_string(),
        })
    }
}

/// One entry of [`crate::Session::snapshots`].
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotInfo {
    pub id: String,
    pub seq: u64,
    pub label: String,
    /// ISO 8601, UTC.
    pub created: String,
    pub parent: Option<String>,
    pub forward_path: String,
    pub backend: String,
    /// "generate" or "snapshot".
    pub kind: String,
    pub has_verify: bool,
    pub has_bench: bool,
    /// The verify report's `passed`; None without one.
    pub passed: Option<bool>,
}

fn snapshot_info(v: &Value) -> Result<SnapshotInfo> {
    let m = Members::new(v, "snapshot list entry")?;
    Ok(SnapshotInfo {
        id: m.string("id")?,
        seq: m.count("seq")?,
        label: m.string("label")?,
        created: m.string("created")?,
        parent: m.string_or_null("parent")?,
        forward_path: m.string("forward_path")?,
        backend: m.string("backend")?,
        kind: m.string("kind")?,
        has_verify: m.boolean("has_verify")?,
        has_bench: m.boolean("has_bench")?,
        passed: m.optional("passed", "a boolean", Value::as_bool)?,
    })
}

impl SnapshotInfo {
    /// The JSON list tad_snapshot_list returns.
    pub fn parse_list(text: &str) -> Result<Vec<SnapshotInfo>> {
        match parse_text(text, "snapshot list")? {
            Value::Array(items) => items.iter().map(snapshot_info).collect(),
            _ => Err(malformed("snapshot list", "not an array")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFY: &str = r#"{"kind": "verify", "mode": "cpu", "passed": false, "device": null, "new_member": [1],
      "results": [
        {"dims": {"M": 4, "N": 64}, "dtype": "float64", "status": "fail", "message": null,
         "method": "finite_differences",
         "grads": [{"name": "x", "shape": [4, 64], "max_abs_err": 3.1e-06, "max_rel_err": 2.4e-03, "ok": false},
                   {"name": "w", "shape": [64], "max_abs_err": null, "max_rel_err": 4.0e-11, "ok": true}],
         "outputs": [{"index": 0, "max_abs_err": 0.0, "max_rel_err": 0.0, "ok": true}]},
        {"dims": {"M": 65536, "N": 4096}, "dtype": "float64", "status": "skipped",
         "message": "too large", "method": "finite_differences", "grads": [], "outputs": []}],
      "summary": {"total": 2, "passed": 0, "failed": 1, "skipped": 1, "max_rel_err": 2.4e-03}}"#;

    #[test]
    fn reads_the_documented_verify_report() {
        let r = VerifyReport::parse(VERIFY).unwrap();
        assert_eq!((r.mode.as_str(), r.passed, r.device.clone()), ("cpu", false, None));
        assert_eq!(r.results.len(), 2);
        let first = &r.results[0];
        assert_eq!(first.dims.get("N").and_then(Value::as_f64), Some(64.0));
        assert_eq!(
            first.grads[0],
            GradCheck {
                name: "x".into(),
                shape: vec![4, 64],
                max_abs_err: Some(3.1e-6),
                max_rel_err: Some(2.4e-3),
                ok: false
            }
        );
        assert_eq!(first.grads[1].max_abs_err, None);
        assert_eq!(first.outputs[0].index, 0);
        assert_eq!(r.results[1].message.as_deref(), Some("too large"));
        assert_eq!(first.method.as_deref(), Some("finite_differences"));
        assert_eq!(r.summary, VerifySummary { total: 2, passed: 0, failed: 1, skipped: 1, max_rel_err: Some(2.4e-3) });
        assert_eq!(r.json, VERIFY);
    }

    #[test]
    fn a_case_that_did_not_run_may_omit_its_checks() {
        let text = r#"{"mode": "cpu", "passed": true, "device": null, "results": [
            {"status": "skipped", "message": "too large", "dims": {"M": 4096}, "dtype": "float64"}],
          "summary": {"total": 1, "passed": 0, "failed": 0, "skipped": 1, "max_rel_err": null}}"#;
        let r = VerifyReport::parse(text).unwrap();
        assert_eq!((r.results[0].method.clone(), r.results[0].grads.len(), r.results[0].outputs.len()), (None, 0, 0));
        assert_eq!(r.summary.max_rel_err, None);
    }

    #[test]
    fn a_report_missing_a_member_is_an_internal_error() {
        let e = VerifyReport::parse(&VERIFY.replace("\"mode\": \"cpu\",", "")).unwrap_err();
        assert_eq!(e.status(), Status::Internal);
        assert_eq!(e.message(), "malformed verify report: no member 'mode'");
        let e = VerifyReport::parse(&VERIFY.replace("\"ok\": false", "\"ok\": 0")).unwrap_err();
        assert_eq!(e.message(), "malformed verify report grad: 'ok' is not a boolean");
        assert!(VerifyReport::parse("{").unwrap_err().message().contains("invalid JSON"));
    }

    #[test]
    fn reads_the_documented_bench_report() {
        let text = r#"{"kind": "bench", "device": "NVIDIA H100 80GB HBM3",
          "results": [{"dims": {"M": 4096, "N": 1024}, "dtype": "float16", "status": "ok",
            "fwd_ms": 0.021, "bwd_ms": 0.048, "ref_bwd_ms": 0.130, "compiled_ref_bwd_ms": null,
            "bwd_gbps": 1843.2, "message": null}],
          "summary": {"median_bwd_speedup_vs_ref": 2.71}}"#;
        let r = BenchReport::parse(text).unwrap();
        assert_eq!(r.device, "NVIDIA H100 80GB HBM3");
        assert_eq!((r.results[0].bwd_ms, r.results[0].compiled_ref_bwd_ms), (Some(0.048), None));
        assert_eq!(r.median_bwd_speedup_vs_ref, Some(2.71));
    }

    #[test]
    fn reads_the_documented_snapshot_list() {
        let text = r#"[{"id": "0003-9f2c1ab0", "seq": 3, "label": "", "created": "2025-01-31T12:00:00Z",
          "parent": "0002-11aa22bb", "forward_path": "/src/layernorm.py", "backend": "ad",
          "kind": "generate", "has_verify": true, "has_bench": false, "passed": null}]"#;
        let list = SnapshotInfo::parse_list(text).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!((list[0].seq, list[0].parent.as_deref(), list[0].passed), (3, Some("0002-11aa22bb"), None));
        assert!(SnapshotInfo::parse_list("{}").is_err());
    }
}
