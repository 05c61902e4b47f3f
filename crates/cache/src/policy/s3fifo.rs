//! S3-FIFO: three static FIFO queues (Yang et al., SOSP'23).

use crate::ghosts::Ghosts;
use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use shingled_core::BlockNo;

/// Configuration of [`S3Fifo`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3FifoConfig {
    /// Share of the capacity the small FIFO S aims at; S holds `max(1, ⌊small_ratio · c⌋)`
    /// blocks before it evicts, the main FIFO M the rest. Default 0.1 (the paper's 10%).
    /// Bounds: 0 < small_ratio < 1.
    #[serde(default = "default_small_ratio")]
    pub small_ratio: f64,
    /// Hits a block needs while in S to move to M instead of being evicted when it reaches S's
    /// tail. Default 1 (hit at least once, as the authors describe the design); 2 reproduces
    /// Algorithm 1's listing (`t.freq > 1`) and libCacheSim's default. Bounds: 1..=3 (the
    /// frequency saturates at 3).
    #[serde(default = "default_move_threshold")]
    pub move_threshold: u8,
}

fn default_small_ratio() -> f64 {
    0.1
}

fn default_move_threshold() -> u8 {
    1
}

impl Default for S3FifoConfig {
    fn default() -> Self {
        S3FifoConfig { small_ratio: default_small_ratio(), move_threshold: default_move_threshold() }
    }
}

impl PolicyBuilder for S3FifoConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(S3Fifo::with_span(ctx.capacity_blocks, self, ctx.block_span)?))
    }
}

/// Highest value of the 2-bit access frequency.
const MAX_FREQ: u8 = 3;
/// Bit of a slot's state byte marking membership of M (clear: S).
const IN_MAIN: u8 = 1 << 2;
/// Bits of a slot's state byte holding the frequency.
const FREQ: u8 = 0b11;

/// S3-FIFO (J. Yang, Y. Zhang, Z. Qiu, Y. Yue, R. Vinayak, "FIFO queues are all you need for
/// cache eviction", SOSP'23, Algorithm 1).
///
/// New blocks enter a small FIFO S; a block that reaches S's tail without having been hit is
/// evicted at once ("quick demotion") and its number remembered in a ghost FIFO G holding as many
/// block numbers as M's share of the cache; a block hit while in S moves to the main FIFO M. A
/// miss on a remembered block inserts it straight into M. M is a FIFO with reinsertion (CLOCK
/// with a 2-bit counter): its tail block goes back to M's head with its counter decremented while
/// the counter is positive ("lazy promotion"), and is evicted otherwise. Hits only bump the
/// counter (saturating at 3), so a hit never moves anything.
///
/// Eviction runs until one victim is found: from S while |S| is at least its target (or M is
/// empty), else from M. Each extra step either moves a block S→M (resetting its counter to 0)
/// or spends one unit of a counter in M, so the work is amortised O(1) per miss.
///
/// Sources disagree on when a block leaves S for M: the authors' descriptions of the design
/// (their S3-FIFO blog post, the header comment of libCacheSim's `S3FIFO.c`) promote a block
/// "accessed"/"reused since insertion", i.e. hit at least once, while Algorithm 1's listing
/// tests `t.freq > 1` and libCacheSim's code promotes at `freq >= 2` by default
/// (`move-to-main-threshold=2`). This follows the descriptions (`move_threshold = 1`); set
/// `move_threshold = 2` to reproduce the listing and libCacheSim. A promoted block's counter
/// restarts at 0 in M. Victims from M are not remembered in G. An invalidated block is
/// forgotten.
///
/// S3-FIFO suits skewed workloads with many blocks used once in a short window (the paper's
/// 6594 traces, key-value, CDN and block). Do not use it when most blocks are reused, but only
/// after leaving S: each then pays an extra miss to come back through G where LRU or ARC, with
/// the whole cache as their window, would still have hit. Like FIFO, LRU and ARC it ignores
/// dirtiness and band locality, so above a DM-SMR drive its write-backs scatter.
#[derive(Debug)]
pub struct S3Fifo {
    links: Links,
    small: List,
    main: List,
    /// Per slot: frequency (bits 0–1) and [`IN_MAIN`].
    state: Vec<u8>,
    small_target: u32,
    move_threshold: u8,
    ghost_capacity: u32,
    ghosts: Ghosts,
    /// The S victim chosen by the last `select_victims`: its block enters G when it is removed.
    small_victim: Option<Slot>,
}

/// The sizes of S3-FIFO's queues (for tests and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct S3FifoSizes {
    /// Blocks in the small FIFO S.
    pub small: u32,
    /// Blocks in the main FIFO M.
    pub main: u32,
    /// Block numbers in the ghost FIFO G.
    pub ghost: u32,
    /// S's target size.
    pub small_target: u32,
    /// The most block numbers G remembers (M's share of the capacity).
    pub ghost_capacity: u32,
}

