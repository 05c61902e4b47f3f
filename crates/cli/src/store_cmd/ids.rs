//! Chunk ids on the command line (hex, unique prefixes, names) and the parts manifest of a
//! file stored as several chunks.

use super::{list_paths, with_paths, Front};
use anyhow::{anyhow, bail, Result};
use shingled_store::{ChunkId, StreamType};
use std::path::{Path, PathBuf};

/// The first line of a parts manifest: a file larger than a chunk is stored as part chunks and
/// a manifest chunk (metadata stream) under the id `put` prints, which `get` joins and `rm`
/// removes whole.
pub(super) const PARTS_MAGIC: &[u8] = b"shingled-parts 1\n";

/// The manifest of a file stored in `parts` of `lens` bytes: the magic line, the total length,
/// then one `id length` line per part.
pub(super) fn parts_manifest(parts: &[ChunkId], lens: &[u64]) -> Vec<u8> {
    let mut m = PARTS_MAGIC.to_vec();
    m.extend_from_slice(format!("length {}\n", lens.iter().sum::<u64>()).as_bytes());
    for (p, l) in parts.iter().zip(lens) {
        m.extend_from_slice(format!("{p} {l}\n").as_bytes());
    }
    m
}

/// A part of a file stored in parts, and its length.
pub(super) type Part = (ChunkId, u64);

/// The parts of chunk `id` if it is a parts manifest (checked to add up to its length line).
pub(super) fn parts_of(front: &mut Front, id: ChunkId, paths: &[PathBuf]) -> Result<Option<Vec<Part>>> {
    let Some((_, c)) = front.chunk(id) else { return Ok(None) };
    if c.stream != StreamType::METADATA || c.len < PARTS_MAGIC.len() as u64 || c.len > 1 << 20 {
        return Ok(None);
    }
    let text = front.read(id, 0, c.len).map_err(|e| with_paths(e, paths))?;
    let Some(body) = text.strip_prefix(PARTS_MAGIC) else { return Ok(None) };
    let body =
        std::str::from_utf8(body).map_err(|_| anyhow!("chunk {id}: a parts manifest that is not text"))?;
    let mut lines = body.lines();
    let total = lines
        .next()
        .and_then(|l| l.strip_prefix("length "))
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| anyhow!("chunk {id}: parts manifest without its length line"))?;
    let mut parts = Vec::new();
    for (i, l) in lines.enumerate() {
        let (p, n) =
            l.split_once(' ').ok_or_else(|| anyhow!("chunk {id}: parts manifest line {}: {l:?}", i + 3))?;
        let n = n
            .parse::<u64>()
            .map_err(|_| anyhow!("chunk {id}: parts manifest line {}: length {n:?}", i + 3))?;
        parts.push((parse_id(p)?, n));
    }
    if parts.iter().map(|p| p.1).sum::<u64>() != total {
        bail!("chunk {id}: parts manifest lengths do not add up to {total}");
    }
    Ok(Some(parts))
}

/// The chunk `s` names in `front`: a full id or `name:NAME` (as [`parse_id`]), or a prefix of
/// the hex id that exactly one chunk has (as git accepts abbreviated commits).
pub(super) fn resolve_id(front: &Front, s: &str, paths: &[PathBuf]) -> Result<ChunkId> {
    let t = s.trim();
    if t.starts_with("name:") || t.len() == 48 {
        return parse_id(t);
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("chunk id {s:?}: expected hex digits (the id or a unique prefix of it) or name:NAME");
    }
    let want = t.to_ascii_lowercase();
    let hits: Vec<ChunkId> =
        front.list().into_iter().map(|(_, c)| c.id).filter(|id| id.to_string().starts_with(&want)).collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => bail!("no chunk id starts with {t} in {}", list_paths(paths)),
        many => bail!(
            "chunk id prefix {t} is ambiguous: {} chunks start with it ({}{}); give more digits",
            many.len(),
            many.iter().take(4).map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
            if many.len() > 4 { ", ..." } else { "" }
        ),
    }
}

/// Parses `48 hex digits` or `name:NAME`.
pub(super) fn parse_id(s: &str) -> Result<ChunkId> {
    if let Some(name) = s.strip_prefix("name:") {
        return name_id(name);
    }
    let t = s.trim();
    if t.len() != 48 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("chunk id {s:?}: expected 48 hex digits (24 bytes) or name:NAME");
    }
    let mut id = [0u8; 24];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).expect("checked hex");
    }
    Ok(ChunkId(id))
}

pub(super) fn name_id(name: &str) -> Result<ChunkId> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 24 {
        bail!("chunk name {name:?}: must be 1 to 24 bytes");
    }
    let mut id = [0u8; 24];
    id[..b.len()].copy_from_slice(b);
    Ok(ChunkId(id))
}

/// A fresh id: a hash of the file path, process and counter, then the time in nanoseconds
/// (unique per put).
pub(super) fn fresh_id(path: &Path, n: u64) -> ChunkId {
    let t =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let salt = (u64::from(std::process::id()) << 32 | n).to_le_bytes();
    for b in path.as_os_str().as_encoded_bytes().iter().chain(&salt) {
        h = (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let mut id = [0u8; 24];
    id[..8].copy_from_slice(&h.to_be_bytes());
    id[8..].copy_from_slice(&t.to_be_bytes());
    ChunkId(id)
}
