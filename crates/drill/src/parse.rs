//! Hand-written parser for packetdrill's grammar: logical lines first, then one event each.

use crate::ast::*;
use std::fmt;

/// A parse error naming the file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Script path.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: parse error: {}", self.path, self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// Deepest nesting of brackets accepted in a system call argument.
const MAX_DEPTH: usize = 32;

/// Parses a whole script; `path` is used in error messages only.
pub fn parse_script(text: &str, path: &str) -> Result<Script, ParseError> {
    let mut script = Script {
        path: path.to_string(),
        ..Script::default()
    };
    let err = |line: usize, msg: String| ParseError {
        path: path.to_string(),
        line,
        msg,
    };
    for (line, chunk) in logical_lines(text).map_err(|(l, m)| err(l, m))? {
        let t = chunk.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(opt) = t.strip_prefix("--") {
            if !script.events.is_empty() {
                return Err(err(line, "option lines must come before events".into()));
            }
            let (name, value) = match opt.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
                None => (opt.trim(), None),
            };
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(err(line, format!("bad option line {t:?}")));
            }
            script.options.push(ScriptOption {
                line,
                name: name.to_string(),
                value,
            });
            continue;
        }
        let event = parse_event(t, line).map_err(|m| err(line, m))?;
        script.events.push(event);
    }
    if script.events.is_empty() {
        // Running it would "pass" having checked nothing.
        return Err(err(
            0,
            "no events: the script is empty or only comments and options, so there is nothing to run".into(),
        ));
    }
    Ok(script)
}

/// Splits text into (line, text) logical events: comments removed, lines joined
/// while brackets are open or inside backticks, strings or `%{ }%` blocks.
fn logical_lines(text: &str) -> Result<Vec<(usize, String)>, (usize, String)> {
    #[derive(PartialEq)]
    enum Mode {
        Normal,
        Str,
        Tick,
        Code,
        BlockComment,
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start_line = 1;
    let mut line = 1;
    let mut depth: i64 = 0;
    let mut mode = Mode::Normal;
    let mut mode_line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match mode {
            Mode::Normal => {
                if c == '/' && next == Some('/') {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                    continue;
                }
                if c == '/' && next == Some('*') {
                    mode = Mode::BlockComment;
                    mode_line = line;
                    cur.push(' ');
                    i += 2;
                    continue;
                }
                if c == '%' && next == Some('{') {
                    mode = Mode::Code;
                    mode_line = line;
                    cur.push_str("%{");
                    i += 2;
                    continue;
                }
                match c {
                    '"' => {
                        mode = Mode::Str;
                        mode_line = line;
                    }
                    '`' => {
                        mode = Mode::Tick;
                        mode_line = line;
                    }
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    _ => {}
                }
                if c == '\n' {
                    if depth <= 0 {
                        depth = 0;
                        if cur.trim().is_empty() {
                            cur.clear();
                        } else {
                            out.push((start_line, std::mem::take(&mut cur)));
                        }
                        line += 1;
                        start_line = line;
                        i += 1;
                        continue;
                    }
                    line += 1;
                    if cur.trim().is_empty() {
                        start_line = line;
                    }
                    cur.push(' ');
                    i += 1;
                    continue;
                }
                if cur.trim().is_empty() && !c.is_whitespace() {
                    start_line = line;
                }
                cur.push(c);
            }
            Mode::Str | Mode::Tick => {
                let close = if mode == Mode::Str { '"' } else { '`' };
                if c == '\\' && mode == Mode::Str {
                    cur.push(c);
                    if let Some(n) = next {
                        cur.push(n);
                        if n == '\n' {
                            line += 1;
                        }
                    }
                    i += 2;
                    continue;
                }
                if c == '\n' {
                    line += 1;
                    // A shell command keeps its line breaks: each line is a
                    // command of its own (files.rs reads them one by one).
                    cur.push(if mode == Mode::Tick { '\n' } else { ' ' });
                } else {
                    cur.push(c);
                }
                if c == close {
                    mode = Mode::Normal;
                }
            }
            Mode::Code => {
                if c == '}' && next == Some('%') {
                    cur.push_str("}%");
                    mode = Mode::Normal;
                    i += 2;
                    continue;
                }
                // Python needs its line breaks.
                if c == '\n' {
                    line += 1;
                }
                cur.push(c);
            }
            Mode::BlockComment => {
                if c == '*' && next == Some('/') {
                    mode = Mode::Normal;
                    i += 2;
                    continue;
                }
                if c == '\n' {
                    line += 1;
                }
            }
        }
        i += 1;
    }
    match mode {
        Mode::Normal => {}
        Mode::Str => return Err((mode_line, "unterminated string".into())),
        Mode::Tick => return Err((mode_line, "unterminated backtick command".into())),
        Mode::Code => return Err((mode_line, "unterminated %{ }% block".into())),
        Mode::BlockComment => return Err((mode_line, "unterminated /* comment".into())),
    }
    if !cur.trim().is_empty() {
        out.push((start_line, cur));
    }
    Ok(out)
}

