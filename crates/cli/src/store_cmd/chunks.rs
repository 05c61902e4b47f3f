//! `store get`, `ls` and `rm`.

use super::ids::{parts_of, resolve_id, Part};
use super::{
    close, front_on, list_paths, open_front, open_readers, stream_name, with_paths, GetArgs, LsArgs, RmArgs,
};
use anyhow::{anyhow, bail, Context, Result};
use shingled_store::ChunkPiece;
use std::io::{IoSlice, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex};

/// User bytes per piece `get` reads (one record of the default 1 MiB): a piece stays in the
/// reading core's caches between the kernel's copy into it and its CRCs (8 MiB pieces measured
/// 1.6× the system time).
const PIECE: u64 = 1 << 20;
/// Readers `get` runs, each on its own handle of the store, taking pieces in turn.
const READERS: usize = 2;
/// Most buffers per vectored write (Linux's `IOV_MAX`).
const IOV_MAX: usize = 1024;

pub(super) fn get(a: GetArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, spares, supers) = open_readers(&a.devices, READERS - 1)?;
    let id = resolve_id(&front, &a.id, &paths)?;
    let (_, c) = front.chunk(id).ok_or_else(|| anyhow!("no chunk {id} in {}", list_paths(&paths)))?;
    // A file stored in parts is its parts, joined.
    let pieces: Vec<Part> = match parts_of(&mut front, id, &paths)? {
        Some(parts) => {
            for (p, n) in &parts {
                match front.chunk(*p) {
                    Some((_, pc)) if pc.len == *n => {}
                    Some((_, pc)) => {
                        bail!("part {p} of chunk {id} holds {} bytes, the manifest says {n}", pc.len)
                    }
                    None => bail!("part {p} of chunk {id} is missing from {}", list_paths(&paths)),
                }
            }
            parts
        }
        None => vec![(id, c.len)],
    };
    // `-o FILE` through the one output writer (atomic for a file, written through for a
    // device or FIFO); errors name it
    let mut file = match &a.out {
        Some(p) => Some(shingled_core::output::Output::create(p).map_err(|e| anyhow::anyhow!("-o {e}"))?),
        None => None,
    };
    let what = match &a.out {
        Some(p) => format!("writing {}", p.display()),
        None => "writing the chunk's bytes to standard output".to_string(),
    };
    {
        // Standard output as a file of its own (a duplicate descriptor): written with vectored
        // writes straight from the pieces, not through the line-buffered `Stdout`.
        let mut stdout;
        let out: &mut (dyn Write + Send) = match file.as_mut() {
            Some(f) => f,
            None => {
                let fd = std::io::stdout().as_fd().try_clone_to_owned().with_context(|| what.clone())?;
                stdout = std::fs::File::from(fd);
                &mut stdout
            }
        };
        // The pieces to read, in order.
        let mut plan = Vec::new();
        for &(part, len) in &pieces {
            let drive = front.chunk(part).map_or(0, |(d, _)| d);
            plan.extend((0..len.div_ceil(PIECE)).map(|k| {
                let pos = k * PIECE;
                (part, pos, (len - pos).min(PIECE), drive)
            }));
        }
        // More readers, each a read-only store on the spare handles, where there are pieces
        // for them (one reader per piece at most).
        let mut readers = vec![front];
        for devs in spares.into_iter().take(plan.len().saturating_sub(1)) {
            readers.push(front_on(devs, &supers, &paths, true, false)?);
        }
        copy_out(readers, &plan, &paths, out, &what)?;
    }
    if let Some(f) = file {
        f.commit().map_err(|e| anyhow::anyhow!("writing {e}"))?;
    }
    Ok(())
}

/// One piece of a chunk to copy out: part, offset in it, length, and the drive holding it.
type Piece = (shingled_store::ChunkId, u64, u64, usize);

