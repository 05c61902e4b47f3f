//! Every command that draws charts writes what was named and says so: `--png FILE` and
//! `--cdf FILE.png` write one PNG at exactly FILE, a command with several charts (`probe --png
//! FILE`) writes them beside FILE as FILE's stem + `-<name>.png`, directory options (`report
//! --out`, `probe --csv-dir`) write their documented files, and each file written gets one
//! `wrote PATH` line on stderr; the lines list exactly the files that exist afterwards.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shingled(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).current_dir(dir).output().expect("run shingled")
}

/// The paths of the `wrote PATH[ (what)]` lines of stderr, relative to `dir`.
fn listed(dir: &Path, o: &Output) -> BTreeSet<PathBuf> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("wrote "))
        .map(|rest| {
            let path = rest.split(" (").next().unwrap();
            let p = Path::new(path);
            p.strip_prefix(dir).unwrap_or(p).to_path_buf()
        })
        .collect()
}

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

/// Runs `args` in a fresh directory and checks that it succeeds, that every name in `named`
/// exists there (PNGs as PNGs), and that the `wrote` lines list exactly the files there.
fn check(args: &[&str], named: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let o = shingled(dir, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{args:?}: {err}");
    for n in named {
        let p = dir.join(n);
        assert!(p.exists(), "{args:?}: {n} (named) was not written; stderr: {err}");
        if n.ends_with(".png") {
            assert!(std::fs::read(&p).unwrap().starts_with(b"\x89PNG"), "{n} is no PNG");
        }
    }
    assert_eq!(
        listed(dir, &o),
        files(dir),
        "{args:?}: the files listed on stderr are not the files written: {err}"
    );
}

#[test]
fn curve_writes_one_chart_at_the_path_named() {
    check(
        &[
            "curve",
            "--trace",
            "synth:prn,scale=0.02",
            "--policy",
            "lru,sac",
            "--cache-size",
            "1%,4%",
            "--rate",
            "1",
            "--progress",
            "none",
            "--png",
            "prn.png",
        ],
        &["prn.png"],
    );
}

#[test]
fn a_curve_experiment_over_several_traces_writes_one_chart() {
    check(
        &[
            "experiment",
            "sac-write-only-curve",
            "--on",
            "synth:wdev,scale=0.01",
            "--on",
            "synth:rsrch,scale=0.01",
            "--rate",
            "1",
            "--progress",
            "none",
            "--png",
            "sac.png",
        ],
        &["sac.png"],
    );
}

#[test]
fn pore_regimes_draws_its_winners_as_one_chart() {
    check(
        &[
            "experiment",
            "pore-regimes",
            "--on",
            "synth:bursts,scale=0.02",
            "--on",
            "synth:bursts,trickle=0.4,scale=0.02",
            "--progress",
            "none",
            "--png",
            "regimes.png",
        ],
        &["regimes.png"],
    );
}

#[test]
fn cdf_charts_and_csv_are_written_as_named() {
    let sim =
        ["sim", "--trace", "synth:wdev,scale=0.01", "--no-cache", "--replay", "open", "--progress", "none"];
    let mut a = sim.to_vec();
    a.extend(["--cdf", "cdf.png"]);
    check(&a, &["cdf.png"]);
    let mut a = sim.to_vec();
    a.extend(["--cdf", "cdf.csv"]);
    check(&a, &["cdf.csv"]);
    check(
        &[
            "compare",
            "--trace",
            "synth:wdev,scale=0.01",
            "--schemes",
            "smr-only,lru",
            "--progress",
            "none",
            "--cdf",
            "c.png",
        ],
        &["c.png"],
    );
    // Several groups (utilisations): still one chart, a panel per group.
    check(
        &[
            "experiment",
            "smart-response",
            "--on",
            "synth:mds,scale=0.01,span=max",
            "--progress",
            "none",
            "--cdf",
            "smart.png",
        ],
        &["smart.png"],
    );
}

#[test]
fn series_charts_and_csv_are_written_as_named() {
    let compare = [
        "compare",
        "--trace",
        "synth:wdev",
        "--limit",
        "20000",
        "--interval",
        "5000",
        "--schemes",
        "smr-only,lru,sac",
        "--progress",
        "none",
    ];
    let mut a = compare.to_vec();
    a.extend(["--series", "series.png"]);
    check(&a, &["series.png"]);
    let mut a = compare.to_vec();
    a.extend(["--series", "series.csv", "--output", "json"]);
    check(&a, &["series.csv"]);
    check(
        &[
            "sim",
            "--trace",
            "synth:wdev,scale=0.01",
            "--interval",
            "60s",
            "--progress",
            "none",
            "--series",
            "s.png",
        ],
        &["s.png"],
    );
    // An experiment: a row of panels per trace, one chart.
    check(
        &[
            "experiment",
            "pore-ssd-size",
            "--on",
            "synth:wdev,scale=0.005",
            "--on",
            "synth:hm,scale=0.005",
            "--interval",
            "2000",
            "--progress",
            "none",
            "--series",
            "e.png",
        ],
        &["e.png"],
    );
}

#[test]
fn report_drive_bench_store_bench_and_probe_list_their_files() {
    check(
        &[
            "report",
            "--trace",
            "synth:wdev,scale=0.01",
            "--schemes",
            "smr-only,lru",
            "--progress",
            "none",
            "--out",
            "rep",
        ],
        &["rep/report.md", "rep/results.json", "rep/total_time.png"],
    );
    check(&["drive", "bench", "--scale", "0.05", "fig3", "--png", "f.png"], &["f.png"]);
    let dev = tempfile::tempdir().unwrap();
    check(
        &[
            "store",
            "bench",
            "write",
            "--scale",
            "0.002",
            "--dir",
            dev.path().to_str().unwrap(),
            "--png",
            "s.png",
        ],
        &["s.png"],
    );
    check(
        &[
            "probe",
            "all",
            "--drive",
            "sac-emulator",
            "--drive-capacity",
            "2GB",
            "--pb-size",
            "8MiB",
            "--bands",
            "fixed:256KiB",
            "--upper-bound",
            "256MiB",
            "--read-size",
            "32KiB",
            "--csv-dir",
            "ev",
            "--png",
            "probe.png",
            "--drive-file",
            "found.toml",
        ],
        &["probe-pb-iops.png", "ev/pb_iops.csv", "found.toml"],
    );
}
