//! An emulated drive-managed SMR drive on real storage (the PORE prototype's method): the
//! [`shingled_device::DmSmr`] model keeps the bookkeeping — persistent buffer (PB), bands,
//! cleaning at the high watermark, idle cleaning — and decides; this layer does the I/O it
//! decided for real, on a file, through the model's operation log ([`DmSmrOp`]):
//!
//! - a PB append is a write of the block to its PB slot (consecutive appends of one request are
//!   one sequential write);
//! - a cleaning is a real read of the whole band, the PB copies of its blocks merged in, and a
//!   real write of the whole band (the RMW the papers time);
//! - a read is served from the PB slot holding the block's latest copy, else from the band.
//!
//! So the layer's RMWs, PB writes and band bytes are the model's, request for request, the
//! same as `shingled sim` counts for the same requests.
//!
//! # Layout
//!
//! ```text
//! [0, 64 KiB)        header: magic SHDMSMR\0, version, the drive configuration as JSON, CRC
//! [64 KiB, 128 KiB)  backup header
//! 2 × 4 KiB          checkpoints (alternating): epoch, cumulative counts, CRC
//! band table         per band: (epoch, sequence number) of its last cleaning, 16 B
//! PB map             per PB slot: (block, sequence number, epoch, data CRC, CRC), 32 B
//! PB                 the persistent buffer, one 4 KiB slot per block
//! bands              the host's LBA space, band after band
//! ```
//!
//! # Durability
//!
//! The PB map is kept in memory and written at each sync; a map record names its slot's data
//! by CRC, so a record whose slot was since overwritten (or torn) is recognised as such. After
//! a restart, a block's copy in the PB is the record of the current epoch with the highest
//! sequence number whose data CRC matches and that is not older than its band's last cleaning;
//! opening the layer merges those copies into their bands (a recovery RMW per band), syncs, and
//! starts a new epoch with an empty PB (the model starts afresh; the counts carry on from the
//! checkpoint). Ordering that makes this hold:
//!
//! - `flush` writes the pending PB data, the dirty PB map pages and a checkpoint, then syncs;
//! - a cleaning first syncs the PB copies it merges (a torn band write is repaired from them),
//!   then syncs the band it wrote before it records the band's cleaning in the band
//!   table, and syncs that before any merged copy's slot can be reused;
//! - a slot whose copy was superseded is reused only once the superseding copy and its record
//!   are synced (the layer syncs first if not).
//!
//! # Supported models
//!
//! `pb_flavour = "append-only"` with `pb_free = "at-head"` (the ST5000AS0011, ST8000AS0002,
//! SAC and Skylight profiles). `in-place` rewrites a block's only persistent copy where it
//! lies, which a power cut could tear with no older copy to fall back on; `immediate` is an
//! idealised log whose occupancy counts valid blocks only, with no physical slot a layer could
//! follow. Both are refused. Entry limits, watermarks, idle cleaning, a flash PB's or a write
//! cache's timing change when or how fast the model cleans, not where data lies: all are
//! supported. Discard writes zero blocks through the PB (the drives have no TRIM), counted as
//! host writes.

use crate::block::{check_request, BlockDevice, BLOCK};
use crate::error::{invalid, io, Result, StlError};
use serde::Serialize;
use shingled_core::{BandConfig, BandMap, ByteSize, Nanos, SizeSpec};
use shingled_device::{BuildContext, DmSmr, DmSmrConfig, DmSmrOp, Drive, DriveConfig, PbFlavour, PbFree};
use shingled_zoned::Storage;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

mod disk;
mod file;
use disk::{load, write_checkpoint, Header, Layout, ReadOnly, Record};
pub use file::EmuFile;

/// The file's magic.
pub const MAGIC: &[u8; 8] = b"SHDMSMR\0";
const CKPT_MAGIC: &[u8; 8] = b"SHDMCKPT";
const VERSION: u32 = 1;
const B: u64 = BLOCK as u64;
const HEADER_BYTES: u64 = 64 << 10;
const CKPT_AT: u64 = 2 * HEADER_BYTES;
const BAND_TABLE_AT: u64 = CKPT_AT + 2 * B;
const BAND_ENTRY: u64 = 16;
const RECORD: u64 = 32;
/// `dead_at` of a slot no superseded copy occupies.
const NONE: u64 = u64::MAX;
/// Longest PB write issued at once.
const MAX_RUN: usize = 256;

