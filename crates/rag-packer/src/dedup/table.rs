//! The hash table the dedup reuses from text to text: keys are 64-bit hashes, already well mixed,
//! so a key's low bits are its slot; and emptying it is O(1), because a pass empties it once per
//! text (or per partition) and a fill of zeros each time would cost more than the lookups.

/// An open-addressing table (linear probing) from 64-bit hashes to a `V` each, emptied in O(1):
/// a slot is occupied when its stamp equals the current generation, and emptying starts a new
/// generation.
#[derive(Default)]
pub(super) struct StampedTable<V> {
    /// A probe reads a slot's stamp and key together, so they share a cache line.
    slots: Vec<Slot<V>>,
    generation: u32,
}

#[derive(Clone, Copy, Default)]
struct Slot<V> {
    key: u64,
    stamp: u32,
    value: V,
}

/// A set of 64-bit hashes.
pub(super) type TokenSet = StampedTable<()>;

impl<V: Copy + Default> StampedTable<V> {
    /// Empties the table, with at least `slots` slots (a power of two). The caller picks the load
    /// factor: `slots` is a multiple of the keys it will hold.
    #[inline]
    pub(super) fn clear(&mut self, slots: usize) {
        let wanted = slots.next_power_of_two().max(16);
        if wanted > self.slots.len() {
            self.slots = vec![Slot::default(); wanted];
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Stamps of 2^32 generations ago would look current: start over.
            self.slots.fill(Slot::default());
            self.generation = 1;
        }
    }

    /// `Ok` with the slot holding `key`, or `Err` with the free slot where it belongs.
    #[inline]
    pub(super) fn find(&self, key: u64) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut at = key as usize & mask;
        loop {
            let slot = &self.slots[at];
            if slot.stamp != self.generation {
                return Err(at);
            }
            if slot.key == key {
                return Ok(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// Puts `key` with `value` into the free slot `at` that [`find`](Self::find) gave for it.
    #[inline]
    pub(super) fn occupy(&mut self, at: usize, key: u64, value: V) {
        self.slots[at] = Slot {
            key,
            stamp: self.generation,
            value,
        };
    }

    /// The value in the occupied slot `at`.
    #[inline]
    pub(super) fn value_mut(&mut self, at: usize) -> &mut V {
        &mut self.slots[at].value
    }

    /// Whether `key` is in the table.
    #[inline]
    pub(super) fn contains(&self, key: u64) -> bool {
        self.find(key).is_ok()
    }
}

impl TokenSet {
    /// Adds `key`; false if it was already there.
    #[inline]
    pub(super) fn insert(&mut self, key: u64) -> bool {
        match self.find(key) {
            Ok(_) => false,
            Err(at) => {
                self.occupy(at, key, ());
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cleared_table_forgets_every_key_and_keeps_its_room() {
        let mut table: StampedTable<u32> = StampedTable::default();
        table.clear(4);
        assert_eq!(table.slots.len(), 16, "at least 16 slots");
        // Keys that collide on their low bits probe past each other.
        for (value, key) in [5u64, 5 + 16, 5 + 32, 7].into_iter().enumerate() {
            let at = table.find(key).unwrap_err();
            table.occupy(at, key, value as u32);
        }
        let at = table.find(5 + 32).unwrap();
        assert_eq!(*table.value_mut(at), 2);
        *table.value_mut(at) = 9;
        assert_eq!(*table.value_mut(table.find(5 + 32).unwrap()), 9);
        table.clear(4);
        assert!(!table.contains(5) && !table.contains(7));
        assert_eq!(table.slots.len(), 16);
        table.clear(100);
        assert_eq!(table.slots.len(), 128);
    }

    #[test]
    fn a_set_inserts_each_key_once_across_generation_wraparound() {
        let mut set = TokenSet::default();
        set.clear(8);
        assert!(set.insert(3) && !set.insert(3) && set.contains(3));
        // The stamp of a slot filled 2^32 generations ago must not look current.
        set.generation = u32::MAX;
        set.slots[3].stamp = 1;
        set.clear(8);
        assert_eq!(set.generation, 1);
        assert!(!set.contains(3));
        assert!(set.insert(3));
    }
}
