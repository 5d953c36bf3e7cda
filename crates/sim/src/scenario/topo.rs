//! Many connections in one scenario: the `[bottleneck]` table and the
//! `[[flows]]` tables (README, "Many flows"). A file with neither is the
//! two-host, one-link scenario it always was; with either, every connection
//! runs between named hosts, each with an access link (the `[link]`
//! settings), joined by one bottleneck link with its own queue discipline.

use super::{err, found, Doc, Entry, HostConfig, KeyDoc, ScenarioError, Workload, KEYS, TABLES};
use crate::flood::{SynFlood, MAX_FLOOD_SYNS};
use crate::qdisc::{QdiscConfig, QdiscKind};
use std::time::Duration;
use toml_edit::Value;

/// The bottleneck's keys (the `[bottleneck]` table).
pub const BOTTLENECK_KEYS: &[KeyDoc] = &[
    KeyDoc { key: "bottleneck.rate", default: "\"100Mbps\"", doc: "bottleneck serialization rate, each direction (many-flow scenarios)" },
    KeyDoc { key: "bottleneck.delay", default: "\"10ms\"", doc: "bottleneck one-way propagation delay" },
    KeyDoc { key: "bottleneck.queue", default: "\"256KB\"", doc: "bottleneck queue limit in wire bytes, the frame being sent excluded (0: unlimited)" },
    KeyDoc { key: "bottleneck.qdisc", default: "\"drop-tail\"", doc: "queue discipline: \"drop-tail\", \"codel\" (RFC 8289) or \"fq-codel\" (RFC 8290)" },
    KeyDoc { key: "bottleneck.target", default: "\"5ms\"", doc: "codel, fq-codel: acceptable standing queue delay (RFC 8289 4)" },
    KeyDoc { key: "bottleneck.interval", default: "\"100ms\"", doc: "codel, fq-codel: window the delay must stay above target before dropping, about a worst-case RTT (RFC 8289 4)" },
    KeyDoc { key: "bottleneck.ecn", default: "false", doc: "codel, fq-codel: mark ECN-capable (ECT) packets CE instead of dropping them (RFC 3168 5)" },
    KeyDoc { key: "bottleneck.quantum", default: "1514", doc: "fq-codel: bytes each flow queue may send per round (RFC 8290 4)" },
    KeyDoc { key: "bottleneck.flows", default: "1024", doc: "fq-codel: number of flow queues (RFC 8290 4)" },
];

/// The SYN flood's keys (the `[flood]` table; see [`crate::flood`]).
pub const FLOOD_KEYS: &[KeyDoc] = &[
    KeyDoc { key: "flood.count", default: "0", doc: "SYNs from spoofed sources that never answer (RFC 4987 2) against a many-flow server's listening port; 0: no flood" },
    KeyDoc { key: "flood.server_host", default: "\"server\"", doc: "the server host flooded (a [[flows]] server_host)" },
    KeyDoc { key: "flood.port", default: "7", doc: "its listening port" },
    KeyDoc { key: "flood.start", default: "\"0s\"", doc: "when the first SYN reaches the bottleneck" },
    KeyDoc { key: "flood.interval", default: "\"1ms\"", doc: "gap between SYNs" },
    KeyDoc { key: "flood.sources", default: "1000", doc: "distinct spoofed source addresses, used in turn" },
];

/// Keys of one `[[flows]]` table besides its `client.*`, `server.*` and `workload.*` settings.
pub const FLOW_KEYS: &[KeyDoc] = &[
    KeyDoc { key: "flows.name", default: "\"flows-N\" (N = table number from 1)", doc: "label of this group of connections in results" },
    KeyDoc { key: "flows.count", default: "1", doc: "connections in this group" },
    KeyDoc { key: "flows.client_hosts", default: "\"client\"", doc: "client host name, or a list of names the connections are spread over round-robin (at most 64,512 connections per client host and server)" },
    KeyDoc { key: "flows.server_host", default: "\"server\"", doc: "server host name; it accepts every connection of the group on one listening port" },
    KeyDoc { key: "flows.port", default: "7", doc: "the server's listening port" },
    KeyDoc { key: "flows.start", default: "\"0s\"", doc: "when the group's first connection opens" },
    KeyDoc { key: "flows.spread", default: "\"none\"", doc: "how later connections open: \"none\" (all at start), \"uniform\" (every interval) or \"exponential\" (random gaps of mean interval, from the run's seed)" },
    KeyDoc { key: "flows.interval", default: "\"1ms\"", doc: "uniform: gap between connection opens; exponential: mean gap" },
    KeyDoc { key: "flows.client.*, flows.server.*, flows.workload.*", default: "the file's [client], [server], [workload]", doc: "this group's host settings and workload, applied over the file's own tables" },
];

