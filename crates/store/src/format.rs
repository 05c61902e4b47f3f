//! The on-disk record format (`docs/store-format.md`): every structure is a 4 KiB-aligned
//! record made of a 32-byte header, a payload and zero padding. Data records carry the user's
//! bytes as 4096-byte slices, each followed by a 32-byte footer, so one slice can be verified
//! without reading the rest of its record (SMRSTORE §4.2).

use crate::ChunkId;

/// Records start at and are padded to multiples of this many bytes.
pub const BLOCK: u64 = 4096;
/// Bytes of a record header.
pub const HEADER_LEN: usize = 32;
/// "SMRR" little-endian: first four bytes of every record.
pub const MAGIC: u32 = u32::from_le_bytes(*b"SMRR");
/// User bytes per data slice.
pub const SLICE: usize = 4096;
/// Bytes of a slice footer: chunk id (24), chunk offset (4), CRC32C (4).
pub const FOOTER_LEN: usize = 32;
/// A slice and its footer.
pub const SLICE_STRIDE: usize = SLICE + FOOTER_LEN;
/// Bytes of a data record's payload before its first slice.
pub const DATA_PREFIX: usize = 40;
/// Offset of the first slice from the start of a data record.
pub const DATA_SLICES_AT: usize = HEADER_LEN + DATA_PREFIX;
/// Largest payload a header may announce (sanity bound for parsing untrusted bytes).
pub const MAX_PAYLOAD: u32 = 1 << 30;

/// Kinds of record (the header's type byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    /// The superzone's record: format version, time, configuration.
    Super = 1,
    /// First record of a metazone: its generation.
    MetaHeader = 2,
    /// A checkpoint begins.
    CkptStart = 3,
    /// The checkpoint's chunk and zone tables.
    CkptBody = 4,
    /// The checkpoint is complete.
    CkptEnd = 5,
    /// Journal: a chunk was created.
    JCreate = 6,
    /// Journal: a chunk was sealed.
    JSeal = 7,
    /// Journal: a chunk was deleted.
    JDelete = 8,
    /// Journal: a datazone was reset.
    JZoneReset = 9,
    /// User data of one chunk.
    Data = 16,
}

impl RecordType {
    /// The type for a header byte.
    pub fn from_u8(b: u8) -> Option<RecordType> {
        use RecordType::*;
        Some(match b {
            1 => Super,
            2 => MetaHeader,
            3 => CkptStart,
            4 => CkptBody,
            5 => CkptEnd,
            6 => JCreate,
            7 => JSeal,
            8 => JDelete,
            9 => JZoneReset,
            16 => Data,
            _ => return None,
        })
    }
}

/// A decoded record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Record type.
    pub rtype: RecordType,
    /// Payload bytes (excluding header and padding).
    pub payload_len: u32,
    /// CRC32C of the payload.
    pub payload_crc: u32,
    /// Store-wide sequence number: strictly increasing in write order.
    pub seq: u64,
    /// Data records: the header CRC of the previous record in the same zone (0 for a zone's
    /// first record), chaining a zone's records. 0 in every other record.
    pub link: u32,
    /// This header's own CRC (bytes 28..32), what the next record of the zone links to.
    pub hcrc: u32,
}

impl Header {
    /// Bytes the whole record occupies on the device (header + payload + padding).
    pub fn record_len(&self) -> u64 {
        record_len(self.payload_len as usize)
    }
}

/// Bytes a record with a `payload`-byte payload occupies.
pub fn record_len(payload: usize) -> u64 {
    align_up((HEADER_LEN + payload) as u64)
}

/// `n` rounded up to a multiple of [`BLOCK`].
pub fn align_up(n: u64) -> u64 {
    n.div_ceil(BLOCK) * BLOCK
}

/// Encodes a whole record: header, `payload`, zero padding to [`BLOCK`].
pub fn encode_record(rtype: RecordType, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; record_len(payload.len()) as usize];
    out[HEADER_LEN..HEADER_LEN + payload.len()].copy_from_slice(payload);
    write_header(&mut out, rtype, seq, payload.len(), 0);
    out
}

