//! DiskSim's ASCII trace (`disksim_iotrace.c`, `iotrace_ascii_get_ioreq_event`:
//! `"%lf %d %d %d %x"`) and MQSim's variant of it.
//!
//! DiskSim: `time devno blkno bcount flags`, time in milliseconds (fractional), block number
//! and count in 512-byte sectors, flags in hex with bit 0 (`READ`) set for reads.
//!
//! MQSim (`src/host/IO_Flow_Trace_Based.cpp` and the traces it ships): `time_ns device sector
//! nsectors type`, integer nanoseconds, type `0` = write and `1` = read. Both read only the
//! first five fields of a line, so extra trailing fields are allowed here too.

use crate::text::{
    check_end, parse_hex, parse_scaled, scale_field, sectors_len, u32_field, u64_field, Cursor, FieldError,
    LineFormat, Parsed,
};
use crate::Request;
use shingled_core::Op;

/// Which of the two dialects.
#[derive(Clone, Copy)]
pub(crate) enum Dialect {
    Disksim,
    Mqsim,
}

pub(crate) struct Disksim;
pub(crate) struct Mqsim;

fn parse_line(line: &[u8], dialect: Dialect) -> Result<Parsed, FieldError> {
    // Errors use each format's own column names.
    let [f_time, f_dev, f_sec, f_n, f_flags] = match dialect {
        Dialect::Disksim => ["time", "devno", "blkno", "bcount", "flags"],
        Dialect::Mqsim => ["time", "device", "sector", "nsectors", "type"],
    };
    let mut c = Cursor::new(line);
    let t = c.req_token(f_time)?;
    let time_ns = match dialect {
        Dialect::Disksim => {
            parse_scaled(t, 6).ok_or_else(|| FieldError::new(f_time, t, "expected milliseconds like 12.5"))?
        }
        Dialect::Mqsim => u64_field(t, f_time)?,
    };
    let volume = u32_field(c.req_token(f_dev)?, f_dev)?;
    let sector = u64_field(c.req_token(f_sec)?, f_sec)?;
    let nsectors = u64_field(c.req_token(f_n)?, f_n)?;
    let f = c.req_token(f_flags)?;
    let op = match dialect {
        Dialect::Disksim => match parse_hex(f) {
            Some(flags) if flags & 1 == 1 => Op::Read,
            Some(_) => Op::Write,
            None => return Err(FieldError::new(f_flags, f, "expected hexadecimal flags (bit 0 = read)")),
        },
        Dialect::Mqsim => match f {
            b"0" => Op::Write,
            b"1" => Op::Read,
            _ => return Err(FieldError::new(f_flags, f, "expected type 0 (write) or 1 (read)")),
        },
    };
    let offset = scale_field(sector, 512, f_sec)?;
    let len = sectors_len(nsectors, 512, f_n)?;
    check_end(offset, len, f_sec, sector)?;
    Ok(Parsed::Req(Request { time_ns, volume, op, offset, len }))
}

impl LineFormat for Disksim {
    const NAME: &'static str = "disksim";
    fn parse(&mut self, line: &[u8], _lineno: u64) -> Result<Parsed, FieldError> {
        parse_line(line, Dialect::Disksim)
    }
}

impl LineFormat for Mqsim {
    const NAME: &'static str = "mqsim";
    fn parse(&mut self, line: &[u8], _lineno: u64) -> Result<Parsed, FieldError> {
        parse_line(line, Dialect::Mqsim)
    }
}
