//! Byte sizes with human units, and sizes that may be relative to a trace's footprint.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A size string that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid size {value:?}: {reason}")]
pub struct SizeError {
    /// The text that was given.
    pub value: String,
    /// Why it was refused.
    pub reason: &'static str,
}

/// A number of bytes.
///
/// Parsing accepts a plain number of bytes or a number with a unit. Units follow the storage
/// convention both papers use in their text: `KB`, `MB`, `GB`, `TB` are decimal (10^3 …), `KiB`,
/// `MiB`, `GiB`, `TiB` and the bare letters `K`, `M`, `G`, `T` are binary (2^10 …, as `dd` and the
/// SAC artifact's `--cache-size 1G` read them), and `blk`/`blocks` counts 4 KiB blocks.
/// Fractions are allowed (`1.5GiB`), rounded down to a whole byte. Serialized as a string
/// (`"20MiB"`), deserialized from a string or an integer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// Bytes.
    pub const fn b(n: u64) -> Self {
        ByteSize(n)
    }
    /// Kibibytes.
    pub const fn kib(n: u64) -> Self {
        ByteSize(n << 10)
    }
    /// Mebibytes.
    pub const fn mib(n: u64) -> Self {
        ByteSize(n << 20)
    }
    /// Gibibytes.
    pub const fn gib(n: u64) -> Self {
        ByteSize(n << 30)
    }
    /// Decimal megabytes.
    pub const fn mb(n: u64) -> Self {
        ByteSize(n * 1_000_000)
    }
    /// Decimal gigabytes.
    pub const fn gb(n: u64) -> Self {
        ByteSize(n * 1_000_000_000)
    }
    /// The byte count.
    pub const fn bytes(self) -> u64 {
        self.0
    }
    /// Whole 4 KiB blocks (rounded down).
    pub const fn blocks(self) -> u64 {
        self.0 / crate::BLOCK_SIZE
    }
}

impl FromStr for ByteSize {
    type Err = SizeError;

    fn from_str(s: &str) -> Result<Self, SizeError> {
        let err = |reason| SizeError { value: s.to_string(), reason };
        let t = s.trim();
        if t.is_empty() {
            return Err(err("empty"));
        }
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let num: String = num.chars().filter(|&c| c != '_').collect();
        if num.is_empty() && t.starts_with('-') {
            return Err(err("out of range: a size cannot be negative"));
        }
        if num.is_empty() {
            return Err(err("expected a number, e.g. 20MiB, 1.5GB or 4096"));
        }
        let mult: u64 = match unit.trim() {
            "" | "B" | "b" => 1,
            "K" | "k" | "KiB" | "kiB" => 1 << 10,
            "M" | "MiB" => 1 << 20,
            "G" | "GiB" => 1 << 30,
            "T" | "TiB" => 1 << 40,
            "KB" | "kB" | "kb" => 1_000,
            "MB" | "mb" => 1_000_000,
            "GB" | "gb" => 1_000_000_000,
            "TB" | "tb" => 1_000_000_000_000,
            "blk" | "blks" | "block" | "blocks" => crate::BLOCK_SIZE,
            u if u.starts_with(['e', 'E'])
                && u[1..].trim_start_matches(['+', '-']).bytes().all(|b| b.is_ascii_digit()) =>
            {
                return Err(err(
                    "exponent notation is not a size: write the number in full or with a unit (4GiB)",
                ))
            }
            _ => return Err(err("unknown unit (use B, KiB/MiB/GiB/TiB, KB/MB/GB/TB, K/M/G/T or blocks)")),
        };
        if let Ok(n) = num.parse::<u64>() {
            return n.checked_mul(mult).map(ByteSize).ok_or_else(|| err("too large"));
        }
        let f: f64 = num.parse().map_err(|_| err("not a number"))?;
        let v = f * mult as f64;
        if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
            return Err(err("out of range"));
        }
        Ok(ByteSize(v as u64))
    }
}

impl fmt::Display for ByteSize {
    /// Prints the largest binary unit that divides the size exactly, else decimal with 2
    /// decimals, so that `parse(display(x)) == x` for exact multiples.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
            if b >= (1 << shift) && b.is_multiple_of(1 << shift) {
                return write!(f, "{}{}", b >> shift, unit);
            }
        }
        for (div, unit) in [(1e12, "TB"), (1e9, "GB"), (1e6, "MB")] {
            if b as f64 >= div {
                return write!(f, "{:.2}{}", b as f64 / div, unit);
            }
        }
        write!(f, "{b}B")
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Exact multiples print compactly; anything else as plain bytes so nothing is rounded.
        let txt = self.to_string();
        if txt.contains('.') {
            s.serialize_str(&self.0.to_string())
        } else {
            s.serialize_str(&txt)
        }
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::de::NumberOrString as N;
        match N::deserialize(d)? {
            N::Number(n) => Ok(ByteSize(n)),
            N::Float(x) => Err(serde::de::Error::custom(N::not_whole(x))),
            N::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// A size given either absolutely or as a fraction of a reference size that the consumer names
/// (for example "PB = 1/256 of the written LBA range", "cache = 2% of the accessed range").
///
/// Text forms: `20GiB` (absolute, see [`ByteSize`]), `2%`, `1/256`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeSpec {
    /// A fixed size.
    Absolute(ByteSize),
    /// A fraction (0, 1] … of the reference size; 0.02 = 2%.
    Fraction(f64),
}

