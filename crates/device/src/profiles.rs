//! Every named drive and SSD profile, and every calibrated number behind them, with its source.
//!
//! [`PROFILES`] is the one list of drive profiles: [`profile`], [`profile_names`], `--drive
//! NAME`, `shingled drives`, `shingled drive profiles` and Python's `shingled.drives()` /
//! `drive_profile` all read it. [`SSD_PROFILES`] is the same for `--ssd NAME`. Adding a profile =
//! one entry in the table (name, one line, the configuration); the round-trip tests
//! (`crates/cli/tests/registries.rs`) check that every name reaches the CLI and Python.
//!
//! The mechanisms under the profiles are the [`HddConfig`] constructors below
//! ([`HddConfig::cmr_7200_500g`], …), the persistent-buffer and idle-cleaning numbers the
//! constants. Every value says where it comes from on its line: the papers (PORE, SAC, SMaRT,
//! Skylight) by section, table or figure, a datasheet or DiskSim model, or **fitted to** the
//! measurement it was chosen to reproduce. docs/drive-models.md has the same numbers as tables,
//! with the derived figures the tests check.

use crate::dm_smr::{DmSmrConfig, PbFlavour, PbFree};
use crate::error::{DeviceError, Result};
use crate::hdd::{HddConfig, WriteCacheConfig};
use crate::smart::{RecordingZone, SmartConfig};
use crate::ssd::SsdConfig;
use crate::DriveConfig;
use shingled_core::{BandConfig, ByteSize, SizeSpec};

/// A named configuration: a drive profile ([`PROFILES`]) or an SSD profile ([`SSD_PROFILES`]).
#[derive(Clone, Copy, Debug)]
pub struct Profile<C: 'static> {
    /// The name `--drive` / `--ssd` take.
    pub name: &'static str,
    /// What it models, in one line (the sources are on the lines of its configuration).
    pub about: &'static str,
    /// Builds the configuration.
    pub config: fn() -> C,
}

// Here, above the registry, so that `config` need not know the profiles.
impl DriveConfig {
    /// [`profile`], with an error listing the known names.
    pub fn from_profile(name: &str) -> Result<DriveConfig> {
        profile(name).ok_or_else(|| DeviceError::UnknownProfile {
            name: name.to_string(),
            known: profile_names().join(", "),
        })
    }
}

