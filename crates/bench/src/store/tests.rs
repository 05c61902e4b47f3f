//! Unit tests of the store benches.

use super::error::*;
use super::io::*;
use super::*;

fn tiny() -> StoreBenchOptions {
    StoreBenchOptions { scale: 0.001, seed: 7, streams: 3, dir: None, rounds: 1 }
}

fn io_rows(r: &StoreBenchReport) -> &[IoRow] {
    match &r.result {
        BenchResult::Io(rows) => rows,
        _ => panic!("not an I/O bench"),
    }
}

fn table_is_rectangular(t: &Table) {
    assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
    assert_eq!(t.to_csv().lines().count(), t.rows.len() + 1);
    assert_eq!(t.to_text().lines().count(), t.rows.len() + 2);
}

#[test]
fn write_bench_writes_what_it_says() {
    let r = write_bench(&tiny()).unwrap();
    let rows = io_rows(&r);
    // 5 systems x 2 durabilities x 5 sizes.
    assert_eq!(rows.len(), 50);
    for row in rows {
        assert_eq!(row.bytes, row.ops * row.io_size, "{row:?}");
        assert!(row.ops >= 8);
        if row.system == "engine" {
            // Headers, footers and padding: never fewer device bytes than user bytes.
            assert!(row.device_bytes > row.bytes, "{row:?}");
        } else {
            assert_eq!(row.device_bytes, row.bytes);
        }
        assert!(row.seconds > 0.0 && row.mb_s.is_finite() && row.mb_s > 0.0, "{row:?}");
        let v = row.vs_raw.expect("every row has a raw reference");
        assert!(v > 0.0 && v.is_finite(), "{row:?}");
        if row.system == "raw-zoned" {
            assert_eq!(v, 1.0);
        }
    }
    table_is_rectangular(&r.table);
    assert_eq!(r.plots.len(), 2);
}

#[test]
fn write_bench_rounds_report_medians_of_every_wall_cell() {
    let r = write_bench(&StoreBenchOptions { rounds: 3, ..tiny() }).unwrap();
    let rows = io_rows(&r);
    assert_eq!(rows.len(), 50);
    assert!(r.notes.iter().any(|n| n.contains("median time of 3 rounds")), "{:?}", r.notes);
    for row in rows.iter().filter(|x| x.clock == "wall") {
        assert!(row.seconds > 0.0 && row.seconds.is_finite(), "{row:?}");
    }
    let one = write_bench(&tiny()).unwrap();
    assert!(one.notes.iter().any(|n| n.contains("one run each")), "{:?}", one.notes);
}

#[test]
fn modelled_write_results_are_deterministic() {
    let a = write_bench(&tiny()).unwrap();
    let b = write_bench(&tiny()).unwrap();
    let m = |r: &StoreBenchReport| -> Vec<(u64, u64)> {
        io_rows(r)
            .iter()
            .filter(|x| x.clock == "modelled")
            .map(|x| (x.device_bytes, x.seconds.to_bits()))
            .collect()
    };
    assert_eq!(m(&a), m(&b));
}

#[test]
fn read_bench_reads_what_it_says() {
    let r = read_bench(&tiny()).unwrap();
    let rows = io_rows(&r);
    assert_eq!(rows.len(), 25);
    for row in rows {
        assert_eq!(row.bytes, row.ops * row.io_size);
        assert!(row.mb_s > 0.0 && row.mb_s.is_finite());
        let v = row.vs_raw.unwrap();
        assert!(v > 0.0 && v.is_finite());
        if row.system == "engine" {
            // Whole slices with footers, aligned to 4 KiB.
            assert!(row.device_bytes >= row.bytes, "{row:?}");
        }
    }
    table_is_rectangular(&r.table);
}

