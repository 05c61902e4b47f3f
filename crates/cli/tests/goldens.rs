//! Golden outputs of the demo (`shingled compare`, as `make demo` runs it, on a smaller `prn`)
//! and of one experiment (`pore-overall` on its four volumes, small). The golden files are
//! regression checks produced by the code itself (regenerate with `SHINGLED_BLESS=1`); the
//! checks beside them are evidence that does not come from the code: every table that says it
//! adds up is added up here, every verdict's factor is recomputed from the two figures printed
//! beside it, and a verdict is only given where both sides cover the same traces.

use std::path::PathBuf;
use std::process::Command;

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/golden").join(name)
}

fn check(name: &str, got: &str) {
    let path = golden(name);
    if std::env::var_os("SHINGLED_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with SHINGLED_BLESS=1 to create it)", path.display()));
    assert!(
        got == want,
        "{} differs; if the change is intended, rerun with SHINGLED_BLESS=1\n--- got:\n{got}",
        path.display()
    );
}

fn run(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled");
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// A text table's cells: columns are separated by two spaces or more.
fn cells(line: &str) -> Vec<&str> {
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()
}

/// The rows of the table whose header starts with `scheme` right after the line starting with
/// `title`, as (header, rows).
fn table<'a>(out: &'a str, title: &str) -> (Vec<&'a str>, Vec<Vec<&'a str>>) {
    let mut lines =
        out.lines().skip_while(|l| !l.starts_with(title)).skip(1).skip_while(|l| l.trim().is_empty());
    let header = cells(lines.next().unwrap_or_else(|| panic!("no table after {title:?}")));
    assert!(lines.next().unwrap().starts_with("---"));
    let rows = lines.take_while(|l| !l.trim().is_empty()).map(cells).collect();
    (header, rows)
}