/// Every drive profile, in the order the listings print them.
pub const PROFILES: &[Profile<DriveConfig>] = &[
    Profile {
        name: "cmr-7200-500g",
        about: "PORE's 7200 rpm 500 GB CMR disk (the CMR-only baseline)",
        config: || DriveConfig::Cmr(HddConfig::cmr_7200_500g()),
    },
    Profile {
        name: "cmr-5900-5t",
        about: "a 5900 rpm 5 TB CMR disk: the ST5000AS0011 mechanics without shingling",
        config: || {
            DriveConfig::Cmr(HddConfig {
                capacity: FIVE_TB, // PORE §V-G's 5 TB CMR baseline next to the real SMR drive
                ..HddConfig::archive_5900_5tb()
            })
        },
    },
    Profile {
        name: "pore-cmr",
        about: "PORE Fig. 3's 7200 rpm CMR disk as measured: write cache on, 2 TB",
        config: || DriveConfig::Cmr(HddConfig::pore_cmr()),
    },
    Profile {
        name: "sac-cmr",
        about: "the 5 TB CMR disk of SAC Table 2 / Fig. 1, write cache on, fitted to Table 2",
        config: || DriveConfig::Cmr(HddConfig::sac_cmr()),
    },
    Profile {
        name: "st5000as0011",
        about: "the Seagate 5 TB DM-SMR drive as Skylight and PORE §II describe it, fitted to PORE Fig. 3",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: FIVE_TB,                             // the drive's 5 TB (PORE §II-B)
                pb_size: SizeSpec::Absolute(ByteSize::gb(20)), // PORE §II; Skylight: one at the OD, 20–25 GB
                pb_flavour: PbFlavour::AppendOnly,             // Skylight: an on-disk log
                pb_free: PbFree::AtHead, // a circular log: holes freed as its head passes
                // Skylight: 36 MB at LBA 0, falling to 17 MB.
                bands: BandConfig::LbaDependent { outer: ByteSize::mb(36), inner: ByteSize::mb(17) },
                mechanism: HddConfig::archive_5900_5tb(),
                pb_max_entries: Some(ST5000AS0011_PB_ENTRIES), // fitted to PORE Fig. 3's SMR curve
                pb_merge_ms_per_block: Some(MERGE_MS_PER_BLOCK), // SAC §4.4's slope less a PB append
                idle_window_ms: Some(SKYLIGHT_IDLE_WINDOW_MS), // Skylight's idle cleaning (SMaRT §5.1)
                ..DmSmrConfig::default()
            })
        },
    },
    Profile {
        name: "st8000as0002",
        about: "the Seagate 8 TB DM-SMR drive SAC measured, fitted to SAC Tables 2-3",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: ByteSize(8_000_000_000_000), // the drive's 8 TB (SAC §6)
                // SAC Table 3: 30.3 GB with 256 KB writes.
                pb_size: SizeSpec::Absolute(ByteSize(30_300_000_000 / 4096 * 4096)),
                pb_flavour: PbFlavour::AppendOnly, // as st5000as0011
                pb_free: PbFree::AtHead,           // as st5000as0011
                // SAC §5.2: 40 MB at LBA 0, falling to 15 MB.
                bands: BandConfig::LbaDependent { outer: ByteSize::mb(40), inner: ByteSize::mb(15) },
                mechanism: HddConfig::st8000as0002(),
                pb_max_entries: Some(ST8000AS0002_PB_ENTRIES), // SAC Table 3: 720 MB with 4 KB writes
                pb_merge_ms_per_block: Some(MERGE_MS_PER_BLOCK), // SAC §4.4
                idle_window_ms: Some(SKYLIGHT_IDLE_WINDOW_MS), // SMaRT §5.1
                pb_clean_low_watermark: Some(ST8000AS0002_CLEAN_LOW_WATERMARK), // fitted to SAC Table 2's RSD
                ..DmSmrConfig::default()
            })
        },
    },
    Profile {
        name: "st5000as0011-scaled",
        about: "st5000as0011 with the PB at 1/256 of the written range and PORE's uniform bands",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: FIVE_TB,
                pb_size: PB_1_256, // PORE §V-A's trace scaling
                pb_flavour: PbFlavour::AppendOnly,
                pb_free: PbFree::AtHead,
                bands: PORE_BANDS, // PORE §V-A
                mechanism: HddConfig::archive_5900_5tb(),
                ..DmSmrConfig::default()
            })
        },
    },
    Profile {
        name: "pore-emulator",
        about: "PORE's artifact as implemented: in-place PB of 1/256, 18 MiB bands, on its 500 GB disk",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: PORE_CAPACITY,
                pb_size: PB_1_256,              // PORE §V-A
                pb_flavour: PbFlavour::InPlace, // PORE's artifact: `smrwrite` updates a copy in place
                pb_free: PbFree::AtHead,        // PORE's artifact: slots free as the head reaches them
                // PORE's artifact: its band size table never leaves the first class.
                bands: BandConfig::Fixed { size: ByteSize::mib(18) },
                mechanism: HddConfig::cmr_7200_500g(), // the prototype's CMR disk (PORE §II-B)
                ..DmSmrConfig::default()
            })
        },
    },
    Profile {
        name: "pore-emulator-uniform",
        about: "the paper's description of PORE's emulator: pore-emulator with uniform 17-36 MB bands",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: PORE_CAPACITY,
                pb_size: PB_1_256,
                pb_flavour: PbFlavour::InPlace,
                pb_free: PbFree::AtHead,
                bands: PORE_BANDS, // PORE §V-A
                mechanism: HddConfig::cmr_7200_500g(),
                ..DmSmrConfig::default()
            })
        },
    },
    Profile {
        name: "sac-emulator",
        about: "SAC's artifact: append-only PB of 150,000 blocks, 20.48 MB bands, up to 259.99 GB",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                // The artifact's bands grow by 1,024,000 B steps above its first size class;
                // rather than model that, the capacity stops there, so a trace reaching beyond
                // it is rejected instead of silently meeting different bands.
                capacity: ByteSize(SAC_FIRST_CLASS_BYTES),
                pb_size: SizeSpec::Absolute(ByteSize(150_000 * 4096)), // the artifact's `--pb-size`: 614.4 MB
                pb_flavour: PbFlavour::AppendOnly, // SAC's artifact ("v2: append-only PB")
                pb_free: PbFree::AtHead, // SAC's artifact: `invalidDespInFIFO` skips leading holes only
                bands: BandConfig::Fixed { size: ByteSize(20_480_000) }, // the first class's bands
                mechanism: HddConfig::archive_5980_8tb(), // the ST8000AS0002 SAC measured on (SAC §6)
                ..DmSmrConfig::default()
            })
        },
    },
    Profile {
        name: "pore-prototype",
        about: "the drive of PORE's experiments as §V-A describes its prototype (the `pore` set-up)",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: PORE_CAPACITY,
                pb_size: PB_1_256,              // PORE §V-A
                pb_flavour: PbFlavour::InPlace, // a FIFO updated in place (the artifact's `smrwrite`)
                pb_free: PbFree::AtHead,
                bands: PORE_BANDS, // PORE §V-A
                // PORE's 7200 rpm CMR disk, its volatile write cache on: O_DIRECT bypasses the
                // page cache, not the drive's cache.
                mechanism: HddConfig::pore_cmr(),
                pb_merge_ms_per_block: None, // at the PB region's bandwidth (PORE Eq. 1's S / B_rbuf)
                ..DmSmrConfig::default()
            })
        },
    },
    Profile {
        name: "sac-testbed",
        about: "SAC's experiments (§6): its emulator's PB and bands on the ST8000AS0002 (the `sac` set-up)",
        config: || {
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: ByteSize(SAC_FIRST_CLASS_BYTES), // counts from SAC's emulator, as sac-emulator
                pb_size: PB_1_256, // as PORE scales it, so that the synthetic traces fill it
                pb_flavour: PbFlavour::AppendOnly, // SAC's emulator, cleaned one band at a time
                pb_free: PbFree::AtHead,
                bands: BandConfig::Fixed { size: ByteSize(20_480_000) }, // SAC's emulator
                mechanism: HddConfig::st8000as0002(), // time from SAC's measurements (Tables 2-3, Fig. 10)
                pb_merge_ms_per_block: Some(MERGE_MS_PER_BLOCK), // SAC §4.4
                ..DmSmrConfig::default()
            })
        },
    },
    // The three schemes of SMaRT's evaluation (§5.1–5.2), on one Cheetah 15K.5 mechanism.
    Profile {
        name: "cheetah-15k5",
        about: "SMaRT's regular HDD: the whole Cheetah 15K.5, write cache off (§5.2)",
        config: || DriveConfig::Cmr(HddConfig::cheetah_15k5()), // neither RAZ nor E-region (SMaRT §5.2)
    },
    Profile {
        name: "smart-cheetah",
        about: "SMaRT on the Cheetah 15K.5: 2 GB RAZ, 142 GB shingled I-region, utilisation 0.6 (§5.1-5.4)",
        config: || {
            // Head width 2, threshold 0.5, guard tracks below 50%, idle window 1242 ms (§5.5.4)
            // and utilisation 0.6 pre-populated (§5.4; experiments set 0.3, 0.6, 0.9) are
            // SmartConfig's defaults.
            DriveConfig::Smart(SmartConfig {
                mechanism: HddConfig::cheetah_15k5(),
                zones: cheetah_15k5_zones(),    // the Cheetah's recording zones
                raz: ByteSize(SMART_RAZ_BYTES), // SMaRT §5.2
                shingled_size: Some(ByteSize(SMART_I_REGION_BYTES)), // SMaRT §5.2; no E-region
                ..SmartConfig::default()
            })
        },
    },
    Profile {
        name: "skylight-cheetah",
        about: "the Seagate DM-SMR drive as SMaRT §5.1 configures it after Skylight, on the Cheetah 15K.5",
        config: || {
            // No RAZ is modelled (its map is in DRAM), so the bands follow the cache directly.
            DriveConfig::DmSmr(DmSmrConfig {
                capacity: ByteSize(SMART_I_REGION_BYTES), // SMaRT §5.2's I-region
                pb_size: SizeSpec::Absolute(ByteSize(SMART_PB_BYTES)), // SMaRT §5.1: "a single 2 GB" cache
                pb_flavour: PbFlavour::AppendOnly,        // SMaRT §5.1: a circular-log structured cache ...
                pb_free: PbFree::AtHead,                  // ... whose space is reclaimed as its tail passes
                // SMaRT §5.1's 40 MB, read as MiB: bands of whole 4 KiB blocks.
                bands: BandConfig::Fixed { size: ByteSize::mib(40) },
                mechanism: HddConfig::cheetah_15k5(),
                // Merged PB blocks read at the PB region's bandwidth: the ST8000AS0002's fitted
                // 0.41 ms per block belongs to that drive.
                pb_merge_ms_per_block: None,
                idle_window_ms: Some(SKYLIGHT_IDLE_WINDOW_MS), // SMaRT §5.1: cleaning until the next request
                pb_clean_high_watermark: Some(SKYLIGHT_HIGH_WATERMARK), // SMaRT §5.1: on demand at 80% full
                ..DmSmrConfig::default()
            })
        },
    },
];

