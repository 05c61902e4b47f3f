//! The verdict rules, in one place: how a figure of ours is judged against the paper's. Written
//! out for readers in docs/reproduction.md, "How verdicts are decided"; every printed claims
//! table points there ([`RULES_AT`]).
//!
//! Every judged figure carries its *factor*: ours divided by the paper's (for a range, by the
//! nearest end of it). The bands, on the factor `q` measured both ways (`max(q, 1/q)`):
//!
//! - **agrees**: within ×[`AGREE`] (1.25);
//! - **close**: within ×[`CLOSE`] (2);
//! - beyond that a ratio (or a range of ratios) is **same direction** when the same scheme still
//!   wins, and a count **disagrees**; a ratio on the other side of 1 **disagrees** (the other
//!   scheme wins) unless it is within ×1.25 of the paper's;
//! - a paper's 0 agrees only with 0;
//! - an ordering or trend checked case by case is a tally: **agrees** when every case holds,
//!   **partly** when some do, **disagrees** when none does (no factor).
//!
//! A figure judged on other traces than the paper's, or in another set-up, gets no verdict:
//! [`no_verdict`].

use serde::{Deserialize, Serialize};

/// Within this factor (either way) a figure of ours agrees with the paper's.
pub const AGREE: f64 = 1.25;
/// Within this factor (either way), and not agreeing, a figure of ours is close to the paper's.
pub const CLOSE: f64 = 2.0;
/// Where the rules are written for readers; printed under every claims table.
pub const RULES_AT: &str = "docs/reproduction.md#how-verdicts-are-decided";
/// How every verdict without a judgement starts.
pub const NO_VERDICT: &str = "no verdict";

/// A verdict: its text and, where it compares two numbers, ours divided by the paper's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// "agrees (ours ×1.10)", "close (ours ×0.61)", ...
    pub text: String,
    /// Ours / the paper's (a range: ours / its nearest end, the farthest of ours); `None` for a
    /// tally, a paper's 0, or no verdict.
    pub factor: Option<f64>,
}

impl Verdict {
    fn new(text: impl Into<String>, factor: Option<f64>) -> Verdict {
        Verdict { text: text.into(), factor }
    }
}

/// `q` measured both ways: 2 for ×2 and for ×0.5.
fn spread(q: f64) -> f64 {
    if q >= 1.0 {
        q
    } else {
        1.0 / q
    }
}

/// "ours ×0.11".
pub fn factor_text(q: f64) -> String {
    if q != 0.0 && (q.abs() < 0.01 || q.abs() >= 1000.0) {
        format!("ours ×{q:.2e}")
    } else {
        format!("ours ×{q:.2}")
    }
}

/// No judgement, saying why (`reason`: "not the same traces", ...).
pub fn no_verdict(reason: &str) -> Verdict {
    Verdict::new(format!("{NO_VERDICT}: {reason}"), None)
}

/// A ratio between two schemes (a speed-up or a reduction; above 1: the first scheme wins).
pub fn ratio(paper: f64, ours: f64) -> Verdict {
    if !(ours.is_finite() && ours > 0.0) {
        return no_verdict("no value of ours");
    }
    let q = ours / paper;
    let f = factor_text(q);
    let v = if spread(q) <= AGREE {
        format!("agrees ({f})")
    } else if (paper > 1.0) != (ours > 1.0) {
        format!("DISAGREES: the other scheme wins ({f})")
    } else if spread(q) <= CLOSE {
        format!("close ({f})")
    } else {
        format!("same direction, ours {} ({f})", if q < 1.0 { "smaller" } else { "larger" })
    };
    Verdict::new(v, Some(q))
}

