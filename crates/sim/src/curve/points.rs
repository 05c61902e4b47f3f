//! What a curve reports: each point's metrics and method, the errors against full runs, the
//! whole curve.

use super::*;

/// A point's metrics, as a full run would report them over the whole replay (counts scaled back
/// to the full trace for a sampled point).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointMetrics {
    /// All hits / all block accesses.
    pub hit_ratio: Option<f64>,
    /// Read hits / block reads.
    pub read_hit_ratio: Option<f64>,
    /// Write hits / block writes.
    pub write_hit_ratio: Option<f64>,
    /// WA: band bytes written / bytes cleaned out of the PB (PORE §V-C).
    pub write_amplification: Option<f64>,
    /// Device-level write amplification: media bytes written / bytes the application wrote.
    #[serde(default)]
    pub device_write_amplification: Option<f64>,
    /// Read-modify-writes of bands.
    pub rmws: Option<f64>,
    /// Blocks appended to the PB.
    pub pb_writes: Option<f64>,
    /// Bytes written to bands.
    pub band_bytes_written: Option<f64>,
    /// Dirty blocks evicted (written back).
    pub dirty_evictions: Option<f64>,
    /// Clean blocks evicted.
    pub clean_evictions: Option<f64>,
    /// Blocks the host side wrote to the drive.
    pub drive_blocks_written: Option<f64>,
    /// Total modelled I/O time, seconds.
    pub total_time_s: Option<f64>,
    /// Drive write time (PB cleaning waited for included), seconds.
    pub drive_write_time_s: Option<f64>,
    /// Trace requests processed (a sampled request cut into pieces counts once per piece).
    pub requests: Option<f64>,
}

/// Reads one metric of a [`PointMetrics`].
pub type Metric = fn(&PointMetrics) -> Option<f64>;

impl PointMetrics {
    /// Every metric by its field name, in declaration order (CSV columns, DataFrame columns).
    pub const FIELDS: [(&'static str, Metric); 14] = [
        ("hit_ratio", |m| m.hit_ratio),
        ("read_hit_ratio", |m| m.read_hit_ratio),
        ("write_hit_ratio", |m| m.write_hit_ratio),
        ("write_amplification", |m| m.write_amplification),
        ("device_write_amplification", |m| m.device_write_amplification),
        ("rmws", |m| m.rmws),
        ("pb_writes", |m| m.pb_writes),
        ("band_bytes_written", |m| m.band_bytes_written),
        ("dirty_evictions", |m| m.dirty_evictions),
        ("clean_evictions", |m| m.clean_evictions),
        ("drive_blocks_written", |m| m.drive_blocks_written),
        ("total_time_s", |m| m.total_time_s),
        ("drive_write_time_s", |m| m.drive_write_time_s),
        ("requests", |m| m.requests),
    ];

    /// The metric called `name` (a [`PointMetrics::FIELDS`] name).
    pub fn field(name: &str) -> Option<Metric> {
        Self::FIELDS.iter().find(|(n, _)| *n == name).map(|(_, g)| *g)
    }

    /// The metrics of `c`, counts and times multiplied by `scale`.
    pub(super) fn from_counters(c: &Counters, scale: f64) -> PointMetrics {
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        let n = |x: u64| Some(x as f64 * scale);
        PointMetrics {
            hit_ratio: ratio(c.read_hits + c.write_hits, c.blocks_read + c.blocks_written),
            read_hit_ratio: ratio(c.read_hits, c.blocks_read),
            write_hit_ratio: ratio(c.write_hits, c.blocks_written),
            write_amplification: c.drive.write_amplification(),
            device_write_amplification: c
                .drive
                .device_write_amplification(c.blocks_written * shingled_core::BLOCK_SIZE),
            rmws: n(c.drive.rmws),
            pb_writes: n(c.drive.pb_writes),
            band_bytes_written: n(c.drive.band_bytes_written),
            dirty_evictions: n(c.dirty_evictions),
            clean_evictions: n(c.clean_evictions),
            drive_blocks_written: n(c.drive_blocks_written),
            total_time_s: Some(c.total_time().as_secs_f64() * scale),
            drive_write_time_s: Some(c.drive_write_time.as_secs_f64() * scale),
            requests: n(c.requests),
        }
    }
}

/// How a point's figures were obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Sampled mini-simulations.
    Sampled,
    /// The full simulation (rate 1 needs no sampling).
    Full,
}

/// One point of a curve: a policy at a cache size and PB size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The policy as given.
    pub policy: String,
    /// The cache size as given.
    pub cache_size: String,
    /// Its full-trace size in 4 KiB blocks.
    pub cache_blocks: u64,
    /// The PB size as given (`None`: a drive without a PB).
    pub pb_size: Option<String>,
    /// Its full-trace size in blocks.
    pub pb_blocks: Option<u64>,
    /// How the metrics were obtained.
    pub method: Method,
    /// The metrics (sampled and scaled back, or the full run's).
    pub metrics: PointMetrics,
    /// LRU's exact hit ratio at this size (stack distances), for `lru` points in modes where it
    /// is exact.
    pub exact_hit_ratio: Option<f64>,
    /// The full simulation's metrics, at validated points.
    pub full: Option<PointMetrics>,
    /// Seconds of host time this point's simulations took (each on one thread).
    pub wall_s: f64,
    /// Seconds of host time of the full simulation, at validated points.
    pub full_wall_s: Option<f64>,
}

