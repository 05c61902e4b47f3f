//! The front's work on one thread per drive (`D: Send`): drives are independent devices, so
//! their flushes and appends overlap.

use super::{append_counted, FrontError, FrontResult, StoreFront};
use crate::{ChunkId, Result};
use shingled_zoned::ZonedDevice;

impl<D: ZonedDevice + Send> StoreFront<D> {
    /// Syncs every drive, one thread per drive. On failures, the error of the lowest drive.
    pub fn sync_parallel(&mut self) -> FrontResult<()> {
        let results: Vec<Result<()>> = std::thread::scope(|s| {
            let hs: Vec<_> = self.stores.iter_mut().map(|st| s.spawn(move || st.sync())).collect();
            hs.into_iter().map(|h| h.join().expect("sync thread panicked")).collect()
        });
        for (d, r) in results.into_iter().enumerate() {
            r.map_err(FrontError::on(d))?;
        }
        Ok(())
    }

    /// Appends each `(id, data)`, one thread per drive involved; a drive's appends run in the
    /// order given. Every chunk must exist (checked before anything is written). A drive stops
    /// at its first failure while the others go on; the error returned is that of the lowest
    /// failing drive.
    pub fn append_batch(&mut self, items: &[(ChunkId, &[u8])]) -> FrontResult<()> {
        let n = self.stores.len();
        let mut per: Vec<Vec<(ChunkId, &[u8])>> = vec![Vec::new(); n];
        for &(id, data) in items {
            per[self.routed(id)?].push((id, data));
        }
        let results: Vec<(Result<()>, u64)> = std::thread::scope(|s| {
            let hs: Vec<_> = self
                .stores
                .iter_mut()
                .zip(&per)
                .map(|(st, work)| {
                    s.spawn(move || {
                        let mut grew = 0;
                        for &(id, data) in work {
                            let (r, g) = append_counted(st, id, data);
                            grew += g;
                            if r.is_err() {
                                return (r, grew);
                            }
                        }
                        (Ok(()), grew)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("append thread panicked")).collect()
        });
        let mut first = None;
        for (d, (r, grew)) in results.into_iter().enumerate() {
            self.live[d] += grew;
            self.appended[d] += grew;
            if let (Err(e), None) = (r, &first) {
                first = Some(FrontError::Drive { drive: d, source: e });
            }
        }
        first.map_or(Ok(()), Err)
    }
}
