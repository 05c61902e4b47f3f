//! `store put`: files into chunks (parts and a manifest when larger than a chunk), the input
//! read ahead of the appends on a thread of its own.

use super::ids::{fresh_id, name_id, parse_id, parts_manifest, PARTS_MAGIC};
use super::{bytes_bar, close, open_front, with_paths, PutArgs, StreamArg};
use anyhow::{anyhow, bail, Context, Result};
use shingled_store::{ChunkId, PreparedRecords, StreamType};
use std::io::{IoSliceMut, Read};
use std::path::PathBuf;

/// Bytes per append of `put` (rounded down to a multiple of the store's `max_record`, so that
/// a part fills its zone as the chunk limit assumes): the store writes the records of one
/// append to a zone with one device call (`shingled_store::WRITE_BATCH`).
const PUT_PIECE: usize = 8 << 20;

pub(super) fn put(a: PutArgs) -> Result<()> {
    if a.id.is_some() && a.files.len() != 1 {
        bail!("--id names one chunk; {} files were given", a.files.len());
    }
    let stdin = |f: &PathBuf| f.as_os_str() == "-";
    if a.files.iter().filter(|f| stdin(f)).count() > 1 {
        bail!("standard input (-) can be stored once per put");
    }
    if a.name && a.files.iter().any(stdin) {
        bail!("--name takes the chunk name from the file name; standard input (-) has none (give --id)");
    }
    let mut sizes = Vec::new();
    for f in &a.files {
        if stdin(f) {
            continue;
        }
        let m = std::fs::metadata(f).with_context(|| format!("reading {}", f.display()))?;
        if !m.is_file() {
            bail!("{} is not a regular file", f.display());
        }
        sizes.push(m.len());
    }
    let ids = a
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| match (&a.id, a.name) {
            (Some(s), _) => parse_id(s),
            (None, true) => {
                let n = f
                    .file_name()
                    .and_then(|n| n.to_str())
                    .ok_or_else(|| anyhow!("{}: no file name", f.display()))?;
                name_id(n)
            }
            (None, false) => Ok(fresh_id(f, i as u64)),
        })
        .collect::<Result<Vec<_>>>()?;
    for (i, id) in ids.iter().enumerate() {
        if let Some(j) = ids[..i].iter().position(|x| x == id) {
            bail!("{} and {} would both be chunk {id}", a.files[j].display(), a.files[i].display());
        }
    }
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, false)?;
    for id in &ids {
        if let Some((d, _)) = front.chunk(*id) {
            bail!("chunk {id} already exists (on {})", paths[d].display());
        }
    }
    // The largest chunk any drive takes in this stream: a bigger file is stored in parts.
    let limit = (0..front.drives())
        .filter_map(|i| front.drive(i).map(|st| st.chunk_limit(a.stream.stream())))
        .min()
        .unwrap_or(u64::MAX);
    // Appends of PUT_PIECE bytes, a whole number of records of every drive.
    let max_record = (0..front.drives())
        .filter_map(|i| front.drive(i).map(|st| st.config().max_record))
        .max()
        .unwrap_or(1);
    let piece = (PUT_PIECE / max_record).max(1) * max_record;
    let bar = bytes_bar(sizes.iter().sum(), "put");
    let mut result = Ok(());
    let mut size_of = sizes.iter();
    let mut leftovers: Vec<ChunkId> = Vec::new();
    for (fi, (f, id)) in a.files.iter().zip(&ids).enumerate() {
        let size = if stdin(f) { None } else { size_of.next().copied() };
        let split = size.is_some_and(|n| n > limit);
        if split && a.no_seal {
            result = Err(anyhow!(
                "{} ({} bytes) is larger than a chunk ({limit} bytes) and is stored in parts, which are sealed; \
                 drop --no-seal",
                f.display(),
                size.unwrap_or(0)
            ));
            break;
        }
        // The chunks this file goes into: itself, or its parts then the manifest `id`.
        let parts: Vec<ChunkId> = if split {
            let n = size.unwrap_or(0).div_ceil(limit);
            (0..n).map(|k| fresh_id(f, (fi as u64) << 32 | (k + 1))).collect()
        } else {
            vec![*id]
        };
        result = (|| -> Result<()> {
            let file: Box<dyn Read + Send> = if stdin(f) {
                Box::new(std::io::stdin())
            } else {
                Box::new(std::fs::File::open(f).with_context(|| format!("reading {}", f.display()))?)
            };
            let cap = if split { limit } else { u64::MAX };
            let pieces = ReadAhead::start(file, cap, parts.clone(), piece, max_record);
            let mut lens = Vec::with_capacity(parts.len());
            for (k, part) in parts.iter().enumerate() {
                front.create(*part, a.stream.stream()).map_err(|e| with_paths(e, &paths))?;
                let mut len = 0u64;
                while let Some(p) = pieces.next() {
                    let (mut buf, n, last) = p.with_context(|| format!("reading {}", f.display()))?;
                    if k == 0
                        && len == 0
                        && matches!(a.stream, StreamArg::Metadata)
                        && buf.slices_mut().first().is_some_and(|s| s.starts_with(PARTS_MAGIC))
                    {
                        bail!(
                            "{} begins like a parts manifest ({:?}); store it in another stream",
                            f.display(),
                            String::from_utf8_lossy(PARTS_MAGIC)
                        );
                    }
                    if n > 0 {
                        front
                            .append_prepared(*part, &mut buf)
                            .map_err(|e| with_paths(e, &paths))
                            .with_context(|| format!("storing {} as chunk {part}", f.display()))?;
                    }
                    pieces.give_back(buf);
                    bar.inc(n as u64);
                    len += n as u64;
                    if last {
                        break;
                    }
                }
                lens.push(len);
                if !a.no_seal {
                    front.seal(*part).map_err(|e| with_paths(e, &paths))?;
                }
            }
            if split {
                let manifest = parts_manifest(&parts, &lens);
                front.create(*id, StreamType::METADATA).map_err(|e| with_paths(e, &paths))?;
                front.append(*id, &manifest).map_err(|e| with_paths(e, &paths))?;
                front.seal(*id).map_err(|e| with_paths(e, &paths))?;
            }
            Ok(())
        })();
        if result.is_err() {
            // No half-stored file stays behind. A device error leaves the store refusing
            // further changes, so what it cannot delete now is deleted after reopening it.
            for c in parts.iter().chain(split.then_some(id)) {
                if front.chunk(*c).is_some() && front.delete(*c).is_err() {
                    leftovers.push(*c);
                }
            }
            break;
        }
        if a.no_seal {
            // Sealing synced the others; an unsealed chunk's id is printed once it is durable.
            if let Err(e) = front.sync() {
                return Err(with_paths(e, &paths));
            }
        }
        let (d, c) = front.chunk(*id).expect("just stored");
        let len = if split { size.unwrap_or(0) } else { c.len };
        let how = if split { format!("  in {} parts", parts.len()) } else { String::new() };
        bar.suspend(|| {
            if paths.len() > 1 {
                println!("{id}  {}  {len} bytes{how}  {}", f.display(), paths[d].display());
            } else {
                println!("{id}  {}  {len} bytes{how}", f.display());
            }
        });
    }
    bar.finish_and_clear();
    // Whatever was stored before a failure is made durable too.
    let closed = close(&mut front, &paths);
    if !leftovers.is_empty() {
        drop(front);
        let cleaned = (|| -> Result<()> {
            let (mut again, _) = open_front(&a.devices, false)?;
            for c in &leftovers {
                if again.chunk(*c).is_some() {
                    again.delete(*c).map_err(|e| with_paths(e, &paths))?;
                }
            }
            close(&mut again, &paths)
        })();
        if let Err(e) = cleaned {
            let ids: Vec<String> = leftovers.iter().map(|c| c.to_string()).collect();
            return result.and(closed).and(Err(e)).with_context(|| {
                format!(
                    "the failed put left chunk(s) {} behind; remove them with `shingled store rm`",
                    ids.join(" ")
                )
            });
        }
    }
    result.and(closed)
}

