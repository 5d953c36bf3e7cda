//! Demultiplexing: each connection of a host is found by its 4-tuple, the
//! host's own address implied (RFC 9293 3.1: "a pair of sockets uniquely
//! identifies each connection").

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Remote address, remote port, local port: a connection's 4-tuple on a
/// host (`A`: the TUN host's `Ipv4Addr`, the simulator's host number).
pub type FourTuple<A> = (A, u16, u16);

/// A host's connections by 4-tuple (`S`: the hasher; the default, keyed
/// per process, is what a host facing real peers needs, since they choose
/// the ports they hash to).
pub type ConnTable<A, T, S = std::collections::hash_map::RandomState> = HashMap<FourTuple<A>, T, S>;

/// A fast, fixed hash (FxHash's multiply-rotate) for tables whose keys no
/// adversary chooses (the simulator's); lookups only, so iteration order
/// never affects a run.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }
}

/// [`FxHasher`] as a table's hasher.
pub type FxBuild = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole 4-tuple tells connections apart: the same remote port from
    /// two hosts, two remote ports from one host.
    #[test]
    fn connections_differ_by_any_part_of_the_tuple() {
        let mut t: ConnTable<u32, &str, FxBuild> = ConnTable::default();
        t.insert((1, 40000, 80), "a");
        t.insert((2, 40000, 80), "b");
        t.insert((1, 40001, 80), "c");
        t.insert((1, 40000, 81), "d");
        assert_eq!(t.len(), 4);
        assert_eq!(t[&(2, 40000, 80)], "b");
        assert_eq!(t.get(&(3, 40000, 80)), None);
    }
}
