//! Drive measurements the simulator needs: SAC's `L_read` and the band write-back samples of
//! SAC Fig. 10 with their fitted line `R(x)` (`shingled_sim::fit_costs` in the sim crate; the
//! `fig10` drive bench of `shingled-bench` runs the same measurement).

use crate::config::{BuildContext, DriveConfig};
use crate::error::Result;
use shingled_core::{ByteSize, Nanos, SizeSpec, BLOCK_SIZE};

/// A least-squares line through `(x, y)` points: `(intercept, slope)`.
pub fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (my - slope * mx, slope)
}

/// A deterministic scatter of `n` offsets in `0..span` (multiplicative hashing).
fn scatter(n: u64, span: u64, salt: u64) -> impl Iterator<Item = u64> {
    let span = span.max(1);
    (0..n).map(move |i| (i.wrapping_add(salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) % span)
}

/// Mean service time (ms) of 256 single-block reads scattered over the first `span_blocks` of a
/// fresh `drive` (SAC's `L_read`).
pub fn read_latency_ms(drive: &DriveConfig, ctx: &BuildContext, span_blocks: u64) -> Result<f64> {
    let mut d = drive.build(ctx)?;
    let mut now = Nanos::ZERO;
    let reads = 256;
    for b in scatter(reads, span_blocks.max(1), 1) {
        now += d.read(now, b, 1);
    }
    Ok(now.as_millis_f64() / reads as f64)
}

/// SAC Fig. 10's measurement on a drive model: `(coverage x, ms)` samples of writing back one
/// band whose `x` blocks were written.
///
/// DM-SMR: for each of five coverages (spread up to the smaller of `max_x` and the band size)
/// and four bands (at 1/9, 3/9, 5/9 and 7/9 of the drive), a fresh drive whose PB holds exactly
/// x blocks (no entry limit) receives x scattered writes into the band and one write elsewhere,
/// which forces the band's RMW; the time of all x + 1 writes is one sample. CMR (and SMaRT, which
/// has no bands): x scattered single-block writes within a 20 MB region (x = 100 … 500), so the
/// fixed part is about 0.
pub fn rmw_points(drive: &DriveConfig, ctx: &BuildContext, max_x: u64) -> Result<Vec<(f64, f64)>> {
    let accessed_blocks = (ctx.accessed_range.0 / BLOCK_SIZE).max(1);
    let mut points = Vec::new();
    match drive {
        DriveConfig::DmSmr(cfg) => {
            let probe_map = drive.build(ctx)?;
            let Some(bands) = probe_map.band_map().cloned() else { return Ok(points) };
            let nb = bands.len() as u64;
            if nb == 0 {
                return Ok(points);
            }
            let band_ids: Vec<u32> = (0..4u64).map(|i| ((i * 2 + 1) * nb / 9) as u32).collect();
            let min_band = band_ids.iter().map(|&b| bands.band_range(b).1).min().unwrap_or(1);
            let top = min_band.clamp(5, max_x.max(5));
            for k in 1..=5u64 {
                let x = (top * k / 5).max(1);
                for &band in &band_ids {
                    let mut c = cfg.clone();
                    c.pb_size = SizeSpec::Absolute(ByteSize(x * BLOCK_SIZE));
                    c.pb_max_entries = None;
                    let mut d = DriveConfig::DmSmr(c).build(ctx)?;
                    let (start, len) = bands.band_range(band);
                    let mut now = Nanos::ZERO;
                    let mut offs: Vec<u64> = scatter(len, len, band as u64).collect();
                    offs.sort_unstable();
                    offs.dedup();
                    let mut written = 0;
                    for o in offs.into_iter().take(x as usize) {
                        now += d.write(now, start + o, 1);
                        written += 1;
                    }
                    // one write in another band forces the RMW of `band`
                    let other = bands.band_range((band + 1) % nb as u32).0;
                    now += d.write(now, other, 1);
                    if written > 0 && d.stats().rmws >= 1 {
                        points.push((written as f64, now.as_millis_f64()));
                    }
                }
            }
        }
        DriveConfig::Cmr(_) | DriveConfig::Smart(_) => {
            let region = (20_000_000 / BLOCK_SIZE).min(accessed_blocks);
            for k in 1..=5u64 {
                let x = 100 * k;
                let mut d = drive.build(ctx)?;
                let mut now = Nanos::ZERO;
                for o in scatter(x, region, k) {
                    now += d.write(now, o, 1);
                }
                points.push((x as f64, now.as_millis_f64()));
            }
        }
    }
    Ok(points)
}
