//! What a curve is asked for: the sampling rate, unit and method, and the grid.

use super::*;

/// Policy-configuration fields that are lengths in blocks when given as a number (PORE's
/// `period`, SAC's and MOST+CDC's `cycle_length`: scaled like the PB; CDC's `clean_scan` and
/// `clean_phase`: like the cache). Eviction batches are not lengths of a period and keep their
/// size.
pub(super) const SCALED_FIELDS: [&str; 4] = ["period", "cycle_length", "clean_scan", "clean_phase"];

/// `--rate auto` keeps at least this many units in the sample (measured in docs/benchmarks.md:
/// below a few hundred sampled bands the spread between seeds exceeds the accuracy targets).
pub const AUTO_MIN_UNITS: f64 = 400.0;
/// `--rate auto` keeps the smallest scaled cache at least this many blocks.
pub const AUTO_MIN_CACHE_BLOCKS: f64 = 4096.0;
/// `--rate auto` never samples below this rate.
pub const AUTO_MIN_RATE: f64 = 0.001;

/// The sampling rate of a curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rate {
    /// This fraction of the units, in (0, 1].
    Fixed(f64),
    /// The smallest rate keeping [`AUTO_MIN_UNITS`] units and a scaled cache of
    /// [`AUTO_MIN_CACHE_BLOCKS`] blocks (at most 1, at least [`AUTO_MIN_RATE`]).
    Auto,
}

impl std::str::FromStr for Rate {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Rate, ParseError> {
        let t = s.trim();
        if t == "auto" {
            return Ok(Rate::Auto);
        }
        let r = match t.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
            None => t.parse::<f64>(),
        }
        .map_err(|_| ParseError::Rate(s.to_string()))?;
        if !(r > 0.0 && r <= 1.0) {
            return Err(ParseError::RateRange(s.to_string()));
        }
        Ok(Rate::Fixed(r))
    }
}

/// What a sampling decision is made for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// The drive's bands (its band map; the default bands for a drive without one).
    #[default]
    Band,
    /// Aligned zones of this size (e.g. PORE's and SAC's 20 MiB).
    Zone(ByteSize),
}

impl std::str::FromStr for Unit {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Unit, ParseError> {
        match s.trim() {
            "band" => Ok(Unit::Band),
            t => match t.strip_prefix("zone:") {
                Some(z) => {
                    let size: ByteSize = z.parse().map_err(|e: shingled_core::SizeError| {
                        ParseError::UnitSize(s.to_string(), e.to_string())
                    })?;
                    if size.0 < BLOCK_SIZE {
                        return Err(ParseError::UnitTooSmall(s.to_string()));
                    }
                    Ok(Unit::Zone(size))
                }
                None => Err(ParseError::Unit(s.to_string())),
            },
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unit::Band => f.write_str("band"),
            Unit::Zone(z) => write!(f, "zone:{z}"),
        }
    }
}

/// How the sampled units are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sampling {
    /// Every `1/rate`-th unit in order of traffic, from a seeded offset
    /// ([`Selector::stratified`]): one more pass over the trace to count each unit's traffic,
    /// and a sample that holds its share of busy units.
    #[default]
    Stratified,
    /// SHARDS' seeded hash of the unit ([`Selector::new`]): no extra pass, more variance.
    Hash,
}

impl std::str::FromStr for Sampling {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Sampling, ParseError> {
        match s.trim() {
            "stratified" => Ok(Sampling::Stratified),
            "hash" => Ok(Sampling::Hash),
            _ => Err(ParseError::Sampling(s.to_string())),
        }
    }
}

/// A curve's grid and how its points are computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveOptions {
    /// Policies (`name[:field=value,…]`); each gets every size.
    pub policies: Vec<String>,
    /// Cache sizes (absolute or relative to the full trace's footprint); empty: the base's.
    pub cache_sizes: Vec<SizeSpec>,
    /// Persistent-buffer sizes of a DM-SMR drive; empty: the base drive's.
    pub pb_sizes: Vec<SizeSpec>,
    /// The sampling rate.
    pub rate: Rate,
    /// Samples averaged per point, 1 to [`MAX_SAMPLES`]: the best-balanced distinct stratified samples
    /// ([`Selector::stratified_many`]; fewer when fewer exist), or hashed with seeds `seed`,
    /// `seed + 1`, ….
    pub samples: u32,
    /// Seed of the first sample.
    pub seed: u64,
    /// The sampling unit.
    pub unit: Unit,
    /// How units are chosen.
    #[serde(default)]
    pub sampling: Sampling,
    /// Full simulations run at this many points spread over the grid ([`spread`]), to measure
    /// the error.
    pub validate: usize,
    /// Points (indices into the grid, policy by policy, then cache size, then PB size) to
    /// validate instead of `validate` spread ones: a grid split between workers validates the
    /// points the whole grid would ([`CurveReport::merge`]).
    #[serde(default)]
    pub validate_points: Vec<usize>,
    /// Simulations run in parallel.
    pub jobs: usize,
    /// Report the window after the base configuration's warm-up (`sim`'s `after-warmup`)
    /// instead of the whole replay. Every point, sampled or validated, and LRU's exact curve
    /// (for a warm-up of a request count or a fraction of the trace) cover that window.
    #[serde(default)]
    pub after_warmup: bool,
}

impl Default for CurveOptions {
    fn default() -> Self {
        CurveOptions {
            policies: vec!["lru".into()],
            cache_sizes: Vec::new(),
            pb_sizes: Vec::new(),
            rate: Rate::Auto,
            samples: 1,
            seed: 0,
            unit: Unit::Band,
            sampling: Sampling::default(),
            validate: 0,
            validate_points: Vec::new(),
            jobs: 1,
            after_warmup: false,
        }
    }
}
