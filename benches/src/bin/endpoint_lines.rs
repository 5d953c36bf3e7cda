//! Reads valgrind lackey's memory trace of `tinygram bench sim --flows N
//! --memory-layout` (with the program's stderr in the same stream) and counts
//! what each event touches of its endpoint: the cache lines and bytes of the
//! endpoint table (application and engine state, heap buffers aside) between
//! two writes of the event counter, and of those lines the ones read. `benches/endpoint-lines.sh` runs it.
//!
//! Prints the endpoint events, the mean lines and bytes per endpoint event
//! (and of them the lines of the endpoint the event touched most, its own),
//! the endpoints per event, the lines per segment, and how often each
//! 64-byte part of an endpoint is touched (the hot parts a compact
//! common-case block would hold; `ENDPOINT_LINES_GRANULE` sets another size).

use std::io::{self, BufRead, Write};

/// Bytes per cache line.
const LINE: usize = 64;

/// The addresses `--memory-layout` printed.
struct Layout {
    start: usize,
    end: usize,
    size: usize,
    counter: usize,
}

/// The event being read: each touched line with a mask of its touched bytes,
/// and which 64-byte parts of an endpoint (offset within it / 64) it touched.
#[derive(Default)]
struct Event {
    lines: Vec<(usize, u64)>,
    /// Lines read (a load, or the load of a modify), a subset of `lines`.
    read: Vec<usize>,
    parts: Vec<usize>,
    /// The endpoints (index in the table) it touched.
    endpoints: Vec<usize>,
    /// The endpoint each of `lines` belongs to (where it was first touched).
    line_eps: Vec<usize>,
}

#[derive(Default)]
struct Totals {
    events: u64,
    endpoint_events: u64,
    lines: u64,
    read_lines: u64,
    bytes: u64,
    /// Endpoint events that touched each 64-byte part of an endpoint.
    parts: Vec<u64>,
    /// Endpoints touched, summed over endpoint events.
    endpoints: u64,
    /// Lines of the endpoint each event touched most (its own: the others
    /// are read ahead, such as the next event's pointers to prefetch).
    own_lines: u64,
}

impl Totals {
    fn finish(&mut self, ev: &mut Event) {
        self.events += 1;
        if !ev.lines.is_empty() {
            self.endpoint_events += 1;
            self.lines += ev.lines.len() as u64;
            self.read_lines += ev.read.len() as u64;
            self.bytes += ev
                .lines
                .iter()
                .map(|&(_, m)| u64::from(m.count_ones()))
                .sum::<u64>();
            for &p in &ev.parts {
                self.parts[p] += 1;
            }
            self.endpoints += ev.endpoints.len() as u64;
            let own = ev
                .endpoints
                .iter()
                .map(|e| ev.line_eps.iter().filter(|&x| x == e).count())
                .max()
                .unwrap_or(0);
            self.own_lines += own as u64;
        }
        ev.lines.clear();
        ev.read.clear();
        ev.parts.clear();
        ev.endpoints.clear();
        ev.line_eps.clear();
    }
}

impl Event {
    /// Records `len` bytes read (`read`) or written at `addr`, inside the
    /// endpoint table (the caller clips an access to it).
    fn touch(&mut self, l: &Layout, addr: usize, len: usize, read: bool) {
        let last = addr + len.max(1) - 1;
        for line in addr / LINE..=last / LINE {
            let lo = (line * LINE).max(addr) - line * LINE;
            let hi = ((line + 1) * LINE - 1).min(last) - line * LINE;
            let mask = if hi - lo == 63 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo + 1)) - 1) << lo
            };
            match self.lines.iter_mut().find(|(n, _)| *n == line) {
                Some((_, m)) => *m |= mask,
                None => {
                    self.lines.push((line, mask));
                    let first = (line * LINE).max(addr);
                    self.line_eps.push((first - l.start) / l.size);
                }
            }
            if read && !self.read.contains(&line) {
                self.read.push(line);
            }
        }
        let g = granule();
        for a in (addr..=last).step_by(g).chain([last]) {
            let endpoint = (a - l.start) / l.size;
            if !self.endpoints.contains(&endpoint) {
                self.endpoints.push(endpoint);
            }
            let part = (a - l.start) % l.size / g;
            if !self.parts.contains(&part) {
                self.parts.push(part);
            }
        }
    }
}

/// The part size for the histogram: 64 bytes, or `ENDPOINT_LINES_GRANULE`
/// (e.g. 8, to see which fields of a line are touched).
fn granule() -> usize {
    static G: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *G.get_or_init(|| {
        std::env::var("ENDPOINT_LINES_GRANULE")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&g: &usize| g > 0)
            .unwrap_or(LINE)
    })
}

