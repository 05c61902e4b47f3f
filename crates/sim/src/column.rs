//! The metric columns of experiment tables ([`Column`]) and each column's value for a run.

use crate::format::{num, pct, secs};
use crate::run::RunReport;
use serde::{Deserialize, Serialize};

/// A metric column of an experiment table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Column {
    /// Total modelled I/O time, s.
    TotalTime,
    /// SSD time (read + write), s.
    SsdTime,
    /// Drive read time, s.
    DriveReadTime,
    /// Drive write time, s.
    DriveWriteTime,
    /// Speed-up against the row labelled `smr-only` of the same trace.
    VsSmrOnly,
    /// Speed-up against `cmr-only`.
    VsCmrOnly,
    /// Speed-up against `lru`.
    VsLru,
    /// All hits / block accesses.
    HitRatio,
    /// 1 − hit ratio.
    MissRatio,
    /// Read hit ratio.
    ReadHit,
    /// Write hit ratio.
    WriteHit,
    /// WA: band bytes written / bytes cleaned out of the PB (PORE §V-C).
    Wa,
    /// Device-level write amplification: media bytes written / bytes the application wrote.
    DevWa,
    /// RMW count.
    Rmws,
    /// Clean blocks evicted.
    CleanEvictions,
    /// Dirty blocks evicted.
    DirtyEvictions,
    /// Mean response time (open loop: completion − arrival), ms.
    RespMean,
    /// Median response time, ms.
    RespP50,
    /// 90th percentile response time, ms.
    RespP90,
    /// 99th percentile response time, ms.
    RespP99,
    /// On-demand GCs (SMaRT) or write-forced band cleanings (Skylight) per million drive
    /// write requests (SMaRT Table 2's GC_F).
    GcOnDemandPerM,
    /// Background GCs / idle cleanings per million drive write requests (Table 2's GC_B).
    GcBackgroundPerM,
    /// Share of drive write requests that ran an on-demand GC, % (SMaRT Fig. 10).
    AmplifiedWritePct,
    /// Median cost of an on-demand GC: tracks moved (SMaRT) or I/O requests (Skylight).
    GcCostMedian,
    /// Share of on-demand GCs costing 1 (one track; SMaRT §5.5.4), %.
    GcCostOnePct,
    /// Share of on-demand GCs costing under 10, %.
    GcCostUnder10Pct,
    /// Share of on-demand GCs costing under 100, %.
    GcCostUnder100Pct,
    /// Share of read requests split into several physical reads, % (SMaRT Fig. 6).
    FragmentedReadPct,
    /// Mean physical reads per fragmented read (SMaRT Figs. 7–9's fragmentation ratio).
    FragmentRatio,
    /// Share of fragmented reads split into at most 3 pieces, %.
    FragmentAtMost3Pct,
    /// Share of track updates written in place, % (SMaRT).
    InPlacePct,
    /// The translation layer's map, MiB (SMaRT: 8 B per mapped track, §4.1).
    MapMib,
    /// Space gain (SMaRT Table 3): the bytes the layout can give the host (at full utilisation)
    /// over the mechanism's raw bytes, %: the RAZ and a media cache cost space, guard tracks
    /// do not (they exist only below 50% utilisation).
    SpaceGainPct,
}

impl Column {
    /// Header text.
    pub fn header(self) -> &'static str {
        match self {
            Column::TotalTime => "total time (s)",
            Column::SsdTime => "SSD (s)",
            Column::DriveReadTime => "drive read (s)",
            Column::DriveWriteTime => "drive write (s)",
            Column::VsSmrOnly => "vs SMR-only",
            Column::VsCmrOnly => "vs CMR-only",
            Column::VsLru => "vs LRU",
            Column::HitRatio => "hit ratio",
            Column::MissRatio => "miss ratio",
            Column::ReadHit => "read hit",
            Column::WriteHit => "write hit",
            Column::Wa => "WA",
            Column::DevWa => "dev WA",
            Column::Rmws => "RMWs",
            Column::CleanEvictions => "clean evicted",
            Column::DirtyEvictions => "dirty evicted",
            Column::RespMean => "resp mean (ms)",
            Column::RespP50 => "p50 (ms)",
            Column::RespP90 => "p90 (ms)",
            Column::RespP99 => "p99 (ms)",
            Column::GcOnDemandPerM => "GC_F /1M wr",
            Column::GcBackgroundPerM => "GC_B /1M wr",
            Column::AmplifiedWritePct => "amplified wr %",
            Column::GcCostMedian => "GC_F cost p50",
            Column::GcCostOnePct => "cost 1 %",
            Column::GcCostUnder10Pct => "cost <10 %",
            Column::GcCostUnder100Pct => "cost <100 %",
            Column::FragmentedReadPct => "fragmented rd %",
            Column::FragmentRatio => "pieces/frag rd",
            Column::FragmentAtMost3Pct => "<=3 pieces %",
            Column::InPlacePct => "in place %",
            Column::MapMib => "map (MiB)",
            Column::SpaceGainPct => "space gain %",
        }
    }
}

