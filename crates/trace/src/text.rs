//! The machinery every line-oriented reader shares: a buffered line splitter that never
//! allocates per line, field cursors, hand-written number parsers, and the generic
//! [`TextReader`] that turns a [`LineFormat`] into a [`TraceReader`].
//!
//! Numbers are parsed by hand because the MSR-style CSVs are integer-parse bound (see
//! `cache-systems.md` §6); `str::parse` would need a UTF-8 check and a `&str` per field.

use crate::{Request, TraceError, TraceReader};
use std::borrow::Cow;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

/// Bytes read from the input at a time; also the longest line accepted. Large enough that a
/// read system call costs nothing per line, small enough that `mix` can hold hundreds of
/// readers open at once.
pub(crate) const BUF_SIZE: usize = 512 * 1024;

/// How long a value may be when quoted in an error (the `TraceError::Parse` contract).
const MAX_VALUE_CHARS: usize = 64;

/// Streams lines out of a reader with one fixed buffer.
pub(crate) struct LineSource {
    inner: Box<dyn Read + Send>,
    pub(crate) buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// 1-based number of the line most recently returned (0 before the first).
    pub(crate) line: u64,
    pub(crate) path: PathBuf,
}

impl LineSource {
    /// `prefix` holds bytes already taken from `inner` (format sniffing); they come first.
    pub(crate) fn new(prefix: Vec<u8>, inner: Box<dyn Read + Send>, path: PathBuf) -> LineSource {
        let end = prefix.len();
        let mut buf = prefix;
        if buf.len() < BUF_SIZE {
            buf.resize(BUF_SIZE, 0);
        }
        LineSource { inner, buf, start: 0, end, eof: false, line: 0, path }
    }

    /// The byte range in `self.buf` of the next line, without its `\n` or `\r\n`.
    #[inline]
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, usize)>, TraceError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let a = self.start;
                let mut b = a + i;
                self.start = b + 1;
                self.line += 1;
                if b > a && self.buf[b - 1] == b'\r' {
                    b -= 1;
                }
                return Ok(Some((a, b)));
            }
            if self.eof {
                if self.start < self.end {
                    let a = self.start;
                    let mut b = self.end;
                    self.start = self.end;
                    self.line += 1;
                    if self.buf[b - 1] == b'\r' {
                        b -= 1;
                    }
                    return Ok(Some((a, b)));
                }
                return Ok(None);
            }
            self.refill()?;
        }
    }

    #[cold]
    fn refill(&mut self) -> Result<(), TraceError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            return Err(TraceError::Parse {
                path: self.path.clone(),
                line: self.line + 1,
                field: "line",
                value: quote(&self.buf[..MAX_VALUE_CHARS]),
                reason: format!("line longer than {} KiB (is this really a text trace?)", BUF_SIZE / 1024),
            });
        }
        let n = read_some(&mut *self.inner, &mut self.buf[self.end..], &self.path)?;
        if n == 0 {
            self.eof = true;
        }
        self.end += n;
        Ok(())
    }
}

/// One `read` call, retried on `Interrupted`, with the error naming the file.
pub(crate) fn read_some(r: &mut (dyn Read + Send), buf: &mut [u8], path: &Path) -> Result<usize, TraceError> {
    loop {
        match r.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(TraceError::Io { path: path.to_path_buf(), source: e }),
        }
    }
}

/// A value as it appears in an error message: lossy UTF-8, at most 64 characters.
pub(crate) fn quote(v: &[u8]) -> String {
    let s = String::from_utf8_lossy(v);
    if s.chars().count() <= MAX_VALUE_CHARS {
        s.into_owned()
    } else {
        let mut t: String = s.chars().take(MAX_VALUE_CHARS - 1).collect();
        t.push('…');
        t
    }
}

/// What one line means.
pub(crate) enum Parsed {
    /// A request.
    Req(Request),
    /// A valid line that is not a request and says nothing about the format (header, blank
    /// line, blkparse summary).
    Ignore,
    /// A valid record that is not a request of interest (a blkparse event of another action);
    /// not counted anywhere.
    Other,
    /// A valid record we cannot turn into a request (unsupported SCSI command, blkparse flush
    /// without sectors); counted in `skipped`.
    Unsupported,
}