impl SizeSpec {
    /// Resolves against the reference size, rounding down to whole 4 KiB blocks but never below
    /// one block.
    pub fn resolve(&self, reference: u64) -> ByteSize {
        let b = match *self {
            SizeSpec::Absolute(b) => b.0,
            SizeSpec::Fraction(f) => (reference as f64 * f) as u64,
        };
        ByteSize((b / crate::BLOCK_SIZE).max(1) * crate::BLOCK_SIZE)
    }
}

impl FromStr for SizeSpec {
    type Err = SizeError;
    fn from_str(s: &str) -> Result<Self, SizeError> {
        let t = s.trim();
        let err = |reason| SizeError { value: s.to_string(), reason };
        if let Some(p) = t.strip_suffix('%') {
            let f: f64 = p.trim().parse().map_err(|_| err("expected a percentage such as 2%"))?;
            if !(f > 0.0 && f.is_finite()) {
                return Err(err("percentage must be positive"));
            }
            return Ok(SizeSpec::Fraction(f / 100.0));
        }
        if let Some((a, b)) = t.split_once('/') {
            let a: f64 = a.trim().parse().map_err(|_| err("expected a fraction such as 1/256"))?;
            let b: f64 = b.trim().parse().map_err(|_| err("expected a fraction such as 1/256"))?;
            if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
                return Err(err("fraction parts must be positive"));
            }
            return Ok(SizeSpec::Fraction(a / b));
        }
        Ok(SizeSpec::Absolute(t.parse()?))
    }
}

impl fmt::Display for SizeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeSpec::Absolute(b) => write!(f, "{b}"),
            SizeSpec::Fraction(x) => {
                let inv = 1.0 / x;
                if (inv - inv.round()).abs() < 1e-9 && inv >= 1.0 {
                    write!(f, "1/{}", inv.round() as u64)
                } else {
                    write!(f, "{}%", x * 100.0)
                }
            }
        }
    }
}

impl Serialize for SizeSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SizeSpec::Absolute(b) => b.serialize(s),
            SizeSpec::Fraction(_) => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for SizeSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::de::NumberOrString as N;
        match N::deserialize(d)? {
            N::Number(n) => Ok(SizeSpec::Absolute(ByteSize(n))),
            N::Float(x) => Err(serde::de::Error::custom(N::not_whole(x))),
            N::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_units() {
        assert_eq!("4096".parse::<ByteSize>().unwrap().0, 4096);
        assert_eq!("20MiB".parse::<ByteSize>().unwrap().0, 20 << 20);
        assert_eq!("20M".parse::<ByteSize>().unwrap().0, 20 << 20);
        assert_eq!("20MB".parse::<ByteSize>().unwrap().0, 20_000_000);
        assert_eq!("1.5GiB".parse::<ByteSize>().unwrap().0, 3 << 29);
        assert_eq!("5000blocks".parse::<ByteSize>().unwrap().0, 20_480_000);
        assert_eq!("1_000".parse::<ByteSize>().unwrap().0, 1000);
        assert!("abc".parse::<ByteSize>().is_err());
        assert!("12XB".parse::<ByteSize>().is_err());
        assert!("".parse::<ByteSize>().is_err());
        assert!("99999999999T".parse::<ByteSize>().is_err());
    }

    #[test]
    fn size_spec_forms() {
        assert_eq!("2%".parse::<SizeSpec>().unwrap(), SizeSpec::Fraction(0.02));
        assert_eq!("1/256".parse::<SizeSpec>().unwrap(), SizeSpec::Fraction(1.0 / 256.0));
        assert_eq!("1/256".parse::<SizeSpec>().unwrap().to_string(), "1/256");
        assert_eq!("20GiB".parse::<SizeSpec>().unwrap(), SizeSpec::Absolute(ByteSize::gib(20)));
        assert!("0%".parse::<SizeSpec>().is_err());
        assert!("1/0".parse::<SizeSpec>().is_err());
        assert_eq!(SizeSpec::Fraction(0.5).resolve(10 * 4096).0, 5 * 4096);
        assert_eq!(SizeSpec::Fraction(1e-9).resolve(4096).0, 4096, "never below one block");
    }

    #[test]
    fn serde_round_trip() {
        let b = ByteSize::mib(20);
        let j = serde_json::to_string(&b).unwrap();
        assert_eq!(j, "\"20MiB\"");
        assert_eq!(serde_json::from_str::<ByteSize>(&j).unwrap(), b);
        assert_eq!(serde_json::from_str::<ByteSize>("4096").unwrap(), ByteSize(4096));
    }

    proptest! {
        #[test]
        fn display_parses_back_exactly(n in 0u64..(1u64 << 50)) {
            let b = ByteSize(n);
            let j = serde_json::to_string(&b).unwrap();
            prop_assert_eq!(serde_json::from_str::<ByteSize>(&j).unwrap(), b);
        }
    }
}