/// Every SSD profile; the first is the default ([`SsdConfig::default`]).
pub const SSD_PROFILES: &[Profile<SsdConfig>] = &[
    Profile { name: "nvme", about: "Intel DC P4500 class NVMe (the default)", config: SsdConfig::nvme },
    Profile { name: "sata", about: "Intel DC S4500 class SATA", config: SsdConfig::sata },
];

/// The drive configuration named `name` in [`PROFILES`]; `None` for an unknown name
/// ([`DriveConfig::from_profile`] says which names are known).
pub fn profile(name: &str) -> Option<DriveConfig> {
    find(PROFILES, name)
}

/// The names of [`PROFILES`], in its order.
pub fn profile_names() -> &'static [&'static str] {
    &PROFILE_NAMES
}

/// The SSD configuration named `name` in [`SSD_PROFILES`].
pub fn ssd_profile(name: &str) -> Option<SsdConfig> {
    find(SSD_PROFILES, name)
}

/// The names of [`SSD_PROFILES`], in its order.
pub fn ssd_profile_names() -> &'static [&'static str] {
    &SSD_PROFILE_NAMES
}

static PROFILE_NAMES: [&str; PROFILES.len()] = names(PROFILES);
static SSD_PROFILE_NAMES: [&str; SSD_PROFILES.len()] = names(SSD_PROFILES);