/// Parses one logical event: time column, then packet, command, code or syscall.
fn parse_event(t: &str, line: usize) -> Result<Event, String> {
    let text = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let untimed = TimeSpec {
        kind: TimeKind::Relative,
        start_us: 0,
        range_end_us: None,
        block_end_us: None,
    };
    let (time, rest) = if t.starts_with('`') || t.starts_with("%{") {
        (untimed, t)
    } else {
        parse_time(t)?
    };
    let rest = rest.trim_start();
    let kind = if let Some(r) = rest
        .strip_prefix('<')
        .and_then(|r| r.trim_start().strip_prefix("icmp "))
    {
        EventKind::Icmp(crate::icmp::parse_icmp(r)?)
    } else if let Some(r) = rest.strip_prefix('<') {
        EventKind::Packet(parse_packet(Direction::Inbound, r)?)
    } else if let Some(r) = rest.strip_prefix('>') {
        EventKind::Packet(parse_packet(Direction::Outbound, r)?)
    } else if let Some(r) = rest.strip_prefix('`') {
        let end = r.find('`').ok_or("unterminated backtick command")?;
        if !r[end + 1..].trim().is_empty() {
            return Err(format!(
                "unexpected text after command: {:?}",
                r[end + 1..].trim()
            ));
        }
        EventKind::Command(r[..end].trim().to_string())
    } else if let Some(r) = rest.strip_prefix("%{") {
        let end = r.rfind("}%").ok_or("unterminated %{ }% block")?;
        EventKind::Code(crate::pycheck::dedent(&r[..end]))
    } else if rest.is_empty() {
        return Err("a time with no event after it".into());
    } else {
        EventKind::Syscall(parse_syscall(rest)?)
    };
    if time.block_end_us.is_some() && !matches!(kind, EventKind::Syscall(_)) {
        return Err("only system calls can use the blocking time form a...b".into());
    }
    if time.kind == TimeKind::Any && !matches!(kind, EventKind::Packet(_)) {
        return Err("`*` time is only allowed for packets".into());
    }
    Ok(Event {
        line,
        text,
        time,
        kind,
    })
}

/// Parses `[+]digits[.digits]` into microseconds; returns (relative, us, rest).
fn parse_time_value(s: &str) -> Result<(bool, i64, &str), String> {
    let b = s.as_bytes();
    let mut i = 0;
    let relative = b.first() == Some(&b'+');
    if relative {
        i = 1;
        // nplab's scripts sometimes write `+ 0.00`: blanks may follow the '+'.
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_part = &s[int_start..i];
    let mut frac = "";
    if i < b.len() && b[i] == b'.' && b.get(i + 1) != Some(&b'.') {
        i += 1;
        let fs = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac = &s[fs..i];
    }
    if int_part.is_empty() && frac.is_empty() {
        let shown: String = s.chars().take(20).collect();
        return Err(format!(
            "expected a time (like 0, +0.1, 1.5~2, *) at {shown:?}"
        ));
    }
    if int_part.len() > 9 {
        return Err(format!("time {int_part} s is too large"));
    }
    let secs: i64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| "bad time".to_string())?
    };
    let mut us: i64 = 0;
    for (k, d) in frac.bytes().enumerate() {
        if k >= 6 {
            if d != b'0' {
                return Err(format!("time .{frac} is finer than a microsecond"));
            }
            continue;
        }
        us += i64::from(d - b'0') * 10i64.pow(5 - k as u32);
    }
    Ok((relative, secs * 1_000_000 + us, &s[i..]))
}

/// Parses the time column and returns the rest of the line.
fn parse_time(s: &str) -> Result<(TimeSpec, &str), String> {
    let s = s.trim_start();
    if let Some(rest) = s.strip_prefix('*') {
        return Ok((
            TimeSpec {
                kind: TimeKind::Any,
                start_us: 0,
                range_end_us: None,
                block_end_us: None,
            },
            rest,
        ));
    }
    let (relative, start_us, mut rest) = parse_time_value(s)?;
    let kind = if relative {
        TimeKind::Relative
    } else {
        TimeKind::Absolute
    };
    let mut spec = TimeSpec {
        kind,
        start_us,
        range_end_us: None,
        block_end_us: None,
    };
    let trimmed = rest.trim_start();
    if let Some(r) = trimmed.strip_prefix('~') {
        let (rel2, end, r2) = parse_time_value(r.trim_start())?;
        if rel2 != relative {
            return Err(
                "both ends of a time range must be relative (+a~+b) or absolute (a~b)".into(),
            );
        }
        if end < start_us {
            return Err("time range ends before it starts".into());
        }
        spec.range_end_us = Some(end);
        rest = r2;
    } else if let Some(r) = trimmed.strip_prefix("...") {
        // `a...b` and `a ... b` are the same blocking-call form.
        let (_, end, r2) = parse_time_value(r.trim_start())?;
        if end < start_us {
            return Err("blocking call ends before it starts".into());
        }
        spec.block_end_us = Some(end);
        rest = r2;
    }
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) && !rest.starts_with('`') {
        let shown: String = rest.chars().take(20).collect();
        return Err(format!("unexpected text after the time: {shown:?}"));
    }
    Ok((spec, rest))
}

