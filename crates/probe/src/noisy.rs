//! [`Noisy`]: timing noise around a drive model, so probes are tested against measurements that
//! scatter the way a real drive's do (SAC §5.2: "the measurement of SMR band size distribution
//! has some errors").

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, BlockNo, Nanos};
use shingled_device::{Drive, DriveStats};

/// How much noise [`Noisy`] adds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NoiseConfig {
    /// Each service time is multiplied by a factor drawn uniformly from
    /// `[1 − jitter, 1 + jitter]`. Default 0.2; bounds [0, 1).
    pub jitter: f64,
    /// Probability that a request is an outlier (a host hiccup, a retried command), multiplied by
    /// `outlier_factor` on top of the jitter. Default 0.
    pub outlier_probability: f64,
    /// Slow-down of an outlier. Default 5.
    pub outlier_factor: f64,
    /// Seed of the generator.
    pub seed: u64,
}

impl Default for NoiseConfig {
    fn default() -> Self {
        NoiseConfig { jitter: 0.2, outlier_probability: 0.0, outlier_factor: 5.0, seed: 0 }
    }
}

impl NoiseConfig {
    /// Checks the bounds.
    pub fn validate(&self) -> crate::Result<()> {
        if !(0.0..1.0).contains(&self.jitter) {
            return Err(crate::error::invalid("jitter", self.jitter, "expected 0 <= jitter < 1"));
        }
        if !(0.0..=1.0).contains(&self.outlier_probability) {
            return Err(crate::error::invalid(
                "outlier_probability",
                self.outlier_probability,
                "expected a probability in [0, 1]",
            ));
        }
        if !(self.outlier_factor >= 1.0 && self.outlier_factor.is_finite()) {
            return Err(crate::error::invalid("outlier_factor", self.outlier_factor, "expected >= 1"));
        }
        Ok(())
    }
}

/// A drive model whose service times are scattered by seeded multiplicative noise.
///
/// The noise is on the *measurement*, not on the drive: the inner model sees its requests at the
/// same moments as it would without noise (each issued when its previous one completed, and
/// idle gaps unchanged), so its internal state evolves exactly as without the decorator. That is
/// done by keeping the offset between the outer clock (noisy times) and the inner one.
/// [`Drive::stats`] reports the inner model's counters, with its own (noise-free) times.
pub struct Noisy<D: Drive + ?Sized> {
    inner: Box<D>,
    cfg: NoiseConfig,
    rng: rand_pcg::Pcg64Mcg,
    /// Outer time − inner time, ns.
    skew: i128,
}

impl<D: Drive + ?Sized> Noisy<D> {
    /// Wraps `inner`. Panics in debug builds if `cfg` does not validate; see
    /// [`NoiseConfig::validate`].
    pub fn new(inner: Box<D>, cfg: NoiseConfig) -> Noisy<D> {
        debug_assert!(cfg.validate().is_ok(), "{cfg:?}");
        Noisy { inner, rng: rand_pcg::Pcg64Mcg::seed_from_u64(cfg.seed), cfg, skew: 0 }
    }

    /// The wrapped model.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    fn noisy(&mut self, now: Nanos, op: impl FnOnce(&mut D, Nanos) -> Nanos) -> Nanos {
        let inner_now = Nanos((now.0 as i128 - self.skew).max(0) as u64);
        let t = op(&mut self.inner, inner_now);
        let j = self.cfg.jitter;
        let mut f = if j > 0.0 { 1.0 + self.rng.random_range(-j..=j) } else { 1.0 };
        if self.cfg.outlier_probability > 0.0 && self.rng.random_bool(self.cfg.outlier_probability) {
            f *= self.cfg.outlier_factor;
        }
        let out = Nanos(((t.0 as f64 * f).round() as u64).max(1));
        self.skew += out.0 as i128 - t.0 as i128;
        out
    }
}

impl<D: Drive + ?Sized> Drive for Noisy<D> {
    fn read(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        self.noisy(now, |d, t| d.read(t, block, nblocks))
    }

    fn write(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        self.noisy(now, |d, t| d.write(t, block, nblocks))
    }

    fn stats(&self) -> DriveStats {
        self.inner.stats()
    }

    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn capacity_blocks(&self) -> u64 {
        self.inner.capacity_blocks()
    }

    fn band_map(&self) -> Option<&BandMap> {
        self.inner.band_map()
    }

    fn pb_fill(&self) -> Option<(u64, u64)> {
        self.inner.pb_fill()
    }

    fn idle(&mut self, now: Nanos, until: Nanos) {
        let to_inner = |t: Nanos| Nanos((t.0 as i128 - self.skew).max(0) as u64);
        self.inner.idle(to_inner(now), to_inner(until));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shingled_core::ByteSize;
    use shingled_device::{BuildContext, DriveConfig};

    fn drive() -> Box<dyn Drive> {
        let mut cfg = DriveConfig::from_profile("sac-emulator").unwrap();
        cfg.set_capacity(ByteSize::gb(2));
        cfg.build(&BuildContext::whole_drive(ByteSize::gb(2))).unwrap()
    }

    /// Runs a closed loop of mixed requests, returns the times seen and the inner counters.
    fn run(d: &mut dyn Drive) -> (Vec<u64>, DriveStats) {
        let mut now = Nanos(0);
        let mut times = Vec::new();
        for i in 0..3000u64 {
            let b = (i * 7919) % 400_000;
            let t = if i % 3 == 0 { d.read(now, b, 2) } else { d.write(now, b, 1) };
            times.push(t.0);
            now += t;
            if i % 500 == 0 {
                now += Nanos(1_000_000); // idle gaps pass through unchanged
            }
        }
        (times, d.stats())
    }

    #[test]
    fn noise_scatters_times_but_not_the_drive() {
        let (plain, s0) = run(drive().as_mut());
        let cfg = NoiseConfig { jitter: 0.3, outlier_probability: 0.01, outlier_factor: 5.0, seed: 1 };
        let mut n = Noisy::new(drive(), cfg);
        let (noisy, s1) = run(&mut n);
        assert_eq!(s0, s1, "the inner model saw the same requests at the same times");
        let ratios: Vec<f64> = plain.iter().zip(&noisy).map(|(a, b)| *b as f64 / *a as f64).collect();
        assert!(ratios.iter().all(|r| (0.69..=6.6).contains(r)), "{:?}", &ratios[..10]);
        let outliers = ratios.iter().filter(|r| **r > 1.31).count();
        assert!((10..=60).contains(&outliers), "{outliers}");
        let mean = ratios.iter().filter(|r| **r <= 1.31).sum::<f64>() / (ratios.len() - outliers) as f64;
        assert!((mean - 1.0).abs() < 0.02, "{mean}");
        assert_eq!(n.band_map().unwrap().len(), drive().band_map().unwrap().len());
        // Same seed, same noise.
        let (again, _) = run(&mut Noisy::new(drive(), cfg));
        assert_eq!(noisy, again);
        assert!(NoiseConfig { jitter: 1.0, ..cfg }.validate().is_err());
    }
}
