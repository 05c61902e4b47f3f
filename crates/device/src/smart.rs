//! SMaRT, a track-level shingled translation layer (Weiping He and David H.C. Du, "SMaRT: An
//! Approach to Shingled Magnetic Recording Translation", FAST '17), as a drive model on the
//! same [`Mechanism`] as the CMR and DM-SMR drives.
//!
//! Use it to compare a track-mapped, in-place-when-possible SMR drive with the persistent-buffer
//! design of [`crate::dm_smr`] (SMaRT §5 compares the two with a CMR disk). It is not a model of
//! a product: no shipping drive documents its translation layer, and SMaRT's own numbers come
//! from a DiskSim simulation. Every choice the paper leaves open is listed below, beside the
//! section it fills in, and in `docs/drive-models.md` ("SMaRT").
//!
//! # Layout and map (§2, §4.1)
//!
//! The shingled space is a list of recording zones, each with a track count and a constant
//! track size in 512-byte sectors ([`RecordingZone`]); an explicit table, or `derived_zones`
//! zones derived from the mechanism's rate profile. The first `raz` bytes of the table form the
//! unshingled random access zone (RAZ, §2), which holds the persistent map (§4.5) and is never
//! touched by the model (map synchronisation is not modelled); the shingled space starts at the
//! first track boundary at or after it and takes at most `shingled_size` bytes of whole tracks.
//!
//! - **Tracks in 4 KiB blocks.** Host blocks are 4 KiB, so a track holds
//!   `floor(sectors_per_track / 8)` blocks; the sectors left over (a 994-sector track holds 124
//!   blocks and 2 spare sectors) stay unused. Choice: 4 KiB-aligned tracks keep a block on one
//!   track (the paper's 512 B sectors never straddle tracks either).
//! - **LBA → (LTN, offset).** Zone by zone, in order (§4.1: "based on the number of zones and
//!   the track size in each zone"): zone `z` serves `L_z` logical tracks (below), so block `b`
//!   of the host space is in the zone whose block range holds it, at logical track
//!   `first_ltn(z) + (b − first_block(z)) / blocks_per_track(z)`.
//! - **LTN → PTN** is a `Vec<u32>` (and PTN → LTN a second one, `u32::MAX` = free); a logical
//!   track always maps into its own zone, since only that zone has tracks of its size (§4.2:
//!   "space management is done for each zone separately").
//! - **PBA → mechanism.** The [`Mechanism`] has a continuous geometry (the rate falls linearly
//!   from the outer to the inner diameter) and no discrete tracks. Physical track `p` of a zone
//!   starts at byte `base(z) + p × sectors_per_track × 512`, where `base(z)` is the sum of the
//!   byte sizes of every track before it in the table (the RAZ included): the table laid end to
//!   end from byte 0. A block at offset `o` of the track is at that start plus `o × 4096`, and
//!   the mechanism times the access at that byte (seek by its cylinder, rotation by its angle,
//!   transfer at its rate). For the Cheetah profiles the mechanism's outer and inner rates are
//!   the table's outer and inner track sizes per revolution, so a full-track transfer at either
//!   end takes exactly one revolution, and within 5% of one in between; the mechanism's own
//!   track boundaries (head switches) do not coincide with the table's.
//!
//! # Space elements and the fragmentation ratio (§4.2.1, §4.2.2)
//!
//! Per zone, free and used elements (maximal runs of free or used tracks) alternate. Each
//! element's length is kept at its first track, in one of two segment trees over the track
//! positions (free lengths in a max tree, used lengths in a min tree), and its first track at
//! its last one, with a bitmap of free tracks: so the neighbours of a track are O(1), and the
//! element holding a track, the largest free element, the leftmost victim shorter than `W` and
//! the leftmost free element that fits a victim are O(log n) tree descents. Running totals of
//! free tracks `F`, free elements `N` and unusable free tracks make the ratio O(1):
//!
//! - `R = (F − Σ min(len, h − 1)) / F` for head width `h` (the tracks a write can start on,
//!   over all free tracks). With `h = 2` that is Eq. 1, `(F − N) / F`. `R = 0` when `F = 0`.
//! - **Zone-end rule** (choice): zones are separated by guard space outside the table (as the
//!   bands of an O-SMR drive are, §1), so the last `h − 1` tracks of a zone can be written
//!   without harming anything, and the last track of a zone can always be updated in place.
//!   `R` still uses Eq. 1 as printed, which counts the last free track of the zone's final
//!   element as unusable (Figure 1: `R = (10 − 5)/10` with `{22, 23}` at the zone's end).
//!
//! # Utilisation and pre-population (§4.4, §5.4)
//!
//! `utilisation` U is the share of each zone's tracks the host can address: zone `z` serves
//! `L_z = min(floor(U × T_z), T_z − 1)` logical tracks, so every zone keeps at least one free
//! track. With `prefill` (the default) every logical track is written before replay with the
//! identity map (LTN `i` of the zone on its physical track `i`): a sequential cold fill, as a
//! backup would leave it (§4.4), and how §5.4 "pre-populates ... by manipulating the metadata or
//! mapping table". Its time is not modelled and the tracks count as cold.
//!
//! Choice and reason: the utilisation is applied per zone, not as "the first U × capacity of the
//! drive". Space management is per zone, so a drive filled in LBA order would have its first
//! zones full and the rest empty, and a trace folded into the first U × capacity of the LBAs
//! (§5.4) would only meet full zones, against Table 2's zero GCs at 30%. With the host capacity
//! `Σ L_z` the folded range is exactly the drive's capacity and every zone runs at U. The
//! utilisation then stays at U (every write is an update); without `prefill` the drive starts
//! empty and fills up to U as new tracks are written.
//!
//! # Allocation (§4.2.3)
//!
//! - The **allocation pool** is the largest free element that has a usable track (its length
//!   is at least `h`, or it ends at the zone end); the **write cursor** starts at its first
//!   track. Ties between equally large elements go to the rightmost (choice: hot data
//!   accumulates at the right, §4.2.5).
//! - New and updated tracks are written at the cursor, which moves forward. While the track at
//!   the cursor can be written (it is free and its next `h − 1` tracks are free or past the zone
//!   end) the pool goes on, even if the element changed since it was chosen; otherwise the
//!   "latest largest" free element becomes the pool (read as: the largest one now). The cursor
//!   never moves back (choice): tracks a GC frees just behind it are left for later pools.
//! - **Hot and cold**: a track is hot when it is updated within `hot_window_ms` of its previous
//!   write (per-LTN last-write time; first writes and pre-populated tracks are cold). The paper
//!   gives no window ("data not updated for some time"); the default is one minute (choice).
//!   A very large window gives the literal reading "the most recently updated track is hot",
//!   i.e. every updated track.
//! - **Guard tracks**: while the zone's utilisation (used tracks / tracks) is below
//!   `guard_utilisation` (0.5), a hot track written out of place is followed by `h − 1` free
//!   tracks (the cursor skips them), so its next update is in place. New data never gets one
//!   (§4.4). Above the threshold the feature is off; below it, on again.
//!
//! # Hybrid update (§4.1.1, §4.3)
//!
//! Per logical track a write touches, in request order (no bundling of adjacent tracks: §6
//! lists it as future work):
//!
//! 1. an unmapped LTN is allocated at the cursor and only the written blocks are written;
//! 2. a mapped track whose next `h − 1` tracks are free (or past the zone end) is updated **in
//!    place**: only the written blocks;
//! 3. otherwise it is updated **out of place**: if the write covers only part of the track, the
//!    old track is read whole first (`update_read`; choice: a track-level map has no other copy
//!    of the untouched blocks), then the whole track is written at the cursor and the old track
//!    becomes free.
//!
//! Reads translate block by block and issue one mechanism access per run of physically
//! consecutive tracks (a read's "pieces", Figs. 6–9). Blocks of a never-written logical track
//! (only without `prefill`) are returned without a media access, like a trimmed range.
//!
//! # Garbage collection (§4.2.4, §4.2.5)
//!
//! - **On-demand**: on every write request, each zone it touches whose `R` is at or below
//!   `fragmentation_threshold` (0.5) first moves one victim element. When a track of the write
//!   then finds no usable free track, more elements move, one at a time, until one is usable;
//!   all moves done for one request in one zone are one on-demand GC operation (its cost is the
//!   tracks moved, Figs. 11–13).
//! - **Background** (with `idle_gc`): once the drive has been idle for `idle_window_ms`
//!   (1242 ms, §5.5.4), it moves one element after another in every zone with `R` at or below
//!   the threshold, until each is above it or the idle period ends; no move starts at or after
//!   the next request, and a move that has started finishes (the next request waits for it).
//!   Each move is one background GC. What ends an idle period is `idle_after`: `write` (the
//!   default; §4.2.4 counts idle time "between two writes" and §5.5.4 stops background GC
//!   "when the next write arrives", so reads do not reset the window and background GC goes on
//!   between them), or `request` (any request, as Skylight counts it, §5.1).
//! - **Victim**: the leftmost used element, scanning in the shingling direction, whose length is
//!   below `W`. `W` starts at `ceil(U / (1 − U))` with U the zone's used / total tracks (Eq. 2),
//!   computed exactly as `ceil(used / free)`, at least 1: the paper's "2 at 60%" needs rounding
//!   up (1.5 → 2) and its "9 at 90%" is exact. With no element below `W`, `W` doubles. The
//!   leftmost-from-the-left scan is a min-tree query over the used elements' lengths; at most
//!   two are made (the second with the `W` the doublings reach from the smallest length).
//! - **Track 0** (footnote 1, "a special case"): the used element that starts at the zone's
//!   first track is never a victim: nothing lies to its left, and moving it right would undo
//!   the cold-data progression (choice).
//! - **Destination**: the leftmost free element to the victim's left that fits it, i.e. holds
//!   the victim plus `h − 1` free tracks after it; else the victim shifts left onto its left
//!   used neighbour (its first track moves to the start of the free element before it). A
//!   victim inside the allocation pool (between the pool's first track and the cursor: recently
//!   written, possibly hot) always shifts left onto its neighbour. A move reads the whole victim
//!   (one access), then writes it (one access), so a shift that overlaps the victim's old place
//!   is safe. Cold data therefore moves left, against the shingling direction.
//!
//! # Cost
//!
//! O(log n) per written track (segment-tree updates when a track is allocated or freed, each
//! stopping where a node's value does not change; a bit test for the in-place test). A GC is O(log n) to choose the victim
//! and its destination (the segment trees answer "leftmost element shorter than W from the
//! zone's start" and "leftmost free element that fits", which is the paper's scan from the
//! leftmost element without walking it; with a head wider than 3 tracks, where not every
//! element can shift, the scan is done element by element), plus O(tracks moved) for the map.
//! Memory: 4 B + 4 B + 8 B per track (map, reverse map, last write), 4 B per track (element
//! ends), 16 B per track rounded up to a power of two per zone (the two trees), a bit per
//! track: about 40 B per track, 11 MB for the Cheetah's 277 k shingled tracks.
//!
//! # Inspection and tests
//!
//! [`Smart::record_ops`] logs every physical operation as a [`TrackOp`] (the golden tests'
//! `i3 u0>4 m1-4>0 …`); [`Smart::populate`] places logical tracks on chosen physical tracks (the
//! paper's Figure 1); [`Smart::gc_step`] runs one GC move; [`Smart::check`] recounts everything
//! kept incrementally. Statistics are in [`DriveStats::stl`](crate::StlStats).

