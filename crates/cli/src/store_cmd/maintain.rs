//! `store fsck` and `gc`.

use super::{close, list_paths, open_front, with_paths, FsckArgs, GcArgs};
use anyhow::{bail, Context, Result};
use shingled_core::ByteSize;

/// Opening recovers the store read-only (nothing is written: a checker does not change what it
/// checks); damage recovery cannot pass is an error naming zone and offset. Then every drive
/// is checked.
pub(super) fn fsck(a: FsckArgs) -> Result<()> {
    a.output.start()?;
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, true)?;
    let reps = front.fsck().map_err(|e| with_paths(e, &paths))?;
    let problems: usize = reps.iter().map(|r| r.problem_count()).sum();
    if !a.output.is_table() {
        let v: Vec<serde_json::Value> = paths
            .iter()
            .zip(&reps)
            .map(|(p, r)| {
                // The report's serde form and the device file it is of.
                let mut j = serde_json::to_value(r)?;
                j["device"] = serde_json::to_value(p)?;
                Ok(j)
            })
            .collect::<Result<_>>()?;
        a.output.print_value(&v)?;
    } else {
        for (p, r) in paths.iter().zip(&reps) {
            for d in &r.device {
                let kind = if d.after_crash { "warning" } else { "problem" };
                println!("{}: device metadata {kind}: {}", p.display(), d.what);
            }
            for q in &r.problems {
                let chunk = match (q.chunk, q.chunk_offset) {
                    (Some(c), Some(o)) => format!(", chunk {c} at chunk offset {o}"),
                    (Some(c), None) => format!(", chunk {c}"),
                    _ => String::new(),
                };
                println!("{}: zone {} byte {}{chunk}: {}", p.display(), q.zone, q.offset, q.what);
            }
            println!(
                "{}: {}: {} zones, {} records, {} chunks checked ({} read), {} torn tails, {} problems",
                p.display(),
                if r.is_clean() { "clean" } else { "DAMAGED" },
                r.zones_checked,
                r.records_checked,
                r.chunks_checked,
                ByteSize(r.bytes_checked),
                r.torn_tails,
                r.problem_count()
            );
        }
    }
    if problems > 0 {
        bail!("fsck found {problems} problems in {}", list_paths(&paths));
    }
    Ok(())
}

pub(super) fn gc(a: GcArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, false)?;
    for (d, path) in paths.iter().enumerate() {
        let mut rounds = 0;
        let st = front.drive_mut(d).expect("one store per path");
        while a.rounds.is_none_or(|r| rounds < r) {
            // An explicit GC reclaims any dead data, not only zones a quarter dead.
            match st.gc_any().with_context(|| format!("GC on {}", path.display()))? {
                Some(z) => println!("{}: reclaimed zone {z}", path.display()),
                None => break,
            }
            rounds += 1;
        }
        println!(
            "{}: {rounds} zones reclaimed, {} user bytes migrated, {} free datazones",
            path.display(),
            st.stats().gc_bytes_migrated,
            st.free_zones()
        );
    }
    close(&mut front, &paths)
}