/// Why a line was refused: the field and its value, and what was expected. The reader adds
/// the file and line number.
#[derive(Debug)]
pub(crate) struct FieldError {
    pub(crate) field: &'static str,
    pub(crate) value: String,
    pub(crate) reason: Cow<'static, str>,
}

impl FieldError {
    #[cold]
    pub(crate) fn new(field: &'static str, value: &[u8], reason: impl Into<Cow<'static, str>>) -> FieldError {
        FieldError { field, value: quote(value), reason: reason.into() }
    }

    #[cold]
    pub(crate) fn missing(field: &'static str) -> FieldError {
        FieldError { field, value: String::new(), reason: "missing field (line ends early)".into() }
    }

    pub(crate) fn at(self, path: &Path, line: u64) -> TraceError {
        TraceError::Parse {
            path: path.to_path_buf(),
            line,
            field: self.field,
            value: self.value,
            reason: self.reason.into_owned(),
        }
    }
}

/// A line-oriented trace format.
pub(crate) trait LineFormat: Send {
    /// Short name, as in [`crate::Format`].
    const NAME: &'static str;
    /// Interprets one line (without its newline; never empty or all blanks). `line` is the
    /// 1-based line number.
    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Parsed, FieldError>;
}

/// A [`TraceReader`] over any [`LineFormat`]: owns the line splitter, the volume filter and
/// the skip-bad-lines policy so that formats only parse.
pub(crate) struct TextReader<F> {
    src: LineSource,
    fmt: F,
    volume: Option<u32>,
    skip_bad: bool,
    skipped: u64,
    filtered: u64,
}

impl<F: LineFormat> TextReader<F> {
    pub(crate) fn new(src: LineSource, fmt: F, volume: Option<u32>, skip_bad: bool) -> Self {
        TextReader { src, fmt, volume, skip_bad, skipped: 0, filtered: 0 }
    }
}

impl<F: LineFormat> TraceReader for TextReader<F> {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            let Some((a, b)) = self.src.next_line()? else { return Ok(None) };
            let line = &self.src.buf[a..b];
            if is_blank(line) {
                continue;
            }
            match self.fmt.parse(line, self.src.line) {
                Ok(Parsed::Req(r)) => {
                    if let Some(v) = self.volume {
                        if r.volume != v {
                            self.filtered += 1;
                            continue;
                        }
                    }
                    return Ok(Some(r));
                }
                Ok(Parsed::Ignore | Parsed::Other) => {}
                Ok(Parsed::Unsupported) => self.skipped += 1,
                Err(_) if self.skip_bad => self.skipped += 1,
                Err(e) => return Err(e.at(&self.src.path, self.src.line)),
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
        F::NAME
    }
}

#[inline]
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.is_empty() || (line[0].is_ascii_whitespace() && line.iter().all(|b| b.is_ascii_whitespace()))
}

/// Walks the fields of one line.
pub(crate) struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    pub(crate) fn new(s: &'a [u8]) -> Self {
        Cursor { s, i: 0 }
    }

    /// The next `sep`-separated field, trimmed of blanks; `None` once the line is used up.
    #[inline]
    pub(crate) fn field(&mut self, sep: u8) -> Option<&'a [u8]> {
        if self.i > self.s.len() {
            return None;
        }
        let rest = &self.s[self.i..];
        let n = rest.iter().position(|&b| b == sep).unwrap_or(rest.len());
        self.i += n + 1;
        Some(trim(&rest[..n]))
    }

    /// Like [`Cursor::field`] but a missing field is an error naming it.
    #[inline]
    pub(crate) fn req_field(&mut self, sep: u8, name: &'static str) -> Result<&'a [u8], FieldError> {
        self.field(sep).ok_or_else(|| FieldError::missing(name))
    }

    /// The next blank-separated token; `None` at the end of the line.
    #[inline]
    pub(crate) fn token(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        let mut i = self.i.min(s.len());
        while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
            i += 1;
        }
        if i == s.len() {
            self.i = i;
            return None;
        }
        let a = i;
        while i < s.len() && s[i] != b' ' && s[i] != b'\t' {
            i += 1;
        }
        self.i = i;
        Some(&s[a..i])
    }

    /// Like [`Cursor::token`] but a missing token is an error naming it.
    #[inline]
    pub(crate) fn req_token(&mut self, name: &'static str) -> Result<&'a [u8], FieldError> {
        self.token().ok_or_else(|| FieldError::missing(name))
    }
}

