//! Why ours differs from a paper's figure, where a check has found out: the text a claim's
//! [`Claim::evidence`] carries. A claim gets it only when it differs in the way the check
//! explains (LRU-band ahead of PORE; a factor well below the paper's); the verdict is never
//! changed.

use super::Claim;

/// LRU-band ahead of PORE: what the authors' code and the regime map showed.
pub const LRU_BAND_AHEAD: &str = "the PORE authors' own code, corrected, counts within about 1% of \
    ours and also ranks LRU-band above PORE on MSR-like volumes; PORE wins on cold write bursts \
    with a 5-30% scattered share and with zones equal to the drive's bands (`shingled experiment \
    pore-regimes`): docs/reproduction.md#why-pore-loses-to-lru-band-here-the-authors-code-as-evidence";

/// Where the attribution runs are (each text below ends with it).
#[cfg(test)]
const ATTRIBUTION: &str =
    "docs/reproduction.md#why-our-factors-are-smaller-traces-drive-model-published-tools";

/// PORE's speed-ups well below the paper's: what the attribution runs found.
pub const PORE_SMALLER: &str = "on MSR-like volumes PORE's WA stays 3-4x the paper's; cold write \
    bursts with a 5-10% scattered share give the paper's order (12-13x over SMR-only, write-only); \
    the drive model moves it little, the published emulator's FIFO defect about x1.3, the rest is \
    not attributed: docs/reproduction.md#why-our-factors-are-smaller-traces-drive-model-published-tools";

/// SMR-only's write time over CMR-only's below the paper's range.
pub const WRITE_TIME_SMALLER: &str = "merging each PB block with its own read, as the authors' \
    emulator does, puts all four volumes inside the paper's range (and lowers PORE's speed-up): \
    docs/reproduction.md#why-our-factors-are-smaller-traces-drive-model-published-tools";

/// SAC's speed-ups well below the paper's.
pub const SAC_SMALLER: &str = "mostly the persistent buffer: the real drive's is about 1/5,400 \
    of SAC's trace, ours 1/256; at 1/1024-1/4096 SAC is 6-11x faster than LRU, and on the ten \
    volumes mixed 1.44x faster than MOST: \
    docs/reproduction.md#why-our-factors-are-smaller-traces-drive-model-published-tools";

/// Ours below this share of the paper's figure counts as "well below".
const WELL_BELOW: f64 = 0.8;

/// The leading number of a figure: "0.86x (…)" → 0.86, "3.65-6.86" → 3.65.
fn leading_number(s: &str) -> Option<f64> {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    s[..end].parse().ok()
}

/// Whether the claim compares PORE with LRU-band (a ratio, or an ordering naming LRU-band).
fn pore_vs_lru_band(c: &Claim) -> bool {
    c.source.starts_with("PORE")
        && c.claim.contains("PORE")
        && (c.claim.contains("LRU-band") || c.paper.contains("LRU-band"))
}

/// Whether LRU-band came out ahead in ours: a ratio below 1, or an ordering that failed.
fn lru_band_ahead(c: &Claim) -> bool {
    if c.claim.ends_with("speed-up") || c.claim.ends_with("reduction") {
        leading_number(&c.ours).is_some_and(|x| x < 1.0)
    } else {
        c.verdict.starts_with("DISAGREES") || c.verdict.starts_with("partly")
    }
}

/// Whether the claim is one of the time or WA magnitudes of PORE §V-C/§V-F or SAC §6.2-6.3 the
/// attribution runs cover.
fn attributed_magnitude(c: &Claim) -> bool {
    let source = ["PORE §V-C", "PORE §V-F", "SAC §6.2", "SAC §6.3"].iter().any(|s| c.source.starts_with(s));
    let ratio = c.claim.ends_with("speed-up") || c.claim.ends_with("reduction") || c.claim.contains(" / ");
    source && ratio && !c.claim.contains("LRU-band")
}

/// Ours well below the paper's, in the same direction.
fn well_below(c: &Claim) -> bool {
    if let Some(f) = c.factor {
        return f > 0.0 && f < WELL_BELOW && !c.verdict.contains("other scheme wins");
    }
    match (leading_number(&c.paper), leading_number(&c.ours)) {
        (Some(p), Some(o)) => o > 1.0 && o < WELL_BELOW * p,
        _ => false,
    }
}

