//! Scenario files: the TOML user interface of `tinygram run` (README,
//! "Scenario files"). Every key has a default; every unknown key, wrong type or
//! bad value is an error naming the file, the line and the full dotted key.
//!
//! Reading goes in three steps: the document is parsed with `toml_edit` (which
//! keeps spans, hence line numbers) and flattened to dotted keys; `--set`
//! overrides replace keys of that flat list; then every key is checked and
//! converted, and each host's [`Config`] is validated.
//!
//! An override's VALUE is TOML (`[18225]`, `"10Mbps"`, `{ rate = "1Mbps" }`),
//! or a bare string when it does not parse as TOML (`nodelay`). Like a TOML
//! assignment, it replaces the key and everything below it: `--set
//! link={rate="1Mbps"}` drops the file's other `link.*` keys.

use crate::link::{Link, LinkConfig};
use crate::units::{fmt_duration, fmt_rate, fmt_size, parse_duration, parse_rate, parse_size};
use std::fmt;
use std::path::Path;
use std::time::Duration;
use tinygram_proto::settings::{self, Kind, Setting, Value as SettingValue};
use tinygram_proto::suggest::did_you_mean;
use tinygram_proto::wire::{IPV4_HEADER_LEN, TCP_HEADER_LEN};
use tinygram_proto::Config;
use toml_edit::{ImDocument, Item, Key, TableLike, Value};

mod topo;
pub use topo::{
    BottleneckConfig, FlowGroup, Spread, Topology, BOTTLENECK_KEYS, FLOOD_KEYS, FLOW_KEYS,
    PORTS_PER_HOST,
};

/// The top-level table of values a scenario leaves open (ranges or
/// distributions), read by the run library rather than by [`Scenario`].
pub const OPEN_TABLE: &str = "open";

/// A complete, validated experiment: a two-host network, its hosts and what they do.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Label for reports; defaults to the file name without extension.
    pub name: String,
    /// Seed of the simulation's only random number generator.
    pub seed: u64,
    /// Simulated-time cap.
    pub duration: Duration,
    /// The client-to-server direction.
    pub forward: LinkConfig,
    /// The server-to-client direction.
    pub reverse: LinkConfig,
    pub client: HostConfig,
    pub server: HostConfig,
    pub workload: Workload,
    /// Many connections over a shared bottleneck (`[bottleneck]`, `[[flows]]`);
    /// `None`: the two hosts and one link above.
    pub topology: Option<Topology>,
}

/// One host: its TCP settings and, optionally, a fixed initial sequence number.
#[derive(Clone, Debug)]
pub struct HostConfig {
    pub tcp: Config,
    /// The stack profile `tcp` started from (`tinygram profiles`); "rfc" by default.
    pub profile: &'static str,
    /// Initial sequence number; `None` lets the simulator choose (from the seed).
    pub isn: Option<u32>,
    /// The host's memory for receive buffers, shared by its connections (RFC 1106 5).
    pub memory: Option<usize>,
    /// Receive coalescing interval (NIC interrupt moderation + GRO); zero: off.
    pub rx_coalesce: Duration,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            tcp: Config::default(),
            profile: tinygram_proto::profile::RFC.name,
            isn: None,
            memory: None,
            rx_coalesce: Duration::ZERO,
        }
    }
}

/// Which way bulk data flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Direction {
    #[default]
    ClientToServer,
    ServerToClient,
}

impl Direction {
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client-to-server",
            Direction::ServerToClient => "server-to-client",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One turn of an `exchanges` workload: the client's writes, the server's
/// writes in answer, and the times the capture showed or left open.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    pub request: Vec<usize>,
    pub response: Vec<usize>,
    /// The server's time from the whole request to its first write.
    pub think: Option<Duration>,
    /// The client's time from the previous response (or the handshake) to this request.
    pub pause: Option<Duration>,
}

/// What the applications on the two hosts do.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// The client writes `request` (one write per entry, `request_gap` apart),
    /// the server answers with `response` (`response_gap` apart) after `think` (its time to compute
    /// the answer, from reading the whole request); `outstanding` requests in
    /// flight; `requests` in all
    /// (`None`: until `duration`). The source documents' Nagle/delayed-ACK experiments.
    RequestResponse {
        request: Vec<usize>,
        request_gap: Duration,
        response: Vec<usize>,
        /// Pause between the server's writes of one response (Doupnik 3.0: the
        /// network drains data faster than the application supplies it).
        response_gap: Duration,
        /// Up to this much more before each of those writes, drawn per write
        /// from the run's seed: an application whose pace varies from one
        /// response to the next (Doupnik 3.0), so a stall that catches some
        /// responses and not others shows as an intermediate rate.
        response_jitter: Duration,
        outstanding: u32,
        think: Duration,
        requests: Option<u64>,
    },
    /// A conversation of distinct turns (`whatif` writes one from a capture):
    /// the client writes exchange i's request `pause` after exchange i-1's
    /// response arrived, the server answers `think` after the whole request.
    /// An exchange without its own `think` or `pause` takes the workload's.
    Exchanges {
        exchanges: Vec<Exchange>,
        request_gap: Duration,
        response_gap: Duration,
        think: Duration,
        pause: Duration,
    },
    /// One side writes `bytes` in writes of `write_size`.
    Bulk {
        bytes: u64,
        write_size: usize,
        direction: Direction,
    },
    /// The client types `keystrokes` writes of `size` bytes, `interval` apart
    /// (the telnet case of RFC 896).
    Interactive {
        keystrokes: u64,
        interval: Duration,
        size: usize,
    },
}

impl Workload {
    /// The `workload.type` name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Workload::RequestResponse { .. } => "request-response",
            Workload::Exchanges { .. } => "exchanges",
            Workload::Bulk { .. } => "bulk",
            Workload::Interactive { .. } => "interactive",
        }
    }
}

/// A scenario that cannot be used, located: `file:line: key: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file path, `"<string>"`-like origin, or `"--set KEY"` for an override.
    pub file: String,
    /// 1-based line in `file`, when known.
    pub line: Option<usize>,
    /// Full dotted key (`"link.forward.rate"`), empty for file-level errors.
    pub key: String,
    pub message: String,
    /// Further mistakes found in the same reading, in file order: a file
    /// with several is reported whole, not one error per attempt.
    pub also: Vec<ScenarioError>,
}

