//! `blkparse` default text output (blktrace's formatter, `blkparse(1)`):
//!
//! ```text
//!   8,0    3       11     0.009507758   697  D   W 223490 + 56 [kjournald]
//!   dev   cpu     seq     time (s.ns)   pid act rwbs sector + nsectors [process]
//! ```
//!
//! Only events whose action equals the chosen one (`D`, issued to the driver, by default; `C`
//! for completions or `Q` for queued requests are the other useful choices) become requests;
//! other events are valid and quietly passed over. RWBS decides the operation (`W` write, `R`
//! read); events of the chosen action that move no data (discards, bare flushes, `N` passthrough
//! commands, zero sectors) are counted in `skipped`. Sectors are 512 bytes. The volume is
//! `major << 20 | minor`, the kernel's `dev_t` encoding. The per-CPU and total summary blkparse
//! prints at the end (starting with `CPU0 (8,0):` or `Total (8,0):`) ends the events: every
//! line from there on is ignored.

use crate::text::{
    check_end, parse_scaled, parse_u64, scale_field, sectors_len, u64_field, Cursor, FieldError, LineFormat,
    Parsed,
};
use crate::Request;
use shingled_core::Op;

pub(crate) struct Blkparse {
    action: u8,
    in_summary: bool,
}

impl Blkparse {
    pub(crate) fn new(action: u8) -> Self {
        Blkparse { action, in_summary: false }
    }
}

fn is_summary_start(line: &[u8]) -> bool {
    let t = crate::text::trim(line);
    match t.strip_prefix(b"CPU") {
        Some(rest) => rest.first().is_some_and(u8::is_ascii_digit),
        None => t.starts_with(b"Total ("),
    }
}

fn parse_dev(tok: &[u8]) -> Option<u32> {
    let comma = memchr::memchr(b',', tok)?;
    let major = parse_u64(&tok[..comma])?;
    let minor = parse_u64(&tok[comma + 1..])?;
    // dev_t as the kernel packs it: 12 bits of major, 20 of minor.
    (major < (1 << 12) && minor < (1 << 20)).then_some(((major as u32) << 20) | minor as u32)
}

impl LineFormat for Blkparse {
    const NAME: &'static str = "blkparse";

    fn parse(&mut self, line: &[u8], _lineno: u64) -> Result<Parsed, FieldError> {
        if self.in_summary {
            return Ok(Parsed::Ignore);
        }
        let mut c = Cursor::new(line);
        let dev = c.req_token("device")?;
        let Some(volume) = parse_dev(dev) else {
            if is_summary_start(line) {
                self.in_summary = true;
                return Ok(Parsed::Ignore);
            }
            return Err(FieldError::new("device", dev, "expected major,minor (e.g. 8,0)"));
        };
        u64_field(c.req_token("cpu")?, "cpu")?;
        u64_field(c.req_token("sequence")?, "sequence")?;
        let t = c.req_token("time")?;
        let time_ns = parse_scaled(t, 9)
            .ok_or_else(|| FieldError::new("time", t, "expected seconds like 0.009507758"))?;
        u64_field(c.req_token("pid")?, "pid")?;
        let action = c.req_token("action")?;
        if action != [self.action] {
            return Ok(Parsed::Other);
        }
        let rwbs = c.req_token("rwbs")?;
        let op = if rwbs.contains(&b'W') {
            Op::Write
        } else if rwbs.contains(&b'R') {
            Op::Read
        } else {
            return Ok(Parsed::Unsupported);
        };
        let Some(sec_raw) = c.token().filter(|t| !t.starts_with(b"[")) else {
            return Ok(Parsed::Unsupported);
        };
        let sector = u64_field(sec_raw, "sector")?;
        match c.token() {
            Some(b"+") => {}
            Some(other) => {
                return Err(FieldError::new("nsectors", other, "expected '+ nsectors' after the sector"))
            }
            None => return Err(FieldError::missing("nsectors")),
        }
        let nsectors = u64_field(c.req_token("nsectors")?, "nsectors")?;
        if nsectors == 0 {
            return Ok(Parsed::Unsupported);
        }
        let offset = scale_field(sector, 512, "sector")?;
        let len = sectors_len(nsectors, 512, "nsectors")?;
        check_end(offset, len, "sector", sector)?;
        Ok(Parsed::Req(Request { time_ns, volume, op, offset, len }))
    }
}
