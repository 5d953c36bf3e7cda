//! A host's secret (RFC 6528 section 3): ISN = M + F(localip, localport,
//! remoteip, remoteport, secretkey), where M is a 4-microsecond timer and F
//! a keyed hash (SipHash-2-4 here) whose 128-bit key the driver supplies (the
//! TUN host draws it from the operating system once per host, so an off-path
//! attacker cannot predict another connection's ISN from the ones it sees;
//! the simulator derives it from the run's seed).
//!
//! The same key signs SYN cookies (RFC 4987 3.6), under a separate domain.

use crate::isn::IsnGenerator;
use crate::seq::SeqNumber;
use crate::time::{Duration, Instant};
use siphasher::sip::SipHasher24;
use std::hash::Hasher;
use std::net::SocketAddrV4;

/// One tick of the SYN cookie counter (RFC 4987 3.6: "t, a slowly
/// incrementing timestamp", 64 seconds as in Bernstein's design).
pub const COOKIE_PERIOD: Duration = Duration::from_secs(64);
/// A cookie is accepted during the period it was made in and the next one:
/// 64 to 128 seconds, more than any SYN-ACK's round trip.
pub const COOKIE_LIFETIME: Duration = Duration::from_secs(128);

/// The host's secret key for F (RFC 6528 section 3: "secretkey").
#[derive(Clone, Copy)]
pub struct IsnKey([u8; 16]);

impl IsnKey {
    /// The key `key`: fresh random bytes on a real network, a fixed one
    /// where runs must repeat (the simulator, tests).
    pub const fn fixed(key: [u8; 16]) -> IsnKey {
        IsnKey(key)
    }

    /// The generator for one connection's 4-tuple: F is computed once, here;
    /// each ISS drawn later adds M at that instant.
    pub fn generator(&self, local: SocketAddrV4, remote: SocketAddrV4) -> Rfc6528Isn {
        let mut h = SipHasher24::new_with_key(&self.0);
        h.write(&local.ip().octets());
        h.write(&local.port().to_be_bytes());
        h.write(&remote.ip().octets());
        h.write(&remote.port().to_be_bytes());
        Rfc6528Isn {
            f: h.finish() as u32,
        }
    }
}

impl IsnKey {
    /// A SYN cookie (RFC 4987 3.6): the top 5 bits are the 64-second counter
    /// modulo 32, the next 3 the peer's MSS index (`mss_index` < 8), the low 24 a
    /// keyed hash of the 4-tuple, the peer's ISN, the full counter and the
    /// MSS index, so neither the tuple, the time nor the MSS can be altered.
    pub fn syn_cookie(
        &self,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        their_isn: SeqNumber,
        now: Instant,
        mss_index: u8,
    ) -> SeqNumber {
        let t = cookie_counter(now);
        let m = u32::from(mss_index & 7);
        let h = self.cookie_hash(local, remote, their_isn, t, m);
        SeqNumber(((t as u32 & 31) << 27) | (m << 24) | (h & 0xFF_FFFF))
    }

    /// The MSS index a cookie returned by the peer carries, if it is one we
    /// made for this 4-tuple and ISN within [`COOKIE_LIFETIME`]; `None` for a
    /// forged, altered or expired cookie.
    pub fn check_syn_cookie(
        &self,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        their_isn: SeqNumber,
        cookie: SeqNumber,
        now: Instant,
    ) -> Option<u8> {
        let now_t = cookie_counter(now);
        let m = (cookie.0 >> 24) & 7;
        (0..=1u64)
            .filter_map(|age| now_t.checked_sub(age))
            .filter(|t| (*t as u32 & 31) == cookie.0 >> 27)
            .any(|t| {
                self.cookie_hash(local, remote, their_isn, t, m) & 0xFF_FFFF == cookie.0 & 0xFF_FFFF
            })
            .then_some(m as u8)
    }

    fn cookie_hash(
        &self,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        their_isn: SeqNumber,
        t: u64,
        m: u32,
    ) -> u32 {
        let mut h = SipHasher24::new_with_key(&self.0);
        h.write(b"tinygram syn cookie");
        h.write(&local.ip().octets());
        h.write(&local.port().to_be_bytes());
        h.write(&remote.ip().octets());
        h.write(&remote.port().to_be_bytes());
        h.write(&their_isn.0.to_be_bytes());
        h.write(&t.to_be_bytes());
        h.write(&m.to_be_bytes());
        h.finish() as u32
    }
}

