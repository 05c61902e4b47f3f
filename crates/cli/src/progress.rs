//! Progress bars on a terminal, nothing when stderr is not one (piped, CI).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A bar counting trace requests up to `total`.
pub fn bar(total: u64, msg: &str) -> ProgressBar {
    let b = ProgressBar::with_draw_target(Some(total), target());
    b.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:40}] {human_pos}/{human_len} requests ({per_sec}, eta {eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    b.set_message(msg.to_string());
    b
}

/// A counter without a known total.
pub fn spinner(msg: &str) -> ProgressBar {
    let b = ProgressBar::with_draw_target(None, target());
    b.set_style(
        ProgressStyle::with_template("{spinner} {msg}: {human_pos} requests replayed ({per_sec})")
            .expect("valid template"),
    );
    b.set_message(msg.to_string());
    b.enable_steady_tick(std::time::Duration::from_millis(200));
    b
}