#[inline]
pub(crate) fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// A decimal unsigned integer made only of digits (no sign, no blanks), without overflow.
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    if s.len() <= 19 {
        // 19 digits cannot overflow a u64, so the hot path needs no checks.
        let mut v: u64 = 0;
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + d as u64;
        }
        Some(v)
    } else {
        let mut v: u64 = 0;
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(d as u64)?;
        }
        Some(v)
    }
}

/// Per-byte flags (bit 7 of each byte) marking the bytes of `x` that are not ASCII digits.
/// Computed without carries between bytes, so every lane is exact.
#[inline]
fn nondigit_mask(x: u64) -> u64 {
    const HI: u64 = 0x8080_8080_8080_8080;
    let low7 = x & !HI;
    let above_9 = low7.wrapping_add(0x4646_4646_4646_4646) & HI; // byte >= 0x3a
    let at_least_0 = low7.wrapping_add(0x5050_5050_5050_5050) & HI; // byte >= 0x30
    (x & HI) | above_9 | (!at_least_0 & HI)
}

/// The value of 8 ASCII digits loaded little endian (first digit in the lowest byte); bytes
/// already reduced to `0..=9` also work, and zero bytes in the low lanes act as leading zeros.
#[inline]
fn eight_digits(x: u64) -> u64 {
    let v = x & 0x0f0f_0f0f_0f0f_0f0f;
    let v = (v.wrapping_mul(10 << 8 | 1)) >> 8;
    let v = ((v & 0x00ff_00ff_00ff_00ff).wrapping_mul(100 << 16 | 1)) >> 16;
    ((v & 0x0000_ffff_0000_ffff).wrapping_mul(10000 << 32 | 1)) >> 32
}

const POW10: [u64; 9] = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

impl<'a> Cursor<'a> {
    /// Fast path for an unsigned decimal field ending at `sep` or the end of the line: scans and
    /// converts 8 digits per step. Returns `None`, without moving, for anything unusual (blanks,
    /// an empty field, more than 19 digits, a stray character) so the caller can fall back to
    /// [`Cursor::field`] and report the error precisely.
    #[inline]
    pub(crate) fn fast_u64(&mut self, sep: u8) -> Option<u64> {
        let s = self.s;
        let start = self.i;
        let mut i = start;
        let mut v: u64 = 0;
        loop {
            if let Some(chunk) = s.get(i..i + 8) {
                let x = u64::from_le_bytes(chunk.try_into().ok()?);
                let m = nondigit_mask(x);
                if m == 0 {
                    v = v.wrapping_mul(100_000_000).wrapping_add(eight_digits(x));
                    i += 8;
                    continue;
                }
                let k = (m.trailing_zeros() / 8) as usize;
                if k > 0 {
                    v = v.wrapping_mul(POW10[k]).wrapping_add(eight_digits(x << (8 * (8 - k))));
                }
                i += k;
                break;
            }
            while let Some(&b) = s.get(i) {
                if !b.is_ascii_digit() {
                    break;
                }
                v = v.wrapping_mul(10).wrapping_add((b - b'0') as u64);
                i += 1;
            }
            break;
        }
        let digits = i - start;
        if digits == 0 || digits > 19 {
            return None;
        }
        match s.get(i) {
            None => self.i = i + 1,
            Some(&b) if b == sep => self.i = i + 1,
            Some(_) => return None,
        }
        Some(v)
    }

    /// An unsigned decimal field, through [`Cursor::fast_u64`] when possible.
    #[inline]
    pub(crate) fn u64_field(&mut self, sep: u8, name: &'static str) -> Result<u64, FieldError> {
        if let Some(v) = self.fast_u64(sep) {
            return Ok(v);
        }
        u64_field(self.req_field(sep, name)?, name)
    }

    /// An unsigned decimal field that must fit 32 bits.
    #[inline]
    pub(crate) fn u32_field(&mut self, sep: u8, name: &'static str) -> Result<u32, FieldError> {
        match self.fast_u64(sep) {
            Some(v) => u32::try_from(v).map_err(|_| num_error(name, v, "larger than 4294967295")),
            None => u32_field(self.req_field(sep, name)?, name),
        }
    }
}

