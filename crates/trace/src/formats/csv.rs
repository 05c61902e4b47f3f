//! A generic delimited text trace whose columns are named by parameters, spelled as libCacheSim's
//! `-t "obj-id-col=2,time-col=1,obj-size-col=3,has-header=true,delimiter=,"` (its
//! `parse_reader_params` in `libCacheSim/bin/cli_reader_utils.c`).
//!
//! Columns are 1-based, as in libCacheSim. Keys (case-insensitive, `_` for `-`, `-field` for
//! `-col` accepted as libCacheSim does):
//!
//! * `obj-id-col` (required): the object id, a whole number unless `obj-id-is-num=false`, when
//!   any text is hashed to a 40-bit id (distinct texts may collide, rarely).
//! * `time-col`: seconds (fractions allowed); without it, the line index.
//! * `obj-size-col`: checked to be a whole number; each object is one 4 KiB block whatever its
//!   size (libCacheSim's `--ignore-obj-size 1`).
//! * `op-col` (ours; libCacheSim's CSV has none): `read`/`r`/`get`/`0` or
//!   `write`/`w`/`set`/`put`/`1`; without it every request has the op `op=read|write` names
//!   (read by default).
//! * `has-header` / `header`: `true` skips line 1; unset, line 1 is skipped when it starts with
//!   a letter or a quote.
//! * `delimiter`: one character (`,` by default); `\t` or `tab` for a tab.
//! * `next-access-col`, `cnt-col`, `obj-id-is-num`: accepted; the first two are ignored.
//!
//! Object `id` becomes the request `offset = id × 4096, len = 4096`. Fields are not quoted.

use crate::text::{parse_scaled, parse_u64, trim, FieldError, LineFormat, Parsed};
use crate::{Request, TraceError};
use shingled_core::Op;
use std::hash::{Hash, Hasher};

/// The parsed `key=value,…` parameters of a [`Csv`] trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CsvParams {
    pub(crate) obj_id_col: usize,
    pub(crate) time_col: Option<usize>,
    pub(crate) size_col: Option<usize>,
    pub(crate) op_col: Option<usize>,
    pub(crate) has_header: Option<bool>,
    pub(crate) delimiter: u8,
    pub(crate) id_is_num: bool,
    pub(crate) op: Op,
}

fn invalid(msg: String) -> TraceError {
    TraceError::Invalid(format!("trace parameters: {msg}"))
}

fn parse_bool(key: &str, v: &str) -> Result<bool, TraceError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "y" => Ok(true),
        "false" | "0" | "no" | "n" => Ok(false),
        _ => Err(invalid(format!("{key}={v:?}: expected true or false"))),
    }
}

fn parse_col(key: &str, v: &str) -> Result<usize, TraceError> {
    match v.trim().parse::<usize>() {
        Ok(c) if c >= 1 => Ok(c),
        _ => Err(invalid(format!("{key}={v:?}: expected a column number, 1 for the first column"))),
    }
}

/// Parses an op from a parameter value (`op=`).
pub(crate) fn parse_op_param(v: &str) -> Result<Op, TraceError> {
    op_of(v.trim().as_bytes()).ok_or_else(|| invalid(format!("op={v:?}: expected read or write")))
}

fn op_of(v: &[u8]) -> Option<Op> {
    match v.to_ascii_lowercase().as_slice() {
        b"read" | b"r" | b"get" | b"0" => Some(Op::Read),
        b"write" | b"w" | b"set" | b"put" | b"1" => Some(Op::Write),
        _ => None,
    }
}

/// Splits `key=value,key=value` as libCacheSim does, where the delimiter's value may itself be
/// a comma (`delimiter=,`). Keys are normalised: lower case, `_` → `-`.
pub(crate) fn split_params(s: &str) -> Result<Vec<(String, String)>, TraceError> {
    let mut out = Vec::new();
    let mut rest = s.trim_start_matches([' ', ',']);
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else {
            return Err(invalid(format!("{rest:?}: expected key=value")));
        };
        let key = rest[..eq].trim().to_ascii_lowercase().replace('_', "-");
        let after = &rest[eq + 1..];
        let (value, next) = if key == "delimiter" {
            // The value is one character (possibly the comma) or an escape such as \t.
            let mut chars = after.char_indices();
            match chars.next() {
                None => (",", ""),
                Some((_, '\\')) => {
                    let n = after[1..].chars().next().map_or(1, |c| 1 + c.len_utf8());
                    (&after[..n], &after[n..])
                }
                Some((_, c)) if after[c.len_utf8()..].starts_with(|d: char| d != ',') => {
                    let n = after.find(',').unwrap_or(after.len());
                    (&after[..n], &after[n..])
                }
                Some((_, c)) => (&after[..c.len_utf8()], &after[c.len_utf8()..]),
            }
        } else {
            let n = after.find(',').unwrap_or(after.len());
            (&after[..n], &after[n..])
        };
        out.push((key, value.to_string()));
        rest = next.trim_start_matches([' ', ',']);
    }
    Ok(out)
}

