//! Progress of long commands: a bar on a terminal; when stderr is not one (piped, CI, batch),
//! a line every [`LINE_EVERY`] on stderr; or nothing. `--progress auto|bar|lines|none` chooses.

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shingled_sim::Progress;
use std::io::IsTerminal;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How progress is shown (`--progress`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// A bar when stderr is a terminal, else a line every 10 s.
    #[default]
    Auto,
    /// Always a bar (drawn only on a terminal).
    Bar,
    /// A line on stderr every 10 s.
    Lines,
    /// Nothing.
    None,
}

static MODE: OnceLock<ProgressMode> = OnceLock::new();

/// Sets the mode for the whole process (first call wins).
pub fn set_mode(m: ProgressMode) {
    let _ = MODE.set(m);
}

/// How often a line is printed in `lines` mode.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

fn mode() -> ProgressMode {
    match MODE.get().copied().unwrap_or_default() {
        ProgressMode::Auto if std::io::stderr().is_terminal() => ProgressMode::Bar,
        ProgressMode::Auto => ProgressMode::Lines,
        m => m,
    }
}

struct Lines {
    start: Instant,
    last: Instant,
    /// The phase being shown (curves) and when it began: its ETA counts from there.
    phase: &'static str,
    phase_start: Instant,
}

/// A progress display for one command.
pub struct Reporter {
    bar: ProgressBar,
    lines: Option<Mutex<Lines>>,
    what: String,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).expect("valid template").progress_chars("=> ")
}

impl Reporter {
    fn new(what: &str, total: Option<u64>, template: &str) -> Reporter {
        let m = mode();
        let target =
            if m == ProgressMode::Bar { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(total, target);
        bar.set_style(style(template));
        bar.set_message(what.to_string());
        if m == ProgressMode::Bar {
            bar.enable_steady_tick(Duration::from_millis(250));
        }
        let now = Instant::now();
        let lines = (m == ProgressMode::Lines)
            .then(|| Mutex::new(Lines { start: now, last: now, phase: "", phase_start: now }));
        Reporter { bar, lines, what: what.to_string() }
    }

    /// Several runs (compare, experiment): requests over all of them, runs finished, ETA.
    pub fn runs(what: &str) -> Reporter {
        Reporter::new(
            what,
            None,
            "{msg} [{bar:30}] {percent:>3}% {human_pos}/{human_len} requests, elapsed {elapsed}, eta {eta}",
        )
    }

    /// One run of `total` trace requests (sim).
    pub fn requests(what: &str, total: u64) -> Reporter {
        Reporter::new(
            what,
            Some(total),
            "{msg} [{bar:30}] {percent:>3}% {human_pos}/{human_len} requests, elapsed {elapsed}, eta {eta}",
        )
    }

    /// One run whose length is not known beforehand (the trace is read once, by the replay):
    /// requests so far and the rate, no ETA.
    pub fn requests_unknown(what: &str) -> Reporter {
        Reporter::new(what, None, "{spinner} {msg} {human_pos} requests, {per_sec}, elapsed {elapsed}")
    }

    /// A curve: each phase's requests (the footprint pass, counting, reading the samples,
    /// the simulations) and the simulations finished.
    pub fn curve(what: &str) -> Reporter {
        Reporter::new(
            what,
            None,
            "{msg} [{bar:30}] {percent:>3}% {human_pos}/{human_len} requests, elapsed {elapsed}, eta {eta}",
        )
    }

    /// Shows where a curve stands.
    pub fn update_curve(&self, p: shingled_sim::curve::CurveProgress) {
        let runs =
            if p.runs > 0 { format!(", {}/{} simulations", p.runs_done, p.runs) } else { String::new() };
        let phase = format!("{}{runs}", p.phase);
        if let Some(lines) = &self.lines {
            {
                let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
                if l.phase != p.phase {
                    l.phase = p.phase;
                    l.phase_start = Instant::now();
                }
            }
            self.line(p.requests, p.requests_total, &format!("{phase}, {} requests", p.requests));
            return;
        }
        self.bar.set_message(format!("{}: {phase}", self.what));
        // A phase of unknown length (measuring) has no bar length: no "100% of 0".
        let len = (p.requests_total > 0).then_some(p.requests_total);
        if self.bar.length() != len {
            match len {
                Some(n) => self.bar.set_length(n),
                None => self.bar.unset_length(),
            }
            self.bar.reset_eta();
        }
        self.bar.set_position(p.requests);
    }

    /// Shows where a batch of runs stands.
    pub fn update(&self, p: Progress) {
        if p.requests_total > 0 && self.bar.length() != Some(p.requests_total) {
            self.bar.set_length(p.requests_total);
        }
        self.bar.set_position(p.requests);
        self.bar.set_message(format!("{} ({}/{} runs done)", self.what, p.runs_done, p.runs));
        self.line(p.requests, p.requests_total, &p.line());
    }

    /// Shows the requests read by a single run.
    /// Sets the position and the total, which a run may learn only once it started (a replay
    /// counts the trace's requests first).
    pub fn set_of(&self, requests: u64, total: u64) {
        if self.bar.length() != Some(total) {
            self.bar.set_length(total);
        }
        self.set(requests);
    }

    pub fn set(&self, requests: u64) {
        self.bar.set_position(requests);
        match self.bar.length() {
            Some(total) => self.line(requests, total, &format!("{requests}/{total} requests")),
            None => self.line(requests, 0, &format!("{requests} requests")),
        }
    }

    fn line(&self, done: u64, total: u64, text: &str) {
        let Some(lines) = &self.lines else { return };
        let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if now.duration_since(l.last) < LINE_EVERY {
            return;
        }
        l.last = now;
        let elapsed = now.duration_since(l.start).as_secs_f64();
        // `done` and `total` are the current phase's (the whole run's outside curves).
        let in_phase = now.duration_since(l.phase_start).as_secs_f64();
        let eta = if done > 0 && total > done {
            format!(", about {:.0} s left", in_phase * (total - done) as f64 / done as f64)
        } else {
            String::new()
        };
        eprintln!("{}: {text}, {elapsed:.0} s elapsed{eta}", self.what);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