/// Hexadecimal with an optional `0x`/`0X` prefix.
pub(crate) fn parse_hex(s: &[u8]) -> Option<u64> {
    let s = match s {
        [b'0', b'x' | b'X', rest @ ..] => rest,
        _ => s,
    };
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// A non-negative decimal number times `10^scale`, truncated to an integer: `"1.5"` with
/// scale 3 is 1500. Done in integers so nanosecond timestamps keep every digit an `f64` would
/// lose; exponent forms (`1e-3`) fall back to `f64`.
pub(crate) fn parse_scaled(s: &[u8], scale: u32) -> Option<u64> {
    let mult = 10u64.checked_pow(scale)?;
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(p) => (&s[..p], &s[p + 1..]),
        None => (s, &s[s.len()..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let whole = if int.is_empty() { Some(0) } else { parse_u64(int) };
    let frac_ok = frac.iter().all(u8::is_ascii_digit);
    match whole {
        Some(w) if frac_ok => {
            let mut f: u64 = 0;
            for k in 0..scale as usize {
                f = f * 10 + frac.get(k).map_or(0, |&b| (b - b'0') as u64);
            }
            w.checked_mul(mult)?.checked_add(f)
        }
        _ => {
            let t = std::str::from_utf8(s).ok()?;
            if !t.bytes().any(|b| b == b'e' || b == b'E') || t.starts_with(['-', '+']) {
                return None;
            }
            let v: f64 = t.parse().ok()?;
            let scaled = v * mult as f64;
            // 1.8e19 is just under u64::MAX; larger values would saturate silently.
            (scaled.is_finite() && (0.0..1.8e19).contains(&scaled)).then_some(scaled as u64)
        }
    }
}

/// `count * unit` as a `u64`, or an error naming the field when it overflows.
#[inline]
pub(crate) fn scale_field(v: u64, unit: u64, field: &'static str) -> Result<u64, FieldError> {
    v.checked_mul(unit).ok_or_else(|| num_error(field, v, "too large (overflows 64 bits when converted)"))
}

/// A byte length that must fit a request's `u32`.
#[inline]
pub(crate) fn len_u32(v: u64, field: &'static str) -> Result<u32, FieldError> {
    u32::try_from(v).map_err(|_| num_error(field, v, "request larger than 4 GiB"))
}

/// A length in `unit`-byte sectors as a request's byte length.
#[inline]
pub(crate) fn sectors_len(n: u64, unit: u64, field: &'static str) -> Result<u32, FieldError> {
    match n.checked_mul(unit).map(u32::try_from) {
        Some(Ok(len)) => Ok(len),
        _ => Err(num_error(field, n, "request larger than 4 GiB")),
    }
}

/// Rejects requests whose end would overflow a `u64` byte address (they would break every
/// consumer's block arithmetic). `shown` is the field's value as the trace has it.
#[inline]
pub(crate) fn check_end(offset: u64, len: u32, field: &'static str, shown: u64) -> Result<(), FieldError> {
    match offset.checked_add(len as u64) {
        Some(_) => Ok(()),
        None => Err(num_error(field, shown, "offset + length overflows 64 bits")),
    }
}

/// An error about a field already parsed to a number (its text was plain digits, so the
/// number is how it appeared).
#[cold]
pub(crate) fn num_error(field: &'static str, v: u64, reason: &'static str) -> FieldError {
    FieldError { field, value: v.to_string(), reason: reason.into() }
}

/// Parses an unsigned decimal field or reports it.
#[inline]
pub(crate) fn u64_field(s: &[u8], field: &'static str) -> Result<u64, FieldError> {
    parse_u64(s).ok_or_else(|| bad_uint(s, field))
}

/// Parses an unsigned decimal field that must fit 32 bits.
#[inline]
pub(crate) fn u32_field(s: &[u8], field: &'static str) -> Result<u32, FieldError> {
    match parse_u64(s) {
        Some(v) => u32::try_from(v).map_err(|_| FieldError::new(field, s, "larger than 4294967295")),
        None => Err(bad_uint(s, field)),
    }
}

#[cold]
fn bad_uint(s: &[u8], field: &'static str) -> FieldError {
    if s.is_empty() {
        FieldError::new(field, s, "empty field, expected an unsigned integer")
    } else if s.iter().all(u8::is_ascii_digit) {
        FieldError::new(field, s, "integer too large")
    } else {
        FieldError::new(field, s, "expected an unsigned integer")
    }
}

/// Whether a line looks like a CSV header (starts with a letter) rather than data.
#[inline]
pub(crate) fn looks_like_header(line: &[u8]) -> bool {
    trim(line).first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"12a"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_hex(b"2a"), Some(0x2a));
        assert_eq!(parse_hex(b"0x2A"), Some(0x2a));
        assert_eq!(parse_hex(b"0x"), None);
        assert_eq!(parse_hex(b"g"), None);
    }

    #[test]
    fn swar_fields_match_the_scalar_parser() {
        for line in [
            &b"128166372003061629,x"[..],
            b"1,2",
            b"12345678,",
            b"123456789",
            b"9999999999999999999",
            b"18446744073709551615",
            b"0000000000000000001",
            b"1234567",
            b"12345678901234567890123",
            b" 12,",
            b"12 ,",
            b"12a,",
            b",",
            b"",
            b"12\xff45678,",
            b"4567/,",
            b"4567:,",
        ] {
            let mut c = Cursor::new(line);
            let fast = c.fast_u64(b',');
            let mut g = Cursor::new(line);
            let raw = line.split(|&b| b == b',').next().unwrap();
            let expect = if raw.len() <= 19 { parse_u64(raw) } else { None };
            g.field(b',');
            assert_eq!(fast, expect, "{:?}", String::from_utf8_lossy(line));
            if fast.is_some() {
                assert_eq!(c.field(b','), g.field(b','), "position after the field");
            }
        }
    }

    #[test]
    fn scaled_decimals() {
        assert_eq!(parse_scaled(b"0.009507758", 9), Some(9_507_758));
        assert_eq!(parse_scaled(b"12", 6), Some(12_000_000));
        assert_eq!(parse_scaled(b"1.5", 3), Some(1500));
        assert_eq!(parse_scaled(b".25", 2), Some(25));
        assert_eq!(parse_scaled(b"1.23456789", 3), Some(1234), "extra digits truncate");
        assert_eq!(parse_scaled(b"1e-3", 6), Some(1000));
        assert_eq!(parse_scaled(b"1.", 1), Some(10));
        assert_eq!(parse_scaled(b".", 1), None);
        assert_eq!(parse_scaled(b"-1.0", 1), None);
        assert_eq!(parse_scaled(b"-1e3", 1), None);
        assert_eq!(parse_scaled(b"1.x", 1), None);
        assert_eq!(parse_scaled(b"1e400", 1), None);
        assert_eq!(parse_scaled(b"99999999999999999999", 0), None);
    }

    #[test]
    fn cursors() {
        let mut c = Cursor::new(b"a, b,,c");
        assert_eq!(c.field(b','), Some(&b"a"[..]));
        assert_eq!(c.field(b','), Some(&b"b"[..]));
        assert_eq!(c.field(b','), Some(&b""[..]));
        assert_eq!(c.field(b','), Some(&b"c"[..]));
        assert_eq!(c.field(b','), None);
        let mut t = Cursor::new(b"  8,0  3\t11 ");
        assert_eq!(t.token(), Some(&b"8,0"[..]));
        assert_eq!(t.token(), Some(&b"3"[..]));
        assert_eq!(t.token(), Some(&b"11"[..]));
        assert_eq!(t.token(), None);
    }

    #[test]
    fn quotes_are_truncated() {
        let long = vec![b'x'; 100];
        assert_eq!(quote(&long).chars().count(), 64);
        assert_eq!(quote(b"\xff"), "\u{fffd}");
    }

    #[test]
    fn lines_split_across_refills_and_crlf() {
        let data = b"a\r\nbb\n\nccc".to_vec();
        let mut src = LineSource::new(Vec::new(), Box::new(std::io::Cursor::new(data)), "t".into());
        let mut got = Vec::new();
        while let Some((a, b)) = src.next_line().unwrap() {
            got.push((src.line, src.buf[a..b].to_vec()));
        }
        assert_eq!(got, vec![(1, b"a".to_vec()), (2, b"bb".to_vec()), (3, vec![]), (4, b"ccc".to_vec())]);
    }

    #[test]
    fn overlong_line_is_an_error() {
        let data = vec![b'x'; BUF_SIZE + 10];
        let mut src = LineSource::new(Vec::new(), Box::new(std::io::Cursor::new(data)), "t".into());
        let e = src.next_line().unwrap_err().to_string();
        assert!(e.contains("t:1: field line"), "{e}");
    }
}
