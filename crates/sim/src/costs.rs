//! Fitting the drive costs that SAC's Clean/Dirty Comparator weighs, on the drive model itself.
//!
//! SAC §4.4 fits `R(x)`, the time to write back a band whose `x` blocks are dirty, by linear
//! regression over measurements at x = 500, 1000, …, 2500 on its real drive (R(x) = 0.728x +
//! 436 ms), and takes the random-read time `L_read` as a pre-measured constant. We repeat the
//! measurement on whatever drive model the simulation uses, so the comparator weighs the costs
//! of the drive it actually runs on.

use serde::{Deserialize, Serialize};
use shingled_cache::SmrCosts;
use shingled_core::BLOCK_SIZE;
use shingled_device::{measure, BuildContext, DriveConfig};

/// Where the policy's drive costs come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostModel {
    /// Measured on the configured drive model before the run (the default).
    #[default]
    Fitted,
    /// The SAC paper's constants for its ST8000AS0002 ([`SmrCosts::PAPER`]).
    Paper,
    /// Given explicitly.
    Custom(SmrCosts),
}

/// Measures `L_read` and `R(x)` on `drive` for a trace whose ranges are `ctx`.
///
/// The measurements are the drive crate's ([`shingled_device::measure::read_latency_ms`],
/// [`shingled_device::measure::rmw_points`], also behind `shingled drive bench fig10`):
///
/// - `L_read`: mean service time of 256 single-block reads scattered over the accessed range,
///   on a fresh drive (nothing in the persistent buffer).
/// - `R(x)` on a DM-SMR drive: for each of five coverages x (spread up to the smaller of 2500
///   blocks and the band size, as SAC Fig. 10) and four bands, a fresh drive whose persistent
///   buffer holds exactly x blocks receives x scattered writes into one band (filling the
///   buffer) and then one write elsewhere, which forces the band's RMW; the time of all x + 1
///   writes is one sample. A line through the samples gives `rmw_fixed_ms` and
///   `rmw_per_block_ms`.
/// - `R(x)` on a CMR drive: x scattered single-block writes within a 20 MB region, so the
///   fixed part is about 0 and the slope a random write.
pub fn fit_costs(drive: &DriveConfig, ctx: &BuildContext) -> Result<SmrCosts, shingled_device::DeviceError> {
    let accessed_blocks = (ctx.accessed_range.0 / BLOCK_SIZE).max(1);
    let read_ms = measure::read_latency_ms(drive, ctx, accessed_blocks)?;
    let points = measure::rmw_points(drive, ctx, 2500)?;
    if points.len() < 2 {
        return Ok(SmrCosts::PAPER);
    }
    let (fixed, per_block) = measure::fit_line(&points);
    Ok(SmrCosts { read_ms, rmw_fixed_ms: fixed.max(0.0), rmw_per_block_ms: per_block.max(0.0) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shingled_core::ByteSize;

    #[test]
    fn line_fit_recovers_a_line() {
        let pts: Vec<(f64, f64)> =
            (1..=5).map(|x| (x as f64 * 500.0, 0.728 * x as f64 * 500.0 + 436.0)).collect();
        let (a, b) = measure::fit_line(&pts);
        assert!((a - 436.0).abs() < 1e-6 && (b - 0.728).abs() < 1e-9);
    }

    #[test]
    fn fitted_costs_are_plausible_for_the_default_smr_drive() {
        let drive = DriveConfig::default();
        let ctx = BuildContext { written_range: ByteSize::gb(5), accessed_range: ByteSize::gb(5) };
        let c = fit_costs(&drive, &ctx).unwrap();
        // a random read costs milliseconds; a band write-back hundreds of ms plus a little per block
        assert!((2.0..30.0).contains(&c.read_ms), "{c:?}");
        assert!((100.0..2000.0).contains(&c.rmw_fixed_ms), "{c:?}");
        assert!(c.rmw_per_block_ms > 0.0 && c.rmw_per_block_ms < 20.0, "{c:?}");
        // more dirty blocks per band cost more
        assert!(c.rmw_ms(2500) > c.rmw_ms(500));
    }

    #[test]
    fn cmr_costs_have_no_fixed_part() {
        let drive = DriveConfig::default_cmr();
        let ctx = BuildContext { written_range: ByteSize::gb(5), accessed_range: ByteSize::gb(5) };
        let c = fit_costs(&drive, &ctx).unwrap();
        assert!(c.rmw_fixed_ms.abs() < 50.0, "{c:?}");
        assert!(c.rmw_per_block_ms > 1.0, "{c:?}");
    }
}
