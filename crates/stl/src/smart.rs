//! SMaRT (Track-level Shingled Translation, He & Du, MSST 2017) as a block device over a raw
//! shingled medium.
//!
//! **One algorithm.** Every decision — where a write goes (in place when the next `h − 1` tracks
//! are free, else out of place at the allocation pool's cursor, with guard tracks after hot
//! tracks), when and what garbage collection moves — is taken by the simulator's SMaRT model
//! ([`shingled_device::Smart`]), which records them as [`TrackOp`]s. This layer executes those
//! operations on the medium with the data, and adds what a drive needs that a timing model
//! does not: footers, checkpoints and recovery. So the simulator's GC counts and track moves
//! are this layer's by construction (a test replays one op trace through both).
//!
//! **Layout.** The medium's unshingled tracks (its RAZ, [`Geometry::unshingled_tracks`]) hold,
//! in order: two superblock copies (one track each), two checkpoint slots, and the staging
//! tracks. Every shingled track `p` of the model is medium track `raz + p`; its last 4 KiB block
//! is a **footer** (the paper's §4.5 back-pointer): format nonce, logical track number (LTN),
//! a sequence number and a CRC. The host sees the other blocks of each logical track.
//!
//! **Durability** (the flush contract of [`BlockDevice`]). `flush` syncs the medium, then
//! writes the whole LTN → PTN map as a checkpoint into the older slot with the next generation,
//! and syncs again. Between flushes, every track the layer writes whole (a new track, an
//! out-of-place update, a GC move) carries a footer with a sequence number above the
//! checkpoint's, so recovery — newest valid checkpoint, then a scan of every footer — maps
//! each LTN to its newest complete copy. Two rules keep that copy intact until the next
//! checkpoint:
//!
//! 1. A track freed since the last sync (the old copy of a relocated track, a GC source) is
//!    neither overwritten nor destroyed (by a neighbour's shingled write) before the medium is
//!    synced: the copy that replaced it is then durable.
//! 2. A GC move whose writes would destroy source tracks not yet copied (a victim shifted
//!    left onto an overlapping destination: the paper's moves inside the allocation pool) first
//!    copies the sources to the staging tracks, with footers, and syncs; recovery finds them
//!    there if the move was cut, and moves them back. This closes the gap §4.5 leaves: GC moves
//!    made outside the checkpointed pool survive a crash too.
//!
//! An in-place update is written where it is, as on an HDD: a power cut tears at most the
//! blocks being written.
//!
//! **Discard** writes zeros over the logical tracks that were ever written (a never-written
//! track already reads as zeros), through the same write path.

use crate::block::{check_request, BlockDevice, BLOCK};
use crate::error::{invalid, Result, StlError};
use crate::medium::{Geometry, MediumStats, TrackMedium};
use serde::{Deserialize, Serialize};
use shingled_core::{ByteSize, Nanos};
use shingled_device::{Drive, HddConfig, IdleAfter, RecordingZone, Smart, SmartConfig, TrackOp};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

const SUPER_MAGIC: &[u8; 8] = b"SHSMART1";
const CP_MAGIC: &[u8; 8] = b"SMARTCP1";
const FOOTER_MAGIC: u32 = 0x5446_4F46; // "FOFT"
const VERSION: u32 = 1;
const NONE: u32 = u32::MAX;
/// Bytes of a checkpoint header.
const CP_HEADER: usize = 64;

/// Parameters fixed at format time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmartStlConfig {
    /// Share of each zone's tracks the host can address (SMaRT's U). Default 0.9.
    pub utilisation: f64,
    /// On-demand GC at or below this fragmentation ratio (§4.2.2). Default 0.5.
    pub fragmentation_threshold: f64,
    /// Guard tracks after hot tracks below this zone utilisation (§4.2.3). Default 0.5.
    pub guard_utilisation: f64,
    /// A track rewritten within this many ms is hot. Default 60000.
    pub hot_window_ms: f64,
    /// Background GC when idle (§4.2.4), run by [`SmartStl::idle`]. Default true.
    pub idle_gc: bool,
    /// Idle time before background GC, ms. Default 1242 (§5.5.4).
    pub idle_window_ms: f64,
    /// Staging tracks for overlapping GC moves. Default 8; at least twice the head width.
    pub staging_tracks: u32,
}

impl Default for SmartStlConfig {
    fn default() -> Self {
        SmartStlConfig {
            utilisation: 0.9,
            fragmentation_threshold: 0.5,
            guard_utilisation: 0.5,
            hot_window_ms: 60_000.0,
            idle_gc: true,
            idle_window_ms: shingled_device::profiles::SMART_IDLE_WINDOW_MS,
            staging_tracks: 8,
        }
    }
}

/// Where the RAZ's parts are (medium track numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    /// First track of each checkpoint slot.
    slots: [u64; 2],
    /// Tracks per slot.
    slot_tracks: u64,
    /// First staging track.
    staging: u64,
    /// Staging tracks.
    staging_tracks: u64,
    /// Tracks of the RAZ (the first shingled track is this one).
    raz: u64,
}