/// Writes the pieces of `plan` to `out`, in order. Reader `k` of the `readers` (each its own
/// handle on the store) takes pieces `k`, `k + readers`, …: it reads a piece into its own
/// reused buffer, verifies it (every slice's CRC and footer) on the same core while the bytes
/// are in its caches, and writes it once every piece before it is written. So the kernel's
/// copies and the CRCs of consecutive pieces run on all cores at once, and no byte is copied
/// in user space. A corrupt or unreadable piece stops the copy before any of its bytes is
/// written; of several failing pieces, the first in the chunk is reported.
fn copy_out(
    readers: Vec<super::Front>,
    plan: &[Piece],
    paths: &[PathBuf],
    out: &mut (dyn Write + Send),
    what: &str,
) -> Result<()> {
    /// Whose turn it is to write, and the first piece that failed.
    struct Turn<'o> {
        next: usize,
        failed: Option<usize>,
        out: &'o mut (dyn Write + Send),
    }
    let n = readers.len();
    let turn = Mutex::new(Turn { next: 0, failed: None, out });
    let cv = Condvar::new();
    let lock = || turn.lock().unwrap_or_else(|e| e.into_inner());
    // Reader `k`: `Err((piece, error))` for the piece it failed on.
    let work = |mut front: super::Front, k: usize| -> std::result::Result<(), (usize, anyhow::Error)> {
        let mut p = ChunkPiece::new();
        for (i, &(part, pos, len, drive)) in plan.iter().enumerate().skip(k).step_by(n) {
            let failed = |e: anyhow::Error| {
                let mut t = lock();
                t.failed = Some(t.failed.map_or(i, |f| f.min(i)));
                cv.notify_all();
                (i, e)
            };
            front.read_raw(part, pos, len, &mut p).map_err(|e| failed(with_paths(e, paths)))?;
            p.verify().map_err(|e| failed(anyhow!("{}: {e}", paths[drive].display())))?;
            let mut t = lock();
            while t.next != i && t.failed.is_none_or(|f| f > i) {
                t = cv.wait(t).unwrap_or_else(|e| e.into_inner());
            }
            if t.failed.is_some_and(|f| f < i) {
                // An earlier piece failed: this one is not written.
                return Ok(());
            }
            if let Err(e) = write_piece(t.out, &p) {
                drop(t);
                return Err(failed(anyhow::Error::new(e).context(what.to_string())));
            }
            t.next += 1;
            cv.notify_all();
        }
        Ok(())
    };
    let results: Vec<_> = std::thread::scope(|s| {
        let mut it = readers.into_iter().enumerate();
        let (_, first) = it.next().expect("at least one reader");
        let others: Vec<_> = it.map(|(k, f)| s.spawn(move || work(f, k))).collect();
        let mut all = vec![work(first, 0)];
        all.extend(others.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))));
        all
    });
    if let Some((_, e)) = results.into_iter().filter_map(|r| r.err()).min_by_key(|(i, _)| *i) {
        return Err(e);
    }
    let t = turn.into_inner().unwrap_or_else(|e| e.into_inner());
    t.out.flush().with_context(|| what.to_string())
}

/// Writes the asked-for bytes of `p` (verified) to `out` in vectored writes.
fn write_piece(out: &mut (dyn Write + Send), p: &ChunkPiece) -> std::io::Result<()> {
    let mut from = 0;
    while from < p.slices() {
        let mut iov = p.io_slices(from, IOV_MAX);
        from += iov.len();
        let mut bufs = &mut iov[..];
        while !bufs.is_empty() {
            match out.write_vectored(bufs) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(k) => IoSlice::advance_slices(&mut bufs, k),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

pub(super) fn ls(a: LsArgs) -> Result<()> {
    a.output.start()?;
    let paths = a.devices.all()?;
    let (front, _) = open_front(&a.devices, true)?;
    let l = front.list();
    if !a.output.is_table() {
        let v: Vec<serde_json::Value> = l
            .iter()
            .map(|(d, c)| {
                // The chunk's serde form, its stream type by name, and where it is.
                let mut j = serde_json::to_value(c)?;
                j["stream"] = stream_name(c.stream).into();
                j["drive"] = (*d).into();
                j["device"] = serde_json::to_value(&paths[*d])?;
                Ok(j)
            })
            .collect::<Result<_>>()?;
        a.output.print_value(&v)?;
        return Ok(());
    }
    let multi = paths.len() > 1;
    println!(
        "{:<48}  {:<8}  {:>12}  {:<6}  {:>7}{}",
        "id",
        "stream",
        "length",
        "sealed",
        "records",
        if multi { "  drive" } else { "" }
    );
    for (d, c) in &l {
        println!(
            "{:<48}  {:<8}  {:>12}  {:<6}  {:>7}{}",
            c.id.to_string(),
            stream_name(c.stream),
            c.len,
            if c.sealed { "yes" } else { "no" },
            c.records,
            if multi { format!("  {d}") } else { String::new() }
        );
    }
    Ok(())
}

pub(super) fn rm(a: RmArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, false)?;
    let ids = a.ids.iter().map(|s| resolve_id(&front, s, &paths)).collect::<Result<Vec<_>>>()?;
    for id in &ids {
        if front.chunk(*id).is_none() {
            bail!("no chunk {id} in {}", list_paths(&paths));
        }
    }
    for id in &ids {
        // A file stored in parts goes whole: its parts first, then the manifest.
        let parts = parts_of(&mut front, *id, &paths)?;
        if let Some(parts) = &parts {
            for (p, _) in parts {
                if front.chunk(*p).is_some() {
                    front.delete(*p).map_err(|e| with_paths(e, &paths))?;
                }
            }
        }
        front.delete(*id).map_err(|e| with_paths(e, &paths))?;
        // Said only once it is durable: a crash after the line cannot bring the chunk back.
        front.sync().map_err(|e| with_paths(e, &paths))?;
        match parts {
            Some(parts) => println!("deleted {id} and its {} parts", parts.len()),
            None => println!("deleted {id}"),
        }
    }
    close(&mut front, &paths)
}
