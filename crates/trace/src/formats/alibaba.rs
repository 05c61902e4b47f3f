//! Alibaba block traces (`alibaba/block-traces`, 2020): `device_id,opcode,offset,length,timestamp`
//! with opcode `R`/`W`, offset and length in bytes, timestamp in microseconds. `device_id`
//! becomes the volume. A first line starting with a letter is taken as a header.

use crate::text::{
    check_end, len_u32, looks_like_header, scale_field, Cursor, FieldError, LineFormat, Parsed,
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
        let volume = c.u32_field(b',', "device_id")?;
        let op = match c.req_field(b',', "opcode")? {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            other => return Err(FieldError::new("opcode", other, "expected R or W")),
        };
        let offset = c.u64_field(b',', "offset")?;
        let len = len_u32(c.u64_field(b',', "length")?, "length")?;
        let us = c.u64_field(b',', "timestamp")?;
        if let Some(extra) = c.field(b',') {
            return Err(FieldError::new("timestamp", extra, "unexpected 6th field (Alibaba lines have 5)"));
        }
        check_end(offset, len, "offset", offset)?;
        let time_ns = scale_field(us, 1000, "timestamp")?;
        Ok(Parsed::Req(Request { time_ns, volume, op, offset, len }))
    }
}