fn find<C>(table: &[Profile<C>], name: &str) -> Option<C> {
    table.iter().find(|p| p.name == name).map(|p| (p.config)())
}

/// The names of a table, computed at compile time.
const fn names<C, const N: usize>(table: &[Profile<C>]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i].name;
        i += 1;
    }
    out
}

// The numbers the profiles share.

const FIVE_TB: ByteSize = ByteSize(5_000_000_000_000);

/// PORE's prototype emulated the SMR drive on its 500 GB CMR disk (PORE §II-B); 20 GB are kept
/// for the PB.
const PORE_CAPACITY: ByteSize = ByteSize::gb(480);

/// PORE §V-A's trace scaling: the PB is 1/256 of the written range (20 GB / 5 TB).
const PB_1_256: SizeSpec = SizeSpec::Fraction(1.0 / 256.0);

/// PORE §V-A's bands: uniformly random 17–36 MB (Skylight's range for the ST5000AS0011), seed 0.
const PORE_BANDS: BandConfig =
    BandConfig::UniformRandom { min: ByteSize::mb(17), max: ByteSize::mb(36), seed: 0 };

/// SAC's emulator: 12,695 bands of 20,480,000 B form its first size class, [0, 259.99 GB)
/// (SAC's artifact, dcstrange/sac `src/smr-emulator/emulator_v2.c`: `BNDSZ`, `NSMRBands` and
/// `getBandSize`).
const SAC_FIRST_CLASS_BYTES: u64 = 12_695 * 20_480_000;

/// PB entries of the ST8000AS0002: SAC Table 3 finds a PB "capacity" of 720 MB with 4 KB writes
/// and 1450 MB with 8 KB writes, i.e. a limit on entries rather than bytes; 720 MiB / 4 KiB =
/// 184,320 (1450 MiB / 8 KiB = 185,600).
pub const ST8000AS0002_PB_ENTRIES: u64 = 184_320;

/// PB entries of the ST5000AS0011. No paper measures it; this is the one value fitted to PORE
/// Fig. 3's SMR curve (docs/drive-models.md, "Calibrated profiles"), of the order SAC measured on its
/// successor ([`ST8000AS0002_PB_ENTRIES`]).
pub const ST5000AS0011_PB_ENTRIES: u64 = 125_000;