use crate::envelope;
use crate::error::{invalid, Result};
use crate::hdd::{HddConfig, Mechanism};
use crate::{Drive, DriveStats};
use serde::{Deserialize, Serialize};
use shingled_core::{BlockNo, ByteSize, Nanos, BLOCK_SIZE};

/// Bytes per sector of the zone tables.
const SECTOR: u64 = 512;
/// Sectors per 4 KiB block.
const SECTORS_PER_BLOCK: u32 = (BLOCK_SIZE / SECTOR) as u32;
/// "No track" / "free track" in the maps.
const NONE: u32 = u32::MAX;
/// "Never written" in the last-write times.
const NEVER: u64 = u64::MAX;
/// Most physical tracks a drive may have (the maps hold `u32` with `u32::MAX` reserved).
const MAX_TRACKS: u64 = 1 << 31;

/// One recording zone of the shingled space: tracks of equal size (§2: "tracks in the same zone
/// have the same size").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingZone {
    /// Physical tracks in the zone (all surfaces together). Bounds ≥ 1.
    pub tracks: u32,
    /// Track size in 512-byte sectors. Bounds 8 ..= 1,048,576 (at least one 4 KiB block).
    pub sectors_per_track: u32,
}

/// What ends an idle period for background GC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdleAfter {
    /// Idle time counts from the end of the last write; reads do not reset it (SMaRT §4.2.4,
    /// §5.5.4).
    #[default]
    Write,
    /// Idle time counts from the end of the last request of any kind (Skylight, SMaRT §5.1).
    Request,
}

/// Parameters of the [`Smart`] drive. The default is SMaRT on the Cheetah 15K.5 mechanism with
/// 14 zones derived from it; the `smart-cheetah` profile uses the zone table instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmartConfig {
    /// The disk mechanics (timing). Default [`HddConfig::cheetah_15k5`]. Its write cache must
    /// stay off (not modelled here).
    pub mechanism: HddConfig,
    /// The recording zones from the outer diameter inwards, laid end to end from byte 0 of the
    /// mechanism. Empty (the default): `derived_zones` zones derived from the mechanism.
    pub zones: Vec<RecordingZone>,
    /// With `zones` empty: the mechanism's capacity is cut into this many zones of equal bytes,
    /// each with the track size of its innermost byte (the mechanism's rate there × one
    /// revolution), rounded down to whole 4 KiB blocks. Default 14 (the Cheetah's zone count);
    /// bounds 1 ..= 4096.
    pub derived_zones: u32,
    /// Unshingled random access zone at the outer diameter (§2): the map's home, never accessed
    /// by the model. The shingled space starts at the first track boundary at or after it.
    /// Default 0.
    pub raz: ByteSize,
    /// Most bytes of the shingled space (whole tracks after the RAZ); default: every track of
    /// the table. Bounds: at least one track.
    pub shingled_size: Option<ByteSize>,
    /// Utilisation U: the share of each zone's tracks the host can address (host capacity
    /// `Σ min(floor(U × tracks), tracks − 1)` tracks). Default 0.6 (the paper's middle value,
    /// §5.4); bounds (0, 1).
    pub utilisation: f64,
    /// Write every logical track before replay (identity map, cold; §5.4). Default `true`.
    pub prefill: bool,
    /// Write head width in tracks: writing track `t` destroys tracks `t + 1 .. t + h − 1`.
    /// Default 2 (§1); bounds 2 ..= 16.
    pub head_width: u32,
    /// On-demand GC when the zone's fragmentation ratio is at or below this (§4.2.2). Default
    /// 0.5; bounds 0 ..< 1.
    pub fragmentation_threshold: f64,
    /// Guard tracks for hot tracks while the zone's utilisation is below this (§4.2.3). Default
    /// 0.5; bounds 0 ..= 1 (0 turns guards off).
    pub guard_utilisation: f64,
    /// A track updated within this many ms of its previous write is hot. Default 60000
    /// (choice; the paper gives none); bounds 0 ..= 10^12.
    pub hot_window_ms: f64,
    /// Background GC in idle time (§4.2.4). Default `true`.
    pub idle_gc: bool,
    /// Idle time before background GC starts, ms. Default 1242 (§5.5.4); bounds 0 ..= 10^7.
    pub idle_window_ms: f64,
    /// What ends an idle period. Default `write`.
    pub idle_after: IdleAfter,
}

/// Idle time after which SMaRT starts background GC, ms (SMaRT §5.5.4: "SMaRT also uses a
/// 1242ms idle time window as the first background GC triggering condition").
pub const SMART_IDLE_WINDOW_MS: f64 = 1242.0;

impl Default for SmartConfig {
    fn default() -> Self {
        SmartConfig {
            mechanism: HddConfig::cheetah_15k5(),
            zones: Vec::new(),
            derived_zones: 14,
            raz: ByteSize(0),
            shingled_size: None,
            utilisation: 0.6,
            prefill: true,
            head_width: 2,
            fragmentation_threshold: 0.5,
            guard_utilisation: 0.5,
            hot_window_ms: 60_000.0,
            idle_gc: true,
            idle_window_ms: SMART_IDLE_WINDOW_MS,
            idle_after: IdleAfter::Write,
        }
    }
}

/// One zone of the shingled space as laid out on the mechanism.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ZoneGeom {
    tracks: u32,
    bpt: u32,
    stride: u64,
    base: u64,
}

impl SmartConfig {
    /// Checks every field that can be checked without building; errors name the field.
    pub fn validate(&self) -> Result<()> {
        self.layout().map(|_| ())
    }

    /// The host-visible capacity this configuration gives.
    pub fn host_capacity(&self) -> Result<ByteSize> {
        let (geoms, _) = self.layout()?;
        let blocks: u64 = geoms.iter().map(|g| self.logical_tracks(g.tracks) as u64 * g.bpt as u64).sum();
        Ok(ByteSize(blocks * BLOCK_SIZE))
    }

    /// Logical tracks of a zone of `tracks` physical tracks.
    fn logical_tracks(&self, tracks: u32) -> u32 {
        // floor(U × T), robust to float rounding (0.29 × 100 is 28.999…).
        ((self.utilisation * tracks as f64 + 1e-9).floor() as u32).min(tracks.saturating_sub(1))
    }