impl ScenarioError {
    /// One error standing for several: the first, with the rest in `also`.
    /// `None` for an empty list.
    pub fn all(errors: Vec<ScenarioError>) -> Option<ScenarioError> {
        let mut flat: Vec<ScenarioError> = Vec::new();
        for mut e in errors {
            let more = std::mem::take(&mut e.also);
            flat.push(e);
            flat.extend(more);
        }
        flat.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
        flat.dedup();
        let mut it = flat.into_iter();
        let mut first = it.next()?;
        first.also = it.collect();
        Some(first)
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        // "--set link.rate: link.rate: ..." would say the key twice.
        if !self.key.is_empty() && self.file != format!("--set {}", self.key) {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)?;
        for e in &self.also {
            write!(f, "\n{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Documentation of one scenario key, for `tinygram run --help` and `tinygram scenario`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyDoc {
    /// Full dotted key.
    pub key: &'static str,
    /// The default, as it would be written in a file (or a description of it).
    /// Shown through [`KeyDoc::default_value`], which renders host and link
    /// keys from the code instead.
    pub default: &'static str,
    /// One line: what it does, and its source.
    pub doc: &'static str,
}

impl KeyDoc {
    /// The default as it would be written in a file. Host keys (the engine's
    /// settings) and link keys are rendered from `Config::default()` and
    /// `LinkConfig::default()`, so the help cannot drift from the code.
    pub fn default_value(&self) -> String {
        let host = self
            .key
            .strip_prefix("client.")
            .or_else(|| self.key.strip_prefix("server."));
        let link = self.key.strip_prefix("link.").filter(|k| !k.contains('.'));
        host.and_then(host_default)
            .or_else(|| link.and_then(link_default))
            .unwrap_or_else(|| self.default.to_string())
    }
}

/// A TOML string.
fn quoted(s: impl fmt::Display) -> String {
    format!("{:?}", s.to_string())
}

/// A size as a file would say it: decimal units for multiples of 1000
/// (`"256KB"`), else binary ones (`"64KiB"`).
fn size_text(n: u64) -> String {
    for (scale, unit) in [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")] {
        if n >= scale && n % scale == 0 {
            return quoted(format!("{}{unit}", n / scale));
        }
    }
    quoted(fmt_size(n))
}

/// `Config::default()`'s value of host key `short`, in scenario syntax.
fn host_default(short: &str) -> Option<String> {
    if short == "profile" {
        return Some(quoted(tinygram_proto::profile::RFC.name));
    }
    // Not `settings::find`: its did-you-mean, built for every host key that is
    // not a setting, cost more than the rest of a short run's setup.
    let s = settings::SETTINGS.iter().find(|s| s.name == short)?;
    Some(setting_text(s, s.default_value()))
}

/// A setting's value as a scenario file writes it.
fn setting_text(s: &Setting, v: SettingValue) -> String {
    match (s.kind, v) {
        (_, SettingValue::Flag(b)) => b.to_string(),
        (Kind::Bytes { .. }, SettingValue::Count(n)) => size_text(n),
        (_, SettingValue::Count(n)) => n.to_string(),
        (_, SettingValue::Number(x)) => format!("{x:?}"),
        (_, SettingValue::Time(d)) => quoted(fmt_duration(d)),
        (_, SettingValue::None) => quoted("none"),
        (_, SettingValue::Name(n)) => quoted(n),
        (_, SettingValue::Names(v)) => {
            format!("[{}]", v.iter().map(quoted).collect::<Vec<_>>().join(", "))
        }
    }
}

/// `LinkConfig::default()`'s value of link key `short`, in scenario syntax.
fn link_default(short: &str) -> Option<String> {
    let l = LinkConfig::default();
    Some(match short {
        "rate" => quoted(fmt_rate(l.rate_bps)),
        "delay" => quoted(fmt_duration(l.delay)),
        "queue" => size_text(l.queue_bytes as u64),
        "loss" => l.loss.to_string(),
        "ber" => l.ber.to_string(),
        "framing" => quoted(l.framing.name()),
        "reorder" => l.reorder.to_string(),
        "reorder_delay" => quoted(fmt_duration(l.reorder_delay)),
        "duplicate" => l.duplicate.to_string(),
        "ecn_mark" if l.ecn_mark_bytes == 0 => "0".to_string(),
        "ecn_mark" => size_text(l.ecn_mark_bytes as u64),
        _ => return None,
    })
}

/// Builds [`KEYS`]: link keys appear under `link`, `link.forward` and `link.reverse`,
/// host keys under `client` and `server`.
macro_rules! key_docs {
    (
        top: [$(($tk:literal, $td:literal, $tdoc:literal)),* $(,)?],
        link: [$(($lk:literal, $ld:literal, $ldoc:literal)),* $(,)?],
        host: [$(($hk:literal, $hd:literal, $hdoc:literal)),* $(,)?],
        workload: [$(($wk:literal, $wd:literal, $wdoc:literal)),* $(,)?] $(,)?
    ) => {
        &[
            $(KeyDoc { key: $tk, default: $td, doc: $tdoc },)*
            $(KeyDoc { key: concat!("link.", $lk), default: $ld, doc: $ldoc },)*
            $(KeyDoc {
                key: concat!("link.forward.", $lk),
                default: concat!("link.", $lk),
                doc: concat!("client-to-server value of link.", $lk),
            },)*
            $(KeyDoc {
                key: concat!("link.reverse.", $lk),
                default: concat!("link.", $lk),
                doc: concat!("server-to-client value of link.", $lk),
            },)*
            $(KeyDoc { key: concat!("client.", $hk), default: $hd, doc: concat!("client: ", $hdoc) },)*
            $(KeyDoc { key: concat!("server.", $hk), default: $hd, doc: concat!("server: ", $hdoc) },)*
            $(KeyDoc { key: concat!("workload.", $wk), default: $wd, doc: $wdoc },)*
        ]
    };
}

/// Every scenario key with its default and meaning (a stable public
/// interface): the keys below, with each host's engine settings, one per row
/// of the settings table (`tinygram_proto::settings`), after its `profile`.
pub const KEYS: &Keys = &Keys;

/// The list behind [`KEYS`], built once: host keys come from the settings table.
pub struct Keys;

static ALL_KEYS: std::sync::OnceLock<Vec<KeyDoc>> = std::sync::OnceLock::new();

impl Keys {
    fn all() -> &'static [KeyDoc] {
        ALL_KEYS.get_or_init(|| {
            // Built once per process, so the few hundred bytes leaked are bounded.
            let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
            let mut out = Vec::with_capacity(OWN_KEYS.len() + 2 * settings::SETTINGS.len());
            for k in OWN_KEYS {
                out.push(*k);
                let Some(side) = k.key.strip_suffix(".profile") else {
                    continue;
                };
                for s in settings::SETTINGS {
                    out.push(KeyDoc {
                        key: leak(format!("{side}.{}", s.name)),
                        default: leak(setting_text(s, s.default_value())),
                        doc: leak(format!("{side}: {}", s.doc)),
                    });
                }
            }
            out
        })
    }
}

impl std::ops::Deref for Keys {
    type Target = [KeyDoc];
    fn deref(&self) -> &[KeyDoc] {
        Keys::all()
    }
}

impl IntoIterator for &'static Keys {
    type Item = &'static KeyDoc;
    type IntoIter = std::slice::Iter<'static, KeyDoc>;
    fn into_iter(self) -> Self::IntoIter {
        Keys::all().iter()
    }
}

/// The scenario's own keys; each host's engine settings are added after its `profile`.
const OWN_KEYS: &[KeyDoc] = key_docs! {
    top: [
        ("name", "the file name", "label for reports"),
        ("seed", "1", "seed of the one random number generator; same seed, same run"),
        ("duration", "\"60s\"", "simulated-time cap"),
        ("memory_limit", "\"4GiB\"", "refuse a run whose estimated memory (connection state, queued writes, buffered data) is above this, naming what it would take; \"none\": no limit"),
    ],
    link: [
        ("rate", "\"1Gbps\"", "serialization rate in bits/s: \"10Mbps\", \"1.544Mb/s\", \"56kbit/s\" (\"unlimited\" or \"0\": no serialization delay)"),
        ("delay", "\"50us\"", "one-way propagation delay"),
        ("queue", "\"256KB\"", "drop-tail queue limit in wire bytes, the frame on the wire included (0: unlimited)"),
        ("loss", "0", "probability a frame is lost elsewhere on the path (it does not occupy the link)"),
        ("ber", "0", "bit error rate: a frame of n bits (header, payload, FCS; not preamble or gap) survives with (1-ber)^n"),
        ("framing", "\"ethernet\"", "per-frame overhead: \"ethernet\" (38 bytes, 64-byte minimum; Davids) or \"raw\""),
        ("reorder", "0", "probability a frame is held back reorder_delay, so later frames pass it"),
        ("reorder_delay", "\"1ms\"", "extra delay of a reordered frame"),
        ("duplicate", "0", "probability a frame arrives twice"),
        ("ecn_mark", "0", "ECN step marking (RFC 3168 5): an ECN-capable frame offered while this many wire bytes are queued is marked CE instead of waiting to be dropped (0: off)"),
    ],
    host: [
        ("profile", "\"rfc\"", "stack profile applied before this host's other keys: a name from `tinygram profiles` (rfc, linux, freebsd3, ...)"),
        ("isn", "none (from the seed)", "fixed initial sequence number (0 to 4294967295)"),
        ("memory", "none (unlimited)", "host memory for receive buffers, shared by its connections (RFC 1106 5); on `tun`, the budget for all buffers, send and receive, with new connections refused past two thirds and the longest idle aborted past it"),
        ("rx_coalesce", "\"0us\"", "receive coalescing (NIC interrupt moderation + Linux GRO): in-order segments arriving within it reach TCP merged; 0 = each on arrival"),
    ],
    workload: [
        ("type", "\"request-response\"", "\"request-response\", \"exchanges\", \"bulk\" or \"interactive\""),
        ("request", "[100]", "request-response: the client's write sizes for one request (\"10x50\" = 50 writes of 10 bytes)"),
        ("request_gap", "\"0ms\"", "request-response: pause between the writes of one request"),
        ("response", "[100]", "request-response: the server's write sizes for one response"),
        ("response_gap", "\"0ms\"", "request-response: pause between the server's writes of one response (an application slower than the network, Doupnik 3.0)"),
        ("response_jitter", "\"0ms\"", "request-response: up to this much more before each of the server's writes after the first, drawn per write from the seed (an application whose pace varies, Doupnik 3.0)"),
        ("outstanding", "1", "request-response: requests in flight (2 = double buffering)"),
        ("think", "\"0ms\"", "request-response: server think time: delay from reading a whole request to writing its response"),
        ("requests", "none (until duration)", "request-response: number of requests to make"),
        ("exchanges", "[{ request = [100], response = [100] }]", "exchanges: the turns of a conversation, in order, each { request = [sizes], response = [sizes], think = \"5ms\", pause = \"1ms\" } (think: the server's delay after the whole request; pause: the client's after the previous response); the other request-response keys request_gap, response_gap and think apply to every turn"),
        ("pause", "\"0ms\"", "exchanges: the client's pause from a response to its next request, for turns that give none"),
        ("bytes", "\"10MB\"", "bulk: bytes to transfer"),
        ("write_size", "\"64KiB\"", "bulk: size of each application write"),
        ("direction", "\"client-to-server\"", "bulk: \"client-to-server\" or \"server-to-client\""),
        ("keystrokes", "100", "interactive: number of writes the client makes"),
        ("interval", "\"100ms\"", "interactive: time between writes"),
        ("size", "1", "interactive: bytes per write"),
    ],
};

/// Every key a scenario file's top level may set: [`KEYS`] and the bottleneck's.
fn all_keys() -> impl Iterator<Item = &'static KeyDoc> {
    KEYS.iter().chain(BOTTLENECK_KEYS).chain(FLOOD_KEYS)
}

/// Tables a scenario may contain.
const TABLES: &[&str] = &[
    "bottleneck",
    "flood",
    "link",
    "link.forward",
    "link.reverse",
    "client",
    "server",
    "workload",
];
const RR_KEYS: &[&str] = &[
    "request",
    "request_gap",
    "response",
    "response_gap",
    "response_jitter",
    "outstanding",
    "think",
    "requests",
];
const EXCHANGE_KEYS: &[&str] = &["exchanges", "request_gap", "response_gap", "think", "pause"];
const BULK_KEYS: &[&str] = &["bytes", "write_size", "direction"];
const INTERACTIVE_KEYS: &[&str] = &["keystrokes", "interval", "size"];
const WORKLOAD_TYPES: &[(&str, &[&str])] = &[
    ("request-response", RR_KEYS),
    ("exchanges", EXCHANGE_KEYS),
    ("bulk", BULK_KEYS),
    ("interactive", INTERACTIVE_KEYS),
];
/// Upper bound on the writes a size list may expand to (`"1x1000000000"` is a typo, not a plan).
const MAX_WRITES: usize = 1_000_000;

/// One leaf of the flattened document.
#[derive(Clone, Debug)]
struct Entry {
    /// Full dotted key.
    key: String,
    value: Value,
    /// Where it came from: the file's origin or `"--set KEY"`.
    file: String,
    /// Line of the key (file entries only).
    key_line: Option<usize>,
    /// Whether the value's spans index the file text (false for overrides).
    spanned: bool,
}

/// Start offsets of lines, to turn spans into 1-based line numbers.
#[derive(Clone)]
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts)
    }
    fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset).max(1)
    }
}

/// The flattened document plus what is needed to locate errors.
struct Doc {
    origin: String,
    lines: Lines,
    entries: Vec<Entry>,
    /// The `[[flows]]` tables, in file order.
    flows: Vec<topo::FlowTable>,
}

fn err(file: &str, line: Option<usize>, key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        file: file.to_string(),
        line,
        key: key.to_string(),
        message: message.into(),
        also: Vec::new(),
    }
}

/// `found integer 200` for type errors.
fn found(v: &Value) -> String {
    let mut text = v.to_string().trim().to_string();
    if text.len() > 40 {
        let cut = (0..=40)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("...");
    }
    format!("found {} {text}", v.type_name())
}

/// Keys directly inside `table` ("" = top level): leaves and subtables.
fn children(table: &str) -> Vec<&'static str> {
    let prefix = if table.is_empty() {
        String::new()
    } else {
        format!("{table}.")
    };
    let mut out: Vec<&'static str> = Vec::new();
    let names = all_keys().map(|k| k.key).chain(TABLES.iter().copied());
    for full in names {
        if let Some(rest) = full.strip_prefix(prefix.as_str()) {
            if !rest.is_empty() && !rest.contains('.') && !out.contains(&rest) {
                out.push(rest);
            }
        }
    }
    out
}

/// "unknown key" with a suggestion or the list of keys allowed there.
fn unknown_key_message(key: &str) -> String {
    let (table, leaf) = key.rsplit_once('.').unwrap_or(("", key));
    if !table.is_empty() && !TABLES.contains(&table) {
        return "unknown key".to_string();
    }
    let known = children(table);
    let best = tinygram_proto::suggest::closest(leaf, known.iter().copied());
    let place = if table.is_empty() {
        "at the top level".to_string()
    } else {
        format!("in [{table}]")
    };
    match best {
        Some(k) if table.is_empty() => format!("unknown key; did you mean `{k}`?"),
        Some(k) => format!("unknown key; did you mean `{table}.{k}`?"),
        None => format!("unknown key (known keys {place}: {})", known.join(", ")),
    }
}