/// The value of `col` for run `r` as the tables print it, with `group` the runs of the same
/// trace (for speed-ups).
pub fn column_value(col: Column, r: &RunReport, group: &[&RunReport]) -> String {
    use Column::*;
    let m = &r.total;
    let c = &m.counters;
    let speedup = |label: &str| {
        group
            .iter()
            .find(|g| g.label == label)
            .filter(|_| m.total_time_s > 0.0)
            .map(|g| format!("{:.2}x", g.total.total_time_s / m.total_time_s))
            .unwrap_or_else(|| "-".into())
    };
    match col {
        TotalTime => secs(m.total_time_s),
        SsdTime => secs(m.ssd_read_time_s + m.ssd_write_time_s),
        DriveReadTime => secs(m.drive_read_time_s),
        DriveWriteTime => secs(m.drive_write_time_s),
        VsSmrOnly => speedup("smr-only"),
        VsCmrOnly => speedup("cmr-only"),
        VsLru => speedup("lru"),
        HitRatio => pct(m.hit_ratio),
        MissRatio => pct(m.hit_ratio.map(|h| 1.0 - h)),
        ReadHit => pct(m.read_hit_ratio),
        WriteHit => pct(m.write_hit_ratio),
        Wa => num(m.write_amplification, 2),
        DevWa => num(m.device_write_amplification, 2),
        Rmws => c.drive.rmws.to_string(),
        CleanEvictions => c.clean_evictions.to_string(),
        DirtyEvictions => c.dirty_evictions.to_string(),
        RespMean => format!("{:.2}", m.latency.mean_ms),
        RespP50 => format!("{:.2}", m.latency.p50_ms),
        RespP90 => format!("{:.2}", m.latency.p90_ms),
        RespP99 => format!("{:.2}", m.latency.p99_ms),
        SpaceGainPct => {
            use shingled_device::DriveConfig::*;
            let (usable, raw) = match &r.config.drive {
                Cmr(h) => (h.capacity.0, h.capacity.0),
                DmSmr(d) => (d.capacity.0, d.mechanism.capacity.0),
                Smart(t) => {
                    let raw = t.mechanism.capacity.0;
                    (t.shingled_size.map_or(raw.saturating_sub(t.raz.0), |b| b.0), raw)
                }
            };
            format!("{:.1}", 100.0 * usable as f64 / raw.max(1) as f64)
        }
        GcOnDemandPerM | GcBackgroundPerM | AmplifiedWritePct | GcCostMedian | GcCostOnePct
        | GcCostUnder10Pct | GcCostUnder100Pct | FragmentedReadPct | FragmentRatio | FragmentAtMost3Pct
        | InPlacePct | MapMib => stl_value(col, &c.drive).map_or_else(|| "-".into(), |v| format!("{v:.1}")),
    }
}

/// A translation-layer figure of SMaRT's evaluation from a drive's statistics (`None` where it
/// does not apply: nothing counted, or no translation layer).
pub fn stl_value(col: Column, d: &shingled_device::DriveStats) -> Option<f64> {
    use Column::*;
    let s = &d.stl;
    if s.is_empty() {
        return None;
    }
    let per = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
    let share =
        |h: &shingled_device::Hist, below: u64| per(h.count_below(below), h.count()).map(|x| 100.0 * x);
    match col {
        GcOnDemandPerM => per(s.gc_ondemand, d.write_ops).map(|x| x * 1e6),
        GcBackgroundPerM => per(s.gc_background, d.write_ops).map(|x| x * 1e6),
        AmplifiedWritePct => per(s.writes_triggering_gc, d.write_ops).map(|x| 100.0 * x),
        GcCostMedian => {
            let n = s.gc_cost.count();
            let mut seen = 0;
            s.gc_cost
                .buckets()
                .find(|b| {
                    seen += b.2;
                    2 * seen >= n
                })
                .map(|b| b.0 as f64)
        }
        GcCostOnePct => {
            per(s.gc_cost.count_below(2) - s.gc_cost.count_below(1), s.gc_cost.count()).map(|x| 100.0 * x)
        }
        GcCostUnder10Pct => share(&s.gc_cost, 10),
        GcCostUnder100Pct => share(&s.gc_cost, 100),
        FragmentedReadPct => {
            if s.read_pieces.is_empty() {
                return None;
            }
            per(s.fragmented_reads, d.read_ops).map(|x| 100.0 * x)
        }
        FragmentRatio => {
            let (mut n, mut sum) = (0u64, 0u64);
            for (lo, _, c) in s.read_pieces.buckets().filter(|b| b.0 >= 2) {
                n += c;
                sum += lo * c;
            }
            per(sum, n)
        }
        FragmentAtMost3Pct => {
            let frag = s.read_pieces.count() - s.read_pieces.count_below(2);
            per(s.read_pieces.count_below(4) - s.read_pieces.count_below(2), frag).map(|x| 100.0 * x)
        }
        InPlacePct => per(s.in_place_updates, s.in_place_updates + s.out_of_place_updates).map(|x| 100.0 * x),
        MapMib => (s.physical_tracks > 0).then(|| s.map_bytes as f64 / (1u64 << 20) as f64),
        _ => None,
    }
}