/// How to lay an emulated DM-SMR drive out in a file.
#[derive(Clone, Debug, PartialEq)]
pub struct DmSmrFileSpec {
    /// Size of the file: header, PB map, PB and bands.
    pub size: ByteSize,
    /// A DM-SMR drive profile (`shingled drives`).
    pub drive: String,
    /// The PB size: absolute, or a fraction of the host capacity. Default: the profile's
    /// (a fraction of the written range in a profile is taken of the host capacity).
    pub pb_size: Option<SizeSpec>,
    /// The band layout. Default: the profile's.
    pub bands: Option<BandConfig>,
}

impl Default for DmSmrFileSpec {
    fn default() -> Self {
        DmSmrFileSpec {
            size: ByteSize::gib(1),
            drive: "st5000as0011-scaled".into(),
            pb_size: None,
            bands: None,
        }
    }
}

/// Counts of the emulated drive, cumulative over every session of the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DmSmrEmuCounts {
    /// Host read requests.
    pub read_ops: u64,
    /// Host write requests (discards included).
    pub write_ops: u64,
    /// Host blocks read.
    pub blocks_read: u64,
    /// Host blocks written.
    pub blocks_written: u64,
    /// Host blocks written to the PB (the model's `pb_writes`).
    pub pb_writes: u64,
    /// Host blocks read from the PB (the model's `pb_reads`).
    pub pb_reads: u64,
    /// Band read-modify-writes the model decided (the model's `rmws`), each done for real.
    pub rmws: u64,
    /// Of those, done by idle-time cleaning.
    pub idle_rmws: u64,
    /// Bytes read from bands by those RMWs.
    pub band_bytes_read: u64,
    /// Bytes written to bands by those RMWs.
    pub band_bytes_written: u64,
    /// PB blocks merged into bands by those RMWs.
    pub pb_blocks_cleaned: u64,
    /// Bands rewritten on opening, to merge the PB copies a previous session left.
    pub recovery_rmws: u64,
    /// PB blocks merged by those.
    pub recovery_blocks: u64,
    /// Syncs (`fdatasync`) of the file.
    pub syncs: u64,
}

const NCOUNTS: usize = 14;

impl DmSmrEmuCounts {
    fn to_array(self) -> [u64; NCOUNTS] {
        [
            self.read_ops,
            self.write_ops,
            self.blocks_read,
            self.blocks_written,
            self.pb_writes,
            self.pb_reads,
            self.rmws,
            self.idle_rmws,
            self.band_bytes_read,
            self.band_bytes_written,
            self.pb_blocks_cleaned,
            self.recovery_rmws,
            self.recovery_blocks,
            self.syncs,
        ]
    }
    fn from_array(a: [u64; NCOUNTS]) -> DmSmrEmuCounts {
        DmSmrEmuCounts {
            read_ops: a[0],
            write_ops: a[1],
            blocks_read: a[2],
            blocks_written: a[3],
            pb_writes: a[4],
            pb_reads: a[5],
            rmws: a[6],
            idle_rmws: a[7],
            band_bytes_read: a[8],
            band_bytes_written: a[9],
            pb_blocks_cleaned: a[10],
            recovery_rmws: a[11],
            recovery_blocks: a[12],
            syncs: a[13],
        }
    }
    fn plus(self, o: DmSmrEmuCounts) -> DmSmrEmuCounts {
        let (a, b) = (self.to_array(), o.to_array());
        DmSmrEmuCounts::from_array(std::array::from_fn(|i| a[i] + b[i]))
    }
}

/// Statistics of an emulated DM-SMR drive (`shingled stl stats`).
#[derive(Clone, Debug, Serialize)]
pub struct DmSmrEmuStats {
    /// The drive profile it was formatted from.
    pub drive: String,
    /// PB size in bytes.
    pub pb_bytes: u64,
    /// Bands over the host capacity.
    pub bands: u64,
    /// The PB's flavour and free mode.
    pub pb_flavour: String,
    /// When a dead PB slot is reused.
    pub pb_free: String,
    /// Blocks whose latest copy is in the PB now (read-only inspection: that a read-write open
    /// would merge).
    pub pb_valid_blocks: u64,
    /// The current epoch (one per session; a session's PB map records carry it).
    pub epoch: u64,
    /// Band bytes written per PB block cleaned (the model's write amplification), if any.
    pub write_amplification: Option<f64>,
    /// The counts, over every session.
    pub counts: DmSmrEmuCounts,
}

