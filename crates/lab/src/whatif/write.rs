//! The scenario a capture implies, as a TOML file `tinygram run` accepts,
//! each value commented with the evidence it came from.

use super::schedule::Schedule;
use super::OpenKey;
use std::fmt::Write;
use tinygram_analyze::FlowInference;

/// Seconds as a scenario duration, to the microsecond: `"40.2ms"`.
pub fn dur(s: f64) -> String {
    let us = (s.max(0.0) * 1e6).round() as u64;
    tinygram_sim::units::fmt_duration(std::time::Duration::from_micros(us))
}

/// Whose TCP settings the scenario carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tcp<'a> {
    /// Each side as the capture shows it.
    Inferred,
    /// Both sides as a named stack profile, nothing inferred.
    Profile(&'a str),
}

/// A comment's text on one line.
fn one_line(s: &str) -> String {
    let s: String = s.chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    if s.chars().count() > 160 {
        let cut: String = s.chars().take(157).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// The scenario TOML; `open` becomes its `[open]` table, `samples` draws.
pub fn scenario(
    title: &str,
    inf: &FlowInference,
    sch: &Schedule,
    open: &[OpenKey],
    samples: u32,
    tcp: Tcp<'_>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {title}");
    let _ = writeln!(
        s,
        "# Written by `tinygram whatif`: each value is what the capture shows, with its evidence\n\
         # and confidence; edit any of them and run it again with `tinygram run`."
    );
    let v = &inf.path.vantage;
    let _ = writeln!(
        s,
        "# capture point: {:?} ({:?} confidence): {}",
        v.value,
        v.confidence,
        one_line(&v.evidence)
    );
    for n in &sch.notes {
        let _ = writeln!(s, "# note: {}", one_line(n));
    }
    let span: f64 = sch
        .turns
        .iter()
        .map(|t| t.captured_s.unwrap_or(0.0) + t.pause_s.unwrap_or(0.0) + t.think_s.unwrap_or(0.0))
        .sum();
    let duration = (span * 4.0 + 10.0).max(60.0).ceil();
    let _ = writeln!(
        s,
        "name = {:?}",
        title.split(':').next().unwrap_or(title).trim()
    );
    let _ = writeln!(s, "seed = 1");
    let _ = writeln!(
        s,
        "duration = \"{duration}s\"   # four times the captured conversation, and 10 s"
    );
    let keys = inf.scenario_keys();
    let mut table = String::new();
    for k in &keys {
        let (t, short) = k.key.split_once('.').unwrap_or(("", &k.key));
        let tcp_key = t == "client" || t == "server";
        // A profile alternative keeps the MSS (the path's, not the stack's).
        if tcp_key && tcp != Tcp::Inferred && short != "mss" {
            continue;
        }
        if t != table {
            let _ = writeln!(s, "\n[{t}]");
            if let (true, Tcp::Profile(p)) = (tcp_key, tcp) {
                let _ = writeln!(
                    s,
                    "profile = {p:?}   # the alternative: this stack at both ends"
                );
            }
            table = t.to_string();
        }
        let _ = writeln!(
            s,
            "{short} = {}   # {:?}: {}",
            k.value,
            k.confidence,
            one_line(&k.evidence)
        );
    }
    if let Tcp::Profile(p) = tcp {
        // A side with no key of its own above still takes the profile.
        for side in ["client", "server"] {
            if !s.contains(&format!("\n[{side}]\n")) {
                let _ = writeln!(
                    s,
                    "\n[{side}]\nprofile = {p:?}   # the alternative: this stack at both ends"
                );
            }
        }
    }
    let _ = writeln!(s, "\n[workload]\ntype = \"exchanges\"");
    let _ = writeln!(
        s,
        "think = \"0s\"   # for turns whose think time the capture hides (see [open])"
    );
    let _ = writeln!(
        s,
        "pause = \"0s\"   # for turns whose pause the capture hides (see [open])"
    );
    let _ = writeln!(s, "exchanges = [");
    for t in &sch.turns {
        let list = |v: &[u64]| {
            let items: Vec<String> = v.iter().map(u64::to_string).collect();
            format!("[{}]", items.join(", "))
        };
        let mut fields = format!(
            "request = {}, response = {}",
            list(&t.request),
            list(&t.response)
        );
        if let Some(x) = t.think_s {
            let _ = write!(fields, ", think = \"{}\"", dur(x));
        }
        if let Some(x) = t.pause_s {
            let _ = write!(fields, ", pause = \"{}\"", dur(x));
        }
        let took = t
            .captured_s
            .map_or(String::new(), |c| format!(", took {:.3} ms", c * 1e3));
        let _ = writeln!(s, "  {{ {fields} }},   # at {:.6} s{took}", t.at_s);
    }
    let _ = writeln!(s, "]");
    if !open.is_empty() {
        let _ = writeln!(
            s,
            "\n[open]   # what the capture cannot show: each run takes a point of this space"
        );
        let _ = writeln!(s, "samples = {samples}");
        for o in open {
            let _ = writeln!(s, "# {}", one_line(&o.why));
            let _ = writeln!(s, "{:?} = {}", o.key, o.spec);
        }
    }
    s
}

/// The selected flows of a what-if as one many-flow scenario (`[[flows]]`,
/// one group per flow with its own hosts' settings, workload and open
/// values), joined by a bottleneck at the slowest inferred rate and the
/// median inferred one-way delay. One access link serves every host, so
/// flows whose round trips differ share one (the file says which).
pub fn many_flow(r: &super::Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {} flows of {}, written by `tinygram whatif` as one many-flow scenario.\n\
         # Each [[flows]] group is one captured connection, with the settings and\n\
         # turns its own scenario-flow-N.toml gives; edit and `tinygram run` it.",
        r.flows.len(),
        r.capture
    );
    let mut delays: Vec<f64> = r
        .flows
        .iter()
        .map(|f| f.inference.path.one_way_delay_s.value)
        .filter(|d| *d > 0.0)
        .collect();
    delays.sort_by(f64::total_cmp);
    let delay = delays.get(delays.len() / 2).copied().unwrap_or(0.0);
    let rate = r
        .flows
        .iter()
        .filter_map(|f| f.inference.path.bottleneck_bps.value)
        .fold(f64::INFINITY, f64::min);
    for f in &r.flows {
        let _ = writeln!(
            s,
            "# flow {}: {} -> {}, one-way delay {} ",
            f.flow,
            f.client,
            f.server,
            dur(f.inference.path.one_way_delay_s.value)
        );
    }
    let _ = writeln!(s, "name = \"whatif-flows\"\nseed = 1");
    let longest = r
        .flows
        .iter()
        .filter_map(|f| duration_of(&f.scenario))
        .fold(60.0, f64::max);
    let _ = writeln!(s, "duration = \"{longest}s\"");
    let _ = writeln!(
        s,
        "\n[link]   # each host's access link: fast and short, the path is the bottleneck\nrate = \"10Gbps\"\ndelay = \"0us\"\nqueue = 0"
    );
    let _ = writeln!(s, "\n[bottleneck]");
    let mut rate_open = None;
    if rate.is_finite() {
        let _ = writeln!(
            s,
            "rate = \"{rate:.0}bps\"   # the slowest rate the captures show"
        );
    } else {
        let _ = writeln!(
            s,
            "rate = \"100Mbps\"   # no capture showed its bottleneck's rate: see [open]"
        );
        rate_open = Some(
            "\"bottleneck.rate\" = { values = [\"100Mbps\", \"10Mbps\", \"1Gbps\"] }   # no capture showed it",
        );
    }
    let _ = writeln!(
        s,
        "delay = \"{}\"   # the median one-way delay of the flows",
        dur(delay)
    );
    let mut opens = Vec::new();
    for (i, f) in r.flows.iter().enumerate() {
        let _ = writeln!(
            s,
            "\n[[flows]]\nname = \"flow-{}\"\ncount = 1\nclient_hosts = \"c{}\"\nserver_host = \"s{}\"",
            f.flow, f.flow, f.flow
        );
        let mut section = "";
        let mut in_array = false;
        for line in f.scenario.lines() {
            let t = line.trim_start();
            if in_array {
                // The turns of `exchanges = [`, through its closing `]`.
                let _ = writeln!(s, "{line}");
                in_array = !t.starts_with(']');
                continue;
            }
            if t.starts_with('[') && !t.starts_with("[[") && t.ends_with(']')
                || t.starts_with("[open]")
            {
                section = match t.split(']').next().unwrap_or("").trim_start_matches('[') {
                    "client" => "client",
                    "server" => "server",
                    "workload" => "workload",
                    "open" => "open",
                    _ => "",
                };
                continue;
            }
            match section {
                "client" | "server" | "workload" if t.contains('=') && !t.starts_with('#') => {
                    let _ = writeln!(s, "{section}.{t}");
                    in_array = t.trim_end().ends_with('[');
                }
                "open" if t.contains('=') && !t.starts_with('#') && !t.starts_with("samples") => {
                    if let Some((k, v)) = t.split_once('=') {
                        let key = k.trim().trim_matches('"');
                        // The path is the shared bottleneck's, opened below.
                        if !key.starts_with("link.") {
                            opens.push(format!("\"flows.{i}.{key}\" = {}", v.trim()));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    opens.extend(rate_open.map(String::from));
    if !opens.is_empty() {
        let _ = writeln!(
            s,
            "\n[open]   # what the captures cannot show, per flow\nsamples = 8"
        );
        for o in opens {
            let _ = writeln!(s, "{o}");
        }
    }
    s
}

/// The `duration` a scenario text sets, in seconds.
fn duration_of(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("duration = "))?;
    let v = line.split('"').nth(1)?;
    tinygram_sim::units::parse_duration(v)
        .ok()
        .map(|d| d.as_secs_f64())
}
