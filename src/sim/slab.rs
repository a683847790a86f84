//! A slab: a vector of slots reused through a free list, so steady-state simulation allocates
//! nothing per query or per stream.

/// Slots of `T` addressed by `u32`, reused after removal.
#[derive(Debug, Clone)]
pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Stores `x` and returns its slot.
    #[inline]
    pub fn insert(&mut self, x: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = x;
                i
            }
            None => {
                self.items.push(x);
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Frees slot `i` (its value stays until overwritten).
    #[inline]
    pub fn remove(&mut self, i: u32) {
        self.free.push(i);
    }

    /// The value in slot `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }

    /// The value in slot `i`, mutably.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }

    /// Slots in use.
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}
