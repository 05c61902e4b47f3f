//! The SAC artifact's trace text (`cds-ruc/sac`, read by its `trace2call.c`): one 4 KiB page
//! per line as `<op> <int> <block>`, op `1` = write and `0` = read, block in 4 KiB units. The
//! middle integer is not used by SAC's replay and is ignored here (it must still be an
//! integer). The format has no timestamps, so `time_ns` is the 0-based line index.

use crate::text::{check_end, parse_u64, scale_field, u64_field, Cursor, FieldError, LineFormat, Parsed};
use crate::Request;
use shingled_core::{Op, BLOCK_SIZE};

pub(crate) struct Sac;

impl LineFormat for Sac {
    const NAME: &'static str = "sac";

    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Parsed, FieldError> {
        let mut c = Cursor::new(line);
        let op = match c.req_token("op")? {
            b"0" => Op::Read,
            b"1" => Op::Write,
            other => return Err(FieldError::new("op", other, "expected 0 (read) or 1 (write)")),
        };
        let mid = c.req_token("int")?;
        let digits = mid.strip_prefix(b"-").unwrap_or(mid);
        if parse_u64(digits).is_none() {
            return Err(FieldError::new("int", mid, "expected an integer"));
        }
        let block = u64_field(c.req_token("block")?, "block")?;
        if let Some(extra) = c.token() {
            return Err(FieldError::new("block", extra, "unexpected 4th field (SAC lines have 3)"));
        }
        let offset = scale_field(block, BLOCK_SIZE, "block")?;
        check_end(offset, BLOCK_SIZE as u32, "block", block)?;
        Ok(Parsed::Req(Request { time_ns: lineno - 1, volume: 0, op, offset, len: BLOCK_SIZE as u32 }))
    }
}