/// `0x1f` or `1f` as a number.
fn hex(s: &str) -> Option<usize> {
    usize::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

fn parse_layout(line: &str) -> Option<Layout> {
    let w: Vec<&str> = line.split_whitespace().collect();
    match w.as_slice() {
        ["tinygram-layout", "endpoints", start, end, "size", size, "events", counter] => {
            Some(Layout {
                start: hex(start)?,
                end: hex(end)?,
                size: size.parse().ok().filter(|&s: &usize| s > 0)?,
                counter: hex(counter)?,
            })
        }
        _ => None,
    }
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut layout: Option<Layout> = None;
    let mut segments: Option<u64> = None;
    let mut totals = Totals::default();
    let mut ev = Event::default();
    let mut started = false;
    for line in stdin.lock().lines() {
        let line = line?;
        let b = line.as_bytes();
        // Data accesses: " L addr,size", " S addr,size", " M addr,size".
        if b.len() > 3 && b[0] == b' ' && matches!(b[1], b'L' | b'S' | b'M') && b[2] == b' ' {
            let Some(l) = layout.as_ref() else { continue };
            let Some((a, n)) = line[3..].split_once(',') else {
                continue;
            };
            let (Some(addr), Ok(len)) = (hex(a), n.parse::<usize>()) else {
                continue;
            };
            if addr == l.counter && b[1] != b'L' {
                if started {
                    totals.finish(&mut ev);
                }
                started = true;
            } else if started && addr < l.end && addr + len > l.start {
                let (from, to) = (addr.max(l.start), (addr + len).min(l.end));
                ev.touch(l, from, to - from, b[1] != b'S');
            }
            continue;
        }
        if let Some(l) = parse_layout(&line) {
            totals.parts = vec![0; l.size.div_ceil(granule()) + 1];
            layout = Some(l);
        } else if let Some(rest) = line.strip_prefix("tinygram-layout segments ") {
            segments = rest.split_whitespace().next().and_then(|s| s.parse().ok());
            if rest.contains("integrity FAILED") {
                eprintln!("error: the traced run failed its integrity check");
                std::process::exit(1);
            }
        }
    }
    if started {
        totals.finish(&mut ev);
    }
    let (Some(l), Some(segments)) = (layout, segments) else {
        eprintln!("error: no `tinygram-layout` lines in the input: run `tinygram bench sim --flows N --memory-layout` under valgrind --tool=lackey --trace-mem=yes, its log and stderr together");
        std::process::exit(2);
    };
    let n = totals.endpoint_events.max(1) as f64;
    let mut out = io::stdout().lock();
    writeln!(out, "events                      {}", totals.events)?;
    writeln!(
        out,
        "endpoint events             {}",
        totals.endpoint_events
    )?;
    writeln!(out, "segments                    {segments}")?;
    writeln!(
        out,
        "lines per endpoint event    {:.1}",
        totals.lines as f64 / n
    )?;
    writeln!(
        out,
        "  of them read              {:.1}",
        totals.read_lines as f64 / n
    )?;
    writeln!(
        out,
        "  of its own endpoint        {:.1}",
        totals.own_lines as f64 / n
    )?;
    writeln!(
        out,
        "endpoints per endpoint event {:.2}",
        totals.endpoints as f64 / n
    )?;
    writeln!(
        out,
        "bytes per endpoint event    {:.0}",
        totals.bytes as f64 / n
    )?;
    writeln!(
        out,
        "endpoint events per segment {:.2}",
        totals.endpoint_events as f64 / segments.max(1) as f64
    )?;
    writeln!(
        out,
        "lines per segment           {:.1}",
        totals.lines as f64 / segments.max(1) as f64
    )?;
    writeln!(
        out,
        "endpoint size {} bytes; share of endpoint events touching each {}-byte part (offset: share):",
        l.size,
        granule()
    )?;
    for (p, &c) in totals.parts.iter().enumerate() {
        if c > 0 {
            writeln!(out, "  {:5}: {:5.1} %", p * granule(), 100.0 * c as f64 / n)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            start: 0x1000,
            end: 0x1000 + 3 * 200,
            size: 200,
            counter: 0x10,
        }
    }

    #[test]
    fn reads_the_layout_line() {
        let l = parse_layout("tinygram-layout endpoints 0x1000 0x1258 size 200 events 0x10")
            .expect("parsed");
        assert_eq!(
            (l.start, l.end, l.size, l.counter),
            (0x1000, 0x1258, 200, 0x10)
        );
        assert!(
            parse_layout("tinygram-layout endpoints 0x1000 0x1258 size 0 events 0x10").is_none()
        );
        assert!(parse_layout("tinygram-layout segments 5 events 9 integrity ok").is_none());
    }

    /// An access across a line boundary counts both lines and only its bytes;
    /// a write is not a read; parts are offsets within the endpoint.
    #[test]
    fn counts_lines_bytes_and_parts() {
        let l = layout();
        let mut ev = Event::default();
        ev.touch(&l, 0x1000 + 60, 8, true);
        ev.touch(&l, 0x1000 + 62, 2, false);
        ev.touch(&l, 0x1000 + 200 + 5, 4, false);
        assert_eq!(ev.lines.len(), 3);
        let mut t = Totals {
            parts: vec![0; 5],
            ..Totals::default()
        };
        t.finish(&mut ev);
        assert_eq!(
            (t.endpoint_events, t.lines, t.read_lines, t.bytes),
            (1, 3, 2, 12)
        );
        // Two endpoints; the first, with two lines, is the event's own.
        assert_eq!((t.endpoints, t.own_lines), (2, 2));
        // 60..68 is in part 0 and part 1; 205 is part 0 of the second endpoint.
        assert_eq!(t.parts, vec![1, 1, 0, 0, 0]);
        // An event that touches no endpoint is counted as an event only.
        t.finish(&mut ev);
        assert_eq!((t.events, t.endpoint_events), (2, 1));
    }
}
