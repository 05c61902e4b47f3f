//! SAC Fig. 10.

use super::*;
use shingled_device::measure::{fit_line, rmw_points};
use shingled_device::profile;

/// What `fig10`'s fitted rows were fitted to.
const MERGE_FIT: &str = "pb_merge_ms_per_block = 0.41 of st8000as0002 (SAC's slope 0.728 less a PB append)";

/// SAC Fig. 10: band write-back time vs coverage on `st8000as0002`, and the fitted `R(x)` next
/// to SAC's `R(x) = 0.728x + 436` ms. The slope is not independent: the profile's merge cost per
/// block was derived from it (see [`shingled_device::profiles::MERGE_MS_PER_BLOCK`]); the intercept is.
pub fn fig10(opts: &DriveBenchOptions) -> Result<DriveBenchReport> {
    let _ = opts;
    let drive = profile("st8000as0002")
        .ok_or_else(|| DeviceError::UnknownProfile { name: "st8000as0002".into(), known: String::new() })?;
    let ctx = BuildContext::whole_drive(ByteSize(8_000_000_000_000));
    let pts = rmw_points(&drive, &ctx, 2500)?;
    let (a, b) = fit_line(&pts);
    let mut rows = Vec::new();
    let mut by_x: Vec<(f64, f64)> = Vec::new();
    for chunk in pts.chunks(4) {
        let x = chunk[0].0;
        let mean = chunk.iter().map(|p| p.1).sum::<f64>() / chunk.len() as f64;
        by_x.push((x, mean));
        // Each point is intercept + slope × x, and the slope is fitted.
        rows.push(
            BenchRow::new(format!("R({x:.0})"), "ms", mean, Some(0.728 * x + 436.0), "SAC §4.4 fitted line")
                .fitted(MERGE_FIT),
        );
    }
    // Nothing was fitted to the intercept: band size (SAC §5.2), media rate and positioning.
    rows.push(BenchRow::new("R intercept".into(), "ms", a, Some(436.0), "SAC §4.4"));
    rows.push(
        BenchRow::new("R slope".into(), "ms/block", b, Some(0.728), "SAC §4.4 (merge cost derived from it)")
            .fitted(MERGE_FIT),
    );
    Ok(DriveBenchReport {
        name: "fig10".into(),
        title: "SAC Fig. 10: time to write back a band vs its coverage (st8000as0002)".into(),
        rows,
        series: vec![Series {
            name: "R(x) st8000as0002".into(),
            x_label: "band coverage (blocks)".into(),
            y_label: "write-back time (ms)".into(),
            points: by_x,
            paper: [500.0, 1000.0, 1500.0, 2000.0, 2500.0].iter().map(|&x| (x, 0.728 * x + 436.0)).collect(),
            paper_fitted: true,
        }],
        notes: vec![format!("fitted R(x) = {b:.3}x + {a:.1} ms over {} samples", pts.len())],
    })
}