/// A count or a share: agrees within ×1.25, close within ×2, else disagrees; a paper's 0
/// agrees only with 0.
pub fn count(paper: f64, ours: f64) -> Verdict {
    if !ours.is_finite() {
        return no_verdict("no value of ours");
    }
    if paper == 0.0 {
        return if ours == 0.0 {
            Verdict::new("agrees (both 0)", None)
        } else {
            Verdict::new("DISAGREES (the paper has none)", None)
        };
    }
    let q = ours / paper;
    let f = factor_text(q);
    let v = if q > 0.0 && spread(q) <= AGREE {
        format!("agrees ({f})")
    } else if q > 0.0 && spread(q) <= CLOSE {
        format!("close ({f})")
    } else {
        format!("DISAGREES ({f})")
    };
    Verdict::new(v, Some(q))
}

/// Values of ours against the paper's range `lo..=hi` of ratios (above 1: the first scheme
/// wins): agrees when all lie inside; else judged by the farthest one's factor to the nearest
/// end — close within ×2, then same direction (all on the range's side of 1) or disagrees.
pub fn range(lo: f64, hi: f64, ours: &[f64]) -> Verdict {
    if ours.is_empty() || ours.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return no_verdict("no value of ours");
    }
    let to_range = |x: f64| {
        if x < lo {
            x / lo
        } else if x > hi {
            x / hi
        } else {
            1.0
        }
    };
    let far = ours.iter().map(|&x| to_range(x)).fold(1.0, |a, q| if spread(q) > spread(a) { q } else { a });
    let inside = ours.iter().filter(|x| (lo..=hi).contains(*x)).count();
    if inside == ours.len() {
        return Verdict::new("agrees (all inside)", Some(1.0));
    }
    // A range of ratios on one side of 1: a value of ours on the other side has the other
    // scheme winning.
    let other_side = |x: f64| (lo > 1.0 && x < 1.0) || (hi < 1.0 && x > 1.0);
    let end = if far < 1.0 { lo } else { hi };
    let how = format!(
        "{}{} the nearest end, {end}",
        if ours.len() > 1 { format!("{inside} of {} inside; farthest ", ours.len()) } else { String::new() },
        factor_text(far)
    );
    let v = if ours.iter().any(|&x| other_side(x)) {
        format!("DISAGREES: the other scheme wins ({how})")
    } else if spread(far) <= CLOSE {
        format!("close ({how})")
    } else {
        format!("same direction, outside the range ({how})")
    };
    Verdict::new(v, Some(far))
}

/// A tally of cases: agrees when all hold, partly when some do, disagrees when none does.
pub fn tally(holds: usize, of: usize) -> Verdict {
    let v = if holds == of {
        "agrees"
    } else if holds > 0 {
        "partly"
    } else {
        "DISAGREES"
    };
    Verdict::new(v, None)
}