// Defined beside the model whose default it is (the models sit below this table).
pub use crate::dm_smr::MERGE_MS_PER_BLOCK;

/// Batch-cleaning low watermark of the ST8000AS0002 (`pb_clean_low_watermark`): once the PB is
/// full, the drive cleans until 98.5% of it is left, i.e. 2,765 of its 184,320 entries are
/// freed per stall. **Fitted**, together with the range `C` of SAC §5.1 that the benches
/// precondition with (`shingled_bench::device::DEFAULT_HISTORY_RANGE`, 600 GB), to SAC Table 2's SMR
/// write mean (124.2 KB/s) and RSD (869.6%) of 4 KB random writes over 0–10 GB: a stall of
/// about two minutes, then about a second of writes at PB speed; storj/storj#3854 reports
/// stalls of "a few dozen seconds". The mean write rate depends on `C`, hardly on this
/// (docs/drive-models.md, "Misses and why").
pub const ST8000AS0002_CLEAN_LOW_WATERMARK: f64 = 0.985;

/// Idle time after which a Skylight-like drive starts cleaning, ms (SMaRT §5.1 configures its
/// Skylight drive "with a 1242ms triggering idle window").
pub const SKYLIGHT_IDLE_WINDOW_MS: f64 = 1242.0;

// Defined beside the model whose default it is.
pub use crate::smart::SMART_IDLE_WINDOW_MS;

/// Persistent-buffer occupancy at which SMaRT's Skylight drive starts on-demand cleaning
/// (SMaRT §5.1: "An on-demand GC is triggered when the persistent cache space is 80% full").
pub const SKYLIGHT_HIGH_WATERMARK: f64 = 0.8;

/// The SMaRT evaluation's layout (§5.2): "one 2 GB random access zone, one 2 GB persistent
/// cache (i.e., E-region) and the rest of the 142 GB for persistent storage space (i.e.,
/// I-region)".
pub const SMART_RAZ_BYTES: u64 = 2_000_000_000;
/// See [`SMART_RAZ_BYTES`]: the E-region (Skylight's persistent buffer).
pub const SMART_PB_BYTES: u64 = 2_000_000_000;
/// See [`SMART_RAZ_BYTES`]: the I-region.
pub const SMART_I_REGION_BYTES: u64 = 142_000_000_000;

/// The share of a drive-managed SMR drive's DRAM cache used for writes is not published; the
/// Seagate Archive HDD (ST8000AS0002) has 128 MB of cache in all (a review of the 8 TB drive,
/// hardwareslave.com: "the usual cache (128MB for this model)"). The write cache this option
/// models on a real DM-SMR drive uses all of it.
pub const ARCHIVE_CACHE_BYTES: u64 = 128_000_000;

/// User sectors (512 B) of the Cheetah 15K.5 146 GB: the datasheet's guaranteed sectors
/// [recalled, unverified]; DiskSim's validated model (`Seagate-Cheetah15k5.parv`) gives
/// 286,749,487, one less, as its storage capacity and stripe unit.
pub const CHEETAH_15K5_SECTORS: u64 = 286_749_488;

/// The Cheetah 15K.5's recording zones from the outer diameter, as `(cylinders, sectors per
/// track)`, four tracks per cylinder: the table of a DiskSim-derived SMR simulator found by code
/// search (its `Init_Seagate_Cheetah15k5`, repository not identified) [unverified; its
/// consistency with DiskSim's validated model is not checked]. 72,171 cylinders, 287,194,400
/// sectors (the drive's 286,749,488 user sectors plus spares); DiskSim's layout for the drive
/// also starts with 1200-sector tracks.
pub const CHEETAH_15K5_ZONES: [(u32, u32); 14] = [
    (7801, 1200),
    (6400, 1160),
    (6000, 1120),
    (5700, 1104),
    (5400, 1080),
    (5100, 1020),
    (4900, 994),
    (4700, 960),
    (4500, 920),
    (4400, 880),
    (4200, 840),
    (4100, 816),
    (4000, 780),
    (4970, 720),
];

/// [`CHEETAH_15K5_ZONES`] as recording zones (4 tracks per cylinder).
pub fn cheetah_15k5_zones() -> Vec<RecordingZone> {
    CHEETAH_15K5_ZONES
        .iter()
        .map(|&(cyl, spt)| RecordingZone { tracks: cyl * 4, sectors_per_track: spt })
        .collect()
}

