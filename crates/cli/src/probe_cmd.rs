//! `shingled probe pb|bands|all`: detect a drive-managed SMR drive's persistent-buffer capacity
//! (SAC §5.1) and band layout (SAC §5.2, after Skylight) on a drive model or a real device, and
//! write what was found as a drive profile `shingled sim --drive-file` loads.

use crate::common_args::parse_bands;
use crate::output::{Output, OutputArgs};
use crate::plot;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shingled_bench::Series;
use shingled_core::{BandConfig, ByteSize, SizeSpec};
use shingled_device::{BuildContext, DmSmrConfig, DriveConfig};
use shingled_probe::{
    detect_bands, detect_pb, BandProbeConfig, BandReport, DeviceOptions, DeviceTarget, Found, HiddenDrive,
    HiddenSpec, ModelTarget, NoiseConfig, Noisy, PbProbeConfig, PbReport, ProbeTarget, Progress,
};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// What to detect.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum What {
    /// The PB capacity (SAC §5.1).
    Pb,
    /// The band sizes around target LBAs (SAC §5.2); needs the PB size (--assume-pb, or the PB
    /// is detected first).
    Bands,
    /// Both, the PB first.
    All,
}

/// Flags of `shingled probe`.
#[derive(Args, Debug)]
pub struct ProbeCmd {
    /// What to detect: pb, bands or all.
    #[arg(value_enum)]
    pub what: What,

    /// Probe a drive model (a dm-smr profile, see `shingled drives`).
    #[arg(long, short, conflicts_with_all = ["device", "hidden"])]
    pub drive: Option<String>,
    /// Model: persistent-buffer size (overrides the profile's), absolute or a fraction of the
    /// capacity (1/256).
    #[arg(long, requires = "drive")]
    pub pb_size: Option<String>,
    /// Model: band layout, fixed:SIZE, uniform:MIN:MAX[:SEED] or lba:OUTER:INNER.
    #[arg(long, requires = "drive")]
    pub bands: Option<String>,
    /// Model: host capacity.
    #[arg(long, requires = "drive")]
    pub drive_capacity: Option<String>,
    /// Model: PB entry limit (0 removes the profile's limit).
    #[arg(long, requires = "drive")]
    pub pb_entries: Option<u64>,
    /// Model: timing jitter, ±fraction of each service time (e.g. 0.2).
    #[arg(long, requires = "drive")]
    pub noise: Option<f64>,
    /// Probe a model with hidden random parameters drawn with this seed (the accuracy test's
    /// distribution: SAC's ST8000AS0002 with a PB of 0.5–30 GB, bands of 15–40 MB fixed, uniform
    /// or LBA-dependent, and each PB mechanism drawn; all sizes scaled by 1/100); the hidden
    /// values are printed after the detection. The default target.
    #[arg(long, conflicts_with_all = ["device"])]
    pub hidden: Option<u64>,
    /// Probe a real block device or a regular file (O_DIRECT). DESTROYS ITS DATA.
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Confirm that everything on --device may be overwritten.
    #[arg(long, requires = "device")]
    pub destroy_data: bool,
    /// Device: open without O_DIRECT if the file system refuses it (timings are then
    /// meaningless; for trying the command on a file in tmpfs).
    #[arg(long, requires = "device")]
    pub allow_buffered: bool,
    /// Device: do not open with O_DSYNC (writes may then complete in the drive's volatile cache).
    #[arg(long, requires = "device")]
    pub no_dsync: bool,

    /// PB: the upper bound C of the PB capacity; [0, C) is written, after [C, 2C) to empty the
    /// PB (default: 1/32 of the capacity).
    #[arg(long)]
    pub upper_bound: Option<String>,
    /// PB: request size of the random writes (SAC Table 3: 4KiB, 8KiB, 256KiB).
    #[arg(long, default_value = "4KiB")]
    pub block_size: String,
    /// PB: request size of the sequential pass that empties the PB (default: --block-size; 1MiB
    /// is much faster on a real drive that cleans its PB when idle).
    #[arg(long)]
    pub sequential_request: Option<String>,
    /// PB: skip step 1 (emptying the PB); only for a target known to be empty.
    #[arg(long)]
    pub skip_empty: bool,
    /// Idle seconds before the random writes (PB) and before each band target, for drives that
    /// clean their PB when idle.
    #[arg(long, default_value_t = 600.0)]
    pub settle: f64,
    /// PB: writes per IOPS window (default: C / block size / 2000, at least 32).
    #[arg(long)]
    pub window: Option<u64>,
    /// PB: the cliff is a drop of the mean write rate to below this fraction of the rate
    /// before it.
    #[arg(long, default_value_t = 0.5)]
    pub fraction: f64,

