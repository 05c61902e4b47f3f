//! Every name a registry holds reaches the user: listed by the CLI, accepted by its parser, and
//! visible from Python. Drive and SSD profiles (`shingled_device::PROFILES`), experiments
//! (`shingled_sim::experiments::REGISTRY`) and cache policies (`PolicyConfig`'s `policies!`
//! list). Python sees them through the functions `crates/py` calls (`profile_names`,
//! `experiments::EXPERIMENTS`, `PolicyConfig::NAMES`), which are checked against the registries.

use shingled_cache::{PolicyConfig, ALIASES};
use shingled_device::{PROFILES, SSD_PROFILES};
use shingled_sim::experiments::{Fixed, EXPERIMENTS, REGISTRY};
use shingled_sim::SimConfig;
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The first word of every line a listing command prints.
fn listed(args: &[&str]) -> Vec<String> {
    let o = shingled(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o).lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect()
}

/// The configuration `shingled config ARGS` prints, read back.
fn config(args: &[&str]) -> SimConfig {
    let mut all = vec!["config"];
    all.extend(args);
    let o = shingled(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    SimConfig::from_toml(&stdout(&o)).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn every_drive_and_ssd_profile_is_listed_accepted_and_seen_from_python() {
    let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
    // Python: `shingled.drives()` and `drive_profile(name)` call these.
    assert_eq!(shingled_device::profile_names(), names);
    for p in PROFILES {
        assert_eq!(shingled_device::profile(p.name), Some((p.config)()), "{}", p.name);
        assert!(!p.about.is_empty(), "{}: a line saying what it models", p.name);
    }
    // Listed, in the table's order.
    assert_eq!(listed(&["drives"]), names);
    assert_eq!(listed(&["drive", "profiles"]), names);
    // Accepted by `--drive NAME`: the run's drive is the profile's configuration.
    for p in PROFILES {
        assert_eq!(config(&["--drive", p.name]).drive, (p.config)(), "--drive {}", p.name);
    }
    let e = stderr(&shingled(&["config", "--drive", "no-such-drive"]));
    assert!(names.iter().all(|n| e.contains(n)), "the error lists every profile: {e}");
    // SSD profiles: `--ssd NAME`.
    assert_eq!(shingled_device::ssd_profile_names(), SSD_PROFILES.iter().map(|p| p.name).collect::<Vec<_>>());
    for p in SSD_PROFILES {
        assert_eq!(config(&["--ssd", p.name]).ssd, (p.config)(), "--ssd {}", p.name);
    }
    let e = stderr(&shingled(&["config", "--ssd", "no-such-ssd"]));
    assert!(SSD_PROFILES.iter().all(|p| e.contains(p.name)), "the error lists every SSD profile: {e}");
}

#[test]
fn every_experiment_is_listed_accepted_and_seen_from_python() {
    // Python: `shingled.experiments()` is `EXPERIMENTS`.
    let pairs: Vec<(&str, &str)> = REGISTRY.iter().map(|d| (d.name, d.title)).collect();
    assert_eq!(EXPERIMENTS.to_vec(), pairs);
    // Listed with its title, in the registry's order.
    let o = shingled(&["experiment", "list"]);
    let list = stdout(&o);
    assert_eq!(listed(&["experiment", "list"]), pairs.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    for (name, title) in &pairs {
        assert!(list.lines().any(|l| l.starts_with(name) && l.ends_with(title)), "{name}: {list}");
    }
    // Accepted: the experiment is planned and stops at its (missing) trace, before any run;
    // the flags its entry says it sets are refused, the others are not.
    let dir = tempfile::tempdir().unwrap();
    // (part, flags that set it, how the refusal names them)
    let flags: [(Fixed, &[&str], &str); 7] = [
        (Fixed::CacheSize, &["--cache-size", "3%"], "--cache-size"),
        (Fixed::Mode, &["--mode", "read-write"], "--mode"),
        (Fixed::Replay, &["--replay", "open"], "--replay"),
        (Fixed::IoUnit, &["--io-unit", "block"], "--io-unit"),
        (Fixed::Drive, &["--drive", "st8000as0002"], "--drive/--drive-file"),
        (Fixed::TraceScaling, &["--lba-scale", "2"], "--lba-scale/--fold"),
        (Fixed::NoCache, &["--ssd", "sata"], "--warmup/--ssd"),
    ];
    for d in REGISTRY {
        let missing = dir.path().join(format!("{}.csv", d.name));
        let missing = missing.to_str().unwrap();
        let o = shingled(&["experiment", d.name, "--on", missing]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{}: {e}", d.name);
        assert!(e.contains(missing) && !e.contains("unknown experiment"), "{}: {e}", d.name);
        for (part, args, says) in &flags {
            let mut all = vec!["experiment", d.name, "--on", missing];
            all.extend(*args);
            let e = stderr(&shingled(&all));
            if d.fixes(*part) {
                assert!(
                    e.contains(&format!("sets {says}")) && e.contains("would be ignored"),
                    "{all:?}: {e}"
                );
            } else {
                assert!(e.contains(missing), "{all:?} is not refused: {e}");
            }
        }
    }
    // The sampling flags reach the curve forms and are refused by the full-run experiments,
    // whose error names the curve forms.
    let curves: Vec<&str> = REGISTRY.iter().filter(|d| d.curve_of.is_some()).map(|d| d.name).collect();
    assert!(curves.contains(&"pore-ssd-size-curve") && curves.contains(&"sac-write-only-curve"));
    for d in REGISTRY {
        let missing = dir.path().join(format!("{}.csv", d.name));
        let missing = missing.to_str().unwrap();
        for flags in [&["--rate", "0.5"][..], &["--validate", "2", "--samples", "2"], &["--seed", "3"]] {
            let mut all = vec!["experiment", d.name, "--on", missing];
            all.extend(flags);
            let o = shingled(&all);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{all:?}: {e}");
            if d.curve_of.is_some() {
                assert!(e.contains(missing), "{all:?} is accepted: {e}");
            } else {
                assert!(
                    e.contains(flags[0]) && e.contains("curve forms") && curves.iter().all(|c| e.contains(c)),
                    "{all:?}: {e}"
                );
            }
        }
        let o = shingled(&["experiment", d.name, "--on", missing, "--rate", "2"]);
        if d.curve_of.is_some() {
            let e = stderr(&o);
            assert!(e.contains("--rate") && e.contains("(0, 1]"), "{}: {e}", d.name);
        }
    }
    let e = stderr(&shingled(&["experiment", "no-such-experiment"]));
    assert!(pairs.iter().all(|(n, _)| e.contains(n)), "the error lists every experiment: {e}");
}

#[test]
fn every_policy_and_alias_is_listed_accepted_and_seen_from_python() {
    // Python: `shingled.policies()` is `PolicyConfig::NAMES`; `shingled policies` prints
    // `DESCRIPTIONS`, then the aliases.
    let names: Vec<&str> = PolicyConfig::DESCRIPTIONS.iter().map(|(n, _)| *n).collect();
    assert_eq!(PolicyConfig::NAMES, names);
    let all = listed(&["policies"]);
    let aliases_at = all.iter().position(|w| w == "aliases").expect("an aliases section");
    assert_eq!(all[..aliases_at], names);
    assert_eq!(all[aliases_at + 1..], ALIASES.iter().map(|(a, _)| *a).collect::<Vec<_>>());
    // Accepted by `--policy NAME`: the cache runs that policy (an alias: the policy it stands for).
    for name in PolicyConfig::all_names() {
        let policy = config(&["--policy", name]).cache.expect("a cache").policy;
        assert_eq!(policy, name.parse::<PolicyConfig>().unwrap(), "--policy {name}");
        if PolicyConfig::NAMES.contains(&name) {
            assert_eq!(policy.name(), name);
        }
    }
    let e = stderr(&shingled(&["config", "--policy", "no-such-policy"]));
    assert!(PolicyConfig::all_names().iter().all(|n| e.contains(n)), "the error lists every policy: {e}");
}

/// Every trace format of the `formats!` list: listed by `shingled trace formats`, accepted by
/// `--format NAME` (the run gets as far as reading the file), and round-tripping through its
/// name and serde name.
#[test]
fn every_trace_format_is_listed_and_accepted() {
    use shingled_trace::Format;
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(listed(&["trace", "formats"]), names, "`shingled trace formats` lists the registry in order");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.trace");
    std::fs::write(&empty, b"").unwrap();
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
        assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{}\"", f.name()));
        let o = shingled(&["trace", "stats", "--format", f.name(), empty.to_str().unwrap()]);
        let e = stderr(&o);
        assert!(!e.contains("unknown") && !e.contains("invalid value"), "--format {}: {e}", f.name());
    }
}
