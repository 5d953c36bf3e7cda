//! `run --pcap/--plot` and `tinygram diagnose`: captures of simulated runs,
//! time-sequence plots, and the analysis of any pcap/pcapng.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tinygram_analyze::timeseq::TimeSeq;
use tinygram_analyze::{Flow, Thresholds};
use tinygram_report::{render, text};
pub use tinygram_reproduce::plot::time_sequence;
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

/// Which side's data a plot of a run shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PlotDir {
    /// The direction that carried more data.
    #[default]
    Auto,
    /// Data sent by the client.
    Client,
    /// Data sent by the server.
    Server,
}

/// Where a run's pcap is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PcapAt {
    /// At the client's interface (like tcpdump on the client).
    #[default]
    Client,
    /// At the server's interface.
    Server,
}

/// The capture-related options of `tinygram run`.
#[derive(clap::Args, Debug, Default)]
pub struct RunCaptureArgs {
    /// Write what crossed the simulated wire as a pcap (Ethernet/IPv4/TCP, ns
    /// timestamps; client 10.0.0.1:40000, server 10.0.0.2:7). With [[flows]]:
    /// every packet as it starts onto the bottleneck, hosts 10.0.0.1 upwards
    /// (the run lists which is which on stderr).
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Capture point of --pcap: the client's or the server's interface (a
    /// many-flow run is always captured at its bottleneck).
    #[arg(long, value_enum, default_value_t = PcapAt::Client)]
    pub pcap_at: PcapAt,
    /// Draw a tcptrace-style time-sequence graph (FILE.svg or FILE.png),
    /// with the why-trace's holds shaded.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Whose data --plot shows.
    #[arg(long, value_enum, default_value_t = PlotDir::Auto)]
    pub plot_dir: PlotDir,
}

impl RunCaptureArgs {
    /// Whether a capture or plot was asked for.
    pub fn any(&self) -> bool {
        self.pcap.is_some() || self.plot.is_some()
    }

    /// Turns the engines' why-trace on when a plot will shade holds.
    pub fn prepare(&self, sc: &mut Scenario) {
        if self.plot.is_some() {
            sc.client.tcp.trace = true;
            sc.server.tcp.trace = true;
        }
    }

    /// Asks the simulator to record what the outputs need.
    pub fn setup(&self, sim: &mut Sim) {
        if self.any() {
            sim.enable_capture(self.pcap.is_some());
        }
        if self.plot.is_some() {
            sim.enable_trace();
        }
    }

    /// Writes the pcap and the plot after the run.
    pub fn finish(&self, sim: &Sim) -> Result<(), String> {
        let (events, payloads) = sim.capture();
        if let Some(path) = &self.pcap {
            let vantage = match self.pcap_at {
                PcapAt::Client => Vantage::Client,
                PcapAt::Server => Vantage::Server,
            };
            let f = std::fs::File::create(path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            write_pcap(std::io::BufWriter::new(f), events, payloads, vantage)
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
        if let Some(path) = &self.plot {
            let dir = match self.plot_dir {
                PlotDir::Client => Some(0),
                PlotDir::Server => Some(1),
                PlotDir::Auto => None,
            };
            render(&time_sequence(sim, dir)?, path)?;
        }
        Ok(())
    }
}

/// Indices of the `n` flows with the most payload bytes (both directions),
/// busiest first, ties in capture order; `n` = 0: every flow.
pub fn busiest_flows(flows: &[&Flow], n: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..flows.len()).collect();
    let bytes = |i: usize| flows[i].sides.iter().map(|s| s.bytes).sum::<u64>();
    idx.sort_by(|&a, &b| bytes(b).cmp(&bytes(a)).then(a.cmp(&b)));
    if n > 0 {
        idx.truncate(n);
    }
    idx
}

/// Flows the text report of `diagnose` shows in full when there are more.
pub const DEFAULT_TOP: usize = 20;

/// `tinygram diagnose`'s options.
pub struct DiagnoseOpts<'a> {
    pub json: bool,
    pub plot: Option<&'a Path>,
    pub plot_flows: usize,
    pub rank: bool,
    /// Flows analysed in full (`--max-flows`).
    pub max_flows: usize,
    /// Flows the text shows in full (`--top`; `usize::MAX` with `--all`).
    pub top: usize,
    /// List the summarised flows in the text too.
    pub all: bool,
    pub quiet: bool,
}

/// Captures smaller than this read without a progress bar.
const PROGRESS_FROM_BYTES: u64 = 64 << 20;

/// `tinygram diagnose FILE [--json] [--plot DIR [--plot-flows N]] [--max-flows N] [--top N | --all]`.
pub fn diagnose_cmd(file: &Path, o: &DiagnoseOpts) -> ExitCode {
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    let bar = if o.quiet || size < PROGRESS_FROM_BYTES {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new(size);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{wide_bar}] {binary_bytes}/{binary_total_bytes} {elapsed}",
            )
            .expect("valid template"),
        );
        b
    };
    let mut pass = 0;
    let read = tinygram_analyze::diagnose_file(
        file,
        o.max_flows,
        &Thresholds::default(),
        &mut |p, bytes| {
            if p != pass {
                pass = p;
                bar.set_message(if p == 1 {
                    "surveying the flows"
                } else {
                    "reading the flows analysed"
                });
            }
            bar.set_position(bytes);
        },
    );
    bar.finish_and_clear();
    let tinygram_analyze::FileDiagnosis {
        diagnosis: mut d,
        flows,
        table,
    } = match read {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    if let Some(w) = d.capture.truncation_warning() {
        eprintln!("warning: {}: {w}", file.display());
    }
    if o.rank {
        let opts = tinygram_lab::whatif::Options::default();
        for (r, (n, f)) in d.flows.iter_mut().zip(&flows) {
            if r.findings.is_empty() {
                continue;
            }
            let notes = tinygram_lab::whatif::rank::rank_flow(f, *n, r, &opts, &|m| {
                if !o.json {
                    eprintln!("rank: {m}");
                }
            });
            for n in notes {
                eprintln!("warning: {n}");
            }
        }
    }
    let name = file.display().to_string();
    if let Err(e) = write_diagnosis(&d, &table, &name, o) {
        // A closed pipe (`| head`) is not an error worth a message.
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write the report: {e}");
            return ExitCode::FAILURE;
        }
        return ExitCode::SUCCESS;
    }
    if let Some(dir) = o.plot {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: cannot create {}: {e}", dir.display());
            return ExitCode::from(2);
        }
        let analysed: Vec<&Flow> = flows.iter().map(|(_, f)| f).collect();
        let chosen = busiest_flows(&analysed, o.plot_flows);
        for &i in &chosen {
            let (n, f) = &flows[i];
            for (d, who) in [(0, "client"), (1, "server")] {
                if f.sides[d].bytes == 0 {
                    continue;
                }
                let path = dir.join(format!("flow{n}-{who}-data.svg"));
                if let Err(e) = render(&TimeSeq::of(f, d), &path) {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
                if !o.json {
                    println!("plot: {}", path.display());
                }
            }
        }
        if chosen.len() < flows.len() {
            // On stderr so --json output stays one JSON document.
            eprintln!(
                "plotted the {} busiest of {} flows analysed; --plot-flows {} (or 0) plots them all",
                chosen.len(),
                flows.len(),
                flows.len()
            );
        }
    }
    ExitCode::SUCCESS
}

