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
    put_header(rec, rtype, seq, payload_len, crc, link);
}

/// Writes the header of a record whose payload CRC is `crc`.
fn put_header(rec: &mut [u8], rtype: RecordType, seq: u64, payload_len: usize, crc: u32, link: u32) {
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
    let mut rec = vec![0u8; record_len(data_payload_len(data.len())) as usize];
    encode_data_into(&mut rec, chunk, offset, data, seq, pool, link);
    rec
}

/// [`encode_data`] into `rec` (whatever it held), which must be at least the record's length
/// long; returns that length. Every byte of the record is written, padding included, so a
/// reused buffer needs no clearing: the user bytes are copied once, straight into place, and
/// the payload CRC is derived from the slice CRCs ([`crc_shift_stride`]) instead of a second
/// pass over the payload.
pub fn encode_data_into(
    rec: &mut [u8],
    chunk: &ChunkId,
    offset: u64,
    data: &[u8],
    seq: u64,
    pool: u8,
    link: u32,
) -> usize {
    let plen = data_payload_len(data.len());
    let len = record_len(plen) as usize;
    let rec = &mut rec[..len];
    let mut scrc = 0;
    for (i, piece) in data.chunks(SLICE).enumerate() {
        let at = DATA_SLICES_AT + i * SLICE_STRIDE;
        rec[at..at + piece.len()].copy_from_slice(piece);
        scrc = seal_slice(&mut rec[at..], piece.len(), chunk, offset + (i * SLICE) as u64, scrc);
    }
    rec[HEADER_LEN + plen..].fill(0);
    put_data_header(rec, chunk, offset, data.len(), scrc, seq, pool, link);
    len
}

/// Writes the footer of the slice of `n` user bytes at `s[..n]`, at chunk offset `off` of
/// `chunk`, into `s[n..n + FOOTER_LEN]`, and returns `scrc` (the CRC32C of the record's
/// slices and footers before this one) run on over this slice and its footer.
fn seal_slice(s: &mut [u8], n: usize, chunk: &ChunkId, off: u64, scrc: u32) -> u32 {
    s[n..n + 24].copy_from_slice(&chunk.0);
    s[n + 24..n + 28].copy_from_slice(&(off as u32).to_le_bytes());
    let crc = crc32c::crc32c(&s[..n + 28]);
    s[n + 28..n + 32].copy_from_slice(&crc.to_le_bytes());
    if n == SLICE {
        // crc(A || S) = shift(crc(A), |S|) ^ crc(S), and crc(S) is the slice CRC run on over
        // the 4 bytes that hold it: no second pass over the slice.
        crc_shift_stride(scrc) ^ crc32c::crc32c_append(crc, &s[n + 28..n + 32])
    } else {
        crc32c::crc32c_append(scrc, &s[..n + FOOTER_LEN])
    }
}

/// Writes the data prefix and the header of the data record at `rec[0..]` carrying `n` user
/// bytes whose slices and footers (payload bytes from [`DATA_PREFIX`] on) have CRC32C `scrc`.
#[allow(clippy::too_many_arguments)]
fn put_data_header(
    rec: &mut [u8],
    chunk: &ChunkId,
    offset: u64,
    n: usize,
    scrc: u32,
    seq: u64,
    pool: u8,
    link: u32,
) {
    let plen = data_payload_len(n);
    let p = &mut rec[HEADER_LEN..DATA_SLICES_AT];
    p[0..24].copy_from_slice(&chunk.0);
    p[24..32].copy_from_slice(&offset.to_le_bytes());
    p[32..36].copy_from_slice(&(n as u32).to_le_bytes());
    p[36] = pool;
    p[37..40].fill(0);
    let pcrc = crc_shift(crc32c::crc32c(p), plen - DATA_PREFIX) ^ scrc;
    debug_assert_eq!(pcrc, crc32c::crc32c(&rec[HEADER_LEN..HEADER_LEN + plen]));
    put_header(rec, RecordType::Data, seq, plen, pcrc, link);
}

/// `crc32c(A)` advanced over `len` more bytes as if they were zeros: `crc32c(A || B) =
/// crc_shift(crc32c(A), |B|) ^ crc32c(B)`. Table look-ups per [`SLICE_STRIDE`] bytes, the
/// crate's general combine for the rest.
pub fn crc_shift(mut crc: u32, len: usize) -> u32 {
    for _ in 0..len / SLICE_STRIDE {
        crc = crc_shift_stride(crc);
    }
    match len % SLICE_STRIDE {
        0 => crc,
        r => crc32c::crc32c_combine(crc, 0, r),
    }
}

/// A 4 KiB-aligned window of memory, reused: an `O_DIRECT` device file
/// (`shingled_zoned::FileStorage`) writes from it without copying it into a bounce buffer.
#[derive(Default)]
pub(crate) struct AlignedBuf {
    v: Vec<u8>,
    at: usize,
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.v.len())
    }
}