impl Doc {
    /// Flattens `text` into dotted-key entries, keeping line numbers.
    fn parse(text: &str, origin: &str) -> Result<Doc, ScenarioError> {
        let lines = Lines::new(text);
        let doc = ImDocument::parse(text).map_err(|e| {
            let line = e.span().map(|s| lines.line(s.start));
            err(
                origin,
                line,
                "",
                format!("TOML syntax: {}", e.message().trim()),
            )
        })?;
        let mut d = Doc {
            origin: origin.to_string(),
            lines,
            entries: Vec::new(),
            flows: Vec::new(),
        };
        // `[open]` holds the values the file leaves open, for the run library
        // to expand into runs; each run then sets them with `--set`.
        let mut top = doc.as_table().clone();
        top.remove(OPEN_TABLE);
        d.flatten_table("", &top, origin, true)?;
        Ok(d)
    }

    fn key_line(&self, k: &Key, spanned: bool) -> Option<usize> {
        if !spanned {
            return None;
        }
        k.span().map(|s| self.lines.line(s.start))
    }

    fn join(prefix: &str, k: &str) -> String {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    }

    fn check_table(&self, key: &str, line: Option<usize>, file: &str) -> Result<(), ScenarioError> {
        if TABLES.contains(&key) {
            Ok(())
        } else if all_keys().any(|k| k.key == key) {
            Err(err(file, line, key, "expected a value, found a table"))
        } else {
            Err(err(file, line, key, unknown_key_message(key)))
        }
    }

    /// Flattens a `[table]` or an `{ inline = table }` into dotted keys.
    fn flatten_table(
        &mut self,
        prefix: &str,
        t: &dyn TableLike,
        file: &str,
        spanned: bool,
    ) -> Result<(), ScenarioError> {
        for (name, _) in t.iter() {
            if let Some((k, item)) = t.get_key_value(name) {
                let key = Self::join(prefix, name);
                let line = self.key_line(k, spanned);
                self.flatten_item(key, line, item, file, spanned)?;
            }
        }
        Ok(())
    }

    fn flatten_item(
        &mut self,
        key: String,
        line: Option<usize>,
        item: &Item,
        file: &str,
        spanned: bool,
    ) -> Result<(), ScenarioError> {
        match item {
            Item::None => Ok(()),
            Item::Table(t) => {
                self.check_table(&key, line, file)?;
                self.flatten_table(&key, t, file, spanned)
            }
            Item::Value(Value::InlineTable(t)) => {
                self.check_table(&key, line, file)?;
                self.flatten_table(&key, t, file, spanned)
            }
            Item::Value(v) => {
                self.entries.push(Entry {
                    key,
                    value: v.clone(),
                    file: file.to_string(),
                    key_line: line,
                    spanned,
                });
                Ok(())
            }
            // `[[variant]]` tables are read by `crate::variant`.
            Item::ArrayOfTables(_) if key == crate::variant::VARIANT_TABLE => Ok(()),
            // `[[flows]]` tables are read by `topo`, each over the file's own keys.
            Item::ArrayOfTables(a) if key == "flows" => {
                for t in a.iter() {
                    let saved = std::mem::take(&mut self.entries);
                    let flowed = self.flatten_table("", t, file, spanned);
                    let entries = std::mem::replace(&mut self.entries, saved);
                    flowed?;
                    let line = if spanned {
                        t.span().map(|s| self.lines.line(s.start))
                    } else {
                        None
                    };
                    self.flows.push(topo::FlowTable { line, entries });
                }
                Ok(())
            }
            Item::ArrayOfTables(_) => Err(err(
                file,
                line,
                &key,
                "arrays of tables ([[...]]) are not used in scenario files",
            )),
        }
    }

    /// Applies one `--set key=value`: VALUE is TOML, or else a bare string.
    fn apply_override(&mut self, spec: &str) -> Result<(), ScenarioError> {
        let Some((k, v)) = spec.split_once('=') else {
            return Err(err(
                &format!("--set {}", spec.trim()),
                None,
                spec.trim(),
                "expected KEY=VALUE, like client.send_policy=nodelay",
            ));
        };
        let key = k.trim().to_string();
        let file = format!("--set {key}");
        let bad_key = key.is_empty()
            || key.split('.').any(|part| {
                part.is_empty()
                    || !part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            });
        if bad_key {
            return Err(err(
                &file,
                None,
                &key,
                "bad key: expected a dotted key like link.forward.rate",
            ));
        }
        let text = v.trim();
        if text.is_empty() {
            return Err(err(&file, None, &key, "missing value after '='"));
        }
        let value = match text.parse::<Value>() {
            Ok(value) => value,
            Err(e) if text.starts_with(['[', '{', '"', '\'']) => {
                return Err(err(
                    &file,
                    None,
                    &key,
                    format!("bad TOML value {text:?}: {}", e.message().trim()),
                ));
            }
            Err(_) => Value::from(text),
        };
        // `flows.N.KEY` sets KEY in the Nth `[[flows]]` table (file order, from 0).
        if let Some(rest) = key.strip_prefix("flows.") {
            let (index, sub) = rest.split_once('.').unwrap_or((rest, ""));
            let n = self.flows.len();
            let Some(i) = index.parse::<usize>().ok().filter(|&i| i < n) else {
                let why = if n == 0 {
                    "the scenario has no [[flows]] tables".to_string()
                } else {
                    format!(
                        "expected flows.N.KEY with N from 0 to {} (the [[flows]] tables in file order)",
                        n - 1
                    )
                };
                return Err(err(&file, None, &key, why));
            };
            if sub.is_empty() {
                return Err(err(
                    &file,
                    None,
                    &key,
                    "expected flows.N.KEY, like flows.0.count=10",
                ));
            }
            let outer = std::mem::replace(
                &mut self.entries,
                std::mem::take(&mut self.flows[i].entries),
            );
            Self::remove_covered(&mut self.entries, sub);
            let set = self.flatten_item(sub.to_string(), None, &Item::Value(value), &file, false);
            self.flows[i].entries = std::mem::replace(&mut self.entries, outer);
            return set;
        }
        Self::remove_covered(&mut self.entries, &key);
        self.flatten_item(key, None, &Item::Value(value), &file, false)
    }

    /// Removes what an override of `key` replaces: the key, anything below it, and any leaf above it.
    fn remove_covered(entries: &mut Vec<Entry>, key: &str) {
        entries.retain(|e| {
            let below = e.key.len() > key.len()
                && e.key.starts_with(key)
                && e.key.as_bytes()[key.len()] == b'.';
            let above = key.len() > e.key.len()
                && key.starts_with(&e.key)
                && key.as_bytes()[e.key.len()] == b'.';
            e.key != key && !below && !above
        });
    }

    fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    fn value_line(&self, e: &Entry, v: &Value) -> Option<usize> {
        if !e.spanned {
            return None;
        }
        v.span().map(|s| self.lines.line(s.start)).or(e.key_line)
    }

    fn fail(&self, e: &Entry, message: impl Into<String>) -> ScenarioError {
        err(&e.file, self.value_line(e, &e.value), &e.key, message)
    }

    fn fail_at(&self, e: &Entry, v: &Value, message: impl Into<String>) -> ScenarioError {
        err(&e.file, self.value_line(e, v), &e.key, message)
    }

    /// Every key must be known, and workload keys must belong to the workload type.
    fn check_keys(&self, wtype: &str) -> Result<(), ScenarioError> {
        let mut errors = Vec::new();
        for e in &self.entries {
            if TABLES.contains(&e.key.as_str()) {
                errors.push(err(
                    &e.file,
                    e.key_line,
                    &e.key,
                    format!("expected a table, {}", found(&e.value)),
                ));
                continue;
            }
            if !all_keys().any(|k| k.key == e.key) {
                errors.push(err(
                    &e.file,
                    e.key_line,
                    &e.key,
                    unknown_key_message(&e.key),
                ));
                continue;
            }
            if let Some(short) = e.key.strip_prefix("workload.") {
                if short == "type" {
                    continue;
                }
                let allowed = WORKLOAD_TYPES
                    .iter()
                    .find(|(t, _)| *t == wtype)
                    .map(|(_, keys)| *keys)
                    .unwrap_or(&[]);
                if !allowed.contains(&short) {
                    let owner = WORKLOAD_TYPES
                        .iter()
                        .find(|(_, keys)| keys.contains(&short))
                        .map(|(t, _)| *t)
                        .unwrap_or("?");
                    errors.push(err(
                        &e.file,
                        e.key_line,
                        &e.key,
                        format!(
                            "not a key of workload type {wtype:?} (it belongs to {owner:?}; keys of {wtype:?}: {})",
                            allowed.join(", ")
                        ),
                    ));
                    continue;
                }
            }
        }
        ScenarioError::all(errors).map_or(Ok(()), Err)
    }

    // ---- typed getters: Ok(None) when the key is absent ----