/// The calibrated mechanisms. Figures of typical 7200 rpm drives come from the WD Ultrastar HC310
/// datasheet, DiskSim 4.0's 4 TB 7200 rpm model (`G4_LBA_64bit_4T`: 3072 → 1536 sectors per
/// track, a seek curve up to 15.7 ms) and ublk-disksim's desktop profile `barracuda-2t` (fitted
/// to a real ST2000DM006).
impl HddConfig {
    /// A 7200 rpm 500 GB desktop CMR drive, the CMR disk of PORE's prototype (PORE §II-B, §V-C).
    /// Random 4 KiB read ≈ 0.2 + 8.5 + 4.17 + 0.03 ≈ 12.9 ms.
    pub fn cmr_7200_500g() -> Self {
        HddConfig {
            rpm: 7200,                   // PORE §II-B: "a typical 7200RPM 500GB CMR disk"
            capacity: ByteSize::gb(500), // PORE §II-B
            surfaces: 2,                 // one platter: 500 GB drives of that generation are single-platter
            outer_rate_mb_s: 150.0, // a 7200 rpm desktop drive as fitted by ublk-disksim (`barracuda-2t`)
            inner_rate_mb_s: 75.0,  // inner/outer 0.5: DiskSim's 4 TB model, 3072 → 1536 sectors per track
            track_to_track_ms: 1.0, // desktop track-to-track (ublk-disksim `barracuda-2t`)
            // Between the enterprise 7.4–8.2 ms (WD HC310, HGST 7K4000 datasheets) and the fitted
            // desktop 13 ms (ublk-disksim `barracuda-2t`).
            average_seek_ms: 8.5,
            full_stroke_ms: 16.0, // 7200 rpm full stroke 15–17 ms (DiskSim 4 TB model: 15.7 ms)
            command_overhead_ms: 0.2, // assumed
            write_settle_ms: 0.5, // WD HC310 datasheet: write − read seek 0.8 ms average, 0.1 track-to-track
            head_switch_ms: 0.5,  // assumed: a track skew of about 5% of a revolution (as in DiskSim layouts)
            cylinder_switch_ms: 1.0, // a single-cylinder seek: the track-to-track time
            write_cache: WriteCacheConfig::default(), // off: the papers measure with O_DIRECT (PORE §II-C)
        }
    }

    /// The mechanics of a Seagate ST5000AS0011-like 5 TB 5900 rpm archive drive: 5 TB of user
    /// space plus 25 GB for the persistent buffer at the outer diameter. Random 4 KiB read ≈ 0.3
    /// + 10 + 5.08 + 0.02 ≈ 15.4 ms.
    pub fn archive_5900_5tb() -> Self {
        HddConfig {
            rpm: 5900,                             // PORE §II-B, Skylight
            capacity: ByteSize(5_025_000_000_000), // + the PB: Skylight, "about 20–25 GB"
            surfaces: 8, // assumed: four platters (only the cylinder count depends on it)
            outer_rate_mb_s: 180.0, // Seagate Archive: about 150 MB/s average, 190 maximum [recalled]
            inner_rate_mb_s: 90.0, // inner/outer 0.5 (DiskSim's 4 TB model)
            track_to_track_ms: 1.0, // archive drives: "~1 ms" [recalled]
            average_seek_ms: 10.0, // archive drives: "about 8–12 ms" [recalled]
            full_stroke_ms: 20.0, // assumed: a slower actuator than the 7200 rpm drive's
            // Fitted to SAC Table 3's 3156 IOPS for 4 KB writes absorbed by the persistent
            // buffer: 1 / 3156 s = 317 µs per write, of which 22 µs is transfer.
            command_overhead_ms: 0.295,
            write_settle_ms: 0.5,                     // as the 7200 rpm drive
            head_switch_ms: 0.5,                      // as the 7200 rpm drive
            cylinder_switch_ms: 1.0,                  // the track-to-track time
            write_cache: WriteCacheConfig::default(), // off
        }
    }

