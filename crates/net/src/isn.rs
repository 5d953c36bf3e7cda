//! The TUN host's secret for ISNs and SYN cookies (RFC 6528 section 3):
//! the key itself and both uses of it live with the sans-IO endpoint in
//! proto; what the real wire adds is a key drawn from the operating system.

pub use tinygram_proto::endpoint::{IsnKey, Rfc6528Isn, COOKIE_LIFETIME, COOKIE_PERIOD};

/// A key from the operating system's random source, drawn once per host so
/// that no two hosts (or runs) share a secret (RFC 6528 section 3).
pub trait FromOs: Sized {
    /// A fresh key from the operating system's random source.
    fn from_os() -> std::io::Result<Self>;
}

impl FromOs for IsnKey {
    fn from_os() -> std::io::Result<IsnKey> {
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(IsnKey::fixed(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, SocketAddrV4};
    use tinygram_proto::{Instant, IsnGenerator};

    #[test]
    fn keys_from_the_os_differ() {
        let addr = |last, port| SocketAddrV4::new(Ipv4Addr::new(10, 7, 0, last), port);
        let a = IsnKey::from_os().unwrap();
        let b = IsnKey::from_os().unwrap();
        let t = Instant::ZERO;
        let ia = a.generator(addr(2, 80), addr(1, 1)).next_isn(t, 80, 1);
        let ib = b.generator(addr(2, 80), addr(1, 1)).next_isn(t, 80, 1);
        assert_ne!(
            ia, ib,
            "two hosts share no secret (a 2^-32 chance of a false failure)"
        );
        assert_eq!(format!("{a:?}"), "IsnKey(..)");
    }
}
