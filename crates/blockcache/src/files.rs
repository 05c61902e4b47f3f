//! Caches kept in files or on block devices, as the CLI and Python use them: a cache device
//! (a [`FileBlock`]: a file or a block device such as an SSD partition) in front of a backing
//! device that is a file, a block device, or a translation layer's file (`shingled stl format`,
//! recognised by its magic and opened as a [`Stl`]).

use crate::device::open::superblock;
use crate::layout::MAGIC;
use crate::{CacheOptions, CachedDevice, Inspection};
use shingled_stl::invalid;
use shingled_stl::{BlockDevice, FileBlock, Result, Stl, BLOCK};
use std::path::{Path, PathBuf};

/// Any backing device.
pub type AnyDevice = Box<dyn BlockDevice + Send>;

/// A cache device in a file (or on a block device) over any backing device.
pub type FileCache = CachedDevice<FileBlock, AnyDevice>;

/// Opens `path` as a backing device: a translation layer's file when it starts with one's
/// magic, otherwise the file or block device itself.
pub fn open_device(path: &Path) -> Result<AnyDevice> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_file()) && shingled_stl::detect(path).is_ok() {
        return Ok(Box::new(Stl::open(path)?));
    }
    Ok(Box::new(FileBlock::open(path)?))
}

/// Whether `dev` holds a cache that is not detached (a damaged one counts: its magic is there).
fn holds_a_cache(dev: &mut FileBlock) -> bool {
    let mut b = vec![0u8; BLOCK];
    if dev.read(0, &mut b).is_err() || &b[..MAGIC.len()] != MAGIC {
        return false;
    }
    !crate::inspect(dev).is_ok_and(|i| i.state == "detached")
}

/// Formats `cache` as a cache of `backing`. A missing `cache` file is created with `size`
/// bytes; an existing one (or a block device) is used whole, and refused when it holds an
/// attached cache unless `force` (its dirty blocks would be lost). The backing device's path is kept
/// in the superblock, so [`open`] finds it.
pub fn create(
    cache: &Path,
    backing: &Path,
    size: Option<u64>,
    opts: &CacheOptions,
    force: bool,
) -> Result<FileCache> {
    let (dev, backing_dev, opts, created) = prepare(cache, backing, size, opts, force)?;
    let r = CachedDevice::format(dev, backing_dev, &opts);
    if r.is_err() && created {
        // a file this call created is not left behind half made
        let _ = std::fs::remove_file(cache);
    }
    r
}

/// What [`format`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Formatted {
    /// Where things are.
    pub layout: crate::layout::Layout,
    /// Blocks the policy manages.
    pub capacity: u32,
    /// Backing device capacity in blocks.
    pub backing_blocks: u64,
    /// The policy's name.
    pub policy: &'static str,
    /// Mode, policy and their parameters.
    pub setup: crate::CacheSetup,
    /// What serving it costs in memory.
    pub cost: crate::memory::ServingCost,
}

/// [`create`] without opening the new cache: the format is written in bounded memory (a chunk
/// of record blocks), whatever the cache's size; the policy is built only at a small capacity
/// to check its parameters. A cache whose serving index would not fit this machine's memory is
/// refused, as [`create`] and [`open`] refuse it.
pub fn format(
    cache: &Path,
    backing: &Path,
    size: Option<u64>,
    opts: &CacheOptions,
    force: bool,
) -> Result<Formatted> {
    let (mut dev, backing_dev, opts, created) = prepare(cache, backing, size, opts, force)?;
    let r = (|| {
        let sb =
            crate::device::open::plan_format(dev.capacity_blocks(), backing_dev.capacity_blocks(), &opts)?;
        let cost = crate::memory::serving_cost(&sb.setup, sb.backing_blocks, sb.layout.slots, sb.capacity)?;
        crate::device::open::write_format(&mut dev, &sb)?;
        Ok(Formatted {
            layout: sb.layout,
            capacity: sb.capacity,
            backing_blocks: sb.backing_blocks,
            policy: sb.setup.policy.name(),
            setup: sb.setup,
            cost,
        })
    })();
    if r.is_err() && created {
        let _ = std::fs::remove_file(cache);
    }
    r
}

/// The devices and options of a format: the backing device opened, the cache device opened or
/// created (and whether this call created it), the backing path recorded in the options.
fn prepare(
    cache: &Path,
    backing: &Path,
    size: Option<u64>,
    opts: &CacheOptions,
    force: bool,
) -> Result<(FileBlock, AnyDevice, CacheOptions, bool)> {
    let backing_dev = open_device(backing)?;
    let existed = cache.exists();
    let dev = if existed {
        let mut d = FileBlock::open(cache)?;
        if holds_a_cache(&mut d) && !force {
            return Err(invalid(
                "cache device",
                cache.display(),
                "already holds an attached shingled block cache (its dirty blocks would be lost): detach it \
                 first, or force the format",
            ));
        }
        d
    } else {
        let Some(bytes) = size else {
            return Err(invalid(
                "cache device",
                cache.display(),
                "does not exist; give its size to create it",
            ));
        };
        FileBlock::create(cache, bytes)?
    };
    let created = !existed;
    let mut opts = opts.clone();
    let abs = std::fs::canonicalize(backing).unwrap_or_else(|_| backing.to_path_buf());
    opts.setup.backing_path = Some(abs.to_string_lossy().into_owned());
    Ok((dev, backing_dev, opts, created))
}

/// The backing device's path as the superblock of the cache at `cache` records it.
pub fn recorded_backing(cache: &Path) -> Result<Option<PathBuf>> {
    let mut dev = FileBlock::open(cache)?;
    Ok(superblock(&mut dev)?.setup.backing_path.map(PathBuf::from))
}

/// Opens (and after a crash recovers) the cache at `cache` over `backing`, or over the backing
/// device its superblock names.
pub fn open(cache: &Path, backing: Option<&Path>) -> Result<FileCache> {
    let path = match backing {
        Some(p) => p.to_path_buf(),
        None => recorded_backing(cache)?.ok_or_else(|| {
            invalid(
                "cache device",
                cache.display(),
                "does not record its backing device; name the backing device",
            )
        })?,
    };
    let b = open_device(&path)?;
    CachedDevice::open(FileBlock::open(cache)?, b)
}

/// Reads the metadata of the cache at `cache` without writing anything.
pub fn inspect_file(cache: &Path) -> Result<Inspection> {
    crate::inspect(&mut FileBlock::open(cache)?)
}
