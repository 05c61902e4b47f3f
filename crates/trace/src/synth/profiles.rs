//! The ten MSR Cambridge volume profiles: the published figures each one must reproduce, and the
//! model parameters chosen for it. `docs/synthetic-traces.md` gives the source or rationale of
//! every number here; keep the two in step.

/// Where a profile's headline figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureSource {
    /// PORE paper, Table I (page requests, write % of pages, written and accessed LBA range).
    PoreTable1,
    /// SAC paper, Table 4 (the `rsrch` row; page requests given there in millions).
    SacTable4,
    /// SMaRT paper, Table 1 (mean request size and write share of requests of `proj_0`; the
    /// page count, ranges and model parameters are our assumptions, docs/synthetic-traces.md).
    SmartTable1,
}

impl FigureSource {
    /// Short citation, e.g. `PORE Table I`.
    pub fn cite(self) -> &'static str {
        match self {
            FigureSource::PoreTable1 => "PORE Table I",
            FigureSource::SacTable4 => "SAC Table 4",
            FigureSource::SmartTable1 => "SMaRT Table 1",
        }
    }
}

/// One profile: published figures plus model parameters.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    pub name: &'static str,
    pub server: &'static str,
    /// The SNIA file the figures most probably describe (inferred from the page counts).
    pub msr_volume: &'static str,
    pub source: FigureSource,
    // ---- published figures (the targets) ----
    /// 4 KiB page requests of the whole trace.
    pub pages: u64,
    /// Write percentage of page requests.
    pub write_pct: f64,
    /// Written LBA range: total size of the SMR bands receiving writes, decimal GB.
    pub written_gb: f64,
    /// Accessed LBA range, decimal GB.
    pub accessed_gb: f64,
    // ---- literature figures used to shape sizes and timing (approximate) ----
    /// Requests in the original volume trace (one week).
    pub orig_requests: u64,
    /// Write percentage of requests (not pages) in the original trace.
    pub write_req_pct: f64,
    // ---- model parameters (assumptions, calibrated; see the doc) ----
    /// Distinct blocks touched / blocks of the accessed LBA range.
    pub density: f64,
    /// Zipf exponent of extent popularity (over normalised rank; < 1 keeps it scale-free).
    pub zipf: f64,
    /// Share of requests that re-reference a recent request.
    pub p_reref: f64,
    /// Re-reference window, in pages, as a fraction of the live (distinct) blocks.
    pub reref_window: f64,
    /// Share of requests that continue a sequential stream.
    pub p_stream: f64,
    /// Share of popularity-driven requests that are 512-byte aligned but not 4 KiB aligned.
    pub unaligned: f64,
    /// Phase model: probability that a popular request first replaces its active cluster.
    pub swap: f64,
}

impl Profile {
    /// Mean pages per request in the original trace.
    pub fn pages_per_request(&self) -> f64 {
        self.pages as f64 / self.orig_requests as f64
    }

    /// Mean pages of a write and of a read request, from the page total, the request count and
    /// the two write percentages: `W = f·m/q`, `R = (1-f)·m/(1-q)`.
    pub fn mean_pages(&self) -> (f64, f64) {
        let m = self.pages_per_request();
        let f = self.write_pct / 100.0;
        let q = self.write_req_pct / 100.0;
        let w = (f * m / q).max(1.0);
        let r = ((1.0 - f) * m / (1.0 - q)).max(1.0);
        (w, r)
    }
}

/// Seconds in the traced week (Narayanan et al., FAST'08: one week of every volume).
pub(crate) const TRACE_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

macro_rules! profile {
    ($name:literal, $server:literal, $vol:literal, $src:ident,
     $pages:literal, $wpct:literal, $wgb:literal, $agb:literal,
     $oreq:literal, $wreq:literal,
     $dens:literal, $zipf:literal, $reref:literal, $win:literal, $stream:literal, $unal:literal,
     $swap:literal) => {
        Profile {
            name: $name,
            server: $server,
            msr_volume: $vol,
            source: FigureSource::$src,
            pages: $pages,
            write_pct: $wpct,
            written_gb: $wgb,
            accessed_gb: $agb,
            orig_requests: $oreq,
            write_req_pct: $wreq,
            density: $dens,
            zipf: $zipf,
            p_reref: $reref,
            reref_window: $win,
            p_stream: $stream,
            unaligned: $unal,
            swap: $swap,
        }
    };
}