/// Checks that the layer can follow the model's placement (see the module's "Supported
/// models").
fn check_supported(cfg: &DmSmrConfig, drive: &str) -> Result<()> {
    if cfg.pb_flavour != PbFlavour::AppendOnly {
        return Err(invalid(
            "pb_flavour",
            cfg.pb_flavour,
            format!(
                "drive {drive:?}: the emulated drive supports append-only PBs only (an in-place update \
                 rewrites a block's only persistent copy where it lies, which a power cut could tear)"
            ),
        ));
    }
    if cfg.pb_free != PbFree::AtHead {
        return Err(invalid(
            "pb_free",
            cfg.pb_free,
            format!(
                "drive {drive:?}: the emulated drive supports at-head PBs only (an immediate PB reuses \
                 slots that may still hold valid copies: it has no physical placement to follow)"
            ),
        ));
    }
    Ok(())
}

fn dm_smr_profile(drive: &str) -> Result<DmSmrConfig> {
    let names = || {
        shingled_device::profile_names()
            .iter()
            .filter(|n| match shingled_device::profile(n) {
                Some(DriveConfig::DmSmr(c)) => check_supported(&c, n).is_ok(),
                _ => false,
            })
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    };
    match shingled_device::profile(drive) {
        Some(DriveConfig::DmSmr(c)) => Ok(c),
        Some(_) => Err(invalid(
            "drive",
            drive,
            format!("not a DM-SMR drive profile; the emulated drive supports: {}", names()),
        )),
        None => Err(invalid(
            "drive",
            drive,
            format!("no such drive profile; the emulated drive supports: {}", names()),
        )),
    }
}

fn device_err(field: &str, value: impl std::fmt::Display, e: impl std::fmt::Display) -> StlError {
    invalid(field, value, e.to_string())
}

/// Lays `spec` out: the model's configuration (capacity and PB resolved) and the layout.
fn plan(spec: &DmSmrFileSpec) -> Result<(DmSmrConfig, Layout)> {
    let mut cfg = dm_smr_profile(&spec.drive)?;
    check_supported(&cfg, &spec.drive)?;
    if let Some(p) = spec.pb_size {
        cfg.pb_size = p;
    }
    if let SizeSpec::Fraction(f) = cfg.pb_size {
        if !(f > 0.0 && f <= 1.0) {
            return Err(invalid("pb_size", cfg.pb_size, "a fraction of the capacity must be in (0, 1]"));
        }
    }
    if let Some(b) = &spec.bands {
        cfg.bands = b.clone();
    }
    let size = spec.size.0 / B * B;
    let fixed = BAND_TABLE_AT;
    let too_small = |why: String| invalid("size", spec.size, why);
    if size < fixed + 4 * B {
        return Err(too_small(format!("at least {} for the headers alone", ByteSize(fixed + 4 * B))));
    }
    let avail = (size - fixed) / B;
    let slots_for = |cap: u64| -> u64 {
        match cfg.pb_size {
            SizeSpec::Absolute(b) => (b.0 / B).max(1),
            SizeSpec::Fraction(f) => ((cap as f64 * f) as u64).max(1),
        }
    };
    // The capacity, the PB (which may be a share of it) and the tables all come out of the
    // size: start from an estimate and shrink until everything fits.
    let mut cap = match cfg.pb_size {
        SizeSpec::Absolute(_) => avail.saturating_sub(slots_for(0)),
        SizeSpec::Fraction(f) => (avail as f64 / (1.0 + f * 1.01)) as u64,
    };
    let layout = loop {
        if cap == 0 {
            return Err(too_small(format!(
                "no room for bands after a PB of {} (give a smaller PB size, `--pb-size`, or a larger size)",
                ByteSize(slots_for(0) * B)
            )));
        }
        let bands = BandMap::build(&cfg.bands, ByteSize(cap * B))
            .map_err(|e| device_err("bands", format!("{:?}", cfg.bands), e))?;
        let l = Layout::new(size, bands.len() as u64, slots_for(cap), cap);
        if l.end() <= size {
            break l;
        }
        cap = cap.saturating_sub((l.end() - size).div_ceil(B));
    };
    cfg.capacity = ByteSize(layout.capacity_blocks * B);
    cfg.pb_size = SizeSpec::Absolute(ByteSize(layout.slots * B));
    Ok((cfg, layout))
}