/// Sets each claim's evidence where a check explains how ours differs.
pub(super) fn explain(claims: &mut [Claim]) {
    for c in claims {
        if pore_vs_lru_band(c) {
            if lru_band_ahead(c) {
                c.evidence = LRU_BAND_AHEAD.into();
            }
        } else if attributed_magnitude(c) && well_below(c) {
            c.evidence = if c.source.starts_with("SAC") {
                SAC_SMALLER
            } else if c.claim.contains("write time /") {
                WRITE_TIME_SMALLER
            } else {
                PORE_SMALLER
            }
            .into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(source: &str, what: &str, paper: &str, ours: &str, verdict: &str, factor: Option<f64>) -> Claim {
        Claim {
            source: source.into(),
            claim: what.into(),
            paper: paper.into(),
            paper_covers: String::new(),
            ours: ours.into(),
            ours_covers: String::new(),
            verdict: verdict.into(),
            factor,
            basis: super::super::INDEPENDENT.into(),
            evidence: String::new(),
        }
    }

    #[test]
    fn lru_band_ahead_of_pore_gets_the_artifact_evidence_and_pore_ahead_gets_none() {
        let mut v = vec![
            claim(
                "PORE §V-C2, Fig. 13a",
                "PORE total I/O time vs LRU-band: speed-up",
                "2.02x",
                "0.79x",
                "DISAGREES: the other scheme wins (ours ×0.39)",
                Some(0.39),
            ),
            claim(
                "PORE §V-C2, Fig. 13c",
                "PORE WA vs LRU-band: reduction",
                "2.83x",
                "1.20x",
                "no verdict: x",
                None,
            ),
            claim(
                "PORE §V-C2, Fig. 13a",
                "PORE is the fastest scheme (traces)",
                "faster than LRU-band and all the other competitors",
                "0 of 4",
                "DISAGREES",
                None,
            ),
        ];
        explain(&mut v);
        assert_eq!(v[0].evidence, LRU_BAND_AHEAD);
        assert_eq!(v[1].evidence, "", "PORE ahead of LRU-band: nothing to explain");
        assert_eq!(v[2].evidence, LRU_BAND_AHEAD);
    }

    #[test]
    fn only_magnitudes_well_below_the_papers_get_the_attribution() {
        let mut v = vec![
            claim(
                "PORE §V-C1, Fig. 11",
                "PORE total I/O time vs SMR-only: speed-up",
                "11.83x",
                "3.05x",
                "same direction, ours smaller (ours ×0.26)",
                Some(0.26),
            ),
            claim(
                "PORE §V-C1, Fig. 11",
                "PORE total I/O time vs LRU: speed-up",
                "2.84x",
                "2.60x",
                "agrees",
                Some(0.92),
            ),
            claim(
                "SAC §6.2, Fig. 13",
                "SAC total I/O time vs MOST: speed-up",
                "1.40x",
                "1.05x",
                "no verdict: x",
                None,
            ),
            claim(
                "SAC §6.2, Fig. 13",
                "SAC total I/O time vs LRU: speed-up",
                "7.50x",
                "0.90x",
                "no verdict: x",
                None,
            ),
            claim("SAC §6.4, Fig. 15", "PD has the largest WA (traces)", "yes", "4 of 4", "agrees", None),
            claim(
                "PORE §V-C1",
                "SMR-only write time / CMR-only write time",
                "3.65-6.86",
                "synth:wdev 2.42",
                "close (0 of 4 inside; farthest ours ×0.58 the nearest end, 3.65)",
                Some(0.58),
            ),
        ];
        explain(&mut v);
        let got: Vec<&str> = v.iter().map(|c| c.evidence.as_str()).collect();
        // 1.05 < 0.8 × 1.40: well below; 0.90x vs LRU is the other direction, not "smaller".
        assert_eq!(got, [PORE_SMALLER, "", SAC_SMALLER, "", "", WRITE_TIME_SMALLER]);
        assert!(got.iter().all(|e| e.is_empty() || e.ends_with(ATTRIBUTION)));
    }

    #[test]
    fn leading_numbers() {
        assert_eq!(leading_number("0.86x (mean of a)"), Some(0.86));
        assert_eq!(leading_number("3.65-6.86"), Some(3.65));
        assert_eq!(leading_number("synth:wdev 2.42"), None);
    }
}