impl AlignedBuf {
    /// The first `len` bytes of the window (contents unspecified), growing it if needed.
    pub(crate) fn get(&mut self, len: usize) -> &mut [u8] {
        if self.v.len() < self.at + len {
            let a = BLOCK as usize;
            self.v = vec![0u8; len + a];
            self.at = self.v.as_ptr().align_offset(a).min(a);
        }
        &mut self.v[self.at..self.at + len]
    }

    /// The whole window (from its 4 KiB-aligned start).
    pub(crate) fn window(&self) -> &[u8] {
        &self.v[self.at.min(self.v.len())..]
    }
}

/// The data records of one append, encoded ahead of [`crate::Store::append_prepared`] (in
/// another thread, say) straight where the user bytes were read to: the user bytes are placed
/// by the caller into [`PreparedRecords::slices_mut`] (e.g. with one `readv`), then
/// [`PreparedRecords::finish`] writes the slice footers, their CRCs and the padding. The
/// store then only writes each record's header and prefix (sequence number, pool and link are
/// known only then) and hands the buffer, 4 KiB-aligned, to the device. The records are those
/// `append` would write when the zone has room: `max_record` user bytes each, the last one
/// shorter; where it has not (a zone's end), the store cuts the rest as `append` would, from a
/// copy of the user bytes.
#[derive(Debug, Default)]
pub struct PreparedRecords {
    chunk: ChunkId,
    offset: u64,
    len: usize,
    max_record: usize,
    buf: AlignedBuf,
    /// Per record: user bytes, and the CRC32C of its slices and footers (after `finish`).
    recs: Vec<(usize, u32)>,
    finished: bool,
}

impl PreparedRecords {
    /// Empty; give it an append with [`PreparedRecords::layout`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Lays out `len` user bytes of `chunk` from chunk offset `offset` as records of at most
    /// `max_record` user bytes (the store's [`crate::StoreConfig::max_record`]; 4096 at least).
    pub fn layout(&mut self, chunk: ChunkId, offset: u64, len: usize, max_record: usize) {
        let max_record = max_record.max(SLICE);
        (self.chunk, self.offset, self.len, self.max_record) = (chunk, offset, len, max_record);
        self.recs.clear();
        let mut left = len;
        while left > 0 {
            let n = left.min(max_record);
            self.recs.push((n, 0));
            left -= n;
        }
        let bytes = self.bytes();
        self.buf.get(bytes);
        self.finished = false;
    }

    /// Device bytes of the records.
    pub fn bytes(&self) -> usize {
        self.recs.iter().map(|&(n, _)| record_len(data_payload_len(n)) as usize).sum()
    }

    /// Owner chunk, chunk offset of the first user byte, user bytes.
    pub fn chunk(&self) -> (ChunkId, u64, usize) {
        (self.chunk, self.offset, self.len)
    }

    /// `max_record` of the layout.
    pub fn max_record(&self) -> usize {
        self.max_record
    }

    /// Where the user bytes go, in order: one piece of up to 4096 bytes per slice.
    pub fn slices_mut(&mut self) -> Vec<&mut [u8]> {
        let bytes = self.bytes();
        let mut rest = self.buf.get(bytes);
        let mut out = Vec::with_capacity(self.len.div_ceil(SLICE));
        for &(n, _) in &self.recs {
            let (rec, tail) =
                std::mem::take(&mut rest).split_at_mut(record_len(data_payload_len(n)) as usize);
            rest = tail;
            let mut r = &mut rec[DATA_SLICES_AT..];
            let mut left = n;
            while left > 0 {
                let k = left.min(SLICE);
                let (s, t) = std::mem::take(&mut r).split_at_mut(k);
                out.push(s);
                r = &mut t[FOOTER_LEN..];
                left -= k;
            }
        }
        out
    }

