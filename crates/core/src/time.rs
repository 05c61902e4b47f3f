//! Modelled (virtual) time.

use serde::{Deserialize, Serialize};

/// A span or point of modelled time in nanoseconds.
///
/// Drive models answer in `Nanos`; the replay engine sums them on a virtual clock. `u64`
/// nanoseconds cover 584 years, far beyond any trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    /// Zero time.
    pub const ZERO: Nanos = Nanos(0);

    /// From seconds (fractional), rounded to the nearest nanosecond; negative values give zero.
    pub fn from_secs_f64(s: f64) -> Nanos {
        Nanos((s * 1e9).round().max(0.0) as u64)
    }
    /// From milliseconds (fractional).
    pub fn from_millis_f64(ms: f64) -> Nanos {
        Nanos((ms * 1e6).round().max(0.0) as u64)
    }
    /// From microseconds (fractional).
    pub fn from_micros_f64(us: f64) -> Nanos {
        Nanos((us * 1e3).round().max(0.0) as u64)
    }
    /// As seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// As milliseconds.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Saturating subtraction.
    pub fn saturating_sub(self, o: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(o.0))
    }
}

impl std::ops::Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0 + o.0)
    }
}

impl std::ops::AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, o: Nanos) {
        self.0 += o.0;
    }
}

impl std::ops::Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, o: Nanos) -> Nanos {
        Nanos(self.0 - o.0)
    }
}

impl std::iter::Sum for Nanos {
    fn sum<I: Iterator<Item = Nanos>>(iter: I) -> Nanos {
        Nanos(iter.map(|n| n.0).sum())
    }
}

impl std::fmt::Display for Nanos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.as_secs_f64();
        if s >= 1.0 {
            write!(f, "{s:.3} s")
        } else if s >= 1e-3 {
            write!(f, "{:.3} ms", s * 1e3)
        } else {
            write!(f, "{:.3} us", s * 1e6)
        }
    }
}