/// When the connections of a group open.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spread {
    /// All at the group's start.
    None,
    /// One every `interval`.
    Uniform(Duration),
    /// Poisson arrivals: exponentially distributed gaps of this mean.
    Exponential(Duration),
}

/// The shared link of a dumbbell: each direction has this rate, delay and queue.
#[derive(Clone, Debug, PartialEq)]
pub struct BottleneckConfig {
    pub rate_bps: f64,
    pub delay: Duration,
    pub qdisc: QdiscConfig,
}

impl Default for BottleneckConfig {
    fn default() -> Self {
        BottleneckConfig {
            rate_bps: 100e6,
            delay: Duration::from_millis(10),
            qdisc: QdiscConfig::default(),
        }
    }
}

/// One `[[flows]]` table: `count` connections sharing settings and a workload.
#[derive(Clone, Debug)]
pub struct FlowGroup {
    pub name: String,
    pub count: u32,
    pub client_hosts: Vec<String>,
    pub server_host: String,
    pub port: u16,
    pub start: Duration,
    pub spread: Spread,
    pub client: HostConfig,
    pub server: HostConfig,
    pub workload: Workload,
}

/// Hosts, bottleneck and connections of a many-flow scenario.
#[derive(Clone, Debug)]
pub struct Topology {
    pub bottleneck: BottleneckConfig,
    pub groups: Vec<FlowGroup>,
    /// A SYN flood against one of the servers (`[flood]`), if any.
    pub flood: Option<SynFlood>,
}

impl Topology {
    /// Connections in all groups.
    pub fn connections(&self) -> u64 {
        self.groups.iter().map(|g| u64::from(g.count)).sum()
    }
}

/// Flow-table keys that are not host or workload settings.
const FLOW_LEAVES: &[&str] = &[
    "name",
    "count",
    "client_hosts",
    "server_host",
    "port",
    "start",
    "spread",
    "interval",
];

/// The most connections one client host can open to one server port.
pub const PORTS_PER_HOST: u32 = 65_535 - 1024 + 1;

/// One `[[flows]]` table as parsed: its header line and flattened entries.
#[derive(Clone, Debug)]
pub(super) struct FlowTable {
    pub line: Option<usize>,
    pub entries: Vec<Entry>,
}

impl Doc {
    fn flow_key(i: usize, key: &str) -> String {
        format!("flows[{}].{key}", i + 1)
    }

    /// An error about key `key` of flow table `i`, at its line.
    fn flow_fail(&self, i: usize, e: &Entry, message: impl Into<String>) -> ScenarioError {
        let mut x = self.fail(e, message);
        x.key = Self::flow_key(i, &e.key);
        x
    }

