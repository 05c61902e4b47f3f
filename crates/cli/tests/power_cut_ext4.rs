//! Power cuts under ext4, for the served block cache and translation layers: "fsynced" means
//! what it says for the whole data path, not only the chunk store.
//!
//! A SIGKILL keeps the page cache, so a killed server's unsynced writes still reach its files.
//! Here the cache and backing files (or the layer's file) live on a FUSE file system that
//! keeps written data in a volatile cache until `fsync` (`shingled_fuse::LossyFs`, LazyFS-style)
//! and the power is cut for real: after the server stops, every write of its files not covered
//! by an `fsync` is dropped, kept, or torn at a 512-byte boundary.
//!
//! For each configuration (an LRU read-write cache and a SAC write-cache over a plain backing
//! file; SMaRT and dm-zoned layers): create or format inside the lossy mount, cut the power at
//! once (the format must be durable), then `shingled … serve` + `losetup` + `mkfs.ext4` +
//! `mount` and files written and `sync`ed. Then several lives, each: more files, some made
//! durable one by one (`fsync` of the file and of its directory), others left unsynced and
//! still being written when the power goes — the cut comes either as a SIGKILL of the server
//! after a random delay, or at a random I/O of its files (that one and every later one fail
//! with EIO, as a drive losing power mid-command), followed by the cut with survivors chosen at
//! random; then everything torn down, the server started again (recovery), ext4's journal
//! replayed, `fsck.ext4 -fn` clean and every file made durable so far read back byte-exact.
//! Finally a clean stop and `cache check` / `stl check` clean.
//!
//! `SHINGLED_POWER_LIVES=N` sets the lives per configuration (default 3),
//! `SHINGLED_POWER_SEED=S` the seed. Needs root, FUSE, loop devices and e2fsprogs; skips with
//! the reason where any is missing.

mod common;
use common::{
    assert_files, assert_fsck_clean, attach, late_writer, missing, replay_journal, run, serve, stop_server,
    Teardown,
};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use shingled_fuse::{LossyFs, Survivors};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_shingled");

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v:?}: not a number")))
}

/// What is served: `shingled cache serve` or `shingled stl serve`, on a file in the lossy mount.
struct Setup {
    /// `cache` or `stl`.
    command: &'static str,
    /// Creates the files in `lossy`; returns the file to serve.
    make: fn(lossy: &Path) -> PathBuf,
}

fn cache_setup(lossy: &Path, args: &[&str]) -> PathBuf {
    let backing = lossy.join("backing.img");
    let f = std::fs::File::create(&backing).unwrap();
    f.set_len(128 << 20).unwrap();
    f.sync_all().unwrap(); // the drive image exists before the cache: its size survives a cut
    let cache = lossy.join("cache.img");
    run(Command::new(BIN)
        .args(["cache", "create"])
        .arg(&cache)
        .arg("--backing")
        .arg(&backing)
        .args(["--size", "16MiB"])
        .args(args));
    cache
}

fn make_lru(lossy: &Path) -> PathBuf {
    cache_setup(lossy, &["--policy", "lru", "--mode", "read-write"])
}

fn make_sac(lossy: &Path) -> PathBuf {
    cache_setup(
        lossy,
        &["--policy", "sac", "--band-size", "1MiB", "--pb-size", "4MiB", "--mode", "write-cache"],
    )
}

fn make_smart(lossy: &Path) -> PathBuf {
    let img = lossy.join("smart.img");
    run(Command::new(BIN).args(["stl", "format", "smart"]).arg(&img).args([
        "--size",
        "128MiB",
        "--track-size",
        "256KiB",
        "--zones",
        "2",
    ]));
    img
}

fn make_dmzoned(lossy: &Path) -> PathBuf {
    let img = lossy.join("dmzoned.img");
    run(Command::new(BIN).args(["stl", "format", "dm-zoned"]).arg(&img).args([
        "--size",
        "128MiB",
        "--zone-size",
        "8MiB",
        "--conventional",
        "4",
    ]));
    img
}

/// Writes `data` to `p` and makes it durable: fsync of the file, then of its directory.
fn write_durably(p: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(p)?;
    f.write_all(data)?;
    f.sync_all()?;
    std::fs::File::open(p.parent().unwrap())?.sync_all()
}

