//! Bugs the engine fuzz target found, each pinned by a deterministic test.

mod common;

use common::{Pair, A, B};
use tinygram_proto::{Config, Duration, State};

/// Data written (or a FIN queued) in SYN-RECEIVED starts at ISS+1: the ACK
/// that completes the passive open acknowledges the SYN, not the first data
/// byte. The engine once dropped that byte from its send buffer unsent and
/// began the stream one byte late, beyond a 1-byte window.
#[test]
fn data_written_in_syn_received_starts_after_the_syn() {
    for close in [false, true] {
        let mut p = Pair::new(
            Config::default(),
            Config::default(),
            100,
            5000,
            Duration::from_millis(5),
        );
        p.run_until(Duration::from_secs(1), true, |p| {
            p.conns[B].state() == State::SynReceived
        });
        assert_eq!(p.conns[B].state(), State::SynReceived);
        assert_eq!(p.write(B, 1000), 1000);
        if close {
            p.conns[B].close();
        }
        p.run(Duration::from_secs(5));
        assert_eq!(
            p.received[A].len(),
            1000,
            "close {close}: A got {} bytes",
            p.received[A].len()
        );
        p.check_integrity(A);
    }
}
