//! `shingled stl serve FILE --ublk`: a translation layer as a block device /dev/ublkbN, through
//! the kernel's ublk driver (the `libublk` crate; cargo feature `ublk`).
//!
//! One hardware queue, served by one thread that carries out each request on the layer
//! synchronously. The device has 4 KiB logical blocks, the layer's block, so every request is
//! whole blocks: read, write (with FUA: write, then flush), flush, discard, and write-zeroes
//! (a discard: discarded blocks read as zeros). A supervisor thread runs the layer's
//! background work (SMaRT's GC, dm-zoned's reclaim) once the device has been idle for a while,
//! and on SIGTERM, SIGINT or SIGHUP stops the device; the queue then ends, the layer is
//! flushed and the device removed. A second signal exits at once (serving again recovers).

use crate::served::Served;
use anyhow::{bail, Context, Result};
use libublk::ctrl::{UblkCtrl, UblkCtrlBuilder};
use libublk::io::{UblkDev, UblkQueue};
use libublk::{sys, BufDesc, BufDescList, UblkError, UblkFlags, UblkIORes};
use shingled_core::ByteSize;
use shingled_stl::{StlError, BLOCK};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The ublk driver's control device: it exists once `ublk_drv` is loaded.
pub const CONTROL: &str = "/dev/ublk-control";

/// Requests in flight on the queue.
const DEPTH: u16 = 32;
/// The largest read or write (bytes): each request slot has a buffer of this size.
const MAX_IO: u32 = 512 << 10;
/// The largest discard or write-zeroes request (bytes).
const MAX_DISCARD: u32 = 1 << 30;
/// How often the supervisor looks at the signals and the idle time.
const TICK: Duration = Duration::from_millis(100);

/// Fails with what to do where the kernel has no ublk driver.
pub fn available() -> Result<()> {
    if Path::new(CONTROL).exists() {
        return Ok(());
    }
    bail!(
        "cannot serve over ublk here: {CONTROL} does not exist (load the driver with \
         `modprobe ublk_drv`; it needs Linux ≥ 6.0 built with CONFIG_BLK_DEV_UBLK)"
    )
}

/// The layer and when it last served a request: shared by the queue and the supervisor.
struct Shared<D> {
    stl: D,
    last_io: Instant,
}

/// A libublk error with its errno spelled out (libublk's own text for those is "other failure").
fn ublk_error(e: UblkError) -> anyhow::Error {
    match e {
        UblkError::OtherError(n) | UblkError::UringIOError(n) if n < 0 => {
            io::Error::from_raw_os_error(-n).into()
        }
        other => other.into(),
    }
}

/// Serves `stl` (opened from `file` since `t0`) as /dev/ublkbN until a signal; prints the
/// device path on stdout when it is up, and the layer's statistics as JSON at the end.
pub fn serve<D: Served>(stl: D, file: &Path, t0: Instant, idle: Duration) -> Result<()> {
    let kind = stl.label();
    let size = stl.capacity_blocks() * BLOCK as u64;
    let shared = Arc::new(Mutex::new(Shared { stl, last_io: Instant::now() }));
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT, signal_hook::consts::SIGHUP] {
        // A second signal exits at once (exit status 1), in case stopping hangs.
        signal_hook::flag::register_conditional_shutdown(sig, 1, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
            .context("installing the signal handlers")?;
    }
    let ctrl = UblkCtrlBuilder::default()
        .name("shingled")
        .nr_queues(1)
        .depth(DEPTH)
        .io_buf_bytes(MAX_IO)
        .dev_flags(UblkFlags::UBLK_DEV_F_ADD_DEV)
        .build()
        .map_err(ublk_error)
        .with_context(|| format!("adding a ublk device through {CONTROL} (needs root)"))?;
    let started = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let supervisor = {
        let (id, dev) = (ctrl.dev_info().dev_id, ctrl.get_bdev_path());
        let shared = Arc::clone(&shared);
        let (stop, started, done) = (Arc::clone(&stop), Arc::clone(&started), Arc::clone(&done));
        std::thread::spawn(move || supervise(id, &dev, &shared, &stop, &started, &done, idle))
    };
    let on_start = {
        let started = Arc::clone(&started);
        let file = file.display().to_string();
        move |ctrl: &UblkCtrl| {
            let dev = ctrl.get_bdev_path();
            eprintln!(
                "serving {file} ({kind}, {} = {size} bytes, opened in {:.2} s) as {dev}; SIGTERM or \
                 Ctrl-C stops",
                ByteSize(size),
                t0.elapsed().as_secs_f64()
            );
            println!("{dev}");
            started.store(true, Ordering::Relaxed);
        }
    };
    let queue_shared = Arc::clone(&shared);
    let ran = ctrl.run_target(
        |dev: &mut UblkDev| {
            set_params(dev, size);
            Ok(())
        },
        move |qid, dev: &UblkDev| serve_queue(qid, dev, &queue_shared),
        on_start,
    );
    done.store(true, Ordering::Relaxed);
    if supervisor.join().is_err() {
        eprintln!("warning: the supervisor thread panicked");
    }
    if ran.is_err() {
        // Not started: stopping cancels the queue's pending fetches, so that its thread lets go
        // of the device and removing it does not wait forever.
        let _ = ctrl.kill_dev();
    }
    // Removes the device.
    drop(ctrl);
    let mut s = shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let flushed = s.stl.flush();
    ran.map_err(ublk_error).context("serving the ublk device")?;
    flushed.with_context(|| format!("flushing {}", file.display()))?;
    eprintln!("flushed and closed {}", file.display());
    println!("{}", s.stl.stats_json());
    Ok(())
}

