//! Intrusive doubly-linked lists over cache slots.
//!
//! Policies keep their orderings (LRU queues, per-band lists, per-zone lists …) as lists of
//! slot numbers whose links live in one shared [`Links`] array, so a slot costs 8 bytes of links
//! however many lists exist, and every operation is O(1) with no allocation. A slot belongs to at
//! most one list of a given `Links` at a time.

use crate::Slot;

/// Marks "no slot" in a link.
pub const NIL: Slot = Slot::MAX;

/// Link storage for a family of lists: `[prev, next]` per slot, side by side so that a slot's
/// two links share a cache line (an unlink touches three lines, not six).
#[derive(Clone, Debug, Default)]
pub struct Links {
    links: Vec<[Slot; 2]>,
}

const PREV: usize = 0;
const NEXT: usize = 1;

/// One list's ends and length; its links live in a [`Links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    head: Slot,
    tail: Slot,
    len: u32,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, len: 0 }
    }
}

impl List {
    /// Number of slots in the list.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }
    /// `true` if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The most recently pushed-to-front slot.
    #[inline]
    pub fn front(&self) -> Option<Slot> {
        (self.head != NIL).then_some(self.head)
    }
    /// The slot at the back (the LRU end).
    #[inline]
    pub fn back(&self) -> Option<Slot> {
        (self.tail != NIL).then_some(self.tail)
    }
}

impl Links {
    /// Links for slots `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        Links { links: vec![[NIL; 2]; capacity] }
    }

    /// Grows the links to hold slots `0..capacity` (never shrinks).
    pub fn grow(&mut self, capacity: usize) {
        if capacity > self.links.len() {
            self.links.resize(capacity, [NIL; 2]);
        }
    }

    /// Heap bytes used: two links per slot.
    pub fn heap_bytes(&self) -> usize {
        2 * std::mem::size_of::<Slot>() * self.links.len()
    }

    /// Number of slots these links can hold.
    pub fn capacity(&self) -> usize {
        self.links.len()
    }

    /// Inserts `s` at the front of `l`. `s` must not be in any list of these links.
    #[inline]
    pub fn push_front(&mut self, l: &mut List, s: Slot) {
        self.links[s as usize] = [NIL, l.head];
        if l.head != NIL {
            self.links[l.head as usize][PREV] = s;
        } else {
            l.tail = s;
        }
        l.head = s;
        l.len += 1;
    }

    /// Inserts `s` at the back of `l`. `s` must not be in any list of these links.
    #[inline]
    pub fn push_back(&mut self, l: &mut List, s: Slot) {
        self.links[s as usize] = [l.tail, NIL];
        if l.tail != NIL {
            self.links[l.tail as usize][NEXT] = s;
        } else {
            l.head = s;
        }
        l.tail = s;
        l.len += 1;
    }

    /// Unlinks `s`, which must be in `l`.
    #[inline]
    pub fn remove(&mut self, l: &mut List, s: Slot) {
        let [p, n] = self.links[s as usize];
        if p != NIL {
            self.links[p as usize][NEXT] = n;
        } else {
            debug_assert_eq!(l.head, s, "slot not in this list");
            l.head = n;
        }
        if n != NIL {
            self.links[n as usize][PREV] = p;
        } else {
            debug_assert_eq!(l.tail, s, "slot not in this list");
            l.tail = p;
        }
        self.links[s as usize] = [NIL; 2];
        l.len -= 1;
    }

    /// Moves `s` (in `l`) to the front of `l`.
    #[inline]
    pub fn move_to_front(&mut self, l: &mut List, s: Slot) {
        if l.head != s {
            self.remove(l, s);
            self.push_front(l, s);
        }
    }

    /// Moves `s`, the back of `l`, to its front: [`Links::remove`] then [`Links::push_front`].
    #[inline]
    pub fn back_to_front(&mut self, l: &mut List, s: Slot) {
        debug_assert_eq!(l.tail, s, "slot not at the back of this list");
        if l.head == s {
            return;
        }
        let p = self.links[s as usize][PREV];
        self.links[p as usize][NEXT] = NIL;
        l.tail = p;
        self.links[s as usize] = [NIL, l.head];
        self.links[l.head as usize][PREV] = s;
        l.head = s;
    }

    /// Removes and returns the back slot.
    #[inline]
    pub fn pop_back(&mut self, l: &mut List) -> Option<Slot> {
        let t = l.back()?;
        self.remove(l, t);
        Some(t)
    }

    /// The slot after `s` toward the back, if any.
    #[inline]
    pub fn next(&self, s: Slot) -> Option<Slot> {
        let n = self.links[s as usize][NEXT];
        (n != NIL).then_some(n)
    }

    /// The slot before `s` toward the front, if any.
    #[inline]
    pub fn prev(&self, s: Slot) -> Option<Slot> {
        let p = self.links[s as usize][PREV];
        (p != NIL).then_some(p)
    }

    /// Prefetches `s`'s links into the CPU's caches (look-ahead; changes nothing).
    #[inline]
    pub fn prefetch(&self, s: Slot) {
        shingled_core::mem::prefetch(&self.links, s as usize);
    }

    /// Iterates `l` from the back (LRU end) to the front.
    pub fn iter_back<'a>(&'a self, l: &List) -> impl Iterator<Item = Slot> + 'a {
        let mut cur = l.tail;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let s = cur;
            cur = self.links[s as usize][PREV];
            Some(s)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// The list behaves like a VecDeque under any sequence of operations.
        #[test]
        fn matches_vecdeque(ops in proptest::collection::vec((0u8..6, 0u32..16), 0..200)) {
            let mut links = Links::with_capacity(16);
            let mut l = List::default();
            let mut model: VecDeque<u32> = VecDeque::new();
            for (op, s) in ops {
                let present = model.contains(&s);
                match op {
                    0 if !present => { links.push_front(&mut l, s); model.push_front(s); }
                    1 if !present => { links.push_back(&mut l, s); model.push_back(s); }
                    2 if present => { links.remove(&mut l, s); model.retain(|&x| x != s); }
                    3 if present => { links.move_to_front(&mut l, s); model.retain(|&x| x != s); model.push_front(s); }
                    4 => { prop_assert_eq!(links.pop_back(&mut l), model.pop_back()); }
                    5 if !model.is_empty() => {
                        let b = *model.back().unwrap();
                        links.back_to_front(&mut l, b);
                        model.pop_back();
                        model.push_front(b);
                    }
                    _ => {}
                }
                prop_assert_eq!(l.len() as usize, model.len());
                let back: Vec<u32> = links.iter_back(&l).collect();
                let expect: Vec<u32> = model.iter().rev().copied().collect();
                prop_assert_eq!(back, expect);
            }
        }
    }
}
