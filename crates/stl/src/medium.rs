//! A raw shingled medium, track by track, with the physics enforced.
//!
//! Tracks are numbered globally across recording zones. Writing any part of track `t`
//! destroys the next `head_width − 1` tracks of its zone (the write head is wider than a
//! track; recording zones are separated by guard regions, so damage never crosses a zone
//! boundary). The first `unshingled_tracks` tracks of the medium (in its first zone) are a
//! conventional random-access zone (SMaRT's RAZ): writing them destroys nothing. The emulator **poisons** the destroyed tracks: it fills them with
//! [`POISON`] and flags them, and a read of a poisoned track fails with
//! [`StlError::Poisoned`], so a translation-layer bug surfaces in a test instead of returning
//! stale data silently. A poisoned track becomes readable again only when written whole from
//! offset 0 (a partial write leaves the rest of it destroyed).

use crate::error::{invalid, Result, StlError};
use serde::{Deserialize, Serialize};

/// The pattern a destroyed track is filled with (repeated).
pub const POISON: &[u8; 16] = b"SHINGLED-POISON!";

/// One recording zone of a medium.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediumZone {
    /// Tracks in the zone.
    pub tracks: u32,
    /// Bytes per track (a multiple of 4096).
    pub track_bytes: u32,
}

/// The layout of a medium: recording zones in order and the head width in tracks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    /// Recording zones, outer to inner.
    pub zones: Vec<MediumZone>,
    /// Tracks one write covers: writing track `t` destroys `t + 1 .. t + head_width` (2 in
    /// the SMaRT paper).
    pub head_width: u32,
    /// Tracks at the start of the medium (in the first zone) that are not shingled: a
    /// random-access zone for metadata (SMaRT's RAZ); writing them destroys nothing, and the
    /// first shingled track is separated from them by a guard. 0 for none.
    #[serde(default)]
    pub unshingled_tracks: u32,
}

impl Geometry {
    /// Checks the layout.
    pub fn validate(&self) -> Result<()> {
        if self.zones.is_empty() {
            return Err(invalid("zones", 0, "a medium needs at least one recording zone"));
        }
        if !(1..=16).contains(&self.head_width) {
            return Err(invalid("head_width", self.head_width, "1 to 16 tracks"));
        }
        if self.unshingled_tracks > self.zones[0].tracks {
            return Err(invalid(
                "unshingled_tracks",
                self.unshingled_tracks,
                format!("at most the first zone's {} tracks", self.zones[0].tracks),
            ));
        }
        for (i, z) in self.zones.iter().enumerate() {
            if z.tracks == 0 {
                return Err(invalid(&format!("zones[{i}].tracks"), 0, "at least one track"));
            }
            if z.track_bytes == 0 || !z.track_bytes.is_multiple_of(4096) {
                return Err(invalid(
                    &format!("zones[{i}].track_bytes"),
                    z.track_bytes,
                    "a positive multiple of 4096",
                ));
            }
        }
        Ok(())
    }