/// The device's parameters: `size` bytes in 4 KiB logical and physical blocks, a volatile
/// write cache with FUA, discard and write-zeroes in whole blocks.
fn set_params(dev: &mut UblkDev, size: u64) {
    let block_shift = BLOCK.trailing_zeros() as u8;
    dev.tgt.dev_size = size;
    dev.tgt.params = sys::ublk_params {
        types: sys::UBLK_PARAM_TYPE_BASIC | sys::UBLK_PARAM_TYPE_DISCARD,
        basic: sys::ublk_param_basic {
            attrs: sys::UBLK_ATTR_VOLATILE_CACHE | sys::UBLK_ATTR_FUA,
            logical_bs_shift: block_shift,
            physical_bs_shift: block_shift,
            io_opt_shift: block_shift,
            io_min_shift: block_shift,
            max_sectors: dev.dev_info.max_io_buf_bytes >> 9,
            dev_sectors: size >> 9,
            ..Default::default()
        },
        discard: sys::ublk_param_discard {
            discard_granularity: BLOCK as u32,
            max_discard_sectors: MAX_DISCARD >> 9,
            max_write_zeroes_sectors: MAX_DISCARD >> 9,
            max_discard_segments: 1,
            ..Default::default()
        },
        ..Default::default()
    };
}

/// Stops device `id` (`dev`) on a signal once it is up, and runs the layer's background work
/// while the device is idle, until the queue has ended (`done`).
fn supervise<D: Served>(
    id: u32,
    dev: &str,
    shared: &Mutex<Shared<D>>,
    stop: &AtomicBool,
    started: &AtomicBool,
    done: &AtomicBool,
    idle: Duration,
) {
    let mut stopping = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        if stopping {
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            if started.load(Ordering::Relaxed) {
                stopping = true;
                eprintln!("stopping: removing {dev}");
                // libublk's control ring is per thread: this thread needs a control of its own.
                let stopped = i32::try_from(id)
                    .map_err(|_| UblkError::InvalidVal)
                    .and_then(UblkCtrl::new_simple)
                    .and_then(|c| c.kill_dev());
                if let Err(e) = stopped {
                    eprintln!("stopping the ublk device failed: {} (a second signal exits)", ublk_error(e));
                }
            }
            continue;
        }
        let Ok(mut s) = shared.lock() else { continue };
        if s.last_io.elapsed() >= idle {
            if let Err(e) = s.stl.idle(TICK) {
                eprintln!("background work failed: {e}");
            }
        }
    }
}

/// The queue thread: one buffer per request slot, each request done on the layer at once.
fn serve_queue<D: Served>(qid: u16, dev: &UblkDev, shared: &Mutex<Shared<D>>) {
    let mut bufs = dev.alloc_queue_io_bufs();
    let queue = match UblkQueue::new(qid, dev)
        .and_then(|q| q.submit_fetch_commands_unified(BufDescList::Slices(Some(&bufs))))
    {
        Ok(q) => q,
        Err(e) => {
            eprintln!("ublk queue {qid}: {}", ublk_error(e));
            return;
        }
    };
    queue.wait_and_handle_io(|q, tag, _| {
        let buf = &mut bufs[usize::from(tag)];
        let res = handle(q.get_iod(tag), buf.as_mut_slice(), shared);
        if let Err(e) =
            q.complete_io_cmd_unified(tag, BufDesc::Slice(buf.as_slice()), Ok(UblkIORes::Result(res)))
        {
            eprintln!("ublk queue {qid}: completing request {tag}: {}", ublk_error(e));
        }
    });
}