/// Parses a decimal or `0x` hex unsigned number.
fn parse_u64(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// Parses a number that must fit in u32.
fn num_u32(s: &str, what: &str) -> Result<u32, String> {
    parse_u64(s)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("bad {what} {s:?} (expected a number up to 4294967295)"))
}

/// Parses the part of a packet line after `<` or `>`.
fn parse_packet(dir: Direction, s: &str) -> Result<PacketSpec, String> {
    let (ip, s) = split_ip_fields(s.trim())?;
    let (s, udp) = split_udp_encaps(s.trim())?;
    let (mut flag_tok, mut rest) = split_word(s);
    // An IP ECN annotation may precede the flags (RFC 3168 5).
    let mut ecn = IpEcn::parse(flag_tok);
    if let (Some(_), Some(e)) = (ip, ecn) {
        return Err(format!(
            "IP fields given twice: {} and {}",
            ip.unwrap_or_default(),
            e.name()
        ));
    }
    if ecn.is_some() {
        (flag_tok, rest) = split_word(rest);
    }
    // An inbound TOS byte carries the ECN field the engine reacts to.
    if let (Some(tos), Direction::Inbound) = (ip.and_then(|a| a.tos), dir) {
        ecn = Some(IpEcn::from_bits(tos));
    }
    if flag_tok.is_empty() {
        return Err("missing TCP flags after the direction".into());
    }
    if flag_tok.starts_with('[') || flag_tok.starts_with('(') {
        return Err(format!(
            "unsupported construct {flag_tok:?} (of IP-level annotations only (tos 0xNN, ttl N), [noecn], [ect0], [ect1], [ect01] and [ce] are supported)"
        ));
    }
    if flag_tok == "udp" || flag_tok == "icmp" {
        return Err(format!(
            "unsupported protocol {flag_tok:?}: only TCP is supported"
        ));
    }
    let mut flags = 0u8;
    for c in flag_tok.chars() {
        flags |= match c {
            'S' => flag::SYN,
            'F' => flag::FIN,
            'R' => flag::RST,
            'P' => flag::PSH,
            '.' => flag::ACK,
            'U' => flag::URG,
            'E' => flag::ECE,
            'W' => flag::CWR,
            '-' => 0,
            _ => {
                return Err(format!(
                    "bad TCP flag {c:?} in {flag_tok:?} (flags are S F R P . U E W -)"
                ))
            }
        };
    }
    let (seq_tok, r) = split_word(rest);
    rest = r;
    let any_seq = seq_tok.starts_with("...");
    let abs = seq_tok.strip_suffix('!');
    let (seq, len) = if any_seq {
        (0, parse_any_seq(seq_tok, dir)?)
    } else {
        parse_seq_range(abs.unwrap_or(seq_tok))?
    };
    let mut spec = PacketSpec {
        dir,
        flags,
        seq,
        len,
        any_seq,
        abs_seq: abs.is_some(),
        ack: None,
        win: None,
        options: None,
        ecn,
        udp,
        ip,
    };
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        if let Some(r) = rest.strip_prefix('<') {
            let end = r.find('>').ok_or("unterminated TCP options: missing '>'")?;
            if spec.options.is_some() {
                return Err("TCP options given twice".into());
            }
            spec.options = Some(parse_options(&r[..end])?);
            rest = &r[end + 1..];
            continue;
        }
        let (word, r) = split_word(rest);
        rest = r;
        match word {
            "ack" => {
                let (n, r) = split_word(rest);
                rest = r;
                spec.ack = Some(num_u32(n, "ack number")?);
            }
            "win" => {
                let (n, r) = split_word(rest);
                rest = r;
                let v = num_u32(n, "window")?;
                spec.win = Some(
                    u16::try_from(v).map_err(|_| format!("window {v} does not fit in 16 bits"))?,
                );
            }
            other => {
                return Err(format!(
                    "unsupported packet field {other:?} (supported: ack N, win N, <options>)"
                ))
            }
        }
    }
    // packetdrill's grammar (parser.y, opt_ack) reads an absent `ack N` as
    // ack 0: script-relative, so inbound it is our ISN, outbound it must be 0.
    if flags & flag::ACK != 0 && spec.ack.is_none() {
        spec.ack = Some(0);
    }
    // nplab packetdrill sends an inbound `ack N` without '.' as written: the
    // number in the field, the ACK bit clear (a receiver must ignore it).
    if flags & flag::ACK == 0 && spec.ack.is_some() && dir == Direction::Outbound {
        return Err(
            "`ack N` given without the '.' (ACK) flag (allowed only on inbound segments)".into(),
        );
    }
    Ok(spec)
}