impl CsvParams {
    /// Parses libCacheSim-style parameters.
    pub(crate) fn parse(s: &str) -> Result<CsvParams, TraceError> {
        let mut p = CsvParams {
            obj_id_col: 0,
            time_col: None,
            size_col: None,
            op_col: None,
            has_header: None,
            delimiter: b',',
            id_is_num: true,
            op: Op::Read,
        };
        for (key, v) in split_params(s)? {
            let k = key.strip_suffix("-field").map(|b| format!("{b}-col")).unwrap_or(key.clone());
            match k.as_str() {
                "obj-id-col" => p.obj_id_col = parse_col(&key, &v)?,
                "time-col" => p.time_col = Some(parse_col(&key, &v)?),
                "obj-size-col" | "size-col" => p.size_col = Some(parse_col(&key, &v)?),
                "op-col" => p.op_col = Some(parse_col(&key, &v)?),
                "next-access-col" | "cnt-col" => {
                    parse_col(&key, &v)?;
                }
                "obj-id-is-num" => p.id_is_num = parse_bool(&key, &v)?,
                "has-header" | "header" => p.has_header = Some(parse_bool(&key, &v)?),
                "op" => p.op = parse_op_param(&v)?,
                "delimiter" => {
                    p.delimiter = match v.as_str() {
                        "\\t" | "tab" | "\t" => b'\t',
                        "\\," | "," => b',',
                        d if d.len() == 1 && d.is_ascii() => d.as_bytes()[0],
                        _ => return Err(invalid(format!("delimiter={v:?}: expected one character, or \\t"))),
                    }
                }
                _ => {
                    return Err(invalid(format!(
                        "unknown key {key:?}; known: obj-id-col, time-col, obj-size-col, op-col, \
                         next-access-col, cnt-col, obj-id-is-num, has-header, delimiter, op"
                    )))
                }
            }
        }
        if p.obj_id_col == 0 {
            return Err(invalid(
                "the csv format needs obj-id-col=N (the object id's column, 1-based)".into(),
            ));
        }
        Ok(p)
    }
}

/// The generic CSV reader.
pub(crate) struct Csv {
    p: CsvParams,
    /// The last column any parameter names: the line must have it.
    need: usize,
    index: u64,
}

impl Csv {
    pub(crate) fn new(p: CsvParams) -> Csv {
        let need =
            [Some(p.obj_id_col), p.time_col, p.size_col, p.op_col].into_iter().flatten().max().unwrap_or(1);
        Csv { p, need, index: 0 }
    }
}

/// Largest id a hashed text id is reduced to, so `id × 4096` stays far inside 64 bits.
const HASHED_ID_BITS: u32 = 40;

impl LineFormat for Csv {
    const NAME: &'static str = "csv";

    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Parsed, FieldError> {
        if lineno == 1 {
            let header = match self.p.has_header {
                Some(h) => h,
                None => crate::text::looks_like_header(line),
            };
            if header {
                return Ok(Parsed::Ignore);
            }
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // Columns past the last one named are never read.
        let cols: Vec<&[u8]> = line.split(|&b| b == self.p.delimiter).take(self.need).map(trim).collect();
        let n = cols.len();
        let col = |c: usize| cols[c - 1];
        let field = |c: usize, name: &'static str| -> Result<&[u8], FieldError> {
            if c > n {
                Err(FieldError {
                    field: name,
                    value: String::new(),
                    reason: format!("missing column {c} (the line has {n})").into(),
                })
            } else {
                Ok(col(c))
            }
        };
        let idf = field(self.p.obj_id_col, "obj-id")?;
        let id = if self.p.id_is_num {
            parse_u64(idf).ok_or_else(|| {
                FieldError::new(
                    "obj-id",
                    idf,
                    "expected a whole number (obj-id-is-num=false hashes text ids)",
                )
            })?
        } else {
            let mut h = rustc_hash::FxHasher::default();
            idf.hash(&mut h);
            h.finish() >> (64 - HASHED_ID_BITS)
        };
        let offset = id.checked_mul(4096).filter(|o| o.checked_add(4096).is_some()).ok_or_else(|| {
            FieldError::new("obj-id", idf, "object id too large: id × 4096 overflows 64 bits")
        })?;
        let time_ns = match self.p.time_col {
            Some(c) => {
                let t = field(c, "time")?;
                parse_scaled(t, 9)
                    .ok_or_else(|| FieldError::new("time", t, "expected seconds like 1700000000 or 1.25"))?
            }
            None => self.index,
        };
        if let Some(c) = self.p.size_col {
            let s = field(c, "obj-size")?;
            parse_u64(s).ok_or_else(|| FieldError::new("obj-size", s, "expected a whole number of bytes"))?;
        }
        let op = match self.p.op_col {
            Some(c) => {
                let o = field(c, "op")?;
                op_of(o)
                    .ok_or_else(|| FieldError::new("op", o, "expected read/r/get/0 or write/w/set/put/1"))?
            }
            None => self.p.op,
        };
        self.index += 1;
        Ok(Parsed::Req(Request { time_ns, volume: 0, op, offset, len: 4096 }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_as_libcachesim_spells_them() {
        let p =
            CsvParams::parse("obj-id-col=2,time-col=1,obj-size-col=3,has-header=true,delimiter=,").unwrap();
        assert_eq!(
            (p.obj_id_col, p.time_col, p.size_col, p.has_header, p.delimiter),
            (2, Some(1), Some(3), Some(true), b',')
        );
        let p = CsvParams::parse("time_field=1, obj_id_field=2, delimiter=;, header=false").unwrap();
        assert_eq!((p.obj_id_col, p.time_col, p.has_header, p.delimiter), (2, Some(1), Some(false), b';'));
        let p = CsvParams::parse("obj-id-col=1,delimiter=\\t,op-col=2").unwrap();
        assert_eq!((p.delimiter, p.op_col), (b'\t', Some(2)));
        let p = CsvParams::parse("delimiter=,,obj-id-col=4").unwrap();
        assert_eq!((p.delimiter, p.obj_id_col), (b',', 4));
        for bad in [
            "time-col=1",
            "obj-id-col=0",
            "obj-id-col=x",
            "obj-id-col=1,colour=2",
            "obj-id-col=1,has-header=maybe",
            "obj-id-col",
        ] {
            assert!(CsvParams::parse(bad).is_err(), "{bad}");
        }
    }
}
