//! The arithmetic of the core's open-addressing tables (the buffer pool's
//! page table, the page cache): linear probing over a table of any size,
//! deleted by backward shift so no tombstones pile up; and the prefetch
//! hint their users issue ahead of a lookup.

/// The slot `key` hashes to in a table of `len` slots: a multiplicative
/// hash, then the range reduced by a multiply, so any size works.
#[inline]
pub fn home(key: u32, len: usize) -> usize {
    let h = (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h as u128 * len as u128) >> 64) as usize
}

/// The slot after `i`, wrapping at `len`.
#[inline]
pub fn next(i: usize, len: usize) -> usize {
    if i + 1 == len { 0 } else { i + 1 }
}

/// Backward-shift deletion: an entry at `j` whose home is `home` stays put
/// when the hole at `hole` lies outside its probe run (its home is
/// cyclically in `hole+1..=j`); otherwise it moves into the hole.
#[inline]
pub fn stays(hole: usize, j: usize, home: usize) -> bool {
    if hole <= j {
        hole < home && home <= j
    } else {
        hole < home || home <= j
    }
}

/// A hint that `x` will be read soon; it changes nothing observable.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; it never faults, even for a
    // bad address, and `x` is a valid reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_fall_in_any_table_size() {
        for len in [1, 2, 3, 86, 1000, 1 << 20] {
            for key in [0, 1, 7, 12345, u32::MAX - 1] {
                assert!(home(key, len) < len);
            }
            assert_eq!(next(len - 1, len), 0);
        }
    }

    #[test]
    fn an_entry_moves_back_only_past_a_hole_in_its_run() {
        // Hole at 3, entry at 5: home 4 or 5 keeps it, home 3 or before moves it.
        assert!(stays(3, 5, 4) && stays(3, 5, 5));
        assert!(!stays(3, 5, 3) && !stays(3, 5, 1));
        // Wrapped: hole at 8 of 10, entry at 1.
        assert!(stays(8, 1, 9) && stays(8, 1, 0) && stays(8, 1, 1));
        assert!(!stays(8, 1, 8) && !stays(8, 1, 5));
    }
}