fn num(cell: &str) -> f64 {
    cell.trim_end_matches('x').parse().unwrap_or_else(|_| panic!("{cell:?} is not a number"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// The demo's three time tables each add up, and the foreground's total is the first table's
/// total time, scheme by scheme.
fn breakdown_adds_up(out: &str) {
    let (head, main) = table(out, "mode ");
    let total_col = head.iter().position(|h| *h == "total time (s)").unwrap();
    let (fhead, fg) = table(out, "foreground (s)");
    let drive = fhead.iter().position(|h| *h == "drive").unwrap();
    let (ssd, total) = (drive + 1, drive + 2);
    assert_eq!((fhead[ssd], fhead[total]), ("SSD", "total"));
    assert_eq!(fg.len(), main.len());
    for (row, m) in fg.iter().zip(&main) {
        assert_eq!(row[0], m[0]);
        let causes: f64 = row[1..drive].iter().map(|c| num(c)).sum();
        // Each printed cell is rounded to 1 ms.
        let tol = 0.0005 * drive as f64 + 1e-9;
        assert!(close(causes, num(row[drive]), tol), "{}: causes {causes} vs drive {}", row[0], row[drive]);
        assert!(close(num(row[drive]) + num(row[ssd]), num(row[total]), 0.0011), "{}: drive + SSD", row[0]);
        assert!(
            close(num(row[total]), num(m[total_col]), 0.0011),
            "{}: foreground total vs total time",
            row[0]
        );
    }
    for title in ["background (s)", "mechanism (s)"] {
        let (h, rows) = table(out, title);
        assert_eq!(*h.last().unwrap(), "total", "{title}");
        for row in rows {
            let n = row.len() - 1;
            let parts: f64 = row[1..n].iter().map(|c| num(c)).sum();
            assert!(
                close(parts, num(row[n]), 0.0005 * n as f64),
                "{title} {}: {parts} vs {}",
                row[0],
                row[n]
            );
        }
    }
}

/// The claim rows: (figure, paper, ours, verdict).
fn claims(out: &str) -> Vec<[String; 4]> {
    let (head, rows) = table(out, "the paper's figures beside ours");
    assert_eq!(&head[..4], &["the paper's figure", "paper", "ours", "verdict"]);
    rows.into_iter()
        .filter(|r| !r[0].starts_with("verdict rules") && !r[0].starts_with("why ours differs"))
        .map(|r| [r[0].to_string(), r[1].to_string(), r[2].to_string(), r[3].to_string()])
        .collect()
}

/// "11.83x (mean of wdev, mds, ts, usr)" → (11.83, "wdev, mds, ts, usr").
fn ratio_and_cover(cell: &str) -> Option<(f64, String)> {
    let (value, rest) = cell.split_once("x (")?;
    let value: f64 = value.parse().ok()?;
    let cover = rest.trim_end_matches(')').trim_start_matches("mean of ");
    Some((value, cover.to_string()))
}

/// The traces a side covers, without `synth:` and scale suffixes (a synthetic trace stands for
/// the paper's volume of that name).
fn volumes(cover: &str) -> Vec<String> {
    let mut v: Vec<String> = cover
        .split(", ")
        .map(|t| t.trim_start_matches("synth:").split([',', ' ']).next().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn demo_golden() {
    let out = run(&["compare", "--trace", "synth:prn,scale=0.01", "--progress", "none"]);
    check("demo-prn.txt", &out);
    assert!(out.contains("WA = band bytes written / bytes cleaned out of the PB"), "WA defined");
    assert!(out.contains("dev WA = bytes the drive wrote to its media"), "dev WA defined");
    breakdown_adds_up(&out);
    let claims = claims(&out);
    assert!(!claims.is_empty());
    for [figure, paper, ours, verdict] in &claims {
        // PORE's figures cover wdev, mds, ts, usr (Fig. 11) or nine volumes as a mean (Fig.
        // 12c): none is prn's own, so no claim may carry a verdict.
        assert!(paper.contains('(') && ours.contains("synth:prn"), "{figure}: each side says what it covers");
        assert!(verdict.starts_with("no verdict"), "{figure}: {verdict} compares prn with other traces");
    }
    assert!(out.contains("docs/reproduction.md#how-verdicts-are-decided"), "the rules are pointed to");
}

#[test]
fn experiment_golden() {
    let mut args = vec!["experiment", "pore-overall", "--progress", "none"];
    for t in ["synth:wdev,scale=0.02", "synth:mds,scale=0.02", "synth:ts,scale=0.02", "synth:usr,scale=0.02"]
    {
        args.extend(["--on", t]);
    }
    let out = run(&args);
    check("pore-overall.txt", &out);
    assert!(out.contains("WA = band bytes written / bytes cleaned out of the PB"), "WA defined");
    let mut judged = 0;
    for [figure, paper, ours, verdict] in claims(&out) {
        let (Some((p, pcover)), Some((o, ocover))) = (ratio_and_cover(&paper), ratio_and_cover(&ours)) else {
            continue;
        };
        let ocover: String =
            ocover.split(", ").map(|t| t.split(' ').next().unwrap()).collect::<Vec<_>>().join(", ");
        if volumes(&pcover) != volumes(&ocover) {
            assert!(verdict.starts_with("no verdict"), "{figure}: {pcover} vs {ocover} judged: {verdict}");
            continue;
        }
        // Same traces on both sides: a verdict with the factor ours / paper, recomputed here
        // from the two rounded figures (so within the rounding of both).
        let at = verdict.find("ours ×").unwrap_or_else(|| panic!("{figure}: no factor in {verdict:?}"));
        let factor: f64 = verdict[at + "ours ×".len()..].trim_end_matches(')').parse().unwrap();
        assert!(close(factor, o / p, 0.006 + 0.005 / p), "{figure}: factor {factor} vs {o}/{p}");
        let band = if (0.8..=1.25).contains(&factor) {
            "agrees"
        } else if (0.5..=2.0).contains(&factor) {
            "close"
        } else if (o > 1.0) == (p > 1.0) {
            "same direction"
        } else {
            "DISAGREES"
        };
        assert!(verdict.starts_with(band), "{figure}: factor {factor} is {band}, printed {verdict:?}");
        judged += 1;
    }
    assert!(judged >= 4, "Fig. 11's four speed-ups are judged on their own four volumes");
}
