//! Reading a sample of the trace: each unit's traffic (for stratified sampling), then the kept
//! units' requests, held in memory.

use super::*;

/// A sample of the trace held in memory.
pub(super) struct Sample {
    pub(super) requests: Arc<Vec<Request>>,
    pub(super) format: &'static str,
    /// Units with at least one block accessed.
    pub(super) units: u64,
    /// Block requests, and those of writes.
    pub(super) blocks: u64,
    pub(super) write_blocks: u64,
    /// Distinct blocks accessed, and written.
    pub(super) accessed: u64,
    pub(super) written: u64,
    pub(super) cost_s: f64,
}

impl Sample {
    /// Its shares of the full trace (`stats`) in `mode`; an error when it holds nothing to
    /// scale by.
    pub(super) fn scale(&self, stats: &TraceStats, mode: crate::Mode) -> Result<Scale, SimError> {
        let share = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let accessed = share(self.accessed * BLOCK_SIZE, stats.accessed_distinct_bytes);
        let written = share(self.written * BLOCK_SIZE, stats.written_distinct_bytes);
        let k = Scale {
            cache: if mode.sized_by_written_range() { written } else { accessed },
            pb: written,
            traffic: if mode == crate::Mode::WriteOnly {
                share(self.write_blocks, stats.write_pages)
            } else {
                share(self.blocks, stats.pages)
            },
        };
        if !(k.traffic > 0.0 && k.cache > 0.0) {
            return Err(bad(
                "curve.rate",
                format!(
                    "the sample holds {} of {} units and nothing the cache is sized by; raise the rate",
                    self.units, stats.accessed_bands
                ),
            ));
        }
        // No written block (a read-only sample) leaves the PB as the cache scales.
        Ok(Scale { pb: if k.pb > 0.0 { k.pb } else { k.cache }, ..k })
    }
}

/// Every unit the trace touches with its block accesses and block writes, by unit (one pass).
pub(super) fn unit_traffic(
    base: &SimConfig,
    units: &Units,
    tick: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<Vec<(u64, u64, u64)>, SimError> {
    use shingled_trace::TraceReader;
    let mut reader = Limited {
        inner: crate::run::open_trace_ahead(&base.trace)?,
        left: base.trace.limit.unwrap_or(u64::MAX),
    };
    let mut per: rustc_hash::FxHashMap<u64, (u64, u64)> = Default::default();
    let mut n = 0u64;
    while let Some(r) = reader.next_request()? {
        let b = r.blocks();
        let write = (r.op == shingled_core::Op::Write) as u64;
        let mut at = b.start;
        while at < b.end {
            let u = units.unit_of(at);
            let end = units.end_of(u).min(b.end);
            let e = per.entry(u).or_default();
            e.0 += end - at;
            e.1 += write * (end - at);
            at = end;
        }
        n += 1;
        if n.is_multiple_of(PROGRESS_EVERY) {
            tick(PROGRESS_EVERY);
            if stop.load(Ordering::Relaxed) {
                return Err(SimError::Cancelled { requests: n });
            }
        }
    }
    tick(n % PROGRESS_EVERY);
    let mut v: Vec<(u64, u64, u64)> = per.into_iter().map(|(u, (a, w))| (u, a, w)).collect();
    v.sort_unstable();
    Ok(v)
}

/// A reader telling `tick` how many requests it has read, every [`PROGRESS_EVERY`] and the
/// rest when dropped.
pub(super) struct Counted<'a> {
    pub(super) inner: Limited,
    pub(super) read: u64,
    pub(super) told: u64,
    pub(super) tick: &'a (dyn Fn(u64) + Sync),
}

impl shingled_trace::TraceReader for Counted<'_> {
    fn next_request(&mut self) -> Result<Option<Request>, shingled_trace::TraceError> {
        let r = self.inner.next_request()?;
        if r.is_some() {
            self.read += 1;
            if self.read - self.told == PROGRESS_EVERY {
                (self.tick)(PROGRESS_EVERY);
                self.told = self.read;
            }
        }
        Ok(r)
    }
    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }
    fn filtered(&self) -> u64 {
        self.inner.filtered()
    }
    fn format_name(&self) -> &'static str {
        self.inner.format_name()
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        (self.tick)(self.read - self.told);
    }
}

pub(super) fn read_sample(
    base: &SimConfig,
    units: &Units,
    sel: Selector,
    tick: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<Sample, SimError> {
    use shingled_trace::TraceReader;
    let started = Instant::now();
    let inner = Limited {
        inner: crate::run::open_trace_ahead(&base.trace)?,
        left: base.trace.limit.unwrap_or(u64::MAX),
    };
    let format = inner.inner.format_name();
    let inner = Counted { inner, read: 0, told: 0, tick };
    let mut reader = Sampled::new(inner, units.clone(), sel);
    let mut requests = Vec::new();
    let mut kept = rustc_hash::FxHashSet::default();
    let mut accessed = rustc_hash::FxHashSet::default();
    let mut written = rustc_hash::FxHashSet::default();
    let (mut blocks, mut write_blocks) = (0u64, 0u64);
    while let Some(r) = reader.next_request()? {
        let b = r.blocks();
        blocks += b.end - b.start;
        let write = r.op == shingled_core::Op::Write;
        if write {
            write_blocks += b.end - b.start;
        }
        let mut at = b.start;
        while at < b.end {
            let u = units.unit_of(at);
            kept.insert(u);
            at = units.end_of(u);
        }
        for x in b {
            accessed.insert(x);
            if write {
                written.insert(x);
            }
        }
        requests.push(r);
        if requests.len() % (1 << 16) == 0 && stop.load(Ordering::Relaxed) {
            return Err(SimError::Cancelled { requests: requests.len() as u64 });
        }
    }
    drop(reader); // tells the last requests read
    Ok(Sample {
        requests: Arc::new(requests),
        format,
        units: kept.len() as u64,
        blocks,
        write_blocks,
        accessed: accessed.len() as u64,
        written: written.len() as u64,
        cost_s: started.elapsed().as_secs_f64(),
    })
}