    /// The mechanics of a Seagate ST8000AS0002-like 8 TB archive drive (the drive of the SAC
    /// paper, §6): [`HddConfig::archive_5900_5tb`] with the following.
    pub fn archive_5980_8tb() -> Self {
        HddConfig {
            rpm: 5980, // Seagate Archive HDD v2 8 TB product manual, as cited by SAC ref. [18]
            capacity: ByteSize(8_025_000_000_000), // 8 TB plus 25 GB of buffer space
            surfaces: 12, // assumed: six platters
            outer_rate_mb_s: 190.0, // Seagate Archive: "190 maximum" [recalled]
            inner_rate_mb_s: 95.0, // inner/outer 0.5
            ..HddConfig::archive_5900_5tb()
        }
    }

    /// PORE Fig. 3's CMR disk: the 7200 rpm mechanism of [`HddConfig::cmr_7200_500g`] with its
    /// write cache on. 8 KB random writes at 5.4 ms each at 56 GB are faster than a half
    /// revolution plus a seek and settle, so the drive must have been reordering cached writes.
    pub fn pore_cmr() -> Self {
        HddConfig {
            // 2 TB so that the figure's 1 TB written range fits: PORE §II-B names a 500 GB disk
            // yet plots it up to 1 TB; a 1 TB disk, where that range is the full stroke, misses
            // the 1 TB point by 21%. Fitted to Fig. 3, with the cache turned on.
            capacity: ByteSize::gb(2000),
            surfaces: 8, // 250 GB per surface, as the 500 GB disk's two
            write_cache: WriteCacheConfig {
                enabled: true, // fitted to PORE Fig. 3's CMR points
                // A 7200 rpm desktop drive's cache: "1 MB effective, NCQ 4" (ublk-disksim `barracuda-2t`).
                max_extents: 4,
                capacity: ByteSize::mib(1), // likewise
                ..WriteCacheConfig::default()
            },
            ..HddConfig::cmr_7200_500g()
        }
    }

    /// SAC Table 2's CMR disk, a 5 TB drive (SAC §1, Fig. 1: "a 5TB CMR"), with its write cache
    /// on: its random writes (588.8 KB/s) beat its random reads (247.5 KB/s). The reads over a
    /// 10 GB range cost 16.5 ms, as much as full-stroke reads on a desktop drive, so the seek
    /// curve here is an effective one with slow short seeks; see docs/drive-models.md,
    /// "Calibrated profiles".
    pub fn sac_cmr() -> Self {
        HddConfig {
            capacity: ByteSize::gb(5000), // SAC §1, Fig. 1: "a 5TB CMR"
            track_to_track_ms: 9.5,       // fitted to SAC Table 2's random reads
            average_seek_ms: 12.5,        // fitted to SAC Table 2's random reads
            full_stroke_ms: 18.0,         // fitted to SAC Table 2's random reads
            // 768 extents (3 MiB of 4 KB writes in the default 16 MiB): fitted to SAC Table 2's
            // random writes.
            write_cache: WriteCacheConfig { enabled: true, max_extents: 768, ..WriteCacheConfig::default() },
            ..HddConfig::archive_5900_5tb()
        }
    }

    /// The ST8000AS0002 mechanics as SAC measured them: [`HddConfig::archive_5980_8tb`] with
    /// room for the PB and an effective short seek.
    pub fn st8000as0002() -> Self {
        HddConfig {
            capacity: ByteSize(8_031_000_000_000), // 8 TB + room for SAC Table 3's 30.3 GB PB
            // Fitted to SAC Table 2's random reads over 10 GB (373.7 KB/s, 11 ms each: 6 ms
            // beyond the mean rotational wait).
            track_to_track_ms: 5.0,
            average_seek_ms: 10.5,
            full_stroke_ms: 20.0,
            ..HddConfig::archive_5980_8tb()
        }
    }