/// Fills in the header of a record whose payload is already at `rec[HEADER_LEN..]`.
fn write_header(rec: &mut [u8], rtype: RecordType, seq: u64, payload_len: usize, link: u32) {
    let crc = crc32c::crc32c(&rec[HEADER_LEN..HEADER_LEN + payload_len]);
    let h = &mut rec[..HEADER_LEN];
    h.fill(0);
    h[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    h[4] = rtype as u8;
    h[8..12].copy_from_slice(&(payload_len as u32).to_le_bytes());
    h[12..16].copy_from_slice(&crc.to_le_bytes());
    h[16..24].copy_from_slice(&seq.to_le_bytes());
    h[24..28].copy_from_slice(&link.to_le_bytes());
    let hcrc = crc32c::crc32c(&h[..28]);
    h[28..32].copy_from_slice(&hcrc.to_le_bytes());
}

/// Decodes and checks a header (magic, header CRC, type, length bound). The payload CRC is
/// checked by [`check_payload`] once the payload has been read.
pub fn decode_header(b: &[u8]) -> Result<Header, String> {
    if b.len() < HEADER_LEN {
        return Err(format!("header needs {HEADER_LEN} bytes, have {}", b.len()));
    }
    let magic = u32_at(b, 0);
    if magic != MAGIC {
        return Err(format!("bad magic {magic:#010x}"));
    }
    let hcrc = u32_at(b, 28);
    if crc32c::crc32c(&b[..28]) != hcrc {
        return Err("header CRC mismatch".into());
    }
    let rtype = RecordType::from_u8(b[4]).ok_or_else(|| format!("unknown record type {}", b[4]))?;
    let payload_len = u32_at(b, 8);
    if payload_len > MAX_PAYLOAD {
        return Err(format!("payload length {payload_len} beyond the bound {MAX_PAYLOAD}"));
    }
    Ok(Header {
        rtype,
        payload_len,
        payload_crc: u32_at(b, 12),
        seq: u64_at(b, 16),
        link: u32_at(b, 24),
        hcrc,
    })
}

/// Checks a payload against its header's CRC.
pub fn check_payload(h: &Header, payload: &[u8]) -> Result<(), String> {
    if payload.len() != h.payload_len as usize {
        return Err(format!("payload of {} bytes, header says {}", payload.len(), h.payload_len));
    }
    let crc = crc32c::crc32c(payload);
    if crc != h.payload_crc {
        return Err(format!("payload CRC {crc:#010x}, header says {:#010x}", h.payload_crc));
    }
    Ok(())
}

/// Payload bytes of a data record carrying `n` user bytes.
pub fn data_payload_len(n: usize) -> usize {
    let full = n / SLICE;
    let rest = n % SLICE;
    DATA_PREFIX + full * SLICE_STRIDE + if rest > 0 { rest + FOOTER_LEN } else { 0 }
}

/// Largest number of user bytes whose data record fits in `room` bytes.
pub fn data_fits(room: u64) -> usize {
    if room < BLOCK {
        return 0;
    }
    // Whole slices first, then the best partial one.
    let avail = room as usize - HEADER_LEN - DATA_PREFIX;
    let full = avail / SLICE_STRIDE;
    let rest = (avail - full * SLICE_STRIDE).saturating_sub(FOOTER_LEN);
    full * SLICE + rest.min(SLICE - 1)
}

/// User bytes of one chunk that fit in a zone of `cap` bytes when the chunk is written by itself
/// from the zone's start as data records of `max_record` user bytes (the last one shorter):
/// `k` whole records of `record_len(data_payload_len(max_record))` bytes each, then what
/// [`data_fits`] the rest of the zone. Rule 2's chunk limit (docs/store-format.md).
pub fn chunk_fits(cap: u64, max_record: usize) -> u64 {
    let per = record_len(data_payload_len(max_record));
    let k = cap / per;
    k * max_record as u64 + data_fits(cap - k * per).min(max_record) as u64
}

/// Payload of a CkptStart record: metazone generation, checkpoint number in the metazone.
pub fn ckpt_start_payload(gen: u64, sub: u32) -> Vec<u8> {
    let mut p = gen.to_le_bytes().to_vec();
    p.extend_from_slice(&sub.to_le_bytes());
    p
}

/// Payload of a CkptEnd record: generation, checkpoint number, body pieces (CkptBody records),
/// body bytes and CRC32C of the whole body (the pieces concatenated).
pub fn ckpt_end_payload(gen: u64, sub: u32, pieces: u32, body: &[u8]) -> Vec<u8> {
    let mut p = ckpt_start_payload(gen, sub);
    p.extend_from_slice(&pieces.to_le_bytes());
    p.extend_from_slice(&(body.len() as u64).to_le_bytes());
    p.extend_from_slice(&crc32c::crc32c(body).to_le_bytes());
    p
}

/// Header CRC of an encoded record (what the next data record of its zone links to).
pub fn header_crc(rec: &[u8]) -> u32 {
    u32_at(rec, 28)
}

/// Encodes a data record of `chunk` starting at chunk offset `offset`, written into a zone of
/// pool `pool` after a record whose header CRC is `link` (0: the zone's first record).
pub fn encode_data(chunk: &ChunkId, offset: u64, data: &[u8], seq: u64, pool: u8, link: u32) -> Vec<u8> {
    let plen = data_payload_len(data.len());
    let mut rec = vec![0u8; record_len(plen) as usize];
    let p = &mut rec[HEADER_LEN..];
    p[0..24].copy_from_slice(&chunk.0);
    p[24..32].copy_from_slice(&offset.to_le_bytes());
    p[32..36].copy_from_slice(&(data.len() as u32).to_le_bytes());
    p[36] = pool;
    for (i, piece) in data.chunks(SLICE).enumerate() {
        let at = DATA_SLICES_AT + i * SLICE_STRIDE;
        rec[at..at + piece.len()].copy_from_slice(piece);
        let f = at + piece.len();
        let slice_off = offset + (i * SLICE) as u64;
        rec[f..f + 24].copy_from_slice(&chunk.0);
        rec[f + 24..f + 28].copy_from_slice(&(slice_off as u32).to_le_bytes());
        let crc = crc32c::crc32c(&rec[at..f + 28]);
        rec[f + 28..f + 32].copy_from_slice(&crc.to_le_bytes());
    }
    write_header(&mut rec, RecordType::Data, seq, plen, link);
    rec
}

/// The prefix of a data record's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataPrefix {
    /// Owner.
    pub chunk: ChunkId,
    /// Chunk offset of the first user byte.
    pub offset: u64,
    /// User bytes in the record.
    pub len: u32,
    /// Pool key of the zone's stream.
    pub pool: u8,
}

