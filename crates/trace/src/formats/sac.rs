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

    #[inline]
    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Parsed, FieldError> {
        match fast(line, lineno) {
            Some(r) => Ok(Parsed::Req(r)),
            None => general(line, lineno),
        }
    }
}

/// The request of a line in the artifact's own spelling — `0` or `1`, one space, 1 to 19
/// digits, one space, 1 to 19 digits, nothing after — read in one pass; `None` for any other
/// line (signs, tabs, several spaces, trailing blanks or fields, errors), which [`general`]
/// reads. Where this reads a line, `general` gives the same request (an exhaustive test over
/// lines built from such pieces checks).
#[inline]
fn fast(line: &[u8], lineno: u64) -> Option<Request> {
    let op = match line {
        [b'0', b' ', ..] => Op::Read,
        [b'1', b' ', ..] => Op::Write,
        _ => return None,
    };
    let mut i = 2;
    while i < line.len() && line[i].is_ascii_digit() {
        i += 1;
    }
    // Up to 19 digits, so that it is an integer to the general path too (no overflow).
    if i == 2 || i > 21 || line.get(i) != Some(&b' ') {
        return None;
    }
    let digits = &line[i + 1..];
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut block = 0u64;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        block = block * 10 + d as u64;
    }
    let offset = block.checked_mul(BLOCK_SIZE)?;
    offset.checked_add(BLOCK_SIZE)?;
    Some(Request { time_ns: lineno - 1, volume: 0, op, offset, len: BLOCK_SIZE as u32 })
}

/// Any line, field by field, with the error naming the field that is wrong.
fn general(line: &[u8], lineno: u64) -> Result<Parsed, FieldError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A parse's outcome in a comparable form: the request, `None` for a line that is not one,
    /// or the error as it would be reported.
    fn outcome(p: Result<Parsed, FieldError>) -> Result<Option<Request>, String> {
        match p {
            Ok(Parsed::Req(r)) => Ok(Some(r)),
            Ok(_) => Ok(None),
            Err(e) => Err(format!("{e:?}")),
        }
    }

    const OPS: [&str; 6] = ["0", "1", "2", "-1", "", "10"];
    const SEPS: [&str; 4] = [" ", "  ", "\t", ""];
    const MIDS: [&str; 7] = ["0", "-3", "007", "1234567890123456789", "12345678901234567890123", "x", ""];
    const BLOCKS: [&str; 9] = [
        "5",
        "0",
        "0007",
        "4503599627370495",     // the largest block whose offset and end fit 64 bits
        "4503599627370496",     // its offset overflows
        "1234567890123456789",  // 19 digits, offset overflows
        "12345678901234567890", // 20 digits
        "x5",
        "",
    ];
    const TAILS: [&str; 5] = ["", " ", " 9", "\t", " #"];

    /// Every line built from these pieces (the artifact's spelling, and every way to leave it:
    /// 30,240 lines) reads the same through the one-pass path as through the general one.
    #[test]
    fn the_fast_path_reads_as_the_general_one() {
        let mut lineno = 0;
        for op in OPS {
            for s1 in SEPS {
                for mid in MIDS {
                    for s2 in SEPS {
                        for block in BLOCKS {
                            for tail in TAILS {
                                lineno += 1;
                                let line = format!("{op}{s1}{mid}{s2}{block}{tail}");
                                assert_eq!(
                                    outcome(Sac.parse(line.as_bytes(), lineno)),
                                    outcome(general(line.as_bytes(), lineno)),
                                    "{line:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(lineno, 30_240);
    }

    #[test]
    fn the_artifacts_own_lines_take_the_fast_path() {
        let r = fast(b"1 0 7283759", 3).expect("read in one pass");
        assert_eq!(r, Request { time_ns: 2, volume: 0, op: Op::Write, offset: 7283759 * 4096, len: 4096 });
        assert_eq!(fast(b"0 12 0", 1).map(|r| r.op), Some(Op::Read));
        for other in [&b"1  0 5"[..], b"1 -1 5", b"1 0 5 ", b"1\t0 5", b"1 0 4503599627370496", b"2 0 5"] {
            assert!(fast(other, 1).is_none(), "{:?}", String::from_utf8_lossy(other));
        }
    }
}