impl Layout {
    fn new(g: &Geometry, cfg: &SmartStlConfig) -> Result<Layout> {
        let tb = g.zones[0].track_bytes as u64;
        let shingled = g.tracks() - g.unshingled_tracks as u64;
        let slot_tracks = (CP_HEADER as u64 + 4 * shingled).div_ceil(tb);
        let staging = 2 + 2 * slot_tracks;
        let need = staging + cfg.staging_tracks as u64;
        if (g.unshingled_tracks as u64) < need {
            return Err(invalid(
                "unshingled_tracks",
                g.unshingled_tracks,
                format!(
                    "SMaRT needs {need} unshingled tracks: 2 superblocks, 2 checkpoint slots of {slot_tracks} \
                     and {} staging tracks",
                    cfg.staging_tracks
                ),
            ));
        }
        Ok(Layout {
            slots: [2, 2 + slot_tracks],
            slot_tracks,
            staging,
            staging_tracks: cfg.staging_tracks as u64,
            raz: g.unshingled_tracks as u64,
        })
    }
}

/// The unshingled tracks a medium of these shingled zones needs for SMaRT with `cfg`
/// (superblocks, checkpoints, staging), for building its geometry. `track_bytes` is the first
/// zone's track size.
pub fn raz_tracks_needed(shingled_tracks: u64, track_bytes: u32, cfg: &SmartStlConfig) -> u64 {
    let slot = (CP_HEADER as u64 + 4 * shingled_tracks).div_ceil(track_bytes as u64);
    2 + 2 * slot + cfg.staging_tracks as u64
}

/// Counters and gauges of a SMaRT device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SmartStlStats {
    /// Bytes the host can address.
    pub capacity_bytes: u64,
    /// Bytes of the medium.
    pub raw_bytes: u64,
    /// `capacity_bytes / raw_bytes`.
    pub capacity_share: f64,
    /// Logical tracks ever written.
    pub mapped_tracks: u64,
    /// Physical tracks of the shingled space.
    pub physical_tracks: u64,
    /// Per zone: `(utilisation of its tracks, fragmentation ratio R)`.
    pub zones: Vec<(f64, f64)>,
    /// In-place track updates.
    pub in_place_updates: u64,
    /// Out-of-place track updates.
    pub out_of_place_updates: u64,
    /// First writes of a logical track.
    pub new_tracks: u64,
    /// On-demand GC operations (GC_F).
    pub gc_ondemand: u64,
    /// Background GC operations (GC_B).
    pub gc_background: u64,
    /// Tracks moved by GC.
    pub gc_tracks_moved: u64,
    /// GC moves that went through the staging tracks.
    pub staged_moves: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Medium syncs.
    pub syncs: u64,
    /// Bytes of the in-memory map (4 B per logical track, each way).
    pub map_bytes: u64,
    /// The medium's counters.
    pub medium: MediumStats,
}

/// A superblock copy that verifies: the format nonce, the parameters, its bytes.
type SuperCopy = (u64, SmartStlConfig, Vec<u8>);

/// A problem [`SmartStl::check`] found.
pub type Problem = String;

/// SMaRT over a track medium. See the module documentation.
pub struct SmartStl<M: TrackMedium> {
    medium: M,
    model: Smart,
    cfg: SmartStlConfig,
    layout: Layout,
    nonce: u64,
    /// Next footer sequence number.
    seq: u64,
    /// Generation of the newest checkpoint and the slot it is in.
    generation: u64,
    slot: usize,
    /// Tracks freed since the last sync (rule 1).
    freed: HashSet<u64>,
    started: Instant,
    failed: Option<String>,
    stats: SmartStlStats,
    medium_stats: fn(&M) -> MediumStats,
    /// What load found wrong with the duplicated metadata ([`SmartStl::metadata_damage`]).
    damage: Vec<String>,
}

