//! Output paths that are not regular files: a device or FIFO is written through (never renamed
//! over), a symbolic link's target is written and the link kept, a write error (ENOSPC) fails
//! naming the output.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const TRACE: &str = "synth:hm,scale=0.005";

fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn dev_null_stays_a_device_and_gets_no_statistics_file() {
    for args in
        [vec!["trace", "convert", TRACE, "-o", "/dev/null"], vec!["trace", "mix", TRACE, "-o", "/dev/null"]]
    {
        let o = shingled(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        assert!(!Path::new("/dev/null.stats.json").exists());
        assert!(!stderr(&o).contains("statistics kept"), "{}", stderr(&o));
    }
}

#[test]
fn a_full_device_is_an_error_naming_the_output() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let cases: Vec<Vec<&str>> = vec![
        vec!["trace", "convert", TRACE, "-o", "/dev/full"],
        vec!["trace", "mix", TRACE, TRACE, "-o", "/dev/full"],
        vec!["sim", "--trace", TRACE, "--out", "/dev/full"],
        vec!["drive", "bench", "fig3", "--csv", "/dev/full"],
    ];
    for args in cases {
        let o = shingled(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("/dev/full") && e.contains("No space left"), "{args:?}: {e}");
        assert!(!e.contains(".tmp") && !e.contains("panicked"), "{args:?}: {e}");
        assert!(std::fs::metadata("/dev/full").unwrap().file_type().is_char_device());
    }
}

#[test]
fn a_fifo_is_written_through_and_its_trace_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for cmd in ["convert", "mix"] {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let o = shingled(&["trace", cmd, TRACE, "-o", fifo.to_str().unwrap()]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        let bytes = reader.join().unwrap();
        assert!(
            std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(),
            "{cmd}: the FIFO was replaced"
        );
        // What went through the FIFO is a whole trace: the same requests as a file gets.
        let copy = dir.path().join(format!("{cmd}.bin"));
        std::fs::write(&copy, &bytes).unwrap();
        let file = dir.path().join(format!("{cmd}-file.bin"));
        let o = shingled(&["trace", cmd, TRACE, "-o", file.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let stats = |p: &Path| {
            let o = shingled(&["trace", "stats", "--json", p.to_str().unwrap()]);
            assert!(o.status.success(), "{}", stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            v["requests"].clone()
        };
        assert_eq!(stats(&copy), stats(&file), "{cmd}");
        assert!(stats(&copy).as_u64().unwrap() > 0);
    }
    assert_eq!(names(dir.path()).iter().filter(|n| n.ends_with(".tmp")).count(), 0);
}

#[test]
fn a_symbolic_link_is_kept_and_its_target_written() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("target.bin"), b"old").unwrap();
    let link = dir.path().join("link.bin");
    std::os::unix::fs::symlink("sub/target.bin", &link).unwrap();
    for cmd in ["convert", "mix"] {
        let o = shingled(&["trace", cmd, TRACE, "-o", link.to_str().unwrap()]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "{cmd}: link replaced");
        let written = std::fs::read(sub.join("target.bin")).unwrap();
        assert!(
            written.len() > 100 && written.starts_with(b"\x89SHGTRC\n"),
            "{cmd}: {:?}",
            &written[..8.min(written.len())]
        );
        std::fs::write(sub.join("target.bin"), b"old").unwrap();
    }
    // the JSON report of `sim --out` through a link, too
    let o = shingled(&["sim", "--trace", TRACE, "--output", "json", "--out", link.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(sub.join("target.bin")).unwrap().trim_start().starts_with('{'));
    assert_eq!(names(&sub), ["target.bin"]);
}

#[test]
fn bad_outputs_fail_before_the_work_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let jpg = format!("{d}/out.jpg");
    let missing = format!("{d}/no/such/dir/out.csv");
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["curve", "--trace", TRACE, "--png", &jpg], vec!["--png", "out.jpg", ".png"]),
        (vec!["drive", "bench", "fig3", "--png", &jpg], vec!["--png", "out.jpg", ".png"]),
        (vec!["sim", "--trace", TRACE, "--out", &missing], vec!["--out", "no/such/dir", "does not exist"]),
        (vec!["sim", "--trace", TRACE, "--out", d], vec!["--out", "is a directory"]),
        (
            vec!["report", "--experiment", "pore-overall", "--out", "/dev/null"],
            vec!["--out", "/dev/null", "not a directory"],
        ),
        (vec!["trace", "convert", TRACE, "-o", d], vec![d, "is a directory"]),
    ];
    for (args, words) in cases {
        let o = shingled(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        for w in words {
            assert!(e.contains(w), "{args:?}: {w:?} not in {e}");
        }
        assert!(!e.contains("panicked") && !e.contains("ImageError"), "{args:?}: {e}");
    }
    assert!(!Path::new(&jpg).exists());
}
