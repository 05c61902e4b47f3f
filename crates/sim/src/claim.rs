//! A paper's headline figure beside ours ([`Claim`]), and the fixed rules that give it a verdict
//! ([`verdict`]). Which claims a run can check, and their values, are `paper`'s.

use serde::{Deserialize, Serialize};

pub mod verdict;

/// One headline figure of a paper and ours, with the verdict of [`verdict`]'s rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Where the paper says it.
    pub source: String,
    /// What is compared.
    pub claim: String,
    /// The paper's value.
    pub paper: String,
    /// What the paper's value covers ("mean of wdev, mds, ts, usr"); empty when the claim says.
    #[serde(default)]
    pub paper_covers: String,
    /// Ours.
    pub ours: String,
    /// What ours covers ("synth:prn", "mean of synth:wdev 3.32, ..."); empty when the claim says.
    #[serde(default)]
    pub ours_covers: String,
    /// The verdict ([`verdict`]'s rules), or "no verdict: why".
    pub verdict: String,
    /// Ours divided by the paper's (a range: by its nearest end) where the verdict compares two
    /// numbers; `None` for a tally or no verdict.
    #[serde(default)]
    pub factor: Option<f64>,
    /// Whether the claim is independent evidence ([`INDEPENDENT`]) or compares a metric the
    /// synthetic traces were tuned on ([`TUNED_HIT`], [`TUNED_SMR_WA`]).
    #[serde(default = "independent")]
    pub basis: String,
    /// Why ours differs from the paper's, where a check has found out (the authors' code run on
    /// the same traces, an experiment mapping the cause, a section of docs/reproduction.md);
    /// empty where the claim holds or nothing is known. Never changes the verdict.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
}

/// [`Claim::basis`] of a claim nothing was tuned to.
pub const INDEPENDENT: &str = "independent";
/// [`Claim::basis`] of a claim on hit or miss ratios: the synthetic traces' skew was tuned so
/// that LRU's hit ratio at 2% matches SAC Table 1 (docs/synthetic-traces.md).
pub const TUNED_HIT: &str = "not independent: traces tuned on LRU hit ratios";
/// [`Claim::basis`] of a claim involving SMR-only: the synthetic traces' phases were tuned to
/// PORE §III-A's SMR-only write amplification (docs/synthetic-traces.md).
pub const TUNED_SMR_WA: &str = "not independent: traces tuned on SMR-only WA";

fn independent() -> String {
    INDEPENDENT.into()
}
