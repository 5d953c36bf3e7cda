//! The memory a run will need, estimated from its scenario before anything
//! is allocated, so that a valid file asking for more than a machine has
//! (ten million flows, a billion outstanding requests) is refused with the
//! figure instead of ending in an allocation failure.
//!
//! The estimate counts what the scenario's numbers size: each connection
//! pair's state, the writes its applications queue at once, and the data
//! its send and receive buffers can hold. Checked against a counting
//! allocator in the crate's `footprint` test: it stays above the measured
//! peak of the runs there and within a small factor of it.

use crate::scenario::{HostConfig, Scenario, Workload};
use tinygram_proto::Connection;

/// The default `memory_limit`: runs estimated above it are refused.
pub const DEFAULT_LIMIT: u64 = 4 << 30;

/// Heap a connection pair's state takes besides the two engines and
/// applications themselves: the simulator's endpoint and flow records,
/// demultiplexer entries, scheduled events and wake-ups, and the small
/// allocations an idle connection keeps (measured with a counting allocator).
pub(crate) const PAIR_HEAP: u64 = 6_144;

/// One queued application write (`workload::Write`, rounded up) and one
/// recorded transaction start; a queue grows by doubling, so twice that.
const QUEUED_WRITE: u64 = 2 * 48;
const QUEUED_START: u64 = 2 * 16;

/// Per-packet overhead of buffered data beyond its bytes (segment records,
/// allocation rounding), as a multiplier of the bytes held.
const DATA_OVERHEAD: f64 = 1.25;

/// One contribution to a run's estimated memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The scenario key that sizes it (`"flows[1].count"`, `"workload.outstanding"`).
    pub key: String,
    /// What it is, for the error message.
    pub what: String,
    pub bytes: u64,
}

/// A run's estimated memory, by contribution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub parts: Vec<Part>,
}

impl Footprint {
    /// All contributions together.
    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .fold(0u64, |t, p| t.saturating_add(p.bytes))
    }

    /// The largest contribution: the key to name when refusing.
    pub fn largest(&self) -> Option<&Part> {
        self.parts.iter().max_by_key(|p| p.bytes)
    }

    /// One line: the total and each part, largest first.
    pub fn describe(&self) -> String {
        let mut parts: Vec<&Part> = self.parts.iter().filter(|p| p.bytes > 0).collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        let list: Vec<String> = parts
            .iter()
            .map(|p| match p.key.as_str() {
                "" => format!("{} for {}", size(p.bytes), p.what),
                key => format!("{} for {} ({key})", size(p.bytes), p.what),
            })
            .collect();
        format!("about {}: {}", size(self.total()), list.join(", "))
    }
}

