//! The `shingled` binary as a user runs it: exit codes, error messages, output formats.

use std::path::PathBuf;
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn data(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn trace_stats_prints_table_i_row() {
    let o = shingled(&["trace", "stats", &data("traces/msr.csv")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("4 KiB page requests") && s.contains("written LBA range"), "{s}");
    let o = shingled(&["trace", "stats", "--json", &data("traces/msr.csv")]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["requests"], 5);
}

#[test]
fn malformed_trace_is_an_error_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    std::fs::write(&p, "128166372000000000,h,0,Write,4096,4096,1\n128166372000000001,h,0,Write,xyz,4096,1\n")
        .unwrap();
    let o = shingled(&["trace", "stats", "--format", "msr", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("bad.csv:2") && e.contains("Offset") && e.contains("xyz"), "{e}");
    // --skip-bad-lines counts and goes on
    let o = shingled(&["trace", "stats", "--format", "msr", "--skip-bad-lines", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("skipped lines"), "{}", stdout(&o));
}

#[test]
fn sim_json_and_csv_outputs_parse() {
    let cfg = data("golden/tiny.toml");
    let trace = data("golden/tiny.csv");
    let o = shingled(&["sim", "-c", &cfg, "--trace", &trace, "--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["total"]["requests"], 40);
    assert!(v["total"]["write_amplification"].as_f64().unwrap() > 1.0);
    let o = shingled(&["sim", "-c", &cfg, "--trace", &trace, "--output", "csv"]);
    let s = stdout(&o);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 3, "header + total + after-warmup: {s}");
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
}

#[test]
fn absolute_sizes_and_paper_costs_read_the_trace_once() {
    let trace = "synth:hm,scale=0.002";
    let base = ["sim", "--trace", trace, "--cache-size", "8MiB", "--pb-size", "4MiB", "--output", "json"];
    let run = |extra: &[&str]| {
        let o = shingled(&[&base[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    // Paper costs: no measuring pass, so no ranges; the policy got the paper's constants.
    let once = run(&["--policy", "sac", "--costs", "paper"]);
    assert!(once["sizing"]["written_range"].is_null(), "{}", once["sizing"]);
    assert_eq!(once["sizing"]["costs"]["rmw_fixed_ms"], 436.0);
    // Fitted costs measure the footprint first (and report it).
    let fitted = run(&["--policy", "sac", "--costs", "fitted"]);
    assert!(fitted["sizing"]["written_range"].is_string(), "{}", fitted["sizing"]);
    // A relative size too; the counts do not depend on the path taken.
    let lru_once = run(&["--policy", "lru"]);
    let lru_two = run(&["--policy", "lru", "--warmup", "10%"]);
    assert!(lru_once["sizing"]["written_range"].is_null() && lru_two["sizing"]["written_range"].is_string());
    assert_eq!(lru_once["total"], lru_two["total"]);
    let o = shingled(&[&base[..], &["--policy", "sac", "--costs", "guessed"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("guessed"), "{}", stderr(&o));
    // The text report says the ranges were not measured.
    let o =
        shingled(&["sim", "--trace", trace, "--cache-size", "8MiB", "--pb-size", "4MiB", "--policy", "lru"]);
    assert!(stdout(&o).contains("ranges not measured"), "{}", stdout(&o));
}

#[test]
fn compare_runs_the_schemes_asked() {
    let o = shingled(&[
        "compare",
        "-c",
        &data("golden/tiny.toml"),
        "--trace",
        &data("golden/tiny.csv"),
        "--schemes",
        "smr-only,lru",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("smr-only") && s.contains("lru") && !s.contains("cmr-only"), "{s}");
    let o = shingled(&["compare", "--schemes", "smr-only,bogus"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bogus"), "{}", stderr(&o));
}

/// `--interval` gives each scheme's windows: in the JSON (summing to the run's totals) and as a
/// table per run after the report; nothing of it without the flag.
#[test]
fn compare_with_an_interval_reports_each_schemes_windows() {
    let args = [
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
    let mut json = args.to_vec();
    json.extend(["--output", "json"]);
    let o = shingled(&json);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        let s = r["series"].as_array().unwrap_or_else(|| panic!("{}: no series", r["label"]));
        assert_eq!(s.len(), 4, "{}", r["label"]);
        let sum = |k: &str| s.iter().map(|w| w[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("requests"), 20_000);
        assert_eq!(sum("rmws"), r["total"]["drive"]["rmws"].as_u64().unwrap(), "{}", r["label"]);
        assert_eq!(sum("read_hits"), r["total"]["read_hits"].as_u64().unwrap());
        assert_eq!(s[3]["last_request"], 20_000);
        assert!(s[0]["pb_fill"].is_f64(), "a DM-SMR drive has a PB fill");
    }
    let o = shingled(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for label in ["smr-only", "lru", "sac"] {
        let head =
            format!("Metrics over time: {label} on synth:wdev (a window every 5000 requests; 4 windows)");
        assert!(out.contains(&head), "{out}");
    }
    assert!(out.contains("15001-20000"), "{out}");
    // Without --interval, nothing of it.
    let o = shingled(&args[..5].iter().chain(&args[7..]).copied().collect::<Vec<_>>());
    assert!(!stdout(&o).contains("Metrics over time"));
}

/// A drive flag given to an experiment changes the experiment's own set-up (SAC's drive with a
/// larger PB), not the default one's; its claims then say the set-up changed.
#[test]
fn an_experiments_drive_flag_changes_its_own_setup() {
    let o = shingled(&[
        "experiment",
        "sac-cycle",
        "--on",
        "synth:wdev,scale=0.02",
        "--pb-size",
        "1/32",
        "--progress",
        "none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("set-up sac [changed: drive pb size = 1/32 (sac: "), "{s}");
    assert!(!s.contains("set-up pore"), "{s}");
    let o = shingled(&["experiment", "sac-cycle", "--on", "synth:wdev,scale=0.02", "--progress", "none"]);
    assert!(stdout(&o).contains("set-up sac: "), "{}", stdout(&o));
}

/// A comparison in a named set-up with a flag changed names the set-up and the change, and
/// still shows the paper's figures, each saying why it has no verdict; in the paper's set-up,
/// the JSON carries each judged claim's factor.
#[test]
fn compare_in_a_changed_setup_names_the_change_and_why_no_verdict() {
    let trace = "synth:wdev,scale=0.02";
    let schemes = "smr-only,cmr-only,lru,lru-band,pore";
    let run = |extra: &[&str]| {
        let base = ["compare", "--trace", trace, "--schemes", schemes, "--progress", "none"];
        let o = shingled(&[&base[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    let s = stdout(&run(&["--setup", "sac", "--write-cache", "on"]));
    assert!(s.contains("set-up sac [changed: drive write cache enabled = true (sac: false)]: "), "{s}");
    assert!(!s.contains("set-up custom"), "{s}");
    // The claims table's rows (the WA definition under the first table cites §V-C too).
    let claims: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.starts_with("the paper's figures beside ours"))
        .filter(|l| l.contains("PORE §V-C"))
        .collect();
    assert!(claims.len() >= 8, "the paper's figures are shown: {s}");
    for l in &claims {
        assert!(l.contains("no verdict: "), "{l}");
    }
    // The set-up is the reason wherever the traces would have allowed a verdict (figures PORE
    // states on each of wdev, mds, ts and usr).
    assert!(claims.iter().any(|l| l.contains("no verdict: set-up sac, not the paper's (pore)")), "{s}");
    assert!(s.contains("docs/reproduction.md#how-verdicts-are-decided"), "{s}");

    // PORE's set-up with its drive's write cache turned off.
    let s = stdout(&run(&["--write-cache", "off"]));
    assert!(s.contains("set-up pore [changed: drive write cache enabled = false (pore: true)]"), "{s}");
    assert!(s.contains("no verdict: set-up pore changed, not the paper's"), "{s}");

    // PORE's set-up: judged claims carry their factor, context claims none.
    let v: serde_json::Value = serde_json::from_slice(&run(&["--output", "json"]).stdout).unwrap();
    let claims = v["paper"].as_array().unwrap();
    let by = |text: &str| {
        claims
            .iter()
            .find(|c| c["claim"].as_str().unwrap().starts_with(text))
            .unwrap_or_else(|| panic!("{v}"))
    };
    let judged = by("SMR-only write time / CMR-only write time");
    assert!(!judged["verdict"].as_str().unwrap().starts_with("no verdict"), "{judged}");
    assert!(judged["factor"].as_f64().unwrap() > 0.0, "{judged}");
    let context = by("PORE total I/O time vs SMR-only");
    assert_eq!(context["verdict"], "no verdict: not the paper's traces");
    assert!(context["factor"].is_null());
    assert_eq!(context["paper_covers"], "mean of wdev, mds, ts, usr");
    assert_eq!(context["ours_covers"], "synth:wdev");
}

#[test]
fn bad_flags_are_clear_errors() {
    for (args, needle) in [
        (vec!["sim", "--cache-size", "12XB"], "12XB"),
        (vec!["sim", "--mode", "sideways"], "sideways"),
        (vec!["sim", "--drive", "floppy"], "floppy"),
        (vec!["sim", "--bands", "fixed:0"], "fixed:0"),
        (vec!["sim", "--trace", "/nonexistent/trace.csv"], "/nonexistent/trace.csv"),
        (vec!["sim", "--trace", "synth:nosuch"], "nosuch"),
    ] {
        let o = shingled(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn config_prints_toml_that_loads_back() {
    let o = shingled(&["config", "--mode", "write-only", "--policy", "lru", "--cache-size", "1/50"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    std::fs::write(&p, &o.stdout).unwrap();
    let again = shingled(&["config", "-c", p.to_str().unwrap()]);
    assert_eq!(stdout(&again), stdout(&o));
    assert!(stdout(&o).contains("write-only"));
}

#[test]
fn listings() {
    for (cmd, needle) in [
        (vec!["policies"], "lru"),
        (vec!["drives"], "st5000as0011"),
        (vec!["trace", "formats"], "msr"),
        (vec!["trace", "profiles"], "wdev"),
    ] {
        let o = shingled(&cmd);
        assert!(o.status.success());
        assert!(stdout(&o).contains(needle), "{cmd:?}");
    }
}

#[test]
fn convert_then_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.bin");
    let o = shingled(&["trace", "convert", &data("golden/tiny.csv"), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = shingled(&["trace", "stats", "--json", &data("golden/tiny.csv")]);
    let b = shingled(&["trace", "stats", "--json", out.to_str().unwrap()]);
    let (mut a, mut b): (serde_json::Value, serde_json::Value) =
        (serde_json::from_slice(&a.stdout).unwrap(), serde_json::from_slice(&b.stdout).unwrap());
    a["format"] = "x".into();
    b["format"] = "x".into();
    assert_eq!(a, b);
}

/// `sim` takes lists of policies and cache sizes and runs every combination into one table, the
/// same numbers as the single runs; parameters with commas stay with their policy.
#[test]
fn sim_runs_lists_of_policies_and_cache_sizes() {
    let trace = "synth:wdev,scale=0.01";
    let o = shingled(&[
        "sim",
        "--trace",
        trace,
        "--mode",
        "write-only",
        "--policy",
        "lru,pore:scheme=cf,zone_size=10MiB",
        "--cache-size",
        "1%,2%",
        "--output",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let labels: Vec<&str> =
        v["experiment"]["cells"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        ["lru 1%", "lru 2%", "pore:scheme=cf,zone_size=10MiB 1%", "pore:scheme=cf,zone_size=10MiB 2%"]
    );
    let one = shingled(&[
        "sim",
        "--trace",
        trace,
        "--mode",
        "write-only",
        "--policy",
        "lru",
        "--cache-size",
        "2%",
        "--output",
        "json",
    ]);
    let one: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(v["runs"][1]["total"]["drive"]["rmws"], one["total"]["drive"]["rmws"]);
    assert_eq!(v["runs"][1]["total"]["write_hits"], one["total"]["write_hits"]);
    let o = shingled(&["sim", "--trace", trace, "--policy", "lru,nosuch"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nosuch"), "{}", stderr(&o));
}

/// `--policy pore:zones=bands` (PORE whose zones are the drive's bands, our extension) runs on
/// the default drive, beside the paper's fixed-size zones, and is refused naming the field on a
/// drive without bands.
#[test]
fn sim_runs_pore_with_band_zones() {
    let base = ["sim", "--trace", "synth:wdev,scale=0.01", "--mode", "write-only", "--limit", "5000"];
    let o = shingled(&[&base[..], &["--policy", "pore,pore:zones=bands", "--output", "json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let labels: Vec<&str> =
        v["experiment"]["cells"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["pore", "pore:zones=bands"]);
    for run in v["runs"].as_array().unwrap() {
        // The limit counts trace requests; write-only replays the writes among them.
        let requests = run["total"]["requests"].as_u64().unwrap();
        assert!(requests > 0 && requests <= 5000, "{run}");
        assert!(run["total"]["drive"]["rmws"].as_u64().is_some(), "{run}");
    }
    let o = shingled(&[&base[..], &["--drive", "cmr-7200-500g", "--policy", "pore:zones=bands"]].concat());
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("zones") && e.contains("band map"), "{e}");
}

/// A closed stdout (`shingled … | head`) never makes a command panic: listings end quietly with
/// exit 0, and a multi-file `store put` still stores every file.
#[test]
fn a_closed_stdout_ends_output_quietly() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("d.zbd");
    let dev = dev.to_str().unwrap();
    let run_closed = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_shingled"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away before anything is printed
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    };
    run_closed(&[
        "store",
        "format",
        dev,
        "--create",
        "--zones",
        "12",
        "--zone-size",
        "4MiB",
        "--metazones",
        "2",
    ]);
    let files: Vec<String> = (0..4)
        .map(|i| {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, vec![i as u8; 5000]).unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect();
    let mut put = vec!["store", "put", dev];
    put.extend(files.iter().map(String::as_str));
    run_closed(&put);
    let ls = shingled(&["store", "ls", dev]);
    assert_eq!(stdout(&ls).lines().count(), 1 + 4, "every file stored: {}", stdout(&ls));
    let zdev = dir.path().join("z.img");
    let zdev = zdev.to_str().unwrap();
    assert!(shingled(&["zone", "create", zdev, "--zone-size", "1MiB", "--zones", "64"]).status.success());
    for args in [
        vec!["store", "ls", dev],
        vec!["zone", "report", zdev],
        vec!["drives"],
        vec!["policies"],
        vec!["trace", "profiles"],
        vec!["trace", "formats"],
        vec!["experiment", "list"],
        vec!["sim", "--trace", "synth:wdev,scale=0.01"],
    ] {
        run_closed(&args);
    }
}

/// `trace convert` and `trace mix` refuse an output that is their input (the same path, a hard
/// link or a symbolic link), which used to destroy the trace; a failed conversion leaves the
/// output as it was; absurd copy counts are refused instead of aborting.
#[test]
fn convert_and_mix_never_destroy_their_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.csv");
    std::fs::copy(data("traces/msr.csv"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let hard = dir.path().join("hard.csv");
    std::fs::hard_link(&input, &hard).unwrap();
    let soft = dir.path().join("soft.csv");
    std::os::unix::fs::symlink(&input, &soft).unwrap();
    let i = input.to_str().unwrap();
    for out in [i, hard.to_str().unwrap(), soft.to_str().unwrap()] {
        let o = shingled(&["trace", "convert", i, "-o", out]);
        assert_eq!(o.status.code(), Some(1), "convert to {out}");
        assert!(stderr(&o).contains("is the input"), "{}", stderr(&o));
        let o = shingled(&["trace", "mix", i, "--copies", "2", "-o", out]);
        assert_eq!(o.status.code(), Some(1), "mix to {out}");
        assert!(stderr(&o).contains("is the input"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&input).unwrap(), before, "input changed writing {out}");
    }
    // A bad input line: the existing output is left alone, no temporary remains.
    let out = dir.path().join("out.bin");
    std::fs::write(&out, b"keep me").unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "128166372003061629,hm,0,Write,0,4096,1\nnot,a,line\n").unwrap();
    let o = shingled(&["trace", "convert", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 5, "no temporary left behind");
    let o = shingled(&["trace", "mix", i, "--copies", "4294967295", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("at most"), "{}", stderr(&o));
}

/// Errors name what is wrong once: no I/O message printed twice, no "did not match any variant
/// of untagged enum", sizes that hold no block or use exponents refused by name.
#[test]
fn error_messages_name_the_value_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["sim".into(), "--trace".into(), "/nonexistent/t.csv".into()], "No such file or directory"),
        (
            vec!["sim".into(), "--policy".into(), "pore:zone_size=-1".into()],
            "-1: a size or count cannot be negative",
        ),
        (vec!["sim".into(), "--cache-size".into(), "1e99".into()], "exponent notation"),
        (
            vec![
                "sim".into(),
                "--trace".into(),
                "synth:wdev,scale=0.01".into(),
                "--cache-size".into(),
                "0".into(),
            ],
            "holds no 4 KiB block",
        ),
    ];
    let toml = dir.path().join("bad.toml");
    std::fs::write(&toml, "[cache]\npolicy = { policy = \"pore\", zone_size = -1 }\n").unwrap();
    let mut cases = cases;
    cases.push((vec!["sim".into(), "-c".into(), toml.to_str().unwrap().into()], "cannot be negative"));
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = shingled(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: {e}");
        assert!(!e.contains("untagged enum"), "{args:?}: {e}");
        if needle == "No such file or directory" {
            assert_eq!(e.matches(needle).count(), 1, "printed twice: {e}");
        }
    }
    // A context the cause repeats is said once, and a note is not printed before an error.
    let img = dir.path().join("exists.img");
    std::fs::write(&img, b"").unwrap();
    let o = shingled(&["zone", "create", img.to_str().unwrap(), "--zones", "4", "--zone-size", "1MiB"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(e.contains("File exists") && e.matches("creating").count() == 1 && !e.contains("note:"), "{e}");
}

/// A bad value inside a drive table is located by line, column and field (serde reads a
/// tagged drive into a buffer, so toml alone points at the table header), and a bad band layout
/// is a configuration error, not "reading trace".
#[test]
fn config_errors_point_at_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = stdout(&shingled(&["config"]));
    let line = good.lines().position(|l| l.trim() == "[drive.mechanism]").unwrap() + 2;
    assert!(good.lines().nth(line - 1).unwrap().starts_with("rpm = "), "{good}");
    let bad: String = good
        .lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { "rpm = -5900\n".to_string() } else { format!("{l}\n") })
        .collect();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, bad).unwrap();
    let e = stderr(&shingled(&["sim", "-c", p.to_str().unwrap()]));
    assert!(
        e.contains(&format!("line {line}, column 1, field drive.mechanism.rpm")) && e.contains("-5900"),
        "{e}"
    );
    let bands = good.replace("min = \"17000000\"", "min = \"40000000\"");
    assert_ne!(bands, good);
    std::fs::write(&p, bands).unwrap();
    let o = shingled(&["sim", "-c", p.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(e.contains("configuration field drive.bands") && !e.contains("reading trace"), "{e}");
}

/// Open-loop replay from the command line: response-time rows in the table, the replay columns
/// in CSV, the CDF as CSV and as a chart; a bad time scale is refused by name.
#[test]
fn open_loop_replay_reports_response_times_and_the_cdf() {
    let dir = tempfile::tempdir().unwrap();
    let trace = "synth:wdev,scale=0.01";
    let cdf = dir.path().join("cdf.csv");
    let o = shingled(&[
        "sim",
        "--trace",
        trace,
        "--no-cache",
        "--replay",
        "open",
        "--cdf",
        cdf.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("response mean / p50 / p90 (ms)") && t.contains("queueing SSD / drive"), "{t}");
    let csv = std::fs::read_to_string(&cdf).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("group,label,latency_ms,fraction"));
    let pts: Vec<(f64, f64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect();
    assert!(pts.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "a CDF rises");
    assert_eq!(pts.last().unwrap().1, 1.0);
    let png = dir.path().join("cdf.png");
    let o = shingled(&[
        "sim",
        "--trace",
        trace,
        "--no-cache",
        "--replay",
        "open",
        "--output",
        "csv",
        "--cdf",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let t = stdout(&o);
    let header: Vec<&str> = t.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = t.lines().nth(1).unwrap().split(',').collect();
    let col = |n: &str| row[header.iter().position(|h| *h == n).unwrap()];
    assert_eq!(col("replay"), "open");
    assert!(col("drive_queue_time_s").parse::<f64>().unwrap() >= 0.0);
    // An experiment over several groups: one chart per group.
    let charts = dir.path().join("smart.png");
    let o = shingled(&[
        "experiment",
        "smart-response",
        "--on",
        "synth:mds,scale=0.01,span=max",
        "--cdf",
        charts.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // One chart at the path named, a panel per group, and the line naming it.
    assert!(std::fs::read(&charts).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3, "cdf.csv, cdf.png, smart.png only");
    assert!(
        stderr(&o).contains(&format!("wrote {} (3 panels, one per group", charts.display())),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("SMaRT's mean response time below Skylight's"), "{}", stdout(&o));
    let e = stderr(&shingled(&["sim", "--trace", trace, "--replay", "open", "--time-scale", "0"]));
    assert!(e.contains("--time-scale 0: expected a finite number > 0"), "{e}");
    let e = stderr(&shingled(&["sim", "--trace", trace, "--replay", "sideways"]));
    assert!(e.contains("unknown replay"), "{e}");
}

/// An experiment refuses the flags it would silently drop, naming them and the way to do it.
#[test]
fn experiments_refuse_flags_they_would_ignore() {
    for (args, says) in [
        (vec!["experiment", "sac-rw", "--trace", "synth:wdev"], "sets --trace itself"),
        (vec!["experiment", "pore-overall", "--policy", "lru"], "sets --policy itself"),
        (vec!["experiment", "pore-overall", "--no-cache"], "sets --no-cache itself"),
        (vec!["experiment", "pore-ssd-size", "--cache-size", "3%"], "sets --cache-size itself"),
        (vec!["experiment", "smart-gc", "--drive", "st8000as0002"], "sets --drive/--drive-file itself"),
        (vec!["experiment", "cache-open-loop", "--replay", "closed"], "sets --replay itself"),
    ] {
        let o = shingled(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains(says) && e.contains("would be ignored"), "{args:?}: {e}");
    }
    assert!(stderr(&shingled(&["experiment", "sac-rw", "--trace", "t"])).contains("with --on"));
    // A cache size an experiment does not sweep still applies.
    let o = shingled(&["experiment", "pore-overall", "--on", "synth:wdev,scale=0.01", "--cache-size", "3%"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Inputs that used to hang or be accepted by mistake are refused by name: a FIFO as the trace
/// (read twice: the second open blocked forever), `--zone-capacity 0`, a metadata chunk limit
/// that no metadata put could meet.
#[test]
fn fifos_and_zero_sizes_are_refused_not_hung_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let img = dir.path().join("z.img");
    let dev = dir.path().join("d.zbd");
    let (fifo, img, dev) = (fifo.to_str().unwrap(), img.to_str().unwrap(), dev.to_str().unwrap());
    let zones = "--zones 12 --zone-size 4MiB --metazones 2";
    for (args, needle) in [
        (format!("sim --trace {fifo}"), "is a FIFO"),
        (format!("zone create {img} --zones 4 --zone-size 1MiB --zone-capacity 0"), "--zone-capacity 0"),
        (format!("store format {dev} --create {zones} --metadata-chunk-limit 0"), "--metadata-chunk-limit"),
    ] {
        let args: Vec<&str> = args.split(' ').collect();
        let o = shingled(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    assert!(!std::path::Path::new(dev).exists(), "a refused format --create leaves no file");
}

#[test]
fn curve_prints_every_point_validates_and_writes_json_csv_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("c.png");
    let trace = "synth:wdev,scale=0.02";
    let o = shingled(&[
        "curve",
        "--trace",
        trace,
        "--policy",
        "lru,most",
        "--cache-size",
        "1%,4%",
        "--rate",
        "0.5",
        "--bands",
        "uniform:512KiB:1536KiB",
        "--validate",
        "2",
        "--progress",
        "none",
        "--png",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("4 points, rate 0.5000 by band"), "{s}");
    assert!(
        s.contains("error of the sampled points") && s.contains("hit_ratio") && s.contains("rmws"),
        "{s}"
    );
    assert!(png.exists() && !dir.path().join("c-wa.png").exists(), "one chart, at the path named");
    assert!(stderr(&o).contains(&format!("wrote {} (4 panel(s)", png.display())), "{}", stderr(&o));
    let o = shingled(&[
        "curve",
        "--trace",
        trace,
        "--cache-size",
        "1%,2%,4%",
        "--rate",
        "1",
        "--output",
        "json",
        "--progress",
        "none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    // At rate 1 LRU's simulated hit ratio is the exact one.
    for p in points {
        assert_eq!(p["method"], "full");
        assert_eq!(p["metrics"]["hit_ratio"], p["exact_hit_ratio"]);
    }
    let o = shingled(&[
        "curve",
        "--trace",
        trace,
        "--cache-size",
        "1%",
        "--rate",
        "0.3",
        "--output",
        "csv",
        "--progress",
        "none",
    ]);
    let csv = stdout(&o);
    assert!(
        csv.starts_with("policy,cache_size,cache_blocks,pb_size,pb_blocks,method,rate,hit_ratio,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 2, "{csv}");
}

#[test]
fn curve_refuses_bad_rates_sizes_and_policies_with_a_message() {
    for (args, says) in [
        (vec!["--rate", "0"], "must be in (0, 1]"),
        (vec!["--rate", "1.5"], "must be in (0, 1]"),
        (vec!["--rate", "fast"], "invalid rate"),
        (vec!["--cache-size", ","], "--cache-size names no size"),
        (vec!["--policy", "nope"], "unknown policy"),
        (vec!["--unit", "stripe"], "band or zone"),
        (vec!["--samples", "0"], "at least 1"),
        (vec!["--samples", "65"], "at most 64 samples per point"),
    ] {
        let mut a = vec!["curve", "--trace", "synth:wdev,scale=0.01", "--progress", "none"];
        a.extend(args.iter());
        let o = shingled(&a);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

/// A warm-up the trace never reaches leaves no window: no point, validated run or exact LRU
/// figure is reported for it (the exact pass once gave the whole run's hit ratio there).
#[test]
fn curve_with_a_warm_up_never_reached_reports_no_figures() {
    let a = [
        "curve",
        "--trace",
        "synth:wdev,scale=0.01",
        "--policy",
        "lru",
        "--cache-size",
        "2%",
        "--rate",
        "1",
        "--warmup",
        "1000000000",
        "--validate",
        "1",
        "--output",
        "json",
        "--progress",
        "none",
    ];
    let o = shingled(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &c["points"][0];
    assert!(p["exact_hit_ratio"].is_null(), "{p}");
    assert!(p["full"].is_null(), "{p}");
}

/// `curve --warmup W` reports `sim --warmup W`'s after-warmup window (rate 1: the same runs).
#[test]
fn curve_with_a_warm_up_reports_the_window_sim_reports_after_it() {
    let trace = "synth:wdev,scale=0.02";
    for policy in ["lru", "sac"] {
        let common = ["--trace", trace, "--policy", policy, "--cache-size", "2%", "--warmup", "3000"];
        let mut a = vec!["curve", "--rate", "1", "--output", "json", "--progress", "none"];
        a.extend(common);
        let o = shingled(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(c["window"], "after-warmup (3000)");
        let mut a = vec!["sim", "--output", "json", "--progress", "none"];
        a.extend(common);
        let o = shingled(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let (p, after) = (&c["points"][0], &s["after_warmup"]);
        assert_ne!(s["total"]["hit_ratio"], after["hit_ratio"], "the window is not the whole run");
        assert_eq!(p["metrics"]["hit_ratio"], after["hit_ratio"], "{policy}");
        assert_eq!(p["metrics"]["rmws"].as_f64(), after["drive"]["rmws"].as_f64(), "{policy}");
        assert_eq!(p["metrics"]["total_time_s"], after["total_time_s"], "{policy}");
        if policy == "lru" {
            assert_eq!(p["exact_hit_ratio"], after["hit_ratio"], "LRU's exact curve over the same window");
        }
    }
}

/// The curve forms of experiments print the experiment's table with each trace's curve summary,
/// write JSON with the curves, CSV rows and charts; the full-run forms refuse --png.
#[test]
fn a_curve_experiment_prints_its_table_json_csv_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("fig16.png");
    let trace = "synth:wdev,scale=0.02";
    let base = ["experiment", "pore-ssd-size-curve", "--on", trace, "--progress", "none", "--rate", "1"];
    let mut a = base.to_vec();
    a.extend(["--validate", "2", "--png", png.to_str().unwrap()]);
    let o = shingled(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("lru 0.5%") && s.contains("pore-bl 5%"), "{s}");
    assert!(s.contains("full simulations at rate 1.0000") && s.contains("LRU's exact hit ratio"), "{s}");
    assert!(s.contains("validated against full simulations: lru 0.5%, pore-bl 5%"), "{s}");
    assert!(png.exists() && !dir.path().join("fig16-wa.png").exists(), "one chart, at the path named");
    assert!(stderr(&o).contains(&format!("wrote {} (4 panels", png.display())), "{}", stderr(&o));
    let mut a = base.to_vec();
    a.extend(["--output", "json"]);
    let o = shingled(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 30);
    assert_eq!(v["curves"].as_array().unwrap().len(), 1);
    assert_eq!(v["curves"][0]["rate"], 1.0);
    let mut a = base.to_vec();
    a.extend(["--output", "csv"]);
    let o = shingled(&a);
    // One `total` row per point, and its after-warm-up row (the cache first full), as a
    // full-run experiment's CSV has.
    let csv = stdout(&o);
    assert_eq!(csv.lines().filter(|l| l.contains(",total,")).count(), 30, "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains(",after-warmup,")).count(), 30, "{csv}");
    let o = shingled(&["experiment", "pore-ssd-size", "--on", trace, "--png", png.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--png draws the curve forms"), "{}", stderr(&o));
    let o = shingled(&["experiment", "pore-ssd-size-curve", "--on", trace, "--cdf", "x.csv"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--cdf"), "{}", stderr(&o));
}

/// `trace convert` writes libCacheSim's oracleGeneral when the output's name says so (zstd for
/// `.zst`) or `--to oracleGeneral`; the file reads back as the same 4 KiB blocks.
#[test]
fn convert_to_oracle_general_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    // time,key,size,op: blocks 5, 6, 5 (next accesses 3, -1, -1).
    std::fs::write(&csv, "ts,key,size,op\n1,5,100,write\n2,6,100,read\n3,5,100,w\n").unwrap();
    let params = "obj-id-col=2,time-col=1,obj-size-col=3,op-col=4,has-header=true";
    let og = dir.path().join("t.oracleGeneral");
    let o = shingled(&[
        "trace",
        "convert",
        csv.to_str().unwrap(),
        "--format",
        "csv",
        "--trace-params",
        params,
        "-o",
        og.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = std::fs::read(&og).unwrap();
    assert_eq!(b.len(), 3 * 24);
    let field = |r: usize, a: usize, n: usize| {
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(&b[r * 24 + a..r * 24 + a + n]);
        i64::from_le_bytes(v)
    };
    let rec = |r| (field(r, 0, 4), field(r, 4, 8), field(r, 12, 4), field(r, 16, 8));
    assert_eq!([rec(0), rec(1), rec(2)], [(1, 5, 4096, 3), (2, 6, 4096, -1), (3, 5, 4096, -1)]);
    // Compressed, under another name, with --to.
    let zst = dir.path().join("out.zst");
    let o = shingled(&[
        "trace",
        "convert",
        og.to_str().unwrap(),
        "--to",
        "oracleGeneral",
        "-o",
        zst.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(&std::fs::read(&zst).unwrap()[..4], &[0x28, 0xb5, 0x2f, 0xfd]);
    let o = shingled(&["trace", "stats", "--json", "--format", "oracleGeneral", zst.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["requests"].as_u64(), v["write_requests"].as_u64()), (Some(3), Some(0)), "{v}");
    let o = shingled(&["trace", "stats", "--json", "--trace-params", "op=write", og.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["write_requests"].as_u64(), Some(3), "{v}");
    // Bad parameters and bad --to: non-zero exits naming them.
    let o = shingled(&[
        "trace",
        "stats",
        "--format",
        "csv",
        "--trace-params",
        "obj-id-col=7",
        csv.to_str().unwrap(),
    ]);
    assert!(!o.status.success() && stderr(&o).contains("missing column 7"), "{}", stderr(&o));
    let o = shingled(&["trace", "convert", og.to_str().unwrap(), "--to", "msr", "-o", zst.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("--to"), "{}", stderr(&o));
}

/// `compare` with the offline schemes shows their bounds: each scheme's hits below Belady's MIN
/// and RMWs over the offline RMW bound, as a table and in the JSON and CSV; a curve and a cache
/// device refuse an offline policy, naming it.
#[test]
fn compare_shows_the_offline_bounds_and_offline_policies_are_refused_where_blind() {
    let cfg = data("golden/tiny.toml");
    let trace = data("golden/small.csv");
    let compare = |output: &str| {
        let schemes = "lru,sac:band_size=16KiB,belady,band-min";
        let o = shingled(&[
            "compare",
            "-c",
            &cfg,
            "--trace",
            &trace,
            "--schemes",
            schemes,
            "--cache-size",
            "24blocks",
            "--output",
            output,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let s = compare("table");
    assert!(s.contains("distance to the offline bounds") && s.contains("RMW bound"), "{s}");
    assert!(s.contains("below MIN") && s.contains("over bound"), "{s}");
    let v: serde_json::Value = serde_json::from_str(&compare("json")).unwrap();
    let runs = v["runs"].as_array().unwrap();
    let bound = runs[2]["offline_bound"]["rmw_lower_bound"].as_u64().expect("belady's run carries the bound");
    assert_eq!(runs[3]["offline_bound"]["rmw_lower_bound"].as_u64(), Some(bound));
    assert!(runs[0].get("offline_bound").is_none(), "an online run computes no bound");
    let hits = |r: &serde_json::Value| {
        r["total"]["read_hits"].as_u64().unwrap() + r["total"]["write_hits"].as_u64().unwrap()
    };
    for r in runs {
        assert!(hits(r) <= hits(&runs[2]), "{} beats Belady's MIN", r["label"]);
        assert!(r["total"]["drive"]["rmws"].as_u64().unwrap() >= bound, "{} under the bound", r["label"]);
    }
    let csv = compare("csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "rmw_lower_bound").expect("a rmw_lower_bound column");
    let belady_row = csv.lines().find(|l| l.starts_with("belady,total")).unwrap();
    assert_eq!(belady_row.split(',').nth(col), Some(bound.to_string().as_str()));

    let o =
        shingled(&["sim", "-c", &cfg, "--trace", &trace, "--policy", "band-min", "--cache-size", "24blocks"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("offline RMW bound (no policy cleans fewer"), "{}", stdout(&o));
    let o = shingled(&["curve", "-c", &cfg, "--trace", &trace, "--policy", "belady", "--progress", "none"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("belady is offline"), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let (cache, backing) = (dir.path().join("cache.img"), dir.path().join("backing.img"));
    std::fs::write(&backing, vec![0u8; 1 << 20]).unwrap();
    let o = shingled(&[
        "cache",
        "create",
        cache.to_str().unwrap(),
        "--backing",
        backing.to_str().unwrap(),
        "--size",
        "256KiB",
        "--policy",
        "band-min",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("band-min") && stderr(&o).contains("offline"), "{}", stderr(&o));
}

/// `experiment --offline` adds Belady's MIN and band-min per set-up of the runs, shows the
/// distance to the bounds under each trace's table, and leaves the paper's claims as they were;
/// a curve form refuses it.
#[test]
fn experiment_offline_adds_the_bounds_and_keeps_the_claims() {
    let base = ["experiment", "pore-overall", "--on", "synth:wdev,scale=0.02", "--mode", "write-only"];
    let run = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra);
        let o = shingled(&a);
        assert!(o.status.success(), "{a:?}: {}", stderr(&o));
        o
    };
    let plain: serde_json::Value = serde_json::from_slice(&run(&["--output", "json"]).stdout).unwrap();
    let off: serde_json::Value =
        serde_json::from_slice(&run(&["--offline", "--output", "json"]).stdout).unwrap();
    assert_eq!(plain["paper"], off["paper"], "the offline rows changed the paper's claims");
    let labels: Vec<&str> =
        off["runs"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"belady") && labels.contains(&"band-min"), "{labels:?}");
    assert_eq!(labels.len(), plain["runs"].as_array().unwrap().len() + 2, "one set-up: two offline rows");
    let table = stdout(&run(&["--offline"]));
    assert!(table.contains("distance to the offline bounds") && table.contains("RMW bound"), "{table}");
    let o = shingled(&["experiment", "pore-ssd-size-curve", "--on", "synth:wdev,scale=0.02", "--offline"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("offline schemes need the whole trace"), "{}", stderr(&o));
}