/// Checks `spec` without writing anything (the profile, the flavours, the layout, the model's
/// own validation).
pub(crate) fn plan_check(spec: &DmSmrFileSpec) -> Result<()> {
    let (config, _) = plan(spec)?;
    config.build(&BuildContext::default()).map_err(|e| device_err("drive", &spec.drive, e))?;
    Ok(())
}

/// An emulated DM-SMR drive on a [`Storage`] (a file, or a [`shingled_zoned::SimStorage`] in
/// tests). See the module documentation.
pub struct DmSmrEmu<S: Storage> {
    st: S,
    name: String,
    header: Header,
    model: DmSmr,
    bands: BandMap,
    epoch: u64,
    gen: u64,
    /// Counts of earlier sessions (and of this one's recovery).
    base: DmSmrEmuCounts,
    /// This session's RMWs done for real, and their bytes and merged blocks.
    done: DmSmrEmuCounts,
    clock: Nanos,
    /// Block → PB slot of its latest copy (not yet merged).
    map: HashMap<u64, u64>,
    /// Per slot: the sequence number of the append that superseded its copy, or [`NONE`].
    dead_at: Vec<u64>,
    records: Vec<u8>,
    dirty_records: BTreeSet<u64>,
    band_table: Vec<u8>,
    seq: u64,
    /// Every append below this sequence number is synced, data and record.
    synced_seq: u64,
    /// A PB write being gathered: its first slot and data.
    run_slot: u64,
    run: Vec<u8>,
    ops: Vec<DmSmrOp>,
    damage: Vec<String>,
}

impl<S: Storage> DmSmrEmu<S> {
    fn io(&self, what: impl std::fmt::Display, e: std::io::Error) -> StlError {
        io(format!("{}: {what}", self.name), e)
    }

    /// Formats `st` (whose contents are overwritten) as an emulated drive of `spec`.
    pub fn format(mut st: S, spec: &DmSmrFileSpec) -> Result<DmSmrEmu<S>> {
        let name = st.name();
        let (config, layout) = plan(spec)?;
        // The model validates the rest (mechanism, watermarks, fit) before anything is written.
        config.build(&BuildContext::default()).map_err(|e| device_err("drive", &spec.drive, e))?;
        let header = Header { drive: spec.drive.clone(), layout, config };
        let json = serde_json::to_vec(&header).expect("the header serialises");
        if json.len() as u64 > HEADER_BYTES - 20 {
            return Err(invalid(
                "drive",
                &spec.drive,
                format!(
                    "its configuration takes {} bytes, more than the header's {}",
                    json.len(),
                    HEADER_BYTES - 20
                ),
            ));
        }
        let mut hb = vec![0u8; HEADER_BYTES as usize];
        hb[0..8].copy_from_slice(MAGIC);
        hb[8..12].copy_from_slice(&VERSION.to_le_bytes());
        hb[12..16].copy_from_slice(&(json.len() as u32).to_le_bytes());
        hb[16..20].copy_from_slice(&crc32c::crc32c(&json).to_le_bytes());
        hb[20..20 + json.len()].copy_from_slice(&json);
        let e = |what: &str, err| io(format!("{name}: {what}"), err);
        st.set_len(layout.size).map_err(|x| e("setting the size", x))?;
        // The last block too, so that every storage (a sparse simulated one as well) has the
        // size the header states, and a truncated file is told apart on opening.
        st.write_at(layout.size - B, &[0u8; BLOCK]).map_err(|x| e("writing the last block", x))?;
        // Tables start zero (a fresh file reads zeros; a reused one is cleared).
        let zeros = vec![0u8; 1 << 20];
        let mut at = CKPT_AT;
        while at < layout.pb_at {
            let n = (layout.pb_at - at).min(zeros.len() as u64);
            st.write_at(at, &zeros[..n as usize]).map_err(|x| e("clearing the tables", x))?;
            at += n;
        }
        st.write_at(0, &hb).map_err(|x| e("writing the header", x))?;
        st.write_at(HEADER_BYTES, &hb).map_err(|x| e("writing the backup header", x))?;
        for gen in [0, 1] {
            write_checkpoint(&mut st, gen, 1, DmSmrEmuCounts::default())
                .map_err(|x| e("writing the checkpoints", x))?;
        }
        st.sync().map_err(|x| e("syncing", x))?;
        DmSmrEmu::open(st)
    }

