//! TCP Fast Open (RFC 7413): the cookie, the option that carries it, the
//! server's cookie function and the per-connection settings.
//!
//! The engine holds no secret of its own: the server's key comes from the
//! caller (a sysctl, a script's `-D`), and the client's cookie cache is a map
//! the caller owns and hands to the connection at connect time.

use crate::time::{Duration, Instant};
use core::net::IpAddr;
use siphasher::sip::SipHasher24;
use std::collections::HashMap;
use std::hash::Hasher;

/// Shortest and longest cookie (RFC 7413 4.1.1: 4 to 16 bytes).
pub const COOKIE_MIN: usize = 4;
/// Longest cookie (RFC 7413 4.1.1).
pub const COOKIE_MAX: usize = 16;
/// Option kind 34 (RFC 7413 4.1.1, IANA).
pub const KIND_TFO: u8 = 34;
/// The experimental option kind Linux first used, with magic 0xF989
/// (RFC 7413 4.1.1 names it; RFC 6994 shared experimental options).
pub const KIND_EXP: u8 = 254;
/// The ExID of the experimental Fast Open option.
pub const EXP_MAGIC: [u8; 2] = [0xF9, 0x89];

/// A Fast Open cookie: 0 bytes (a request) or 4 to 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TfoCookie {
    len: u8,
    bytes: [u8; COOKIE_MAX],
}

impl TfoCookie {
    /// The empty cookie of a cookie request (RFC 7413 4.1.1).
    pub const REQUEST: TfoCookie = TfoCookie {
        len: 0,
        bytes: [0; COOKIE_MAX],
    };

    /// A cookie of `b`, or `None` when its length is not 0 or 4..=16.
    pub fn new(b: &[u8]) -> Option<TfoCookie> {
        if !(b.is_empty() || (COOKIE_MIN..=COOKIE_MAX).contains(&b.len())) {
            return None;
        }
        let mut bytes = [0; COOKIE_MAX];
        bytes[..b.len()].copy_from_slice(b);
        Some(TfoCookie {
            len: b.len() as u8,
            bytes,
        })
    }

    /// The cookie bytes (empty for a request).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// True for the empty cookie of a request.
    pub fn is_request(&self) -> bool {
        self.len == 0
    }
}

/// The Fast Open option as it travels: kind 34, or kind 254 with magic 0xF989.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FastOpenOption {
    /// Sent as the experimental kind 254 option.
    pub experimental: bool,
    /// The cookie, empty for a request.
    pub cookie: TfoCookie,
}

impl FastOpenOption {
    /// Bytes the option takes on the wire, NOP padding to 4 included.
    pub fn encoded_len(&self) -> usize {
        let head = if self.experimental { 4 } else { 2 };
        (head + self.cookie.as_bytes().len() + 3) & !3
    }
}

/// The server's cookie for a client, as Linux computes it
/// (net/ipv4/tcp_fastopen.c): SipHash-2-4 keyed with `key` over the client's
/// then the server's address, 8 bytes little-endian. `key` is
/// `tcp_fastopen_key`'s four 32-bit words, each stored little-endian.
pub fn server_cookie(key: &[u8; 16], client: IpAddr, server: IpAddr) -> TfoCookie {
    let k0 = u64::from_le_bytes(key[..8].try_into().unwrap_or_default());
    let k1 = u64::from_le_bytes(key[8..].try_into().unwrap_or_default());
    let mut h = SipHasher24::new_with_keys(k0, k1);
    match (client, server) {
        (IpAddr::V4(c), IpAddr::V4(s)) => {
            h.write(&c.octets());
            h.write(&s.octets());
        }
        (c, s) => {
            h.write(&to_v6(c));
            h.write(&to_v6(s));
        }
    }
    TfoCookie::new(&h.finish().to_le_bytes()).unwrap_or_default()
}

fn to_v6(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        IpAddr::V6(v) => v.octets(),
    }
}