/// A percentage the paper gives as "about `paper`": agrees within `points` percentage points,
/// else disagrees; the factor is ours / the paper's.
pub fn points(paper: f64, ours: f64, points: f64) -> Verdict {
    let d = ours - paper;
    let v = if d.abs() <= points {
        format!("agrees (within {points} points)")
    } else {
        format!("DISAGREES ({d:+.1} points)")
    };
    Verdict::new(v, Some(ours / paper))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_bands_at_their_boundaries() {
        // ×1.25 either way agrees; just past it is close; ×2 is close; past ×2 same direction.
        assert_eq!(ratio(4.0, 5.0).text, "agrees (ours ×1.25)");
        assert_eq!(ratio(4.0, 3.2).text, "agrees (ours ×0.80)");
        assert_eq!(ratio(4.0, 5.04).text, "close (ours ×1.26)");
        assert_eq!(ratio(4.0, 3.16).text, "close (ours ×0.79)");
        assert_eq!(ratio(4.0, 8.0).text, "close (ours ×2.00)");
        assert_eq!(ratio(4.0, 2.0).text, "close (ours ×0.50)");
        assert_eq!(ratio(4.0, 8.1).text, "same direction, ours larger (ours ×2.02)");
        assert_eq!(ratio(4.0, 1.96).text, "same direction, ours smaller (ours ×0.49)");
        // 34.90 against 3.85 is a ×0.11 miss, not an unbounded "same direction" alone.
        let v = ratio(34.9, 3.85);
        assert_eq!(v.text, "same direction, ours smaller (ours ×0.11)");
        assert!((v.factor.unwrap() - 3.85 / 34.9).abs() < 1e-12);
        // The other scheme wins: disagrees however near, unless within ×1.25.
        assert_eq!(ratio(1.63, 0.93).text, "DISAGREES: the other scheme wins (ours ×0.57)");
        assert_eq!(ratio(1.1, 0.95).text, "agrees (ours ×0.86)");
        assert_eq!(ratio(2.0, 0.0), no_verdict("no value of ours"));
        assert_eq!(ratio(2.0, f64::NAN).factor, None);
    }

    #[test]
    fn count_bands_at_their_boundaries() {
        assert_eq!(count(100.0, 125.0).text, "agrees (ours ×1.25)");
        assert_eq!(count(100.0, 80.0).text, "agrees (ours ×0.80)");
        assert_eq!(count(100.0, 126.0).text, "close (ours ×1.26)");
        assert_eq!(count(100.0, 200.0).text, "close (ours ×2.00)");
        assert_eq!(count(100.0, 50.0).text, "close (ours ×0.50)");
        assert_eq!(count(100.0, 201.0).text, "DISAGREES (ours ×2.01)");
        // A 7x miss is no longer "same order".
        assert_eq!(count(100.0, 700.0).text, "DISAGREES (ours ×7.00)");
        assert_eq!(count(100.0, 0.0).text, "DISAGREES (ours ×0.00)");
        assert_eq!(count(0.0, 0.0), Verdict { text: "agrees (both 0)".into(), factor: None });
        assert_eq!(count(0.0, 3.0).text, "DISAGREES (the paper has none)");
        assert_eq!(count(100.0, 700.0).factor, Some(7.0));
    }

    #[test]
    fn range_bands_say_how_far_outside() {
        assert_eq!(
            range(3.65, 6.86, &[3.65, 6.86]),
            Verdict { text: "agrees (all inside)".into(), factor: Some(1.0) }
        );
        // 2.21 is ×0.61 of the low end: close.
        let v = range(3.65, 6.86, &[2.21]);
        assert_eq!(v.text, "close (ours ×0.61 the nearest end, 3.65)");
        assert!((v.factor.unwrap() - 2.21 / 3.65).abs() < 1e-12);
        // Exactly ×2 above the high end is close; past it same direction.
        assert_eq!(range(1.0, 2.0, &[4.0]).text, "close (ours ×2.00 the nearest end, 2)");
        assert_eq!(
            range(3.0, 6.0, &[4.0, 1.4]).text,
            "same direction, outside the range (1 of 2 inside; farthest ours ×0.47 the nearest end, 3)"
        );
        assert_eq!(
            range(1.04, 2.01, &[0.9]).text,
            "DISAGREES: the other scheme wins (ours ×0.87 the nearest end, 1.04)"
        );
        assert_eq!(
            range(3.0, 6.0, &[0.5, 1.5]).text,
            "DISAGREES: the other scheme wins (0 of 2 inside; farthest ours ×0.17 the nearest end, 3)"
        );
        assert_eq!(range(1.0, 2.0, &[]).factor, None);
    }

    #[test]
    fn tallies_and_points() {
        assert_eq!(tally(4, 4).text, "agrees");
        assert_eq!(tally(1, 4).text, "partly");
        assert_eq!(tally(0, 4).text, "DISAGREES");
        assert_eq!(tally(4, 4).factor, None);
        assert_eq!(points(99.0, 97.0, 2.0).text, "agrees (within 2 points)");
        assert_eq!(points(99.0, 96.9, 2.0).text, "DISAGREES (-2.1 points)");
    }
}
