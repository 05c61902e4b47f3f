//! `memory`: index bytes per chunk and per record index (SMRSTORE §6.5).

use super::error::*;
use super::helpers::*;
use super::*;

/// Index memory at one chunk count and record count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryRow {
    /// Chunks.
    pub chunks: u64,
    /// Records per chunk.
    pub records_per_chunk: u64,
    /// User bytes per record.
    pub record_bytes: u64,
    /// `Store::memory().per_chunk` (the engine's size_of-based figure).
    pub per_chunk: usize,
    /// `Store::memory().per_record`.
    pub per_record: usize,
    /// `Store::memory().total`.
    pub total: usize,
    /// `total / chunks`.
    pub total_per_chunk: f64,
}

/// Index bytes per chunk and per record index at several sizes.
pub fn memory_bench(opts: &StoreBenchOptions) -> BResult<StoreBenchReport> {
    let c = |n: f64| opts.n(n, 16);
    let cases = [
        (c(1000.0), 1u64),
        (c(1000.0), 16),
        (c(8000.0), 1),
        (c(8000.0), 8),
        (c(32000.0), 1),
        (c(32000.0), 2),
    ];
    let record = 4096u64;
    let mut rows = Vec::new();
    for &(chunks, recs) in &cases {
        let bytes = chunks * recs * 2 * BLOCK;
        let zone = 64 * MIB;
        let nr = bytes.div_ceil(zone) * 2 + 12;
        let geo = ZonedConfig {
            capacity: shingled_zoned_bytes(nr * zone),
            zone_size: shingled_zoned_bytes(zone),
            ..hm_smr_geometry(nr)
        };
        let dev = MemZoned::new(&geo).map_err(de("building the device"))?;
        let cfg = StoreConfig {
            durability: Durability::Batched,
            gc_free_zones: 0,
            pool_data: 4,
            ..StoreConfig::default()
        };
        let mut st = Store::format(dev, cfg).map_err(se("formatting"))?;
        let data = payload(record as usize, opts.seed);
        for i in 0..chunks {
            let id = ChunkId::from_u128(i as u128 + 1);
            st.create(id, StreamType::DATA).map_err(se("creating"))?;
            for _ in 0..recs {
                st.append(id, &data).map_err(se("appending"))?;
            }
        }
        st.sync().map_err(se("syncing"))?;
        let m = st.memory();
        rows.push(MemoryRow {
            chunks,
            records_per_chunk: recs,
            record_bytes: record,
            per_chunk: m.per_chunk,
            per_record: m.per_record,
            total: m.total,
            total_per_chunk: m.total as f64 / chunks as f64,
        });
    }
    let mut t = Table::new(&[
        "chunks",
        "records/chunk",
        "record",
        "B/chunk",
        "B/record index",
        "total",
        "total/chunk",
    ]);
    for r in &rows {
        t.rows.push(vec![
            r.chunks.to_string(),
            r.records_per_chunk.to_string(),
            size_label(r.record_bytes),
            r.per_chunk.to_string(),
            r.per_record.to_string(),
            r.total.to_string(),
            f(r.total_per_chunk, 1),
        ]);
    }
    let notes = vec![
        "Store on MemZoned (64 MiB zones), OSS-data chunks, 4 KiB appends (one record each), pools 40/4/5".into(),
        "B/chunk, B/record index and total are Store::memory() (sizes of the index structures + 16 B B-tree overhead per entry, as the engine computes them; paper §6.5: ~200 B per chunk, 8 B per record index)".into(),
        "not measured: the process's heap (RSS deltas were tried and dropped: the in-memory device's buffers and reused freed memory swamp the index)".into(),
    ];
    Ok(StoreBenchReport {
        bench: "memory".into(),
        title: "store bench memory (SMRSTORE §6.5: index memory)".into(),
        notes,
        table: t,
        extra: Vec::new(),
        plots: Vec::new(),
        result: BenchResult::Memory(rows),
    })
}