/// Parses `tcp_fastopen_key`'s form, `xxxxxxxx-xxxxxxxx-xxxxxxxx-xxxxxxxx`
/// (ip-sysctl.rst), into the key bytes [`server_cookie`] takes.
pub fn parse_key(s: &str) -> Result<[u8; 16], String> {
    let words: Vec<&str> = s.trim().split(['-', ',']).take(4).collect();
    if words.len() != 4 {
        return Err(format!(
            "tcp_fastopen_key {s:?}: expected four hex words like a0bf63f7-ed803d81-cd641d30-cebc4a90"
        ));
    }
    let mut key = [0u8; 16];
    for (i, w) in words.iter().enumerate() {
        let v = u32::from_str_radix(w, 16)
            .map_err(|_| format!("tcp_fastopen_key: {w:?} is not a 32-bit hex word"))?;
        key[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    Ok(key)
}

/// A connection's Fast Open settings (Linux's net.ipv4.tcp_fastopen bits,
/// ip-sysctl.rst, and the socket options that turn it on).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FastOpenConfig {
    /// Active open: ask for a cookie in the SYN, and send data in the SYN
    /// when `cookie` holds one (RFC 7413 4.2). Linux 0x1.
    pub client: bool,
    /// Active open: send data in the SYN even without a cookie. Linux 0x4.
    pub client_no_cookie: bool,
    /// The cookie cached for this peer (RFC 7413 4.1.3), handed in at connect.
    pub cookie: Option<TfoCookie>,
    /// The MSS the peer offered last time (from the cache): the SYN's data
    /// fits it.
    pub peer_mss: Option<u16>,
    /// Passive open: hand out cookies and accept data in SYNs with a valid
    /// one (RFC 7413 4.3). Linux 0x2 with a TCP_FASTOPEN queue, or 0x400.
    pub server: bool,
    /// Passive open: accept SYN data without a cookie. Linux 0x200.
    pub server_no_cookie: bool,
    /// The cookie a valid SYN from this listener's peer carries: the driver,
    /// which knows the addresses, computes it with [`server_cookie`].
    pub server_cookie: Option<TfoCookie>,
    /// Send the experimental kind 254 option instead of kind 34 (a client
    /// switches to it when the server answered with it).
    pub experimental: bool,
    /// Fast Open connections a listener may hold not yet accepted (RFC 7413
    /// 5.1, the TCP_FASTOPEN queue length). 0 refuses SYN data.
    pub queue: u32,
}

/// What one connection did with Fast Open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TfoState {
    /// Server: the cookie to put in the SYN-ACK (the SYN asked for one or
    /// carried a wrong one, RFC 7413 4.3.1).
    pub reply: Option<FastOpenOption>,
    /// Server: the SYN's data was accepted (Linux's TCPI_OPT_SYN_DATA).
    /// Client: the SYN carried data (the peer then said whether it took it).
    pub syn_data: bool,
    /// Client: data bytes the first SYN carried.
    pub syn_data_len: usize,
    /// Client: the SYN-ACK acknowledged the SYN's data.
    pub syn_data_acked: bool,
    /// Client: the cookie the server's SYN-ACK carried, for the caller's cache.
    pub learned: Option<FastOpenOption>,
    /// Client: our SYN asked for Fast Open and the SYN-ACK brought no valid
    /// cookie (none, or one of a bad length): FreeBSD disables the path
    /// (tcp_fastopen_disable_path, tcp_fastopen_update_cache).
    pub no_cookie: bool,
    /// Client: the MSS the server's SYN-ACK offered, for the caller's cache
    /// (it bounds the next SYN's data, as Linux's cache does).
    pub peer_mss: Option<u16>,
    /// Server: a Fast Open connection (valid cookie, or cookies waived): it
    /// can be accepted and send before the handshake completes (4.3.2).
    pub child: bool,
    /// Client: the SYN asked for a cookie without data, was never
    /// retransmitted, and the SYN-ACK carried no Fast Open option at all:
    /// the server may not know this option kind (tcp_rcv_fastopen_synack's
    /// try_exp case; the caller's cache then tries the other kind).
    pub no_cookie_reply: bool,
    /// Client: the SYN was sent again at once without its data (an ICMP
    /// said the SYN with data was too big: Linux tcp_simple_retransmit).
    pub syn_resent_plain: bool,
}

/// A client's cookie cache (RFC 7413 4.1.3), keyed by the server's address:
/// the caller owns it and passes the entry for a peer to each connect.
#[derive(Clone, Debug, Default)]
pub struct CookieCache {
    entries: HashMap<IpAddr, (TfoCookie, bool)>,
    mss: HashMap<IpAddr, u16>,
    /// Linux's tfom->try_exp: 1 = ask with the experimental option next,
    /// 2 = it went unanswered too, so ask with kind 34 for good.
    try_exp: HashMap<IpAddr, u8>,
    /// Paths without Fast Open, with the time each was disabled.
    disabled: HashMap<IpAddr, Instant>,
}