    /// Bands: the PB size to use (default: detect it first).
    #[arg(long)]
    pub assume_pb: Option<String>,
    /// Bands: target LBAs as byte offsets or percentages of the capacity, comma separated
    /// (e.g. 10%,50%,90% or 1TB). Default: --target-count targets spread evenly.
    #[arg(long, value_delimiter = ',')]
    pub targets: Vec<String>,
    /// Bands: number of evenly spread targets when --targets is not given.
    #[arg(long, default_value_t = 1)]
    pub target_count: u32,
    /// Bands: read size of the sequential read (SAC: 1MiB; default 32KiB for --hidden, whose
    /// bands are scaled down).
    #[arg(long)]
    pub read_size: Option<String>,
    /// Bands: bands to clean per target (evenly spread first writes).
    #[arg(long, default_value_t = 8)]
    pub markers: usize,

    /// Seed of the probes' random orders.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The report of what was found (`--output json`: everything, series included; `--output
    /// csv`: one row of those fields).
    #[command(flatten)]
    pub report: OutputArgs,
    /// Write the evidence as CSV into this directory: pb_iops.csv (the IOPS series),
    /// bands_reads.csv (every read latency, with the run it belongs to), bands_found.csv. Each
    /// file written is printed on stderr.
    #[arg(long, value_name = "DIR")]
    pub csv_dir: Option<PathBuf>,
    /// Plot the evidence as PNG charts beside FILE, named after its stem (`--png ev/probe.png`:
    /// ev/probe-pb-iops.png, ev/probe-bands-reads-<target>.png, one per band target). Each file
    /// written is printed on stderr.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Former flag: `--png DIR/probe.png`, the directory created.
    #[arg(long, value_name = "DIR", hide = true, conflicts_with = "png")]
    pub png_dir: Option<PathBuf>,
    /// Write what was found as a drive profile (TOML) for `shingled sim --drive-file`.
    #[arg(long, value_name = "FILE")]
    pub drive_file: Option<PathBuf>,
}

fn size(flag: &str, v: &str) -> Result<u64> {
    v.parse::<ByteSize>().map(|b| b.0).map_err(|e| anyhow::anyhow!("--{flag} {v:?}: {e}"))
}

/// The target and what a profile file starts from.
struct Opened {
    target: Box<dyn ProbeTarget>,
    /// The configuration a drive file is based on (detected fields replace its own).
    base: DmSmrConfig,
    hidden: Option<HiddenDrive>,
    scaled_defaults: bool,
    warnings: Vec<String>,
}

fn open_target(a: &ProbeCmd, min_size: u64) -> Result<Opened> {
    if let Some(path) = &a.device {
        let opts = DeviceOptions {
            destroy_data: a.destroy_data,
            direct: true,
            allow_buffered: a.allow_buffered,
            dsync: !a.no_dsync,
            min_size,
        };
        let t = DeviceTarget::open(path, &opts)?;
        let warnings = t.warnings().to_vec();
        return Ok(Opened {
            target: Box::new(t),
            base: DmSmrConfig::default(),
            hidden: None,
            scaled_defaults: false,
            warnings,
        });
    }
    if let Some(name) = &a.drive {
        let mut cfg = DriveConfig::from_profile(name)?;
        let Some(c) = cfg.dm_smr_mut() else {
            bail!(
                "--drive {name}: a {} drive has no persistent buffer to probe; name a dm-smr profile",
                cfg.model()
            )
        };
        if let Some(p) = &a.pb_size {
            c.pb_size = p.parse::<SizeSpec>().map_err(|e| anyhow::anyhow!("--pb-size {p:?}: {e}"))?;
        }
        if let Some(b) = &a.bands {
            c.bands = parse_bands(b)?;
        }
        if let Some(e) = a.pb_entries {
            c.pb_max_entries = (e > 0).then_some(e);
        }
        if let Some(cap) = &a.drive_capacity {
            cfg.set_capacity(ByteSize(size("drive-capacity", cap)?));
        }
        let DriveConfig::DmSmr(base) = cfg.clone() else { unreachable!("checked above") };
        let drive = cfg
            .build(&BuildContext::whole_drive(base.capacity))
            .with_context(|| format!("building the {name} model"))?;
        let drive: Box<dyn shingled_device::Drive> = match a.noise {
            Some(j) => {
                let n = NoiseConfig { jitter: j, seed: a.seed, ..NoiseConfig::default() };
                n.validate().context("--noise")?;
                Box::new(Noisy::new(drive, n))
            }
            None => drive,
        };
        return Ok(Opened {
            target: Box::new(ModelTarget::new(drive, name.clone())),
            base,
            hidden: None,
            scaled_defaults: false,
            warnings: vec![],
        });
    }
    let seed = a.hidden.unwrap_or(0);
    let mut warnings = vec![];
    if a.hidden.is_none() {
        warnings.push(
            "no --drive, --hidden or --device given: probing a model with hidden parameters (--hidden 0)"
                .into(),
        );
    }
    let h = HiddenDrive::draw(&HiddenSpec::default(), seed)?;
    Ok(Opened {
        target: Box::new(h.target()?),
        base: h.config.clone(),
        hidden: Some(h),
        scaled_defaults: true,
        warnings,
    })
}

