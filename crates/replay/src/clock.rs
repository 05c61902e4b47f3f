//! The replay's clock: the wall clock, or in tests one whose sleeps advance it, so that open
//! loop's issue times can be checked exactly.

use std::time::{Duration, Instant};

/// Time since the replay began.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> Duration;
    /// Returns at `t` or later (at once when `t` has passed).
    fn sleep_until(&self, t: Duration);
}

/// The monotonic wall clock.
#[derive(Debug)]
pub struct RealClock {
    start: Instant,
}

impl RealClock {
    /// A clock at zero now.
    pub fn new() -> RealClock {
        RealClock { start: Instant::now() }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        RealClock::new()
    }
}

impl Clock for RealClock {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }
    fn sleep_until(&self, t: Duration) {
        let now = self.now();
        if t > now {
            std::thread::sleep(t - now);
        }
    }
}
