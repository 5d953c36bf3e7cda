//! `tinygram whatif`: the run library's what-if, printed, as JSON, or
//! written to a directory (the scenario, the JSON and an HTML page).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tinygram_analyze::{Flow, FlowTable};
use tinygram_lab::whatif::{self, Options, Report};

/// The arguments of `tinygram whatif`.
#[derive(clap::Args, Debug)]
pub struct WhatifArgs {
    /// The capture (pcap or pcapng) of the slow application.
    pub capture: PathBuf,
    /// The flow to replay, by its number (1-based, in the order `diagnose` lists flows).
    #[arg(long, value_name = "N", conflicts_with = "busiest")]
    pub flow: Option<usize>,
    /// Replay the N flows with the most payload (default 1).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub busiest: usize,
    /// The side whose send policy to vary (default: the side TCP held longest).
    #[arg(long, value_parser = ["client", "server"])]
    pub side: Option<String>,
    /// An extra alternative: `--try 'server.delack=10ms'`, several keys joined with ';'.
    #[arg(long = "try", value_name = "KEY=VALUE")]
    pub tries: Vec<String>,
    /// Draws of the values the capture cannot show, per configuration.
    #[arg(long, default_value_t = 8)]
    pub samples: u32,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the scenario of each flow, whatif.json and index.html into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Simulations in parallel (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress messages.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `tinygram whatif`.
pub fn run(a: &WhatifArgs) -> ExitCode {
    let opts = Options {
        flow: a.flow,
        busiest: a.busiest,
        side: a.side.clone(),
        tries: a.tries.clone(),
        samples: a.samples,
        threads: a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let quiet = a.quiet || a.json;
    let report = match whatif::whatif_file(&a.capture, &opts, &|m| {
        if !quiet {
            eprintln!("whatif: {m}");
        }
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if a.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: cannot encode the report: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", whatif::table::text(&report));
    }
    if let Some(dir) = &a.out {
        match write_dir(dir, &report, &a.capture) {
            Ok(files) => {
                if !quiet {
                    eprintln!("whatif: wrote {}", files.join(", "));
                }
            }
            Err(e) => {
                eprintln!("error: {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// The scenario of each flow, the JSON report and the HTML page.
fn write_dir(dir: &Path, r: &Report, capture: &Path) -> Result<Vec<String>, String> {
    // Only the replayed flows' segments: a survey, then those flows.
    let mut table = FlowTable::survey(capture, &mut |_| {}).map_err(|e| e.to_string())?;
    for f in &r.flows {
        table.select_number(f.flow);
    }
    let original = table
        .read_selected(capture, &mut |_| {})
        .map_err(|e| e.to_string())?
        .flows;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create it: {e}"))?;
    let mut files = Vec::new();
    let mut put = |name: String, text: &str| -> Result<(), String> {
        let p = dir.join(&name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {name}: {e}"))?;
        files.push(p.display().to_string());
        Ok(())
    };
    for f in &r.flows {
        put(format!("scenario-flow-{}.toml", f.flow), &f.scenario)?;
    }
    if r.flows.len() > 1 {
        put("scenario-flows.toml".into(), &whatif::write::many_flow(r))?;
    }
    let json = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    put("whatif.json".into(), &json)?;
    put("index.html".into(), &html(r, &original))?;
    Ok(files)
}

/// The exchange to draw: the turn that took longest in the capture.
fn stalled_turn(f: &whatif::FlowWhatif) -> Option<usize> {
    let c = &f.baseline.captured_ms;
    (0..c.len())
        .filter(|&i| c[i].is_finite())
        .max_by(|&a, &b| c[a].total_cmp(&c[b]))
}

/// The time-sequence graph (SVG) of turn `k` of the flow in `pcap`, for the
/// data of `dir`, with a little of what came before and after.
fn turn_svg(f: &Flow, pick: TurnPick, dir: usize, title: &str) -> Result<String, String> {
    let ex = tinygram_analyze::exchanges(f);
    let e = match pick {
        TurnPick::Exchange(i) => ex.exchanges.get(i),
        TurnPick::Answered(k) => ex
            .exchanges
            .iter()
            .filter(|e| e.request_bytes > 0 && e.response_bytes > 0)
            .nth(k),
    }
    .ok_or("the exchange is not in the capture")?;
    let took = e.completion_at_capture_s.unwrap_or(0.0);
    let margin = (took * 0.1).max(0.001);
    let ts = tinygram_analyze::timeseq::TimeSeq::of(f, dir);
    let w = ts.window(e.start_s - margin, e.start_s + took + margin, title);
    tinygram_report::plot::render_svg_string(&w)
}

/// Turn `k` of a replay's (only) flow.
fn first_turn_svg(
    cap: &tinygram_analyze::Capture,
    k: usize,
    dir: usize,
    title: &str,
) -> Result<String, String> {
    let flows = tinygram_analyze::flows(cap);
    let f = flows.first().ok_or("no such flow")?;
    turn_svg(f, TurnPick::Answered(k), dir, title)
}

/// Which exchange of a capture to draw.
#[derive(Clone, Copy)]
enum TurnPick {
    /// By its index among all the analyzer's exchanges (the original capture).
    Exchange(usize),
    /// The k-th answered request (a replay, whose turns are the replayed ones).
    Answered(usize),
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The HTML page: inferred values, the replay's match, the alternatives, and
/// the slowest exchange as captured, as replayed and under the best fix.
pub fn html(r: &Report, original: &[(usize, Flow)]) -> String {
    use std::fmt::Write;
    let mut s = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>tinygram whatif</title>\n<style>\
         body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;font-size:90%}\
         td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}\
         .warn{background:#fee;border:1px solid #c00;padding:0.6em}.plots{display:flex;gap:1em;flex-wrap:wrap}\
         .plots figure{margin:0;flex:1 1 400px}.plots svg{width:100%;height:auto}pre{background:#f6f6f6;padding:0.6em;overflow:auto}\
         </style></head><body>\n",
    );
    let _ = writeln!(
        s,
        "<h1>What would each fix have done?</h1><p>Capture: <code>{}</code></p>",
        esc(&r.capture)
    );
    for f in &r.flows {
        let b = &f.baseline;
        let _ = writeln!(
            s,
            "<h2>Flow {}: {} &rarr; {}</h2>",
            f.flow,
            esc(&f.client),
            esc(&f.server)
        );
        if !b.matches {
            let _ = writeln!(
                s,
                "<p class=\"warn\">The replay does not match the capture (median error {:.0} % per turn): read the alternatives as directions, not numbers. {}</p>",
                b.median_rel_error * 100.0,
                esc(b.likely_cause.as_deref().unwrap_or(""))
            );
        }
        let _ = writeln!(
            s,
            "<p>Replay of the capture: median error {:.1} %, p95 {:.1} % per turn, over {} run(s) of the values the capture cannot show. Data held: {} ({}).</p>",
            b.median_rel_error * 100.0,
            b.p95_rel_error * 100.0,
            f.points,
            esc(&f.held_side),
            esc(&f.held_why)
        );
        let _ = writeln!(s, "<table><tr><th>configuration</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th><th>total s</th><th>data segments</th><th>small segments</th><th>wire kB</th><th>p50 vs replay</th><th>Pareto-best</th></tr>");
        let row = |s: &mut String, name: &str, m: &whatif::Metrics, ch: String, pareto: bool| {
            let d = |x: &tinygram_lab::Distribution, k: f64| {
                let (lo, mid, hi) = (x.min * k, x.p50 * k, x.max * k);
                let f = whatif::table::sig3;
                if f(lo) == f(hi) {
                    f(mid)
                } else {
                    format!("{} ({}&ndash;{})", f(mid), f(lo), f(hi))
                }
            };
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(name),
                d(&m.p50_ms, 1.0),
                d(&m.p99_ms, 1.0),
                d(&m.max_ms, 1.0),
                d(&m.total_s, 1.0),
                d(&m.data_segments, 1.0),
                d(&m.small_segments, 1.0),
                d(&m.wire_bytes, 1e-3),
                esc(&ch),
                if pareto { "&#9733;" } else { "" }
            );
        };
        row(
            &mut s,
            "replay (as captured)",
            &b.metrics,
            "-".into(),
            false,
        );
        for a in &f.alternatives {
            if let Some(m) = &a.metrics {
                let ch = match (a.p50_change, a.p50_ratio) {
                    (Some(c), r) => format!(
                        "{c:?}{}",
                        r.map_or(String::new(), |r| format!(" (x{})", whatif::table::sig3(r)))
                    ),
                    _ => "-".into(),
                };
                row(&mut s, &a.name, m, ch, a.pareto);
            }
        }
        let _ = writeln!(s, "</table>");
        // The slowest exchange, three ways.
        let dir = usize::from(f.held_side == "server");
        if let Some(k) = stalled_turn(f) {
            let mut figs = Vec::new();
            let ex_index = f.turn_exchange.get(k).copied().unwrap_or(k);
            figs.push((
                "as captured".to_string(),
                original
                    .iter()
                    .find(|(n, _)| *n == f.flow)
                    .ok_or_else(|| "no such flow".to_string())
                    .and_then(|(_, fl)| {
                        turn_svg(fl, TurnPick::Exchange(ex_index), dir, "as captured")
                    }),
            ));
            let replay = whatif::replay_pcap(f, None)
                .and_then(|p| tinygram_analyze::read_bytes(&p).map_err(|e| e.to_string()))
                .and_then(|c| first_turn_svg(&c, k, dir, "as replayed"));
            figs.push(("as replayed".to_string(), replay));
            if let Some(best) = whatif::best(f) {
                let name = f.alternatives[best].name.clone();
                let alt = whatif::replay_pcap(f, Some(best))
                    .and_then(|p| tinygram_analyze::read_bytes(&p).map_err(|e| e.to_string()))
                    .and_then(|c| first_turn_svg(&c, k, dir, &name));
                figs.push((format!("under the best alternative: {name}"), alt));
            }
            let _ = writeln!(
                s,
                "<h3>The slowest exchange (turn {}, {} ms in the capture), the {}'s data</h3><div class=\"plots\">",
                k + 1,
                whatif::table::sig3(b.captured_ms[k]),
                esc(&f.held_side)
            );
            for (cap, svg) in figs {
                match svg {
                    Ok(svg) => {
                        let _ = writeln!(
                            s,
                            "<figure>{svg}<figcaption>{}</figcaption></figure>",
                            esc(&cap)
                        );
                    }
                    Err(e) => {
                        let _ = writeln!(
                            s,
                            "<figure><p>{}: cannot draw: {}</p></figure>",
                            esc(&cap),
                            esc(&e)
                        );
                    }
                }
            }
            let _ = writeln!(s, "</div>");
        }
        let _ = writeln!(
            s,
            "<h3>The scenario the capture implies</h3><p>Saved beside this page as <code>scenario-flow-{}.toml</code>: edit it and <code>tinygram run</code> it.</p><pre>{}</pre>",
            f.flow,
            esc(&f.scenario)
        );
    }
    for k in &r.skipped {
        let _ = writeln!(
            s,
            "<p>Flow {}: not replayed: {}</p>",
            k.flow,
            esc(&k.reason)
        );
    }
    s.push_str("</body></html>\n");
    s
}