/// A progress bar per step, on a terminal only.
struct Bars {
    bar: ProgressBar,
    step: &'static str,
}

impl Bars {
    fn new() -> Bars {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(1), target);
        bar.set_style(
            ProgressStyle::with_template("{msg:32} [{bar:40}] {bytes}/{total_bytes} ({eta})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Bars { bar, step: "" }
    }

    fn update(&mut self, p: Progress) {
        if p.step != self.step {
            self.step = p.step;
            self.bar.set_message(p.step);
            self.bar.set_length(p.total.max(1));
        }
        self.bar.set_position(p.done);
    }
}

/// Parses `--targets`: byte sizes or percentages of `capacity`.
fn parse_targets(items: &[String], count: u32, capacity: u64) -> Result<Vec<u64>> {
    if items.is_empty() {
        let n = count.max(1) as u64;
        return Ok((0..n).map(|i| (capacity / n) * i + capacity / (2 * n)).collect());
    }
    items
        .iter()
        .map(|t| {
            let t = t.trim();
            let v = if let Some(p) = t.strip_suffix('%') {
                let f: f64 =
                    p.trim().parse().map_err(|_| anyhow::anyhow!("--targets {t:?}: not a percentage"))?;
                if !(0.0..=100.0).contains(&f) {
                    bail!("--targets {t:?}: a percentage must be in 0..=100");
                }
                (capacity as f64 * f / 100.0) as u64
            } else {
                size("targets", t)?
            };
            if v >= capacity {
                bail!("--targets {t:?}: byte {v} is beyond the target's capacity of {capacity} bytes");
            }
            Ok(v)
        })
        .collect()
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    crate::out::file(path, text)?;
    crate::plot::wrote(path, "");
    Ok(())
}

/// Runs `shingled probe ...`.
pub fn run(a: ProbeCmd) -> Result<()> {
    a.report.check()?;
    if let Some(dir) = &a.png_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let png = a.png.clone().or_else(|| a.png_dir.as_ref().map(|d| d.join("probe.png")));
    if let Some(p) = &png {
        plot::png_output(p).map_err(|e| anyhow::anyhow!("--png {e}"))?;
    }
    let block_size = size("block-size", &a.block_size)?;
    let upper_bound = a.upper_bound.as_deref().map(|u| size("upper-bound", u)).transpose()?;
    let assume_pb = a.assume_pb.as_deref().map(|p| size("assume-pb", p)).transpose()?;
    // A device file must hold [0, C) for the PB probe (and [C, 2C), to empty the PB first, which
    // the probe checks); the band probe checks its own needs.
    let min_size = if a.what == What::Bands { 0 } else { upper_bound.unwrap_or(0) };
    let mut o = open_target(&a, min_size)?;
    for w in &o.warnings {
        eprintln!("warning: {w}");
    }
    let capacity = o.target.capacity();
    let read_size = match &a.read_size {
        Some(r) => size("read-size", r)?,
        None if o.scaled_defaults => HiddenDrive::READ_SIZE,
        None => 1 << 20,
    };
    let mut bars = Bars::new();

    let pb_cfg = PbProbeConfig {
        upper_bound,
        block_size,
        sequential_request: a
            .sequential_request
            .as_deref()
            .map(|s| size("sequential-request", s))
            .transpose()?,
        empty_first: !a.skip_empty,
        settle_s: a.settle,
        window_ops: a.window,
        cliff: shingled_probe::CliffParams { fraction: a.fraction, ..Default::default() },
        seed: a.seed,
        ..PbProbeConfig::default()
    };
    let need_pb = a.what == What::Pb || a.what == What::All || (a.what == What::Bands && assume_pb.is_none());
    if a.what == What::Bands && assume_pb.is_none() {
        eprintln!("note: no --assume-pb: detecting the PB capacity first");
    }
    let pb = if need_pb {
        let r = detect_pb(o.target.as_mut(), &pb_cfg, &mut |p| bars.update(p))
            .with_context(|| format!("PB detection on {}", o.target.describe()))?;
        Some(r)
    } else {
        None
    };
    let bands = if a.what != What::Pb {
        let pb_bytes = assume_pb.or(pb.as_ref().map(|r| r.pb_bytes)).expect("PB known");
        let cfg = BandProbeConfig {
            pb_bytes,
            targets: parse_targets(&a.targets, a.target_count, capacity)?,
            read_size,
            markers: a.markers,
            settle_s: a.settle,
            seed: a.seed,
            ..BandProbeConfig::default()
        };
        let r = detect_bands(o.target.as_mut(), &cfg, &mut |p| bars.update(p))
            .with_context(|| format!("band detection on {}", o.target.describe()))?;
        Some(r)
    } else {
        None
    };
    bars.bar.finish_and_clear();

    let found = Found::new(o.target.as_ref(), &o.base, pb, bands, o.hidden.take());
    let (pb, bands, layout, drive) =
        (found.pb.as_ref(), found.bands.as_ref(), found.layout.as_ref(), &found.drive);

    if let Some(dir) = &a.csv_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        if let Some(r) = pb {
            write_file(&dir.join("pb_iops.csv"), &r.iops_csv())?;
        }
        if let Some(b) = bands {
            write_file(&dir.join("bands_reads.csv"), &b.reads_csv())?;
            write_file(&dir.join("bands_found.csv"), &b.bands_csv())?;
        }
    }
    if let Some(png) = &png {
        plots(png, pb, bands, &o.target.describe())?;
    }
    if let Some(f) = &a.drive_file {
        let text = format!(
            "# Detected by `shingled probe` on {}.\n{}# Load with `shingled sim --drive-file {}`.\n{}",
            o.target.describe(),
            found.layout_scope.as_ref().map(|s| format!("# Band layout: {s}.\n")).unwrap_or_default(),
            f.display(),
            toml::to_string_pretty(drive).context("serializing the detected drive")?
        );
        write_file(f, &text)?;
    }