    /// Total tracks.
    pub fn tracks(&self) -> u64 {
        self.zones.iter().map(|z| z.tracks as u64).sum()
    }

    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        self.zones.iter().map(|z| z.tracks as u64 * z.track_bytes as u64).sum()
    }

    /// `(zone index, first track of the zone)` of `track`, or `None` past the end.
    pub fn zone_of(&self, track: u64) -> Option<(usize, u64)> {
        let mut first = 0u64;
        for (i, z) in self.zones.iter().enumerate() {
            if track < first + z.tracks as u64 {
                return Some((i, first));
            }
            first += z.tracks as u64;
        }
        None
    }

    /// Bytes of `track` (0 past the end).
    pub fn track_bytes(&self, track: u64) -> u32 {
        self.zone_of(track).map_or(0, |(z, _)| self.zones[z].track_bytes)
    }

    /// Byte offset of `track` in a flat layout of the tracks one after another.
    pub fn track_offset(&self, track: u64) -> u64 {
        let mut off = 0u64;
        let mut first = 0u64;
        for z in &self.zones {
            let n = z.tracks as u64;
            if track < first + n {
                return off + (track - first) * z.track_bytes as u64;
            }
            off += n * z.track_bytes as u64;
            first += n;
        }
        off
    }

    /// The tracks a write of `track` destroys: the next `head_width − 1` of its zone (none for
    /// an unshingled track).
    pub fn overlapped(&self, track: u64) -> std::ops::Range<u64> {
        let Some((z, first)) = self.zone_of(track) else { return track..track };
        if track < self.unshingled_tracks as u64 {
            return track + 1..track + 1;
        }
        let end = first + self.zones[z].tracks as u64;
        let lo = track + 1;
        lo..(track + self.head_width as u64).min(end)
    }

    /// Checks a track request: `len` bytes at `offset` of `track`.
    pub fn check(&self, name: &str, op: &str, track: u64, offset: u32, len: usize) -> Result<()> {
        let tb = self.track_bytes(track);
        if tb == 0 {
            return Err(StlError::Range {
                what: format!("{name}: {op} of track {track}"),
                detail: format!("the medium has {} tracks", self.tracks()),
            });
        }
        if offset as u64 + len as u64 > tb as u64 {
            return Err(StlError::Range {
                what: format!("{name}: {op} of track {track} at byte {offset}"),
                detail: format!("{len} bytes reach past the track's {tb} bytes"),
            });
        }
        Ok(())
    }
}

/// A track-granular shingled medium.
pub trait TrackMedium {
    /// Its layout.
    fn geometry(&self) -> &Geometry;
    /// Reads `buf.len()` bytes of `track` from `offset`. Fails with
    /// [`StlError::Poisoned`] if the track was destroyed by a write of an earlier track and
    /// not rewritten whole since.
    fn read(&mut self, track: u64, offset: u32, buf: &mut [u8]) -> Result<()>;
    /// Writes `data` into `track` at `offset`, destroying the tracks
    /// [`Geometry::overlapped`] names.
    fn write(&mut self, track: u64, offset: u32, data: &[u8]) -> Result<()>;
    /// The durability barrier: every write before it survives a power cut.
    fn flush(&mut self) -> Result<()>;
    /// Whether `track` is poisoned (for checks and tests; a read says it too).
    fn is_poisoned(&self, track: u64) -> bool;
    /// A name for messages.
    fn name(&self) -> String;
}

impl<M: TrackMedium + ?Sized> TrackMedium for Box<M> {
    fn geometry(&self) -> &Geometry {
        (**self).geometry()
    }
    fn read(&mut self, track: u64, offset: u32, buf: &mut [u8]) -> Result<()> {
        (**self).read(track, offset, buf)
    }
    fn write(&mut self, track: u64, offset: u32, data: &[u8]) -> Result<()> {
        (**self).write(track, offset, data)
    }
    fn flush(&mut self) -> Result<()> {
        (**self).flush()
    }
    fn is_poisoned(&self, track: u64) -> bool {
        (**self).is_poisoned(track)
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

/// Counters every medium keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediumStats {
    /// Track reads.
    pub reads: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Track writes.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Tracks poisoned by writes.
    pub poisoned: u64,
    /// Flushes.
    pub flushes: u64,
}

/// Fills `buf` with the poison pattern.
pub fn fill_poison(buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = POISON[i % POISON.len()];
    }
}

/// A medium in memory: tracks allocated on first write (never-written tracks read as zeros).
#[derive(Clone, Debug)]
pub struct MemMedium {
    geometry: Geometry,
    tracks: Vec<Option<Box<[u8]>>>,
    /// For each poisoned track, the track whose write destroyed it.
    poisoned_by: Vec<Option<u64>>,
    stats: MediumStats,
}

impl MemMedium {
    /// An empty medium of this layout.
    pub fn new(geometry: Geometry) -> Result<MemMedium> {
        geometry.validate()?;
        let n = geometry.tracks() as usize;
        Ok(MemMedium {
            geometry,
            tracks: vec![None; n],
            poisoned_by: vec![None; n],
            stats: MediumStats::default(),
        })
    }

