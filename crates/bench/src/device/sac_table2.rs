//! SAC Table 2.

use super::*;
use shingled_core::BLOCK_SIZE;

/// Mean and relative standard deviation (%) of the bytes completed per 1-second window.
fn windows(completions: &[(Nanos, u64)]) -> (f64, f64, Vec<f64>) {
    let Some(last) = completions.last() else { return (0.0, 0.0, Vec::new()) };
    let first = completions[0].0;
    let nwin = ((last.0 - first).0 / 1_000_000_000).max(1) as usize;
    let mut w = vec![0.0; nwin];
    for &(t, bytes) in completions {
        let i = ((t - first).0 / 1_000_000_000) as usize;
        if i < nwin {
            w[i] += bytes as f64;
        }
    }
    let mean = w.iter().sum::<f64>() / nwin as f64;
    let var = w.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / nwin as f64;
    let rsd = if mean > 0.0 { var.sqrt() / mean * 100.0 } else { 0.0 };
    (mean, rsd, w)
}

/// Closed-loop single-block random I/O over `[0, span)` for `secs` modelled seconds (at least
/// `min_ops`); returns the (completion, bytes) of every request.
fn timed_random(
    d: &mut dyn Drive,
    rng: &mut Mix,
    now: &mut Nanos,
    span: u64,
    write: bool,
    secs: f64,
    min_ops: u64,
) -> Vec<(Nanos, u64)> {
    let end = *now + Nanos((secs * 1e9) as u64);
    let mut out = Vec::new();
    while *now < end || (out.len() as u64) < min_ops {
        let b = rng.aligned(span, 1);
        *now += if write { d.write(*now, b, 1) } else { d.read(*now, b, 1) };
        out.push((*now, BLOCK_SIZE));
        if out.len() > 50_000_000 {
            break;
        }
    }
    out
}

/// SAC Table 2: 4 KB uniformly random reads and writes over 0–10 GB; mean bandwidth and its
/// RSD over 1-second windows.
///
/// CMR = `sac-cmr`, SMR = `st8000as0002`. Reads run on a fresh drive. The SMR write run starts
/// on the drive as SAC's §5.1 detection leaves it (PB full of 4 KB random writes over
/// `opts.range`, default [`DEFAULT_HISTORY_RANGE`]): see docs/drive-models.md for why that
/// state matters.
pub fn sac_table2(opts: &DriveBenchOptions) -> Result<DriveBenchReport> {
    let span = ByteSize::gb(10).blocks();
    let history = history_range(opts)?;
    let off_fit = off_fit(opts, history);
    let secs = 120.0 * opts.scale;
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let paper = [(247.5, 6.1, 588.8, 11.1), (373.7, 6.6, 124.2, 869.6)];
    for (i, (name, label)) in [("sac-cmr", "CMR"), ("st8000as0002", "SMR")].into_iter().enumerate() {
        let mut rng = Mix::new(opts.seed + i as u64);
        let watermark = if label == "SMR" { opts.low_watermark } else { None };
        // reads
        let (_, mut d) = build_with(name, watermark)?;
        let mut now = Nanos::ZERO;
        let c = timed_random(d.as_mut(), &mut rng, &mut now, span, false, secs, 200);
        let (mean, rsd, _) = windows(&c);
        // Provenance: sac-cmr's seek curve and write cache (HddConfig::sac_cmr) and
        // st8000as0002's short seek (HddConfig::st8000as0002) were fitted to this table's
        // means, its batch-cleaning watermark and the history range to the SMR write mean and
        // RSD (ST8000AS0002_CLEAN_LOW_WATERMARK, DEFAULT_HISTORY_RANGE). Nothing was fitted to
        // the read RSDs or the CMR write RSD.
        let read_fit = if label == "CMR" {
            "seek curve 9.5 / 12.5 / 18 ms of sac-cmr"
        } else {
            "track_to_track_ms 5 / average_seek_ms 10.5 of st8000as0002"
        };
        rows.push(
            BenchRow::new(format!("{label} read"), "KB/s", mean / KIB, Some(paper[i].0), "SAC Table 2")
                .fitted(read_fit),
        );
        rows.push(BenchRow::new(format!("{label} read RSD"), "%", rsd, Some(paper[i].1), "SAC Table 2"));
        // writes
        let (_, mut d) = build_with(name, watermark)?;
        let mut now = Nanos::ZERO;
        if label == "SMR" {
            // Precondition: fill the PB with 4 KB random writes over C (SAC §5.1 step 2).
            let pre = history.blocks();
            let mut n = 0u64;
            while d.stats().rmws == 0 && n < 5_000_000 {
                now += d.write(now, rng.aligned(pre, 1), 1);
                n += 1;
            }
        } else {
            // Fill the write cache (768 extents) twice before measuring.
            random_writes(d.as_mut(), &mut rng, &mut now, span, 1, 2000);
        }
        let c = timed_random(d.as_mut(), &mut rng, &mut now, span, true, secs * 5.0, 200);
        let (mean, rsd, w) = windows(&c);
        let write =
            BenchRow::new(format!("{label} write"), "KB/s", mean / KIB, Some(paper[i].2), "SAC Table 2");
        let suffix = off_fit.as_ref().map_or(String::new(), |o| format!("; {o}"));
        rows.push(if label == "CMR" {
            write.fitted("write cache of 768 extents (and seek curve) of sac-cmr")
        } else {
            write.fitted(&format!(
                "history range C = 600 GB with pb_clean_low_watermark = 0.985 of st8000as0002{suffix}"
            ))
        });
        let write_rsd =
            BenchRow::new(format!("{label} write RSD"), "%", rsd, Some(paper[i].3), "SAC Table 2");
        rows.push(if label == "CMR" {
            write_rsd
        } else {
            write_rsd
                .fitted(&format!("pb_clean_low_watermark = 0.985 of st8000as0002 with C = 600 GB{suffix}"))
        });
        series.push(Series {
            name: format!("{label} write"),
            x_label: "time (s)".into(),
            y_label: "bandwidth (KB/s)".into(),
            points: w.iter().enumerate().map(|(i, b)| (i as f64, b / KIB)).collect(),
            paper: Vec::new(),
            paper_fitted: false,
        });
    }
    Ok(DriveBenchReport {
        name: "sac-table2".into(),
        title: "SAC Table 2: 4 KB uniform random I/O over 0-10 GB (sac-cmr, st8000as0002)".into(),
        rows,
        series,
        notes: std::iter::once(format!(
            "Reads {secs:.0} s, writes {:.0} s of modelled time; RSD over 1 s windows.",
            secs * 5.0
        ))
        .chain(off_fit.map(|o| format!("SMR write run: {o}.")))
        .collect(),
    })
}
