//! The replacement policies, one file each; their interface ([`crate::Policy`] and the types it
//! uses) is at the crate root.

pub mod arc;
pub mod band_min;
pub mod belady;
pub mod fifo;
pub(crate) mod interface;
pub mod lru;
pub mod lru_band;
pub mod most;
pub mod most_cdc;
pub(crate) mod pb_length;
pub mod pore;
pub mod s3fifo;
pub mod sac;

use std::cmp::Reverse;
use std::collections::binary_heap::{BinaryHeap, PeekMut};

/// The least entry of a lazily kept min-heap of `(stamp, key)` whose stamp is still current (PORE's
/// open zones and SAC's target bands, by the last access of their list's tail), with its key and
/// what `current` said of it. `current(key)` gives the key's present stamp and a value, or `None`
/// when the key no longer belongs in the heap (its entry is dropped). A stale top is updated in
/// place (`PeekMut`): the key whose tail was just evicted usually still holds one of the oldest
/// tails, so its entry sinks a level or two where a pop and a push would take it to the bottom
/// and back.
pub(crate) fn fresh_min<K: Ord + Copy, T>(
    heap: &mut BinaryHeap<Reverse<(u64, K)>>,
    mut current: impl FnMut(K) -> Option<(u64, T)>,
) -> Option<(u64, K, T)> {
    loop {
        let mut top = heap.peek_mut()?;
        let Reverse((stamp, key)) = *top;
        match current(key) {
            // Read only: dropping `top` leaves the heap as it is.
            Some((now, value)) if now == stamp => return Some((now, key, value)),
            Some((now, _)) => *top = Reverse((now, key)),
            None => {
                PeekMut::pop(top);
            }
        }
    }
}
