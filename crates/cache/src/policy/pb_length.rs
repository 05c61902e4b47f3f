//! Lengths in blocks that may be given relative to the drive's persistent buffer: PORE's period
//! and SAC's cycle length both default to "one PB" and are swept as multiples of it.

use crate::{PolicyContext, PolicyError};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use shingled_core::{ByteSize, SizeSpec};
use std::fmt;
use std::str::FromStr;

/// A number of 4 KiB blocks, absolute or a multiple of the persistent buffer
/// ([`PolicyContext::pb_blocks`]).
///
/// Text forms: a whole number (`6731`) is a block count; a size (`20GiB`, `5000blocks`) is
/// converted to whole blocks; `1pb`, `0.5pb`, `2x`, a percentage (`50%`, `500%`) or a fraction
/// (`1/10`) is relative to the PB. A bare fractional number (`0.5`) is refused as ambiguous.
/// Serialized as the block count, or as `"<m>pb"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PbLength {
    /// A fixed number of blocks (at least 1).
    Blocks(u64),
    /// This multiple of the persistent buffer, in (0, 1000]; `1.0` is one PB.
    OfPb(f64),
}

impl Default for PbLength {
    /// One PB: PORE's best period (§IV-B3) and SAC's cycle length (§4.2 Rule 2).
    fn default() -> Self {
        PbLength::OfPb(1.0)
    }
}

impl PbLength {
    /// Checks the bounds, naming `policy` and `field` in the error.
    pub fn check(&self, policy: &'static str, field: &'static str) -> Result<(), PolicyError> {
        let ok = match *self {
            PbLength::Blocks(n) => n >= 1,
            PbLength::OfPb(m) => m.is_finite() && m > 0.0 && m <= 1000.0,
        };
        if ok {
            return Ok(());
        }
        Err(PolicyError::Field {
            policy,
            field,
            value: self.to_string(),
            reason: "must be at least one block, or a PB multiple in (0, 1000] such as 1pb or 50%".into(),
        })
    }

    /// The length in blocks (at least 1) given the context's PB size; an error naming the
    /// policy and field when the length is PB-relative and the drive has no PB.
    pub fn resolve(
        &self,
        ctx: &PolicyContext,
        policy: &'static str,
        field: &'static str,
    ) -> Result<u64, PolicyError> {
        self.check(policy, field)?;
        match *self {
            PbLength::Blocks(n) => Ok(n),
            PbLength::OfPb(m) => match ctx.pb_blocks {
                Some(0) => Err(PolicyError::Unsupported {
                    policy,
                    reason: format!(
                        "{field} = {self} is relative to the persistent buffer, but its size is 0 blocks; \
                         give the drive's persistent-buffer size (at least one 4 KiB block)"
                    ),
                }),
                Some(pb) => Ok(((pb as f64 * m).round() as u64).max(1)),
                None => Err(PolicyError::Unsupported {
                    policy,
                    reason: format!(
                        "{field} = {self} is relative to the persistent buffer, but the drive has none \
                         (or does not report it); give {field} as a block count or a size"
                    ),
                }),
            },
        }
    }
}

impl fmt::Display for PbLength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PbLength::Blocks(n) => write!(f, "{n}"),
            PbLength::OfPb(m) => write!(f, "{m}pb"),
        }
    }
}

/// A [`PbLength`] given as text that is none of its forms.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid length {text:?}: {reason}; use blocks (6731), a size (20GiB), or a PB multiple (1pb, 50%, 1/2)"
)]
pub struct PbLengthError {
    /// The text given.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FromStr for PbLength {
    type Err = PbLengthError;
    fn from_str(s: &str) -> Result<Self, PbLengthError> {
        let t = s.trim().to_ascii_lowercase();
        let bad = |why: &str| PbLengthError { text: s.into(), reason: why.into() };
        if let Some(m) =
            t.strip_suffix("xpb").or_else(|| t.strip_suffix("pb")).or_else(|| t.strip_suffix('x'))
        {
            return m.trim().parse::<f64>().map(PbLength::OfPb).map_err(|_| bad("not a number before pb/x"));
        }
        if !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit() || c == b'_') {
            return t.replace('_', "").parse().map(PbLength::Blocks).map_err(|e| bad(&e.to_string()));
        }
        match s.trim().parse::<SizeSpec>().map_err(|e| bad(&e.to_string()))? {
            SizeSpec::Absolute(ByteSize(b)) if b < shingled_core::BLOCK_SIZE => {
                Err(bad("less than one 4 KiB block"))
            }
            SizeSpec::Absolute(b) => Ok(PbLength::Blocks(b.blocks())),
            SizeSpec::Fraction(x) => Ok(PbLength::OfPb(x)),
        }
    }
}

impl Serialize for PbLength {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            PbLength::Blocks(n) => s.serialize_u64(n),
            PbLength::OfPb(_) => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for PbLength {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use shingled_core::de::NumberOrString as N;
        match N::deserialize(d)? {
            N::Number(n) => Ok(PbLength::Blocks(n)),
            N::Float(x) => Err(serde::de::Error::custom(format!(
                "length {x}: write {x}pb for a multiple of the persistent buffer, or a whole number of blocks"
            ))),
            N::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_form() {
        for (t, want) in [
            ("6731", PbLength::Blocks(6731)),
            ("8blocks", PbLength::Blocks(8)),
            ("20MiB", PbLength::Blocks(5120)),
            ("1pb", PbLength::OfPb(1.0)),
            ("0.5pb", PbLength::OfPb(0.5)),
            ("2x", PbLength::OfPb(2.0)),
            ("500%", PbLength::OfPb(5.0)),
            ("1/10", PbLength::OfPb(0.1)),
        ] {
            assert_eq!(t.parse::<PbLength>(), Ok(want), "{t}");
            let json = serde_json::to_string(&want).unwrap();
            assert_eq!(serde_json::from_str::<PbLength>(&json).unwrap(), want, "{json}");
        }
        assert_eq!(
            "zpb".parse::<PbLength>().unwrap_err().to_string(),
            "invalid length \"zpb\": not a number before pb/x; use blocks (6731), a size (20GiB), or a PB \
             multiple (1pb, 50%, 1/2)"
        );
        for bad in ["", "abc", "1000B", "xpb"] {
            assert!(bad.parse::<PbLength>().is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<PbLength>("0.5").is_err());
    }

    #[test]
    fn a_zero_block_persistent_buffer_is_refused() {
        let ctx = PolicyContext { pb_blocks: Some(0), ..Default::default() };
        let e = PbLength::OfPb(1.0).resolve(&ctx, "pore", "period").unwrap_err().to_string();
        assert!(e.contains("period") && e.contains("0 blocks"), "{e}");
        assert_eq!(PbLength::Blocks(5).resolve(&ctx, "pore", "period").unwrap(), 5);
    }

    #[test]
    fn resolves_against_the_pb() {
        let ctx = PolicyContext { pb_blocks: Some(100), ..Default::default() };
        assert_eq!(PbLength::OfPb(0.5).resolve(&ctx, "p", "f"), Ok(50));
        assert_eq!(PbLength::Blocks(7).resolve(&ctx, "p", "f"), Ok(7));
        assert!(PbLength::Blocks(0).resolve(&ctx, "p", "f").is_err());
        assert!(PbLength::OfPb(0.0).resolve(&ctx, "p", "f").is_err());
        let none = PolicyContext::default();
        let e = PbLength::OfPb(1.0).resolve(&none, "pore", "period").unwrap_err();
        assert!(e.to_string().contains("period"), "{e}");
    }
}
