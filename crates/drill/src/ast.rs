//! The parsed form of a packetdrill script: options, then timed events.

use std::fmt;

/// A whole script: `--name=value` option lines, then events in file order.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// The file the script came from (for messages).
    pub path: String,
    /// `--name[=value]` lines at the top of the script.
    pub options: Vec<ScriptOption>,
    /// Timed events in file order.
    pub events: Vec<Event>,
}

/// One `--name[=value]` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptOption {
    /// 1-based line number.
    pub line: usize,
    /// Option name without the leading dashes.
    pub name: String,
    /// Text after `=`, if any.
    pub value: Option<String>,
}

/// One timed line (or multi-line construct) of the script.
#[derive(Clone, Debug)]
pub struct Event {
    /// 1-based line number where the event starts.
    pub line: usize,
    /// The source text, whitespace-collapsed, for messages.
    pub text: String,
    /// When it should happen.
    pub time: TimeSpec,
    /// What happens.
    pub kind: EventKind,
}

/// How an event's time is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeKind {
    /// `t`: seconds since the script started.
    Absolute,
    /// `+t`: seconds after the previous event.
    Relative,
    /// `*`: any time.
    Any,
}

/// An event's time column: `t`, `+t`, `a~b`, `+a~+b`, `*`, or `a...b` for blocking calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeSpec {
    /// Absolute, relative or any.
    pub kind: TimeKind,
    /// Start (or only) time in microseconds.
    pub start_us: i64,
    /// End of an `a~b` range in microseconds (same kind as start).
    pub range_end_us: Option<i64>,
    /// End of a blocking system call written `a...b`, in microseconds.
    pub block_end_us: Option<i64>,
}

/// What a line does.
#[derive(Clone, Debug)]
pub enum EventKind {
    /// `<` or `>` TCP segment.
    Packet(PacketSpec),
    /// A system call with its expected result.
    Syscall(SyscallSpec),
    /// A backtick shell command: never run, reported as skipped.
    Command(String),
    /// A `%{ ... }%` python block: never run, reported as skipped.
    Code(String),
    /// `< icmp TYPE [CODE] [[start:end(len)]]`: an inbound ICMP error.
    Icmp(IcmpSpec),
}

/// The ICMP error types an inbound line may name (packetdrill icmp_packet.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpType {
    /// `unreachable` (type 3).
    Unreachable,
    /// `source_quench` (type 4).
    SourceQuench,
    /// `redirect` (type 5).
    Redirect,
    /// `time_exceeded` (type 11).
    TimeExceeded,
    /// `parameter_problem` (type 12).
    ParameterProblem,
}

/// An inbound ICMP error quoting one of our segments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcmpSpec {
    /// The ICMP type.
    pub ty: IcmpType,
    /// The code (for unreachable: 0 net, 1 host, 3 port, ...).
    pub code: u8,
    /// The quoted segment's first sequence number (ours, from ISN 0).
    pub seq: u32,
    /// The quoted segment's payload length.
    pub len: u32,
    /// `mtu N`: the next hop's MTU a "fragmentation needed" carries (RFC 1191 4).
    pub mtu: Option<u16>,
    /// `[.../udp(SRC > DST)]`: the quoted segment travelled in UDP.
    pub udp: Option<UdpPorts>,
}

/// `/udp(SRC > DST)` after a segment: it travels encapsulated in UDP with
/// these ports (RFC 6951 5.1's encapsulation; nplab packetdrill's
/// `--udp_encapsulation=tcp` and opt_udp_encaps_info).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpPorts {
    /// The UDP source port.
    pub src: u16,
    /// The UDP destination port.
    pub dst: u16,
}

impl fmt::Display for UdpPorts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/udp({} > {})", self.src, self.dst)
    }
}

/// Direction of a scripted segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `<`: the remote peer (the runner) sends it to the engine.
    Inbound,
    /// `>`: the engine must send it.
    Outbound,
}

