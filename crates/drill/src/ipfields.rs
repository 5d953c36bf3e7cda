//! The IPv4 header fields a script may check on our segments, TOS and TTL,
//! which a socket sets with IP_TOS and IP_TTL (FreeBSD ip(4), Linux ip(7)).
//! The engine emits no IP header; the runner stamps each segment with the
//! values of the socket that sent it.

/// TTL of a socket that never set IP_TTL (FreeBSD net.inet.ip.ttl and
/// Linux net.ipv4.ip_default_ttl, both 64).
pub const DEFAULT_TTL: u8 = 64;

/// A socket's IP_TOS and IP_TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpFields {
    /// IP_TOS: DSCP and precedence bits (ECN bits are refused at setsockopt).
    pub tos: u8,
    /// IP_TTL.
    pub ttl: u8,
}

impl Default for IpFields {
    fn default() -> IpFields {
        IpFields {
            tos: 0,
            ttl: DEFAULT_TTL,
        }
    }
}

impl IpFields {
    /// The TOS byte of a segment: the socket's IP_TOS with TCP's own ECN
    /// codepoint, ECT(0) when it sends one (RFC 3168 5, 6.1.1).
    pub fn tos_byte(self, ect: bool) -> u8 {
        (self.tos & !0x3) | if ect { 0x2 } else { 0 }
    }
}

/// `(tos 0x20, ttl 4)` before a segment's flags: the IP fields the script
/// expects (nplab packetdrill parser.y `ip_info`; run_packet.c checks the
/// whole TOS byte and the TTL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IpAnnotation {
    /// `tos 0xNN`: the whole TOS byte, ECN bits included.
    pub tos: Option<u8>,
    /// `ttl N`.
    pub ttl: Option<u8>,
}

impl IpAnnotation {
    /// Parses what is between the parentheses: `tos HEX` and `ttl N`,
    /// separated by commas, each at most once.
    pub fn parse(inner: &str) -> Result<IpAnnotation, String> {
        let mut a = IpAnnotation::default();
        for item in inner.split(',') {
            let mut words = item.split_whitespace();
            let (Some(key), Some(value), None) = (words.next(), words.next(), words.next()) else {
                return Err(format!(
                    "bad IP field {:?} in ({inner}) (expected `tos 0xNN` or `ttl N`)",
                    item.trim()
                ));
            };
            let slot = match key {
                "tos" => &mut a.tos,
                "ttl" => &mut a.ttl,
                _ => {
                    return Err(format!(
                        "IP field {key:?} in ({inner}) is not supported (tos and ttl are)"
                    ))
                }
            };
            if slot.is_some() {
                return Err(format!("IP field {key} given twice in ({inner})"));
            }
            *slot = Some(parse_u8(key, value)?);
        }
        Ok(a)
    }

    /// Checks the fields a segment went out with against the script's.
    pub fn check(&self, sent: IpFields, ect: bool) -> Result<(), String> {
        let tos = sent.tos_byte(ect);
        if let Some(want) = self.tos.filter(|&w| w != tos) {
            return Err(format!(
                "IP TOS: expected {want:#04x} but the engine's segment carried {tos:#04x}"
            ));
        }
        if let Some(want) = self.ttl.filter(|&w| w != sent.ttl) {
            return Err(format!(
                "IP TTL: expected {want} but the engine's segment carried {}",
                sent.ttl
            ));
        }
        Ok(())
    }
}

impl std::fmt::Display for IpAnnotation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(t) = self.tos {
            parts.push(format!("tos {t:#04x}"));
        }
        if let Some(t) = self.ttl {
            parts.push(format!("ttl {t}"));
        }
        write!(f, "({})", parts.join(", "))
    }
}

/// `tos` is written in hex (parser.y: `TOS HEX_INTEGER`), `ttl` in decimal.
fn parse_u8(key: &str, value: &str) -> Result<u8, String> {
    let parsed = if key == "tos" {
        value
            .strip_prefix("0x")
            .or_else(|| value.strip_prefix("0X"))
            .and_then(|h| u8::from_str_radix(h, 16).ok())
    } else {
        value.parse().ok()
    };
    parsed.ok_or_else(|| {
        let form = if key == "tos" {
            "0x00 to 0xff"
        } else {
            "0 to 255"
        };
        format!("bad {key} value {value:?} (expected {form})")
    })
}

/// The IPTOS_* names scripts give IP_TOS (FreeBSD netinet/ip.h): the
/// RFC 2474 class selectors, the RFC 2597 assured-forwarding and RFC 3246
/// expedited-forwarding code points, and RFC 1349's TOS bits.
pub fn iptos_value(name: &str) -> Option<u8> {
    let dscp = |d: u8| d << 2;
    Some(match name {
        "IPTOS_LOWDELAY" => 0x10,
        "IPTOS_THROUGHPUT" => 0x08,
        "IPTOS_RELIABILITY" => 0x04,
        "IPTOS_DSCP_EF" => dscp(46),
        _ => {
            if let Some(n) = name.strip_prefix("IPTOS_DSCP_CS") {
                let n: u8 = n.parse().ok().filter(|&n| n <= 7)?;
                dscp(n << 3)
            } else if let Some(af) = name.strip_prefix("IPTOS_DSCP_AF") {
                let b = af.as_bytes();
                let (class, drop) = match b {
                    [c @ b'1'..=b'4', d @ b'1'..=b'3'] => (c - b'0', d - b'0'),
                    _ => return None,
                };
                dscp((class << 3) | (drop << 1))
            } else {
                return None;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_parse_check_and_print_back() {
        let a = IpAnnotation::parse("tos 0x20, ttl 4").unwrap();
        assert_eq!((a.tos, a.ttl), (Some(0x20), Some(4)));
        assert_eq!(a.to_string(), "(tos 0x20, ttl 4)");
        let sent = IpFields { tos: 0x20, ttl: 4 };
        assert!(a.check(sent, false).is_ok());
        // ECT(0) is part of the TOS byte packetdrill compares.
        assert!(a.check(sent, true).unwrap_err().contains("0x22"));
        let ttl = IpAnnotation::parse("ttl 6").unwrap();
        assert!(ttl.check(sent, true).unwrap_err().contains("expected 6"));
        assert_eq!(IpAnnotation::parse("ttl 6").unwrap().tos, None);
    }

    #[test]
    fn bad_annotations_say_what_is_wrong() {
        let err = |s: &str| IpAnnotation::parse(s).unwrap_err();
        assert!(err("tos 20").contains("0x00 to 0xff"));
        assert!(err("ttl 300").contains("0 to 255"));
        assert!(err("ttl 3, ttl 4").contains("twice"));
        assert!(err("flowlabel 7").contains("not supported"));
        assert!(err("tos").contains("expected `tos 0xNN`"));
    }

    #[test]
    fn iptos_names_have_their_code_points() {
        assert_eq!(iptos_value("IPTOS_DSCP_CS1"), Some(0x20));
        assert_eq!(iptos_value("IPTOS_DSCP_CS7"), Some(0xe0));
        assert_eq!(iptos_value("IPTOS_DSCP_AF11"), Some(0x28));
        assert_eq!(iptos_value("IPTOS_DSCP_AF43"), Some(0x98));
        assert_eq!(iptos_value("IPTOS_DSCP_EF"), Some(0xb8));
        assert_eq!(iptos_value("IPTOS_DSCP_CS8"), None);
        assert_eq!(iptos_value("IPTOS_DSCP_AF14"), None);
        assert_eq!(iptos_value("IP_TOS"), None);
    }
}
