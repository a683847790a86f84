//! A slab: a vector of slots reused through a free list, so steady-state simulation allocates
//! nothing per query or per stream.

/// Slots of `T` addressed by `u32`, reused after removal.
#[derive(Debug, Clone)]
pub(crate) struct Slab<T> {
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
    pub(crate) fn insert(&mut self, x: T) -> u32 {
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
    pub(crate) fn remove(&mut self, i: u32) {
        self.free.push(i);
    }

    /// The value in slot `i`.
    #[inline]
    pub(crate) fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }

    /// The value in slot `i`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }

    /// Asks the CPU to start loading the first cache line of slot `i` (no effect on results;
    /// a no-op off x86-64 or for a slot never used).
    #[inline]
    pub(crate) fn prefetch(&self, i: u32) {
        if let Some(x) = self.items.get(i as usize) {
            prefetch_line(x);
        }
    }

    /// [`Self::prefetch`] for every cache line of slot `i`.
    #[inline]
    pub(crate) fn prefetch_all(&self, i: u32) {
        if let Some(x) = self.items.get(i as usize) {
            prefetch(x);
        }
    }

    /// Slots in use.
    pub(crate) fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

/// Cache line size assumed by [`prefetch`] (x86-64's).
const LINE: usize = 64;

/// Asks the CPU to start loading the cache line where `x` starts. No effect on results.
#[inline]
pub(crate) fn prefetch_line<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults and never reads into the program, for
    // any address; `x` is moreover a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Asks the CPU to start loading every cache line of `x`: the simulator touches the records of
/// its next events while it handles the current one, so that a large run (streams and queries
/// beyond the caches) does not wait on memory. No effect on results.
#[inline]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let start = (x as *const T as usize) & !(LINE - 1);
        let end = x as *const T as usize + std::mem::size_of::<T>().max(1);
        let mut line = start;
        while line < end {
            // SAFETY: a prefetch is only a hint: it never faults and never reads into the
            // program, for any address; these lines moreover hold parts of a valid reference.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    line as *const i8,
                );
            }
            line += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