    /// Opens an emulated drive, merging the PB copies a previous session left into their
    /// bands (recovery after a crash or a clean close alike) and starting a new epoch.
    pub fn open(st: S) -> Result<DmSmrEmu<S>> {
        let mut st = st;
        let loaded = load(&mut st)?;
        let mut d =
            DmSmrEmu::assemble(st, loaded.header, loaded.epoch, loaded.gen, loaded.counts, loaded.damage)?;
        // Merge what the PB held, band by band, then make it durable before the new epoch.
        for (band, copies) in &loaded.pending {
            d.merge_band(*band, copies.iter().map(|&(b, s)| (b, s)).collect(), true)?;
        }
        if !loaded.pending.is_empty() {
            d.sync_file()?;
        }
        d.epoch += 1;
        d.base = d.base.plus(d.done);
        d.done = DmSmrEmuCounts::default();
        d.gen += 1;
        write_checkpoint(&mut d.st, d.gen, d.epoch, d.base).map_err(|e| d.io("writing the checkpoint", e))?;
        d.sync_file()?;
        Ok(d)
    }

    /// Reads the state without writing (the check and the statistics of a file in use by
    /// nobody): the stats as they are, the PB copies a read-write open would merge counted.
    fn inspect_storage(mut st: S) -> Result<(DmSmrEmuStats, Vec<String>)> {
        let loaded = load(&mut st)?;
        let pending: u64 = loaded.pending.values().map(|v| v.len() as u64).sum();
        let d =
            DmSmrEmu::assemble(st, loaded.header, loaded.epoch, loaded.gen, loaded.counts, loaded.damage)?;
        let mut s = d.stats();
        s.pb_valid_blocks = pending;
        Ok((s, d.damage.clone()))
    }

    fn assemble(
        st: S,
        header: Header,
        epoch: u64,
        gen: u64,
        counts: DmSmrEmuCounts,
        damage: Vec<String>,
    ) -> Result<DmSmrEmu<S>> {
        let name = st.name();
        let mut model = header.config.build(&BuildContext::default()).map_err(|e| StlError::Corrupt {
            device: name.clone(),
            what: format!("header: drive configuration: {e}"),
        })?;
        model.record_ops(true);
        let bands = BandMap::build(&header.config.bands, header.config.capacity)
            .map_err(|e| StlError::Corrupt { device: name.clone(), what: format!("header: bands: {e}") })?;
        let l = header.layout;
        Ok(DmSmrEmu {
            name,
            model,
            bands,
            epoch,
            gen,
            base: counts,
            done: DmSmrEmuCounts::default(),
            clock: Nanos::ZERO,
            map: HashMap::new(),
            dead_at: vec![NONE; l.slots as usize],
            records: vec![0u8; (l.pb_at - l.records_at) as usize],
            dirty_records: BTreeSet::new(),
            band_table: vec![0u8; (l.records_at - BAND_TABLE_AT) as usize],
            seq: 0,
            synced_seq: 0,
            run_slot: 0,
            run: Vec::new(),
            ops: Vec::new(),
            damage,
            header,
            st,
        })
    }

    /// The storage underneath.
    pub fn storage(&self) -> &S {
        &self.st
    }

