//! Sequential-I/O detection for the bypass: requests that continue a recent stream add up, and
//! once a stream has moved `cutoff` bytes its requests skip the cache (bcache's
//! `sequential_cutoff`, "threshold past which sequential IO will skip the cache",
//! Documentation/ABI/testing/sysfs-block-bcache; bcache also tracks recent I/Os so that a stream
//! split into small requests is still seen as sequential).

/// Streams followed at once.
const STREAMS: usize = 16;

#[derive(Clone, Copy, Debug)]
struct Stream {
    write: bool,
    end: u64,
    bytes: u64,
    used: u64,
}

/// Recent sequential streams.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeqDetector {
    streams: Vec<Stream>,
    tick: u64,
}

impl SeqDetector {
    /// Records a request of `blocks` blocks at `lba`; `true` if it is part of a stream that has
    /// reached `cutoff` bytes (never with `cutoff` `None`).
    pub fn observe(&mut self, write: bool, lba: u64, blocks: u64, cutoff: Option<u64>) -> bool {
        let Some(cutoff) = cutoff else { return false };
        self.tick += 1;
        let bytes = blocks * shingled_stl::BLOCK as u64;
        let tick = self.tick;
        if let Some(s) = self.streams.iter_mut().find(|s| s.write == write && s.end == lba) {
            s.end = lba + blocks;
            s.bytes = s.bytes.saturating_add(bytes);
            s.used = tick;
            return s.bytes >= cutoff;
        }
        let new = Stream { write, end: lba + blocks, bytes, used: tick };
        if self.streams.len() < STREAMS {
            self.streams.push(new);
        } else if let Some(old) = self.streams.iter_mut().min_by_key(|s| s.used) {
            *old = new;
        }
        bytes >= cutoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_add_up_to_the_cutoff() {
        let mut d = SeqDetector::default();
        let cut = Some(4 * 4096);
        assert!(!d.observe(true, 10, 2, cut));
        assert!(!d.observe(false, 100, 1, cut), "another stream");
        assert!(d.observe(true, 12, 2, cut), "10..14 is 4 blocks");
        assert!(!d.observe(true, 40, 1, cut));
        assert!(d.observe(false, 0, 8, cut), "one large request");
        assert!(!d.observe(true, 0, 100, None), "off");
    }
}
