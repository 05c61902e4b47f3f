//! Operator mistakes on the command line: each is refused with exit status 1 and a message
//! naming the flag, value or file and what is expected, never a panic, Rust `Debug` text or a
//! bare parser error.

use std::process::{Command, Output};

fn shingled(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).current_dir(dir).output().expect("run shingled")
}

const T: &str = "synth:hm,scale=0.005";

/// Command line, then words its error must contain.
fn cases() -> Vec<(Vec<&'static str>, Vec<&'static str>)> {
    vec![
        // negative and malformed numbers reach the parser, which names flag, value and range
        (vec!["curve", "--trace", T, "--rate", "-1"], vec!["--rate", "-1", "(0, 1]"]),
        (vec!["curve", "--trace", T, "--seed", "-1"], vec!["--seed", "-1", "out of range"]),
        (vec!["curve", "--trace", T, "--samples", "-3"], vec!["--samples", "-3", "out of range"]),
        (vec!["sim", "--trace", T, "--limit", "-5"], vec!["--limit", "-5", "out of range"]),
        (vec!["trace", "mix", T, "-o", "x.bin", "--copies", "-1"], vec!["--copies", "-1", "out of range"]),
        (vec!["trace", "mix", T, "-o", "x.bin", "--seed", "1e300"], vec!["--seed", "1e300", "whole number"]),
        (vec!["sim", "--trace", T, "--limit", "NaN"], vec!["--limit", "NaN", "whole number"]),
        (vec!["sim", "--trace", T, "--time-scale", "-1"], vec!["--time-scale", "-1"]),
        (vec!["sim", "--trace", T, "--time-scale", "NaN"], vec!["--time-scale", "NaN", "finite"]),
        (vec!["sim", "--trace", T, "--interval", "0"], vec!["--interval", "\"0\"", "more than 0"]),
        (vec!["compare", "--trace", T, "--interval", "abc"], vec!["--interval", "\"abc\"", "request count"]),
        (vec!["experiment", "pore-ssd-size", "--interval", "-3s"], vec!["--interval", "\"-3s\""]),
        (vec!["sim", "--trace", T, "--series", "s.csv"], vec!["--series", "--interval"]),
        (vec!["curve", "--trace", T, "--interval", "100"], vec!["--interval", "full runs"]),
        (vec!["cache", "replay", "--trace", T, "--interval", "100"], vec!["--interval", "cache replay"]),
        (
            vec!["cache", "create", "c.img", "--backing", "b.img", "--size", "-1"],
            vec!["--size", "-1", "negative"],
        ),
        (vec!["stl", "serve", "x.stl", "m", "--idle-ms", "-1"], vec!["--idle-ms", "-1", "out of range"]),
        (vec!["stl", "format", "smart", "x.stl", "--utilisation", "-0.5"], vec!["utilisation", "-0.5"]),
        (vec!["stl", "format", "smart", "x.stl", "--zones", "-2"], vec!["--zones", "-2", "out of range"]),
        (
            vec!["drive", "bench", "timeline", "--low-watermark", "-1"],
            vec!["--low-watermark", "-1", "[0, 1)"],
        ),
        (vec!["drive", "bench", "fig3", "--low-watermark", "0.5"], vec!["--low-watermark", "fig3"]),
        // the other layer's flags, impossible sizes
        (
            vec!["stl", "format", "dm-zoned", "x.stl", "--track-size", "1MiB"],
            vec!["--track-size", "dm-zoned"],
        ),
        (vec!["stl", "format", "smart", "x.stl", "--conventional", "3"], vec!["--conventional", "smart"]),
        (vec!["stl", "format", "smart", "x.stl", "--drive", "st5000as0011"], vec!["--drive", "smart"]),
        (vec!["stl", "format", "dm-smr", "x.stl", "--zones", "2"], vec!["--zones", "dm-smr"]),
        (
            vec!["stl", "format", "dm-smr", "x.stl", "--drive", "pore-emulator"],
            vec!["pb_flavour", "in-place", "append-only"],
        ),
        (vec!["stl", "format", "dm-smr", "x.stl", "--drive", "nvme"], vec!["drive", "nvme", "st5000as0011"]),
        (vec!["stl", "format", "dm-smr", "x.stl", "--size", "100KiB"], vec!["size", "headers"]),
        (
            vec!["stl", "format", "dm-smr", "x.stl", "--size", "16MiB", "--drive", "st5000as0011"],
            vec!["--pb-size", "no room for bands"],
        ),
        (vec!["stl", "format", "dm-smr", "x.stl", "--pb-size", "2/1"], vec!["pb_size", "(0, 1]"]),
        (vec!["stl", "format", "dm-smr", "x.stl", "--bands", "fixed"], vec!["--bands", "fixed"]),
        (
            vec!["stl", "format", "dm-zoned", "x.stl", "--size", "16MiB"],
            vec!["16MiB", "8 conventional", "10 zones"],
        ),
        (
            vec!["stl", "format", "dm-zoned", "x.stl", "--size", "160MiB", "--conventional", "1"],
            vec!["nr_conv", "at least 2 conventional"],
        ),
        // sizes, lists and job counts
        (vec!["sim", "--trace", T, "--cache-size", "1000%"], vec!["cache.size", "1000%", "100%"]),
        (vec!["sim", "--trace", T, "--policy", "lru,lru"], vec!["--policy", "lru", "twice"]),
        (vec!["sim", "--trace", T, "--cache-size", "1%,1%"], vec!["--cache-size", "1%", "twice"]),
        (vec!["curve", "--trace", T, "--policy", "lru,LRU"], vec!["--policy", "twice"]),
        (vec!["compare", "--trace", T, "--schemes", "lru,lru"], vec!["schemes", "lru", "twice"]),
        (vec!["compare", "--trace", T, "--jobs", "0"], vec!["--jobs", "at least 1"]),
        (vec!["experiment", "pore-overall", "--jobs", "0"], vec!["--jobs", "at least 1"]),
        (vec!["curve", "--trace", T, "--jobs", "0"], vec!["--jobs", "at least 1"]),
        (
            vec![
                "cache",
                "create",
                "c.img",
                "--backing",
                "b.img",
                "--size",
                "1MiB",
                "--policy",
                "pore",
                "--pb-size",
                "0",
            ],
            vec!["persistent", "0 blocks"],
        ),
        // charts and files
        (vec!["drive", "bench", "fig3", "--png", "out.jpg"], vec!["--png", "out.jpg", ".png"]),
        (vec!["stl", "check", "empty"], vec!["empty", "the file is empty"]),
        (vec!["stl", "check", "dir"], vec!["dir"]),
        (vec!["stl", "check", "store.zbd"], vec!["store.zbd", "chunk store"]),
        (vec!["stl", "check", "blank.zbd"], vec!["blank.zbd", "blank zoned device"]),
    ]
}

#[test]
fn every_mistake_is_refused_with_a_message_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("empty"), b"").unwrap();
    std::fs::create_dir(d.join("dir")).unwrap();
    std::fs::write(d.join("b.img"), vec![0u8; 64 << 20]).unwrap();
    let o = shingled(&["store", "format", "--create", "--zones", "20", "store.zbd"], d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = shingled(&["zone", "create", "--zones", "20", "blank.zbd"], d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut failed = Vec::new();
    for (args, words) in cases() {
        let o = shingled(&args, d);
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        let debug_text =
            ["{ ", "ByteSize(", "FileType", "Some(", "panicked", "invalid digit", "fill whole buffer"];
        // 1 for a refused value, 2 for clap's usage errors
        let ok = matches!(o.status.code(), Some(1 | 2))
            && words.iter().all(|w| e.contains(w))
            && !debug_text.iter().any(|t| e.contains(t))
            && !e.contains("unexpected argument");
        if !ok {
            failed.push(format!("{args:?} -> {:?}: {e}", o.status.code()));
        }
    }
    // nothing was created by a refused format
    assert!(!d.join("x.stl").exists());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