    /// Validates and lays the shingled space out on the mechanism.
    fn layout(&self) -> Result<(Vec<ZoneGeom>, Mechanism)> {
        let mech = self.mechanism.mechanism().map_err(|e| e.within("mechanism"))?;
        if self.mechanism.write_cache.enabled {
            return Err(invalid(
                "mechanism.write_cache.enabled",
                true,
                "the SMaRT drive does not model a volatile write cache; turn it off",
            ));
        }
        let u = self.utilisation;
        if !(u.is_finite() && u > 0.0 && u < 1.0) {
            return Err(invalid("utilisation", u, "expected a share of the tracks in (0, 1)"));
        }
        if !(2..=16).contains(&self.head_width) {
            return Err(invalid("head_width", self.head_width, "expected 2 ..= 16 tracks"));
        }
        let r = self.fragmentation_threshold;
        if !(r.is_finite() && (0.0..1.0).contains(&r)) {
            return Err(invalid("fragmentation_threshold", r, "expected a ratio in 0 ..< 1"));
        }
        let g = self.guard_utilisation;
        if !(g.is_finite() && (0.0..=1.0).contains(&g)) {
            return Err(invalid("guard_utilisation", g, "expected a share in 0 ..= 1"));
        }
        let h = self.hot_window_ms;
        if !(h.is_finite() && (0.0..=1e12).contains(&h)) {
            return Err(invalid("hot_window_ms", h, "expected ms in 0 ..= 10^12"));
        }
        let w = self.idle_window_ms;
        if !(w.is_finite() && (0.0..=1e7).contains(&w)) {
            return Err(invalid("idle_window_ms", w, "expected ms in 0 ..= 10000000"));
        }
        let table = if self.zones.is_empty() {
            if !(1..=4096).contains(&self.derived_zones) {
                return Err(invalid("derived_zones", self.derived_zones, "expected 1 ..= 4096"));
            }
            derive_zones(&mech, self.derived_zones)
        } else {
            for (i, z) in self.zones.iter().enumerate() {
                if z.tracks == 0 {
                    return Err(invalid(&format!("zones[{i}].tracks"), 0, "a zone needs at least one track"));
                }
                if !(SECTORS_PER_BLOCK..=1 << 20).contains(&z.sectors_per_track) {
                    return Err(invalid(
                        &format!("zones[{i}].sectors_per_track"),
                        z.sectors_per_track,
                        "expected 8 ..= 1048576 sectors of 512 B (at least one 4 KiB block)",
                    ));
                }
            }
            self.zones.clone()
        };
        let mut geoms = Vec::new();
        let mut base = 0u64;
        let mut skip = self.raz.0;
        let mut budget = self.shingled_size.map_or(u64::MAX, |b| b.0);
        for z in &table {
            let stride = z.sectors_per_track as u64 * SECTOR;
            let mut t = z.tracks as u64;
            if skip > 0 {
                let n = skip.div_ceil(stride).min(t);
                base += n * stride;
                t -= n;
                skip = skip.saturating_sub(n * stride);
            }
            let n = t.min(budget / stride);
            budget -= n * stride;
            if n > 0 {
                geoms.push(ZoneGeom {
                    tracks: n as u32,
                    bpt: z.sectors_per_track / SECTORS_PER_BLOCK,
                    stride,
                    base,
                });
                base += n * stride;
            }
            if n < t {
                break;
            }
        }
        if skip > 0 {
            return Err(invalid("raz", self.raz, "the random access zone is larger than the zone table"));
        }
        if geoms.is_empty() {
            let (field, value) = match self.shingled_size {
                Some(s) => ("shingled_size", s.to_string()),
                None => ("raz", self.raz.to_string()),
            };
            return Err(invalid(field, value, "leaves no shingled track (at least one whole track needed)"));
        }
        let tracks: u64 = geoms.iter().map(|g| g.tracks as u64).sum();
        if tracks > MAX_TRACKS {
            return Err(invalid("zones", tracks, format!("at most {MAX_TRACKS} tracks supported")));
        }
        if base > mech.capacity() {
            return Err(invalid(
                if self.zones.is_empty() { "derived_zones" } else { "zones" },
                format!("{} zones", table.len()),
                format!(
                    "the shingled space used ends at byte {base}, beyond mechanism.capacity = {} B; \
                     lower shingled_size or the zone table, or raise mechanism.capacity",
                    mech.capacity()
                ),
            ));
        }
        if geoms.iter().all(|g| self.logical_tracks(g.tracks) == 0) {
            return Err(invalid(
                "utilisation",
                u,
                "gives no logical track in any zone (floor(U × tracks) = 0); raise it or use larger zones",
            ));
        }
        Ok((geoms, mech))
    }

    /// Validates and builds the drive.
    pub fn build(&self) -> Result<Smart> {
        let (geoms, mech) = self.layout()?;
        Ok(Smart::new(self, &geoms, mech))
    }
}

/// `n` zones of equal bytes over the mechanism, each with the track size of its innermost byte.
fn derive_zones(mech: &Mechanism, n: u32) -> Vec<RecordingZone> {
    let cap = mech.capacity();
    let rev_s = mech.revolution().0 as f64 * 1e-9;
    let mut out = Vec::new();
    for z in 0..n as u64 {
        let (lo, hi) = (cap * z / n as u64, cap * (z + 1) / n as u64);
        if hi <= lo {
            continue;
        }
        let spt_exact = mech.rate_at(hi - 1) * rev_s / SECTOR as f64;
        let spt = ((spt_exact / SECTORS_PER_BLOCK as f64).floor() as u32).max(1) * SECTORS_PER_BLOCK;
        let tracks = (hi - lo) / (spt as u64 * SECTOR);
        if tracks > 0 {
            out.push(RecordingZone { tracks: tracks.min(u32::MAX as u64) as u32, sectors_per_track: spt });
        }
    }
    out
}

/// One physical operation of the drive, as recorded by [`Smart::record_ops`]. Track numbers are
/// global physical track numbers (PTN; zone 0's first shingled track is 0).
///
/// `Display` writes the compact form the golden tests use: `r5` / `r5-7` (a host read of one
/// or several consecutive tracks, one physical read), `i5` (in place), `n9` (a new track),
/// `o5>9` / `u5>9` (out-of-place update from 5 to 9, `u` when the old track was read first
/// because the write covered only part of it; a trailing `g` when a guard track was left),
/// `m6>4` / `m10-12>7` (an on-demand GC move of one or several tracks), `b6>4` (a background
/// GC move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackOp {
    /// A host read of `tracks` physically consecutive tracks from `ptn` (one physical read).
    Read {
        /// First track.
        ptn: u32,
        /// Number of tracks.
        tracks: u32,
    },
    /// Blocks `offset .. offset + blocks` of logical track `ltn` written on its own track.
    InPlace {
        /// Logical track.
        ltn: u32,
        /// Its physical track.
        ptn: u32,
        /// First block within the track.
        offset: u32,
        /// Blocks written.
        blocks: u32,
    },
    /// The first write of `ltn`, onto the free track `ptn` (only the blocks written).
    New {
        /// Logical track.
        ltn: u32,
        /// The track allocated.
        ptn: u32,
        /// First block within the track.
        offset: u32,
        /// Blocks written.
        blocks: u32,
    },
    /// An out-of-place update: `ltn` moves from `from` to `to`, the whole track written there
    /// with blocks `offset .. offset + blocks` new (read from `from` first if `read_old`).
    Relocate {
        /// Logical track.
        ltn: u32,
        /// Old physical track (free afterwards).
        from: u32,
        /// New physical track.
        to: u32,
        /// First block written by the host.
        offset: u32,
        /// Blocks written by the host.
        blocks: u32,
        /// The old track was read because the host wrote only part of it.
        read_old: bool,
        /// The cursor skipped `h − 1` guard tracks after `to` (a hot track below the guard
        /// utilisation).
        guard: bool,
    },
    /// A GC move of `tracks` consecutive tracks from `from` to `to` (all read, then all
    /// written).
    Move {
        /// First source track.
        from: u32,
        /// First destination track.
        to: u32,
        /// Number of tracks.
        tracks: u32,
        /// Done in idle time (background GC) rather than for a write.
        background: bool,
    },
}

impl std::fmt::Display for TrackOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let range = |f: &mut std::fmt::Formatter<'_>, p: u32, n: u32| {
            if n == 1 {
                write!(f, "{p}")
            } else {
                write!(f, "{p}-{}", p + n - 1)
            }
        };
        match *self {
            TrackOp::Read { ptn, tracks } => {
                f.write_str("r")?;
                range(f, ptn, tracks)
            }
            TrackOp::InPlace { ptn, .. } => write!(f, "i{ptn}"),
            TrackOp::New { ptn, .. } => write!(f, "n{ptn}"),
            TrackOp::Relocate { from, to, read_old, guard, .. } => {
                write!(f, "{}{from}>{to}{}", if read_old { "u" } else { "o" }, if guard { "g" } else { "" })
            }
            TrackOp::Move { from, to, tracks, background } => {
                f.write_str(if background { "b" } else { "m" })?;
                range(f, from, tracks)?;
                write!(f, ">{to}")
            }
        }
    }
}

/// One GC move, as returned by [`Smart::gc_step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcMove {
    /// Zone index.
    pub zone: usize,
    /// First source track (global PTN).
    pub from: u32,
    /// First destination track (global PTN).
    pub to: u32,
    /// Tracks moved.
    pub tracks: u32,
}

/// A used element as the victim scan sees it.
#[derive(Clone, Copy, Debug)]
struct UsedEl {
    start: u32,
    len: u32,
    /// The free element before it: `(start, len)`.
    left: (u32, u32),
    /// Length of the free element after it; `None` at the zone end.
    right: Option<u32>,
}

/// A planned move within a zone (zone-relative tracks).
#[derive(Clone, Copy, Debug)]
struct Plan {
    from: u32,
    to: u32,
    len: u32,
}

/// A segment tree over a zone's track positions: a perfect binary tree in an array, each inner
/// node the maximum (`MAX = true`) or the minimum of its children. It answers "the leftmost
/// (rightmost) position in a range whose value passes a test" in O(log n).
#[derive(Clone, Debug)]
struct SegTree<const MAX: bool> {
    leaves: usize,
    t: Vec<u32>,
}

impl<const MAX: bool> SegTree<MAX> {
    const EMPTY: u32 = if MAX { 0 } else { u32::MAX };

    fn new(n: u32) -> Self {
        let leaves = (n as usize).next_power_of_two().max(1);
        SegTree { leaves, t: vec![Self::EMPTY; 2 * leaves] }
    }

    fn empty(&self) -> u32 {
        Self::EMPTY
    }

    #[inline]
    fn combine(&self, a: u32, b: u32) -> u32 {
        if MAX {
            a.max(b)
        } else {
            a.min(b)
        }
    }

    #[inline]
    fn get(&self, i: u32) -> u32 {
        self.t[i as usize + self.leaves]
    }