/// Carries out one request; returns the bytes read or written, 0, or a negative errno.
fn handle<D: Served>(iod: &sys::ublksrv_io_desc, buf: &mut [u8], shared: &Mutex<Shared<D>>) -> i32 {
    let op = iod.op_flags & 0xff;
    let offset = iod.start_sector << 9;
    let len = u64::from(iod.nr_sectors) << 9;
    let Ok(mut s) = shared.lock() else { return -libc::EIO };
    s.last_io = Instant::now();
    let capacity = s.stl.capacity_blocks() * BLOCK as u64;
    let block = BLOCK as u64;
    if !offset.is_multiple_of(block) || !len.is_multiple_of(block) || offset.saturating_add(len) > capacity {
        eprintln!("ublk: op {op}: {len} bytes at {offset}: not whole blocks inside {capacity} bytes");
        return -libc::EINVAL;
    }
    let lba = offset / block;
    let data = |buf: &mut [u8]| -> Option<usize> { usize::try_from(len).ok().filter(|&n| n <= buf.len()) };
    let (what, done) = match op {
        sys::UBLK_IO_OP_READ => {
            let Some(n) = data(buf) else { return -libc::EINVAL };
            ("read", s.stl.read(lba, &mut buf[..n]).map(|()| n as i32))
        }
        sys::UBLK_IO_OP_WRITE => {
            let Some(n) = data(buf) else { return -libc::EINVAL };
            let mut r = s.stl.write(lba, &buf[..n]);
            if r.is_ok() && iod.op_flags & sys::UBLK_IO_F_FUA != 0 {
                r = s.stl.flush();
            }
            ("write", r.map(|()| n as i32))
        }
        sys::UBLK_IO_OP_FLUSH => ("flush", s.stl.flush().map(|()| 0)),
        sys::UBLK_IO_OP_DISCARD | sys::UBLK_IO_OP_WRITE_ZEROES => {
            ("discard", s.stl.discard(lba, len / block).map(|()| 0))
        }
        _ => return -libc::EOPNOTSUPP,
    };
    done.unwrap_or_else(|e| {
        eprintln!("ublk: {what} of {len} bytes at {offset}: {e}");
        -errno(&e)
    })
}

/// The errno a failed request completes with.
fn errno(e: &StlError) -> i32 {
    match e {
        StlError::NoSpace { .. } => libc::ENOSPC,
        StlError::Range { .. } | StlError::Invalid { .. } => libc::EINVAL,
        StlError::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
        _ => libc::EIO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shingled_stl::{BlockDevice, SmartFileSpec, SmartStlConfig, Stl};

    fn iod(op: u32, start_sector: u64, nr_sectors: u32) -> sys::ublksrv_io_desc {
        sys::ublksrv_io_desc { op_flags: op, nr_sectors, start_sector, addr: 0 }
    }

    /// Requests as the driver hands them over, without a kernel: each op on a real layer.
    #[test]
    fn requests_reach_the_layer() {
        let dir = tempfile::tempdir().unwrap();
        let spec = SmartFileSpec {
            size: ByteSize(64 << 20),
            track_bytes: 256 << 10,
            zones: 2,
            head_width: 2,
            config: SmartStlConfig::default(),
        };
        let stl = Stl::format_smart(&dir.path().join("smart.img"), &spec).unwrap();
        let capacity = stl.capacity_blocks() * BLOCK as u64;
        let shared = Mutex::new(Shared { stl, last_io: Instant::now() });
        let mut buf = vec![0u8; MAX_IO as usize];
        let data: Vec<u8> = (0..2 * BLOCK).map(|i| (i % 251) as u8 + 1).collect();

        // Two blocks from block 1 (sector 8), then read back.
        buf[..data.len()].copy_from_slice(&data);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_WRITE, 8, 16), &mut buf, &shared), 2 * BLOCK as i32);
        buf.fill(0);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_READ, 8, 16), &mut buf, &shared), 2 * BLOCK as i32);
        assert_eq!(&buf[..data.len()], &data[..]);
        // FUA, flush.
        let fua = sys::UBLK_IO_OP_WRITE | sys::UBLK_IO_F_FUA;
        assert_eq!(handle(&iod(fua, 8, 16), &mut buf, &shared), 2 * BLOCK as i32);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_FLUSH, 0, 0), &mut buf, &shared), 0);
        // Discard the first block and write-zeroes the second: both read as zeros.
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_DISCARD, 8, 8), &mut buf, &shared), 0);
        buf.fill(0xff);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_READ, 8, 16), &mut buf, &shared), 2 * BLOCK as i32);
        assert!(buf[..BLOCK].iter().all(|&b| b == 0));
        assert_eq!(&buf[BLOCK..2 * BLOCK], &data[BLOCK..]);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_WRITE_ZEROES, 16, 8), &mut buf, &shared), 0);
        buf.fill(0xff);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_READ, 16, 8), &mut buf, &shared), BLOCK as i32);
        assert!(buf[..BLOCK].iter().all(|&b| b == 0));
        // The last block, and what the driver should never send.
        let last = (capacity >> 9) - 8;
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_READ, last, 8), &mut buf, &shared), BLOCK as i32);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_READ, last + 8, 8), &mut buf, &shared), -libc::EINVAL);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_READ, 1, 8), &mut buf, &shared), -libc::EINVAL);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_READ, 0, 4), &mut buf, &shared), -libc::EINVAL);
        let too_big = (MAX_IO >> 9) + 8;
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_WRITE, 0, too_big), &mut buf, &shared), -libc::EINVAL);
        assert_eq!(handle(&iod(sys::UBLK_IO_OP_ZONE_OPEN, 0, 8), &mut buf, &shared), -libc::EOPNOTSUPP);
    }
}