/// One piece read by [`ReadAhead`]: its records (the user bytes read, encoded), the bytes
/// read, and whether it is the last piece of its part (the part is full, or the input ended).
type Piece = std::io::Result<(PreparedRecords, usize, bool)>;

/// Reads `put`'s input in a thread of its own, up to [`READ_AHEAD`] pieces ahead of the
/// appends, straight into the slices of the data records (`PreparedRecords`: one `readv` per
/// up to 1024 slices, then the slice footers and CRCs), so that reading and encoding overlap
/// the store's writes instead of taking turns with them, and the user bytes are copied once
/// (by the kernel, from the file) before the device writes them. The pieces are those the
/// appends need: `piece` bytes at a time, each part (`cap` bytes, the last one less) ending
/// with a piece of its own, so a part's appends are whole records until its last.
struct ReadAhead {
    pieces: std::sync::mpsc::Receiver<Piece>,
    free: std::sync::mpsc::Sender<PreparedRecords>,
}

/// Pieces `put` reads ahead of the appends.
const READ_AHEAD: usize = 2;

impl ReadAhead {
    /// Starts reading `file` as the `parts` (chunk ids) of `cap` bytes in pieces of `piece`
    /// bytes, laid out as records of `max_record` bytes. The thread ends at the end of the
    /// input or of the last part, at a read error (sent as the last piece), or when the
    /// `ReadAhead` is dropped (it is not joined: a read of standard input may block for ever).
    fn start(
        mut file: Box<dyn Read + Send>,
        cap: u64,
        parts: Vec<ChunkId>,
        piece: usize,
        max_record: usize,
    ) -> ReadAhead {
        let (piece_tx, pieces) = std::sync::mpsc::channel::<Piece>();
        let (free, free_rx) = std::sync::mpsc::channel::<PreparedRecords>();
        for _ in 0..READ_AHEAD + 1 {
            let _ = free.send(PreparedRecords::new());
        }
        std::thread::spawn(move || {
            for part in parts {
                let mut len = 0u64;
                loop {
                    let want = (cap - len).min(piece as u64) as usize;
                    let Ok(mut p) = free_rx.recv() else { return };
                    p.layout(part, len, want, max_record);
                    let mut io: Vec<IoSliceMut> = p.slices_mut().into_iter().map(IoSliceMut::new).collect();
                    let n = match read_full_vectored(&mut file, &mut io) {
                        Ok(n) => n,
                        Err(e) => {
                            let _ = piece_tx.send(Err(e));
                            return;
                        }
                    };
                    drop(io);
                    p.truncate(n);
                    p.finish();
                    len += n as u64;
                    let (eof, full) = (n < want, len == cap);
                    if piece_tx.send(Ok((p, n, eof || full))).is_err() || eof {
                        return;
                    }
                    if full {
                        break;
                    }
                }
            }
        });
        ReadAhead { pieces, free }
    }

    /// The next piece, or `None` once the input has ended (every later part is empty).
    fn next(&self) -> Option<Piece> {
        self.pieces.recv().ok()
    }

    /// Returns a piece's buffer for the next read.
    fn give_back(&self, p: PreparedRecords) {
        let _ = self.free.send(p);
    }
}

/// Fills `bufs` from `f` up to the end of the input; returns the bytes read.
fn read_full_vectored(f: &mut impl Read, mut bufs: &mut [IoSliceMut]) -> std::io::Result<usize> {
    let mut n = 0;
    while !bufs.is_empty() {
        match f.read_vectored(bufs) {
            Ok(0) => break,
            Ok(k) => {
                n += k;
                IoSliceMut::advance_slices(&mut bufs, k);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