    /// Sets a leaf; the ancestors are updated up to the first one whose value does not change
    /// (then none above it changes either).
    #[inline]
    fn set(&mut self, i: u32, v: u32) {
        let mut k = i as usize + self.leaves;
        if self.t[k] == v {
            return;
        }
        self.t[k] = v;
        while k > 1 {
            k /= 2;
            let c = self.combine(self.t[2 * k], self.t[2 * k + 1]);
            if self.t[k] == c {
                break;
            }
            self.t[k] = c;
        }
    }

    fn root(&self) -> u32 {
        self.t[1]
    }

    /// The aggregate over positions `lo .. hi`.
    fn fold(&self, lo: u32, hi: u32) -> u32 {
        let (mut l, mut r) = (lo as usize + self.leaves, hi as usize + self.leaves);
        let mut acc = self.empty();
        while l < r {
            if l & 1 == 1 {
                acc = self.combine(acc, self.t[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                acc = self.combine(acc, self.t[r]);
            }
            l /= 2;
            r /= 2;
        }
        acc
    }

    /// The leftmost position in `lo .. hi` whose value passes `ok`; `ok` must pass an inner
    /// node iff it passes one of its leaves (`v >= x` on a max tree, `v < x` on a min tree).
    /// Climbs from leaf `lo` to the first right sibling that passes, then descends.
    #[inline]
    fn leftmost(&self, lo: u32, hi: u32, ok: impl Fn(u32) -> bool) -> Option<u32> {
        if lo >= hi {
            return None;
        }
        let mut k = lo as usize + self.leaves;
        if !ok(self.t[k]) {
            loop {
                if k == 1 {
                    return None;
                }
                if k & 1 == 0 && ok(self.t[k + 1]) {
                    k += 1;
                    break;
                }
                k /= 2;
            }
            while k < self.leaves {
                k = if ok(self.t[2 * k]) { 2 * k } else { 2 * k + 1 };
            }
        }
        let i = (k - self.leaves) as u32;
        (i < hi).then_some(i)
    }

    /// The rightmost position at or below `at` whose value passes `ok` (same condition as
    /// [`SegTree::leftmost`]). Climbs from leaf `at` to the first left sibling that passes,
    /// then descends.
    #[inline]
    fn rightmost_upto(&self, at: u32, ok: impl Fn(u32) -> bool) -> Option<u32> {
        let mut k = at as usize + self.leaves;
        if !ok(self.t[k]) {
            loop {
                if k == 1 {
                    return None;
                }
                if k & 1 == 1 && ok(self.t[k - 1]) {
                    k -= 1;
                    break;
                }
                k /= 2;
            }
            while k < self.leaves {
                k = if ok(self.t[2 * k + 1]) { 2 * k + 1 } else { 2 * k };
            }
        }
        Some((k - self.leaves) as u32)
    }

    /// The rightmost position whose value passes `ok` (same condition as [`SegTree::leftmost`]).
    fn rightmost(&self, ok: impl Fn(u32) -> bool) -> Option<u32> {
        if !ok(self.t[1]) {
            return None;
        }
        let mut k = 1;
        while k < self.leaves {
            k = if ok(self.t[2 * k + 1]) { 2 * k + 1 } else { 2 * k };
        }
        Some((k - self.leaves) as u32)
    }
}

/// Space management of one zone (track numbers relative to the zone).
///
/// Elements alternate free, used, free, ... Each element's length is stored at its first track
/// (in `free_len` or `used_len`) and its first track at its last one (`end_start`), so the
/// neighbours of a track range are O(1); the element holding an arbitrary track is a
/// segment-tree descent.
#[derive(Clone, Debug)]
struct Zone {
    first_ptn: u32,
    tracks: u32,
    bpt: u32,
    stride: u64,
    base: u64,
    first_ltn: u32,
    ltns: u32,
    first_block: u64,
    /// One bit per track, set when free (the zone's view of the reverse map).
    free_bits: Vec<u64>,
    /// At each element's last track: the element's first track.
    end_start: Vec<u32>,
    /// At each free element's first track its length, else 0 (max tree: the largest free
    /// element, the leftmost that fits a victim).
    free_len: SegTree<true>,
    /// At each used element's first track its length, else `u32::MAX` (min tree: the
    /// leftmost victim shorter than W).
    used_len: SegTree<false>,
    /// `F`: free tracks.
    free_tracks: u64,
    /// `N`: free elements.
    free_elems: u64,
    /// `Σ min(length, h − 1)` over the free elements.
    unusable: u64,
    used: u32,
    /// An allocation pool has been chosen.
    pool: bool,
    pool_start: u32,
    /// The next track the pool would give (may be past the zone end).
    cursor: u32,
}

impl Zone {
    fn new(g: &ZoneGeom, first_ptn: u32, first_ltn: u32, ltns: u32, first_block: u64) -> Zone {
        Zone {
            first_ptn,
            tracks: g.tracks,
            bpt: g.bpt,
            stride: g.stride,
            base: g.base,
            first_ltn,
            ltns,
            first_block,
            free_bits: vec![0; (g.tracks as usize).div_ceil(64)],
            end_start: vec![0; g.tracks as usize],
            free_len: SegTree::new(g.tracks),
            used_len: SegTree::new(g.tracks),
            free_tracks: 0,
            free_elems: 0,
            unusable: 0,
            used: 0,
            pool: false,
            pool_start: 0,
            cursor: 0,
        }
    }

    /// Tracks `0 .. filled` used, the rest free.
    fn init(&mut self, filled: u32, h: u32) {
        if filled > 0 {
            self.set_used_el(0, filled);
        }
        if filled < self.tracks {
            self.set_bits(filled, self.tracks - filled, true);
            self.set_free_el(filled, self.tracks - filled, h);
        }
        self.used = filled;
    }

    #[inline]
    fn byte(&self, t: u32, off: u32) -> u64 {
        self.base + t as u64 * self.stride + off as u64 * BLOCK_SIZE
    }

    #[inline]
    fn is_free(&self, t: u32) -> bool {
        self.free_bits[(t / 64) as usize] >> (t % 64) & 1 == 1
    }

    fn set_bits(&mut self, t0: u32, n: u32, free: bool) {
        for t in t0..t0 + n {
            let (w, b) = ((t / 64) as usize, t % 64);
            if free {
                self.free_bits[w] |= 1 << b;
            } else {
                self.free_bits[w] &= !(1 << b);
            }
        }
    }

    /// Records a free element (tree leaf, end mark, totals).
    fn set_free_el(&mut self, s: u32, l: u32, h: u32) {
        self.free_len.set(s, l);
        self.end_start[(s + l - 1) as usize] = s;
        self.count_free(l, h, true);
    }

    /// Records a used element (tree leaf, end mark).
    fn set_used_el(&mut self, s: u32, l: u32) {
        self.used_len.set(s, l);
        self.end_start[(s + l - 1) as usize] = s;
    }

    /// The free element holding the free track `t`: `(start, length)`.
    fn free_el_at(&self, t: u32) -> (u32, u32) {
        let s = if t == 0 || !self.is_free(t - 1) {
            t
        } else {
            self.free_len.rightmost_upto(t, |v| v >= 1).expect("a free track lies in a free element")
        };
        (s, self.free_len.get(s))
    }

    /// The used element holding the used track `t`: `(start, length)`.
    fn used_el_at(&self, t: u32) -> (u32, u32) {
        let s = if t == 0 || self.is_free(t - 1) {
            t
        } else {
            self.used_len.rightmost_upto(t, |v| v < u32::MAX).expect("a used track lies in a used element")
        };
        (s, self.used_len.get(s))
    }

    /// Adds (`add`) or removes a free element of `l` tracks from the running totals.
    #[inline]
    fn count_free(&mut self, l: u32, h: u32, add: bool) {
        let (f, u) = (l as u64, l.min(h - 1) as u64);
        if add {
            self.free_tracks += f;
            self.free_elems += 1;
            self.unusable += u;
        } else {
            self.free_tracks -= f;
            self.free_elems -= 1;
            self.unusable -= u;
        }
    }

    /// Tracks `t0 .. t0 + n` (all in one used element) become free, merging with the free
    /// neighbours. Each tree leaf is written once (a leaf cleared and set again would climb the
    /// tree twice).
    fn mark_free(&mut self, t0: u32, n: u32, h: u32) {
        let (us, ul) = self.used_el_at(t0);
        debug_assert!(t0 + n <= us + ul, "mark_free: the tracks lie in one used element");
        if t0 > us {
            self.set_used_el(us, t0 - us);
        } else {
            self.used_len.set(us, u32::MAX);
        }
        if t0 + n < us + ul {
            self.set_used_el(t0 + n, us + ul - t0 - n);
        }
        self.set_bits(t0, n, true);
        let (mut s, mut l) = (t0, n);
        if t0 > 0 && self.is_free(t0 - 1) {
            // The merged element starts at the left neighbour's leaf: overwritten below.
            let ps = self.end_start[(t0 - 1) as usize];
            let pl = self.free_len.get(ps);
            self.count_free(pl, h, false);
            s = ps;
            l += pl;
        }
        if t0 + n < self.tracks && self.is_free(t0 + n) {
            let nl = self.free_len.get(t0 + n);
            self.count_free(nl, h, false);
            self.free_len.set(t0 + n, 0);
            l += nl;
        }
        self.set_free_el(s, l, h);
        self.used -= n;
    }

    /// Tracks `t0 .. t0 + n`, all in one free element, become used, joining the used
    /// neighbours (each tree leaf written once).
    fn mark_used(&mut self, t0: u32, n: u32, h: u32) {
        let (s, l) = self.free_el_at(t0);
        debug_assert!(t0 + n <= s + l, "mark_used: the tracks lie in one free element");
        let mut lo = t0;
        let mut hi = t0 + n;
        if t0 == s && s > 0 {
            // The merged element starts at the left neighbour's leaf: overwritten below.
            lo = self.end_start[(s - 1) as usize];
        }
        if t0 + n == s + l && s + l < self.tracks {
            hi = s + l + self.used_len.get(s + l);
            self.used_len.set(s + l, u32::MAX);
        }
        self.set_used_el(lo, hi - lo);
        self.set_bits(t0, n, false);
        self.count_free(l, h, false);
        if t0 > s {
            self.set_free_el(s, t0 - s, h);
        } else {
            self.free_len.set(s, 0);
        }
        if t0 + n < s + l {
            self.set_free_el(t0 + n, s + l - t0 - n, h);
        }
        self.used += n;
    }

    /// The elements left to right as `(start, length, free)`.
    fn elements(&self) -> impl Iterator<Item = (u32, u32, bool)> + '_ {
        let mut pos = 0u32;
        std::iter::from_fn(move || {
            if pos >= self.tracks {
                return None;
            }
            let free = self.is_free(pos);
            let len = if free { self.free_len.get(pos) } else { self.used_len.get(pos) };
            let el = (pos, len, free);
            pos += len;
            Some(el)
        })
    }

    /// The free element ending at the zone's last track, if that track is free.
    fn last_free(&self) -> Option<(u32, u32)> {
        let t = self.tracks - 1;
        self.is_free(t).then(|| {
            let s = self.end_start[t as usize];
            (s, self.tracks - s)
        })
    }

    /// Eq. 1, generalised to head width `h` (module docs); 0 without free tracks.
    fn ratio(&self) -> f64 {
        if self.free_tracks == 0 {
            0.0
        } else {
            (self.free_tracks - self.unusable) as f64 / self.free_tracks as f64
        }
    }

    /// Eq. 2 as an integer: `max(1, ceil(used / free))`.
    fn initial_w(&self) -> u64 {
        if self.free_tracks == 0 {
            return 1;
        }
        (self.used as u64).div_ceil(self.free_tracks).max(1)
    }

    /// The used element starting at `start` with its neighbours (`start >= 1`).
    fn used_el(&self, start: u32) -> UsedEl {
        let len = self.used_len.get(start);
        let ls = self.end_start[(start - 1) as usize];
        let right = (start + len < self.tracks).then(|| self.free_len.get(start + len));
        UsedEl { start, len, left: (ls, self.free_len.get(ls)), right }
    }

    /// Visits the used elements that have a free element before them (all but one starting at
    /// the zone's first track), left to right; returns the first `f` accepts.
    fn scan_used(&self, mut f: impl FnMut(&UsedEl) -> bool) -> Option<UsedEl> {
        self.elements()
            .filter(|&(s, _, free)| !free && s > 0)
            .map(|(s, _, _)| self.used_el(s))
            .find(|el| f(el))
    }

    /// Shifting `el` onto its left neighbour leaves the `h − 1` tracks after it free (always
    /// true for `h <= 3`).
    fn shift_ok(el: &UsedEl, h: u32) -> bool {
        match el.right {
            None => true,
            Some(r) => el.left.1 as u64 + r as u64 + 1 >= h as u64,
        }
    }

    /// The leftmost free element before `el` that holds it plus `h − 1` free tracks (max tree).
    fn fit_left(&self, el: &UsedEl, h: u32) -> Option<u32> {
        let need = el.len as u64 + h as u64 - 1;
        self.free_len.leftmost(0, el.start, move |v| v as u64 >= need)
    }

    fn movable(&self, el: &UsedEl, h: u32) -> bool {
        Zone::shift_ok(el, h) || self.fit_left(el, h).is_some()
    }

    /// The next GC move (§4.2.4), or `None` if no element can move.
    fn plan_move(&self, h: u32) -> Option<Plan> {
        if self.free_elems == 0 || self.used == 0 {
            return None;
        }
        if h > 3 {
            return self.plan_move_scan(h);
        }
        // With h <= 3 every used element but the one at track 0 can shift left, so the victim
        // is the leftmost element from track 1 on that is shorter than W (min tree).
        let w0 = self.initial_w();
        let below = |w: u64| self.used_len.leftmost(1, self.tracks, move |v| (v as u64) < w);
        let start = match below(w0) {
            Some(s) => s,
            None => {
                let smallest = self.used_len.fold(1, self.tracks);
                if smallest == u32::MAX {
                    return None;
                }
                let mut w = w0;
                while w <= smallest as u64 {
                    w *= 2;
                }
                below(w)?
            }
        };
        Some(self.destination(self.used_el(start), h))
    }

    /// [`Zone::plan_move`] by scanning the used elements (head widths above 3, where a shift
    /// onto the left neighbour may not leave enough free tracks after the victim).
    fn plan_move_scan(&self, h: u32) -> Option<Plan> {
        let w0 = self.initial_w();
        let mut smallest = u64::MAX;
        let first = self.scan_used(|el| {
            if !self.movable(el, h) {
                return false;
            }
            if (el.len as u64) < w0 {
                return true;
            }
            smallest = smallest.min(el.len as u64);
            false
        });
        let el = match first {
            Some(el) => el,
            None if smallest == u64::MAX => return None,
            None => {
                let mut w = w0;
                while w <= smallest {
                    w *= 2;
                }
                self.scan_used(|el| (el.len as u64) < w && self.movable(el, h))?
            }
        };
        Some(self.destination(el, h))
    }

    /// Where victim `el` goes: onto its left neighbour if it lies in the allocation pool, else
    /// the leftmost free element before it that fits it, else onto its left neighbour.
    fn destination(&self, el: UsedEl, h: u32) -> Plan {
        let in_pool = self.pool && self.pool_start <= el.start && el.start + el.len <= self.cursor;
        let to = if in_pool && Zone::shift_ok(&el, h) {
            el.left.0
        } else {
            match self.fit_left(&el, h) {
                Some(d) => d,
                None => el.left.0,
            }
        };
        Plan { from: el.start, to, len: el.len }
    }
}

/// What a pending mechanism access is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    HostRead,
    HostWrite,
    UpdateRead,
}