/// Splits a trailing `/udp(SRC > DST)` off a segment (nplab packetdrill's
/// opt_udp_encaps_info): the segment travels in UDP with these ports.
pub(crate) fn split_udp_encaps(s: &str) -> Result<(&str, Option<UdpPorts>), String> {
    let Some(at) = s.find("/udp(") else {
        return Ok((s, None));
    };
    let bad = || {
        format!(
            "bad UDP encapsulation {:?} (expected /udp(SRC > DST))",
            &s[at..]
        )
    };
    let inner = s[at + 5..].trim_end().strip_suffix(')').ok_or_else(bad)?;
    let (a, b) = inner.split_once('>').ok_or_else(bad)?;
    let port = |t: &str, what: &str| {
        t.trim().parse::<u16>().map_err(|_| {
            format!(
                "UDP {what} port {:?} is not a number from 0 to 65535",
                t.trim()
            )
        })
    };
    let udp = UdpPorts {
        src: port(a, "source")?,
        dst: port(b, "destination")?,
    };
    Ok((s[..at].trim_end(), Some(udp)))
}

/// Splits off the first whitespace-separated word.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// Splits a leading `(tos 0xNN, ttl N)` off a packet (nplab packetdrill
/// parser.y `opt_ip_info`).
fn split_ip_fields(s: &str) -> Result<(Option<crate::ipfields::IpAnnotation>, &str), String> {
    let Some(r) = s.strip_prefix('(') else {
        return Ok((None, s));
    };
    let end = r.find(')').ok_or("unterminated IP fields: missing ')'")?;
    let ip = crate::ipfields::IpAnnotation::parse(&r[..end])?;
    Ok((Some(ip), r[end + 1..].trim_start()))
}

/// Parses `...(len)`, a segment of ours whose sequence number is not
/// checked (nplab packetdrill parser.y: `seq: ELLIPSIS '(' INTEGER ')'`).
fn parse_any_seq(tok: &str, dir: Direction) -> Result<u32, String> {
    if dir == Direction::Inbound {
        return Err(format!(
            "sequence range {tok:?}: `...` leaves the number unchecked, so only outbound segments may use it"
        ));
    }
    let l = tok
        .strip_prefix("...(")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("bad sequence range {tok:?} (expected ...(len))"))?;
    num_u32(l, "payload length")
}

/// Parses `start:end(len)`.
pub(crate) fn parse_seq_range(tok: &str) -> Result<(u32, u32), String> {
    let bad = || format!("bad sequence range {tok:?} (expected start:end(len))");
    let (a, rest) = tok.split_once(':').ok_or_else(bad)?;
    let (b, rest) = rest.split_once('(').ok_or_else(bad)?;
    let l = rest.strip_suffix(')').ok_or_else(bad)?;
    let start = num_u32(a, "start sequence number")?;
    let end = num_u32(b, "end sequence number")?;
    let len = num_u32(l, "payload length")?;
    if end.wrapping_sub(start) != len {
        return Err(format!(
            "sequence range {tok:?}: end - start = {} but length is {len}",
            end.wrapping_sub(start)
        ));
    }
    if len > 65_535 {
        return Err(format!(
            "payload length {len} is larger than a segment can be"
        ));
    }
    Ok((start, len))
}

/// A Fast Open cookie written in hex. Any length an option can hold parses:
/// scripts send malformed cookies (shorter than 4 or longer than 16 bytes,
/// RFC 7413 4.1.1) to check that the engine ignores them.
fn tfo_cookie(hex: &str) -> Result<Vec<u8>, String> {
    let bad =
        || format!("Fast Open cookie {hex:?}: expected an even number of hex digits, at most 76");
    if !hex.len().is_multiple_of(2) || !(2..=76).contains(&hex.len()) {
        return Err(bad());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("x"), 16).map_err(|_| bad()))
        .collect()
}

/// Most options one list may name: a TCP header holds at most 40 bytes of
/// options and each takes at least one (RFC 9293 3.1, Data Offset).
const MAX_OPTIONS: usize = 40;

