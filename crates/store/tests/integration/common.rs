//! Shared helpers: deterministic RNG, a workload with an oracle of acknowledged state.

use shingled_store::{ChunkId, Durability, Store, StoreConfig, StoreError, StreamType};
use shingled_zoned::ZonedDevice;
use std::collections::BTreeMap;

/// The next value of the workspace's SplitMix64 stream whose state is `s`.
pub fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(shingled_core::SplitMix64::GAMMA);
    shingled_core::SplitMix64::mix(*s)
}

pub fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed;
    (0..n).map(|_| splitmix(&mut s) as u8).collect()
}

/// What the store was asked to do, and what it acknowledged.
#[derive(Clone, Debug, Default)]
pub struct OChunk {
    /// Every byte an append was called with (acknowledged or not).
    pub attempted: Vec<u8>,
    /// Bytes known durable (flushed by an acknowledged operation).
    pub durable: usize,
    pub sealed: bool,
}

/// The operation in flight when the device failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    None,
    Create(ChunkId),
    Append(ChunkId),
    Seal(ChunkId),
    Delete(ChunkId),
}

#[derive(Clone, Debug)]
pub struct Oracle {
    pub chunks: BTreeMap<ChunkId, OChunk>,
    pub pending: Pending,
    pub next_id: u128,
}

impl Oracle {
    pub fn new() -> Self {
        Oracle { chunks: BTreeMap::new(), pending: Pending::None, next_id: 1 }
    }

    pub fn all_durable(&mut self) {
        for c in self.chunks.values_mut() {
            c.durable = c.attempted.len();
        }
    }

    /// Runs `steps` random operations; stops at the first device error (returns false then).
    pub fn run<D: ZonedDevice>(&mut self, st: &mut Store<D>, seed: u64, steps: usize) -> bool {
        let mut rng = seed;
        let batched = st.config().durability == Durability::Batched;
        for step in 0..steps {
            let r = splitmix(&mut rng);
            let ids: Vec<ChunkId> = self.chunks.keys().copied().collect();
            let pick = |k: u64| ids.get((k % ids.len().max(1) as u64) as usize).copied();
            let res = match r % 10 {
                0 | 1 if ids.len() < 6 => {
                    let id = ChunkId::from_u128(self.next_id);
                    self.next_id += 1;
                    let stream = StreamType((r >> 8) as u8 % 3);
                    self.pending = Pending::Create(id);
                    st.create(id, stream).map(|_| {
                        self.chunks.insert(id, OChunk::default());
                        self.all_durable();
                    })
                }
                2..=6 => {
                    let Some(id) = pick(r >> 8) else { continue };
                    if self.chunks[&id].sealed {
                        continue;
                    }
                    let n = 1 + (r >> 20) as usize % 9000;
                    let data = bytes(seed ^ step as u64, n);
                    self.pending = Pending::Append(id);
                    self.chunks.get_mut(&id).unwrap().attempted.extend_from_slice(&data);
                    match st.append(id, &data) {
                        Ok(()) => {
                            if !batched {
                                self.all_durable();
                            }
                            Ok(())
                        }
                        Err(StoreError::ChunkTooLarge { .. }) => {
                            let c = self.chunks.get_mut(&id).unwrap();
                            let l = c.attempted.len() - n;
                            c.attempted.truncate(l);
                            Ok(())
                        }
                        Err(e) => Err(e),
                    }
                }
                7 => {
                    let Some(id) = pick(r >> 8) else { continue };
                    self.pending = Pending::Seal(id);
                    st.seal(id).map(|_| {
                        self.chunks.get_mut(&id).unwrap().sealed = true;
                        self.all_durable();
                    })
                }
                8 => {
                    let Some(id) = pick(r >> 8) else { continue };
                    self.pending = Pending::Delete(id);
                    st.delete(id).map(|_| {
                        self.chunks.remove(&id);
                        self.all_durable();
                    })
                }
                _ if (r >> 8).is_multiple_of(2) => {
                    self.pending = Pending::None;
                    st.sync().map(|_| self.all_durable())
                }
                _ => {
                    // GC changes no chunk; its flushes are not promised to the caller.
                    self.pending = Pending::None;
                    st.gc().map(|_| ())
                }
            };
            // STORE_TRACE=1 prints every step of a failing crash point.
            if std::env::var_os("STORE_TRACE").is_some() {
                eprintln!(
                    "step {step}: {:?} -> {:?} lens {:?}",
                    self.pending,
                    res.as_ref().map(|_| ()),
                    self.chunks
                        .iter()
                        .map(|(k, c)| (k.0[23], c.attempted.len(), c.durable))
                        .collect::<Vec<_>>()
                );
            }
            match res {
                Ok(()) => self.pending = Pending::None,
                Err(StoreError::Device { .. }) => return false,
                Err(e) => panic!("step {step}: unexpected error {e}"),
            }
        }
        true
    }

    /// Checks a recovered store against the oracle, then adopts what the store kept (so the
    /// workload can go on).
    pub fn check<D: ZonedDevice>(&mut self, st: &mut Store<D>, ctx: &str) {
        let listed: Vec<ChunkId> = st.list().iter().map(|c| c.id).collect();
        for id in &listed {
            assert!(
                self.chunks.contains_key(id) || self.pending == Pending::Create(*id),
                "{ctx}: chunk {id} was never acknowledged"
            );
        }
        let ids: Vec<ChunkId> = self.chunks.keys().copied().collect();
        for id in ids {
            let Some(info) = st.chunk(id) else {
                assert_eq!(self.pending, Pending::Delete(id), "{ctx}: acknowledged chunk {id} lost");
                self.chunks.remove(&id);
                continue;
            };
            let c = self.chunks.get_mut(&id).unwrap();
            let len = info.len as usize;
            assert!(
                len >= c.durable && len <= c.attempted.len(),
                "{ctx}: chunk {id} has {len} bytes, durable {} attempted {}",
                c.durable,
                c.attempted.len()
            );
            let got = st.read(id, 0, len as u64).unwrap_or_else(|e| panic!("{ctx}: reading {id}: {e}"));
            assert!(got == c.attempted[..len], "{ctx}: chunk {id} contents differ");
            if c.sealed {
                assert!(info.sealed, "{ctx}: acknowledged seal of {id} lost");
            } else if self.pending != Pending::Seal(id) {
                assert!(!info.sealed, "{ctx}: {id} sealed without being asked");
            }
            c.attempted.truncate(len);
            c.durable = len;
            c.sealed = info.sealed;
        }
        if let Pending::Create(id) = self.pending {
            if st.chunk(id).is_some() {
                assert_eq!(st.chunk(id).unwrap().len, 0);
                self.chunks.insert(id, OChunk::default());
            }
        }
        self.pending = Pending::None;
    }
}

/// Small pools; recovery and fsck read zones in 12 KiB windows, so records straddle windows
/// in every crash test.
pub fn small_cfg(durability: Durability) -> StoreConfig {
    StoreConfig { durability, scan_buffer_bytes: 12 << 10, ..StoreConfig::small() }
}