/// The errors of one metric over the validated points.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricError {
    /// The metric: `hit_ratio` (error in percentage points), `write_amplification`, `rmws`,
    /// `total_time_s` (relative errors in percent).
    pub metric: String,
    /// The unit of the errors: `pp` or `%`.
    pub unit: String,
    /// Mean absolute error over the points where both figures exist.
    pub mean_abs: Option<f64>,
    /// Largest absolute error.
    pub max_abs: Option<f64>,
    /// Points compared.
    pub points: usize,
}

impl MetricError {
    /// One line of text: `metric  mean M unit, max X unit over N points` (`-` where absent).
    pub fn describe(&self) -> String {
        let f = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.2}"));
        format!(
            "{:<20} mean {} {}, max {} {} over {} points",
            self.metric,
            f(self.mean_abs),
            self.unit,
            f(self.max_abs),
            self.unit,
            self.points
        )
    }
}

/// A curve: every point, the sampling that produced it, its cost and, when validated, its error.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CurveReport {
    /// The trace path or synthetic spec.
    pub trace: String,
    /// The full trace's footprint (the sizes resolve against it).
    pub stats: TraceStats,
    /// Cache mode.
    pub mode: String,
    /// The rate used (resolved when `auto`).
    pub rate: f64,
    /// Whether the rate was chosen automatically.
    pub rate_auto: bool,
    /// The sampling unit.
    pub unit: String,
    /// How units were chosen.
    #[serde(default)]
    pub sampling: Sampling,
    /// The replay window the figures cover: `total` (the whole replay) or `after-warmup (W)`
    /// with the warm-up `W` ([`CurveOptions::after_warmup`]).
    #[serde(default = "total_window")]
    pub window: String,
    /// Units touched by the full trace (bands counted; zones estimated from its covered-band
    /// bytes).
    pub units_touched: u64,
    /// Units kept by the first sample.
    pub units_sampled: u64,
    /// Samples averaged per point.
    pub samples: u32,
    /// The first sample's measured shares of the full trace, which scale its sizes and counts.
    pub scale: Scale,
    /// Block requests of the full trace and of the first sample.
    pub blocks_full: u64,
    /// Block requests in the first sample.
    pub blocks_sampled: u64,
    /// The points, policy by policy, then cache size, then PB size.
    pub points: Vec<CurvePoint>,
    /// Per-metric errors over the validated points (empty without validation).
    pub errors: Vec<MetricError>,
    /// Host seconds spent counting each unit's traffic (stratified sampling), reading the
    /// samples and running every mini-simulation (summed over threads).
    pub sampled_cost_s: f64,
    /// Host seconds of the one-pass exact LRU curve (0 when not computed).
    pub exact_cost_s: f64,
    /// Estimated host seconds of full simulations of every point: the validated points' mean
    /// full-run time × points (`None` without validation).
    pub full_cost_s: Option<f64>,
    /// The configuration every point derives from.
    pub base: SimConfig,
}

impl CurveReport {
    /// How the points were sampled, as text: `rate R[ (auto)] by UNIT, SAMPLING (K of N units`
    /// (the caller closes the parenthesis, adding what it reports beside).
    pub fn sampling_text(&self) -> String {
        format!(
            "rate {:.4}{} by {}, {} ({} of {} units",
            self.rate,
            if self.rate_auto { " (auto)" } else { "" },
            self.unit,
            format!("{:?}", self.sampling).to_lowercase(),
            self.units_sampled,
            self.units_touched
        )
    }

    /// One report of the curves of `parts`, computed separately on the same trace with the same
    /// rate, unit and seeds (a grid split between workers): points in order of the parts, costs
    /// added, errors over every validated point. `None` for no part.
    pub fn merge(parts: Vec<CurveReport>) -> Option<CurveReport> {
        let mut it = parts.into_iter();
        let mut out = it.next()?;
        for p in it {
            out.points.extend(p.points);
            out.sampled_cost_s += p.sampled_cost_s;
            out.exact_cost_s += p.exact_cost_s;
        }
        out.errors = errors(&out.points);
        let fulls: Vec<f64> = out.points.iter().filter_map(|p| p.full_wall_s).collect();
        out.full_cost_s = (!fulls.is_empty())
            .then(|| fulls.iter().sum::<f64>() / fulls.len() as f64 * out.points.len() as f64);
        Some(out)
    }
}

pub(super) fn total_window() -> String {
    "total".into()
}