/// Parses the inside of `<...>`.
fn parse_options(s: &str) -> Result<OptionsSpec, String> {
    if s.trim() == "..." {
        return Ok(OptionsSpec::Any);
    }
    let mut out = Vec::new();
    if s.trim().is_empty() {
        return Ok(OptionsSpec::List(out));
    }
    for part in s.split(',') {
        if out.len() == MAX_OPTIONS {
            return Err(format!(
                "more than {MAX_OPTIONS} TCP options in one list; a TCP header holds at most 40 bytes of options"
            ));
        }
        let words: Vec<&str> = part.split_whitespace().collect();
        let opt = match words.as_slice() {
            ["mss", n] => OptSpec::Mss(
                u16::try_from(num_u32(n, "mss")?).map_err(|_| format!("mss {n} too large"))?,
            ),
            ["nop"] => OptSpec::Nop,
            ["eol"] => OptSpec::Eol,
            ["wscale", n] => OptSpec::Wscale(
                u8::try_from(num_u32(n, "wscale")?).map_err(|_| format!("wscale {n} too large"))?,
            ),
            ["sackOK"] => OptSpec::SackOk,
            ["sack", blocks @ ..] if !blocks.is_empty() => {
                let mut v = Vec::new();
                for b in blocks {
                    let (l, r) = b
                        .split_once(':')
                        .ok_or_else(|| format!("bad sack block {b:?} (expected left:right)"))?;
                    v.push((num_u32(l, "sack left edge")?, num_u32(r, "sack right edge")?));
                }
                if v.len() > 4 {
                    return Err("at most 4 sack blocks fit in a segment".into());
                }
                OptSpec::Sack(v)
            }
            ["TS", "val", v, "ecr", e] => OptSpec::Ts {
                val: num_u32(v, "TS val")?,
                ecr: num_u32(e, "TS ecr")?,
            },
            [w @ ("FO" | "FOEXP"), rest @ ..] if rest.len() <= 1 => OptSpec::FastOpen {
                exp: *w == "FOEXP",
                cookie: match rest.first() {
                    None => Vec::new(),
                    Some(hex) => tfo_cookie(hex)?,
                },
            },
            ["md5", hex] => OptSpec::Md5(md5_digest(hex)?),
            ["nakOK"] => OptSpec::NakOk,
            ["nak", seq, n] => OptSpec::Nak {
                seq: num_u32(seq, "nak sequence number")?,
                count: u8::try_from(num_u32(n, "nak count")?)
                    .map_err(|_| format!("nak count {n} too large (at most 255)"))?,
            },
            ["bigwin", n] => {
                let w = num_u32(n, "bigwin")?;
                if w >= 1 << 30 {
                    return Err(format!("bigwin {n} exceeds 30 bits"));
                }
                OptSpec::BigWin(w)
            }
            ["winhi", n] => OptSpec::WinHi(
                u16::try_from(num_u32(n, "winhi")?)
                    .ok()
                    .filter(|&v| v < 1 << 15)
                    .ok_or_else(|| format!("winhi {n} exceeds 15 bits"))?,
            ),
            [] => return Err("empty TCP option in list".into()),
            _ => {
                return Err(format!(
                    "unsupported TCP option {:?} (supported: mss N, nop, eol, wscale N, sackOK, sack a:b, TS val X ecr Y, nakOK, nak S N, bigwin N, winhi N, FO [cookie], FOEXP [cookie], md5 HEX, ...)",
                    part.trim()
                ))
            }
        };
        out.push(opt);
    }
    Ok(OptionsSpec::List(out))
}

/// A token of a system-call line.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    Ellipsis,
    Punct(char),
}

/// Splits a system-call line into tokens.
fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '.' && c.get(i + 1) == Some(&'.') && c.get(i + 2) == Some(&'.') {
            out.push(Tok::Ellipsis);
            i += 3;
        } else if ch.is_ascii_alphabetic() || ch == '_' {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[st..i].iter().collect()));
        } else if ch.is_ascii_digit() {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let w: String = c[st..i].iter().collect();
            let v = parse_u64(&w)
                .and_then(|v| i64::try_from(v).ok())
                .ok_or_else(|| format!("bad number {w:?}"))?;
            out.push(Tok::Int(v));
        } else if ch == '"' {
            i += 1;
            let mut st = String::new();
            loop {
                match c.get(i) {
                    None => return Err("unterminated string".into()),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') if c.get(i + 1) == Some(&'x') => {
                        // `\xHH`: one byte, kept as the char of that value.
                        let hex: String = c.iter().skip(i + 2).take(2).collect();
                        let b = u8::from_str_radix(&hex, 16)
                            .map_err(|_| format!("bad \\x escape {hex:?} in a string"))?;
                        st.push(char::from(b));
                        i += 4;
                    }
                    Some('\\') => {
                        if let Some(n) = c.get(i + 1) {
                            st.push(match n {
                                'n' => '\n',
                                't' => '\t',
                                '0' => '\0',
                                o => *o,
                            });
                        }
                        i += 2;
                    }
                    Some(o) => {
                        st.push(*o);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Str(st));
        } else if "()[]{},=|-".contains(ch) {
            out.push(Tok::Punct(ch));
            i += 1;
        } else {
            return Err(format!("unexpected character {ch:?} in system call"));
        }
    }
    Ok(out)
}