/// A scripted TCP segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketSpec {
    /// `<` or `>`.
    pub dir: Direction,
    /// Flag bits in the TCP header layout (FIN=0x01 ... CWR=0x80).
    pub flags: u8,
    /// First sequence number (script-relative).
    pub seq: u32,
    /// Payload length from `start:end(len)`.
    pub len: u32,
    /// `...(len)`: the sequence number is not checked (nplab packetdrill,
    /// parser.y `seq: ELLIPSIS '(' INTEGER ')'`, FLAG_IGNORE_SEQ).
    pub any_seq: bool,
    /// `start:end(len)!`: the sequence number as it is on the wire, not
    /// relative to an ISN (nplab packetdrill FLAG_ABSOLUTE_SEQ).
    pub abs_seq: bool,
    /// `ack N` (script-relative), if written.
    pub ack: Option<u32>,
    /// `win N`, if written.
    pub win: Option<u16>,
    /// `<...>` options, if written.
    pub options: Option<OptionsSpec>,
    /// IP ECN field annotation (`[ect0]`, `[ce]`, ...), if written (RFC 3168 5).
    pub ecn: Option<IpEcn>,
    /// `/udp(SRC > DST)`: the segment travels encapsulated in UDP.
    pub udp: Option<UdpPorts>,
    /// `(tos 0xNN, ttl N)`, if written.
    pub ip: Option<crate::ipfields::IpAnnotation>,
}

/// An IP-level ECN annotation before a segment's flags (packetdrill `[ect0]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpEcn {
    /// `[noecn]`: Not-ECT (00).
    NotEct,
    /// `[ect0]`: ECT(0) (10).
    Ect0,
    /// `[ect1]`: ECT(1) (01).
    Ect1,
    /// `[ect01]`: either ECT codepoint.
    Ect01,
    /// `[ce]`: Congestion Experienced (11).
    Ce,
}

impl IpEcn {
    /// Parses `[noecn]`, `[ect0]`, `[ect1]`, `[ect01]` or `[ce]`.
    pub fn parse(tok: &str) -> Option<IpEcn> {
        Some(match tok {
            "[noecn]" => IpEcn::NotEct,
            "[ect0]" => IpEcn::Ect0,
            "[ect1]" => IpEcn::Ect1,
            "[ect01]" => IpEcn::Ect01,
            "[ce]" => IpEcn::Ce,
            _ => return None,
        })
    }

    /// The codepoint in a TOS byte's two low bits (RFC 3168 5).
    pub fn from_bits(tos: u8) -> IpEcn {
        match tos & 0x3 {
            0 => IpEcn::NotEct,
            1 => IpEcn::Ect1,
            2 => IpEcn::Ect0,
            _ => IpEcn::Ce,
        }
    }

    /// The annotation as written.
    pub fn name(self) -> &'static str {
        match self {
            IpEcn::NotEct => "[noecn]",
            IpEcn::Ect0 => "[ect0]",
            IpEcn::Ect1 => "[ect1]",
            IpEcn::Ect01 => "[ect01]",
            IpEcn::Ce => "[ce]",
        }
    }
}

/// The `<...>` part of a scripted segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionsSpec {
    /// `<...>`: do not check options.
    Any,
    /// A list of options in order.
    List(Vec<OptSpec>),
}

/// One scripted TCP option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptSpec {
    /// `mss N`.
    Mss(u16),
    /// `nop`.
    Nop,
    /// `eol`.
    Eol,
    /// `wscale N`.
    Wscale(u8),
    /// `sackOK`.
    SackOk,
    /// `sack a:b c:d ...` (script-relative).
    Sack(Vec<(u32, u32)>),
    /// `TS val X ecr Y`.
    Ts {
        /// TSval.
        val: u32,
        /// TSecr.
        ecr: u32,
    },
    /// `FO [cookie]` / `FOEXP [cookie]`: RFC 7413 4.1.1 Fast Open, kind 34 or
    /// the experimental kind 254 with magic 0xF989; no cookie is a request.
    FastOpen {
        /// Kind 254 (`FOEXP`).
        exp: bool,
        /// The cookie bytes (empty for a request).
        cookie: Vec<u8>,
    },
    /// `md5 HEX`: an RFC 2385 TCP MD5 signature option (kind 19) carrying
    /// these 16 digest bytes, sent as written.
    Md5(Vec<u8>),
    /// tinygram: `nakOK`, RFC 1106 NAK-permitted (kind 253, ExID 0x1106, 'P').
    NakOk,
    /// tinygram: `nak S N`, RFC 1106 2.1 NAK of N segments from S (the data
    /// sender's script-relative numbering).
    Nak {
        /// First missing sequence number.
        seq: u32,
        /// MSS-sized segments missing.
        count: u8,
    },
    /// tinygram: `bigwin N`, RFC 1106 3 option B, a 30-bit window offer.
    BigWin(u32),
    /// tinygram: `winhi N`, RFC 1106 3.1 option C, the window's upper 15 bits.
    WinHi(u16),
}