/// Decodes a data record's payload prefix (`payload` may be just the prefix) and checks that
/// its user length matches `payload_len`, the header's payload length.
pub fn decode_data_prefix(payload: &[u8], payload_len: usize) -> Result<DataPrefix, String> {
    if payload.len() < DATA_PREFIX {
        return Err(format!("data payload of {} bytes is shorter than its prefix", payload.len()));
    }
    let mut id = [0u8; 24];
    id.copy_from_slice(&payload[..24]);
    let len = u32_at(payload, 32);
    if data_payload_len(len as usize) != payload_len {
        return Err(format!("data record of {len} user bytes cannot have a {payload_len}-byte payload"));
    }
    Ok(DataPrefix { chunk: ChunkId(id), offset: u64_at(payload, 24), len, pool: payload[36] })
}

/// Checks one slice (`slice` = user bytes followed by the footer) of `chunk` expected at chunk
/// offset `offset`.
pub fn check_slice(slice: &[u8], chunk: &ChunkId, offset: u64) -> Result<(), String> {
    if slice.len() < FOOTER_LEN {
        return Err("slice shorter than its footer".into());
    }
    let f = slice.len() - FOOTER_LEN;
    let crc = u32_at(slice, f + 28);
    if crc32c::crc32c(&slice[..f + 28]) != crc {
        return Err("slice CRC mismatch".into());
    }
    if slice[f..f + 24] != chunk.0 {
        return Err("footer names another chunk".into());
    }
    let off = u32_at(slice, f + 24);
    if off != offset as u32 {
        return Err(format!("footer says chunk offset {off}"));
    }
    Ok(())
}

