//! `shingled report` on the tiny golden trace: the page, its table rows and the figures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shingled(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).current_dir(dir).args(args).output().expect("run shingled")
}

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/golden")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const FIGURES: [&str; 4] = ["total_time.png", "hit_ratio.png", "wa.png", "rmws.png"];

fn assert_pngs(dir: &Path) {
    for f in FIGURES {
        let bytes = std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(bytes.len() > 1000, "{f} is {} bytes", bytes.len());
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{f} is not a PNG");
    }
}

#[test]
fn markdown_report_of_the_tiny_comparison() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("md");
    let o = shingled(
        &golden(),
        &["report", "-c", "tiny.toml", "--report-format", "md", "--out", out.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| scheme | total time (s) |"), "{md}");
    for scheme in ["smr-only", "cmr-only", "lru"] {
        assert!(md.lines().any(|l| l.starts_with(&format!("| {scheme} | "))), "no {scheme} row:\n{md}");
    }
    for f in FIGURES {
        assert!(md.contains(&format!("]({f})")), "{f} not linked:\n{md}");
    }
    assert_pngs(&out);
    assert!(out.join("results.json").exists());

    // The saved results give the same page again, as HTML.
    let html_dir = tmp.path().join("html");
    let from = out.join("results.json");
    let o = shingled(
        &golden(),
        &[
            "report",
            "--from",
            from.to_str().unwrap(),
            "--report-format",
            "html",
            "--out",
            html_dir.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(html_dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<td>lru</td>"), "{html}");
    assert!(html.contains("<img src=\"total_time.png\""), "{html}");
    assert_pngs(&html_dir);
}

#[test]
fn report_from_experiment_json() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("exp.json");
    let o = shingled(
        &golden(),
        &[
            "experiment",
            "sac-rw",
            "-c",
            "tiny.toml",
            "--on",
            "tiny.csv",
            "--output",
            "json",
            "--out",
            json.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tmp.path().join("r");
    let o =
        shingled(&golden(), &["report", "--from", json.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.starts_with("# shingled report: sac-rw"), "{md}");
    for scheme in ["lru", "most", "most-cdc", "sac"] {
        assert!(md.lines().any(|l| l.starts_with(&format!("| {scheme} | "))), "no {scheme} row:\n{md}");
    }
    assert_pngs(&out);
}

#[test]
fn report_rejects_other_json() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, "{\"x\": 1}").unwrap();
    let o = shingled(tmp.path(), &["report", "--from", bad.to_str().unwrap(), "--out", "o"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("neither"), "{}", stderr(&o));
}

/// Sampling flags mean nothing for a report read back with --from or for a comparison: refused.
#[test]
fn report_refuses_sampling_flags_where_they_cannot_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let j = tmp.path().join("x.json");
    std::fs::write(&j, "{}").unwrap();
    let o = shingled(tmp.path(), &["report", "--from", j.to_str().unwrap(), "--out", "o", "--rate", "0.1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--rate cannot apply to a report read with --from"), "{}", stderr(&o));
    let o = shingled(tmp.path(), &["report", "--schemes", "lru", "--validate", "3", "--out", "o"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--validate applies to the curve forms"), "{}", stderr(&o));
}

/// A curve form's report says how its points were obtained (the rate, LRU's exact hit ratio,
/// the validation errors) and leaves out the time breakdown of sampled runs; the sampling flags
/// are refused for a full-run experiment.
#[test]
fn report_of_a_curve_experiment_says_how_its_points_were_sampled() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("curve");
    let trace = "synth:prn,scale=0.05";
    let o = shingled(
        tmp.path(),
        &[
            "report",
            "--experiment",
            "sac-write-only-curve",
            "--on",
            trace,
            "--rate",
            "0.5",
            "--validate",
            "1",
            "--progress",
            "none",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("sampled mini-simulations at rate 0.5000"), "{md}");
    assert!(md.contains("LRU's exact hit ratio") && md.contains("error rmws"), "{md}");
    assert!(!md.contains("Where the time went"), "no breakdown of sampled runs:\n{md}");
    let o = shingled(
        tmp.path(),
        &["report", "--experiment", "sac-rw", "--on", trace, "--rate", "0.5", "--out", "x"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--rate applies to the curve forms"), "{}", stderr(&o));
}
