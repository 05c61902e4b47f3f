//! Caches kept in files or on block devices, as the CLI and Python use them: a cache device
//! (a [`FileBlock`]: a file or a block device such as an SSD partition) in front of a backing
//! device that is a file, a block device, or a translation layer's file (`shingled stl format`,
//! recognised by its magic and opened as a [`Stl`]).

use crate::device::open::superblock;
use crate::identity::{self, BackingId};
use crate::layout::{Superblock, MAGIC};
use crate::{CacheOptions, CachedDevice, Inspection};
use shingled_stl::invalid;
use shingled_stl::{BlockDevice, FileBlock, Result, Stl, BLOCK};
use shingled_zoned::lock::FileId;
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

fn io_err(what: String, source: std::io::Error) -> shingled_stl::StlError {
    shingled_stl::StlError::Io { what, source }
}

/// What the first bytes of `dev` say it holds ([`identity::contents`]), `None` for zeros or a
/// detached cache (whose data all went back to its backing device).
fn holds(dev: &mut FileBlock) -> Result<Option<String>> {
    let blocks = (identity::PROBE_BYTES / BLOCK).min(dev.capacity_blocks() as usize);
    let mut head = vec![0u8; blocks * BLOCK];
    dev.read(0, &mut head)?;
    if head.starts_with(MAGIC) {
        return Ok(match crate::inspect(dev) {
            Ok(i) if i.state == "detached" => None,
            Ok(i) => Some(format!(
                "an attached shingled block cache ({} cached blocks, {} dirty: they would be lost; detach it first)",
                i.cached_blocks, i.dirty_blocks
            )),
            Err(_) => Some("a damaged shingled block cache".to_string()),
        });
    }
    Ok(identity::contents(&head))
}

/// Formats `cache` as a cache of `backing`. A missing `cache` file is created with `size`
/// bytes; an existing one (or a block device) is used whole. An existing device that holds
/// anything — a cache that is not detached, one of our other formats, a file system, a
/// partition table, or any non-zero byte in its first MiB — is refused unless `force`, as
/// `mkfs` refuses; so is a backing device that is the cache device itself (by inode or device
/// number, whatever the paths) or an attached cache (the two arguments swapped). Both devices
/// are locked (`FileBlock::open`). The backing device's path and identity are kept in the
/// superblock, so [`open`] finds it and refuses another device in its place.
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
    if FileId::same(cache, backing) {
        return Err(invalid(
            "backing device",
            backing.display(),
            format!("is the cache device {} itself (the same file or device)", cache.display()),
        ));
    }
    let backing_dev = open_device(backing)?;
    if let Some(what) = backing_holds_a_cache(backing)? {
        return Err(invalid(
            "backing device",
            backing.display(),
            format!("holds {what}: were the cache device and --backing swapped?"),
        ));
    }
    let backing_id = BackingId::of(backing).map_err(|e| io_err(format!("stat {}", backing.display()), e))?;
    let existed = cache.exists();
    let dev = if existed {
        let mut d = FileBlock::open(cache)?;
        if let Some(what) = holds(&mut d)? {
            if !force {
                return Err(invalid(
                    "cache device",
                    cache.display(),
                    format!("already holds {what}; formatting would destroy it (force the format to do so anyway)"),
                ));
            }
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
    opts.setup.backing_id = Some(backing_id);
    Ok((dev, backing_dev, opts, created))
}

/// `Some(description)` when the file at `backing` holds a cache that is not detached (read
/// without a lock: `open_device` holds the backing device's already).
fn backing_holds_a_cache(backing: &Path) -> Result<Option<String>> {
    use std::os::unix::fs::FileExt;
    if !std::fs::metadata(backing).is_ok_and(|m| m.is_file()) {
        return Ok(None); // a block device cache would show by its magic; files are what gets swapped
    }
    let mut head = vec![0u8; BLOCK];
    let f = std::fs::File::open(backing).map_err(|e| io_err(format!("open {}", backing.display()), e))?;
    let n = f.read_at(&mut head, 0).map_err(|e| io_err(format!("read {}", backing.display()), e))?;
    if n < MAGIC.len() || &head[..MAGIC.len()] != MAGIC {
        return Ok(None);
    }
    Ok(match Superblock::decode(&backing.display().to_string(), &head) {
        Ok(sb) if sb.state == crate::layout::State::Detached => None,
        Ok(_) => Some("an attached shingled block cache".to_string()),
        Err(_) => Some("a damaged shingled block cache".to_string()),
    })
}

/// The backing device's path as the superblock of the cache at `cache` records it.
pub fn recorded_backing(cache: &Path) -> Result<Option<PathBuf>> {
    let mut dev = FileBlock::open_read_only(cache)?;
    Ok(superblock(&mut dev)?.setup.backing_path.map(PathBuf::from))
}

/// Opens (and after a crash recovers) the cache at `cache` over `backing`, or over the backing
/// device its superblock names. Both are locked for as long as the cache is open. The backing
/// device must be the one the cache was created over ([`BackingId`]); `moved` accepts another
/// (the device was moved, renumbered or restored on purpose) and records its path and
/// identity in the superblock.
pub fn open(cache: &Path, backing: Option<&Path>, moved: bool) -> Result<FileCache> {
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
    if FileId::same(cache, &path) {
        return Err(invalid(
            "backing device",
            path.display(),
            format!("is the cache device {} itself (the same file or device)", cache.display()),
        ));
    }
    let mut c = FileBlock::open(cache)?;
    let b = open_device(&path)?;
    let mut sb = superblock(&mut c)?;
    let now = BackingId::of(&path).map_err(|e| io_err(format!("stat {}", path.display()), e))?;
    let recorded = sb.setup.backing_id.clone();
    let abs = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone()).to_string_lossy().into_owned();
    let same = recorded.as_ref().is_none_or(|r| r.matches(&now));
    // The same device found under another path (renamed), or another accepted: recorded anew.
    let record = (same && recorded.is_some() && sb.setup.backing_path.as_deref() != Some(abs.as_str()))
        || (moved && recorded.as_ref() != Some(&now));
    if !same || record {
        if !same && !moved {
            return Err(invalid(
                "backing device",
                path.display(),
                format!(
                    "is not the device this cache was created over ({}, {}; this is {now}): the cache's dirty \
                     blocks belong to that one. If it was moved or copied there on purpose, accept it with \
                     --backing-moved (backing_moved=True in Python)",
                    sb.setup.backing_path.as_deref().unwrap_or("path not recorded"),
                    recorded.expect("checked above"),
                ),
            ));
        }
        sb.setup.backing_path = Some(abs);
        sb.setup.backing_id = Some(now);
        c.write(0, &sb.encode()?)?;
        c.flush()?;
    }
    CachedDevice::open(c, b)
}

/// Reads the metadata of the cache at `cache` without writing anything (a shared lock: refused
/// while the cache is served or otherwise open for writing).
pub fn inspect_file(cache: &Path) -> Result<Inspection> {
    crate::inspect(&mut FileBlock::open_read_only(cache)?)
}