/// A pending run of physically consecutive blocks of one cause, issued as one access. Global
/// track numbers: consecutive PTNs are consecutive on the medium, across zones too.
#[derive(Clone, Copy, Debug)]
struct Run {
    active: bool,
    cause: Cause,
    first_p: u32,
    last_p: u32,
    /// Block offset just past the run's end within `last_p`, and that track's block count.
    end_off: u32,
    end_bpt: u32,
    start: u64,
    end: u64,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            active: false,
            cause: Cause::HostRead,
            first_p: 0,
            last_p: 0,
            end_off: 0,
            end_bpt: 0,
            start: 0,
            end: 0,
        }
    }
}

/// The SMaRT drive model. Build it with [`SmartConfig::build`] or [`crate::DriveConfig::build`].
#[derive(Debug)]
pub struct Smart {
    zones: Vec<Zone>,
    /// `(first block, zone index)` of the zones with host capacity, in block order.
    block_index: Vec<(u64, usize)>,
    /// LTN → PTN (global), `NONE` = never written.
    l2p: Vec<u32>,
    /// PTN → LTN, `NONE` = free.
    p2l: Vec<u32>,
    /// Per LTN: modelled time of its last write (ns), `NEVER` for cold pre-populated tracks.
    last_write: Vec<u64>,
    head: u32,
    threshold: f64,
    guard_util: f64,
    hot_ns: u64,
    idle_window_ns: Option<u64>,
    idle_after: IdleAfter,
    capacity_blocks: u64,
    mech: Mechanism,
    run: Run,
    /// Issue time of the request (or idle-time work) being served.
    now: Nanos,
    /// Completion time of the request being served (max over its accesses).
    req_done: u64,
    /// Completion time of the last host write.
    last_write_done: u64,
    /// On-demand GC of the request being served: `(zone, tracks moved)`.
    ondemand: Vec<(usize, u64)>,
    move_buf: Vec<u32>,
    /// Host read runs issued so far (a read's pieces are the difference).
    read_runs: u64,
    log: Option<Vec<TrackOp>>,
    stats: DriveStats,
}

impl Smart {
    fn new(cfg: &SmartConfig, geoms: &[ZoneGeom], mech: Mechanism) -> Smart {
        let h = cfg.head_width;
        let mut zones = Vec::with_capacity(geoms.len());
        let (mut ptn, mut ltn, mut block) = (0u32, 0u32, 0u64);
        for g in geoms {
            let ltns = cfg.logical_tracks(g.tracks);
            zones.push(Zone::new(g, ptn, ltn, ltns, block));
            ptn += g.tracks;
            ltn += ltns;
            block += ltns as u64 * g.bpt as u64;
        }
        let mut l2p = vec![NONE; ltn as usize];
        let mut p2l = vec![NONE; ptn as usize];
        for z in &mut zones {
            let filled = if cfg.prefill { z.ltns } else { 0 };
            for i in 0..filled {
                l2p[(z.first_ltn + i) as usize] = z.first_ptn + i;
                p2l[(z.first_ptn + i) as usize] = z.first_ltn + i;
            }
            z.init(filled, h);
        }
        let block_index =
            zones.iter().enumerate().filter(|(_, z)| z.ltns > 0).map(|(i, z)| (z.first_block, i)).collect();
        let mut stats = DriveStats::default();
        stats.stl.physical_tracks = ptn as u64;
        Smart {
            zones,
            block_index,
            l2p,
            p2l,
            last_write: vec![NEVER; ltn as usize],
            head: h,
            threshold: cfg.fragmentation_threshold,
            guard_util: cfg.guard_utilisation,
            hot_ns: (cfg.hot_window_ms * 1e6).round() as u64,
            idle_window_ns: cfg.idle_gc.then(|| (cfg.idle_window_ms * 1e6).round() as u64),
            idle_after: cfg.idle_after,
            capacity_blocks: block,
            mech,
            run: Run::default(),
            now: Nanos::ZERO,
            req_done: 0,
            last_write_done: 0,
            ondemand: Vec::new(),
            move_buf: Vec::new(),
            read_runs: 0,
            log: None,
            stats,
        }
    }

