//! `store get`, `ls` and `rm`.

use super::ids::{parts_of, resolve_id, Part};
use super::{close, list_paths, open_front, stream_name, with_paths, GetArgs, LsArgs, RmArgs};
use anyhow::{anyhow, bail, Context, Result};
use shingled_store::ChunkPiece;
use std::io::{IoSlice, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::mpsc;

/// User bytes per piece `get` reads (one record of the default 1 MiB): the buffers stay in
/// the caches between the kernel's copy into them and the CRCs (8 MiB pieces measured 1.6×
/// the system time).
const PIECE: u64 = 1 << 20;
/// Pieces in flight: one being read, one being verified and written, one waiting between.
const PIECES: usize = 3;
/// Most buffers per vectored write (Linux's `IOV_MAX`).
const IOV_MAX: usize = 1024;

pub(super) fn get(a: GetArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, true)?;
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
        copy_out(&mut front, &pieces, &paths, out, &what)?;
    }
    if let Some(f) = file {
        f.commit().map_err(|e| anyhow::anyhow!("writing {e}"))?;
    }
    Ok(())
}

/// Writes the user bytes of `parts` to `out`. The device is read here, piece by piece, into
/// [`PIECES`] reused buffers; another thread verifies each piece (every slice's CRC and
/// footer) and only then writes it, so reading the next piece overlaps verifying and writing
/// this one, and no byte is copied in user space. A corrupt slice stops the copy before any
/// of its piece is written.
fn copy_out(
    front: &mut super::Front,
    parts: &[Part],
    paths: &[PathBuf],
    out: &mut (dyn Write + Send),
    what: &str,
) -> Result<()> {
    let (full_tx, full_rx) = mpsc::sync_channel::<(ChunkPiece, usize)>(PIECES);
    let (empty_tx, empty_rx) = mpsc::channel::<ChunkPiece>();
    for _ in 0..PIECES {
        empty_tx.send(ChunkPiece::new()).expect("the receiver is here");
    }
    std::thread::scope(|s| {
        let writer = s.spawn(move || -> Result<()> {
            for (p, drive) in full_rx {
                p.verify().map_err(|e| anyhow!("{}: {e}", paths[drive].display()))?;
                write_piece(out, &p).with_context(|| what.to_string())?;
                // The reader may have stopped (an error); the buffer is then dropped.
                let _ = empty_tx.send(p);
            }
            out.flush().with_context(|| what.to_string())
        });
        let mut read_error = None;
        'parts: for &(part, len) in parts {
            let drive = front.chunk(part).map_or(0, |(d, _)| d);
            let mut pos = 0;
            while pos < len {
                // No buffer back: the writer stopped on an error, which join reports.
                let Ok(mut p) = empty_rx.recv() else { break 'parts };
                let n = (len - pos).min(PIECE);
                if let Err(e) = front.read_raw(part, pos, n, &mut p) {
                    read_error = Some(with_paths(e, paths));
                    break 'parts;
                }
                if full_tx.send((p, drive)).is_err() {
                    break 'parts;
                }
                pos += n;
            }
        }
        drop(full_tx);
        // The writer's error is about bytes before any the reader failed on.
        writer.join().unwrap_or_else(|e| std::panic::resume_unwind(e))?;
        read_error.map_or(Ok(()), Err)
    })
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