    /// The storage underneath, to arm a crash test's fault.
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.st
    }

    /// Unwraps the storage (a crash test's power cut takes it from here).
    pub fn into_storage(self) -> S {
        self.st
    }

    /// The model deciding what to do.
    pub fn model(&self) -> &DmSmr {
        &self.model
    }

    /// The model's configuration (capacity and PB size resolved for the file).
    pub fn model_config(&self) -> DmSmrConfig {
        self.header.config.clone()
    }

    /// The drive profile it was formatted from.
    pub fn drive(&self) -> &str {
        &self.header.drive
    }

    /// Bad copies of duplicated metadata found on opening (header, checkpoint).
    pub fn metadata_damage(&self) -> &[String] {
        &self.damage
    }

    /// The counts, over every session.
    pub fn counts(&self) -> DmSmrEmuCounts {
        let m = self.model.stats();
        let session = DmSmrEmuCounts {
            read_ops: m.read_ops,
            write_ops: m.write_ops,
            blocks_read: m.blocks_read,
            blocks_written: m.blocks_written,
            pb_writes: m.pb_writes,
            pb_reads: m.pb_reads,
            ..self.done
        };
        self.base.plus(session)
    }

    /// The statistics.
    pub fn stats(&self) -> DmSmrEmuStats {
        let c = self.counts();
        DmSmrEmuStats {
            drive: self.header.drive.clone(),
            pb_bytes: self.header.layout.slots * B,
            bands: self.header.layout.nbands,
            pb_flavour: self.header.config.pb_flavour.to_string(),
            pb_free: self.header.config.pb_free.to_string(),
            pb_valid_blocks: self.map.len() as u64,
            epoch: self.epoch,
            write_amplification: (c.pb_blocks_cleaned > 0)
                .then(|| c.band_bytes_written as f64 / (c.pb_blocks_cleaned * B) as f64),
            counts: c,
        }
    }

    /// The consistency check: the layer's PB map against the model's (they must name the same
    /// blocks), and the RMWs done against the model's.
    pub fn check(&self) -> Vec<String> {
        let mut out = Vec::new();
        let valid = self.model.pb_valid_blocks();
        if self.map.len() as u64 != valid {
            out.push(format!("the PB holds {} blocks, the model says {valid}", self.map.len()));
        }
        let mut wrong: Vec<u64> = self.map.keys().copied().filter(|&b| !self.model.pb_contains(b)).collect();
        wrong.sort_unstable();
        if let Some(b) = wrong.first() {
            out.push(format!("{} blocks in the PB the model has merged (first: block {b})", wrong.len()));
        }
        if self.done.rmws != self.model.stats().rmws {
            out.push(format!("{} RMWs done, the model decided {}", self.done.rmws, self.model.stats().rmws));
        }
        out
    }

    /// Idle-time cleaning, for a profile with an idle window (`idle_window_ms`): the caller
    /// has seen the host idle for that long (`stl serve` calls this every 100 ms once the
    /// device has been idle for `--idle-ms`), so the model's clock passes the window and then
    /// `d`, and the model cleans bands in FIFO order while an RMW can start within `d`. Without
    /// an idle window the drive does no idle cleaning.
    pub fn idle(&mut self, d: Duration) -> Result<()> {
        let Some(window) = self.header.config.idle_window_ms else { return Ok(()) };
        let until =
            self.clock + Nanos((window * 1e6).round() as u64) + Nanos(d.as_nanos().min(1 << 62) as u64);
        self.model.idle(self.clock, until);
        self.clock = until;
        self.execute(0, &[])
    }

    /// Does what the model logged. `data` holds the blocks of the write at `lba`, if any.
    fn execute(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        let mut ops = std::mem::take(&mut self.ops);
        self.model.take_ops(&mut ops);
        let mut r = Ok(());
        for op in &ops {
            r = match *op {
                DmSmrOp::Append { block, slot } => {
                    let i = (block - lba) as usize * BLOCK;
                    self.append(block, slot, &data[i..i + BLOCK])
                }
                DmSmrOp::Clean { band, idle } => self.clean(band, idle),
                DmSmrOp::InPlace { block, .. } => Err(StlError::Corrupt {
                    device: self.name.clone(),
                    what: format!(
                        "the model updated block {block} in place, which this layer does not support"
                    ),
                }),
            };
            if r.is_err() {
                break;
            }
        }
        self.ops = ops;
        r?;
        self.write_run()
    }

    fn append(&mut self, block: u64, slot: u64, data: &[u8]) -> Result<()> {
        if self.dead_at[slot as usize] != NONE && self.dead_at[slot as usize] >= self.synced_seq {
            // The copy that superseded this slot's is not durable yet: make it so first.
            self.sync_pb()?;
        }
        self.dead_at[slot as usize] = NONE;
        let seq = self.seq;
        self.seq += 1;
        if let Some(old) = self.map.insert(block, slot) {
            if old != slot {
                self.dead_at[old as usize] = seq;
            }
        }
        let rec = Record { block, seq, epoch: self.epoch, data_crc: crc32c::crc32c(data) };
        let at = (slot * RECORD) as usize;
        rec.encode(&mut self.records[at..at + RECORD as usize]);
        self.dirty_records.insert(slot * RECORD / B);
        if !self.run.is_empty()
            && (self.run_slot + (self.run.len() / BLOCK) as u64 != slot || self.run.len() >= MAX_RUN * BLOCK)
        {
            self.write_run()?;
        }
        if self.run.is_empty() {
            self.run_slot = slot;
        }
        self.run.extend_from_slice(data);
        Ok(())
    }

    /// Writes the gathered PB run.
    fn write_run(&mut self) -> Result<()> {
        if self.run.is_empty() {
            return Ok(());
        }
        let at = self.header.layout.pb_at + self.run_slot * B;
        let r = self.st.write_at(at, &self.run);
        self.run.clear();
        r.map_err(|e| self.io(format!("writing PB slot {}", self.run_slot), e))
    }

    /// Makes every append so far durable, data and record.
    fn sync_pb(&mut self) -> Result<()> {
        self.write_run()?;
        self.write_records()?;
        self.sync_file()?;
        self.synced_seq = self.seq;
        Ok(())
    }

    fn write_records(&mut self) -> Result<()> {
        let dirty = std::mem::take(&mut self.dirty_records);
        for page in dirty {
            let at = (page * B) as usize;
            let r = self.st.write_at(self.header.layout.records_at + page * B, &self.records[at..at + BLOCK]);
            r.map_err(|e| self.io(format!("writing PB map page {page}"), e))?;
        }
        Ok(())
    }

    fn sync_file(&mut self) -> Result<()> {
        self.st.sync().map_err(|e| self.io("syncing", e))?;
        self.done.syncs += 1;
        Ok(())
    }

    /// One cleaning the model decided: every block of `band` whose latest copy is in the PB.
    fn clean(&mut self, band: u32, idle: bool) -> Result<()> {
        if self.synced_seq < self.seq {
            // The PB copies being merged must be durable before the band is rewritten: a power
            // cut tearing the band write is repaired from them on opening.
            self.sync_pb()?;
        }
        let (start, len) = self.bands.band_range(band);
        let copies: Vec<(u64, u64)> =
            (start..start + len).filter_map(|b| self.map.remove(&b).map(|s| (b, s))).collect();
        self.merge_band(band, copies, false)?;
        if idle {
            self.done.idle_rmws += 1;
        }
        // The band is synced: record its cleaning, durably, before any merged copy's slot is
        // reused (an older record of a merged block must not come back after a crash).
        let e = band as usize * BAND_ENTRY as usize;
        self.band_table[e..e + 8].copy_from_slice(&self.epoch.to_le_bytes());
        self.band_table[e + 8..e + 16].copy_from_slice(&self.seq.to_le_bytes());
        let page = e / BLOCK;
        let r = self.st.write_at(
            BAND_TABLE_AT + (page * BLOCK) as u64,
            &self.band_table[page * BLOCK..(page + 1) * BLOCK],
        );
        r.map_err(|e| self.io(format!("writing the band table for band {band}"), e))?;
        self.sync_file()
    }

    /// Reads band `band`, patches `copies` (block, PB slot) in, writes it back and syncs it.
    fn merge_band(&mut self, band: u32, mut copies: Vec<(u64, u64)>, recovery: bool) -> Result<()> {
        let l = self.header.layout;
        let (start, len) = self.bands.band_range(band);
        let mut buf = vec![0u8; (len * B) as usize];
        let at = l.bands_at + start * B;
        let r = self.st.read_at(at, &mut buf);
        r.map_err(|e| self.io(format!("reading band {band}"), e))?;
        copies.sort_unstable_by_key(|&(_, s)| s);
        for &(b, s) in &copies {
            let i = ((b - start) * B) as usize;
            let r = self.st.read_at(l.pb_at + s * B, &mut buf[i..i + BLOCK]);
            r.map_err(|e| self.io(format!("reading PB slot {s}"), e))?;
        }
        let r = self.st.write_at(at, &buf);
        r.map_err(|e| self.io(format!("writing band {band}"), e))?;
        self.sync_file()?;
        if recovery {
            self.done.recovery_rmws += 1;
            self.done.recovery_blocks += copies.len() as u64;
        } else {
            self.done.rmws += 1;
            self.done.band_bytes_read += len * B;
            self.done.band_bytes_written += len * B;
            self.done.pb_blocks_cleaned += copies.len() as u64;
        }
        Ok(())
    }

    /// Writes through the model, `u32::MAX` blocks at most per model request.
    fn write_blocks(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        let mut done = 0u64;
        let n = (data.len() / BLOCK) as u64;
        while done < n {
            let k = (n - done).min(u32::MAX as u64 / 2);
            let t = self.model.write(self.clock, lba + done, k as u32);
            self.clock += t;
            let bytes = &data[(done * B) as usize..((done + k) * B) as usize];
            self.execute(lba + done, bytes)?;
            done += k;
        }
        Ok(())
    }
}