fn crc(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// A footer: `(ltn, seq)` if it is valid for `nonce`.
fn parse_footer(b: &[u8], nonce: u64) -> Option<(u32, u64)> {
    (le32(b, 0) == FOOTER_MAGIC && le64(b, 4) == nonce && le32(b, 24) == crc(&b[..24]))
        .then(|| (le32(b, 12), le64(b, 16)))
}

fn write_footer(b: &mut [u8], nonce: u64, ltn: u32, seq: u64) {
    b.fill(0);
    b[0..4].copy_from_slice(&FOOTER_MAGIC.to_le_bytes());
    b[4..12].copy_from_slice(&nonce.to_le_bytes());
    b[12..16].copy_from_slice(&ltn.to_le_bytes());
    b[16..24].copy_from_slice(&seq.to_le_bytes());
    let c = crc(&b[..24]);
    b[24..28].copy_from_slice(&c.to_le_bytes());
}

/// The simulator's SMaRT model for this medium: its zones are the medium's after the RAZ,
/// each logical track one block smaller than the physical track (the footer).
fn build_model(g: &Geometry, cfg: &SmartStlConfig) -> Result<Smart> {
    let mut zones = Vec::new();
    let mut bytes = 0u64;
    for (i, z) in g.zones.iter().enumerate() {
        let tracks = if i == 0 { z.tracks - g.unshingled_tracks } else { z.tracks };
        if tracks == 0 {
            continue;
        }
        if z.track_bytes < 2 * BLOCK as u32 {
            return Err(invalid(
                &format!("zones[{i}].track_bytes"),
                z.track_bytes,
                "SMaRT needs at least two 4 KiB blocks per track (one is the footer)",
            ));
        }
        let logical = z.track_bytes - BLOCK as u32;
        zones.push(RecordingZone { tracks, sectors_per_track: logical / 512 });
        bytes += tracks as u64 * logical as u64;
    }
    if zones.is_empty() {
        return Err(invalid("unshingled_tracks", g.unshingled_tracks, "leaves no shingled track"));
    }
    let mut mechanism = HddConfig::cheetah_15k5();
    mechanism.capacity = ByteSize(mechanism.capacity.0.max(bytes));
    let sc = SmartConfig {
        mechanism,
        zones,
        utilisation: cfg.utilisation,
        prefill: false,
        head_width: g.head_width.max(2),
        fragmentation_threshold: cfg.fragmentation_threshold,
        guard_utilisation: cfg.guard_utilisation,
        hot_window_ms: cfg.hot_window_ms,
        idle_gc: cfg.idle_gc,
        idle_window_ms: cfg.idle_window_ms,
        idle_after: IdleAfter::Write,
        ..SmartConfig::default()
    };
    let mut m = sc.build().map_err(|e| match e {
        // The SMaRT model's field is the layer's field of the same name.
        shingled_device::DeviceError::InvalidField { field, value, reason } => {
            StlError::Invalid { field, value, why: reason }
        }
        e => invalid("SMaRT model", "this geometry", e.to_string()),
    })?;
    m.record_ops(true);
    Ok(m)
}

fn validate(g: &Geometry, cfg: &SmartStlConfig) -> Result<()> {
    g.validate()?;
    if g.head_width < 2 {
        return Err(invalid("head_width", g.head_width, "SMaRT runs on shingled media: 2 or more"));
    }
    if cfg.staging_tracks < 2 * g.head_width {
        return Err(invalid(
            "staging_tracks",
            cfg.staging_tracks,
            format!("at least twice the head width, {}", 2 * g.head_width),
        ));
    }
    if g.zones[0].track_bytes as usize > 64 << 20 {
        return Err(invalid("zones[0].track_bytes", g.zones[0].track_bytes, "at most 64 MiB"));
    }
    Ok(())
}

impl<M: TrackMedium> SmartStl<M> {
    /// Formats `medium` (all data lost) and opens it. `medium_stats` reads the medium's counters
    /// for [`SmartStl::stats`].
    pub fn format(mut medium: M, cfg: &SmartStlConfig, medium_stats: fn(&M) -> MediumStats) -> Result<Self> {
        let g = medium.geometry().clone();
        validate(&g, cfg)?;
        let layout = Layout::new(&g, cfg)?;
        let model = build_model(&g, cfg)?;
        let nonce = {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            (t as u64) ^ ((std::process::id() as u64) << 40) ^ 0x5eed_5eed_0001
        };
        let tb = g.zones[0].track_bytes as usize;
        let mut sb = vec![0u8; tb];
        let json = serde_json::to_vec(cfg).map_err(|e| invalid("config", "json", e.to_string()))?;
        if 32 + json.len() + 4 > tb {
            return Err(invalid("zones[0].track_bytes", tb, "too small for the superblock"));
        }
        sb[..8].copy_from_slice(SUPER_MAGIC);
        sb[8..12].copy_from_slice(&VERSION.to_le_bytes());
        sb[12..20].copy_from_slice(&nonce.to_le_bytes());
        sb[20..24].copy_from_slice(&(json.len() as u32).to_le_bytes());
        sb[24..24 + json.len()].copy_from_slice(&json);
        let c = crc(&sb[..24 + json.len()]);
        sb[24 + json.len()..28 + json.len()].copy_from_slice(&c.to_le_bytes());
        // Invalidate both checkpoint slots before the superblocks name the new format.
        let zero = vec![0u8; tb];
        for s in layout.slots {
            medium.write(s, 0, &zero)?;
        }
        medium.write(0, 0, &sb)?;
        medium.write(1, 0, &sb)?;
        medium.flush()?;
        let mut stl = SmartStl::assemble(medium, model, cfg.clone(), layout, nonce, medium_stats);
        stl.flush()?;
        Ok(stl)
    }

    fn assemble(
        medium: M,
        model: Smart,
        cfg: SmartStlConfig,
        layout: Layout,
        nonce: u64,
        medium_stats: fn(&M) -> MediumStats,
    ) -> Self {
        SmartStl {
            medium,
            model,
            cfg,
            layout,
            nonce,
            seq: 1,
            generation: 0,
            slot: 1,
            freed: HashSet::new(),
            started: Instant::now(),
            failed: None,
            stats: SmartStlStats::default(),
            medium_stats,
            damage: Vec::new(),
        }
    }

    /// Opens a formatted medium, recovering after a crash: the newest valid checkpoint, then
    /// every footer newer than it. Writes a checkpoint of the recovered state.
    pub fn open(medium: M, medium_stats: fn(&M) -> MediumStats) -> Result<Self> {
        SmartStl::load(medium, medium_stats, false).map(|(s, _)| s)
    }

    /// Loads a formatted medium without writing anything (for checks): the map recovery
    /// would build, and how many logical tracks recovery would still have to move back from
    /// the staging tracks (a GC move cut by a crash). The device it returns must not be
    /// written while that count is not 0.
    pub fn inspect(medium: M, medium_stats: fn(&M) -> MediumStats) -> Result<(Self, usize)> {
        SmartStl::load(medium, medium_stats, true)
    }

    fn load(mut medium: M, medium_stats: fn(&M) -> MediumStats, read_only: bool) -> Result<(Self, usize)> {
        let g = medium.geometry().clone();
        g.validate()?;
        let name = medium.name();
        let tb = g.zones[0].track_bytes as usize;
        let mut sb = vec![0u8; tb];
        // Both copies are read, so that a bad one is reported while the other still works.
        let mut copies: Vec<std::result::Result<SuperCopy, String>> = Vec::new();
        for t in 0..2u64.min(g.unshingled_tracks as u64) {
            copies.push((|| {
                medium.read(t, 0, &mut sb).map_err(|e| format!("unreadable: {e}"))?;
                if &sb[..8] != SUPER_MAGIC || le32(&sb, 8) != VERSION {
                    return Err(format!("bad magic or version {:02x?}", &sb[..12]));
                }
                let n = le32(&sb, 20) as usize;
                if 28 + n > tb || le32(&sb, 24 + n) != crc(&sb[..24 + n]) {
                    return Err("CRC32C mismatch".into());
                }
                let cfg = serde_json::from_slice::<SmartStlConfig>(&sb[24..24 + n])
                    .map_err(|e| format!("its configuration does not parse: {e}"))?;
                Ok((le64(&sb, 12), cfg, sb[..28 + n].to_vec()))
            })());
        }
        let found = copies.iter().enumerate().find_map(|(t, c)| c.as_ref().ok().map(|c| (t, c.clone())));
        let mut damage = Vec::new();
        if let Some((used, (_, _, bytes))) = &found {
            for (t, c) in copies.iter().enumerate() {
                match c {
                    Err(why) => damage.push(format!(
                        "the superblock copy in track {t} does not verify ({why}); the copy in track {used} is in use"
                    )),
                    Ok((_, _, other)) if other != bytes => damage.push(format!(
                        "the superblock copies in tracks {used} and {t} differ; the copy in track {used} is in use"
                    )),
                    Ok(_) => {}
                }
            }
        }
        let Some((_, (nonce, cfg, _))) = found else {
            return Err(StlError::Corrupt {
                device: name,
                what:
                    "no valid SMaRT superblock in tracks 0 and 1 (not formatted with `shingled stl format`?)"
                        .into(),
            });
        };
        validate(&g, &cfg)?;
        let layout = Layout::new(&g, &cfg)?;
        let model = build_model(&g, &cfg)?;
        let mut stl = SmartStl::assemble(medium, model, cfg, layout, nonce, medium_stats);
        stl.damage = damage;
        let pending = stl.recover(read_only)?;
        Ok((stl, pending))
    }

    /// Reads checkpoint slot `s`: `(generation, seq, map)` if valid.
    fn read_checkpoint(&mut self, s: usize) -> Option<(u64, u64, Vec<u32>)> {
        let n = self.model.physical_tracks() as usize;
        let tb = self.medium.geometry().zones[0].track_bytes as usize;
        let mut raw = vec![0u8; self.layout.slot_tracks as usize * tb];
        for i in 0..self.layout.slot_tracks as usize {
            self.medium.read(self.layout.slots[s] + i as u64, 0, &mut raw[i * tb..(i + 1) * tb]).ok()?;
        }
        if &raw[..8] != CP_MAGIC || le64(&raw, 24) != self.nonce || le32(&raw, 60) != crc(&raw[..60]) {
            return None;
        }
        let ltns = le32(&raw, 32) as usize;
        if ltns != self.model.logical_tracks() as usize || CP_HEADER + 4 * ltns > raw.len() {
            return None;
        }
        let body = &raw[CP_HEADER..CP_HEADER + 4 * ltns];
        if le32(&raw, 36) != crc(body) {
            return None;
        }
        let map: Vec<u32> = body.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        if map.iter().any(|&p| p != NONE && p as usize >= n) {
            return None;
        }
        Some((le64(&raw, 8), le64(&raw, 16), map))
    }

    /// Reads the footer of medium track `t`: `(ltn, seq)` if valid.
    fn footer(&mut self, t: u64) -> Option<(u32, u64)> {
        let tb = self.medium.geometry().track_bytes(t);
        let mut b = [0u8; BLOCK];
        self.medium.read(t, tb - BLOCK as u32, &mut b).ok()?;
        parse_footer(&b, self.nonce)
    }

    /// Rebuilds the map; unless `read_only`, moves staged tracks back and writes a checkpoint.
    /// Returns the staged tracks still to move back (0 unless `read_only`).
    fn recover(&mut self, read_only: bool) -> Result<usize> {
        let name = self.medium.name();
        let cps: Vec<_> = (0..2).map(|s| self.read_checkpoint(s).map(|c| (s, c))).collect();
        let valid = [cps[0].is_some(), cps[1].is_some()];
        let Some((slot, (generation, cp_seq, mut map))) = cps.into_iter().flatten().max_by_key(|(_, c)| c.0)
        else {
            return Err(StlError::Corrupt {
                device: name,
                what: "no valid checkpoint in either slot".into(),
            });
        };
        // Every checkpoint but the first (written at format, the other slot zeroed) leaves the
        // previous one in the other slot: that copy should verify too.
        if generation >= 2 && !valid[1 - slot] {
            let other = self.layout.slots[1 - slot];
            self.damage.push(format!(
                "checkpoint slot {} (tracks {other}-{}) does not verify; slot {slot} (generation {generation}) is in \
                 use (a crash during a checkpoint leaves this; opening the device read-write rewrites it)",
                1 - slot,
                other + self.layout.slot_tracks - 1
            ));
        }
        self.generation = generation;
        self.slot = slot;
        let raz = self.layout.raz;
        let ltns = map.len();
        // The newest copy of each LTN written since the checkpoint: (seq, medium track).
        let mut newest: HashMap<u32, (u64, u64)> = HashMap::new();
        let mut max_seq = cp_seq;
        let mut claimed: HashMap<u64, u32> = HashMap::new();
        let tracks: Vec<u64> = (raz..raz + self.model.physical_tracks() as u64)
            .chain(self.layout.staging..self.layout.staging + self.layout.staging_tracks)
            .collect();
        for t in tracks {
            let Some((ltn, seq)) = self.footer(t) else { continue };
            max_seq = max_seq.max(seq);
            if seq <= cp_seq || ltn as usize >= ltns {
                continue;
            }
            if t >= raz {
                claimed.insert(t - raz, ltn);
            }
            let e = newest.entry(ltn).or_insert((seq, t));
            if seq > e.0 {
                *e = (seq, t);
            }
        }
        // A checkpointed placement whose track a newer footer claims for another LTN is stale.
        for (ltn, p) in map.iter_mut().enumerate() {
            if *p != NONE && claimed.get(&(*p as u64)).is_some_and(|&l| l as usize != ltn) {
                *p = NONE;
            }
        }
        let mut staged = Vec::new();
        for (&ltn, &(_, t)) in &newest {
            if t >= raz {
                map[ltn as usize] = (t - raz) as u32;
            } else {
                map[ltn as usize] = NONE;
                staged.push((ltn, t));
            }
        }
        let pairs: Vec<(u32, u32)> =
            map.iter().enumerate().filter(|(_, &p)| p != NONE).map(|(l, &p)| (l as u32, p)).collect();
        self.model.populate(&pairs).map_err(|e| StlError::Corrupt {
            device: self.medium.name(),
            what: format!("recovered map does not fit the layout: {e}"),
        })?;
        self.model.take_ops();
        self.seq = max_seq + 1;
        if read_only {
            return Ok(staged.len());
        }
        // Moves cut before they finished: put the staged tracks back through the write path.
        // Read them all first: putting one back may stage another GC move over them.
        staged.sort();
        let mut back = Vec::new();
        for (ltn, t) in staged {
            let Some((first, blocks)) = self.model.ltn_blocks(ltn) else { continue };
            let mut data = vec![0u8; blocks as usize * BLOCK];
            self.medium.read(t, 0, &mut data)?;
            back.push((first, data));
        }
        for (first, data) in back {
            self.write_blocks(first, &data)?;
        }
        self.flush()?;
        Ok(0)
    }

    fn now(&self) -> Nanos {
        Nanos(self.started.elapsed().as_nanos() as u64)
    }

    fn fail<T>(&mut self, e: StlError) -> Result<T> {
        self.failed = Some(e.to_string());
        Err(e)
    }

    fn ensure_ok(&self) -> Result<()> {
        match &self.failed {
            None => Ok(()),
            Some(why) => Err(StlError::Failed {
                device: self.medium.name(),
                detail: format!("an earlier operation failed ({why}); reopen the device to recover"),
            }),
        }
    }

    /// Syncs the medium (rule 1's barrier).
    fn sync(&mut self) -> Result<()> {
        self.medium.flush()?;
        self.freed.clear();
        self.stats.syncs += 1;
        Ok(())
    }

    /// Writes `data` into medium track `t` at `off`, syncing first if the write would overwrite
    /// or destroy a track freed since the last sync (rule 1).
    fn put(&mut self, t: u64, off: u32, data: &[u8]) -> Result<()> {
        if !self.freed.is_empty() {
            let hit = self.freed.contains(&t)
                || self.medium.geometry().overlapped(t).any(|o| self.freed.contains(&o));
            if hit {
                self.sync()?;
            }
        }
        self.medium.write(t, off, data)
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
    }

    /// Executes the operations the model decided, in order. `host` is the write being served:
    /// `(first block, data)`.
    fn execute(&mut self, ops: Vec<TrackOp>, host: Option<(u64, &[u8])>) -> Result<()> {
        let raz = self.layout.raz;
        for op in ops {
            match op {
                TrackOp::Read { .. } => {}
                TrackOp::InPlace { ltn, ptn, offset, blocks } => {
                    let slice = self.host_slice(host, ltn, offset, blocks)?;
                    self.put(raz + ptn as u64, offset * BLOCK as u32, slice)?;
                    self.stats.in_place_updates += 1;
                }
                TrackOp::New { ltn, ptn, offset, blocks } => {
                    let t = raz + ptn as u64;
                    let mut buf = vec![0u8; self.medium.geometry().track_bytes(t) as usize];
                    let slice = self.host_slice(host, ltn, offset, blocks)?;
                    let at = offset as usize * BLOCK;
                    buf[at..at + slice.len()].copy_from_slice(slice);
                    self.seal_and_put(t, ltn, &mut buf)?;
                    self.stats.new_tracks += 1;
                }
                TrackOp::Relocate { ltn, from, to, offset, blocks, .. } => {
                    let (src, dst) = (raz + from as u64, raz + to as u64);
                    let tb = self.medium.geometry().track_bytes(dst) as usize;
                    let mut buf = vec![0u8; tb];
                    let (_, bpt) = self.model.ltn_blocks(ltn).unwrap_or((0, 0));
                    if blocks < bpt {
                        self.medium.read(src, 0, &mut buf[..tb - BLOCK])?;
                    }
                    let slice = self.host_slice(host, ltn, offset, blocks)?;
                    let at = offset as usize * BLOCK;
                    buf[at..at + slice.len()].copy_from_slice(slice);
                    self.seal_and_put(dst, ltn, &mut buf)?;
                    self.freed.insert(src);
                    self.stats.out_of_place_updates += 1;
                }
                TrackOp::Move { from, to, tracks, background } => {
                    self.execute_move(raz + from as u64, raz + to as u64, tracks as u64)?;
                    if background {
                        self.stats.gc_background += 1;
                    } else {
                        self.stats.gc_ondemand += 1;
                    }
                    self.stats.gc_tracks_moved += tracks as u64;
                }
            }
        }
        Ok(())
    }

    fn host_slice<'d>(
        &self,
        host: Option<(u64, &'d [u8])>,
        ltn: u32,
        offset: u32,
        blocks: u32,
    ) -> Result<&'d [u8]> {
        let (first, data) = host.ok_or_else(|| StlError::Corrupt {
            device: self.medium.name(),
            what: format!("the model wrote logical track {ltn} outside a host write"),
        })?;
        let (b0, _) = self.model.ltn_blocks(ltn).unwrap_or((0, 0));
        let at = ((b0 + offset as u64 - first) as usize) * BLOCK;
        Ok(&data[at..at + blocks as usize * BLOCK])
    }

    /// Stamps the footer of a whole-track buffer for `ltn` and writes it to track `t`.
    fn seal_and_put(&mut self, t: u64, ltn: u32, buf: &mut [u8]) -> Result<()> {
        let seq = self.next_seq();
        let n = buf.len();
        write_footer(&mut buf[n - BLOCK..], self.nonce, ltn, seq);
        self.put(t, 0, buf)
    }

    /// A GC move of `n` tracks from `from` to `to` (medium tracks, same zone): read all, stage
    /// them if the destination writes would destroy uncopied sources (rule 2), write all.
    fn execute_move(&mut self, from: u64, to: u64, n: u64) -> Result<()> {
        let h = self.medium.geometry().head_width as u64;
        let mut tracks = Vec::with_capacity(n as usize);
        for i in 0..n {
            let t = from + i;
            let mut buf = vec![0u8; self.medium.geometry().track_bytes(t) as usize];
            self.medium.read(t, 0, &mut buf)?;
            let len = buf.len();
            let Some((ltn, _)) = parse_footer(&buf[len - BLOCK..], self.nonce) else {
                return Err(StlError::Corrupt {
                    device: self.medium.name(),
                    what: format!("GC source track {t} has no valid footer"),
                });
            };
            tracks.push((ltn, buf));
        }
        // The destination writes damage [to, to + n + h − 1); sources in there are at risk.
        let overlap = to < from + n && from < to + n + h - 1;
        if overlap {
            // Chunks of `c` destination writes. Before a chunk, its sources and the `h − 1`
            // after them (which its last write may destroy) are staged and synced; after it,
            // its destinations are synced. Chunks alternate between the two halves of the
            // staging tracks, so the copies staged for the previous chunk — of sources it may
            // have destroyed — stay intact while this chunk's are written.
            let half = self.layout.staging_tracks / 2;
            let c = half - (h - 1);
            let (mut i, mut parity) = (0u64, 0u64);
            while i < n {
                let e = (i + c).min(n);
                let base = self.layout.staging + parity * half;
                for k in i..(e + h - 1).min(n) {
                    let (ltn, ref buf) = tracks[k as usize];
                    let mut copy = buf.clone();
                    self.seal_and_put(base + (k - i), ltn, &mut copy)?;
                }
                self.sync()?;
                for k in i..e {
                    let (ltn, mut buf) = std::mem::take(&mut tracks[k as usize]);
                    self.seal_and_put(to + k, ltn, &mut buf)?;
                }
                self.sync()?;
                self.stats.staged_moves += 1;
                i = e;
                parity ^= 1;
            }
        } else {
            for k in 0..n {
                let (ltn, mut buf) = std::mem::take(&mut tracks[k as usize]);
                self.seal_and_put(to + k, ltn, &mut buf)?;
            }
        }
        for k in 0..n {
            let src = from + k;
            if !(to..to + n).contains(&src) {
                self.freed.insert(src);
            }
        }
        Ok(())
    }

    /// Writes whole blocks through the model.
    fn write_blocks(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        let n = (data.len() / BLOCK) as u64;
        let mut done = 0u64;
        while done < n {
            let k = (n - done).min(1 << 16);
            let now = self.now();
            self.model.write(now, lba + done, k as u32);
            let ops = self.model.take_ops();
            let slice = &data[done as usize * BLOCK..(done + k) as usize * BLOCK];
            if let Err(e) = self.execute(ops, Some((lba + done, slice))) {
                return self.fail(e);
            }
            done += k;
        }
        Ok(())
    }

    /// Background GC for `budget` of modelled idle time (the server calls it when the device
    /// has been idle): what the model's idle GC decides, executed.
    pub fn idle(&mut self, budget: std::time::Duration) -> Result<()> {
        self.ensure_ok()?;
        let now = self.now();
        // Saturating: the budget comes from callers (Python's `idle(seconds)`).
        let budget = u64::try_from(budget.as_nanos()).unwrap_or(u64::MAX);
        self.model.idle(now, Nanos(now.0.saturating_add(budget)));
        let ops = self.model.take_ops();
        if let Err(e) = self.execute(ops, None) {
            return self.fail(e);
        }
        Ok(())
    }

    fn write_checkpoint(&mut self) -> Result<()> {
        let slot = 1 - self.slot;
        let generation = self.generation + 1;
        let n = self.model.logical_tracks() as usize;
        let tb = self.medium.geometry().zones[0].track_bytes as usize;
        let mut raw = vec![0u8; self.layout.slot_tracks as usize * tb];
        for l in 0..n {
            let p = self.model.ptn_of(l as u32).unwrap_or(NONE);
            raw[CP_HEADER + 4 * l..CP_HEADER + 4 * l + 4].copy_from_slice(&p.to_le_bytes());
        }
        let body_crc = crc(&raw[CP_HEADER..CP_HEADER + 4 * n]);
        raw[..8].copy_from_slice(CP_MAGIC);
        raw[8..16].copy_from_slice(&generation.to_le_bytes());
        raw[16..24].copy_from_slice(&(self.seq - 1).to_le_bytes());
        raw[24..32].copy_from_slice(&self.nonce.to_le_bytes());
        raw[32..36].copy_from_slice(&(n as u32).to_le_bytes());
        raw[36..40].copy_from_slice(&body_crc.to_le_bytes());
        let c = crc(&raw[..60]);
        raw[60..64].copy_from_slice(&c.to_le_bytes());
        for i in 0..self.layout.slot_tracks as usize {
            self.medium.write(self.layout.slots[slot] + i as u64, 0, &raw[i * tb..(i + 1) * tb])?;
        }
        self.sync()?;
        self.slot = slot;
        self.generation = generation;
        self.stats.checkpoints += 1;
        Ok(())
    }

    /// Read-only consistency check: the model's invariants, and every mapped track readable
    /// (not poisoned) with a footer naming its LTN.
    pub fn check(&mut self) -> Vec<Problem> {
        let mut out = Vec::new();
        if let Err(e) = self.model.check() {
            out.push(format!("map invariants: {e}"));
        }
        let raz = self.layout.raz;
        for l in 0..self.model.logical_tracks() {
            let Some(p) = self.model.ptn_of(l) else { continue };
            let t = raz + p as u64;
            if self.medium.is_poisoned(t) {
                out.push(format!(
                    "logical track {l} maps to physical track {t}, which a shingled write destroyed"
                ));
                continue;
            }
            match self.footer(t) {
                Some((fl, _)) if fl == l => {}
                Some((fl, _)) => {
                    out.push(format!("physical track {t} holds logical track {l} but its footer says {fl}"))
                }
                None => out.push(format!("physical track {t} (logical track {l}) has no valid footer")),
            }
        }
        out
    }

    /// Bad copies of the duplicated metadata found at open (a superblock copy, the checkpoint
    /// slot that should hold the previous checkpoint), one line each naming the copy and the
    /// one in use. The medium's own (header, flag table) are the medium's.
    pub fn metadata_damage(&self) -> &[String] {
        &self.damage
    }

    /// Counters and gauges.
    pub fn stats(&self) -> SmartStlStats {
        let mut s = self.stats.clone();
        let g = self.medium.geometry();
        s.capacity_bytes = self.capacity_blocks() * BLOCK as u64;
        s.raw_bytes = g.bytes();
        s.capacity_share = s.capacity_bytes as f64 / s.raw_bytes.max(1) as f64;
        s.physical_tracks = self.model.physical_tracks() as u64;
        s.mapped_tracks =
            (0..self.model.logical_tracks()).filter(|&l| self.model.ptn_of(l).is_some()).count() as u64;
        s.zones = (0..self.model.zone_count())
            .map(|z| {
                let r = self.model.zone_tracks(z);
                let n = (r.end - r.start) as f64;
                let used = self.model.used_elements(z).iter().map(|e| e.1 as u64).sum::<u64>() as f64;
                (used / n, self.model.fragmentation(z).2)
            })
            .collect();
        let st = self.model.stats().stl;
        s.gc_ondemand = st.gc_ondemand;
        s.gc_background = st.gc_background;
        s.map_bytes = 8 * self.model.logical_tracks() as u64;
        s.medium = (self.medium_stats)(&self.medium);
        s
    }

    /// The format parameters.
    pub fn config(&self) -> &SmartStlConfig {
        &self.cfg
    }

    /// The simulator's model inside (its statistics are the drive model's).
    pub fn model(&self) -> &Smart {
        &self.model
    }

    /// The medium.
    pub fn medium(&self) -> &M {
        &self.medium
    }

    /// Unwraps the medium (for crash tests: cut power on it, then reopen).
    pub fn into_medium(self) -> M {
        self.medium
    }
}