    /// Its counters.
    pub fn stats(&self) -> MediumStats {
        self.stats
    }
}

impl TrackMedium for MemMedium {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn read(&mut self, track: u64, offset: u32, buf: &mut [u8]) -> Result<()> {
        self.geometry.check("mem medium", "read", track, offset, buf.len())?;
        if let Some(by) = self.poisoned_by[track as usize] {
            return Err(StlError::Poisoned { device: "mem medium".into(), track, by });
        }
        match &self.tracks[track as usize] {
            Some(t) => buf.copy_from_slice(&t[offset as usize..offset as usize + buf.len()]),
            None => buf.fill(0),
        }
        self.stats.reads += 1;
        self.stats.bytes_read += buf.len() as u64;
        Ok(())
    }

    fn write(&mut self, track: u64, offset: u32, data: &[u8]) -> Result<()> {
        self.geometry.check("mem medium", "write", track, offset, data.len())?;
        let tb = self.geometry.track_bytes(track) as usize;
        let t = self.tracks[track as usize].get_or_insert_with(|| vec![0u8; tb].into_boxed_slice());
        t[offset as usize..offset as usize + data.len()].copy_from_slice(data);
        if offset == 0 && data.len() == tb {
            self.poisoned_by[track as usize] = None;
        }
        for o in self.geometry.overlapped(track) {
            let ob = self.geometry.track_bytes(o) as usize;
            let victim = self.tracks[o as usize].get_or_insert_with(|| vec![0u8; ob].into_boxed_slice());
            fill_poison(victim);
            self.poisoned_by[o as usize] = Some(track);
            self.stats.poisoned += 1;
        }
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.stats.flushes += 1;
        Ok(())
    }

    fn is_poisoned(&self, track: u64) -> bool {
        self.poisoned_by.get(track as usize).is_some_and(|p| p.is_some())
    }

    fn name(&self) -> String {
        "mem medium".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            zones: vec![
                MediumZone { tracks: 4, track_bytes: 8192 },
                MediumZone { tracks: 3, track_bytes: 4096 },
            ],
            head_width: 2,
            unshingled_tracks: 0,
        }
    }

    #[test]
    fn a_write_poisons_the_next_track_of_its_zone_only() {
        let mut m = MemMedium::new(geo()).unwrap();
        m.write(1, 0, &[7u8; 8192]).unwrap();
        assert!(m.is_poisoned(2) && !m.is_poisoned(0) && !m.is_poisoned(1));
        let mut buf = [0u8; 4096];
        assert!(matches!(m.read(2, 0, &mut buf), Err(StlError::Poisoned { track: 2, by: 1, .. })));
        // The last track of zone 0 overlaps nothing: track 4 starts zone 1.
        m.write(3, 0, &[1u8; 4096]).unwrap();
        assert!(!m.is_poisoned(4));
        // A partial rewrite leaves a poisoned track poisoned; a whole one heals it.
        m.write(2, 0, &[2u8; 4096]).unwrap();
        assert!(m.is_poisoned(2) && m.is_poisoned(3));
        m.write(2, 0, &[2u8; 8192]).unwrap();
        assert!(!m.is_poisoned(2));
        m.read(2, 4096, &mut buf).unwrap();
        assert_eq!(buf, [2u8; 4096]);
        assert_eq!(geo().track_offset(5), 4 * 8192 + 4096);
        assert!(m.write(7, 0, &[0u8; 4096]).is_err());
        assert!(m.write(4, 4096, &[0u8; 4096]).is_err());
    }

    #[test]
    fn wider_heads_and_unshingled_tracks() {
        let g = Geometry { head_width: 3, unshingled_tracks: 1, ..geo() };
        assert_eq!(g.overlapped(0), 1..1);
        assert_eq!(g.overlapped(1), 2..4);
        assert_eq!(g.overlapped(2), 3..4);
        assert_eq!(g.overlapped(3), 4..4);
        assert_eq!(g.overlapped(4), 5..7);
        assert_eq!(g.overlapped(5), 6..7);
        assert!(Geometry { unshingled_tracks: 5, ..geo() }.validate().is_err());
    }
}