/// Little-endian u32 at `at` (caller checks bounds).
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Little-endian u64 at `at` (caller checks bounds).
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// A bounds-checked little-endian reader over untrusted bytes.
pub struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Reads from the start of `b`.
    pub fn new(b: &'a [u8]) -> Self {
        Reader { b, at: 0 }
    }
    /// `n` bytes, or an error naming the offset.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| format!("truncated at payload byte {} (need {n})", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.bytes(1)?[0])
    }
    /// A little-endian u32.
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32_at(self.bytes(4)?, 0))
    }
    /// A little-endian u64.
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64_at(self.bytes(8)?, 0))
    }
    /// A chunk id.
    pub fn id(&mut self) -> Result<ChunkId, String> {
        let mut id = [0u8; 24];
        id.copy_from_slice(self.bytes(24)?);
        Ok(ChunkId(id))
    }
    /// Whether everything was consumed.
    pub fn done(&self) -> bool {
        self.at == self.b.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_roundtrip_and_damage() {
        let rec = encode_record(RecordType::JSeal, 77, b"hello");
        assert_eq!(rec.len() as u64, BLOCK);
        let h = decode_header(&rec).unwrap();
        assert_eq!((h.rtype, h.payload_len, h.seq), (RecordType::JSeal, 5, 77));
        check_payload(&h, &rec[HEADER_LEN..HEADER_LEN + 5]).unwrap();
        for bit in 0..(HEADER_LEN + 5) * 8 {
            let mut r = rec.clone();
            r[bit / 8] ^= 1 << (bit % 8);
            let ok = decode_header(&r).and_then(|h| check_payload(&h, &r[HEADER_LEN..HEADER_LEN + 5]));
            assert!(ok.is_err(), "flip of bit {bit} not detected");
        }
    }

    #[test]
    fn data_record_layout_and_slices() {
        let id = ChunkId([3; 24]);
        for n in [1usize, 100, 4095, 4096, 4097, 10000, 3 * 4096] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            let rec = encode_data(&id, 8192, &data, 5, 0, 0);
            assert_eq!(rec.len() as u64 % BLOCK, 0);
            let h = decode_header(&rec).unwrap();
            let p = &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
            check_payload(&h, p).unwrap();
            let pre = decode_data_prefix(p, p.len()).unwrap();
            assert_eq!((pre.chunk, pre.offset, pre.len as usize), (id, 8192, n));
            for (i, piece) in data.chunks(SLICE).enumerate() {
                let at = DATA_SLICES_AT + i * SLICE_STRIDE;
                let s = &rec[at..at + piece.len() + FOOTER_LEN];
                check_slice(s, &id, 8192 + (i * SLICE) as u64).unwrap();
                assert_eq!(&s[..piece.len()], piece);
                assert!(check_slice(s, &id, 0).is_err());
                assert!(check_slice(s, &ChunkId([4; 24]), 8192 + (i * SLICE) as u64).is_err());
            }
        }
    }

    #[test]
    fn data_fits_is_exact() {
        for room in (1..40).map(|k| k * BLOCK) {
            let n = data_fits(room);
            assert!(record_len(data_payload_len(n)) <= room, "room {room}: {n}");
            assert!(record_len(data_payload_len(n + 1)) > room, "room {room}: {n} not maximal");
        }
    }

    #[test]
    fn reader_never_panics_on_short_input() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert!(r.u32().is_err());
        assert_eq!(r.u8().unwrap(), 1);
        assert!(r.id().is_err());
    }
}
