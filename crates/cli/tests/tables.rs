//! Listings and tables a reader can check: every listing aligned and described, metrics defined
//! under the tables that show them, each figure shown once.

use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn ok(args: &[&str]) -> String {
    let o = shingled(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The column at which the text after the first run of two spaces starts, per line.
fn second_column(line: &str) -> usize {
    let at = line.find("  ").expect("two spaces");
    at + line[at..].len() - line[at..].trim_start().len()
}

#[test]
fn listings_are_aligned_and_described() {
    // Every experiment's title starts in one column, however long its name.
    let list = ok(&["experiment", "list"]);
    let cols: Vec<usize> = list.lines().map(second_column).collect();
    assert!(cols.windows(2).all(|w| w[0] == w[1]), "{list}");
    // Each drive profile with its one-line description, in one column.
    let drives = ok(&["drives"]);
    for line in drives.lines() {
        let (name, about) = line.split_once("  ").unwrap_or((line, ""));
        assert!(!name.contains(' ') && about.trim().len() > 10, "{line:?} has no description");
    }
    let cols: Vec<usize> = drives.lines().map(second_column).collect();
    assert!(cols.windows(2).all(|w| w[0] == w[1]), "{drives}");
    // The trace profiles: every row's cells end where the header's do (right-aligned numbers).
    let listing = ok(&["trace", "profiles"]);
    let (profiles, generators) = listing.split_once("\n\n").expect("a table, then the generators");
    assert!(generators.contains("bursts") && generators.contains("trickle"), "{generators}");
    let lines: Vec<&str> = profiles.lines().collect();
    let header = lines[0];
    let write_end = header.find("write%").unwrap() + "write%".len();
    for row in &lines[2..] {
        assert_eq!(row.chars().nth(write_end - 1), Some('%'), "{row:?} is shifted:\n{profiles}");
        assert_eq!(row.chars().count(), header.chars().count(), "{row:?}\n{profiles}");
    }
    assert_eq!(lines.len() - 2, 11, "{profiles}");
}

#[test]
fn compare_defines_wa_and_splits_the_time_into_summing_parts() {
    let out = ok(&["compare", "--trace", "synth:wdev,scale=0.002", "--schemes", "smr-only,cmr-only,lru"]);
    assert!(out.contains("dev WA"), "{out}");
    assert!(out.contains("WA = band bytes written / bytes cleaned out of the PB"), "{out}");
    assert!(out.contains("dev WA = bytes the drive wrote to its media"), "{out}");
    assert!(
        out.contains("foreground (s)") && out.contains("background (s)") && out.contains("mechanism (s)"),
        "{out}"
    );
    // `--help` says what the metric is where it is shown.
    for cmd in ["sim", "compare", "experiment", "curve"] {
        let help = ok(&[cmd, "--help"]);
        assert!(help.contains("band bytes written / bytes cleaned out of the PB"), "{cmd} --help:\n{help}");
    }
}

#[test]
fn open_loop_sim_shows_the_response_time_once_and_no_empty_column() {
    let out = ok(&["sim", "--trace", "synth:mds,scale=0.002", "--no-cache", "--replay", "open"]);
    assert!(out.contains("response mean"), "{out}");
    assert!(!out.contains("latency mean"), "{out}");
    assert!(!out.contains("n/a") && !out.contains("after warm-up ("), "{out}");
    assert!(
        out.contains("no after-warm-up column: warm-up `cache-full` ends when the cache is first full"),
        "{out}"
    );
}

#[test]
fn a_sweep_names_each_rows_cache_size() {
    let out =
        ok(&["sim", "--trace", "synth:wdev,scale=0.002", "--policy", "lru", "--cache-size", "1%,2%,4%"]);
    let header = out.lines().find(|l| l.starts_with("trace ")).unwrap();
    assert!(header.contains("–") && header.contains("cache blocks"), "{out}");
    let sizes: Vec<u64> = out
        .lines()
        .filter(|l| l.starts_with("lru "))
        .map(|l| l.split_whitespace().nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(sizes.len(), 3, "{out}");
    assert!(sizes[0] < sizes[1] && sizes[1] < sizes[2], "{out}");
}

#[test]
fn stl_stats_prints_rows_not_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.img");
    let f = f.to_str().unwrap();
    ok(&["stl", "format", "smart", f, "--size", "64MiB"]);
    let out = ok(&["stl", "stats", f]);
    assert!(!out.contains('{') && !out.contains('"'), "{out}");
    assert!(out.lines().any(|l| l.trim_start().starts_with("medium.bytes_read")), "{out}");
}
