//! The output convention (`crates/cli/src/output.rs`) on every command that prints a report:
//! `--output json` prints JSON, `--output csv` a header line and rows, `-o FILE` (`--out FILE`
//! where `-o` is another flag) writes the report there and nothing to stdout, a FILE ending in
//! .json or .csv picks the format, and an unknown `--output` fails naming the formats.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled"))
        .args(args)
        .args(["--progress", "none"])
        .output()
        .expect("run shingled")
}

fn ok(args: &[&str]) -> String {
    let o = shingled(args);
    assert!(o.status.success(), "{args:?} failed ({}):\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn golden(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/golden")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

const TRACE: &str = "synth:hm,scale=0.005";

/// A command that prints a report, and the spelling of its output-file flag.
struct Case {
    args: Vec<String>,
    out_flag: &'static str,
}

fn case(args: &[&str]) -> Case {
    Case { args: args.iter().map(|a| a.to_string()).collect(), out_flag: "-o" }
}

/// Every command that prints a report, on small inputs made in `dir`.
fn cases(dir: &Path) -> Vec<Case> {
    // Devices the metadata commands read.
    let backing = dir.join("backing.img");
    std::fs::File::create(&backing).unwrap().set_len(32 << 20).unwrap();
    let cache = dir.join("cache.img");
    ok(&["cache", "create", s(&cache), "--backing", s(&backing), "--size", "4MiB", "--policy", "lru"]);
    let stl = dir.join("stl.img");
    ok(&["stl", "format", "smart", s(&stl), "--size", "16MiB", "--track-size", "64KiB", "--zones", "2"]);
    let store = dir.join("store.zbd");
    ok(&[
        "store",
        "format",
        s(&store),
        "--create",
        "--zones",
        "12",
        "--zone-size",
        "1MiB",
        "--metazones",
        "2",
    ]);
    let replay_target = dir.join("replay.img");
    std::fs::File::create(&replay_target).unwrap().set_len(8 << 20).unwrap();
    let zoned = dir.join("zoned.zbd");
    ok(&["zone", "create", s(&zoned), "--zones", "4", "--zone-size", "1MiB", "--conventional", "1"]);
    let file = dir.join("f.txt");
    std::fs::write(&file, b"a chunk\n").unwrap();
    ok(&["store", "put", s(&store), s(&file)]);
    // `zone create` makes a new file each run (see `run`).
    let zone_new = format!("NEW:{}", s(&dir.join("new")));
    let (small, tiny) = (golden("small.csv"), golden("tiny.toml"));
    let limit = ["--limit", "2000"];
    let mut v = vec![
        case(&["sim", "--trace", TRACE, "--policy", "lru", limit[0], limit[1]]),
        case(&["sim", "--trace", TRACE, "--policy", "lru,sac", limit[0], limit[1]]),
        case(&["compare", "--trace", TRACE, "--schemes", "smr-only,lru", limit[0], limit[1]]),
        case(&[
            "curve",
            "--trace",
            TRACE,
            "--policy",
            "lru",
            "--cache-size",
            "1%,4%",
            "--rate",
            "1",
            limit[0],
            limit[1],
        ]),
        case(&["experiment", "sac-write-only-curve", "--on", "synth:wdev,scale=0.005", "--rate", "1"]),
        case(&["trace", "stats", TRACE]),
        case(&["drive", "bench", "fig3", "--scale", "0.02"]),
        case(&[
            "probe",
            "pb",
            "--drive",
            "sac-emulator",
            "--drive-capacity",
            "2GB",
            "--pb-size",
            "8MiB",
            "--upper-bound",
            "256MiB",
        ]),
        case(&["cache", "stats", s(&cache)]),
        case(&["cache", "check", s(&cache)]),
        case(&["cache", "lost", s(&cache)]),
        case(&[
            "cache",
            "replay",
            "-c",
            &tiny,
            "--trace",
            &small,
            "--policy",
            "lru",
            "--cache-size",
            "24KiB",
        ]),
        case(&["replay", "--buffered", "--target", s(&replay_target), "--fold", "--verify", &small]),
        case(&["replay", "--verify", "--target", s(&cache), "--fold", &small]),
        case(&["stl", "check", s(&stl)]),
        case(&["stl", "stats", s(&stl)]),
        case(&["store", "info", s(&store)]),
        case(&["store", "ls", s(&store)]),
        case(&["store", "fsck", s(&store)]),
        case(&["store", "bench", "write", "--scale", "0.002", "--dir", s(dir)]),
        case(&["zone", "report", s(&zoned)]),
        case(&["zone", "create", &zone_new, "--zones", "4", "--zone-size", "1MiB"]),
    ];
    // `zone`: -o is --offset (as blkzone's), so the report file is --out.
    for c in v.iter_mut().filter(|c| c.args[0] == "zone") {
        c.out_flag = "--out";
    }
    v
}

fn with(c: &Case, extra: &[&str]) -> Vec<String> {
    let mut a = c.args.clone();
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

/// Runs the command, an argument `NEW:PATH` replaced by a path not used before (PATH-N.zbd).
fn run(args: &[String]) -> Output {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix("NEW:") {
            Some(p) => format!("{p}-{}.zbd", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            None => a.clone(),
        })
        .collect();
    shingled(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn assert_ok(args: &[String], o: &Output) {
    assert!(o.status.success(), "{args:?} failed ({}):\n{}", o.status, String::from_utf8_lossy(&o.stderr));
}

/// A CSV report: a header line of at least one named column, then at least one row.
fn assert_csv(what: &str, text: &str) {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_else(|| panic!("{what}: empty CSV"));
    assert!(!header.is_empty() && !header.starts_with('{') && !header.starts_with(' '), "{what}: {text}");
    assert!(lines.next().is_some(), "{what}: a header and no row: {text}");
}

#[test]
fn every_report_follows_the_output_convention() {
    let dir = tempfile::tempdir().unwrap();
    for c in cases(dir.path()) {
        let name = c.args[..2].join(" ");
        // --output json: JSON on stdout.
        let a = with(&c, &["--output", "json"]);
        let o = run(&a);
        assert_ok(&a, &o);
        serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .unwrap_or_else(|e| panic!("{a:?}: not JSON ({e}):\n{}", String::from_utf8_lossy(&o.stdout)));
        // --output csv: a header line and rows.
        let a = with(&c, &["--output", "csv"]);
        let o = run(&a);
        assert_ok(&a, &o);
        assert_csv(&name, &String::from_utf8_lossy(&o.stdout));
        // -o FILE: the report in the file, nothing on stdout.
        let file = dir.path().join(format!("{}.out", name.replace(' ', "_")));
        let a = with(&c, &["--output", "json", c.out_flag, s(&file)]);
        let o = run(&a);
        assert_ok(&a, &o);
        assert!(o.stdout.is_empty(), "{a:?}: printed {}", String::from_utf8_lossy(&o.stdout));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{a:?}: {e}"));
        serde_json::from_str::<serde_json::Value>(&text).unwrap_or_else(|e| panic!("{a:?}: {e}:\n{text}"));
        // A FILE ending in .csv is a CSV report without --output.
        let file = dir.path().join(format!("{}.csv", name.replace(' ', "_")));
        let a = with(&c, &[c.out_flag, s(&file)]);
        let o = run(&a);
        assert_ok(&a, &o);
        assert!(o.stdout.is_empty(), "{a:?}: printed {}", String::from_utf8_lossy(&o.stdout));
        assert_csv(&name, &std::fs::read_to_string(&file).unwrap());
        // An unknown format fails at once, naming the formats.
        let a = with(&c, &["--output", "xml"]);
        let o = run(&a);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {e}");
        assert!(
            e.contains("invalid value 'xml' for '--output") && e.contains("table, json, csv"),
            "{a:?}: {e}"
        );
        // The table (the default) is not JSON.
        let o = run(&c.args);
        assert_ok(&c.args, &o);
        eprintln!("{name}: ok");
        assert!(!o.stdout.starts_with(b"{"), "{name}: the default is not the table");
    }
}

/// The former spellings still work: `trace stats --json`, `zone report --json`, `drive bench
/// --json FILE`/`--csv FILE`, `trace convert --output FILE`.
#[test]
fn former_flags_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&["trace", "stats", TRACE, "--json"])).unwrap();
    assert!(v["requests"].as_u64().unwrap() > 0);
    let (j, c) = (dir.path().join("b.json"), dir.path().join("b.csv"));
    let table = ok(&["drive", "bench", "fig3", "--scale", "0.02", "--json", s(&j), "--csv", s(&c)]);
    assert!(!table.is_empty());
    serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_csv("drive bench --csv", &std::fs::read_to_string(&c).unwrap());
    let bin = dir.path().join("t.bin");
    ok(&["trace", "convert", TRACE, "--output", s(&bin)]);
    assert!(std::fs::metadata(&bin).unwrap().len() > 0);
}

/// A command with several charts writes them beside `--png FILE`, named FILE's stem +
/// `-<name>.png`.
#[test]
fn several_charts_are_named_after_the_png_file() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("ev.png");
    ok(&[
        "probe",
        "pb",
        "--drive",
        "sac-emulator",
        "--drive-capacity",
        "2GB",
        "--pb-size",
        "8MiB",
        "--upper-bound",
        "256MiB",
        "--png",
        s(&png),
    ]);
    assert!(dir.path().join("ev-pb-iops.png").exists());
    assert!(!png.exists());
}