#[test]
fn macro_one_zone_moves_at_least_as_much_as_guided() {
    let opts = StoreBenchOptions { scale: 0.01, ..tiny() };
    let p = macro_placements();
    let r = macro_bench_with(&opts, &p[..2]).unwrap();
    let BenchResult::Macro(runs) = &r.result else { panic!() };
    let (g, o) = (&runs[0], &runs[1]);
    for run in runs {
        assert!(!run.out_of_space, "{}", run.name);
        assert!(run.deletions > 0 && run.zone_resets > 0, "{}: deletions and resets must happen", run.name);
        assert!(run.device_bytes > run.user_bytes && run.gc_bytes < run.device_bytes);
        assert!(run.write_amplification > 1.0 && run.write_amplification.is_finite());
        assert!(run.gc_write_amplification >= 1.0);
        assert!(run.windows.iter().all(|w| w.mb_s > 0.0 && w.mb_s.is_finite()));
        assert!(run.windows.windows(2).all(|w| w[0].t < w[1].t), "time moves forward");
        assert!(run.windows.iter().any(|w| w.deleting) && run.windows.iter().any(|w| !w.deleting));
        assert!(run.zone_utilisation.iter().all(|&u| (0.0..=1.0).contains(&u)));
        let cdf = cdf_points(&run.zone_utilisation);
        assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1), "CDF is monotone");
        assert_eq!(cdf.last().map(|p| p.1), Some(1.0));
    }
    // The same writes and deletions (same seed): mixing streams in one zone leaves more
    // live data in GC victims.
    assert_eq!(g.user_bytes, o.user_bytes);
    assert!(o.gc_bytes >= g.gc_bytes, "one-zone GC {} < guided {}", o.gc_bytes, g.gc_bytes);
    assert!(o.gc_migrations > 0, "one-zone mixes every stream in one zone: GC must migrate");
    table_is_rectangular(&r.table);
    // The victim breakdown accounts for every zone GC migrated, per placement.
    let (_, vt) = r.extra.iter().find(|(n, _)| n == "gc victims").expect("victim table");
    table_is_rectangular(vt);
    for run in runs {
        let zones: u64 = vt
            .rows
            .iter()
            .filter(|row| row[0] == run.name && row[1] != "garbage (reset only)")
            .map(|row| row[2].parse::<u64>().unwrap())
            .sum();
        assert_eq!(zones, run.gc_migrations, "{}", run.name);
    }
}

#[test]
fn recovery_bench_finds_every_chunk() {
    let r = recovery_bench(&tiny()).unwrap();
    let BenchResult::Recovery(rows) = &r.result else { panic!() };
    assert_eq!(rows.len(), 10);
    for row in rows {
        assert!(row.chunks > 0 && row.records > 0 && row.bytes_read > 0 && row.modelled_seconds > 0.0);
        let steps = row.superzone_seconds
            + row.checkpoint_load_seconds
            + row.journal_replay_seconds
            + row.datazone_scan_seconds
            + row.index_build_seconds;
        assert!(steps <= row.wall_seconds * 1.0001 + 1e-6, "{row:?}");
        if row.mode == "checkpointed" {
            assert_eq!(row.zones_scanned, 0, "{row:?}");
        } else {
            assert!(row.zones_scanned > 0 && row.bytes_scanned >= row.data_bytes, "{row:?}");
        }
    }
    table_is_rectangular(&r.table);
}

#[test]
fn memory_bench_counts_index_bytes() {
    let r = memory_bench(&tiny()).unwrap();
    let BenchResult::Memory(rows) = &r.result else { panic!() };
    for row in rows {
        assert_eq!(row.per_record, 8);
        // One index group per chunk here: total = chunks x per_chunk + records x 8.
        assert_eq!(
            row.total as u64,
            row.chunks * row.per_chunk as u64 + row.chunks * row.records_per_chunk * 8
        );
    }
    table_is_rectangular(&r.table);
}

#[test]
fn cpu_bench_reports_positive_costs() {
    let r = cpu_bench(&tiny()).unwrap();
    let BenchResult::Cpu(rows) = &r.result else { panic!() };
    assert_eq!(rows.len(), 8);
    for row in rows {
        assert!(row.bytes > 0 && row.wall_seconds > 0.0);
        assert!(row.cpu_seconds >= 0.0 && row.cpu_s_per_gb.is_finite(), "{row:?}");
    }
    table_is_rectangular(&r.table);
}

#[test]
fn unknown_bench_is_an_error() {
    assert!(matches!(run("nope", &tiny()), Err(BenchError::Unknown(_))));
}