/// The cookie counter t: 64-second periods since the clock's origin.
fn cookie_counter(now: Instant) -> u64 {
    now.as_nanos() / COOKIE_PERIOD.as_nanos() as u64
}

impl std::fmt::Debug for IsnKey {
    /// Never prints the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IsnKey(..)")
    }
}

/// One connection's ISN source: its 4-tuple's F plus the 4 us clock M.
#[derive(Clone, Copy, Debug)]
pub struct Rfc6528Isn {
    f: u32,
}

impl IsnGenerator for Rfc6528Isn {
    fn next_isn(&mut self, now: Instant, _local: u16, _remote: u16) -> SeqNumber {
        // M: a timer that ticks every 4 microseconds (RFC 6528 section 3;
        // RFC 9293 3.4.1), wrapping modulo 2^32.
        let m = (now.as_micros() / 4) as u32;
        SeqNumber(self.f.wrapping_add(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn addr(last: u8, port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::new(10, 7, 0, last), port)
    }

    #[test]
    fn same_tuple_advances_with_the_4us_clock() {
        let key = IsnKey::fixed([7; 16]);
        let mut g = key.generator(addr(2, 80), addr(1, 40000));
        let a = g.next_isn(Instant::from_nanos(1_000_000), 80, 40000);
        let b = g.next_isn(Instant::from_nanos(1_000_000_000 + 1_000_000), 80, 40000);
        assert_eq!(
            b.0.wrapping_sub(a.0),
            250_000,
            "one second is 250,000 ticks of 4 us"
        );
    }

    #[test]
    fn tuples_and_keys_give_unrelated_offsets() {
        let key = IsnKey::fixed([7; 16]);
        let t = Instant::from_nanos(5_000);
        let isn = |k: &IsnKey, port| {
            k.generator(addr(2, 80), addr(1, port))
                .next_isn(t, 80, port)
                .0
        };
        // Consecutive client ports: offsets far apart, not a constant step.
        let v: Vec<u32> = (40000..40008).map(|p| isn(&key, p)).collect();
        let steps: Vec<u32> = v.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
        assert!(
            steps.windows(2).any(|s| s[0] != s[1]),
            "no fixed step: {steps:?}"
        );
        assert!(v
            .iter()
            .all(|&x| v.iter().filter(|&&y| y == x).count() == 1));
        // Another key: another F for the same tuple.
        let other = IsnKey::fixed([8; 16]);
        assert_ne!(isn(&key, 40000), isn(&other, 40000));
        // Addresses count, not only ports.
        let g2 = key
            .generator(addr(3, 80), addr(1, 40000))
            .next_isn(t, 80, 40000)
            .0;
        assert_ne!(isn(&key, 40000), g2);
    }

    /// A cookie verifies for its own tuple and ISN for two periods, carries
    /// its MSS index, and fails for another tuple, ISN, key, a flipped bit or
    /// after it expired.
    #[test]
    fn syn_cookies_verify_only_what_they_signed() {
        let key = IsnKey::fixed([7; 16]);
        let (l, r) = (addr(2, 80), addr(1, 40000));
        let isn = SeqNumber(123_456);
        let made = Instant::from_millis(1_000);
        for m in 0..8u8 {
            let c = key.syn_cookie(l, r, isn, made, m);
            assert_eq!(key.check_syn_cookie(l, r, isn, c, made), Some(m));
        }
        let c = key.syn_cookie(l, r, isn, made, 5);
        let later = |s: u64| Instant::from_millis(1_000 + s * 1_000);
        assert_eq!(key.check_syn_cookie(l, r, isn, c, later(100)), Some(5));
        assert_eq!(
            key.check_syn_cookie(l, r, isn, c, later(130)),
            None,
            "expired"
        );
        assert_eq!(key.check_syn_cookie(l, addr(1, 40001), isn, c, made), None);
        assert_eq!(key.check_syn_cookie(addr(3, 80), r, isn, c, made), None);
        assert_eq!(
            key.check_syn_cookie(l, r, SeqNumber(123_457), c, made),
            None
        );
        let other = IsnKey::fixed([8; 16]);
        assert_eq!(other.check_syn_cookie(l, r, isn, c, made), None);
        for bit in 0..32 {
            let flipped = SeqNumber(c.0 ^ (1 << bit));
            assert_eq!(
                key.check_syn_cookie(l, r, isn, flipped, made),
                None,
                "bit {bit}"
            );
        }
    }
}
