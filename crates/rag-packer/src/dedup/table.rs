//! The open-addressing table of 64-bit hashes the dedup reuses from text to text.

/// A reusable open-addressing set of 64-bit hashes (already well mixed), cleared in O(1).
#[derive(Default)]
pub(super) struct TokenSet {
    slots: Vec<u64>,
    /// A slot is occupied when its stamp equals `generation`.
    stamps: Vec<u32>,
    generation: u32,
}

impl TokenSet {
    /// Empties the set and makes room for `capacity` tokens at a load of at most one half.
    #[inline]
    pub(super) fn clear(&mut self, capacity: usize) {
        let wanted = (capacity * 2).next_power_of_two().max(16);
        if wanted > self.slots.len() {
            self.slots = vec![0; wanted];
            self.stamps = vec![0; wanted];
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Stamps of 2^32 generations ago would look current: start over.
            self.stamps.fill(0);
            self.generation = 1;
        }
    }

    /// Adds `token`; false if it was already there.
    #[inline]
    pub(super) fn insert(&mut self, token: u64) -> bool {
        let mask = self.slots.len() - 1;
        let mut slot = token as usize & mask;
        while self.stamps[slot] == self.generation {
            if self.slots[slot] == token {
                return false;
            }
            slot = (slot + 1) & mask;
        }
        self.stamps[slot] = self.generation;
        self.slots[slot] = token;
        true
    }

    #[inline]
    pub(super) fn contains(&self, token: u64) -> bool {
        let mask = self.slots.len() - 1;
        let mut slot = token as usize & mask;
        while self.stamps[slot] == self.generation {
            if self.slots[slot] == token {
                return true;
            }
            slot = (slot + 1) & mask;
        }
        false
    }
}