impl S3Fifo {
    /// An S3-FIFO for a cache of `capacity` slots, after validating `cfg`.
    pub fn new(capacity: u32, cfg: &S3FifoConfig) -> Result<Self, PolicyError> {
        Self::with_span(capacity, cfg, None)
    }

    /// [`S3Fifo::new`] whose ghosts are of blocks mostly below `span`
    /// ([`crate::PolicyContext::block_span`]).
    pub fn with_span(capacity: u32, cfg: &S3FifoConfig, span: Option<u64>) -> Result<Self, PolicyError> {
        if !(cfg.small_ratio > 0.0 && cfg.small_ratio < 1.0) {
            return Err(PolicyError::Field {
                policy: "s3-fifo",
                field: "small_ratio",
                value: cfg.small_ratio.to_string(),
                reason: "must be greater than 0 and less than 1".into(),
            });
        }
        if !(1..=MAX_FREQ).contains(&cfg.move_threshold) {
            return Err(PolicyError::Field {
                policy: "s3-fifo",
                field: "move_threshold",
                value: cfg.move_threshold.to_string(),
                reason: "must be between 1 and 3".into(),
            });
        }
        let small_target = ((cfg.small_ratio * capacity as f64) as u32).clamp(1, capacity.max(1));
        let ghost_capacity = capacity.saturating_sub(small_target);
        Ok(S3Fifo {
            links: Links::with_capacity(capacity as usize),
            small: List::default(),
            main: List::default(),
            state: vec![0; capacity as usize],
            small_target,
            move_threshold: cfg.move_threshold,
            ghost_capacity,
            ghosts: Ghosts::with_span(ghost_capacity, span),
            small_victim: None,
        })
    }

    /// The current queue sizes.
    pub fn debug_sizes(&self) -> S3FifoSizes {
        S3FifoSizes {
            small: self.small.len(),
            main: self.main.len(),
            ghost: self.ghosts.total(),
            small_target: self.small_target,
            ghost_capacity: self.ghost_capacity,
        }
    }

    #[inline]
    fn freq(&self, slot: Slot) -> u8 {
        self.state[slot as usize] & FREQ
    }
}

impl Policy for S3Fifo {
    fn name(&self) -> &'static str {
        "s3-fifo"
    }

    /// Into M's head if G remembers the block (forgetting it there), else into S's head; the
    /// frequency starts at 0.
    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        let block = table.meta(slot).block;
        if self.ghosts.remove(block).is_some() {
            self.links.push_front(&mut self.main, slot);
            self.state[slot as usize] = IN_MAIN;
        } else {
            self.links.push_front(&mut self.small, slot);
            self.state[slot as usize] = 0;
        }
    }

    #[inline]
    fn on_hit(&mut self, _: &BlockTable, slot: Slot, _: bool) {
        let s = &mut self.state[slot as usize];
        if *s & FREQ < MAX_FREQ {
            *s += 1;
        }
    }

    fn select_victims(&mut self, _: &BlockTable, _incoming: BlockNo, victims: &mut Vec<Slot>) {
        loop {
            let from_small = match (self.small.back(), self.main.back()) {
                (Some(_), None) => true,
                (Some(_), Some(_)) => self.small.len() >= self.small_target,
                (None, Some(_)) => false,
                (None, None) => unreachable!("S3-FIFO asked for a victim in an empty cache"),
            };
            if from_small {
                let t = self.small.back().expect("S is not empty");
                if self.freq(t) >= self.move_threshold {
                    self.links.remove(&mut self.small, t);
                    self.links.push_front(&mut self.main, t);
                    self.state[t as usize] = IN_MAIN;
                } else {
                    victims.push(t);
                    self.small_victim = Some(t);
                    return;
                }
            } else {
                let t = self.main.back().expect("M is not empty");
                if self.freq(t) > 0 {
                    self.links.move_to_front(&mut self.main, t);
                    self.state[t as usize] -= 1;
                } else {
                    victims.push(t);
                    return;
                }
            }
        }
    }

    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        if self.state[slot as usize] & IN_MAIN != 0 {
            self.links.remove(&mut self.main, slot);
        } else {
            self.links.remove(&mut self.small, slot);
        }
        if self.small_victim == Some(slot) {
            self.small_victim = None;
            if self.ghost_capacity > 0 {
                if self.ghosts.total() >= self.ghost_capacity {
                    self.ghosts.pop_back(0);
                }
                let pushed = self.ghosts.push_front(0, table.meta(slot).block);
                debug_assert!(pushed, "S3-FIFO: ghost queue over capacity");
            }
        }
    }

    #[inline]
    fn prefetch_lookup(&self, block: BlockNo) {
        self.ghosts.prefetch_push(block);
    }

    #[inline]
    fn prefetch_slot(&self, slot: Slot) {
        shingled_core::mem::prefetch(&self.state, slot as usize);
    }
    fn heap_bytes(&self) -> usize {
        self.links.heap_bytes() + self.state.capacity() + self.ghosts.heap_bytes()
    }
}
