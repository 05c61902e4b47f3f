//! Every shell command in README.md runs as written, so the README cannot rot.
//!
//! Each ```sh block is run line by line with `sh -c`, in one scratch folder per block (files a
//! line makes are there for the next), with the `shingled` under test first on `PATH` and the
//! repository's `tests/` folder reachable as `tests/`. A block right after a line
//! `<!-- readme: not run ... -->` is skipped (real traces a fresh clone does not have), and so
//! are `make` and `pip` lines (the quick start and the Python install: CI runs those itself).
//!
//! To keep the test short in a debug build, commands are shrunk where the README's scale does
//! not matter to what they show: every `synth:` trace gets `scale=0.02`; an experiment or an
//! experiment report without `--on`, and a compare, sim or report without a trace, get
//! `synth:wdev,scale=0.02`; a drive bench gets `--scale 0.05`. Nothing else is changed.

use std::path::{Path, PathBuf};
use std::process::Command;

const SMALL: &str = "scale=0.02";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The runnable ```sh blocks of the README, each as its lines.
fn blocks(readme: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut lines = readme.lines().peekable();
    let mut skip_next = false;
    while let Some(l) = lines.next() {
        let t = l.trim();
        if t.starts_with("<!-- readme: not run") {
            skip_next = true;
            continue;
        }
        if t == "```sh" {
            let mut block = Vec::new();
            for l in lines.by_ref() {
                if l.trim() == "```" {
                    break;
                }
                block.push(l.to_string());
            }
            if !skip_next {
                out.push(block);
            }
            skip_next = false;
        } else if !t.is_empty() {
            skip_next = false;
        }
    }
    out
}

/// The command with the shrinking rules of the module documentation applied.
fn shrink(cmd: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for w in cmd.split(' ') {
        if let Some(spec) = w.strip_prefix("synth:") {
            let mut parts: Vec<&str> = spec.split(',').filter(|p| !p.starts_with("scale=")).collect();
            parts.push(SMALL);
            words.push(format!("synth:{}", parts.join(",")));
        } else {
            words.push(w.to_string());
        }
    }
    let mut c = words.join(" ");
    let has = |c: &str, flag: &str| c.split_whitespace().any(|w| w == flag);
    let sub = |c: &str, name: &str| c.split_whitespace().nth(1) == Some(name);
    if sub(&c, "experiment") && !c.contains("experiment list") && !has(&c, "--on") {
        c = c.replacen("experiment ", &format!("experiment --on synth:wdev,{SMALL} "), 1);
    }
    if sub(&c, "report") && has(&c, "--experiment") && !has(&c, "--on") {
        c = c.replacen("report ", &format!("report --on synth:wdev,{SMALL} "), 1);
    }
    for name in ["compare", "sim", "report"] {
        if sub(&c, name) && !has(&c, "--trace") && !has(&c, "-c") && !has(&c, "--on") {
            c = c.replacen(&format!("{name} "), &format!("{name} --trace synth:wdev,{SMALL} "), 1);
        }
    }
    if c.contains("drive bench") && !has(&c, "--scale") {
        c = c.replacen("drive bench ", "drive bench --scale 0.05 ", 1);
    }
    c
}

fn run_block(block: &[String], bin_dir: &Path) {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("tests"), dir.path().join("tests")).unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    for line in block {
        let cmd = line.trim();
        if cmd.is_empty() || cmd.starts_with('#') || cmd.starts_with("make ") || cmd.starts_with("pip ") {
            continue;
        }
        let cmd = shrink(cmd);
        let o = Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .expect("run sh");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success(),
            "README command failed ({}):\n  {line}\nran as:\n  {cmd}\nstderr:\n{err}",
            o.status
        );
        assert!(!err.contains("panicked"), "{cmd}: {err}");
    }
}

#[test]
fn every_readme_command_runs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = blocks(&readme);
    let commands: usize =
        blocks.iter().map(|b| b.iter().filter(|l| l.trim().starts_with("shingled")).count()).sum();
    assert!(commands >= 30, "found only {commands} shingled commands in README.md");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_shingled"));
    for b in &blocks {
        run_block(b, bin.parent().unwrap());
    }
}

#[test]
fn shrinking_changes_only_sizes() {
    assert_eq!(
        shrink("shingled compare --trace synth:usr,scale=0.5 --output csv"),
        "shingled compare --trace synth:usr,scale=0.02 --output csv"
    );
    assert_eq!(shrink("shingled experiment sac-rw"), "shingled experiment --on synth:wdev,scale=0.02 sac-rw");
    assert_eq!(shrink("shingled experiment list"), "shingled experiment list");
    assert_eq!(
        shrink("shingled drive bench fig3 --png f.png"),
        "shingled drive bench --scale 0.05 fig3 --png f.png"
    );
    assert_eq!(shrink("shingled sim -c my.toml"), "shingled sim -c my.toml");
    let readme = "a\n<!-- readme: not run (x) -->\n```sh\nno\n```\n\n```sh\nyes\n```\n";
    assert_eq!(blocks(readme), vec![vec!["yes".to_string()]]);
}