impl CookieCache {
    /// The cookie and option kind (true = experimental) cached for `server`.
    pub fn get(&self, server: IpAddr) -> Option<(TfoCookie, bool)> {
        self.entries.get(&server).copied()
    }
    /// Remembers the cookie a server's SYN-ACK carried (a valid cookie
    /// enables a disabled path again, as FreeBSD's tcp_fastopen_update_cache).
    pub fn insert(&mut self, server: IpAddr, cookie: TfoCookie, experimental: bool) {
        if !cookie.is_request() {
            self.entries.insert(server, (cookie, experimental));
            self.disabled.remove(&server);
        }
    }
    /// FreeBSD tcp_fastopen_disable_path: the path's cookie and MSS are
    /// forgotten and Fast Open is off for it from `now` (an earlier
    /// disable time is kept).
    pub fn disable(&mut self, server: IpAddr, now: Instant) {
        self.entries.remove(&server);
        self.mss.remove(&server);
        self.disabled.entry(server).or_insert(now);
    }
    /// FreeBSD tcp_fastopen_connect: whether Fast Open is off for `server`
    /// at `now`; a path disabled longer than `hold` is enabled again (the
    /// next SYN asks for a cookie).
    pub fn path_disabled(&mut self, server: IpAddr, now: Instant, hold: Duration) -> bool {
        match self.disabled.get(&server) {
            Some(&t) if now.saturating_duration_since(t) > hold => {
                self.disabled.remove(&server);
                false
            }
            Some(_) => true,
            None => false,
        }
    }
    /// Remembers the MSS a server's SYN-ACK offered.
    pub fn set_mss(&mut self, server: IpAddr, mss: u16) {
        self.mss.insert(server, mss);
    }
    /// The MSS cached for `server`.
    pub fn mss(&self, server: IpAddr) -> Option<u16> {
        self.mss.get(&server).copied()
    }
    /// Forgets everything (Linux flushes its cache when tcp_fastopen changes).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.mss.clear();
        self.try_exp.clear();
        self.disabled.clear();
    }
    /// A cookie request to `server` went unanswered (see
    /// [`TfoState::no_cookie_reply`]); `experimental` says which kind the SYN
    /// used. With no cookie cached, the next request uses the experimental
    /// kind, and once that went unanswered too kind 34 again, for good
    /// (Linux tcp_rcv_fastopen_synack and tcp_fastopen_cache_set).
    pub fn note_no_cookie(&mut self, server: IpAddr, experimental: bool) {
        if self.entries.contains_key(&server) {
            return;
        }
        let t = self.try_exp.entry(server).or_default();
        *t = (*t).max(if experimental { 2 } else { 1 });
    }
    /// The next cookie request to `server` uses the experimental option
    /// (tcp_fastopen_cache_get: no cookie and try_exp 1).
    pub fn request_experimental(&self, server: IpAddr) -> bool {
        !self.entries.contains_key(&server) && self.try_exp.get(&server) == Some(&1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(c: &TfoCookie) -> String {
        c.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The cookie Linux hands 10.248.0.2 from 192.168.0.2 under key
    /// a0bf63f7-ed803d81-cd641d30-cebc4a90, as a Linux server test expects.
    #[test]
    fn server_cookie_matches_linux() {
        let key = parse_key("a0bf63f7-ed803d81-cd641d30-cebc4a90").unwrap();
        let c = server_cookie(
            &key,
            "10.248.0.2".parse().unwrap(),
            "192.168.0.2".parse().unwrap(),
        );
        assert_eq!(hex(&c), "00abaaabe8e954c2");
        let key = parse_key("a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4").unwrap();
        let c = server_cookie(
            &key,
            "192.0.2.1".parse().unwrap(),
            "192.168.0.1".parse().unwrap(),
        );
        assert_eq!(hex(&c), "3021b9d889017eeb");
    }

    #[test]
    fn an_unanswered_request_tries_the_experimental_kind_once() {
        let mut c = CookieCache::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(!c.request_experimental(a));
        c.note_no_cookie(a, false);
        assert!(c.request_experimental(a));
        c.note_no_cookie(a, true);
        assert!(!c.request_experimental(a));
        c.note_no_cookie(a, false);
        assert!(!c.request_experimental(a), "kind 34 for good");
        c.clear();
        c.note_no_cookie(a, false);
        c.insert(a, TfoCookie::new(&[7; 8]).unwrap(), true);
        assert!(!c.request_experimental(a), "a cookie is used as it came");
    }

    #[test]
    fn disabled_path_forgets_its_cookie_until_the_hold_passes() {
        let server: IpAddr = "192.0.2.1".parse().unwrap();
        let t0 = Instant::from_nanos(1_000_000_000);
        let hold = Duration::from_secs(900);
        let mut c = CookieCache::default();
        c.insert(server, TfoCookie::new(&[1; 8]).unwrap(), false);
        c.set_mss(server, 1460);
        assert!(!c.path_disabled(server, t0, hold));
        c.disable(server, t0);
        assert!(c.get(server).is_none() && c.mss(server).is_none());
        // A second disable keeps the first time.
        c.disable(server, t0 + Duration::from_secs(100));
        assert!(c.path_disabled(server, t0 + hold, hold));
        assert!(!c.path_disabled(server, t0 + hold + Duration::from_secs(1), hold));
        assert!(!c.path_disabled(server, t0 + hold, hold), "enabled again");
        // A valid cookie enables a disabled path at once.
        c.disable(server, t0);
        c.insert(server, TfoCookie::new(&[2; 4]).unwrap(), false);
        assert!(!c.path_disabled(server, t0, hold));
    }

    #[test]
    fn cookie_lengths_and_keys_are_checked() {
        assert!(TfoCookie::new(&[1, 2, 3]).is_none());
        assert!(TfoCookie::new(&[0; 17]).is_none());
        assert!(TfoCookie::new(&[]).unwrap().is_request());
        assert!(parse_key("a0bf63f7-ed803d81").is_err());
        assert!(parse_key("zz-1-2-3").is_err());
        let o = FastOpenOption {
            experimental: true,
            cookie: TfoCookie::new(&[1; 8]).unwrap(),
        };
        assert_eq!(o.encoded_len(), 12);
        assert_eq!(FastOpenOption::default().encoded_len(), 4);
    }
}