    /// Keeps only the first `len` user bytes (fewer were read than laid out); the bytes keep
    /// their places.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            let (chunk, offset, max_record) = (self.chunk, self.offset, self.max_record);
            self.layout(chunk, offset, len, max_record);
        }
    }

    /// Writes every slice's footer, the CRCs and the padding, once the user bytes are in place.
    pub fn finish(&mut self) {
        let bytes = self.bytes();
        let buf = self.buf.get(bytes);
        let (mut at, mut off) = (0usize, self.offset);
        for r in self.recs.iter_mut() {
            let n = r.0;
            let plen = data_payload_len(n);
            let rec = &mut buf[at..at + record_len(plen) as usize];
            let mut scrc = 0;
            for i in 0..n.div_ceil(SLICE) {
                let k = (n - i * SLICE).min(SLICE);
                let s = DATA_SLICES_AT + i * SLICE_STRIDE;
                scrc = seal_slice(&mut rec[s..], k, &self.chunk, off + (i * SLICE) as u64, scrc);
            }
            rec[HEADER_LEN + plen..].fill(0);
            r.1 = scrc;
            at += rec.len();
            off += n as u64;
        }
        self.finished = true;
    }

    /// Whether [`PreparedRecords::finish`] ran since the last layout.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Records laid out: (user bytes, device bytes).
    pub(crate) fn records(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.recs.iter().map(|&(n, _)| (n, record_len(data_payload_len(n)) as usize))
    }

    /// Writes the header and prefix of record `i`, at byte `at` of the buffer, whose first user
    /// byte is user byte `user_off` of the append; returns the record's header CRC.
    pub(crate) fn seal_record(
        &mut self,
        i: usize,
        at: usize,
        user_off: usize,
        seq: u64,
        pool: u8,
        link: u32,
    ) -> u32 {
        let (n, scrc) = self.recs[i];
        let bytes = self.bytes();
        let rec = &mut self.buf.get(bytes)[at..];
        put_data_header(rec, &self.chunk, self.offset + user_off as u64, n, scrc, seq, pool, link);
        header_crc(rec)
    }

    /// The encoded records, `[from, to)` bytes of them.
    pub(crate) fn encoded(&mut self, from: usize, to: usize) -> &[u8] {
        let bytes = self.bytes();
        &self.buf.get(bytes)[from..to]
    }

    /// A copy of the user bytes from user byte `from` on.
    pub fn user_bytes(&mut self, from: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len - from.min(self.len));
        let mut pos = 0;
        for s in self.slices_mut() {
            let end = pos + s.len();
            if end > from {
                v.extend_from_slice(&s[from.saturating_sub(pos)..]);
            }
            pos = end;
        }
        v
    }
}

/// `crc32c(A)` advanced over [`SLICE_STRIDE`] more bytes as if they were zeros, in GF(2) (the
/// linear part of CRC concatenation): `crc32c(A || S) = crc_shift_stride(crc32c(A)) ^
/// crc32c(S)` for any `S` of `SLICE_STRIDE` bytes. Four table look-ups.
pub fn crc_shift_stride(crc: u32) -> u32 {
    static TABLES: std::sync::OnceLock<[[u32; 256]; 4]> = std::sync::OnceLock::new();
    let t = TABLES.get_or_init(|| {
        // The operator is linear: its value on each bit, from the crate's (slow, general)
        // combine with an all-zero second CRC, then the sums for every byte value.
        let basis: Vec<u32> = (0..32).map(|b| crc32c::crc32c_combine(1 << b, 0, SLICE_STRIDE)).collect();
        let mut t = [[0u32; 256]; 4];
        for (k, tk) in t.iter_mut().enumerate() {
            for (v, e) in tk.iter_mut().enumerate() {
                *e = (0..8).filter(|j| v >> j & 1 == 1).fold(0, |acc, j| acc ^ basis[8 * k + j]);
            }
        }
        t
    });
    t[0][(crc & 0xff) as usize]
        ^ t[1][(crc >> 8 & 0xff) as usize]
        ^ t[2][(crc >> 16 & 0xff) as usize]
        ^ t[3][(crc >> 24) as usize]
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
    fn encoding_into_a_dirty_buffer_writes_every_byte() {
        let id = ChunkId([9; 24]);
        let mut buf = vec![0xa5u8; 3 << 20];
        for n in [1usize, 4095, 4096, 4097, 8192, 100_000, 1 << 20] {
            let data: Vec<u8> = (0..n).map(|i| (i * 31 + n) as u8).collect();
            let want = encode_data(&id, 12345, &data, 7, 2, 0xdead_beef);
            let len = encode_data_into(&mut buf[4096..], &id, 12345, &data, 7, 2, 0xdead_beef);
            assert_eq!(&buf[4096..4096 + len], &want[..], "{n} user bytes");
            let h = decode_header(&want).unwrap();
            let p = &want[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
            assert_eq!(h.payload_crc, crc32c::crc32c(p), "{n} user bytes");
            buf.fill(0x5a);
        }
    }

    #[test]
    fn crc_shift_stride_concatenates() {
        let a: Vec<u8> = (0..777u32).map(|i| (i * 13) as u8).collect();
        let s: Vec<u8> = (0..SLICE_STRIDE as u32).map(|i| (i * 7 + 3) as u8).collect();
        let whole: Vec<u8> = a.iter().chain(&s).copied().collect();
        let got = crc_shift_stride(crc32c::crc32c(&a)) ^ crc32c::crc32c(&s);
        assert_eq!(got, crc32c::crc32c(&whole));
        assert_eq!(crc_shift_stride(0), 0);
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
