//! Simulation speed: block requests replayed per second for each scheme, with the trace already
//! in memory (so parsing is excluded), and memory per cached block.
//!
//! `cargo bench -p shingled-sim --bench replay [-- SPEC]` (default SPEC `synth:wdev`);
//! `SHINGLED_SETUP=generic` (or `sac`) measures that set-up instead of the default `pore`;
//! `SHINGLED_REPLAY=open` replays open loop (arrivals at the trace's timestamps) instead of
//! closed loop; `SHINGLED_SCHEMES=a,b` measures only those schemes; `SHINGLED_DRIVE=profile`
//! replaces the drive; `SHINGLED_UTILISATION=0.9` sets a SMaRT drive's utilisation.

use shingled_cache::{Cache, PolicyConfig, PolicyContext};
use shingled_core::BandConfig;
use shingled_device::BuildContext;
use shingled_sim::{scheme_config, sizing, Engine, Mode, SimConfig};
use shingled_trace::{Request, TraceReader};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let spec = std::env::args().skip(1).find(|a| !a.starts_with('-')).unwrap_or_else(|| "synth:wdev".into());
    let mut base = SimConfig::default();
    // SHINGLED_SETUP=generic|sac measures another set-up than the default (pore).
    if let Ok(name) = std::env::var("SHINGLED_SETUP") {
        shingled_sim::setup(&name).expect("a known set-up").apply(&mut base);
    }
    if let Ok(d) = std::env::var("SHINGLED_DRIVE") {
        base.drive = shingled_device::profile(&d).expect("a known drive profile");
    }
    if let Ok(u) = std::env::var("SHINGLED_UTILISATION") {
        base.drive.smart_mut().expect("SHINGLED_UTILISATION needs a SMaRT drive").utilisation =
            u.parse().expect("a utilisation in (0, 1)");
    }
    let replay: shingled_sim::Replay =
        std::env::var("SHINGLED_REPLAY").map(|r| r.parse().expect("closed or open")).unwrap_or_default();
    base.trace.path = spec.clone();
    let stats = shingled_sim::measure(&base.trace, &BandConfig::default()).expect("trace");
    let mut reader = shingled_sim::open_trace(&base.trace).expect("trace");
    let mut reqs: Vec<Request> = Vec::with_capacity(stats.requests as usize);
    while let Some(r) = reader.next_request().expect("trace") {
        reqs.push(r);
    }
    println!(
        "trace {spec}: {} requests, {} block requests, {} loop",
        stats.requests,
        stats.pages,
        replay.name()
    );
    println!("{:<28} {:>10} {:>14} {:>14} {:>12}", "scheme", "mode", "M blocks/s", "best of", "B/cached blk");
    let mut schemes: Vec<String> = vec!["smr-only".into(), "cmr-only".into()];
    schemes
        .extend(PolicyConfig::NAMES.iter().filter(|s| !shingled_sim::is_offline(s)).map(|s| s.to_string()));
    if let Ok(only) = std::env::var("SHINGLED_SCHEMES") {
        schemes = only.split(',').map(|s| s.trim().to_string()).collect();
    }
    for mode in [Mode::WriteOnly, Mode::ReadWrite] {
        for s in &schemes {
            let mut cfg = scheme_config(&base, s).unwrap();
            cfg.mode = mode;
            let sz = sizing(&cfg, &stats).unwrap();
            let ctx = BuildContext {
                written_range: sz.written_range.unwrap_or_default(),
                accessed_range: sz.accessed_range.unwrap_or_default(),
            };
            let mut best = 0f64;
            let mut per_block = 0.0;
            for _ in 0..3 {
                let drive = cfg.drive.build(&ctx).unwrap();
                let ssd = cfg.ssd.build().unwrap();
                let cache = cfg.cache.as_ref().map(|c| {
                    let pctx = PolicyContext {
                        block_span: None,
                        capacity_blocks: sz.cache_blocks as u32,
                        bands: drive.band_map().cloned().map(Arc::new),
                        pb_blocks: sz.pb_blocks,
                        seed: 0,
                        costs: Default::default(),
                    };
                    Cache::new(sz.cache_blocks as u32, c.policy.build(&pctx).unwrap())
                });
                let mut e =
                    Engine::new(mode, cache, ssd, drive).with_io_unit(cfg.io_unit).with_replay(replay, 1.0);
                let t = Instant::now();
                for r in &reqs {
                    e.process(r);
                }
                let secs = t.elapsed().as_secs_f64();
                let c = e.counters();
                let blocks = (c.blocks_read + c.blocks_written) as f64;
                best = best.max(blocks / secs / 1e6);
                if let Some(cache) = e.cache() {
                    per_block = cache.heap_bytes() as f64 / cache.table().capacity() as f64;
                }
            }
            println!(
                "{:<28} {:>10} {:>14.2} {:>14} {:>12}",
                s,
                mode.name(),
                best,
                "3 runs",
                if per_block > 0.0 { format!("{per_block:.1}") } else { "-".into() }
            );
        }
    }
}