/// Recursive-descent parser over system-call tokens.
struct P {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{c}' but found {}", self.describe()))
        }
    }
    fn describe(&self) -> String {
        match self.peek() {
            None => "end of line".into(),
            Some(Tok::Ident(s)) => format!("{s:?}"),
            Some(Tok::Int(v)) => format!("{v}"),
            Some(Tok::Str(s)) => format!("string {s:?}"),
            Some(Tok::Ellipsis) => "'...'".into(),
            Some(Tok::Punct(c)) => format!("'{c}'"),
        }
    }
    /// Comma-separated expressions up to `close`.
    fn list(&mut self, close: char) -> Result<Vec<Expr>, String> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(self.expr()?);
            if self.eat(close) {
                return Ok(v);
            }
            self.expect(',')?;
        }
    }
    fn expr(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let first = self.primary()?;
        let r = if self.peek() == Some(&Tok::Punct('|')) {
            let mut v = vec![first];
            while self.eat('|') {
                v.push(self.primary()?);
            }
            Ok(Expr::Or(v))
        } else {
            Ok(first)
        };
        self.depth -= 1;
        r
    }
    fn primary(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Tok::Ellipsis) => Ok(Expr::Ellipsis),
            Some(Tok::Int(v)) => Ok(Expr::Int(v)),
            Some(Tok::Punct('-')) => match self.next() {
                Some(Tok::Int(v)) => Ok(Expr::Int(-v)),
                _ => Err("expected a number after '-'".into()),
            },
            Some(Tok::Str(s)) => Ok(Expr::Str(s)),
            Some(Tok::Ident(name)) => {
                if self.eat('(') {
                    Ok(Expr::Call(name, self.list(')')?))
                } else {
                    Ok(Expr::Ident(name))
                }
            }
            Some(Tok::Punct('[')) => Ok(Expr::List(self.list(']')?)),
            Some(Tok::Punct('{')) => {
                let mut fields = Vec::new();
                if self.eat('}') {
                    return Ok(Expr::Struct(fields));
                }
                loop {
                    let e = self.expr()?;
                    if self.eat('=') {
                        let v = self.expr()?;
                        fields.push((Some(e), v));
                    } else {
                        fields.push((None, e));
                    }
                    if self.eat('}') {
                        return Ok(Expr::Struct(fields));
                    }
                    self.expect(',')?;
                }
            }
            Some(Tok::Punct(c)) => Err(format!("unexpected '{c}' in system call arguments")),
            None => Err("unexpected end of line in system call".into()),
        }
    }
}

/// Parses `name(args) = ret [ERRNO [(text)]]`.
fn parse_syscall(s: &str) -> Result<SyscallSpec, String> {
    let toks = tokenize(s)?;
    let mut p = P {
        toks,
        pos: 0,
        depth: 0,
    };
    let name = match p.next() {
        Some(Tok::Ident(n)) => n,
        _ => {
            let shown: String = s.chars().take(30).collect();
            return Err(format!(
                "expected a packet (< or >), a system call, a `command` or %{{ }}% after the time, found {shown:?}"
            ));
        }
    };
    p.expect('(')?;
    let args = p.list(')')?;
    if !p.eat('=') {
        return Err(format!(
            "system call {name}: expected '= <return value>' but found {}",
            p.describe()
        ));
    }
    let neg = p.eat('-');
    let ret = match p.next() {
        Some(Tok::Int(v)) => {
            if neg {
                -v
            } else {
                v
            }
        }
        _ => {
            return Err(format!(
                "system call {name}: expected a numeric return value"
            ))
        }
    };
    let mut errno = None;
    if let Some(Tok::Ident(e)) = p.peek().cloned() {
        p.pos += 1;
        errno = Some(e);
    }
    // A note after the value, `ENOENT (No such file)` or `0x2 (flags O_RDWR)`,
    // is a comment for the reader.
    if p.eat('(') {
        let mut d = 1;
        while d > 0 {
            match p.next() {
                None => return Err("unterminated description after the return value".into()),
                Some(Tok::Punct('(')) => d += 1,
                Some(Tok::Punct(')')) => d -= 1,
                _ => {}
            }
        }
    }
    if p.peek().is_some() {
        return Err(format!(
            "system call {name}: unexpected {} after the return value",
            p.describe()
        ));
    }
    if errno.is_some() && ret != -1 {
        return Err(format!(
            "system call {name}: an errno needs return value -1"
        ));
    }
    Ok(SyscallSpec {
        name,
        args,
        ret,
        errno,
    })
}