/// A size for people, in binary units as `memory_limit` defaults: "112.6 GiB".
pub fn size(bytes: u64) -> String {
    for (scale, unit) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= scale {
            return format!("{:.1} {unit}", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes} B")
}

/// The memory `sc` is estimated to need when run.
pub fn estimate(sc: &Scenario) -> Footprint {
    let mut parts = Vec::new();
    match &sc.topology {
        None => pair_parts(&mut parts, 1, "", &sc.client, &sc.server, &sc.workload),
        Some(t) => {
            for (i, g) in t.groups.iter().enumerate() {
                let prefix = format!("flows[{}].", i + 1);
                pair_parts(
                    &mut parts,
                    u64::from(g.count),
                    &prefix,
                    &g.client,
                    &g.server,
                    &g.workload,
                );
            }
            if let Some(f) = &t.flood {
                flood_part(&mut parts, sc, t, f);
            }
        }
    }
    Footprint { parts }
}

/// The server connections a SYN flood opens (kept to the run's end, as
/// every connection is): one per SYN without a backlog; with one, at most
/// a backlog's worth per shortest SYN-RECEIVED life (one initial RTO).
fn flood_part(
    parts: &mut Vec<Part>,
    sc: &Scenario,
    t: &crate::scenario::Topology,
    f: &crate::flood::SynFlood,
) {
    let Some(g) = t
        .groups
        .iter()
        .find(|g| g.server_host == f.server_host && g.port == f.port)
    else {
        return;
    };
    let tcp = &g.server.tcp;
    let count = u64::from(f.count);
    let opened = match tcp.backlog {
        None => count,
        Some(b) => {
            let life = tcp.rto_initial.as_secs_f64().max(1e-3);
            let lives = 1.0 + sc.duration.as_secs_f64() / life;
            count.min((f64::from(b) * lives).min(u64::MAX as f64) as u64)
        }
    };
    let one = (std::mem::size_of::<Connection>() + std::mem::size_of::<crate::workload::App>())
        as u64
        + PAIR_HEAP / 2;
    parts.push(Part {
        key: "flood.count".into(),
        what: format!("{opened} connection(s) the flood opens, {} each", size(one)),
        bytes: opened.saturating_mul(one),
    });
}

/// The parts of `count` connection pairs with these hosts and workload;
/// `prefix` locates their keys (`"flows[2]."`, or `""` for a two-host file).
fn pair_parts(
    parts: &mut Vec<Part>,
    count: u64,
    prefix: &str,
    client: &HostConfig,
    server: &HostConfig,
    workload: &Workload,
) {
    let pair = 2
        * (std::mem::size_of::<Connection>() + std::mem::size_of::<crate::workload::App>()) as u64
        + PAIR_HEAP;
    // A two-host file has one pair: no key sizes it.
    let count_key = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}count")
    };
    parts.push(Part {
        key: count_key,
        what: format!("{count} connection pair(s) of {} each", size(pair)),
        bytes: count.saturating_mul(pair),
    });
    let (queued, queued_key) = queued_writes(workload);
    parts.push(Part {
        key: format!("{prefix}{queued_key}"),
        what: "application writes queued at once".into(),
        bytes: count.saturating_mul(queued),
    });
    let (c2s, s2c) = in_flight_data(workload);
    let held = |from: &HostConfig, to: &HostConfig, bytes: u64| -> u64 {
        let snd = bytes.min(from.tcp.snd_buf as u64);
        let rcv = bytes.min(to.tcp.granted_rcv_buf().0 as u64);
        ((snd + rcv) as f64 * DATA_OVERHEAD) as u64
    };
    let data = held(client, server, c2s).saturating_add(held(server, client, s2c));
    parts.push(Part {
        key: format!("{prefix}{}", buffer_key(workload)),
        what: "data held in send and receive buffers".into(),
        bytes: count.saturating_mul(data),
    });
}

/// Bytes of queued writes one pair's applications can hold at once, and the
/// workload key that sizes them.
fn queued_writes(w: &Workload) -> (u64, &'static str) {
    match w {
        Workload::RequestResponse {
            request,
            response,
            outstanding,
            requests,
            ..
        } => {
            let at_once = u64::from(*outstanding).min(requests.unwrap_or(u64::MAX));
            let writes = (request.len() + response.len()) as u64;
            (
                at_once.saturating_mul(writes.saturating_mul(QUEUED_WRITE) + QUEUED_START),
                "workload.outstanding",
            )
        }
        Workload::Exchanges { exchanges, .. } => {
            let most = exchanges
                .iter()
                .map(|e| (e.request.len() + e.response.len()) as u64)
                .max()
                .unwrap_or(0);
            (most * QUEUED_WRITE + QUEUED_START, "workload.exchanges")
        }
        Workload::Bulk { .. } | Workload::Interactive { .. } => (QUEUED_WRITE, "workload.type"),
    }
}

/// The most bytes each direction can have written but not yet read at
/// once: (client to server, server to client).
fn in_flight_data(w: &Workload) -> (u64, u64) {
    let sum = |v: &[usize]| v.iter().map(|&n| n as u64).sum::<u64>();
    match w {
        Workload::RequestResponse {
            request,
            response,
            outstanding,
            requests,
            ..
        } => {
            let at_once = u64::from(*outstanding).min(requests.unwrap_or(u64::MAX));
            (
                at_once.saturating_mul(sum(request)),
                at_once.saturating_mul(sum(response)),
            )
        }
        Workload::Exchanges { exchanges, .. } => (
            exchanges.iter().map(|e| sum(&e.request)).max().unwrap_or(0),
            exchanges
                .iter()
                .map(|e| sum(&e.response))
                .max()
                .unwrap_or(0),
        ),
        Workload::Bulk {
            bytes, direction, ..
        } => match direction {
            crate::scenario::Direction::ClientToServer => (*bytes, 0),
            crate::scenario::Direction::ServerToClient => (0, *bytes),
        },
        Workload::Interactive {
            keystrokes, size, ..
        } => (keystrokes.saturating_mul(*size as u64), 0),
    }
}

