//! Inbound ICMP lines, `< icmp unreachable [CODE] [[start:end(len)]]`: the
//! host reports that one of the engine's segments could not be delivered
//! (packetdrill's icmp_packet_spec). The echoed sequence number counts from
//! the engine's ISN, as packetdrill's map_inbound_icmp_tcp_packet maps it.

use crate::ast::{IcmpSpec, IcmpType};
use crate::report::secs;
use crate::runner::Runner;
use tinygram_proto::conn::IcmpError;
use tinygram_proto::SeqNumber;

/// ICMPv4 destination-unreachable code names as packetdrill spells them
/// (icmp_packet.c), with their numbers (RFC 792, RFC 1812 5.2.7.1).
const UNREACH_CODES: &[(&str, u8)] = &[
    ("net_unreachable", 0),
    ("host_unreachable", 1),
    ("protocol_unreachable", 2),
    ("port_unreachable", 3),
    ("frag_needed", 4),
    ("source_route_failed", 5),
    ("net_unknown", 6),
    ("host_unknown", 7),
    ("source_host_isolated", 8),
    ("net_prohibited", 9),
    ("host_prohibited", 10),
    ("net_unreachable_for_tos", 11),
    ("host_unreachable_for_tos", 12),
    ("packet_filtered", 13),
    ("precedence_violation", 14),
    ("precedence_cutoff", 15),
];

/// ICMPv4 time-exceeded code names (icmp_packet.c, RFC 792).
const TIME_EXCEEDED_CODES: &[(&str, u8)] =
    &[("ttl_exceeded_in_transit", 0), ("frag_reass_exceeded", 1)];

/// Code names of one ICMP type, with their numbers.
type CodeNames = &'static [(&'static str, u8)];

/// ICMP type names packetdrill knows for errors, with the codes each may name.
const TYPES: &[(&str, IcmpType, CodeNames)] = &[
    ("unreachable", IcmpType::Unreachable, UNREACH_CODES),
    ("dest_unreachable", IcmpType::Unreachable, UNREACH_CODES),
    ("source_quench", IcmpType::SourceQuench, &[]),
    ("redirect", IcmpType::Redirect, &[]),
    ("time_exceeded", IcmpType::TimeExceeded, TIME_EXCEEDED_CODES),
    ("parameter_problem", IcmpType::ParameterProblem, &[]),
];

/// Parses what follows `icmp` on an inbound line.
pub(crate) fn parse_icmp(s: &str) -> Result<IcmpSpec, String> {
    let mut words = s.split_whitespace().peekable();
    let word = words.next().ok_or("icmp: missing the ICMP type")?;
    let &(ty_name, ty, codes) = TYPES.iter().find(|(n, _, _)| *n == word).ok_or_else(|| {
        let known: Vec<&str> = TYPES.iter().map(|(n, _, _)| *n).collect();
        format!(
            "icmp type {word:?} is not supported (known: {})",
            known.join(", ")
        )
    })?;
    let mut code = 0;
    if let Some(w) = words.peek().copied() {
        if !w.starts_with('[') && w != "mtu" {
            // icmp_packet.c parse_icmp_code: a name of the type, or code_N.
            code = codes
                .iter()
                .find(|(n, _)| *n == w)
                .map(|&(_, c)| c)
                .or_else(|| w.strip_prefix("code_").and_then(|n| n.parse().ok()))
                .ok_or_else(|| {
                    let names: Vec<&str> = codes.iter().map(|(n, _)| *n).collect();
                    format!(
                        "unknown ICMP {ty_name} code {w:?} (known: {}code_N)",
                        names.iter().map(|n| format!("{n}, ")).collect::<String>()
                    )
                })?;
            words.next();
        }
    }
    // packetdrill's opt_icmp_mtu: `mtu N` after the code.
    let mut mtu = None;
    if words.peek() == Some(&"mtu") {
        if ty != IcmpType::Unreachable || code != FRAG_NEEDED {
            return Err("icmp: `mtu` is only valid for unreachable frag_needed".into());
        }
        words.next();
        let n = words.next().ok_or("icmp: `mtu` needs a number")?;
        mtu = Some(
            n.parse::<u16>()
                .map_err(|_| format!("icmp: mtu {n:?} is not a number from 0 to 65535"))?,
        );
    }
    let rest: Vec<&str> = words.collect();
    let rest = rest.join(" ");
    let (seq, len, udp) = if rest.is_empty() {
        (0, 0, None)
    } else {
        let inner = rest
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .ok_or_else(|| {
                format!("icmp: expected the echoed segment as [start:end(len)], found {rest:?}")
            })?;
        let (inner, udp) = crate::parse::split_udp_encaps(inner.trim())?;
        let (seq, len) = crate::parse::parse_seq_range(inner.trim())?;
        (seq, len, udp)
    };
    Ok(IcmpSpec {
        ty,
        code,
        seq,
        len,
        mtu,
        udp,
    })
}