    let text = match a.report.format() {
        Output::Json => serde_json::to_string_pretty(&found)? + "\n",
        Output::Csv => crate::output::csv_of(&serde_json::to_value(&found)?),
        Output::Table => {
            table(&o, found.hidden.as_ref(), pb, bands, layout, found.layout_scope.as_deref(), block_size)
        }
    };
    a.report.emit(&text)
}

fn table(
    o: &Opened,
    hidden: Option<&HiddenDrive>,
    pb: Option<&PbReport>,
    bands: Option<&BandReport>,
    layout: Option<&BandConfig>,
    layout_scope: Option<&str>,
    block_size: u64,
) -> String {
    let mut s = format!("target: {}\n", o.target.describe());
    if let Some(r) = pb {
        s += &format!(
            "PB capacity ({} writes, QD1): {} ({} writes before the cliff)\n  \
             cliff at window {} of {}: {:.0} IOPS before, {:.1} after; C = {}; step 1 {:.1} s, step 2 {:.1} s\n  \
             PB emptied before step 2: {} ({} idle period(s) of --settle)\n",
            ByteSize(block_size),
            ByteSize(r.pb_bytes),
            r.cliff_op,
            r.cliff.window,
            r.windows.len(),
            r.cliff.plateau,
            r.cliff.after,
            ByteSize(r.upper_bound),
            r.step1_s,
            r.step2_s,
            if r.emptied { "yes" } else { "no, its leftover was cleaned first" },
            r.settle_rounds,
        );
    }
    if let Some(b) = bands {
        for smp in &b.samples {
            let accepted: Vec<_> = smp.bands.iter().filter(|x| x.accepted).collect();
            s += &format!(
                "bands around byte {} (range {} from byte {}): {} cleaned band(s) found, size {} (median); \
                 {} reads, low/high split at {:.3} ms (×{:.0})\n",
                smp.target,
                ByteSize(smp.range_len),
                smp.range_start,
                accepted.len(),
                ByteSize(smp.band_size),
                smp.reads.len(),
                smp.threshold_ms,
                smp.separation,
            );
            for x in &smp.bands {
                s += &format!(
                    "  band at byte {:>16}  size {:>10}{}{}\n",
                    x.start,
                    ByteSize(x.size).to_string(),
                    if x.refined { "" } else { "  (edges ± half a read)" },
                    if x.accepted { "" } else { "  (not used: fragment or several bands)" }
                );
            }
        }
    }
    if let Some(l) = layout {
        match layout_scope {
            Some(scope) => s += &format!("band layout: {} {scope}\n", describe_layout(l)),
            None => s += &format!("band layout: {}\n", describe_layout(l)),
        }
    }
    if let Some(h) = hidden {
        s += &format!("hidden drive: {}\n", h.describe());
        if let Some(r) = pb {
            let e = h.expected_pb(block_size);
            s += &format!(
                "  expected PB for {} writes: {} (detected {:+.1}%)\n",
                ByteSize(block_size),
                ByteSize(e),
                (r.pb_bytes as f64 / e as f64 - 1.0) * 100.0
            );
        }
    }
    s
}

