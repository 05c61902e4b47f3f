//! MSR Cambridge block traces (SNIA IOTTA set 388; Narayanan et al., "Write Off-Loading",
//! FAST'08): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! `Timestamp` is a Windows FILETIME (100 ns ticks since 1601), so `time_ns = ticks * 100`;
//! `Type` is `Read` or `Write` in any case; `Offset` and `Size` are bytes; `DiskNumber`
//! becomes the volume. `ResponseTime` must be present and numeric but is not used. A first
//! line starting with a letter is taken as a header.

use crate::text::{
    check_end, len_u32, looks_like_header, scale_field, Cursor, FieldError, LineFormat, Parsed,
};
use crate::Request;
use shingled_core::Op;

pub(crate) struct Msr;

impl LineFormat for Msr {
    const NAME: &'static str = "msr";

    #[inline]
    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Parsed, FieldError> {
        if lineno == 1 && looks_like_header(line) {
            return Ok(Parsed::Ignore);
        }
        let mut c = Cursor::new(line);
        let ticks = c.u64_field(b',', "Timestamp")?;
        c.req_field(b',', "Hostname")?;
        let volume = c.u32_field(b',', "DiskNumber")?;
        let ty = c.req_field(b',', "Type")?;
        let op = if ty.eq_ignore_ascii_case(b"write") {
            Op::Write
        } else if ty.eq_ignore_ascii_case(b"read") {
            Op::Read
        } else {
            return Err(FieldError::new("Type", ty, "expected Read or Write"));
        };
        let offset = c.u64_field(b',', "Offset")?;
        let len = len_u32(c.u64_field(b',', "Size")?, "Size")?;
        c.u64_field(b',', "ResponseTime")?;
        if let Some(extra) = c.field(b',') {
            return Err(FieldError::new("ResponseTime", extra, "unexpected 8th field (MSR lines have 7)"));
        }
        check_end(offset, len, "Offset", offset)?;
        let time_ns = scale_field(ticks, 100, "Timestamp")?;
        Ok(Parsed::Req(Request { time_ns, volume, op, offset, len }))
    }
}
