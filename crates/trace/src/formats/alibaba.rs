//! Alibaba block traces (`alibaba/block-traces`, 2020): `device_id,opcode,offset,length,timestamp`
//! with opcode `R`/`W`, offset and length in bytes, timestamp in microseconds. `device_id`
//! becomes the volume. A first line starting with a letter is taken as a header.

use crate::text::{
    check_end, len_u32, looks_like_header, scale_field, u32_field, u64_field, Cursor, FieldError, LineFormat,
    Parsed,
};
use crate::Request;
use shingled_core::Op;

pub(crate) struct Alibaba;

impl LineFormat for Alibaba {
    const NAME: &'static str = "alibaba";

    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Parsed, FieldError> {
        if lineno == 1 && looks_like_header(line) {
            return Ok(Parsed::Ignore);
        }
        let mut c = Cursor::new(line);
        let volume = u32_field(c.req_field(b',', "device_id")?, "device_id")?;
        let op = match c.req_field(b',', "opcode")? {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            other => return Err(FieldError::new("opcode", other, "expected R or W")),
        };
        let off_raw = c.req_field(b',', "offset")?;
        let offset = u64_field(off_raw, "offset")?;
        let len_raw = c.req_field(b',', "length")?;
        let len = len_u32(u64_field(len_raw, "length")?, "length", len_raw)?;
        let ts_raw = c.req_field(b',', "timestamp")?;
        let us = u64_field(ts_raw, "timestamp")?;
        if let Some(extra) = c.field(b',') {
            return Err(FieldError::new("timestamp", extra, "unexpected 6th field (Alibaba lines have 5)"));
        }
        check_end(offset, len, "offset", off_raw)?;
        let time_ns = scale_field(us, 1000, "timestamp", ts_raw)?;
        Ok(Parsed::Req(Request { time_ns, volume, op, offset, len }))
    }
}
