//! CloudPhysics VMware vSCSI traces (Waldspurger et al., SHARDS, FAST'15), binary and CSV.
//!
//! Binary record layouts, little endian, as libCacheSim declares them
//! (`1a1a11a/libCacheSim`, `libCacheSim/traceReader/customizedReader/vscsi.h`,
//! `trace_v1_record_t` / `trace_v2_record_t`, natural C alignment):
//!
//! ```text
//! v1, 32 bytes: 0 u32 sn | 4 u32 len | 8 u32 nSG | 12 u16 cmd | 14 u16 ver | 16 u64 lbn | 24 u64 ts
//! v2, 40 bytes: 0 u16 cmd | 2 u16 ver | 4 u32 sn | 8 u32 len | 12 u32 nSG | 16 u64 lbn | 24 u64 ts | 32 u64 rt
//! ```
//!
//! The version is `ver >> 8`. Like libCacheSim's `test_vscsi_version`, the version is detected
//! from the first two records: both must read as v2 at the v2 position, else both as v1 at the
//! v1 position (a lone record is tested alone). Every later record must carry the same version.
//! `len` is bytes, `lbn` 512-byte sectors, `ts` microseconds. SCSI READ(6/10/12/16) and
//! WRITE(6/10/12/16) become requests; other commands are counted in `skipped`. No volume (0).
//!
//! The CSV form (as libCacheSim's sample ships it): `version,time,op,size,lbn` with time in
//! seconds (fractional allowed), op the SCSI opcode in hex, size bytes, lbn sectors.

use super::scsi_op;
use crate::records::{u16_at, u32_at, u64_at, RecordSource};
use crate::text::{
    check_end, looks_like_header, parse_hex, parse_scaled, scale_field, u32_field, u64_field, Cursor,
    FieldError, LineFormat, Parsed,
};
use crate::{Request, TraceError, TraceReader};

/// Record sizes of v1 and v2.
pub(crate) const V1_SIZE: usize = 32;
pub(crate) const V2_SIZE: usize = 40;

/// The vscsi version of the data starting at `head` (the first bytes of a file), if any.
pub(crate) fn detect_version(head: &[u8]) -> Option<u8> {
    let test = |size: usize, ver_at: usize, want: u16| {
        let n = (head.len() / size).min(2);
        n > 0 && (0..n).all(|i| u16_at(head, i * size + ver_at) >> 8 == want)
    };
    if test(V2_SIZE, 2, 2) {
        Some(2)
    } else if test(V1_SIZE, 14, 1) {
        Some(1)
    } else {
        None
    }
}

/// Reads vscsi binary traces.
pub(crate) struct VscsiReader {
    src: RecordSource,
    version: u8,
    size: usize,
    volume: Option<u32>,
    skip_bad: bool,
    skipped: u64,
    filtered: u64,
}

impl VscsiReader {
    /// `src` must start at the first record; the version is detected from it.
    pub(crate) fn new(
        mut src: RecordSource,
        volume: Option<u32>,
        skip_bad: bool,
    ) -> Result<Self, TraceError> {
        let have = src.fill(2 * V2_SIZE)?;
        let head = &src.buf[src.start..src.start + have];
        // Shorter than one record: let the first `next` report the truncation.
        let version = if head.len() < V1_SIZE {
            1
        } else {
            detect_version(head).ok_or_else(|| TraceError::Format {
                path: src.path.clone(),
                reason: "not a vscsi trace: the first records carry neither version 1 (u16 at byte 14) nor version 2 (u16 at byte 2)".into(),
            })?
        };
        let size = if version == 1 { V1_SIZE } else { V2_SIZE };
        Ok(VscsiReader { src, version, size, volume, skip_bad, skipped: 0, filtered: 0 })
    }

    fn decode(&self, r: &[u8]) -> Result<Option<Request>, FieldError> {
        let (cmd, ver, len, lbn, ts) = if self.version == 1 {
            (u16_at(r, 12), u16_at(r, 14), u32_at(r, 4), u64_at(r, 16), u64_at(r, 24))
        } else {
            (u16_at(r, 0), u16_at(r, 2), u32_at(r, 8), u64_at(r, 16), u64_at(r, 24))
        };
        if (ver >> 8) as u8 != self.version {
            return Err(FieldError {
                field: "ver",
                value: format!("{ver:#06x}"),
                reason: format!("record version {} in a version {} trace", ver >> 8, self.version).into(),
            });
        }
        let Some(op) = scsi_op(cmd as u64) else { return Ok(None) };
        let num = |field: &'static str, v: u64, why: &'static str| FieldError {
            field,
            value: v.to_string(),
            reason: why.into(),
        };
        let offset = lbn.checked_mul(512).ok_or_else(|| num("lbn", lbn, "sector number too large"))?;
        offset.checked_add(len as u64).ok_or_else(|| num("lbn", lbn, "offset + length overflows 64 bits"))?;
        let time_ns = ts.checked_mul(1000).ok_or_else(|| num("ts", ts, "timestamp too large"))?;
        Ok(Some(Request { time_ns, volume: 0, op, offset, len }))
    }
}

impl TraceReader for VscsiReader {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            let Some(at) = self.src.next(self.size)? else { return Ok(None) };
            match self.decode(&self.src.buf[at..at + self.size]) {
                Ok(Some(r)) => {
                    if self.volume.is_some_and(|v| v != r.volume) {
                        self.filtered += 1;
                        continue;
                    }
                    return Ok(Some(r));
                }
                Ok(None) => self.skipped += 1,
                Err(_) if self.skip_bad => self.skipped += 1,
                Err(e) => return Err(e.at(&self.src.path, self.src.taken)),
            }
        }
    }
    fn skipped(&self) -> u64 {
        self.skipped
    }
    fn filtered(&self) -> u64 {
        self.filtered
    }
    fn format_name(&self) -> &'static str {
        "vscsi"
    }
}

/// The CSV form.
pub(crate) struct VscsiCsv;

impl LineFormat for VscsiCsv {
    const NAME: &'static str = "vscsi-csv";

    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Parsed, FieldError> {
        if lineno == 1 && looks_like_header(line) {
            return Ok(Parsed::Ignore);
        }
        let mut c = Cursor::new(line);
        u32_field(c.req_field(b',', "version")?, "version")?;
        let t = c.req_field(b',', "time")?;
        let time_ns = parse_scaled(t, 9)
            .ok_or_else(|| FieldError::new("time", t, "expected seconds like 5633898 or 1.25"))?;
        let op_raw = c.req_field(b',', "op")?;
        let cmd = parse_hex(op_raw)
            .ok_or_else(|| FieldError::new("op", op_raw, "expected a hexadecimal SCSI opcode like 2a"))?;
        let size_raw = c.req_field(b',', "size")?;
        let len = u32_field(size_raw, "size")?;
        let lbn_raw = c.req_field(b',', "lbn")?;
        let lbn = u64_field(lbn_raw, "lbn")?;
        if let Some(extra) = c.field(b',') {
            return Err(FieldError::new("lbn", extra, "unexpected 6th field (vscsi CSV lines have 5)"));
        }
        let Some(op) = scsi_op(cmd) else { return Ok(Parsed::Unsupported) };
        let offset = scale_field(lbn, 512, "lbn")?;
        check_end(offset, len, "lbn", lbn)?;
        Ok(Parsed::Req(Request { time_ns, volume: 0, op, offset, len }))
    }
}