    // ---------------------------------------------------------------- inspection

    /// Number of zones in the shingled space. The methods below that take a zone index `z`
    /// panic unless `z < zone_count()`, as slice indexing does.
    pub fn zone_count(&self) -> usize {
        self.zones.len()
    }

    /// Physical tracks of zone `z` as the global range of PTNs.
    pub fn zone_tracks(&self, z: usize) -> std::ops::Range<u32> {
        let zone = &self.zones[z];
        zone.first_ptn..zone.first_ptn + zone.tracks
    }

    /// Logical tracks of zone `z` as the global range of LTNs.
    pub fn zone_ltns(&self, z: usize) -> std::ops::Range<u32> {
        let zone = &self.zones[z];
        zone.first_ltn..zone.first_ltn + zone.ltns
    }

    /// 4 KiB blocks per track in zone `z`.
    pub fn blocks_per_track(&self, z: usize) -> u32 {
        self.zones[z].bpt
    }

    /// The write head width in tracks.
    pub fn head_width(&self) -> u32 {
        self.head
    }

    /// Free elements of zone `z` as `(first track, length)`, zone-relative, left to right.
    pub fn free_elements(&self, z: usize) -> Vec<(u32, u32)> {
        self.zones[z].elements().filter(|e| e.2).map(|(s, l, _)| (s, l)).collect()
    }

    /// Used elements of zone `z` as `(first track, length)`, zone-relative, left to right.
    pub fn used_elements(&self, z: usize) -> Vec<(u32, u32)> {
        self.zones[z].elements().filter(|e| !e.2).map(|(s, l, _)| (s, l)).collect()
    }

    /// `(F, N, R)` of zone `z`: free tracks, free elements, fragmentation ratio (kept
    /// incrementally).
    pub fn fragmentation(&self, z: usize) -> (u64, u64, f64) {
        let zone = &self.zones[z];
        (zone.free_tracks, zone.free_elems, zone.ratio())
    }

    /// The victim-size threshold `W` a GC in zone `z` would start with (Eq. 2, rounded up).
    pub fn victim_threshold(&self, z: usize) -> u64 {
        self.zones[z].initial_w()
    }

    /// The allocation pool's next track (global PTN), if a pool is chosen and not used up.
    pub fn cursor(&self, z: usize) -> Option<u32> {
        let zone = &self.zones[z];
        (zone.pool && zone.cursor < zone.tracks).then(|| zone.first_ptn + zone.cursor)
    }

    /// The physical track of logical track `ltn`, if it was ever written.
    pub fn ptn_of(&self, ltn: u32) -> Option<u32> {
        self.l2p.get(ltn as usize).copied().filter(|&p| p != NONE)
    }

    /// The logical track on physical track `ptn`, if it is used.
    pub fn ltn_of(&self, ptn: u32) -> Option<u32> {
        self.p2l.get(ptn as usize).copied().filter(|&l| l != NONE)
    }

    /// The zone, logical track and block offset of host block `block` (`None` beyond the
    /// capacity).
    pub fn locate(&self, block: BlockNo) -> Option<(usize, u32, u32)> {
        if block >= self.capacity_blocks {
            return None;
        }
        let zi = self.block_index[self.index_of(block)].1;
        let z = &self.zones[zi];
        let rel = block - z.first_block;
        Some((zi, z.first_ltn + (rel / z.bpt as u64) as u32, (rel % z.bpt as u64) as u32))
    }

    /// The first host block of logical track `ltn` and its block count (`None` past the last
    /// logical track): the inverse of [`Smart::locate`].
    pub fn ltn_blocks(&self, ltn: u32) -> Option<(BlockNo, u32)> {
        let zi = self.zones.partition_point(|z| z.first_ltn <= ltn).checked_sub(1)?;
        let z = &self.zones[zi];
        (ltn < z.first_ltn + z.ltns)
            .then(|| (z.first_block + (ltn - z.first_ltn) as u64 * z.bpt as u64, z.bpt))
    }

    /// Logical tracks (the map's size).
    pub fn logical_tracks(&self) -> u32 {
        self.l2p.len() as u32
    }

    /// Physical tracks of the shingled space.
    pub fn physical_tracks(&self) -> u32 {
        self.p2l.len() as u32
    }

    /// Mechanism byte offset of block `offset` of physical track `ptn` (for tests and tools).
    pub fn byte_of(&self, ptn: u32, offset: u32) -> u64 {
        let zi = self.zone_of_ptn(ptn);
        let z = &self.zones[zi];
        z.byte(ptn - z.first_ptn, offset)
    }

    /// The mechanism underneath.
    pub fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    /// Starts (or stops) recording every physical operation into a log ([`TrackOp`]).
    pub fn record_ops(&mut self, on: bool) {
        self.log = on.then(Vec::new);
    }

    /// The operations recorded since the last call (empty when not recording).
    pub fn take_ops(&mut self) -> Vec<TrackOp> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Places logical tracks on chosen physical tracks, as `(ltn, ptn)` pairs: a pre-population
    /// with an explicit layout (the paper's Figure 1, what-if studies). Each LTN must be
    /// unmapped, each PTN free, and both in the same zone. The allocation pool is forgotten.
    pub fn populate(&mut self, pairs: &[(u32, u32)]) -> Result<()> {
        for &(ltn, ptn) in pairs {
            if ltn as usize >= self.l2p.len() || self.l2p[ltn as usize] != NONE {
                return Err(invalid("populate.ltn", ltn, "expected an unmapped logical track of the drive"));
            }
            if ptn as usize >= self.p2l.len() || self.p2l[ptn as usize] != NONE {
                return Err(invalid("populate.ptn", ptn, "expected a free physical track of the drive"));
            }
            let zi = self.zone_of_ptn(ptn);
            let z = &mut self.zones[zi];
            if !(z.first_ltn..z.first_ltn + z.ltns).contains(&ltn) {
                return Err(invalid(
                    "populate.ltn",
                    ltn,
                    format!("not a logical track of zone {zi}, as PTN {ptn} is"),
                ));
            }
            z.mark_used(ptn - z.first_ptn, 1, self.head);
            z.pool = false;
            self.l2p[ltn as usize] = ptn;
            self.p2l[ptn as usize] = ltn;
        }
        Ok(())
    }

    /// Runs one GC move in zone `z` at time `now`, as an on-demand GC would (counted as one
    /// on-demand GC). `None` if no element can move.
    pub fn gc_step(&mut self, z: usize, now: Nanos) -> Option<GcMove> {
        self.now = now.max(self.mech.busy_until());
        self.req_done = self.now.0;
        let plan = self.zones[z].plan_move(self.head)?;
        self.execute_move(z, plan, false);
        self.stats.stl.gc_ondemand += 1;
        self.stats.stl.gc_cost.record(plan.len as u64);
        let first = self.zones[z].first_ptn;
        Some(GcMove { zone: z, from: first + plan.from, to: first + plan.to, tracks: plan.len })
    }

