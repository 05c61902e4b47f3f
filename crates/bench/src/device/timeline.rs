//! SAC Table 3 / Fig. 11.

use super::*;
use shingled_core::BLOCK_SIZE;

/// SAC Table 3 / Fig. 11: IOPS per second of 4 KB random writes at QD1 on an empty
/// `st8000as0002`, over `range` (default [`DEFAULT_HISTORY_RANGE`]), for `300 × scale` s.
pub fn timeline(opts: &DriveBenchOptions) -> Result<DriveBenchReport> {
    let range = history_range(opts)?;
    let span = range.blocks();
    let (_, mut d) = build_with("st8000as0002", opts.low_watermark)?;
    let mut rng = Mix::new(opts.seed);
    let mut now = Nanos::ZERO;
    let secs = 300.0 * opts.scale;
    let mut cliff: Option<(Nanos, u64)> = None;
    let mut comps = Vec::new();
    let end = Nanos((secs * 1e9) as u64);
    let mut n = 0u64;
    while now < end {
        let t = d.write(now, rng.aligned(span, 1), 1);
        if cliff.is_none() && d.stats().rmws > 0 {
            cliff = Some((now, n));
        }
        now += t;
        n += 1;
        comps.push((now, BLOCK_SIZE));
    }
    let mut w = vec![0u64; (secs.ceil() as usize).max(1)];
    for (t, _) in &comps {
        let i = (t.0 / 1_000_000_000) as usize;
        if i < w.len() {
            w[i] += 1;
        }
    }
    let mut rows = Vec::new();
    let (cliff_t, cliff_n) = cliff.unwrap_or((now, n));
    let cliff_s = cliff_t.as_secs_f64();
    let whole = (cliff_s.floor() as usize).min(w.len());
    let before = if whole > 0 { w[..whole].iter().sum::<u64>() as f64 / whole as f64 } else { 0.0 };
    let after_from = (cliff_s.ceil() as usize + 1).min(w.len());
    let after = if after_from < w.len() {
        w[after_from..].iter().sum::<u64>() as f64 / (w.len() - after_from) as f64
    } else {
        0.0
    };
    let src = "SAC Table 3 (4 KB, QD1)";
    // Provenance: the archive command overhead reproduces this table's 3156 IOPS and the entry
    // limit its 720 MB (HddConfig::archive_5900_5tb, ST8000AS0002_PB_ENTRIES), so the cliff's
    // time follows from the two (184,320 / 3156 = 58.4 s). Nothing was fitted to the rate
    // after the cliff (its range and watermark were fitted to SAC Table 2).
    rows.push(
        BenchRow::new("IOPS before cliff".into(), "IOPS", before, Some(3156.0), src)
            .fitted("command_overhead_ms = 0.295 of st8000as0002"),
    );
    rows.push(BenchRow::new("cliff at".into(), "s", cliff_s, Some(54.0), src).fitted(
        "follows from pb_max_entries and command_overhead_ms of st8000as0002, both fitted to this table",
    ));
    rows.push(
        BenchRow::new("written before cliff".into(), "MB", cliff_n as f64 * 4096.0 / MIB, Some(720.0), src)
            .fitted("pb_max_entries = 184,320 of st8000as0002 (720 MiB / 4 KiB)"),
    );
    rows.push(BenchRow::new("IOPS after cliff".into(), "IOPS", after, Some(41.0), src));
    Ok(DriveBenchReport {
        name: "timeline".into(),
        title: format!(
            "SAC Table 3 / Fig. 11: 4 KB random writes over {:.0} GB on st8000as0002, IOPS per second",
            range.0 as f64 / 1e9
        ),
        rows,
        series: vec![Series {
            name: "st8000as0002 4 KB random writes".into(),
            x_label: "time (s)".into(),
            y_label: "IOPS".into(),
            points: w.iter().enumerate().map(|(i, &c)| (i as f64, c as f64)).collect(),
            paper: vec![(0.0, 3156.0), (54.0, 3156.0), (54.0, 41.0), (secs, 41.0)],
            // the 3156 IOPS level and the cliff are fitted, the 41 IOPS level is not
            paper_fitted: true,
        }],
        notes: std::iter::once(format!("{n} writes over {secs:.0} s of modelled time"))
            .chain(off_fit(opts, range).map(|o| format!("{o}.")))
            .collect(),
    })
}