/// The profiles, in PORE Table I order, then `rsrch`.
#[rustfmt::skip]
pub(crate) static PROFILES: &[Profile] = &[
    //       name     server                     file      source
    //       pages        w%    wGB    aGB     orig req   wreq%  dens  zipf  reref win   stream unal  swap
    profile!("src",   "Source control",          "src1_2", PoreTable1,
             14_024_860, 83.2,  3.80,  3.93,  1_907_773, 74.6,  0.55, 0.42, 0.05, 0.02, 0.35, 0.01, 0.02),
    profile!("prn",   "Print server",            "prn_0",  PoreTable1,
             17_635_766, 80.2, 20.22, 20.26,  5_585_886, 89.2,  0.45, 0.66, 0.12, 0.02, 0.25, 0.02, 0.02),
    profile!("ts",    "Terminal server",         "ts_0",   PoreTable1,
              4_216_457, 74.1,  9.80,  9.81,  1_801_734, 82.4,  0.25, 0.73, 0.25, 0.02, 0.15, 0.03, 0.015),
    profile!("wdev",  "Test web server",         "wdev_0", PoreTable1,
              2_654_824, 72.7,  4.71,  4.73,  1_143_261, 79.9,  0.35, 0.79, 0.25, 0.02, 0.15, 0.03, 0.02),
    profile!("mds",   "Media server",            "mds_0",  PoreTable1,
              2_916_662, 70.4,  3.58,  3.73,  1_211_034, 88.1,  0.35, 0.80, 0.30, 0.02, 0.15, 0.02, 0.02),
    profile!("stg",   "Web staging",             "stg_0",  PoreTable1,
              6_098_667, 68.2,  7.29,  7.58,  2_030_915, 84.8,  0.40, 0.72, 0.20, 0.02, 0.20, 0.02, 0.02),
    profile!("hm",    "Hardware monitoring",     "hm_0",   PoreTable1,
              8_985_487, 67.3,  9.07,  9.19,  3_993_316, 64.5,  0.50, 0.71, 0.20, 0.02, 0.10, 0.03, 0.02),
    profile!("web",   "Web/SQL server",          "web_0",  PoreTable1,
              9_642_398, 46.4,  7.11,  8.35,  2_029_945, 70.1,  0.40, 0.77, 0.25, 0.02, 0.25, 0.02, 0.02),
    profile!("usr",   "User home directories",   "usr_0",  PoreTable1,
             12_873_274, 27.9,  6.42,  6.92,  2_237_889, 59.6,  0.50, 0.78, 0.25, 0.02, 0.30, 0.02, 0.02),
    profile!("rsrch", "Research projects",       "rsrch_0", SacTable4,
              3_200_000, 88.8, 17.70, 17.70,  1_433_655, 90.7,  0.12, 0.60, 0.20, 0.02, 0.10, 0.03, 0.02),
    profile!("proj",  "Project directories",     "proj_0", SmartTable1,
             40_132_978, 87.5,  7.60,  8.00,  4_224_524, 87.5,  0.40, 0.72, 0.20, 0.02, 0.30, 0.02, 0.02),
];

/// SMaRT Table 1's MAX LBA of the four volumes it replays, in 512-byte sectors: the highest
/// address each touches, which `span=max` spreads a synthetic trace over.
pub(crate) const SMART_MAX_LBA: &[(&str, u64)] =
    &[("mds", 71_127_264), ("proj", 34_057_712), ("stg", 22_680_944), ("rsrch", 35_423_624)];

/// Looks a profile up by name (ASCII case-insensitive).
pub(crate) fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}