/// The key that sizes a workload's buffered data.
fn buffer_key(w: &Workload) -> &'static str {
    match w {
        Workload::RequestResponse { .. } => "workload.outstanding",
        Workload::Exchanges { .. } => "workload.exchanges",
        Workload::Bulk { .. } => "workload.bytes",
        Workload::Interactive { .. } => "workload.keystrokes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(text: &str) -> Footprint {
        estimate(&Scenario::from_str(text, "s.toml", &["memory_limit=\"none\"".into()]).unwrap())
    }

    #[test]
    fn flows_and_outstanding_scale_the_estimate() {
        let one = est("[bottleneck]\n[[flows]]\ncount = 10\n").total();
        let many = est("[bottleneck]\n[[flows]]\ncount = 1000\nclient_hosts = [\"a\"]\n").total();
        assert!(many > 90 * one && many < 110 * one, "{one} {many}");
        let o1 = est("[workload]\noutstanding = 1\n").total();
        let o2 = est("[workload]\noutstanding = 1000000\n");
        assert!(o2.total() > 100_000_000, "{}", o2.describe());
        assert_eq!(o2.largest().unwrap().key, "workload.outstanding");
        assert!(o1 < 20_000, "{o1}");
    }

    /// A flood opens a connection per SYN unless a backlog bounds them.
    #[test]
    fn a_flood_is_counted_by_the_connections_it_can_open() {
        let base = "[bottleneck]\n[[flows]]\ncount = 10\n[flood]\ncount = 10000000\n";
        let e = Scenario::from_str(base, "s.toml", &[]).unwrap_err();
        assert_eq!(e.key, "flood.count", "{e}");
        assert!(
            e.message.contains("10000000 connection(s) the flood opens"),
            "{e}"
        );
        let bounded = est(&format!("{base}[server]\nbacklog = 8\n"));
        let flood = bounded
            .parts
            .iter()
            .find(|p| p.key == "flood.count")
            .unwrap();
        assert!(
            flood.what.starts_with("488 connection(s)"),
            "{}",
            flood.what
        );
    }

    #[test]
    fn a_run_past_the_limit_is_refused_at_the_key_that_sizes_it() {
        let hosts: Vec<String> = (0..200).map(|i| format!("\"c{i}\"")).collect();
        let flows = &format!(
            "[bottleneck]\n[[flows]]\ncount = 10000000\nclient_hosts = [{}]\n",
            hosts.join(",")
        );
        let e = Scenario::from_str(flows, "s.toml", &[]).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("flows[1].count", Some(3)), "{e}");
        assert!(
            e.message.contains("107.5 GiB") && e.message.contains("memory_limit"),
            "{e}"
        );
        assert!(e.message.contains("10000000 connection pair(s)"), "{e}");
        let e = Scenario::from_str("[workload]\noutstanding = 1000000000\n", "s.toml", &[])
            .unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("workload.outstanding", Some(2)),
            "{e}"
        );
        assert!(e.message.contains("application writes queued"), "{e}");
        // Overridable both ways: a lower limit refuses less, "none" lifts it.
        let sets = |s: &str| vec![format!("memory_limit={s}")];
        let e = Scenario::from_str(
            "[workload]\noutstanding = 100000\n",
            "s.toml",
            &sets("\"1MiB\""),
        )
        .unwrap_err();
        assert!(
            e.message.contains("more than memory_limit (1.0 MiB)"),
            "{e}"
        );
        assert!(Scenario::from_str(flows, "s.toml", &sets("none")).is_ok());
        assert!(Scenario::from_str(flows, "s.toml", &sets("\"200GB\"")).is_ok());
        let e = Scenario::from_str("", "s.toml", &sets("\"lots\"")).unwrap_err();
        assert_eq!(e.key, "memory_limit", "{e}");
    }

    #[test]
    fn buffers_count_up_to_their_limits() {
        let small = est("[workload]\ntype = \"bulk\"\nbytes = \"1KB\"\n").total();
        let big =
            est("[workload]\ntype = \"bulk\"\nbytes = \"1GB\"\n[client]\nsnd_buf = \"100MB\"\n");
        assert!(big.total() > 100_000_000, "{}", big.describe());
        assert_eq!(big.largest().unwrap().key, "workload.bytes");
        assert!(small < 20_000, "{small}");
    }
}