    /// Recounts everything kept incrementally and checks the invariants: the map is a bijection
    /// between mapped LTNs and used PTNs of the same zone, and per zone the free elements,
    /// `F`, `N`, the unusable count and the used count match a recount from the reverse map.
    pub fn check(&self) -> std::result::Result<(), String> {
        let h = self.head;
        for (ltn, &p) in self.l2p.iter().enumerate() {
            if p != NONE {
                if self.p2l.get(p as usize) != Some(&(ltn as u32)) {
                    return Err(format!("LTN {ltn} → PTN {p}, but PTN {p} → {:?}", self.p2l.get(p as usize)));
                }
                let z = &self.zones[self.zone_of_ptn(p)];
                if !(z.first_ltn..z.first_ltn + z.ltns).contains(&(ltn as u32)) {
                    return Err(format!("LTN {ltn} is mapped outside its zone (PTN {p})"));
                }
            }
        }
        for (p, &l) in self.p2l.iter().enumerate() {
            if l != NONE && self.l2p.get(l as usize) != Some(&(p as u32)) {
                return Err(format!("PTN {p} → LTN {l}, but LTN {l} → {:?}", self.l2p.get(l as usize)));
            }
        }
        for (zi, z) in self.zones.iter().enumerate() {
            // Recount the elements from the reverse map.
            let mut els = Vec::new();
            let mut t = 0u32;
            while t < z.tracks {
                let free = self.p2l[(z.first_ptn + t) as usize] == NONE;
                let s = t;
                while t < z.tracks && (self.p2l[(z.first_ptn + t) as usize] == NONE) == free {
                    t += 1;
                }
                els.push((s, t - s, free));
            }
            let kept: Vec<_> = z.elements().collect();
            if kept != els {
                return Err(format!("zone {zi}: elements {kept:?}, recount {els:?}"));
            }
            let (mut f, mut n, mut un, mut used) = (0u64, 0u64, 0u64, 0u32);
            for &(s, l, free) in &els {
                if free {
                    f += l as u64;
                    n += 1;
                    un += l.min(h - 1) as u64;
                } else {
                    used += l;
                }
                if z.end_start[(s + l - 1) as usize] != s {
                    return Err(format!("zone {zi}: element {s}+{l} has a wrong end mark"));
                }
            }
            if (f, n, un, used) != (z.free_tracks, z.free_elems, z.unusable, z.used) {
                return Err(format!(
                    "zone {zi}: F/N/unusable/used kept {}/{}/{}/{}, recount {f}/{n}/{un}/{used}",
                    z.free_tracks, z.free_elems, z.unusable, z.used
                ));
            }
            for t in 0..z.tracks {
                let el = els.iter().find(|e| e.0 == t);
                let want_free = el.filter(|e| e.2).map_or(0, |e| e.1);
                let want_used = el.filter(|e| !e.2).map_or(u32::MAX, |e| e.1);
                if z.free_len.get(t) != want_free || z.used_len.get(t) != want_used {
                    return Err(format!("zone {zi}: position index out of step at track {t}"));
                }
                if z.is_free(t) != (self.p2l[(z.first_ptn + t) as usize] == NONE) {
                    return Err(format!("zone {zi}: free bit of track {t} out of step"));
                }
            }
            let (fl, ul) = (&z.free_len, &z.used_len);
            for k in 1..fl.leaves {
                if fl.t[k] != fl.combine(fl.t[2 * k], fl.t[2 * k + 1])
                    || ul.t[k] != ul.combine(ul.t[2 * k], ul.t[2 * k + 1])
                {
                    return Err(format!("zone {zi}: segment tree node {k} out of step"));
                }
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- internals

    #[inline]
    fn index_of(&self, block: BlockNo) -> usize {
        self.block_index.partition_point(|&(b, _)| b <= block) - 1
    }

    fn zone_of_ptn(&self, ptn: u32) -> usize {
        self.zones.partition_point(|z| z.first_ptn <= ptn) - 1
    }

    /// The `h − 1` tracks after `t` are free or past the zone end (zone-end rule). Reads the
    /// zone's free bitmap, which stays in cache where the reverse map would not.
    #[inline]
    fn next_free(&self, zi: usize, t: u32) -> bool {
        let z = &self.zones[zi];
        (t + 1..t.saturating_add(self.head)).all(|u| u >= z.tracks || z.is_free(u))
    }

    #[inline]
    fn usable(&self, zi: usize, t: u32) -> bool {
        t < self.zones[zi].tracks && self.zones[zi].is_free(t) && self.next_free(zi, t)
    }

    /// Chooses the largest free element with a usable track as the allocation pool.
    fn pick_pool(&mut self, zi: usize) -> Option<u32> {
        let h = self.head;
        let z = &mut self.zones[zi];
        let max = z.free_len.root();
        let largest = z.free_len.rightmost(|v| v >= max.max(1)).filter(|&s| max >= h || s + max == z.tracks);
        let start = match largest {
            Some(s) => s,
            None => z.last_free()?.0,
        };
        z.pool = true;
        z.pool_start = start;
        z.cursor = start;
        Some(start)
    }

    /// The next track at the cursor (choosing a new pool when needed), the cursor moved past it
    /// and, with `guard`, past `h − 1` guard tracks. The caller marks it used.
    fn alloc(&mut self, zi: usize, guard: bool) -> Option<u32> {
        let z = &self.zones[zi];
        let t = if z.pool && self.usable(zi, z.cursor) { z.cursor } else { self.pick_pool(zi)? };
        let step = if guard { self.head } else { 1 };
        self.zones[zi].cursor = t.saturating_add(step);
        Some(t)
    }

    /// Adds blocks `off .. off + cnt` of zone-relative track `t` to the pending run of `cause`,
    /// issuing the run first if this does not continue it.
    #[inline]
    fn push(&mut self, cause: Cause, zi: usize, t: u32, off: u32, cnt: u32) {
        let z = &self.zones[zi];
        let (p, bpt) = (z.first_ptn + t, z.bpt);
        let start = z.byte(t, off);
        let end = start + cnt as u64 * BLOCK_SIZE;
        let r = &mut self.run;
        if r.active && r.cause == cause {
            let same_track = p == r.last_p && start == r.end;
            let next_track = p == r.last_p + 1 && off == 0 && r.end_off == r.end_bpt;
            if same_track || next_track {
                r.last_p = p;
                r.end_off = off + cnt;
                r.end_bpt = bpt;
                r.end = end;
                return;
            }
        }
        self.flush();
        self.run =
            Run { active: true, cause, first_p: p, last_p: p, end_off: off + cnt, end_bpt: bpt, start, end };
    }

    /// Issues the pending run as one mechanism access.
    fn flush(&mut self) {
        if !self.run.active {
            return;
        }
        let r = self.run;
        self.run.active = false;
        let before = self.now.max(self.mech.busy_until());
        self.mech.access(self.now, r.start, r.end - r.start, r.cause == Cause::HostWrite);
        let spent = self.mech.busy_until() - before;
        match r.cause {
            Cause::HostRead => {
                self.stats.time.host_read += spent;
                self.read_runs += 1;
                if let Some(log) = self.log.as_mut() {
                    log.push(TrackOp::Read { ptn: r.first_p, tracks: r.last_p - r.first_p + 1 });
                }
            }
            Cause::HostWrite => self.stats.time.host_write += spent,
            Cause::UpdateRead => self.stats.time.update_read += spent,
        }
        self.req_done = self.req_done.max(self.mech.busy_until().0);
    }

    /// Moves a victim element: reads it whole, writes it at its destination, updates the maps.
    fn execute_move(&mut self, zi: usize, plan: Plan, background: bool) {
        self.flush();
        let h = self.head;
        let z = &self.zones[zi];
        let bytes = (plan.len as u64 - 1) * z.stride + z.bpt as u64 * BLOCK_SIZE;
        let (src, dst) = (z.byte(plan.from, 0), z.byte(plan.to, 0));
        let first = z.first_ptn;
        let before = self.now.max(self.mech.busy_until());
        self.mech.access(self.now, src, bytes, false);
        let mid = self.mech.busy_until();
        self.mech.access(self.now, dst, bytes, true);
        let end = self.mech.busy_until();
        self.stats.time.gc_read += mid - before;
        self.stats.time.gc_write += end - mid;
        if background {
            self.stats.idle_clean_time += end - before;
        } else {
            self.stats.clean_time += end - before;
        }
        self.req_done = self.req_done.max(end.0);

        self.move_buf.clear();
        for i in 0..plan.len {
            let p = (first + plan.from + i) as usize;
            self.move_buf.push(self.p2l[p]);
            self.p2l[p] = NONE;
        }
        let z = &mut self.zones[zi];
        z.mark_free(plan.from, plan.len, h);
        z.mark_used(plan.to, plan.len, h);
        for (i, &ltn) in self.move_buf.iter().enumerate() {
            let p = first + plan.to + i as u32;
            self.p2l[p as usize] = ltn;
            self.l2p[ltn as usize] = p;
        }
        self.stats.stl.gc_tracks_moved += plan.len as u64;
        if let Some(log) = self.log.as_mut() {
            log.push(TrackOp::Move {
                from: first + plan.from,
                to: first + plan.to,
                tracks: plan.len,
                background,
            });
        }
    }

    /// One on-demand GC move in zone `zi` for the request being served; `false` if nothing
    /// can move.
    fn ondemand_move(&mut self, zi: usize) -> bool {
        let Some(plan) = self.zones[zi].plan_move(self.head) else { return false };
        self.execute_move(zi, plan, false);
        match self.ondemand.iter_mut().find(|e| e.0 == zi) {
            Some(e) => e.1 += plan.len as u64,
            None => self.ondemand.push((zi, plan.len as u64)),
        }
        true
    }

    /// Counts the on-demand GCs of the request just served; `true` if there was one.
    fn finish_ondemand(&mut self) -> bool {
        for i in 0..self.ondemand.len() {
            self.stats.stl.gc_ondemand += 1;
            self.stats.stl.gc_cost.record(self.ondemand[i].1);
        }
        let any = !self.ondemand.is_empty();
        self.ondemand.clear();
        any
    }

    /// Writes blocks `off .. off + cnt` of logical track `ltn` (zone `zi`): §4.3.
    fn write_segment(&mut self, zi: usize, ltn: u32, off: u32, cnt: u32) {
        let h = self.head;
        let now = self.now.0;
        let (first, bpt, tracks) = {
            let z = &self.zones[zi];
            (z.first_ptn, z.bpt, z.tracks)
        };
        let mut hot = None;
        let mut moves = 0u64;
        loop {
            let p = self.l2p[ltn as usize];
            if p != NONE && self.next_free(zi, p - first) {
                self.push(Cause::HostWrite, zi, p - first, off, cnt);
                self.stats.stl.in_place_updates += 1;
                if let Some(log) = self.log.as_mut() {
                    log.push(TrackOp::InPlace { ltn, ptn: p, offset: off, blocks: cnt });
                }
                break;
            }
            let guard = p != NONE
                && (self.zones[zi].used as f64) < self.guard_util * tracks as f64
                && *hot.get_or_insert_with(|| {
                    let last = self.last_write[ltn as usize];
                    last != NEVER && now.saturating_sub(last) <= self.hot_ns
                });
            if let Some(t) = self.alloc(zi, guard) {
                self.zones[zi].mark_used(t, 1, h);
                self.p2l[(first + t) as usize] = ltn;
                self.l2p[ltn as usize] = first + t;
                if p == NONE {
                    self.push(Cause::HostWrite, zi, t, off, cnt);
                    self.stats.stl.new_tracks += 1;
                    if let Some(log) = self.log.as_mut() {
                        log.push(TrackOp::New { ltn, ptn: first + t, offset: off, blocks: cnt });
                    }
                } else {
                    let from = p - first;
                    let read_old = cnt < bpt;
                    if read_old {
                        self.push(Cause::UpdateRead, zi, from, 0, bpt);
                        self.stats.stl.update_reads += 1;
                    }
                    self.push(Cause::HostWrite, zi, t, 0, bpt);
                    self.zones[zi].mark_free(from, 1, h);
                    self.p2l[p as usize] = NONE;
                    self.stats.stl.out_of_place_updates += 1;
                    // A guard past the zone's end is no guard track (the zone boundary is one).
                    self.stats.stl.guard_tracks += (guard && t + h - 1 < tracks) as u64;
                    if let Some(log) = self.log.as_mut() {
                        log.push(TrackOp::Relocate {
                            ltn,
                            from: p,
                            to: first + t,
                            offset: off,
                            blocks: cnt,
                            read_old,
                            guard,
                        });
                    }
                }
                break;
            }
            // No usable free track: consolidate (§4.2.4, "more only if the write does not fit").
            // A zone always keeps a free track (L_z <= T_z − 1) and the element at the zone end
            // can always shift left, so this ends; the bound only guards against a bug.
            moves += 1;
            if moves > 2 * tracks as u64 + 8 || !self.ondemand_move(zi) {
                // Writing anyway would destroy the next track (or drop new data): a model bug
                // must stop the run, never corrupt it silently.
                unreachable!(
                    "SMaRT zone {zi}: no usable free track and nothing to move (model invariant broken)"
                );
            }
        }
        self.last_write[ltn as usize] = now;
    }

    fn note_wait(&mut self, now: Nanos) {
        self.stats.time.host_wait += Nanos(self.mech.busy_until().0.saturating_sub(now.0));
    }

    /// Starts serving a request issued at `now` with blocks in range.
    fn start(&mut self, now: Nanos) {
        self.note_wait(now);
        self.now = now;
        self.req_done = now.0;
    }

    /// The track segment of `[b, end)` that starts at `b`: `(zone, ltn, offset, blocks)`; `k`
    /// is the position in `block_index` of the zone of the previous segment (or of `b`).
    #[inline]
    fn segment(&self, b: BlockNo, end: BlockNo, k: &mut usize) -> (usize, u32, u32, u32) {
        while *k + 1 < self.block_index.len() && self.block_index[*k + 1].0 <= b {
            *k += 1;
        }
        let zi = self.block_index[*k].1;
        let z = &self.zones[zi];
        let rel = b - z.first_block;
        let off = (rel % z.bpt as u64) as u32;
        let cnt = ((z.bpt - off) as u64).min(end - b) as u32;
        (zi, z.first_ltn + (rel / z.bpt as u64) as u32, off, cnt)
    }
}

impl Drive for Smart {
    fn read(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        let n = envelope::admit_read(&mut self.stats, self.capacity_blocks, block, nblocks);
        let t = if n == 0 {
            envelope::reject(&mut self.mech, now)
        } else {
            self.start(now);
            let runs_before = self.read_runs;
            let (mut b, end, mut k) = (block, block + n, self.index_of(block));
            while b < end {
                let (zi, ltn, off, cnt) = self.segment(b, end, &mut k);
                b += cnt as u64;
                let p = self.l2p[ltn as usize];
                if p == NONE {
                    // Never written: zeros, no media access; it splits the physical read.
                    self.flush();
                } else {
                    let t = p - self.zones[zi].first_ptn;
                    self.push(Cause::HostRead, zi, t, off, cnt);
                }
            }
            self.flush();
            let pieces = self.read_runs - runs_before;
            envelope::read_pieces(&mut self.stats, pieces);
            if pieces == 0 {
                envelope::reject(&mut self.mech, now)
            } else {
                envelope::service_time(now, self.req_done)
            }
        };
        self.stats.read_time += t;
        t
    }

    fn write(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        let n = envelope::admit_write(&mut self.stats, self.capacity_blocks, block, nblocks);
        let t = if n == 0 {
            envelope::reject(&mut self.mech, now)
        } else {
            self.start(now);
            // §4.3: the fragmentation ratio of every zone the write touches is checked first.
            let (k0, k1) = (self.index_of(block), self.index_of(block + n - 1));
            for k in k0..=k1 {
                let zi = self.block_index[k].1;
                if self.zones[zi].ratio() <= self.threshold {
                    self.ondemand_move(zi);
                }
            }
            let (mut b, end, mut k) = (block, block + n, k0);
            while b < end {
                let (zi, ltn, off, cnt) = self.segment(b, end, &mut k);
                b += cnt as u64;
                self.write_segment(zi, ltn, off, cnt);
            }
            self.flush();
            if self.finish_ondemand() {
                self.stats.stl.writes_triggering_gc += 1;
            }
            self.last_write_done = self.req_done;
            envelope::service_time(now, self.req_done)
        };
        self.stats.write_time += t;
        t
    }

    fn stats(&self) -> DriveStats {
        let mut s = self.stats;
        self.mech.fill_components(&mut s.time);
        s.media_bytes_written = self.mech.bytes_written();
        let used: u64 = self.zones.iter().map(|z| z.used as u64).sum();
        s.stl.used_tracks = used;
        s.stl.map_bytes = 8 * used;
        s
    }

    fn kind(&self) -> &'static str {
        "smart"
    }

    fn capacity_blocks(&self) -> u64 {
        self.capacity_blocks
    }

    /// Background GC (module docs, "Garbage collection"): after `idle_window_ms` of idle time,
    /// one element after another in every zone at or below the fragmentation threshold; no move
    /// starts at or after `until`, a started one finishes.
    fn idle(&mut self, now: Nanos, until: Nanos) {
        // Everything done here is background work, in no request's time.
        let before = self.stats.time;
        self.idle_work(now, until);
        self.stats.background = self.stats.background.plus(&self.stats.time.since(&before));
    }
}

impl Smart {
    /// [`Drive::idle`]'s work: background GC.
    fn idle_work(&mut self, now: Nanos, until: Nanos) {
        let Some(window) = self.idle_window_ns else { return };
        let busy = self.mech.busy_until().0;
        let mut t = match self.idle_after {
            IdleAfter::Request => now.0.max(busy).saturating_add(window),
            IdleAfter::Write => self.last_write_done.saturating_add(window).max(now.0).max(busy),
        };
        for zi in 0..self.zones.len() {
            while t < until.0 && self.zones[zi].ratio() <= self.threshold {
                let Some(plan) = self.zones[zi].plan_move(self.head) else { break };
                self.now = Nanos(t);
                self.req_done = t;
                self.execute_move(zi, plan, true);
                self.stats.stl.gc_background += 1;
                self.stats.stl.gc_cost_background.record(plan.len as u64);
                t = self.mech.busy_until().0.max(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(tracks: u32, u: f64, prefill: bool) -> Smart {
        SmartConfig {
            zones: vec![RecordingZone { tracks, sectors_per_track: 16 }],
            utilisation: u,
            prefill,
            ..SmartConfig::default()
        }
        .build()
        .unwrap()
    }

    #[test]
    fn mark_used_and_free_keep_the_counts() {
        let mut d = tiny(24, 0.6, false);
        assert_eq!(d.fragmentation(0), (24, 1, 23.0 / 24.0));
        d.populate(&[(0, 3), (1, 4), (2, 10)]).unwrap();
        assert_eq!(d.free_elements(0), vec![(0, 3), (5, 5), (11, 13)]);
        assert_eq!(d.used_elements(0), vec![(3, 2), (10, 1)]);
        d.check().unwrap();
        assert!(d.populate(&[(0, 5)]).is_err(), "LTN 0 is mapped already");
        assert!(d.populate(&[(5, 3)]).is_err(), "PTN 3 is used");
    }

    #[test]
    fn w_rounds_up_as_the_paper_states() {
        // 60%: 1.5 → 2; 90%: exactly 9.
        let d = tiny(10, 0.6, true);
        assert_eq!((d.zones[0].used, d.victim_threshold(0)), (6, 2));
        let d = tiny(10, 0.9, true);
        assert_eq!((d.zones[0].used, d.victim_threshold(0)), (9, 9));
    }

    #[test]
    fn layout_skips_the_raz_and_caps_the_shingled_space() {
        let cfg = SmartConfig {
            zones: vec![
                RecordingZone { tracks: 10, sectors_per_track: 16 },
                RecordingZone { tracks: 10, sectors_per_track: 8 },
            ],
            raz: ByteSize(3 * 16 * 512 + 1), // 3 tracks and a bit: 4 tracks skipped
            shingled_size: Some(ByteSize(6 * 8192 + 3 * 4096)),
            ..SmartConfig::default()
        };
        let (g, _) = cfg.layout().unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].tracks, g[0].bpt, g[0].base), (6, 2, 4 * 8192));
        assert_eq!((g[1].tracks, g[1].bpt, g[1].base), (3, 1, 10 * 8192));
        let e = SmartConfig { raz: ByteSize(1 << 30), ..cfg.clone() }.validate().unwrap_err().to_string();
        assert!(e.contains("`raz`"), "{e}");
    }
}
