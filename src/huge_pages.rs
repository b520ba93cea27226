//! The binary's allocator: the system's, with large blocks marked for
//! transparent huge pages.
//!
//! `model` at server scale looks pages up at random in tables of tens of
//! megabytes (the buffer pool's descriptors and page table, the page
//! cache's slots): with 4 KiB pages nearly every lookup also misses the
//! TLB, and on a VM a page walk is nested and costs several memory reads.
//! Hosts commonly set transparent huge pages to `madvise`, so a process
//! only gets them where it asks. Asking here, in the allocator, keeps the
//! core free of system calls.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks at least this large ask for huge pages: past what a core's TLB
/// covers with 4 KiB pages (2,048 entries, 8 MB), and large enough that
/// rounding to 2 MiB pages adds little to the resident memory.
const HUGE_FROM_BYTES: usize = 4 << 20;

/// [`System`], with `madvise(MADV_HUGEPAGE)` on every block of at least
/// [`HUGE_FROM_BYTES`].
pub struct HugePages;

/// Ask for huge pages over `len` bytes at `ptr`, if that is large. A hint:
/// a kernel without transparent huge pages refuses it, and nothing changes.
fn advise(ptr: *mut u8, len: usize) {
    if ptr.is_null() || len < HUGE_FROM_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // madvise wants a page-aligned start: the block's first whole page.
        let page = 4096;
        let start = (ptr as usize).next_multiple_of(page);
        let end = ptr as usize + len;
        if end > start {
            // SAFETY: the range lies inside a block the system allocator
            // just handed out; MADV_HUGEPAGE changes how the kernel backs
            // those pages, never their contents or validity.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

// SAFETY: every method forwards to `System` with the same arguments and
// returns its answer; `advise` only hints the kernel about the block.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_and_small_blocks_keep_their_contents() {
        for size in [64, HUGE_FROM_BYTES + 123] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: a non-zero layout, freed below with the same layout.
            unsafe {
                let p = HugePages.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert!((0..size).step_by(4093).all(|i| *p.add(i) == 0));
                p.add(size - 1).write(7);
                let q = HugePages.realloc(p, layout, size * 2);
                assert_eq!(*q.add(size - 1), 7);
                HugePages.dealloc(q, Layout::from_size_align(size * 2, 8).unwrap());
            }
        }
    }
}