    /// `bottleneck.ecn`: a boolean.
    pub(super) fn boolean(&self, key: &str) -> Result<Option<bool>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        match &e.value {
            Value::Boolean(b) => Ok(Some(*b.value())),
            v => Err(self.fail(e, format!("expected true or false, {}", found(v)))),
        }
    }

    fn bottleneck(&self) -> Result<BottleneckConfig, ScenarioError> {
        let mut b = BottleneckConfig::default();
        if let Some(v) = self.rate("bottleneck.rate")? {
            b.rate_bps = v;
        }
        if let Some(v) = self.duration("bottleneck.delay")? {
            b.delay = v;
        }
        let q = &mut b.qdisc;
        if let Some(v) = self.usize_size("bottleneck.queue")? {
            q.limit_bytes = v;
        }
        if let Some((e, s)) = self.string("bottleneck.qdisc")? {
            q.kind = s.parse::<QdiscKind>().map_err(|m| self.fail(e, m))?;
        }
        if let Some(v) = self.duration("bottleneck.target")? {
            if v.is_zero() {
                return Err(self.at_key("bottleneck.target", "must be positive"));
            }
            q.target = v;
        }
        if let Some(v) = self.duration("bottleneck.interval")? {
            if v.is_zero() {
                return Err(self.at_key("bottleneck.interval", "must be positive"));
            }
            q.interval = v;
        }
        if let Some(v) = self.boolean("bottleneck.ecn")? {
            q.ecn = v;
        }
        if let Some(v) = self.uint("bottleneck.quantum", 64, 1 << 20)? {
            q.quantum = v as usize;
        }
        if let Some(v) = self.uint("bottleneck.flows", 1, 65_536)? {
            q.flows = v as usize;
        }
        let aqm_only = ["target", "interval", "ecn"];
        let fq_only = ["quantum", "flows"];
        for (keys, ok, what) in [
            (
                &aqm_only[..],
                q.kind != QdiscKind::DropTail,
                "codel or fq-codel",
            ),
            (&fq_only[..], q.kind == QdiscKind::FqCodel, "fq-codel"),
        ] {
            for k in keys {
                let key = format!("bottleneck.{k}");
                if let (Some(e), false) = (self.get(&key), ok) {
                    return Err(self.fail(
                        e,
                        format!(
                            "applies only to qdisc {what} (bottleneck.qdisc is {:?})",
                            q.kind.name()
                        ),
                    ));
                }
            }
        }
        Ok(b)
    }

    /// The file's entries with flow table `i`'s settings applied over them, as a document.
    fn flow_doc(&self, t: &FlowTable) -> Doc {
        let own: Vec<&Entry> = t
            .entries
            .iter()
            .filter(|e| !FLOW_LEAVES.contains(&e.key.as_str()))
            .collect();
        let new_type = own.iter().any(|e| e.key == "workload.type");
        let mut entries: Vec<Entry> = self
            .entries
            .iter()
            .filter(|e| !own.iter().any(|o| o.key == e.key))
            .filter(|e| !(new_type && e.key.starts_with("workload.")))
            .cloned()
            .collect();
        entries.extend(own.into_iter().cloned());
        Doc {
            origin: self.origin.clone(),
            lines: self.lines.clone(),
            entries,
            flows: Vec::new(),
        }
    }

    /// Host names: one string or a non-empty list of strings.
    fn names(&self, i: usize, e: &Entry) -> Result<Vec<String>, ScenarioError> {
        let items: Vec<&Value> = match &e.value {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        let mut out = Vec::new();
        for v in items {
            match v.as_str() {
                Some(s) if !s.trim().is_empty() => out.push(s.to_string()),
                _ => {
                    return Err(self.flow_fail(
                        i,
                        e,
                        format!("expected a host name or a list of host names, {}", found(v)),
                    ))
                }
            }
        }
        if out.is_empty() {
            return Err(self.flow_fail(i, e, "must name at least one host"));
        }
        Ok(out)
    }

    fn flow_group(&self, i: usize, t: &FlowTable) -> Result<FlowGroup, ScenarioError> {
        // Flow-level leaves are read from a document of the table alone.
        let table = Doc {
            origin: self.origin.clone(),
            lines: self.lines.clone(),
            entries: t.entries.clone(),
            flows: Vec::new(),
        };
        let rename = |mut x: ScenarioError| {
            if !x.key.is_empty() && !x.key.starts_with("flows[") {
                x.key = Self::flow_key(i, &x.key);
            }
            if x.line.is_none() {
                x.line = t.line;
            }
            x
        };
        for e in &t.entries {
            let known = FLOW_LEAVES.contains(&e.key.as_str())
                || (["client.", "server.", "workload."]
                    .iter()
                    .any(|p| e.key.starts_with(p))
                    && KEYS.iter().any(|k| k.key == e.key));
            if !known {
                let hint = if TABLES.contains(&e.key.split('.').next().unwrap_or(""))
                    || e.key.contains('.')
                {
                    "unknown key in [[flows]] (a flow table holds name, count, client_hosts, server_host, port, start, spread, interval, and client.*, server.*, workload.* settings)".to_string()
                } else {
                    format!(
                        "unknown key in [[flows]]{} (keys: {})",
                        tinygram_proto::suggest::did_you_mean(&e.key, FLOW_LEAVES.iter().copied()),
                        FLOW_LEAVES.join(", ")
                    )
                };
                return Err(self.flow_fail(i, e, hint));
            }
        }
        let name = table
            .string("name")
            .map_err(rename)?
            .map(|(_, s)| s)
            .unwrap_or_else(|| format!("flows-{}", i + 1));
        let count = table
            .uint("count", 1, 10_000_000)
            .map_err(rename)?
            .unwrap_or(1) as u32;
        let client_hosts = match table.get("client_hosts") {
            Some(e) => self.names(i, e)?,
            None => vec!["client".to_string()],
        };
        let server_host = match table.string("server_host").map_err(rename)? {
            Some((e, s)) if s.trim().is_empty() => {
                return Err(self.flow_fail(i, e, "must name a host"));
            }
            Some((_, s)) => s,
            None => "server".to_string(),
        };
        if let Some(e) = table.get("server_host") {
            if client_hosts.contains(&server_host) {
                return Err(self.flow_fail(
                    i,
                    e,
                    format!("{server_host:?} is also a client host of this group: a connection needs two hosts"),
                ));
            }
        }
        let port = table.uint("port", 1, 65_535).map_err(rename)?.unwrap_or(7) as u16;
        let start = table
            .duration("start")
            .map_err(rename)?
            .unwrap_or(Duration::ZERO);
        let interval = table
            .duration("interval")
            .map_err(rename)?
            .unwrap_or(Duration::from_millis(1));
        let spread = match table.string("spread").map_err(rename)? {
            None => Spread::None,
            Some((_, s)) if s == "none" => Spread::None,
            Some((_, s)) if s == "uniform" => Spread::Uniform(interval),
            Some((_, s)) if s == "exponential" => Spread::Exponential(interval),
            Some((e, s)) => {
                return Err(self.flow_fail(
                    i,
                    e,
                    format!(
                    "unknown spread {s:?}{} (expected \"none\", \"uniform\" or \"exponential\")",
                    tinygram_proto::suggest::did_you_mean(&s, ["none", "uniform", "exponential"])
                ),
                ))
            }
        };
        if let (Some(e), Spread::None) = (table.get("interval"), spread) {
            return Err(self.flow_fail(
                i,
                e,
                "applies only with spread = \"uniform\" or \"exponential\"",
            ));
        }
        let per_host = count.div_ceil(client_hosts.len() as u32);
        if per_host > PORTS_PER_HOST {
            let e = table
                .get("count")
                .expect("count set when above the port range");
            return Err(self.flow_fail(
                i,
                e,
                format!(
                    "{count} connections over {} client host(s) need {per_host} ports on one host, more than its {PORTS_PER_HOST}; list more hosts in client_hosts",
                    client_hosts.len()
                ),
            ));
        }
        let doc = self.flow_doc(t);
        let wtype = match doc.string("workload.type").map_err(rename)? {
            Some((_, s)) => s,
            None => "request-response".to_string(),
        };
        doc.check_keys(&wtype).map_err(rename)?;
        Ok(FlowGroup {
            name,
            count,
            client_hosts,
            server_host,
            port,
            start,
            spread,
            client: doc.host("client").map_err(rename)?,
            server: doc.host("server").map_err(rename)?,
            workload: doc.workload(&wtype).map_err(rename)?,
        })
    }

    /// The many-flow topology, if the file has a `[bottleneck]` or `[[flows]]`;
    /// `base` is the file's own two-host scenario (one group of one flow when
    /// the file has a bottleneck but no flow tables).
    pub(super) fn topology(
        &self,
        base: &super::Scenario,
    ) -> Result<Option<Topology>, ScenarioError> {
        let has_bottleneck = self
            .entries
            .iter()
            .any(|e| e.key.starts_with("bottleneck."));
        let flood = self.flood()?;
        if self.flows.is_empty() && !has_bottleneck {
            if flood.is_some() {
                return Err(self.at_key(
                    "flood.count",
                    "a flood needs a many-flow scenario: add a [bottleneck] or [[flows]] table",
                ));
            }
            return Ok(None);
        }
        let bottleneck = self.bottleneck()?;
        let mut groups = Vec::new();
        if self.flows.is_empty() {
            groups.push(FlowGroup {
                name: "flows-1".to_string(),
                count: 1,
                client_hosts: vec!["client".to_string()],
                server_host: "server".to_string(),
                port: 7,
                start: Duration::ZERO,
                spread: Spread::None,
                client: base.client.clone(),
                server: base.server.clone(),
                workload: base.workload.clone(),
            });
        }
        for (i, t) in self.flows.iter().enumerate() {
            groups.push(self.flow_group(i, t)?);
        }
        // Every (client host, server host, port) pair has one port range.
        let mut used: std::collections::HashMap<(&str, &str, u16), u64> = Default::default();
        for (i, g) in groups.iter().enumerate() {
            let n = g.client_hosts.len() as u64;
            for (k, h) in g.client_hosts.iter().enumerate() {
                let share = u64::from(g.count) / n + u64::from((k as u64) < u64::from(g.count) % n);
                let total = used.entry((h, &g.server_host, g.port)).or_default();
                *total += share;
                if *total > u64::from(PORTS_PER_HOST) {
                    return Err(err(
                        &self.origin,
                        self.flows.get(i).and_then(|t| t.line),
                        &Self::flow_key(i, "count"),
                        format!(
                            "client host {h:?} would open {total} connections to {}:{}, more than its {PORTS_PER_HOST} ports; list more hosts in client_hosts",
                            g.server_host, g.port
                        ),
                    ));
                }
            }
            let frame = crate::link::Link::new(base.forward.clone())
                .wire_len(20 + 20 + usize::from(g.client.tcp.mss.min(g.server.tcp.mss)));
            let limit = bottleneck.qdisc.limit_bytes;
            if limit > 0 && limit < frame {
                return Err(self.at_key(
                    "bottleneck.queue",
                    format!("{limit} bytes cannot hold one full-sized frame ({frame} wire bytes), so every full segment would be dropped; use at least {frame}, or 0 for unlimited"),
                ));
            }
        }
        for (i, g) in groups.iter().enumerate() {
            for (side, h) in [("client", &g.client), ("server", &g.server)] {
                if !h.rx_coalesce.is_zero() {
                    let key = format!("{side}.rx_coalesce");
                    let mut e = self.at_key(&key, "receive coalescing is not modelled in many-flow scenarios yet; leave it at 0");
                    if let Some(t) = self
                        .flows
                        .get(i)
                        .filter(|t| t.entries.iter().any(|e| e.key == key))
                    {
                        e.key = Self::flow_key(i, &key);
                        e.line = t.line;
                    }
                    return Err(e);
                }
            }
        }
        if let Some(f) = &flood {
            if !groups
                .iter()
                .any(|g| g.server_host == f.server_host && g.port == f.port)
            {
                return Err(self.at_key(
                    "flood.server_host",
                    format!(
                        "no [[flows]] server {:?} listens on port {} to flood",
                        f.server_host, f.port
                    ),
                ));
            }
        }
        Ok(Some(Topology {
            bottleneck,
            groups,
            flood,
        }))
    }

    /// The `[flood]` table, if it sends any SYN.
    fn flood(&self) -> Result<Option<SynFlood>, ScenarioError> {
        let count = self
            .uint("flood.count", 0, u64::from(MAX_FLOOD_SYNS))?
            .unwrap_or(0) as u32;
        if count == 0 {
            return Ok(None);
        }
        Ok(Some(SynFlood {
            server_host: self
                .string("flood.server_host")?
                .map_or_else(|| "server".to_string(), |(_, s)| s),
            port: self.uint("flood.port", 1, 65535)?.unwrap_or(7) as u16,
            start: self.duration("flood.start")?.unwrap_or(Duration::ZERO),
            interval: self
                .duration("flood.interval")?
                .unwrap_or(Duration::from_millis(1)),
            count,
            sources: self
                .uint(
                    "flood.sources",
                    1,
                    u64::from(crate::flood::SPOOFED_SOURCES - 1),
                )?
                .unwrap_or(1000) as u32,
        }))
    }
}