    fn string(&self, key: &str) -> Result<Option<(&Entry, String)>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        match e.value.as_str() {
            Some(s) => Ok(Some((e, s.to_string()))),
            None => Err(self.fail(e, format!("expected a string, {}", found(&e.value)))),
        }
    }

    fn duration(&self, key: &str) -> Result<Option<Duration>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        match &e.value {
            Value::String(s) => parse_duration(s.value())
                .map(Some)
                .map_err(|m| self.fail(e, m)),
            Value::Integer(i) if *i.value() == 0 => Ok(Some(Duration::ZERO)),
            v => Err(self.fail(
                e,
                format!(
                    "expected a duration string with a unit, like \"200ms\", {}",
                    found(v)
                ),
            )),
        }
    }

    fn size_value(&self, e: &Entry, v: &Value) -> Result<u64, ScenarioError> {
        match v {
            Value::Integer(i) => u64::try_from(*i.value()).map_err(|_| {
                self.fail_at(
                    e,
                    v,
                    format!("bad size {}: must not be negative", i.value()),
                )
            }),
            Value::String(s) => parse_size(s.value()).map_err(|m| self.fail_at(e, v, m)),
            v => Err(self.fail_at(
                e,
                v,
                format!(
                    "expected a size in bytes, like 1448 or \"64KB\", {}",
                    found(v)
                ),
            )),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        self.size_value(e, &e.value).map(Some)
    }

    fn usize_size(&self, key: &str) -> Result<Option<usize>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        let n = self.size_value(e, &e.value)?;
        usize::try_from(n)
            .map(Some)
            .map_err(|_| self.fail(e, "size too large for this machine"))
    }

    /// Rate in bits/s; "unlimited" becomes 0.0 (LinkConfig's "infinitely fast").
    fn rate(&self, key: &str) -> Result<Option<f64>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        match &e.value {
            Value::String(s) => parse_rate(s.value())
                .map(|r| Some(if r.is_infinite() { 0.0 } else { r }))
                .map_err(|m| self.fail(e, m)),
            Value::Integer(i) if *i.value() == 0 => Ok(Some(0.0)),
            v => Err(self.fail(
                e,
                format!(
                    "expected a rate string with a unit, like \"10Mbps\", {}",
                    found(v)
                ),
            )),
        }
    }

    fn probability(&self, key: &str) -> Result<Option<f64>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        let p = match &e.value {
            Value::Float(f) => *f.value(),
            Value::Integer(i) => *i.value() as f64,
            v => {
                return Err(self.fail(
                    e,
                    format!("expected a probability between 0 and 1, {}", found(v)),
                ))
            }
        };
        if !(0.0..=1.0).contains(&p) {
            return Err(self.fail(e, format!("probability {p} is outside [0, 1]")));
        }
        Ok(Some(p))
    }

    fn uint(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        let Value::Integer(i) = &e.value else {
            return Err(self.fail(e, format!("expected an integer, {}", found(&e.value))));
        };
        let n = *i.value();
        match u64::try_from(n) {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.fail(e, format!("{n} is out of range ({min} to {max})"))),
        }
    }

    fn u32(&self, key: &str, min: u32) -> Result<Option<u32>, ScenarioError> {
        Ok(self
            .uint(key, u64::from(min), u64::from(u32::MAX))?
            .map(|n| n as u32))
    }

    /// A list of write sizes: integers, size strings, and "SIZExCOUNT" runs.
    fn size_list(&self, key: &str) -> Result<Option<Vec<usize>>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        self.writes_of(e, &e.value).map(Some)
    }

    /// A list of write sizes (`[100, "10x3", "1KB"]`, or one size) in entry `e`.
    fn writes_of(&self, e: &Entry, value: &Value) -> Result<Vec<usize>, ScenarioError> {
        let items: Vec<&Value> = match value {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        if items.is_empty() {
            return Err(self.fail(e, "must list at least one write"));
        }
        let mut out = Vec::new();
        for v in items {
            let (size, count) = match v {
                Value::String(s) if s.value().contains('x') => {
                    let text = s.value();
                    let bad = || {
                        self.fail_at(
                            e,
                            v,
                            format!("bad write run {text:?}: expected SIZExCOUNT, like \"10x50\" (50 writes of 10 bytes)"),
                        )
                    };
                    let (size, count) = text.rsplit_once('x').ok_or_else(bad)?;
                    let size = parse_size(size).map_err(|m| self.fail_at(e, v, m))?;
                    let count: usize = count.trim().parse().map_err(|_| bad())?;
                    (size, count)
                }
                _ => (self.size_value(e, v)?, 1),
            };
            if size == 0 {
                return Err(self.fail_at(e, v, "a write must be at least 1 byte"));
            }
            let size = usize::try_from(size).map_err(|_| self.fail_at(e, v, "write too large"))?;
            if count == 0 {
                return Err(self.fail_at(e, v, "a run must repeat at least once"));
            }
            if count > MAX_WRITES - out.len() {
                return Err(self.fail_at(e, v, format!("too many writes (at most {MAX_WRITES})")));
            }
            out.extend(std::iter::repeat_n(size, count));
        }
        Ok(out)
    }

    /// `workload.exchanges`: a list of `{ request, response, think, pause }`
    /// tables, each one turn of the conversation, at most [`MAX_WRITES`] writes in all.
    fn exchanges(&self, key: &str) -> Result<Vec<Exchange>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(vec![Exchange {
                request: vec![100],
                response: vec![100],
                think: None,
                pause: None,
            }]);
        };
        let Value::Array(list) = &e.value else {
            return Err(self.fail(e, format!("expected a list of tables, {}", found(&e.value))));
        };
        if list.is_empty() {
            return Err(self.fail(e, "must list at least one exchange"));
        }
        let mut out = Vec::with_capacity(list.len().min(MAX_WRITES));
        let mut writes = 0usize;
        for (i, v) in list.iter().enumerate() {
            let Value::InlineTable(t) = v else {
                return Err(self.fail_at(
                    e,
                    v,
                    format!(
                        "exchange {}: expected a table {{ request = [...], response = [...] }}, {}",
                        i + 1,
                        found(v)
                    ),
                ));
            };
            let at = |m: String| self.fail_at(e, v, format!("exchange {}: {m}", i + 1));
            for (name, _) in t.iter() {
                if !["request", "response", "think", "pause"].contains(&name) {
                    return Err(at(format!(
                        "unknown field {name:?} (request, response, think, pause)"
                    )));
                }
            }
            let sizes = |name: &str| -> Result<Vec<usize>, ScenarioError> {
                match t.get(name) {
                    Some(x) => self.writes_of(e, x).map_err(|mut er| {
                        er.message = format!("exchange {}: {name}: {}", i + 1, er.message);
                        er
                    }),
                    None => Err(at(format!("needs {name} = [write sizes]"))),
                }
            };
            let dur = |name: &str| -> Result<Option<Duration>, ScenarioError> {
                match t.get(name) {
                    None => Ok(None),
                    Some(Value::String(s)) => parse_duration(s.value())
                        .map(Some)
                        .map_err(|m| at(format!("{name}: {m}"))),
                    Some(Value::Integer(z)) if *z.value() == 0 => Ok(Some(Duration::ZERO)),
                    Some(x) => Err(at(format!(
                        "{name}: expected a duration like \"5ms\", {}",
                        found(x)
                    ))),
                }
            };
            let ex = Exchange {
                request: sizes("request")?,
                response: sizes("response")?,
                think: dur("think")?,
                pause: dur("pause")?,
            };
            writes += ex.request.len() + ex.response.len();
            if writes > MAX_WRITES {
                return Err(at(format!("too many writes (at most {MAX_WRITES} in all)")));
            }
            out.push(ex);
        }
        Ok(out)
    }

    // ---- sections ----

    /// The key that sets link `name` in direction `dir`: `link.{dir}.{name}`
    /// if present, else `link.{name}`.
    fn link_key(&self, dir: &str, name: &str) -> String {
        let specific = format!("link.{dir}.{name}");
        if self.get(&specific).is_some() {
            specific
        } else {
            format!("link.{name}")
        }
    }

    fn link(&self, dir: &str) -> Result<LinkConfig, ScenarioError> {
        let mut c = LinkConfig::default();
        let k = |name: &str| self.link_key(dir, name);
        if let Some(v) = self.rate(&k("rate"))? {
            c.rate_bps = v;
        }
        if let Some(v) = self.duration(&k("delay"))? {
            c.delay = v;
        }
        if let Some(v) = self.usize_size(&k("queue"))? {
            c.queue_bytes = v;
        }
        if let Some(v) = self.probability(&k("loss"))? {
            c.loss = v;
        }
        if let Some(v) = self.probability(&k("ber"))? {
            c.ber = v;
        }
        if let Some((e, s)) = self.string(&k("framing"))? {
            c.framing = s.parse().map_err(|m: String| self.fail(e, m))?;
        }
        if let Some(v) = self.probability(&k("reorder"))? {
            c.reorder = v;
        }
        if let Some(v) = self.duration(&k("reorder_delay"))? {
            c.reorder_delay = v;
        }
        if let Some(v) = self.probability(&k("duplicate"))? {
            c.duplicate = v;
        }
        if let Some(v) = self.usize_size(&k("ecn_mark"))? {
            c.ecn_mark_bytes = v;
        }
        Ok(c)
    }

    /// Reads engine setting `st` at `key` as its kind says: `Ok(None)` when absent.
    fn setting(
        &self,
        st: &Setting,
        key: &str,
    ) -> Result<Option<(&Entry, SettingValue)>, ScenarioError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        let none = matches!(e.value.as_str(), Some("none"));
        let v = match st.kind {
            Kind::Flag => self.boolean(key)?.map(SettingValue::Flag),
            Kind::Count { min, max } => self.uint(key, min, max)?.map(SettingValue::Count),
            Kind::Bytes { none: true, .. } | Kind::Time { none: true } | Kind::Limit { .. }
                if none =>
            {
                Some(SettingValue::None)
            }
            Kind::Limit { max } => self.uint(key, 0, max)?.map(SettingValue::Count),
            Kind::Bytes { .. } => self.usize_size(key)?.map(|n| SettingValue::Count(n as u64)),
            Kind::Time { .. } => self.duration(key)?.map(SettingValue::Time),
            Kind::Number { like } => Some(SettingValue::Number(match &e.value {
                Value::Float(f) => *f.value(),
                Value::Integer(i) => *i.value() as f64,
                v => return Err(self.fail(e, format!("expected {like}, {}", found(v)))),
            })),
            Kind::Name => self.string(key)?.map(|(_, s)| SettingValue::Name(s)),
            Kind::Names { like } => {
                let items: Vec<&Value> = match &e.value {
                    Value::Array(a) => a.iter().collect(),
                    v => vec![v],
                };
                let mut names = Vec::with_capacity(items.len());
                for v in items {
                    let name = v.as_str().ok_or_else(|| {
                        self.fail_at(e, v, format!("expected {like}, {}", found(v)))
                    })?;
                    // Each name alone first, so an unknown one is pointed at.
                    let one = SettingValue::Names(vec![name.to_string()]);
                    st.set(&mut Config::default(), one)
                        .map_err(|m| self.fail_at(e, v, m))?;
                    names.push(name.to_string());
                }
                Some(SettingValue::Names(names))
            }
        };
        Ok(v.map(|v| (e, v)))
    }

    fn host(&self, side: &str) -> Result<HostConfig, ScenarioError> {
        let k = |name: &str| format!("{side}.{name}");
        // The profile first; every key below overrides it.
        let profile = match self.string(&k("profile"))? {
            Some((e, s)) => tinygram_proto::profile::find(&s).map_err(|m| self.fail(e, m))?,
            None => &tinygram_proto::profile::RFC,
        };
        let mut c = profile.config();
        // Each engine setting from the table, read as its kind says, then set
        // through the table (its range is the table's, so one range, the real one).
        for st in settings::SETTINGS {
            if let Some((e, v)) = self.setting(st, &k(st.name))? {
                st.set(&mut c, v).map_err(|m| self.fail(e, m))?;
            }
        }
        let memory = self.usize_size(&k("memory"))?;
        let rx_coalesce = self.duration(&k("rx_coalesce"))?.unwrap_or(Duration::ZERO);
        let isn = self.u32(&k("isn"), 0)?;
        c.validate().map_err(|ce| {
            let key = k(ce.key);
            match self.get(&key) {
                Some(e) => self.fail(e, ce.msg),
                None => err(&self.origin, None, &key, ce.msg),
            }
        })?;
        Ok(HostConfig {
            tcp: c,
            profile: profile.name,
            isn,
            memory,
            rx_coalesce,
        })
    }

    fn workload(&self, wtype: &str) -> Result<Workload, ScenarioError> {
        let w = |name: &str| format!("workload.{name}");
        Ok(match wtype {
            "bulk" => {
                let bytes = self.size(&w("bytes"))?.unwrap_or(10_000_000);
                if bytes == 0 {
                    return Err(self.at_key(
                        &w("bytes"),
                        "must be at least 1 byte: a bulk transfer of nothing has nothing to measure",
                    ));
                }
                let write_size = self.usize_size(&w("write_size"))?.unwrap_or(64 * 1024);
                if write_size == 0 {
                    return Err(self.positive(&w("write_size")));
                }
                let direction = match self.string(&w("direction"))? {
                    None => Direction::ClientToServer,
                    Some((_, s)) if s == "client-to-server" => Direction::ClientToServer,
                    Some((_, s)) if s == "server-to-client" => Direction::ServerToClient,
                    Some((e, s)) => {
                        return Err(self.fail(
                            e,
                            format!(
                                "unknown direction {s:?}{} (expected \"client-to-server\" or \"server-to-client\")",
                                did_you_mean(&s, ["client-to-server", "server-to-client"])
                            ),
                        ))
                    }
                };
                Workload::Bulk {
                    bytes,
                    write_size,
                    direction,
                }
            }
            "interactive" => {
                let size = self.usize_size(&w("size"))?.unwrap_or(1);
                if size == 0 {
                    return Err(self.positive(&w("size")));
                }
                Workload::Interactive {
                    keystrokes: self.uint(&w("keystrokes"), 1, u64::MAX)?.unwrap_or(100),
                    interval: self
                        .duration(&w("interval"))?
                        .unwrap_or(Duration::from_millis(100)),
                    size,
                }
            }
            "exchanges" => Workload::Exchanges {
                exchanges: self.exchanges(&w("exchanges"))?,
                request_gap: self.duration(&w("request_gap"))?.unwrap_or(Duration::ZERO),
                response_gap: self.duration(&w("response_gap"))?.unwrap_or(Duration::ZERO),
                think: self.duration(&w("think"))?.unwrap_or(Duration::ZERO),
                pause: self.duration(&w("pause"))?.unwrap_or(Duration::ZERO),
            },
            _ => Workload::RequestResponse {
                request: self.size_list(&w("request"))?.unwrap_or_else(|| vec![100]),
                request_gap: self.duration(&w("request_gap"))?.unwrap_or(Duration::ZERO),
                response: self.size_list(&w("response"))?.unwrap_or_else(|| vec![100]),
                response_gap: self.duration(&w("response_gap"))?.unwrap_or(Duration::ZERO),
                response_jitter: self
                    .duration(&w("response_jitter"))?
                    .unwrap_or(Duration::ZERO),
                outstanding: self.u32(&w("outstanding"), 1)?.unwrap_or(1),
                think: self.duration(&w("think"))?.unwrap_or(Duration::ZERO),
                requests: self.uint(&w("requests"), 1, u64::MAX)?,
            },
        })
    }

    fn positive(&self, key: &str) -> ScenarioError {
        self.at_key(key, "must be at least 1 byte")
    }

    /// An error at `key`'s line if the file or a `--set` gave it, else at the file.
    fn at_key(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        match self.get(key) {
            Some(e) => self.fail(e, message),
            None => err(&self.origin, None, key, message),
        }
    }

    /// Settings each valid alone that together can never work.
    fn check_feasible(&self, sc: &Scenario) -> Result<(), ScenarioError> {
        // The largest segment either side sends: both MSS options bound its
        // payload, and options come out of the MSS (RFC 6691 3, RFC 9293 3.7.1).
        let mss = usize::from(sc.client.tcp.mss.min(sc.server.tcp.mss));
        let ip = IPV4_HEADER_LEN + TCP_HEADER_LEN + mss;
        let (fwd_data, rev_data) = match &sc.workload {
            Workload::Bulk { direction, .. } => (
                *direction == Direction::ClientToServer,
                *direction == Direction::ServerToClient,
            ),
            _ => (true, true),
        };
        for (dir, link, data) in [
            ("forward", &sc.forward, fwd_data),
            ("reverse", &sc.reverse, rev_data),
        ] {
            let frame = Link::new(link.clone()).wire_len(ip);
            if data && link.queue_bytes > 0 && link.queue_bytes < frame {
                let framing = match link.framing {
                    crate::link::Framing::Raw => String::new(),
                    f => format!(" + {} framing", f.name()),
                };
                return Err(self.at_key(
                    &self.link_key(dir, "queue"),
                    format!(
                        "{} bytes cannot hold one full-sized frame ({frame} wire bytes: MSS {mss} + {} bytes of TCP/IP headers{framing}), so every full segment would be dropped; use at least {frame}, or 0 for unlimited",
                        link.queue_bytes,
                        IPV4_HEADER_LEN + TCP_HEADER_LEN,
                    ),
                ));
            }
            if link.loss >= 1.0 {
                return Err(self.at_key(
                    &self.link_key(dir, "loss"),
                    "1 loses every frame, so nothing could ever arrive; use less than 1",
                ));
            }
            if link.ber >= 1.0 {
                return Err(self.at_key(
                    &self.link_key(dir, "ber"),
                    "1 corrupts every frame, so nothing could ever arrive; use less than 1",
                ));
            }
        }
        Ok(())
    }

    fn build(&self, default_name: &str) -> Result<Scenario, ScenarioError> {
        let wtype = match self.string("workload.type")? {
            None => "request-response".to_string(),
            Some((e, s)) => {
                if !WORKLOAD_TYPES.iter().any(|(t, _)| *t == s) {
                    return Err(self.fail(
                        e,
                        format!(
                            "unknown workload type {s:?}{} (expected \"request-response\", \"exchanges\", \"bulk\" or \"interactive\")",
                            did_you_mean(&s, WORKLOAD_TYPES.iter().map(|(t, _)| *t))
                        ),
                    ));
                }
                s
            }
        };
        let keys = self.check_keys(&wtype);
        let (forward, reverse) = (self.link("forward"), self.link("reverse"));
        let (client, server) = (self.host("client"), self.host("server"));
        let workload = self.workload(&wtype);
        let errors: Vec<ScenarioError> = [keys.err(), forward.as_ref().err().cloned()]
            .into_iter()
            .chain([
                reverse.as_ref().err().cloned(),
                client.as_ref().err().cloned(),
            ])
            .chain([
                server.as_ref().err().cloned(),
                workload.as_ref().err().cloned(),
            ])
            .flatten()
            .collect();
        if let Some(e) = ScenarioError::all(errors) {
            return Err(e);
        }
        let name = self
            .string("name")?
            .map(|(_, s)| s)
            .unwrap_or_else(|| default_name.to_string());
        let seed = self.uint("seed", 0, u64::MAX)?.unwrap_or(1);
        let duration = self
            .duration("duration")?
            .unwrap_or(Duration::from_secs(60));
        if duration.is_zero() {
            if let Some(e) = self.get("duration") {
                return Err(self.fail(e, "must be positive"));
            }
        }
        let sc = Scenario {
            name,
            seed,
            duration,
            forward: forward?,
            reverse: reverse?,
            client: client?,
            server: server?,
            workload: workload?,
            topology: None,
        };
        self.check_feasible(&sc)?;
        let topology = self.topology(&sc)?;
        let sc = Scenario { topology, ..sc };
        self.check_memory(&sc)?;
        Ok(sc)
    }

    /// Refuses a run estimated to need more memory than `memory_limit`
    /// before anything is allocated, at the key that sizes most of it.
    fn check_memory(&self, sc: &Scenario) -> Result<(), ScenarioError> {
        let limit = match self.string("memory_limit") {
            Ok(Some((_, s))) if s == "none" => return Ok(()),
            _ => self
                .size("memory_limit")?
                .unwrap_or(crate::footprint::DEFAULT_LIMIT),
        };
        let need = crate::footprint::estimate(sc);
        if need.total() <= limit {
            return Ok(());
        }
        let key = need
            .largest()
            .map(|p| p.key.as_str())
            .filter(|k| !k.is_empty())
            .unwrap_or("memory_limit");
        let message = format!(
            "this run would need {}, more than memory_limit ({}) allows; make it smaller, or raise the limit on a machine with the memory (memory_limit = \"{}\", or --set memory_limit=none)",
            need.describe(),
            crate::footprint::size(limit),
            fmt_size(need.total().next_multiple_of(1 << 30)),
        );
        Err(self.locate(key, message))
    }

    /// An error at `key`'s line, a `flows[N].` key included.
    fn locate(&self, key: &str, message: String) -> ScenarioError {
        let flow = key.strip_prefix("flows[").and_then(|r| {
            let (n, rest) = r.split_once("].")?;
            Some((n.parse::<usize>().ok()?.checked_sub(1)?, rest))
        });
        let Some((i, short)) = flow else {
            return self.at_key(key, message);
        };
        let table = self.flows.get(i);
        let line = table
            .and_then(|t| t.entries.iter().find(|e| e.key == short))
            .map_or(table.and_then(|t| t.line), |e| e.key_line);
        let file = table
            .and_then(|t| t.entries.iter().find(|e| e.key == short))
            .map_or(self.origin.clone(), |e| e.file.clone());
        err(&file, line, key, message)
    }
}