/// Writes the report to stdout as it goes: the text (capped at `o.top`
/// flows in full, the summarised flows listed with `o.all`), or the JSON,
/// which lists every flow (the summarised ones under `flow_summaries`).
fn write_diagnosis(
    d: &tinygram_analyze::Diagnosis,
    table: &tinygram_analyze::FlowTable,
    name: &str,
    o: &DiagnoseOpts,
) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if o.json {
        serde_json::to_writer_pretty(
            &mut out,
            &JsonDiagnosis {
                d,
                flow_summaries: d.summarised.as_ref().map(|_| Summaries(table)),
            },
        )
        .map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(text::diagnosis_top(d, name, o.top).as_bytes())?;
        if o.all && d.summarised.is_some() {
            writeln!(
                out,
                "\nflows summarised, not analysed (past --max-flows {}):",
                o.max_flows
            )?;
            for x in table.summaries() {
                writeln!(out, "{}", text::summary_line(&x))?;
            }
        }
    }
    out.flush()
}

/// The diagnosis as JSON, with the summarised flows streamed from the table.
#[derive(serde::Serialize)]
struct JsonDiagnosis<'a> {
    #[serde(flatten)]
    d: &'a tinygram_analyze::Diagnosis,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_summaries: Option<Summaries<'a>>,
}

/// Serializes every summarised flow, one at a time.
struct Summaries<'a>(&'a tinygram_analyze::FlowTable);

impl serde::Serialize for Summaries<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.summaries())
    }
}

#[cfg(test)]
mod tests {
    use super::busiest_flows;
    use tinygram_analyze::flow::Side;
    use tinygram_analyze::Flow;

    fn flow(client: u64, server: u64) -> Flow {
        let side = |bytes| Side {
            bytes,
            ..Side::default()
        };
        Flow {
            sides: [side(client), side(server)],
            segs: Vec::new(),
            saw_syn: true,
        }
    }

    #[test]
    fn plots_the_busiest_flows_first_ties_in_capture_order() {
        let flows = [
            flow(10, 0),
            flow(0, 500),
            flow(7, 3),
            flow(1000, 1),
            flow(0, 0),
        ];
        let flows: Vec<&Flow> = flows.iter().collect();
        assert_eq!(busiest_flows(&flows, 3), [3, 1, 0]);
        assert_eq!(busiest_flows(&flows, 0), [3, 1, 0, 2, 4]);
        assert_eq!(busiest_flows(&flows, 99).len(), 5);
    }
}