/// Opens `path` read-only with a shared lock and reads its statistics and metadata damage
/// without writing.
pub fn inspect_file(path: &std::path::Path) -> Result<(DmSmrEmuStats, Vec<String>)> {
    let file = std::fs::File::open(path).map_err(|e| io(format!("opening {}", path.display()), e))?;
    shingled_zoned::lock::lock(&file, path, shingled_zoned::lock::LockKind::Shared)
        .map_err(|e| io(format!("opening {}", path.display()), e))?;
    DmSmrEmu::inspect_storage(ReadOnly { file, path: path.to_path_buf() })
}

impl<S: Storage> BlockDevice for DmSmrEmu<S> {
    fn capacity_blocks(&self) -> u64 {
        self.header.layout.capacity_blocks
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        let n = check_request(&self.name, "read", lba, buf.len(), self.capacity_blocks())?;
        if n == 0 {
            return Ok(());
        }
        let mut done = 0u64;
        while done < n {
            let k = (n - done).min(u32::MAX as u64 / 2);
            let t = self.model.read(self.clock, lba + done, k as u32);
            self.clock += t;
            done += k;
        }
        let l = self.header.layout;
        // Runs of blocks contiguous on the storage, each one read.
        let mut i = 0u64;
        while i < n {
            let where_ = |b: u64| match self.map.get(&b) {
                Some(&s) => l.pb_at + s * B,
                None => l.bands_at + b * B,
            };
            let start = where_(lba + i);
            let mut j = i + 1;
            while j < n && where_(lba + j) == start + (j - i) * B {
                j += 1;
            }
            let r = self.st.read_at(start, &mut buf[(i * B) as usize..(j * B) as usize]);
            r.map_err(|e| self.io(format!("reading block {}", lba + i), e))?;
            i = j;
        }
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        check_request(&self.name, "write", lba, data.len(), self.capacity_blocks())?;
        if data.is_empty() {
            return Ok(());
        }
        self.write_blocks(lba, data)
    }

    fn flush(&mut self) -> Result<()> {
        self.write_run()?;
        self.write_records()?;
        self.gen += 1;
        let counts = self.counts();
        // The syncs count includes the one this flush is about to do.
        let counts = DmSmrEmuCounts { syncs: counts.syncs + 1, ..counts };
        let r = write_checkpoint(&mut self.st, self.gen, self.epoch, counts);
        r.map_err(|e| self.io("writing the checkpoint", e))?;
        self.sync_file()?;
        self.synced_seq = self.seq;
        Ok(())
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        if lba.checked_add(blocks).is_none_or(|e| e > self.capacity_blocks()) {
            return Err(StlError::Range {
                what: format!("{}: discard at block {lba}", self.name),
                detail: format!(
                    "{blocks} blocks reach past the capacity of {} blocks",
                    self.capacity_blocks()
                ),
            });
        }
        // The drives have no TRIM: zeros are written through the PB.
        let zeros = vec![0u8; MAX_RUN * BLOCK];
        let mut done = 0;
        while done < blocks {
            let k = (blocks - done).min(MAX_RUN as u64);
            self.write_blocks(lba + done, &zeros[..(k * B) as usize])?;
            done += k;
        }
        Ok(())
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
