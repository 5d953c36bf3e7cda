//! Prefetch hints for a connection's heap-held state (see [`crate::prefetch`]).

use super::Connection;
use crate::prefetch::prefetch;

impl Connection {
    /// Hints the CPU to fetch the heap-held state segment handling touches
    /// (controllers, policies, buffers): for drivers juggling many connections
    /// that know which comes next. Changes nothing.
    pub fn prefetch_heap(&self) {
        prefetch(&*self.cc);
        prefetch(&*self.send_policy);
        prefetch(&*self.ack_policy);
        self.send_buf.prefetch_heap();
        self.recv_buf.prefetch_heap();
    }
}
