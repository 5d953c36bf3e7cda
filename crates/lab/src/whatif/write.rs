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
    let _ = writeln!(s, "\n[workload]\ntype = \"exchanges\"");
    let _ = writeln!(
        s,
        "think = \"{}\"   # for turns whose think time the capture hides (see [open])",
        dur(sch.think_s)
    );
    let _ = writeln!(
        s,
        "pause = \"{}\"   # for turns whose pause the capture hides (see [open])",
        dur(sch.pause_s)
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