/// The 16 digest bytes of `md5 HEX` (RFC 2385 3.0: a 16-byte MD5 digest).
fn md5_digest(hex: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("md5 {hex}: expected 32 hex digits (a 16-byte digest)");
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_encapsulation_and_wire_sequence_numbers() {
        let p = parse_packet(Direction::Outbound, "R. 0:0(0)! ack 1 win 0/udp(9811 > 2)").unwrap();
        assert!(p.abs_seq && !p.any_seq);
        assert_eq!(p.udp, Some(UdpPorts { src: 9811, dst: 2 }));
        assert_eq!((p.ack, p.win), (Some(1), Some(0)));
        assert_eq!(p.to_string(), "R. 0:0(0)! ack 1 win 0/udp(9811 > 2)");
        let p = parse_packet(
            Direction::Inbound,
            "S 0:0(0) win 1 <mss 1452>/udp(1 > 9811)",
        )
        .unwrap();
        assert_eq!(p.options, Some(OptionsSpec::List(vec![OptSpec::Mss(1452)])));
        assert_eq!(p.udp, Some(UdpPorts { src: 1, dst: 9811 }));
        assert!(!p.abs_seq);
        let p = parse_packet(Direction::Outbound, ". 1:1(0) ack 2/udp(9811 > 1)").unwrap();
        assert_eq!((p.ack, p.udp.map(|u| u.dst)), (Some(2), Some(1)));
        for (bad, says) in [
            (". 1:1(0) ack 1/udp(9811 > 70000)", "destination port"),
            (". 1:1(0) ack 1/udp(x > 1)", "source port"),
            (". 1:1(0) ack 1/udp(9811 1)", "expected /udp(SRC > DST)"),
            (". 1:1(0) ack 1/udp(9811 > 1", "expected /udp(SRC > DST)"),
        ] {
            let e = parse_packet(Direction::Outbound, bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    fn one(s: &str) -> Event {
        let sc = parse_script(s, "t.pkt").unwrap();
        assert_eq!(sc.events.len(), 1, "{s}");
        sc.events.into_iter().next().unwrap()
    }

    #[test]
    fn an_option_list_longer_than_a_header_can_hold_is_refused() {
        let nops = |n: usize| vec!["nop"; n].join(",");
        let ok = format!("0 < . 1:1(0) ack 1 win 514 <{}>\n", nops(40));
        assert!(parse_script(&ok, "t.pkt").is_ok());
        // Forty million of them once ran the parser out of memory.
        let long = format!("0 < . 1:1(0) ack 1 win 514 <{}>\n", nops(1_000_000));
        let e = parse_script(&long, "t.pkt").unwrap_err();
        assert!(e.msg.contains("more than 40 TCP options"), "{e}");
    }

    #[test]
    fn md5_option_parses_to_its_digest_and_prints_back() {
        let line = "0 < . 1:1(0) ack 1 win 514 <md5 000102030405060708090a0b0c0d0e0f,nop,nop>\n";
        let EventKind::Packet(p) = one(line).kind else {
            panic!("not a packet")
        };
        let d: Vec<u8> = (0..16).collect();
        let Some(OptionsSpec::List(opts)) = &p.options else {
            panic!("no option list")
        };
        assert_eq!(opts[0], OptSpec::Md5(d));
        assert!(p
            .to_string()
            .contains("md5 000102030405060708090a0b0c0d0e0f"));
        let e = parse_script("0 < . 1:1(0) ack 1 win 514 <md5 0011>\n", "t.pkt").unwrap_err();
        assert!(e.to_string().contains("32 hex digits"), "{e}");
    }

    #[test]
    fn blocking_form_with_spaces_and_a_note_after_the_value() {
        let e = one("+.002 ... 0.004 send(4, ..., 10, 0) = 10");
        assert_eq!(e.time.start_us, 2_000);
        assert_eq!(e.time.block_end_us, Some(4_000));
        assert!(matches!(e.kind, EventKind::Syscall(_)));
        let e = one("+0 fcntl(3, F_GETFL) = 0x2 (flags O_RDWR)");
        let EventKind::Syscall(sc) = e.kind else {
            panic!("not a syscall")
        };
        assert_eq!((sc.ret, sc.errno), (2, None));
        assert!(parse_script("+0 fcntl(3, F_GETFL) = 0x2 (flags O_RDWR\n", "t").is_err());
    }

    #[test]
    fn times() {
        let e = one("+.1...0.200 read(4, ..., 2000) = 2000");
        assert_eq!(e.time.kind, TimeKind::Relative);
        assert_eq!(e.time.start_us, 100_000);
        assert_eq!(e.time.block_end_us, Some(200_000));
        let e = one("1.5~2 > . 1:1(0) ack 1");
        assert_eq!(e.time.kind, TimeKind::Absolute);
        assert_eq!(
            (e.time.start_us, e.time.range_end_us),
            (1_500_000, Some(2_000_000))
        );
        let e = one("+0.01~+0.02 > . 1:1(0) ack 1");
        assert_eq!(e.time.range_end_us, Some(20_000));
        assert_eq!(one("* > . 1:1(0) ack 1").time.kind, TimeKind::Any);
        assert!(parse_script("+0.1~2 > . 1:1(0) ack 1", "x").is_err());
    }

    #[test]
    fn ellipsis_and_absolute_sequence_ranges_and_ip_fields() {
        let e = one("+0 > S. ...(0) ack 65537 win 65535 <mss 1460>");
        let EventKind::Packet(p) = e.kind else {
            panic!("not a packet")
        };
        assert!(p.any_seq);
        assert_eq!((p.len, p.ack), (0, Some(65537)));
        assert_eq!(p.to_string(), "S. ...(0) ack 65537 win 65535 <mss 1460>");
        let EventKind::Packet(p) = one("+0 > (tos 0x20, ttl 4) R. 0:0(0)! ack 1 win 0").kind else {
            panic!("not a packet")
        };
        assert!(p.abs_seq && !p.any_seq);
        assert_eq!(p.to_string(), "(tos 0x20, ttl 4) R. 0:0(0)! ack 1 win 0");
        let EventKind::Packet(p) = one("+0 < (tos 0x2b) S 0:0(0) win 1").kind else {
            panic!("not a packet")
        };
        assert_eq!(
            p.ecn,
            Some(IpEcn::Ce),
            "an inbound TOS carries its ECN field"
        );
        let err = parse_script("0 > (tos 0x20) [ect0] S 0:0(0)\n", "t.pkt").unwrap_err();
        assert!(err.msg.contains("given twice"), "{}", err.msg);
        let err = parse_script("0 < S ...(0) win 100\n", "t.pkt").unwrap_err();
        assert!(err.msg.contains("only outbound"), "{}", err.msg);
        let err = parse_script("0 > S. ...(x) ack 1\n", "t.pkt").unwrap_err();
        assert!(err.msg.contains("payload length"), "{}", err.msg);
    }

    #[test]
    fn packets() {
        let e = one("+0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>");
        let EventKind::Packet(p) = e.kind else {
            panic!()
        };
        assert_eq!(p.dir, Direction::Inbound);
        assert_eq!(p.flags, flag::SYN);
        assert_eq!(p.win, Some(32792));
        assert_eq!(
            p.options,
            Some(OptionsSpec::List(vec![
                OptSpec::Mss(1000),
                OptSpec::SackOk,
                OptSpec::Nop,
                OptSpec::Nop,
                OptSpec::Nop,
                OptSpec::Wscale(7)
            ]))
        );
        let e = one("+0 > P. 1:1001(1000) ack 1 <nop,nop,TS val 100 ecr 7,sack 1:2 3:4>");
        let EventKind::Packet(p) = e.kind else {
            panic!()
        };
        assert_eq!(p.flags, flag::PSH | flag::ACK);
        assert_eq!((p.seq, p.len, p.ack), (1, 1000, Some(1)));
        assert_eq!(
            p.to_string(),
            "P. 1:1001(1000) ack 1 <nop,nop,TS val 100 ecr 7,sack 1:2 3:4>"
        );
        assert!(parse_script("+0 > P. 1:1001(999) ack 1", "x").is_err());
        // No `ack N` on an ACK-flagged segment means ack 0, as in packetdrill.
        let e = one("+0 < R. 11:11(0) win 257");
        let EventKind::Packet(p) = e.kind else {
            panic!()
        };
        assert_eq!(
            (p.flags, p.ack, p.win),
            (flag::RST | flag::ACK, Some(0), Some(257))
        );
        assert!(parse_script("+0 > S 0:0(0) ack 1", "x").is_err());
        let e = one("+0 > R 2:2(0)");
        let EventKind::Packet(p) = e.kind else {
            panic!()
        };
        assert_eq!(p.flags, flag::RST);
    }

    #[test]
    fn syscalls_and_skips() {
        let s = "--tolerance_usecs=10000\n`./defaults.sh`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3 // c\n\
+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n\
+0 sendmsg(4, {msg_name(...)=...,\n   msg_iov(2)=[{..., 10}, {..., 20}], msg_flags=0}, 0) = 30\n\
+0 %{ assert x == 1\n}%\n+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n\
+0 setsockopt(3, IPPROTO_TCP, TCP_TINYGRAM_SEND_POLICY, \"doupnik\", 7) = 0\n";
        let sc = parse_script(s, "t.pkt").unwrap();
        assert_eq!(sc.options[0].name, "tolerance_usecs");
        assert_eq!(sc.options[0].value.as_deref(), Some("10000"));
        let lines: Vec<usize> = sc.events.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3, 4, 5, 7, 9, 10]);
        assert!(matches!(sc.events[0].kind, EventKind::Command(_)));
        let EventKind::Syscall(c) = &sc.events[2].kind else {
            panic!()
        };
        assert_eq!((c.ret, c.errno.as_deref()), (-1, Some("EINPROGRESS")));
        let EventKind::Syscall(c) = &sc.events[3].kind else {
            panic!()
        };
        assert_eq!(c.name, "sendmsg");
        assert!(matches!(sc.events[4].kind, EventKind::Code(_)));
        let EventKind::Syscall(c) = &sc.events[6].kind else {
            panic!()
        };
        assert_eq!(c.args[3], Expr::Str("doupnik".into()));
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_script(
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\n+0 > Q 0:0(0)\n",
            "f.pkt",
        )
        .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().starts_with("f.pkt:3: parse error"), "{e}");
        let e = parse_script("0 write(3, ..., 10\n", "f.pkt").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