/// FRAG_NEEDED, the one unreachable code that carries an MTU (RFC 1191 4).
const FRAG_NEEDED: u8 = tinygram_proto::conn::unreach::FRAG_NEEDED;

/// The line as the trace shows it: type, code name and MTU.
fn describe(spec: &IcmpSpec) -> String {
    let (ty, codes) = TYPES
        .iter()
        .find(|(_, t, _)| *t == spec.ty)
        .map_or(("?", &[][..]), |&(n, _, c)| (n, c));
    let code = match codes.iter().find(|&&(_, c)| c == spec.code) {
        Some((n, _)) => format!(" {n}"),
        None if spec.code != 0 => format!(" code_{}", spec.code),
        None => String::new(),
    };
    let mtu = spec.mtu.map_or(String::new(), |m| format!(" mtu {m}"));
    format!("{ty}{code}{mtu}")
}

impl Runner<'_> {
    /// Delivers an inbound ICMP error to the connection it quotes.
    pub(crate) fn inject_icmp(&mut self, spec: &IcmpSpec) {
        let seq = SeqNumber(self.local_wire(spec.seq, false));
        let accepted = self.conn_accepted;
        let err = match spec.ty {
            IcmpType::Unreachable => IcmpError::Unreachable(spec.code),
            IcmpType::SourceQuench => IcmpError::SourceQuench,
            IcmpType::Redirect => IcmpError::Redirect(spec.code),
            IcmpType::TimeExceeded => IcmpError::TimeExceeded(spec.code),
            IcmpType::ParameterProblem => IcmpError::ParameterProblem(spec.code),
        };
        let frag_needed = tinygram_proto::conn::unreach::FRAG_NEEDED;
        let reaches = self.icmp_reaches(spec.udp);
        let taken = self
            .conn
            .as_mut()
            .filter(|_| reaches)
            .map(|c| match spec.mtu {
                Some(mtu) if spec.ty == IcmpType::Unreachable && spec.code == frag_needed => {
                    c.icmp_frag_needed(seq, mtu)
                }
                _ => c.icmp_error(seq, err, accepted),
            });
        self.report.trace.push(format!(
            "{} < icmp {} [{}:{}({}){}]{}",
            secs(self.now),
            describe(spec),
            spec.seq,
            spec.seq.wrapping_add(spec.len),
            spec.len,
            spec.udp.map_or(String::new(), |u| u.to_string()),
            match taken {
                Some(true) => "",
                Some(false) => " (ignored: quotes no outstanding sequence number)",
                None if self.conn.is_some() => " (ignored: not this connection's encapsulation)",
                None => " (no connection)",
            }
        ));
        self.drain();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_echoed_segment() {
        let i = parse_icmp("unreachable host_unreachable [0:10(10)]").unwrap();
        assert_eq!((i.code, i.seq, i.len), (1, 0, 10));
        let i = parse_icmp("unreachable [5000:6000(1000)]").unwrap();
        assert_eq!((i.code, i.seq, i.len), (0, 5000, 1000));
        let i = parse_icmp("unreachable frag_needed mtu 840 [0:1000(1000)]").unwrap();
        assert_eq!((i.code, i.mtu, i.seq, i.len), (4, Some(840), 0, 1000));
        assert!(parse_icmp("unreachable frag_needed mtu").is_err());
        assert!(parse_icmp("unreachable frag_needed mtu 70000").is_err());
        let i = parse_icmp("unreachable host_prohibited [0:0(0)/udp(9812 > 1)]").unwrap();
        assert_eq!(
            (i.code, i.seq, i.udp.map(|u| (u.src, u.dst))),
            (10, 0, Some((9812, 1)))
        );
        assert!(parse_icmp("unreachable [0:0(0)/udp(1 >)]").is_err());
        let i = parse_icmp("unreachable port_unreachable").unwrap();
        assert_eq!((i.code, i.seq), (3, 0));
        assert!(parse_icmp("echo_request").is_err());
        let i = parse_icmp("time_exceeded ttl_exceeded_in_transit [0:0(0)]").unwrap();
        assert_eq!((i.ty, i.code), (IcmpType::TimeExceeded, 0));
        let i = parse_icmp("parameter_problem code_2 [0:0(0)]").unwrap();
        assert_eq!((i.ty, i.code), (IcmpType::ParameterProblem, 2));
        let i = parse_icmp("redirect [0:0(0)]").unwrap();
        assert_eq!((i.ty, i.code), (IcmpType::Redirect, 0));
        assert_eq!(
            describe(&parse_icmp("source_quench").unwrap()),
            "source_quench"
        );
        assert!(parse_icmp("time_exceeded port_unreachable").is_err());
        assert!(parse_icmp("redirect mtu 1000").is_err());
        assert!(parse_icmp("unreachable bogus").is_err());
        assert!(parse_icmp("unreachable [1:2]").is_err());
    }
}
