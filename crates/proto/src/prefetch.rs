//! Cache prefetch hints: a driver that knows which connection it will touch
//! next (the simulator, from its event queue) asks the CPU to start fetching
//! that state early. A hint only: nothing observable changes.

/// Cache line size assumed for the hints.
const LINE: usize = 64;

/// Hints the CPU to bring the `len` bytes at `p` into the cache.
#[inline]
pub fn prefetch_bytes(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = p as usize & !(LINE - 1);
        let end = p as usize + len;
        let mut at = start;
        while at < end {
            // SAFETY: a prefetch never faults and has no effect but on the cache.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at as *const i8) };
            at += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, len);
    }
}

/// Hints the CPU to bring `value` (its inline bytes, not what it points to) into the cache.
#[inline]
pub fn prefetch<T: ?Sized>(value: &T) {
    prefetch_bytes(
        value as *const T as *const u8,
        core::mem::size_of_val(value),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_change_nothing() {
        let v: Vec<u64> = (0..1000).collect();
        prefetch(v.as_slice());
        prefetch_bytes(v.as_ptr().cast(), 0);
        prefetch(&v);
        assert_eq!(v.iter().sum::<u64>(), 499_500);
    }
}