/// A scripted system call: `name(args) = ret [ERRNO (text)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyscallSpec {
    /// Call name, e.g. `write`.
    pub name: String,
    /// Arguments as written.
    pub args: Vec<Expr>,
    /// Expected return value.
    pub ret: i64,
    /// Expected errno name when `ret` is -1.
    pub errno: Option<String>,
}

/// An argument expression in a system call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// `...`: filled in by the runner.
    Ellipsis,
    /// An integer literal.
    Int(i64),
    /// A symbol such as `SOL_SOCKET`.
    Ident(String),
    /// A string literal.
    Str(String),
    /// `A|B|C`.
    Or(Vec<Expr>),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{a, k=v}`: fields with optional keys.
    Struct(Vec<(Option<Expr>, Expr)>),
    /// `name(args)`, e.g. `msg_iov(1)`.
    Call(String, Vec<Expr>),
}

impl Expr {
    /// The value of `name=` (or `name(...)=`) in a `{...}` struct expression.
    pub fn field(&self, name: &str) -> Option<&Expr> {
        let Expr::Struct(fields) = self else {
            return None;
        };
        fields.iter().find_map(|(k, v)| match k {
            Some(Expr::Ident(n)) | Some(Expr::Call(n, _)) if n == name => Some(v),
            _ => None,
        })
    }
}

/// Flag bits, as in the TCP header.
pub mod flag {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
    /// URG.
    pub const URG: u8 = 0x20;
    /// ECE.
    pub const ECE: u8 = 0x40;
    /// CWR.
    pub const CWR: u8 = 0x80;
}

/// Formats flag bits the way scripts write them (`S.`, `P.`, `F.`, `R`, `-`).
pub fn flags_to_string(f: u8) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (flag::SYN, 'S'),
        (flag::FIN, 'F'),
        (flag::RST, 'R'),
        (flag::PSH, 'P'),
        (flag::URG, 'U'),
        (flag::ECE, 'E'),
        (flag::CWR, 'W'),
    ] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    if f & flag::ACK != 0 {
        s.push('.');
    }
    if s.is_empty() {
        s.push('-');
    }
    s
}

impl fmt::Display for OptSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptSpec::Mss(v) => write!(f, "mss {v}"),
            OptSpec::Nop => f.write_str("nop"),
            OptSpec::Eol => f.write_str("eol"),
            OptSpec::Wscale(v) => write!(f, "wscale {v}"),
            OptSpec::SackOk => f.write_str("sackOK"),
            OptSpec::Sack(blocks) => {
                f.write_str("sack")?;
                for (a, b) in blocks {
                    write!(f, " {a}:{b}")?;
                }
                Ok(())
            }
            OptSpec::Ts { val, ecr } => write!(f, "TS val {val} ecr {ecr}"),
            OptSpec::NakOk => f.write_str("nakOK"),
            OptSpec::Nak { seq, count } => write!(f, "nak {seq} {count}"),
            OptSpec::BigWin(w) => write!(f, "bigwin {w}"),
            OptSpec::WinHi(w) => write!(f, "winhi {w}"),
            OptSpec::Md5(d) => {
                f.write_str("md5 ")?;
                for b in d {
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
            OptSpec::FastOpen { exp, cookie } => {
                f.write_str(if *exp { "FOEXP" } else { "FO" })?;
                if !cookie.is_empty() {
                    f.write_str(" ")?;
                    for b in cookie {
                        write!(f, "{b:02x}")?;
                    }
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for PacketSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(ip) = self.ip {
            write!(f, "{ip} ")?;
        } else if let Some(e) = self.ecn {
            write!(f, "{} ", e.name())?;
        }
        if self.any_seq {
            write!(f, "{} ...({})", flags_to_string(self.flags), self.len)?;
        } else {
            write!(
                f,
                "{} {}:{}({}){}",
                flags_to_string(self.flags),
                self.seq,
                self.seq.wrapping_add(self.len),
                self.len,
                if self.abs_seq { "!" } else { "" }
            )?;
        }
        if let Some(a) = self.ack {
            write!(f, " ack {a}")?;
        }
        if let Some(w) = self.win {
            write!(f, " win {w}")?;
        }
        match &self.options {
            None => {}
            Some(OptionsSpec::Any) => f.write_str(" <...>")?,
            Some(OptionsSpec::List(l)) => {
                let parts: Vec<String> = l.iter().map(|o| o.to_string()).collect();
                write!(f, " <{}>", parts.join(","))?
            }
        }
        match self.udp {
            Some(u) => write!(f, "{u}"),
            None => Ok(()),
        }
    }
}