impl Scenario {
    /// Reads a scenario file, applies `--set KEY=VALUE` overrides, and validates it.
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let (text, origin, name) = Self::read_file(path)?;
        Self::build(&text, &origin, overrides, &name)
    }

    /// A scenario file's text, its origin for errors, and the default name
    /// (the file name without extension).
    pub(crate) fn read_file(path: &Path) -> Result<(String, String, String), ScenarioError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(&origin, None, "", format!("cannot read scenario file: {e}")))?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".to_string());
        Ok((text, origin, name))
    }

    /// Parses scenario text; `origin` names it in errors (a path, or `"<string>"`).
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(
        text: &str,
        origin: &str,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        Self::build(text, origin, overrides, "scenario")
    }

    pub(crate) fn build(
        text: &str,
        origin: &str,
        overrides: &[String],
        default_name: &str,
    ) -> Result<Scenario, ScenarioError> {
        let mut doc = Doc::parse(text, origin)?;
        for o in overrides {
            doc.apply_override(o)?;
        }
        doc.build(default_name)
    }
}

impl Default for Scenario {
    /// The scenario of an empty file.
    fn default() -> Self {
        Doc {
            origin: String::new(),
            lines: Lines::new(""),
            entries: Vec::new(),
            flows: Vec::new(),
        }
        .build("scenario")
        .unwrap_or_else(|e| unreachable!("defaults are valid: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Framing;
    use tinygram_proto::policy::{AckPolicyKind, SendPolicyKind};
    use tinygram_proto::{DelackCount, LossIs, SlowStart, WindowUpdate};

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_str(text, "s.toml", &[])
    }

    fn parse_set(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        Scenario::from_str(text, "s.toml", &sets)
    }

    /// Asserts the error's file, line and key, and that its message contains `msg`.
    fn assert_err(
        r: Result<Scenario, ScenarioError>,
        file: &str,
        line: Option<usize>,
        key: &str,
        msg: &str,
    ) {
        let e = r.expect_err("expected an error");
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            (file, line, key),
            "{e}"
        );
        assert!(
            e.message.contains(msg),
            "message {:?} lacks {msg:?}",
            e.message
        );
    }

    /// A file with several mistakes reports each, in file order, not only the first.
    #[test]
    fn every_mistake_in_a_file_is_reported() {
        let text = "[client]\nsend_polcy = \"nagle\"\ndelack = \"abc\"\n[server]\nack_policy = \"bogus\"\n[link]\nwarp = 9\n";
        let e = parse(text).expect_err("four mistakes");
        let all: Vec<(Option<usize>, &str)> = std::iter::once(&e)
            .chain(&e.also)
            .map(|e| (e.line, e.key.as_str()))
            .collect();
        assert_eq!(
            all,
            [
                (Some(2), "client.send_polcy"),
                (Some(3), "client.delack"),
                (Some(5), "server.ack_policy"),
                (Some(7), "link.warp"),
            ],
            "{e}"
        );
        let shown = e.to_string();
        assert_eq!(shown.lines().count(), 4, "{shown}");
        assert!(shown.lines().all(|l| l.starts_with("s.toml:")), "{shown}");
    }

    #[test]
    fn empty_file_gives_defaults() {
        let s = parse("").unwrap();
        assert_eq!(s.name, "scenario");
        assert_eq!(s.seed, 1);
        assert_eq!(s.duration, Duration::from_secs(60));
        assert_eq!(s.forward, LinkConfig::default());
        assert_eq!(s.reverse, LinkConfig::default());
        assert_eq!(s.forward.rate_bps, 1e9);
        assert_eq!(s.forward.delay, Duration::from_micros(50));
        assert_eq!(s.forward.queue_bytes, 256_000);
        assert_eq!(s.forward.framing, Framing::Ethernet);
        assert_eq!(
            format!("{:?}", s.client.tcp),
            format!("{:?}", Config::default())
        );
        assert_eq!(
            format!("{:?}", s.server.tcp),
            format!("{:?}", Config::default())
        );
        assert_eq!(s.client.isn, None);
        assert_eq!(
            s.workload,
            Workload::RequestResponse {
                request: vec![100],
                request_gap: Duration::ZERO,
                response: vec![100],
                response_gap: Duration::ZERO,
                response_jitter: Duration::ZERO,
                outstanding: 1,
                think: Duration::ZERO,
                requests: None,
            }
        );
        assert_eq!(format!("{:?}", Scenario::default()), format!("{s:?}"));
    }

    #[test]
    fn design_sketch_parses() {
        let s = parse(
            r#"
name = "cheshire-100000"
seed = 1
duration = "10s"                 # simulated time cap

[link]
rate = "1Gbps"
delay = "50us"
queue = "256KB"
loss = 0.0
ber = 0.0
framing = "ethernet"

[client]
mss = 1448
send_policy = "nodelay"
ack_policy = "delayed"
delack = "200ms"
rcv_buf = "64KB"
snd_buf = "256KB"
options = ["timestamps"]
loss_is = "congestion"

[workload]
type = "request-response"
request = [100000]
request_gap = "0ms"
response = [1]
outstanding = 1
"#,
        )
        .unwrap();
        assert_eq!(s.name, "cheshire-100000");
        assert_eq!(s.duration, Duration::from_secs(10));
        assert_eq!(s.client.tcp.mss, 1448);
        assert_eq!(s.client.tcp.rcv_buf, 64_000);
        assert!(s.client.tcp.options.timestamps);
        assert!(!s.server.tcp.options.timestamps);
        match s.workload {
            Workload::RequestResponse {
                request, response, ..
            } => {
                assert_eq!(request, vec![100_000]);
                assert_eq!(response, vec![1]);
            }
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn every_documented_default_is_the_default() {
        let type_of = |short: &str| {
            WORKLOAD_TYPES
                .iter()
                .find(|(_, keys)| keys.contains(&short))
                .map(|(t, _)| format!("workload.type={t:?}"))
        };
        for k in KEYS {
            let default = k.default_value();
            let mut base: Vec<String> = Vec::new();
            if let Some(t) = k.key.strip_prefix("workload.").and_then(type_of) {
                base.push(t);
            }
            let Ok(expected) = Scenario::from_str("", "<string>", &base) else {
                panic!("base for {}", k.key)
            };
            let mut with = base.clone();
            with.push(format!("{}={default}", k.key));
            if default.starts_with("none")
                || default.starts_with("the file")
                || default.starts_with("link.")
            {
                continue;
            }
            let got = Scenario::from_str("", "<string>", &with)
                .unwrap_or_else(|e| panic!("documented default of {} does not parse: {e}", k.key));
            assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{}", k.key);
        }
        assert!(KEYS.iter().any(|k| k.key == "server.dupack_threshold"));
        assert!(KEYS.iter().any(|k| k.key == "link.reverse.duplicate"));
        let policy = KEYS.iter().find(|k| k.key == "client.send_policy").unwrap();
        assert_eq!(
            policy.default_value(),
            format!("{:?}", Config::default().send_policy.to_string())
        );
    }

    #[test]
    fn help_shows_the_defaults_of_the_code() {
        let shown = |key: &str| KEYS.iter().find(|k| k.key == key).unwrap().default_value();
        let c = Config::default();
        assert_eq!(
            shown("client.send_policy"),
            format!("\"{}\"", c.send_policy)
        );
        assert_eq!(shown("server.ack_policy"), format!("\"{}\"", c.ack_policy));
        assert_eq!(shown("client.send_policy"), "\"nagle\"");
        assert_eq!(shown("server.ack_policy"), "\"delayed\"");
        assert_eq!(shown("server.delack_tick"), "\"none\"");
        assert_eq!(shown("link.forward.rate"), "link.rate");
        // Engine and link keys are rendered from the code; where the table's
        // literal is a value, it must say the same (no stale docs).
        for k in KEYS {
            let short = k.key.split_once('.').map_or("", |(_, s)| s);
            let rendered = match k.key.split('.').next() {
                Some("client" | "server") => host_default(short),
                Some("link") if !short.contains('.') => link_default(short),
                _ => continue,
            };
            // Host keys outside `Config` (isn, memory) keep their literal.
            let Some(rendered) = rendered else { continue };
            if !k.default.starts_with('(') {
                assert_eq!(rendered, k.default, "{}", k.key);
            }
        }
    }

    #[test]
    fn link_directions_inherit_from_link() {
        let s = parse(
            r#"
[link]
rate = "10Mbps"
delay = "5ms"
loss = 0.01
[link.reverse]
rate = "56kbps"
framing = "raw"
[link.forward]
queue = 0
"#,
        )
        .unwrap();
        assert_eq!(s.forward.rate_bps, 10e6);
        assert_eq!(s.reverse.rate_bps, 56e3);
        assert_eq!(s.forward.delay, Duration::from_millis(5));
        assert_eq!(s.reverse.delay, Duration::from_millis(5));
        assert_eq!(s.forward.loss, 0.01);
        assert_eq!(s.reverse.loss, 0.01);
        assert_eq!(s.forward.framing, Framing::Ethernet);
        assert_eq!(s.reverse.framing, Framing::Raw);
        assert_eq!(s.forward.queue_bytes, 0);
        assert_eq!(s.reverse.queue_bytes, 256_000);
        // Dotted keys and inline tables are the same thing.
        let t = parse("link.forward = { rate = \"unlimited\" }\nlink.delay = \"1ms\"").unwrap();
        assert_eq!(t.forward.rate_bps, 0.0);
        assert_eq!(t.reverse.rate_bps, 1e9);
        assert_eq!(t.reverse.delay, Duration::from_millis(1));
    }

    #[test]
    fn size_lists_expand_runs() {
        let s = parse("[workload]\nrequest = [100, \"10x3\", \"1KB\", \"2KiBx2\"]\nresponse = 7")
            .unwrap();
        let Workload::RequestResponse {
            request, response, ..
        } = s.workload
        else {
            panic!()
        };
        assert_eq!(request, vec![100, 10, 10, 10, 1000, 2048, 2048]);
        assert_eq!(response, vec![7]);
        let s = parse("[workload]\nrequest = [\"10x50\"]").unwrap();
        let Workload::RequestResponse { request, .. } = s.workload else {
            panic!()
        };
        assert_eq!(request, vec![10; 50]);
    }

    #[test]
    fn other_workloads() {
        let s =
            parse("[workload]\ntype = \"bulk\"\nbytes = \"1MB\"\ndirection = \"server-to-client\"")
                .unwrap();
        assert_eq!(
            s.workload,
            Workload::Bulk {
                bytes: 1_000_000,
                write_size: 65_536,
                direction: Direction::ServerToClient
            }
        );
        let s = parse("[workload]\ntype = \"interactive\"\ninterval = \"50ms\"").unwrap();
        assert_eq!(
            s.workload,
            Workload::Interactive {
                keystrokes: 100,
                interval: Duration::from_millis(50),
                size: 1
            }
        );
    }

    #[test]
    fn ack_policy_keys() {
        let s = parse(
            r#"
[client]
ack_policy = "interactivity:4"
delack = "250ms"
delack_count = "full"
delack_tick = "250ms"
window_update = "delayed"
[server]
ack_policy = "adaptive"
adaptive_k = 2
adaptive_min = "5ms"
adaptive_max = "300ms"
delack_tick = "none"
"#,
        )
        .unwrap();
        let c = &s.client.tcp;
        assert_eq!(c.ack_policy, AckPolicyKind::Interactivity(4));
        assert_eq!(c.delack_count, DelackCount::Full);
        assert_eq!(c.delack_tick, Some(Duration::from_millis(250)));
        assert_eq!(c.window_update, WindowUpdate::Delayed);
        let t = &s.server.tcp;
        assert_eq!(t.ack_policy, AckPolicyKind::Adaptive);
        assert_eq!(t.adaptive_k, 2.0);
        assert_eq!(t.adaptive_min, Duration::from_millis(5));
        assert_eq!(t.adaptive_max, Duration::from_millis(300));
        assert_eq!(t.delack_tick, None);
        assert_eq!(t.window_update, WindowUpdate::Immediate);
        assert_err(
            parse("[client]\ndelack_count = \"some\""),
            "s.toml",
            Some(2),
            "client.delack_count",
            "\"any\" or \"full\"",
        );
        assert_err(
            parse("[client]\ndelack_tick = \"600ms\""),
            "s.toml",
            Some(2),
            "client.delack_tick",
            "500ms",
        );
        assert_err(
            parse("[server]\nwindow_update = \"later\""),
            "s.toml",
            Some(2),
            "server.window_update",
            "immediate",
        );
        assert_err(
            parse("[server]\nadaptive_k = -1"),
            "s.toml",
            Some(2),
            "server.adaptive_k",
            "positive",
        );
        assert_err(
            parse("[server]\nadaptive_min = \"400ms\"\nadaptive_max = \"300ms\""),
            "s.toml",
            Some(2),
            "server.adaptive_min",
            "adaptive_max",
        );
        assert_err(
            parse("[server]\nack_policy = \"interactivity:many\""),
            "s.toml",
            Some(2),
            "server.ack_policy",
            "interactivity:4",
        );
    }

    #[test]
    fn host_keys() {
        let s = parse(
            r#"
[server]
ack_policy = "immediate"
delack = "100ms"
delack_segments = 3
options = ["wscale", "sack", "nak"]
loss_is = "noise"
slow_start = "double"
rto_min = "1s"
rto_max = "120s"
initial_window = 4
isn = 4294967295
"#,
        )
        .unwrap();
        let t = &s.server.tcp;
        assert_eq!(t.ack_policy, AckPolicyKind::Immediate);
        assert_eq!(t.delack, Duration::from_millis(100));
        assert_eq!(t.delack_segments, 3);
        assert!(t.options.window_scale && t.options.sack && t.options.nak && !t.options.timestamps);
        assert_eq!(t.loss_is, LossIs::Noise);
        assert_eq!(t.slow_start, SlowStart::Double);
        assert_eq!(t.rto_min, Duration::from_secs(1));
        assert_eq!(t.initial_window, 4);
        assert_eq!(s.server.isn, Some(u32::MAX));
        assert_eq!(s.client.tcp.ack_policy, Config::default().ack_policy);
    }

    #[test]
    fn overrides() {
        let text = "[workload]\nrequest = [100]\n[client]\nmss = 1448\n";
        let s = parse_set(
            text,
            &[
                "workload.request=[18225]",
                "client.send_policy=nodelay",
                "link.rate=\"10Mbps\"",
                "link.reverse={delay=\"3ms\"}",
                " seed = 42 ",
                "server.options=timestamps",
            ],
        )
        .unwrap();
        let Workload::RequestResponse { request, .. } = &s.workload else {
            panic!()
        };
        assert_eq!(request, &vec![18225]);
        assert_eq!(s.client.tcp.send_policy, SendPolicyKind::NoDelay);
        assert_eq!(s.client.tcp.mss, 1448, "untouched file values stay");
        assert_eq!(s.forward.rate_bps, 10e6);
        assert_eq!(s.reverse.rate_bps, 10e6);
        assert_eq!(s.reverse.delay, Duration::from_millis(3));
        assert_eq!(s.seed, 42);
        assert!(s.server.tcp.options.timestamps);
        // A later override wins; switching the workload type works from the command line.
        let s = parse_set(
            "",
            &[
                "workload.type=bulk",
                "workload.bytes=1000",
                "workload.bytes=\"2KB\"",
            ],
        )
        .unwrap();
        assert!(matches!(s.workload, Workload::Bulk { bytes: 2000, .. }));
    }

    #[test]
    fn override_errors_name_the_set() {
        assert_err(
            parse_set("", &["link.rate=-1Mbps"]),
            "--set link.rate",
            None,
            "link.rate",
            "must not be negative",
        );
        let e = parse_set("", &["link.rate=-1Mbps"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set link.rate: bad rate \"-1Mbps\": must not be negative"
        );
        assert_err(
            parse_set("", &["client.mss"]),
            "--set client.mss",
            None,
            "client.mss",
            "KEY=VALUE",
        );
        assert_err(
            parse_set("", &["client.msss=1"]),
            "--set client.msss",
            None,
            "client.msss",
            "did you mean `client.mss`",
        );
        assert_err(
            parse_set("", &["client.mss="]),
            "--set client.mss",
            None,
            "client.mss",
            "missing value",
        );
        assert_err(
            parse_set("", &["workload.request=[1,"]),
            "--set workload.request",
            None,
            "workload.request",
            "bad TOML",
        );
        assert_err(parse_set("", &["..=1"]), "--set ..", None, "..", "bad key");
        assert_err(
            parse_set("", &["client.send_policy=telepathy"]),
            "--set client.send_policy",
            None,
            "client.send_policy",
            "unknown send policy",
        );
    }

    #[test]
    fn errors_name_file_line_and_key() {
        // Unknown key, with a suggestion.
        assert_err(
            parse("seed = 3\n[client]\nsend_polcy = \"nodelay\""),
            "s.toml",
            Some(3),
            "client.send_polcy",
            "did you mean `client.send_policy`",
        );
        // Unknown key with no near match lists the known ones.
        assert_err(
            parse("[link]\n\nwarp = 9"),
            "s.toml",
            Some(3),
            "link.warp",
            "known keys in [link]: rate, delay",
        );
        // Unknown table, even an empty one.
        assert_err(
            parse("[clinet]"),
            "s.toml",
            Some(1),
            "clinet",
            "did you mean `client`",
        );
        assert_err(
            parse("[link.sideways]\nrate = \"1Gbps\""),
            "s.toml",
            Some(1),
            "link.sideways",
            "unknown key",
        );
        // A table where a value belongs, and the other way round.
        assert_err(
            parse("\nlink = 5"),
            "s.toml",
            Some(2),
            "link",
            "expected a table",
        );
        assert_err(
            parse("[client.mss]\nx = 1"),
            "s.toml",
            Some(1),
            "client.mss",
            "expected a value",
        );
        // Wrong type.
        assert_err(
            parse("[client]\nmss = \"big\""),
            "s.toml",
            Some(2),
            "client.mss",
            "expected an integer, found string",
        );
        assert_err(
            parse("[link]\ndelay = 50"),
            "s.toml",
            Some(2),
            "link.delay",
            "with a unit",
        );
        // Bad values.
        let e = parse("# comment\n[link]\n\nrate = \"-1Mbps\"").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.toml:4: link.rate: bad rate \"-1Mbps\": must not be negative"
        );
        assert_err(
            parse("[link.forward]\nloss = 1.5"),
            "s.toml",
            Some(2),
            "link.forward.loss",
            "outside [0, 1]",
        );
        assert_err(
            parse("[link]\nber = nan"),
            "s.toml",
            Some(2),
            "link.ber",
            "outside [0, 1]",
        );
        assert_err(
            parse("[link]\nframing = \"token-ring\""),
            "s.toml",
            Some(2),
            "link.framing",
            "unknown framing",
        );
        assert_err(
            parse("[link]\nqueue = -5"),
            "s.toml",
            Some(2),
            "link.queue",
            "negative",
        );
        assert_err(
            parse("duration = \"0s\""),
            "s.toml",
            Some(1),
            "duration",
            "positive",
        );
        assert_err(
            parse("seed = -1"),
            "s.toml",
            Some(1),
            "seed",
            "out of range",
        );
        assert_err(
            parse("[server]\nisn = 4294967296"),
            "s.toml",
            Some(2),
            "server.isn",
            "out of range",
        );
        assert_err(
            parse("[server]\noptions = [\"sack\", \"warp\"]"),
            "s.toml",
            Some(2),
            "server.options",
            "unknown option",
        );
        assert_err(
            parse("[server]\nloss_is = \"bad luck\""),
            "s.toml",
            Some(2),
            "server.loss_is",
            "congestion",
        );
        assert_err(
            parse("[client]\nack_policy = \"never\""),
            "s.toml",
            Some(2),
            "client.ack_policy",
            "unknown ACK policy",
        );
        // Config::validate failures name the key.
        assert_err(
            parse("[client]\n\ndelack = \"600ms\""),
            "s.toml",
            Some(3),
            "client.delack",
            "500ms",
        );
        assert_err(
            parse("[server]\nrcv_buf = 0"),
            "s.toml",
            Some(2),
            "server.rcv_buf",
            "at least 1 byte",
        );
        // A window under one MSS is legal (RFC 1122 4.2.3.4 copes with it).
        assert!(parse("[server]\nrcv_buf = 500").is_ok());
        assert_err(
            parse("[client]\nrto_min = \"90s\""),
            "s.toml",
            Some(2),
            "client.rto_min",
            "rto_max",
        );
        // Size lists: the element's own line.
        assert_err(
            parse("[workload]\nrequest = [\n  100,\n  \"-3\",\n]"),
            "s.toml",
            Some(4),
            "workload.request",
            "negative",
        );
        assert_err(
            parse("[workload]\nrequest = [\"10x\"]"),
            "s.toml",
            Some(2),
            "workload.request",
            "SIZExCOUNT",
        );
        assert_err(
            parse("[workload]\nrequest = [\"1x10000000\"]"),
            "s.toml",
            Some(2),
            "workload.request",
            "too many writes",
        );
        assert_err(
            parse("[workload]\nresponse = [0]"),
            "s.toml",
            Some(2),
            "workload.response",
            "at least 1 byte",
        );
        assert_err(
            parse("[workload]\nresponse = []"),
            "s.toml",
            Some(2),
            "workload.response",
            "at least one write",
        );
        assert_err(
            parse("[workload]\noutstanding = 0"),
            "s.toml",
            Some(2),
            "workload.outstanding",
            "out of range",
        );
        // Workload keys must belong to the chosen type.
        assert_err(
            parse("[workload]\ntype = \"bulk\"\nrequest = [1]"),
            "s.toml",
            Some(3),
            "workload.request",
            "belongs to \"request-response\"",
        );
        assert_err(
            parse("[workload]\nbytes = 5"),
            "s.toml",
            Some(2),
            "workload.bytes",
            "not a key of workload type \"request-response\"",
        );
        assert_err(
            parse("[workload]\ntype = \"chat\""),
            "s.toml",
            Some(2),
            "workload.type",
            "unknown workload type",
        );
        // Syntax errors and duplicate keys carry a line.
        assert_err(
            parse("seed = 1\nname = \"x"),
            "s.toml",
            Some(2),
            "",
            "TOML syntax",
        );
        assert_err(
            parse("[link]\nrate = \"1Gbps\"\nrate = \"2Gbps\""),
            "s.toml",
            Some(3),
            "",
            "TOML syntax",
        );
        assert_err(
            parse("[[client]]\nmss = 1"),
            "s.toml",
            Some(1),
            "client",
            "arrays of tables",
        );
    }

    #[test]
    fn settings_that_can_never_work_are_errors() {
        // A drop-tail queue that cannot hold one full-sized frame drops every one.
        let e = parse("[link]\nqueue = \"1000B\"").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("link.queue", Some(2)), "{e}");
        assert!(
            e.message
                .contains("cannot hold one full-sized frame (1538 wire bytes: MSS 1460"),
            "{e}"
        );
        assert!(parse("[link]\nqueue = 1538").is_ok());
        assert!(parse("[link]\nqueue = 1537").is_err());
        // The smaller of the two MSS options bounds the frame; raw framing adds nothing.
        assert!(parse("[link]\nqueue = 1040\nframing = \"raw\"\n[server]\nmss = 1000").is_ok());
        assert_err(
            parse("[link.forward]\nqueue = 1039\nframing = \"raw\"\n[client]\nmss = 1000"),
            "s.toml",
            Some(2),
            "link.forward.queue",
            "1040 wire bytes",
        );
        // A bulk transfer's ACK-only direction carries no full frame.
        let ack_only = "[link.reverse]\nqueue = 200\n[workload]\ntype = \"bulk\"";
        assert!(parse(ack_only).is_ok());
        assert_err(
            parse_set(ack_only, &["workload.direction=server-to-client"]),
            "s.toml",
            Some(2),
            "link.reverse.queue",
            "every full segment would be dropped",
        );
        assert_err(
            parse("[link]\nloss = 1"),
            "s.toml",
            Some(2),
            "link.loss",
            "loses every frame",
        );
        assert_err(
            parse("[link.reverse]\nber = 1.0"),
            "s.toml",
            Some(2),
            "link.reverse.ber",
            "corrupts every frame",
        );
        assert_err(
            parse("[workload]\ntype = \"bulk\"\nbytes = \"0B\""),
            "s.toml",
            Some(3),
            "workload.bytes",
            "at least 1 byte",
        );
        assert_err(
            parse("[workload]\ntype = \"interactive\"\nkeystrokes = 0"),
            "s.toml",
            Some(3),
            "workload.keystrokes",
            "out of range (1 to",
        );
    }

    /// A range in an error is the range the value must really be in, and a
    /// misspelled name gets the same "did you mean" as a misspelled key.
    #[test]
    fn ranges_are_the_real_ones_and_names_get_suggestions() {
        for (set, key, range) in [
            (
                "client.mss=-1",
                "client.mss",
                "-1 is out of range (64 to 65535)",
            ),
            (
                "client.mss=0",
                "client.mss",
                "0 is out of range (64 to 65535)",
            ),
            (
                "server.delack_segments=0",
                "server.delack_segments",
                "(1 to 4294967295)",
            ),
            (
                "client.initial_window=0",
                "client.initial_window",
                "(1 to 4294967295)",
            ),
            (
                "client.dupack_threshold=0",
                "client.dupack_threshold",
                "(1 to 4294967295)",
            ),
        ] {
            let e = parse_set("", &[set]).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert!(e.message.contains(range), "{set}: {e}");
        }
        assert_eq!(
            parse_set("", &["client.mss=64"]).unwrap().client.tcp.mss,
            64
        );
        for (set, want) in [
            ("client.send_policy=nagel", "did you mean \"nagle\"?"),
            ("server.ack_policy=delyed", "did you mean \"delayed\"?"),
            (
                "server.window_update=imediate",
                "did you mean \"immediate\"?",
            ),
            ("server.delack_count=ful", "did you mean \"full\"?"),
            ("client.loss_is=nosie", "did you mean \"noise\"?"),
            ("client.slow_start=doubel", "did you mean \"double\"?"),
            ("client.options=[\"sak\"]", "did you mean \"sack\"?"),
            ("link.framing=ethrenet", "did you mean \"ethernet\"?"),
            ("workload.type=bluk", "did you mean \"bulk\"?"),
        ] {
            let e = parse_set("", &[set]).unwrap_err();
            assert!(e.message.contains(want), "{set}: {e}");
        }
        let e = parse_set(
            "[workload]\ntype = \"bulk\"",
            &["workload.direction=client-to-sever"],
        )
        .unwrap_err();
        assert!(
            e.message.contains("did you mean \"client-to-server\"?"),
            "{e}"
        );
    }

    #[test]
    fn a_profile_applies_before_the_files_own_keys() {
        let s = parse("[client]\nprofile = \"linux\"\nsend_policy = \"nodelay\"").unwrap();
        let linux = tinygram_proto::profile::find("linux").unwrap().config();
        assert_eq!(s.client.profile, "linux");
        // The profile's values, except where the file says otherwise.
        assert_eq!(s.client.tcp.ack_policy, linux.ack_policy);
        assert_eq!(s.client.tcp.rto_max, linux.rto_max);
        assert_eq!(s.client.tcp.send_policy, SendPolicyKind::NoDelay);
        assert_eq!(s.server.profile, "rfc");
        assert_eq!(s.server.tcp.ack_policy, Config::default().ack_policy);
        // --set works the same way; the old drill name is an alias.
        let s = parse_set("", &["server.profile=linux", "client.profile=tinygram"]).unwrap();
        assert_eq!(s.server.tcp.ack_policy, linux.ack_policy);
        assert_eq!(s.client.profile, "rfc");
        let e = parse_set("", &["server.profile=linx"]).unwrap_err();
        assert_eq!(e.key, "server.profile");
        assert!(e.message.contains("did you mean \"linux\"?"), "{e}");
    }

    #[test]
    fn every_setting_and_every_profile_key_is_a_host_key() {
        // Every row of the settings table is a key of both hosts, and its
        // default, written as a file writes it, parses back to the default.
        for st in settings::SETTINGS {
            for side in ["client", "server"] {
                let key = format!("{side}.{}", st.name);
                assert!(KEYS.iter().any(|k| k.key == key), "{key} is not a host key");
                let text = setting_text(st, st.default_value());
                let sc = parse_set("", &[&format!("{key}={text}")])
                    .unwrap_or_else(|e| panic!("{key}={text}: {e}"));
                assert_eq!(st.get(&sc.server.tcp), st.default_value(), "{key}");
            }
        }
        // Every profile row, its value written in scenario syntax, sets what
        // the profile sets.
        for p in tinygram_proto::profile::PROFILES {
            let cfg = p.config();
            for row in p.rows() {
                let st = settings::find(row.key).unwrap_or_else(|e| panic!("{}: {e}", p.name));
                let text = setting_text(st, st.get(&cfg));
                let sc = parse_set(
                    "",
                    &[
                        &format!("client.profile={}", p.name),
                        &format!("server.{}={text}", row.key),
                    ],
                )
                .unwrap_or_else(|e| panic!("{}: {}={text}: {e}", p.name, row.key));
                assert_eq!(
                    st.get(&sc.server.tcp),
                    st.get(&cfg),
                    "{}: {}",
                    p.name,
                    row.key
                );
                assert_eq!(
                    format!("{:?}", sc.client.tcp),
                    format!("{cfg:?}"),
                    "{}",
                    p.name
                );
            }
        }
    }

    #[test]
    fn settings_once_profile_only_are_host_keys() {
        let s = parse(
            r#"
[client]
congestion = "cubic"
cubic = "linux"
cwnd_validation = "linux"
window_probe = "old-seq"
wscale_buf = "2MiB"
dsack = true
rfc5961 = false
slow_start_after_idle = true
max_ooo_ranges = 10
"#,
        )
        .unwrap();
        let c = &s.client.tcp;
        assert_eq!(c.congestion.name(), "cubic");
        assert_eq!(c.wscale_buf, Some(2 << 20));
        assert!(c.dsack && !c.rfc5961 && c.slow_start_after_idle);
        assert_eq!(c.max_ooo_ranges, 10);
        assert_eq!(c.window_probe, tinygram_proto::config::WindowProbe::OldSeq);
        assert_err(
            parse("[client]\ncongestion = \"vegas\""),
            "s.toml",
            Some(2),
            "client.congestion",
            "unknown",
        );
        assert_err(
            parse("[client]\nmax_ooo_ranges = 0"),
            "s.toml",
            Some(2),
            "client.max_ooo_ranges",
            "0 is out of range (1 to 4294967295)",
        );
        let e = parse_set(
            "",
            &["server.wscale_buf=\"none\"", "client.rto_min=\"none\""],
        )
        .unwrap_err();
        assert_eq!(e.key, "client.rto_min");
    }

    #[test]
    fn from_file_names_the_path() {
        let dir =
            std::env::temp_dir().join(format!("tinygram-scenario-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("nagle-vs-delack.toml");
        std::fs::write(&path, "[client]\nmss = 1448\n[link]\nrate = \"fast\"\n").unwrap();
        let e = Scenario::from_file(&path, &[]).unwrap_err();
        assert_eq!(e.file, path.display().to_string());
        assert_eq!(e.line, Some(4));
        assert!(
            e.to_string().starts_with(&format!(
                "{}:4: link.rate: bad rate \"fast\"",
                path.display()
            )),
            "{e}"
        );
        let s = Scenario::from_file(&path, &["link.rate=1Gbps".to_string()]).unwrap();
        assert_eq!(s.name, "nagle-vs-delack");
        assert_eq!(s.client.tcp.mss, 1448);
        let missing = Scenario::from_file(&dir.join("nope.toml"), &[]).unwrap_err();
        assert!(missing.message.contains("cannot read"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn set_reaches_a_flows_table() {
        let text = "[bottleneck]\n[[flows]]\ncount = 5\nserver_host = \"s\"\nclient_hosts = [\"c\"]\n[[flows]]\nname = \"b\"\ncount = 7\nserver_host = \"s\"\nclient_hosts = [\"c\"]\nworkload = { request = [100], requests = 2 }\n";
        let sets = [
            "flows.1.count=10".to_string(),
            "flows.0.name=first".to_string(),
            "flows.1.workload.requests=4".to_string(),
        ];
        let t = Scenario::from_str(text, "<t>", &sets)
            .unwrap()
            .topology
            .unwrap();
        assert_eq!(t.groups[0].count, 5);
        assert_eq!(t.groups[1].count, 10);
        assert_eq!(t.groups[0].name, "first");
        assert_eq!(t.groups[1].name, "b");
        let plain = Scenario::from_str(text, "<t>", &[])
            .unwrap()
            .topology
            .unwrap();
        assert_ne!(
            format!("{:?}", plain.groups[1].workload),
            format!("{:?}", t.groups[1].workload)
        );
        for (set, says) in [
            ("flows.2.count=1", "from 0 to 1"),
            ("flows.x.count=1", "from 0 to 1"),
            ("flows.0=1", "flows.N.KEY"),
            ("flows.0.bogus=1", "bogus"),
            ("flows.0.count=many", "count"),
        ] {
            let e = Scenario::from_str(text, "<t>", &[set.to_string()])
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{set}: {e}");
        }
        let e = Scenario::from_str("", "<t>", &["flows.0.count=1".to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [[flows]] tables"), "{e}");
    }
}