fn scenario(name: &str, setup: Setup, seed: u64) {
    let t0 = Instant::now();
    let lives = env_u64("SHINGLED_POWER_LIVES").unwrap_or(3);
    let seed = env_u64("SHINGLED_POWER_SEED").unwrap_or(seed);
    let mut rng = Pcg64::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let (lossy_dir, fuse, fs) = (dir.path().join("lossy"), dir.path().join("fuse"), dir.path().join("fs"));
    for d in [&lossy_dir, &fuse, &fs] {
        std::fs::create_dir(d).unwrap();
    }
    let lossy = LossyFs::new();
    let _mounted = lossy.mount(&lossy_dir).expect("mount the lossy file system");
    let mut t = Teardown::new(&fs, &fuse);
    let file = (setup.make)(&lossy_dir);
    // The format must be durable by itself.
    lossy.cut_power(Survivors::None);
    run(Command::new(BIN).args([setup.command, "check"]).arg(&file));

    let disk = serve(&mut t, setup.command, &file);
    let dev = attach(&mut t, &disk, &[]);
    run(Command::new("mkfs.ext4").args(["-q", "-F", "-E", "nodiscard"]).arg(&dev));
    run(Command::new("mount").arg(&dev).arg(&fs));
    let mut durable: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();
    for i in 0..20 {
        let p = fs.join(format!("d{}", i % 3)).join(format!("f{i}"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut data = vec![0u8; rng.random_range(0..=512 << 10)];
        rng.fill(&mut data[..]);
        std::fs::write(&p, &data).unwrap();
        durable.insert(p, data);
    }
    run(&mut Command::new("sync"));
    let mut cut_kinds = [0u32; 2];
    for life in 1..=lives {
        // Unsynced O_DIRECT writes going on while files are made durable one by one.
        let stop = Arc::new(AtomicBool::new(false));
        // The last life's unsynced files (whatever came back of them) make room for these.
        let _ = std::fs::remove_dir_all(fs.join(format!("late{}", life - 1)));
        let late = fs.join(format!("late{life}"));
        std::fs::create_dir_all(&late).unwrap();
        let writer = {
            let (late, stop, s) = (late.clone(), Arc::clone(&stop), rng.random());
            // At most 6 MiB a life, so that many lives fit the file system.
            std::thread::spawn(move || late_writer(late, s, stop, Arc::default(), 96, 1..=7))
        };
        for k in 0..rng.random_range(3..8) {
            let p = fs.join(format!("d{}", k % 3)).join(format!("l{life}-{k}"));
            let mut data = vec![0u8; rng.random_range(0..=256 << 10)];
            rng.fill(&mut data[..]);
            write_durably(&p, &data)
                .unwrap_or_else(|e| panic!("{name}: life {life}: fsync of {}: {e}", p.display()));
            durable.insert(p, data);
        }
        let at_io = rng.random_bool(0.5);
        if at_io {
            // At a random I/O of the server's files: it and every later one fail with EIO.
            lossy.fail_after(rng.random_range(0..400));
            std::thread::sleep(Duration::from_millis(rng.random_range(50..400)));
        } else {
            std::thread::sleep(Duration::from_millis(rng.random_range(0..300)));
        }
        cut_kinds[usize::from(at_io)] += 1;
        let mut server = t.servers.pop().unwrap();
        server.kill().unwrap();
        server.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        let survivors = match rng.random_range(0..3) {
            0 => Survivors::None,
            1 => Survivors::All,
            _ => Survivors::Random { seed: rng.random() },
        };
        let unsynced = lossy.cut_power(survivors);
        writer.join().unwrap();
        t.clean();
        eprintln!(
            "{name}: life {life}: power cut ({}, {survivors:?}) with {unsynced} unsynced writes",
            if at_io { "at an I/O" } else { "SIGKILL" }
        );

        // Recovery: serve again, ext4's journal, fsck, every durable file exact.
        let disk = serve(&mut t, setup.command, &file);
        let dev = attach(&mut t, &disk, &[]);
        replay_journal(&dev, name);
        assert_fsck_clean(&dev, &format!("{name}: after power cut {life}"));
        run(Command::new("mount").arg(&dev).arg(&fs));
        assert_files(&durable, &format!("{name}: after power cut {life} (seed {seed})"));
    }
    run(Command::new("umount").arg(&fs));
    for l in t.loops.drain(..) {
        run(Command::new("losetup").arg("-d").arg(&l));
    }
    stop_server(&mut t, name);
    run(Command::new(BIN).args([setup.command, "check"]).arg(&file));
    t.clean();
    eprintln!(
        "{name}: {lives} power cuts ({} by SIGKILL, {} at an I/O), {} durable files exact, {:.1} s",
        cut_kinds[0],
        cut_kinds[1],
        durable.len(),
        t0.elapsed().as_secs_f64()
    );
}

macro_rules! power_cut_test {
    ($test:ident, $name:literal, $command:literal, $make:ident, $seed:literal) => {
        #[test]
        fn $test() {
            if let Some(why) = missing() {
                eprintln!("skipping {}: {why}", stringify!($test));
                return;
            }
            scenario($name, Setup { command: $command, make: $make }, $seed);
        }
    };
}

power_cut_test!(ext4_on_lru_cache_survives_power_cuts, "lru cache", "cache", make_lru, 11);
power_cut_test!(ext4_on_sac_write_cache_survives_power_cuts, "sac cache", "cache", make_sac, 12);
power_cut_test!(ext4_on_smart_survives_power_cuts, "smart", "stl", make_smart, 13);
power_cut_test!(ext4_on_dm_zoned_survives_power_cuts, "dm-zoned", "stl", make_dmzoned, 14);
