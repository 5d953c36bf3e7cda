//! Prefetch hints for a connection's state (see [`crate::prefetch`]).

use super::Connection;
use crate::prefetch::{prefetch, prefetch_bytes};
use core::mem::{offset_of, size_of};

/// Per-segment counters at the front of `Counters` (segments_sent through
/// segments_delivered in its declaration order).
const HOT_COUNTERS: usize = 17 * size_of::<u64>();

impl Connection {
    /// The byte range of the fields an event touches (`Connection` is
    /// `#[repr(C)]` with them first): the hot fields and the leading counters.
    pub fn hot_bytes() -> core::ops::Range<usize> {
        0..offset_of!(Connection, counters) + HOT_COUNTERS
    }

    /// Hints the CPU to fetch the inline state an event touches (a few cache
    /// lines of the struct, not all of it): for drivers juggling many
    /// connections that know which comes next. Changes nothing.
    pub fn prefetch_hot(&self) {
        let r = Self::hot_bytes();
        // SAFETY: `r` lies within `self` (offsets of its own fields).
        let p = unsafe { (self as *const Connection).cast::<u8>().add(r.start) };
        prefetch_bytes(p, r.len());
    }

    /// Hints the CPU to fetch the heap-held state segment handling touches
    /// (controllers, policies, buffers). Reads the pointers, so call it once
    /// [`Self::prefetch_hot`] has had time to bring them in.
    pub fn prefetch_heap(&self) {
        prefetch(&*self.cc);
        prefetch(&*self.send_policy);
        prefetch(&*self.ack_policy);
        self.send_buf.prefetch_heap();
        self.recv_buf.prefetch_heap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_bytes_lie_within_the_struct_and_are_a_small_part() {
        let r = Connection::hot_bytes();
        assert!(r.end <= size_of::<Connection>());
        assert!(r.start < offset_of!(Connection, send_buf));
        assert!(offset_of!(Connection, counters) < r.end);
        // The point of the layout: an event reads well under the whole struct.
        assert!(r.len() < size_of::<Connection>() * 2 / 3, "{r:?}");
        // HOT_COUNTERS covers the last of the per-segment counters.
        let last = offset_of!(crate::Counters, segments_delivered);
        assert!(last + size_of::<u64>() <= HOT_COUNTERS);
    }
}