fn describe_layout(l: &BandConfig) -> String {
    match l {
        BandConfig::Fixed { size } => format!("fixed {size}"),
        BandConfig::UniformRandom { min, max, .. } => format!("uniform {min} – {max}"),
        BandConfig::LbaDependent { outer, inner } => format!("{outer} at LBA 0 falling to {inner}"),
    }
}

fn plots(png: &Path, pb: Option<&PbReport>, bands: Option<&BandReport>, target: &str) -> Result<()> {
    if let Some(r) = pb {
        let mb = |op: u64| (op * r.block_size) as f64 / 1e6;
        let points = r.windows.iter().map(|w| (mb(w.first_op + w.ops), w.iops)).collect();
        let cliff = vec![(mb(r.cliff_op), r.cliff.plateau), (mb(r.cliff_op), r.cliff.after.max(1e-3))];
        let series = vec![
            Series {
                name: "IOPS per window".into(),
                x_label: "MB written in step 2".into(),
                y_label: "IOPS".into(),
                points,
                paper: vec![],
                paper_fitted: false,
            },
            Series {
                name: format!("cliff: PB = {}", ByteSize(r.pb_bytes)),
                x_label: String::new(),
                y_label: String::new(),
                points: cliff,
                paper: vec![],
                paper_fitted: false,
            },
        ];
        let file = crate::output::chart_path(png, "pb_iops");
        plot::line_chart(
            &file,
            &format!("PB capacity: IOPS of random writes (SAC Fig. 11) on {target}"),
            &series,
            true,
        )?;
        plot::wrote(&file, "");
    }
    if let Some(b) = bands {
        for smp in &b.samples {
            let mb = |off: u64| off as f64 / 1e6;
            let points = smp.reads.iter().map(|r| (mb(r.offset), r.latency_ms)).collect();
            // A square wave under the latencies: high over each cleaned band found.
            let (out, inside) = (smp.threshold_ms * 0.3, smp.threshold_ms * 0.6);
            let mut found = vec![(mb(smp.range_start), out)];
            for x in smp.bands.iter().filter(|x| x.accepted) {
                found.extend([(mb(x.start), out), (mb(x.start), inside), (mb(x.start + x.size), inside)]);
                found.push((mb(x.start + x.size), out));
            }
            found.push((mb(smp.range_start + smp.range_len), out));
            let series = vec![
                Series {
                    name: "read latency".into(),
                    x_label: "LBA (MB)".into(),
                    y_label: "latency (ms)".into(),
                    points,
                    paper: vec![],
                    paper_fitted: false,
                },
                Series {
                    name: "cleaned bands found".into(),
                    x_label: String::new(),
                    y_label: String::new(),
                    points: found,
                    paper: vec![],
                    paper_fitted: false,
                },
            ];
            let file = crate::output::chart_path(png, &format!("bands_reads_{}", smp.target));
            plot::line_chart(
                &file,
                &format!(
                    "Bands: sequential read latency after cleaning (SAC Fig. 12) on {target}, region at {}",
                    smp.target
                ),
                &series,
                true,
            )?;
            plot::wrote(&file, "");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_sizes_and_percentages() {
        let cap = 1_000_000_000;
        assert_eq!(parse_targets(&[], 2, cap).unwrap(), vec![250_000_000, 750_000_000]);
        let t = parse_targets(&["10%".into(), "500MB".into()], 1, cap).unwrap();
        assert_eq!(t, vec![100_000_000, 500_000_000]);
        let e = parse_targets(&["2GB".into()], 1, cap).unwrap_err().to_string();
        assert!(e.contains("beyond"), "{e}");
        assert!(parse_targets(&["150%".into()], 1, cap).is_err());
        assert!(parse_targets(&["x%".into()], 1, cap).is_err());
    }
}