impl<M: TrackMedium> BlockDevice for SmartStl<M> {
    fn capacity_blocks(&self) -> u64 {
        self.model.capacity_blocks()
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        self.ensure_ok()?;
        let n = check_request(&self.medium.name(), "read", lba, buf.len(), self.capacity_blocks())?;
        let raz = self.layout.raz;
        let mut b = lba;
        while b < lba + n {
            let (_, ltn, off) = self.model.locate(b).expect("checked range");
            let (_, bpt) = self.model.ltn_blocks(ltn).expect("located");
            let cnt = ((bpt - off) as u64).min(lba + n - b);
            let dst = &mut buf[((b - lba) as usize) * BLOCK..((b - lba + cnt) as usize) * BLOCK];
            match self.model.ptn_of(ltn) {
                None => dst.fill(0),
                Some(p) => self.medium.read(raz + p as u64, off * BLOCK as u32, dst)?,
            }
            b += cnt;
        }
        let now = self.now();
        self.model.read(now, lba, n.min(u32::MAX as u64) as u32);
        self.model.take_ops();
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        self.ensure_ok()?;
        check_request(&self.medium.name(), "write", lba, data.len(), self.capacity_blocks())?;
        self.write_blocks(lba, data)
    }

    fn flush(&mut self) -> Result<()> {
        self.ensure_ok()?;
        let r = self.sync().and_then(|_| self.write_checkpoint());
        if let Err(e) = r {
            return self.fail(e);
        }
        Ok(())
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        self.ensure_ok()?;
        if lba.checked_add(blocks).is_none_or(|e| e > self.capacity_blocks()) {
            return Err(StlError::Range {
                what: format!("{}: discard at block {lba}", self.medium.name()),
                detail: format!(
                    "{blocks} blocks reach past the capacity of {} blocks",
                    self.capacity_blocks()
                ),
            });
        }
        let mut b = lba;
        while b < lba + blocks {
            let (_, ltn, off) = self.model.locate(b).expect("checked range");
            let (_, bpt) = self.model.ltn_blocks(ltn).expect("located");
            let cnt = ((bpt - off) as u64).min(lba + blocks - b);
            if self.model.ptn_of(ltn).is_some() {
                self.write_blocks(b, &vec![0u8; cnt as usize * BLOCK])?;
            }
            b += cnt;
        }
        Ok(())
    }

    fn name(&self) -> String {
        format!("SMaRT on {}", self.medium.name())
    }
}
