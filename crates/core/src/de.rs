//! A configuration value written as a whole number or as text (`4096` or `"4KiB"`), read with
//! errors that say what was wrong: serde's untagged enums only say "data did not match any
//! variant", which names neither the value nor the reason.

use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// A value given as a non-negative whole number or as a string.
#[derive(Clone, Debug, PartialEq)]
pub enum NumberOrString {
    /// A whole number.
    Number(u64),
    /// A number with a fraction; most callers refuse it ([`NumberOrString::not_whole`]).
    Float(f64),
    /// Text, to be parsed by the caller.
    Text(String),
}

impl NumberOrString {
    /// The error for a number with a fraction where a whole one (or text) is needed.
    pub fn not_whole(x: f64) -> String {
        format!(
            "{x}: not a whole number (write a size with its unit as a string, e.g. \"1.5MiB\", or a fraction such as \"2%\")"
        )
    }
}

impl<'de> de::Deserialize<'de> for NumberOrString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = NumberOrString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative whole number or a string such as \"4KiB\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(NumberOrString::Number(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                u64::try_from(v)
                    .map(NumberOrString::Number)
                    .map_err(|_| E::custom(format!("{v}: a size or count cannot be negative")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(NumberOrString::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(NumberOrString::Text(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(NumberOrString::Text(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_strings_and_errors_that_name_the_value() {
        let n: NumberOrString = serde_json::from_str("4096").unwrap();
        assert_eq!(n, NumberOrString::Number(4096));
        let s: NumberOrString = serde_json::from_str("\"4KiB\"").unwrap();
        assert_eq!(s, NumberOrString::Text("4KiB".into()));
        let e = serde_json::from_str::<NumberOrString>("-1").unwrap_err().to_string();
        assert!(e.contains("-1") && e.contains("negative"), "{e}");
        assert_eq!(serde_json::from_str::<NumberOrString>("1.5").unwrap(), NumberOrString::Float(1.5));
        assert!(NumberOrString::not_whole(1.5).contains("1.5"));
        let e = serde_json::from_str::<NumberOrString>("true").unwrap_err().to_string();
        assert!(e.contains("whole number or a string"), "{e}");
    }
}