    /// A Seagate Cheetah 15K.5 146 GB (ST3146855), the disk DiskSim models and SMaRT §5.2
    /// simulates its three schemes on ("the newest and largest validated disk model that is
    /// available to DiskSim ... 146 GB"). docs/drive-models.md, "Cheetah 15K.5", has the full
    /// table; "DiskSim" is its validated model (`valid/Seagate-Cheetah15k5.parv` and
    /// `.diskspecs`, read in a public copy of DiskSim 4.0, bootbool/disksim).
    pub fn cheetah_15k5() -> Self {
        HddConfig {
            rpm: 15_000, // the drive's name and datasheet; one revolution is 4 ms
            // 286,749,488 sectors of 512 B = 146,815,737,856 B: DiskSim ("Storage capacity per
            // device = 286749487") and the datasheet's 146.8 GB.
            capacity: ByteSize(CHEETAH_15K5_SECTORS * 512),
            // Two discs, four heads (datasheet [recalled, unverified]); a third-party
            // DiskSim-derived SMR simulator's Cheetah 15K.5 table has "4 tracks per cylinder"
            // and 72,171 cylinders [unverified source].
            surfaces: 4,
            // The media rates of that table's outermost (1200 sectors per track) and innermost
            // (720) zones at 4 ms per revolution (1200 × 512 B / 4 ms); the datasheet's
            // sustained 73–125 MB/s [recalled, unverified] is these less the switch time and
            // formatting.
            outer_rate_mb_s: 153.6,
            inner_rate_mb_s: 92.16,
            track_to_track_ms: 0.2, // datasheet read track-to-track [recalled, unverified]
            average_seek_ms: 3.5,   // datasheet read average [recalled, unverified]
            full_stroke_ms: 7.4,    // [unverified: no source read gives it]
            // DiskSim's miss overheads are 0 / 0.106 / 0.629 / 0.228 ms (read after read / read
            // after write / write after read / write after write); 0.2 ms is close to the
            // write-after-write value that dominates SMaRT's write-heavy traces (85–91% writes,
            // SMaRT Table 1).
            command_overhead_ms: 0.2,
            write_settle_ms: 0.5, // datasheet write − read average seek, 4.0 − 3.5 ms [recalled, unverified]
            // The skews of DiskSim's Cheetah 15K.5 layout as quoted in a third-party README
            // (0.1417 revolution from track to track on one surface, about 0.19 revolution at a
            // surface change) [unverified reading]; they give a sustained 130 MB/s at the outer
            // diameter against the datasheet's 125.
            head_switch_ms: 0.76,
            cylinder_switch_ms: 0.57,
            write_cache: WriteCacheConfig::default(), // off: SMaRT §5.2 does not say
        }
    }
}

/// The SSD profiles' devices, of the class both papers used (PORE: "a 240GB PCIe SSD"; SAC: "an
/// 800GB PCIe SSD").
impl SsdConfig {
    /// Intel DC P4500 2 TB NVMe (Lenovo Press product guide for the Intel P4500, "Technical
    /// specifications" table).
    pub fn nvme() -> Self {
        SsdConfig {
            read_latency_us: 85.0,        // random 4 KB read latency
            write_latency_us: 20.0,       // random 4 KB write latency (the drive's DRAM absorbs it)
            read_bandwidth_mb_s: 3200.0,  // sequential read 3.2 GB/s
            write_bandwidth_mb_s: 1050.0, // sequential write 1.05 GB/s
        }
    }

    /// Intel DC S4500 SATA (its product specification).
    pub fn sata() -> Self {
        SsdConfig {
            read_latency_us: 110.0,      // random read latency, typical
            write_latency_us: 52.0,      // random write latency, typical
            read_bandwidth_mb_s: 500.0,  // sustained sequential read
            write_bandwidth_mb_s: 490.0, // sustained sequential write
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BuildContext;

    #[test]
    fn every_profile_is_listed_once_validates_and_builds() {
        assert_eq!(profile_names(), PROFILES.iter().map(|p| p.name).collect::<Vec<_>>());
        let ctx = BuildContext { written_range: ByteSize::gb(10), accessed_range: ByteSize::gb(12) };
        for (i, name) in profile_names().iter().enumerate() {
            assert!(!profile_names()[..i].contains(name), "{name} twice");
            let cfg = profile(name).unwrap_or_else(|| panic!("{name}"));
            cfg.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            let d = cfg.build(&ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(d.kind(), cfg.model());
        }
        assert_eq!(ssd_profile_names(), ["nvme", "sata"]);
        assert_eq!(ssd_profile("nvme"), Some(SsdConfig::default()));
        for name in ssd_profile_names() {
            ssd_profile(name).unwrap().validate().unwrap();
        }
        assert!(profile("nope").is_none() && ssd_profile("nope").is_none());
        let e = DriveConfig::from_profile("nope").unwrap_err().to_string();
        assert!(e.contains("pore-emulator"), "{e}");
    }
}
