//! tinygram-reproduce: the experiments of the source documents, run in the
//! simulator and shown beside the published numbers (`tinygram reproduce`,
//! Python's `tinygram.reproduce()`). Nothing is tuned to the published
//! figures: each scenario states the setup the document gives, and where our
//! numbers differ the report says so and why.
//!
//! One module per document under `experiments/`; `report` writes the
//! report directory and report.json; `live` (feature `live`) runs the same
//! patterns on this machine's kernel; `plot` (feature `plots`) draws
//! time-sequence graphs of representative runs.

mod chart;
mod experiments;
#[cfg(feature = "live")]
pub mod live;
pub mod open;
#[cfg(feature = "plots")]
pub mod plot;
mod report;

pub use tinygram_lab::run::World;
use tinygram_sim::metrics::RunResult;
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::WireEvent;

pub use experiments::{nagle_release_schedule, trace_figures, EXPERIMENTS};
pub use open::{At, Spread, Tally, Unknown};
pub use report::{json, write_report, SCHEMA};

/// One simulation to run for an experiment.
pub struct Job {
    /// Row labels, e.g. ["FreeBSD-like", "16 KiB", "Nagle on"].
    pub key: Vec<String>,
    pub scenario: Scenario,
    /// Keep the frames that crossed the wire (for packet counts and timing).
    pub capture: bool,
}

/// A finished simulation.
pub struct Done {
    pub key: Vec<String>,
    pub result: RunResult,
    /// Frames seen on the wire, if the job asked for them.
    pub wire: Vec<WireEvent>,
    /// The run's configuration in words: profiles, link and workload values
    /// (report.json's `configuration` of the cells it stands for).
    pub config: String,
}

/// A scenario's configuration in one line: each host's profile and the
/// keys a cell depends on, the link, and the workload's values.
pub fn describe_scenario(sc: &Scenario) -> String {
    use tinygram_sim::scenario::Workload;
    let host = |h: &tinygram_sim::scenario::HostConfig| {
        let c = &h.tcp;
        format!(
            "profile {} (send policy {:?}, ACK policy {:?}, delayed ACK {:?}, rcv_buf {}, \
             snd_buf {}, mss {})",
            h.profile, c.send_policy, c.ack_policy, c.delack, c.rcv_buf, c.snd_buf, c.mss
        )
    };
    let sizes = |v: &[usize]| -> String {
        // Runs of equal sizes as "10x50", as the scenario files write them.
        let mut out: Vec<String> = Vec::new();
        let mut i = 0;
        while i < v.len() {
            let n = v[i..].iter().take_while(|&&x| x == v[i]).count();
            out.push(if n > 1 {
                format!("{}x{n}", v[i])
            } else {
                v[i].to_string()
            });
            i += n;
        }
        format!("[{}]", out.join(", "))
    };
    let workload = match &sc.workload {
        Workload::RequestResponse {
            request,
            request_gap,
            response,
            response_gap,
            response_jitter,
            outstanding,
            think,
            requests,
        } => format!(
            "request-response: request {} {request_gap:?} apart, response {} {response_gap:?} \
             apart plus up to {response_jitter:?} per write, think {think:?}, {outstanding} \
             outstanding, requests {}",
            sizes(request),
            sizes(response),
            requests.map_or("until the duration".to_string(), |n| n.to_string())
        ),
        Workload::Bulk {
            bytes,
            write_size,
            direction,
        } => format!("bulk: {bytes} bytes in writes of {write_size}, {direction:?}"),
        w => format!("{w:?}"),
    };
    let l = &sc.forward;
    format!(
        "client {}; server {}; link: {:.0} b/s, {:?} one way, loss {}, BER {}; workload: {workload}; \
         seed {}, duration {:?}",
        host(&sc.client),
        host(&sc.server),
        l.rate_bps,
        l.delay,
        l.loss,
        l.ber,
        sc.seed,
        sc.duration
    )
}

/// "6.18.44" and the like: the running kernel's release (`uname -r`).
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The name of the column `--live` measures on this machine's kernel.
pub fn live_column_name() -> String {
    format!("Linux {} today", kernel_release())
}

/// A source document, cited in full in the report's Sources section.
#[derive(Debug)]
pub struct Document {
    /// Short stable key, used in report.json.
    pub key: &'static str,
    pub author: &'static str,
    pub title: &'static str,
    pub date: &'static str,
    /// Where it appeared.
    pub venue: &'static str,
}

impl Document {
    /// "Author, Title" for section headings and claim sources.
    pub fn short(&self) -> String {
        format!("{}, \"{}\"", self.author, self.title)
    }

    /// The full citation: author, title, where it appeared, date.
    pub fn citation(&self) -> String {
        format!(
            "{}, \"{}\", {}, {}",
            self.author, self.title, self.venue, self.date
        )
    }
}

/// The five documents whose experiments `reproduce` runs.
pub static DOCUMENTS: [Document; 5] = [
    Document {
        key: "doupnik-1999",
        author: "J. R. Doupnik",
        title: "A new TCP transmission policy replacing Nagle mode",
        date: "June 1999",
        venue: "Internet-Draft draft-doupnik-tcpimpl-nagle-mode-00, Utah State University",
    },
    Document {
        key: "davids-2001",
        author: "N. Davids",
        title: "TCP -- Either Fast or Efficient",
        date: "May 2001",
        venue: "Sys Admin magazine vol. 10 no. 5",
    },
    Document {
        key: "rfc1106",
        author: "R. Fox",
        title: "TCP Big Window and Nak Options",
        date: "June 1989",
        venue: "RFC 1106, Tandem",
    },
    Document {
        key: "westfield-mills-1985",
        author: "W. Westfield and D. Mills",
        title: "Improving TCP throughput",
        date: "October-November 1985",
        venue: "posts to mod.protocols.tcp-ip",
    },
    Document {
        key: "cheshire-2005",
        author: "S. Cheshire",
        title: "TCP Performance problems caused by interaction between Nagle's Algorithm and Delayed ACK",
        date: "20 May 2005, updated November 2012",
        venue: "web page",
    },
];

/// The document with this key (a built-in table, so a miss is a bug).
pub fn document(key: &str) -> &'static Document {
    DOCUMENTS
        .iter()
        .find(|d| d.key == key)
        .unwrap_or_else(|| panic!("no source document {key:?}"))
}

/// A number with its unit, as report.json gives published and measured values.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantity {
    pub value: f64,
    pub unit: String,
}

/// `Some(Quantity)` in one call.
pub fn q(value: f64, unit: &str) -> Option<Quantity> {
    Some(Quantity {
        value,
        unit: unit.to_string(),
    })
}

/// The one tolerance for every numeric comparison with a published figure:
/// ours agrees when it lies within this factor of the document's number,
/// either way. Stated once at the top of the report; no verdict uses another.
pub const TOLERANCE: f64 = 2.0;

/// The tolerance in words, as the report states it up front.
pub fn tolerance_text() -> String {
    format!(
        "A number of ours agrees with a published one when it lies within a factor of \
         {TOLERANCE} of it either way (between 1/{TOLERANCE} and {TOLERANCE} times the \
         published value). A document's bound is read with the same factor: \"under 30 kb/s\" \
         holds when ours is under {TOLERANCE} x 30, \"at least 3.5 Mb/s\" when ours is at least \
         3.5 / {TOLERANCE}. Every numeric verdict in this report applies that one rule, and every \
         threshold is the document's own figure. Where a document leaves values open (each \
         experiment lists them, with their ranges), every cell runs at every draw of them and is \
         reproduced only if it is reproduced at every draw, not reproduced if at none, and not \
         testable otherwise; a comparison (\"A beats B\") is read the same way, pair by pair at \
         each draw. A claim over several cells is not reproduced if any cell is, reproduced if \
         every cell is, and not testable otherwise."
    )
}

/// True when `measured` lies within [`TOLERANCE`] of `published`, either way.
pub fn within_tolerance(published: f64, measured: f64) -> bool {
    if published <= 0.0 {
        return measured <= 0.0;
    }
    measured >= published / TOLERANCE && measured <= published * TOLERANCE
}

/// A document's upper bound ("under", "at most"), read with [`TOLERANCE`].
pub fn at_most(bound: f64, measured: f64) -> bool {
    measured <= bound * TOLERANCE
}

/// A document's lower bound ("at least", a floor), read with [`TOLERANCE`].
pub fn at_least(bound: f64, measured: f64) -> bool {
    measured >= bound / TOLERANCE
}

/// How a published figure is read against ours: the one tolerance as a
/// value, as an upper bound ("at most"), as a lower bound ("at least"), or
/// not at all (a rate the 1999 hosts' CPUs set, which the simulator cannot
/// give). Tables shade a value by the same rule its claim reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rule {
    #[default]
    Within,
    AtMost,
    AtLeast,
    /// Not testable for its value (the reason is in the claim).
    Untestable,
}

impl Rule {
    /// Whether ours agrees with the published figure by this rule
    /// (`None`: the rule does not test it).
    pub fn holds(self, published: f64, measured: f64) -> Option<bool> {
        match self {
            Rule::Within => Some(within_tolerance(published, measured)),
            Rule::AtMost => Some(at_most(published, measured)),
            Rule::AtLeast => Some(at_least(published, measured)),
            Rule::Untestable => None,
        }
    }

    /// The verdict at one point: reproduced, not reproduced, or not testable.
    pub fn verdict(self, published: f64, measured: f64) -> Verdict {
        self.holds(published, measured)
            .map_or(Verdict::NotTestable, Verdict::from_holds)
    }
}

/// THE comparison rule at one point: A beats B when it is better at all
/// (`Reading::paired` on the one pair, no margin). Over the points of an
/// experiment's space the verdicts are read by [`open::verdict_over`], which
/// is `Reading::paired` over every pair: a difference counts only when it
/// holds at every point, i.e. when it is larger than the spread the open
/// values and seeds cause.
pub fn beats(a: f64, b: f64, higher_is_better: bool) -> bool {
    tinygram_lab::Reading::paired(&[a], &[b], higher_is_better, 0.0) == tinygram_lab::Reading::Holds
}

/// True when measured and published differ by more than [`TOLERANCE`] either way.
pub fn mismatch(published: Option<f64>, measured: Option<f64>) -> bool {
    match (published, measured) {
        (Some(p), Some(m)) if p > 0.0 && m >= 0.0 => !within_tolerance(p, m),
        _ => false,
    }
}

/// A value column of a table: its name and unit, and the digits to show.
#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub unit: String,
    pub digits: usize,
}

impl Column {
    pub fn new(name: &str, unit: &str, digits: usize) -> Column {
        Column {
            name: name.to_string(),
            unit: unit.to_string(),
            digits,
        }
    }
}

/// One table cell: our number and, where the document gives one, its number.
#[derive(Clone, Debug, Default)]
pub struct Val {
    pub published: Option<f64>,
    pub measured: Option<f64>,
    /// Ours over the points of the experiment's open values (set by the merge).
    pub spread: Option<Spread>,
    /// How the published figure is read (its claim reads it the same way).
    pub rule: Rule,
}

impl Val {
    /// Ours disagrees with the published figure by its rule at every point:
    /// the same reading the verdicts use (shaded in tables).
    pub fn outside(&self) -> bool {
        match &self.spread {
            Some(sp) => sp.outside(),
            None => match (self.published, self.measured) {
                (Some(p), Some(m)) => self.rule.holds(p, m) == Some(false),
                _ => false,
            },
        }
    }

    pub fn new(measured: f64, published: Option<f64>) -> Val {
        Val {
            published,
            measured: Some(measured),
            spread: None,
            rule: Rule::Within,
        }
    }

    /// The value with the rule its published figure is read by.
    pub fn read_by(mut self, rule: Rule) -> Val {
        self.rule = rule;
        self
    }
}

/// A table row: its label cells, then one value per value column.
#[derive(Clone, Debug)]
pub struct Row {
    pub labels: Vec<String>,
    pub values: Vec<Val>,
}

/// A results table: label columns (the setup) and value columns (numbers,
/// each with the published figure beside ours where there is one).
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub title: String,
    pub label_headers: Vec<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

impl Table {
    /// The value in column `col` of the first row whose labels start with `labels`.
    pub fn value(&self, labels: &[&str], col: &str) -> Option<Val> {
        let c = self.columns.iter().position(|c| c.name == col)?;
        self.rows
            .iter()
            .find(|r| {
                r.labels
                    .iter()
                    .map(String::as_str)
                    .take(labels.len())
                    .eq(labels.iter().copied())
            })
            .and_then(|r| r.values.get(c).cloned())
    }

    /// A cell as text: ours (the median and 10th-90th percentile over the
    /// open values where they differ), then the published figure in brackets
    /// with its percentile among ours ("[654 p62]").
    pub fn cell_text(&self, col: usize, v: &Val) -> String {
        let d = self.columns.get(col).map_or(1, |c| c.digits);
        let m = match &v.spread {
            Some(sp) => sp.text(d),
            None => v
                .measured
                .map_or_else(|| "-".to_string(), |x| format!("{x:.d$}")),
        };
        // Where ours varies, the published figure's percentile among ours.
        let pct = v
            .spread
            .as_ref()
            .filter(|sp| sp.varies())
            .and_then(|sp| sp.percentile)
            .map(|x| format!(" p{x:.0}"))
            .unwrap_or_default();
        match v.published {
            Some(p) => format!("{m} [{}{pct}]", fmt_num(p)),
            None => m,
        }
    }
}

/// A published number as the document prints it: no trailing ".0".
pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// One series of a bar chart: label, one value per category, and the
/// document's value per category where it gives one (drawn as hollow markers).
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub values: Vec<f64>,
    pub published: Vec<Option<f64>>,
    /// Ours over the open values per category: (lowest, highest), drawn as
    /// a whisker on the bar (the median); empty when nothing is open.
    pub spread: Vec<Option<(f64, f64)>>,
}

/// A grouped bar chart.
#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    /// Logarithmic y axis (rates that span orders of magnitude).
    pub log: bool,
}

/// An experiment's part of the report.
#[derive(Clone, Debug)]
pub struct Section {
    pub name: &'static str,
    pub title: &'static str,
    pub doc: &'static Document,
    /// The part of the document the experiment comes from, e.g. "section 3, Table 1".
    pub part: &'static str,
    /// Markdown: what was simulated.
    pub setup: String,
    pub tables: Vec<Table>,
    pub charts: Vec<Chart>,
    /// Sentences derived from the numbers.
    pub findings: Vec<String>,
    /// Where our numbers differ from the document's, with the likely cause.
    pub differences: Vec<String>,
    /// The document's claims, checked on our numbers.
    pub claims: Vec<Claim>,
    /// Time-sequence graphs of representative runs: (caption, SVG document).
    pub plots: Vec<(String, String)>,
    /// `--live`: the machine's own kernel on the same patterns.
    pub live: LiveSection,
    /// What the document leaves open, run as ranges.
    pub unknowns: Vec<Unknown>,
    /// Draws of the open values (0: none open).
    pub samples: u32,
    /// Points the section was read over (1: none open).
    pub points: usize,
}

/// What `reproduce --live` adds to a section: a "Linux <version> today"
/// column beside its table, the comparison of the simulated `linux` stack
/// with the kernel, and why a column is absent where it is.
#[derive(Clone, Debug, Default)]
pub struct LiveSection {
    /// What the live run did for this section, or why it did not run.
    pub note: Option<String>,
    /// Columns appended to `Section::tables[column.table]`.
    pub columns: Vec<LiveColumn>,
    /// The kernel, tinygram over TUN and the simulated `linux` stack, side by side.
    pub tables: Vec<Table>,
    /// Every pattern where the simulated `linux` stack and the kernel differ
    /// by more than the stated tolerance, with its cause.
    pub disagreements: Vec<String>,
}

/// A column measured live, one cell per row of the table it extends.
#[derive(Clone, Debug)]
pub struct LiveColumn {
    /// Index of the table in `Section::tables`.
    pub table: usize,
    pub name: String,
    pub unit: String,
    pub digits: usize,
    pub cells: Vec<LiveCell>,
}

/// A live cell: a number, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum LiveCell {
    Value(f64),
    /// No Linux equivalent, or not run (the reason, in a few words).
    Absent(String),
}

impl LiveCell {
    /// The cell as text: the number with `digits` decimals, or "n/a: why".
    pub fn text(&self, digits: usize) -> String {
        match self {
            LiveCell::Value(x) => format!("{x:.digits$}"),
            LiveCell::Absent(why) => format!("n/a: {why}"),
        }
    }
}

impl Section {
    /// The live columns that extend table `i`.
    pub fn live_columns(&self, i: usize) -> Vec<&LiveColumn> {
        self.live.columns.iter().filter(|c| c.table == i).collect()
    }
}

impl Section {
    /// Claims by verdict: (reproduced, not reproduced, not testable).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |v: Verdict| self.claims.iter().filter(|c| c.verdict == v).count();
        (
            n(Verdict::Reproduced),
            n(Verdict::NotReproduced),
            n(Verdict::NotTestable),
        )
    }
}

/// What became of a claim on our numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Reproduced,
    NotReproduced,
    /// The document does not determine what the claim needs (e.g. its
    /// workload or a timer's phase), so our run cannot confirm or refute it.
    NotTestable,
}

impl Verdict {
    pub fn from_holds(holds: bool) -> Verdict {
        if holds {
            Verdict::Reproduced
        } else {
            Verdict::NotReproduced
        }
    }

    /// The report.json spelling.
    pub fn key(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::NotReproduced => "not_reproduced",
            Verdict::NotTestable => "not_testable",
        }
    }

    /// The report's spelling.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::NotReproduced => "not reproduced",
            Verdict::NotTestable => "not testable",
        }
    }
}

/// One setting of a claim checked over a matrix (e.g. one server, window
/// and client), with its own figures and verdict.
#[derive(Clone, Debug)]
pub struct Cell {
    pub labels: Vec<String>,
    pub published: Option<Quantity>,
    pub measured: Option<Quantity>,
    /// Our figures in words, e.g. "3536 vs 3536 req/s".
    pub detail: String,
    pub verdict: Verdict,
    pub cause: Option<String>,
    /// The one configuration the cell was run with, where it stands for a
    /// published cell: the profiles and overrides, e.g.
    /// "client profile uw7, server profile freebsd3, client.rcv_buf 32KiB".
    pub config: Option<String>,
    /// Verdicts at the points of the open values, which the verdict reads.
    pub points: Tally,
    /// Ours over those points.
    pub spread: Option<Spread>,
}

impl Cell {
    /// The cell with the configuration it was run with.
    pub fn with_config(mut self, config: String) -> Cell {
        self.config = Some(config);
        self
    }

    /// A cell; `cause` is asked for only when the verdict is not reproduced.
    pub fn new(
        labels: &[&str],
        published: Option<Quantity>,
        measured: Option<Quantity>,
        detail: String,
        verdict: Verdict,
        cause: impl FnOnce() -> Option<String>,
    ) -> Cell {
        let cause = if verdict == Verdict::Reproduced {
            None
        } else {
            cause()
        };
        Cell {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            published,
            measured,
            detail,
            verdict,
            cause,
            config: None,
            points: Tally::one(verdict),
            spread: None,
        }
    }
}

/// One of a document's claims, checked on our numbers. A claim checked over
/// a matrix of settings is one claim with a cell per setting.
#[derive(Clone, Debug)]
pub struct Claim {
    /// Unique in the report: "experiment/slug".
    pub id: String,
    /// The part of the document that makes the claim.
    pub source: String,
    /// The claim, with our figures where it has no cells.
    pub text: String,
    pub published: Option<Quantity>,
    pub measured: Option<Quantity>,
    pub verdict: Verdict,
    /// Why the rules give a different result (required unless reproduced).
    /// With cells: each distinct cell cause once.
    pub cause: Option<String>,
    /// Names of the label columns of `cells`.
    pub cell_headers: Vec<String>,
    pub cells: Vec<Cell>,
    /// Verdicts at the points of the open values.
    pub points: Tally,
    /// Ours over those points (a claim without cells).
    pub spread: Option<Spread>,
}

impl Claim {
    /// A single claim; `cause` is asked for only when it is not reproduced.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        experiment: &str,
        slug: &str,
        source: &str,
        text: String,
        published: Option<Quantity>,
        measured: Option<Quantity>,
        verdict: Verdict,
        cause: impl FnOnce() -> Option<String>,
    ) -> Claim {
        let cause = if verdict == Verdict::Reproduced {
            None
        } else {
            cause()
        };
        Claim {
            id: format!("{experiment}/{slug}"),
            source: source.to_string(),
            text,
            published,
            measured,
            verdict,
            cause,
            cell_headers: Vec::new(),
            cells: Vec::new(),
            points: Tally::one(verdict),
            spread: None,
        }
    }

    /// A claim over a matrix of cells. Its verdict: not reproduced if any
    /// cell is (the claim is contradicted there over the whole range),
    /// reproduced if every cell is, else not testable (some cell depends on
    /// what the document leaves open). Its published value is the one all
    /// cells share, if they share one.
    pub fn matrix(
        experiment: &str,
        slug: &str,
        source: &str,
        text: String,
        cell_headers: &[&str],
        cells: Vec<Cell>,
    ) -> Claim {
        let any = |v: Verdict| cells.iter().any(|c| c.verdict == v);
        let verdict = if any(Verdict::NotReproduced) {
            Verdict::NotReproduced
        } else if any(Verdict::Reproduced) && !any(Verdict::NotTestable) {
            Verdict::Reproduced
        } else {
            Verdict::NotTestable
        };
        let causes = distinct_causes(&cells);
        let cause = match causes.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(
                many.iter()
                    .enumerate()
                    .map(|(i, c)| format!("({}) {c}", cause_letter(i)))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        };
        let published = match cells.first().map(|c| &c.published) {
            Some(p @ Some(_)) if cells.iter().all(|c| &c.published == p) => p.clone(),
            _ => None,
        };
        Claim {
            id: format!("{experiment}/{slug}"),
            source: source.to_string(),
            text,
            published,
            measured: None,
            verdict,
            cause,
            cell_headers: cell_headers.iter().map(|s| s.to_string()).collect(),
            cells,
            points: Tally::one(verdict),
            spread: None,
        }
    }

    /// Cells by verdict: (reproduced, not reproduced, not testable).
    pub fn cell_counts(&self) -> (usize, usize, usize) {
        let n = |v: Verdict| self.cells.iter().filter(|c| c.verdict == v).count();
        (
            n(Verdict::Reproduced),
            n(Verdict::NotReproduced),
            n(Verdict::NotTestable),
        )
    }
}

/// The cells' causes, each once, in order of first appearance.
pub fn distinct_causes(cells: &[Cell]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for c in cells {
        if let Some(x) = &c.cause {
            if !v.contains(x) {
                v.push(x.clone());
            }
        }
    }
    v
}

/// "a", "b", ... for the i-th distinct cause.
pub fn cause_letter(i: usize) -> char {
    (b'a' + (i % 26) as u8) as char
}

/// An experiment: which runs it needs and how it reads them.
pub struct Experiment {
    pub name: &'static str,
    pub title: &'static str,
    /// Key of the source document.
    pub doc: &'static str,
    /// The part of the document the experiment comes from.
    pub part: &'static str,
    /// The base scenario file, embedded in the binary.
    pub base: &'static str,
    /// What the document leaves open, each with its range and why.
    pub unknowns: fn() -> Vec<Unknown>,
    /// The runs at one point of the open values.
    pub jobs: fn(quick: bool, at: &At) -> Vec<Job>,
    /// The section read off one point's runs.
    pub section: fn(quick: bool, at: &At, done: &[Done]) -> Section,
}

/// Builds a scenario from an experiment's base file plus overrides.
pub fn scenario(base: &str, origin: &str, overrides: &[String]) -> Scenario {
    Scenario::from_str(base, origin, overrides)
        .unwrap_or_else(|e| panic!("built-in scenario {origin} is invalid: {e}"))
}

/// Runs one job in the world the lab's run path picks for its scenario (every
/// built-in scenario is a two-host one: a many-flow file here is a bug).
fn run_job(job: Job) -> Done {
    let World::TwoHost(mut sim) = World::of(&job.scenario) else {
        panic!(
            "built-in scenario for {:?} asks for the many-flow world",
            job.key
        )
    };
    if job.capture {
        sim.enable_capture(false);
    }
    let config = describe_scenario(&job.scenario);
    let result = sim.run(&mut |_, _| {});
    Done {
        config,
        key: job.key,
        wire: sim.capture().0.to_vec(),
        result,
    }
}

/// Progress of a reproduction: `(runs finished, runs in all)`, called from
/// the worker threads after each run.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Runs every job on `threads` threads; results come back in job order.
/// `progress` hears of each finished run.
pub fn run_jobs(jobs: Vec<Job>, threads: usize, progress: Progress) -> Vec<Done> {
    let n = jobs.len();
    let slots: Vec<std::sync::Mutex<Option<Job>>> = jobs
        .into_iter()
        .map(|j| std::sync::Mutex::new(Some(j)))
        .collect();
    let finished = std::sync::atomic::AtomicUsize::new(0);
    tinygram_lab::pool::map(
        n,
        threads,
        &|i| {
            let job = slots[i]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .expect("each job runs once");
            run_job(job)
        },
        &|| {
            let k = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(k, n);
        },
    )
}

/// Runs the named experiments (all when empty) and returns their sections.
pub fn reproduce(
    names: &[String],
    quick: bool,
    threads: usize,
    progress: Progress,
) -> Result<Vec<Section>, String> {
    let chosen: Vec<&Experiment> = if names.is_empty() || names.iter().any(|n| n == "all") {
        EXPERIMENTS.iter().collect()
    } else {
        names
            .iter()
            .map(|n| {
                EXPERIMENTS.iter().find(|e| e.name == n).ok_or_else(|| {
                    format!(
                        "unknown experiment {n:?} (expected all or one of: {})",
                        EXPERIMENTS
                            .iter()
                            .map(|e| e.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    // Every point of every experiment's open values; all runs share one
    // pool, so the cores stay busy.
    let samples = if quick {
        open::QUICK_SAMPLES
    } else {
        open::SAMPLES
    };
    let mut all = Vec::new();
    let mut plan = Vec::new();
    for e in &chosen {
        let unknowns = (e.unknowns)();
        let points = if unknowns.is_empty() {
            vec![At::default()]
        } else {
            open::space(&unknowns, samples)
                .points()
                .map_err(|m| format!("{}: {m}", e.name))?
                .iter()
                .map(At::of)
                .collect()
        };
        let mut spans = Vec::new();
        for at in &points {
            let jobs = (e.jobs)(quick, at);
            spans.push(jobs.len());
            all.extend(jobs);
        }
        plan.push((e, unknowns, points, spans));
    }
    let mut done = run_jobs(all, threads, progress).into_iter();
    let mut sections = Vec::new();
    for (e, unknowns, points, spans) in plan {
        let per_point: Vec<Section> = points
            .iter()
            .zip(spans)
            .map(|(at, n)| {
                let mine: Vec<Done> = done.by_ref().take(n).collect();
                (e.section)(quick, at, &mine)
            })
            .collect();
        sections.push(open::merge(per_point, &points, &unknowns, samples));
    }
    Ok(sections)
}

/// [`text_grid`] with live columns appended.
pub fn text_grid_live(t: &Table, live: &[&LiveColumn]) -> (Vec<String>, Vec<Vec<String>>) {
    let (mut headers, mut rows) = text_grid(t);
    for c in live {
        headers.push(if c.unit.is_empty() {
            c.name.clone()
        } else {
            format!("{} ({})", c.name, c.unit)
        });
        for (i, row) in rows.iter_mut().enumerate() {
            row.push(
                c.cells
                    .get(i)
                    .map_or_else(|| "-".into(), |x| x.text(c.digits)),
            );
        }
    }
    (headers, rows)
}

/// A table's header line and rows as text cells (values as "ours [published]").
pub fn text_grid(t: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let mut headers = t.label_headers.clone();
    for c in &t.columns {
        headers.push(if c.unit.is_empty() {
            c.name.clone()
        } else {
            format!("{} ({})", c.name, c.unit)
        });
    }
    let rows = t
        .rows
        .iter()
        .map(|r| {
            let mut row = r.labels.clone();
            for (i, v) in r.values.iter().enumerate() {
                let mut cell = t.cell_text(i, v);
                if v.published.is_some() && v.rule == Rule::Untestable {
                    cell.push_str(" (n/t)");
                } else if v.outside() {
                    cell.push_str(" (!)");
                } else if v.spread.as_ref().is_some_and(Spread::flips) {
                    cell.push_str(" (~)");
                }
                row.push(cell);
            }
            row
        })
        .collect();
    (headers, rows)
}

/// Formats a table for the terminal with aligned columns.
pub fn format_table(t: &Table) -> String {
    format_table_live(t, &[])
}

/// [`format_table`] with live columns appended. A table wider than the
/// terminal ([`WIDTH`]) is printed in parts, each with the label columns and
/// as many value columns as fit.
pub fn format_table_live(t: &Table, live: &[&LiveColumn]) -> String {
    let (headers, rows) = text_grid_live(t, live);
    format_grid(&headers, &rows, t.label_headers.len(), WIDTH)
}

/// A grid of text cells with aligned columns, the first `labels` of them
/// repeated in each part when the whole is wider than `width`.
pub fn format_grid(
    headers: &[String],
    rows: &[Vec<String>],
    labels: usize,
    width: usize,
) -> String {
    let cols = headers.len();
    let mut w = vec![0; cols];
    for row in std::iter::once(headers).chain(rows.iter().map(Vec::as_slice)) {
        for (i, c) in row.iter().enumerate().take(cols) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let labels = labels.min(cols);
    let label_width: usize = w[..labels].iter().map(|x| x + 2).sum();
    // Value columns in parts that fit beside the labels (at least one each).
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut used = label_width;
    for (i, &wi) in w.iter().enumerate().skip(labels) {
        match parts.last_mut() {
            Some(p) if used + wi + 2 <= width => p.push(i),
            _ => {
                parts.push(vec![i]);
                used = label_width;
            }
        }
        used += wi + 2;
    }
    if parts.is_empty() {
        parts.push(Vec::new());
    }
    let mut s = String::new();
    for (pi, part) in parts.iter().enumerate() {
        let shown: Vec<usize> = (0..labels).chain(part.iter().copied()).collect();
        let line = |row: &[String], s: &mut String| {
            let mut l = String::new();
            for (k, &i) in shown.iter().enumerate() {
                let c = row.get(i).map_or("", String::as_str);
                let pad = w[i] - c.chars().count();
                if k > 0 {
                    l.push_str("  ");
                }
                if i < labels {
                    l.push_str(c);
                    l.push_str(&" ".repeat(pad));
                } else {
                    l.push_str(&" ".repeat(pad));
                    l.push_str(c);
                }
            }
            s.push_str(l.trim_end());
            s.push('\n');
        };
        if pi > 0 {
            s.push('\n');
        }
        line(headers, &mut s);
        s.push_str(&"-".repeat(
            shown.iter().map(|&i| w[i]).sum::<usize>() + 2 * shown.len().saturating_sub(1),
        ));
        s.push('\n');
        for r in rows {
            line(r, &mut s);
        }
    }
    s
}

/// A cause as the report shows it: its first three sentences, and the rest
/// (the evidence: source references, arithmetic) to fold below them.
pub fn cause_parts(text: &str) -> (String, Option<String>) {
    let head = first_sentences(text, 3);
    match head.strip_suffix(" [...]") {
        Some(h) => {
            let rest = text[h.len()..].trim();
            (h.to_string(), (!rest.is_empty()).then(|| rest.to_string()))
        }
        None => (head, None),
    }
}

/// The first `n` sentences of `text` (the rest is in the report).
pub fn first_sentences(text: &str, n: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        let ends = matches!(c, '.' | ':' | ';')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace())
            && !text[..i].ends_with("e.g")
            && !text[..i].ends_with("i.e");
        if ends && c == '.' {
            count += 1;
            if count == n {
                if chars.peek().is_some() {
                    out.push_str(" [...]");
                }
                return out;
            }
        }
    }
    out
}

/// `text` wrapped to `width` columns, each line after the first indented by `indent`.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        let w = word.chars().count();
        if line > 0 && line + 1 + w > width {
            out.push('\n');
            out.push_str(indent);
            line = indent.len();
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += w;
    }
    out
}

/// A table as the terminal shows it when it is wider than [`WIDTH`]: only
/// the value columns that have a published figure (the rest in the report).
fn published_columns(t: &Table) -> Table {
    let width: usize = text_grid(t).0.iter().map(|h| h.len() + 2).sum();
    if width <= WIDTH {
        return t.clone();
    }
    let keep: Vec<usize> = (0..t.columns.len())
        .filter(|&c| {
            t.rows
                .iter()
                .any(|r| r.values.get(c).is_some_and(|v| v.published.is_some()))
        })
        .collect();
    Table {
        title: t.title.clone(),
        label_headers: t.label_headers.clone(),
        columns: keep.iter().map(|&c| t.columns[c].clone()).collect(),
        rows: t
            .rows
            .iter()
            .map(|r| Row {
                labels: r.labels.clone(),
                values: keep
                    .iter()
                    .filter_map(|&c| r.values.get(c).cloned())
                    .collect(),
            })
            .collect(),
    }
}

/// Columns of terminal output.
pub const WIDTH: usize = 100;
/// Cells of a claim the terminal lists in full; a claim with more shows
/// its counts and the cells not reproduced.
const SHOWN_CELLS: usize = 8;

/// The terminal rendering of a section: tables, then each claim with its
/// verdict, its cells and a cause in a few sentences (the rest in the report).
pub fn format_section(sec: &Section) -> String {
    let mut s = format!(
        "\n== {} ({}) ==\n{}\n\n",
        sec.title,
        sec.name,
        wrap(
            &format!("Source: {}, {}", sec.doc.short(), sec.part),
            WIDTH,
            "  "
        )
    );
    for (i, t) in sec.tables.iter().enumerate() {
        s += &format_table_live(&published_columns(t), &sec.live_columns(i));
        let hidden = t.columns.len() - published_columns(t).columns.len();
        if hidden > 0 {
            s += &format!("({hidden} columns without published figures are in the report)\n");
        }
    }
    if !sec.tables.is_empty() {
        s += &format!(
            "{}\n",
            wrap(
                "Ours: the median (10th-90th percentile) over the points; [published, and its \
                 percentile among ours]; (!) outside the tolerance by its rule at every point, \
                 (~) at some, (n/t) not testable for its value.",
                WIDTH,
                ""
            )
        );
    }
    if !sec.unknowns.is_empty() {
        s += &format!(
            "Left open (each cell ran at {} points{}):\n",
            sec.points,
            if sec.samples < open::SAMPLES {
                "; --quick: fewer draws than the full run"
            } else {
                ""
            }
        );
        for u in &sec.unknowns {
            s += &format!(
                "  {}\n",
                wrap(
                    &format!("{}: {}", u.key, u.spec.describe()),
                    WIDTH - 2,
                    "    "
                )
            );
        }
    }
    for f in &sec.findings {
        s += &format!("* {}\n", wrap(&first_sentences(f, 3), WIDTH - 2, "  "));
    }
    for c in &sec.claims {
        s += &format!(
            "  {}\n",
            wrap(
                &format!("[{}] {}", c.verdict.label(), c.text),
                WIDTH - 2,
                "    "
            )
        );
        // A claim over many cells: the counts, then only the cells that
        // are not reproduced (the rest in the report), and only their causes.
        let many = c.cells.len() > SHOWN_CELLS;
        let shown: Vec<&Cell> = if many {
            let (r, n, u) = c.cell_counts();
            s += &format!(
                "      {}
",
                wrap(
                    &format!(
                        "{} cells: {r} reproduced, {n} not reproduced, {u} not testable{}",
                        c.cells.len(),
                        if n + u > 0 {
                            "; those not reproduced:"
                        } else {
                            ""
                        }
                    ),
                    WIDTH - 6,
                    "        "
                )
            );
            let mut v: Vec<&Cell> = c
                .cells
                .iter()
                .filter(|x| x.verdict == Verdict::NotReproduced)
                .chain(c.cells.iter().filter(|x| x.verdict == Verdict::NotTestable))
                .collect();
            if v.len() > SHOWN_CELLS {
                v.truncate(SHOWN_CELLS);
            }
            v
        } else {
            c.cells.iter().collect()
        };
        let causes: Vec<String> = {
            let mut v: Vec<String> = Vec::new();
            for x in shown.iter().filter_map(|x| x.cause.as_ref()) {
                if !v.contains(x) {
                    v.push(x.clone());
                }
            }
            v
        };
        let hidden = c
            .cells
            .iter()
            .filter(|x| x.verdict != Verdict::Reproduced)
            .count()
            - shown
                .iter()
                .filter(|x| x.verdict != Verdict::Reproduced)
                .count();
        for cell in &shown {
            let letter = cell
                .cause
                .as_ref()
                .and_then(|x| causes.iter().position(|y| y == x))
                .filter(|_| causes.len() > 1)
                .map(|i| format!(" ({})", cause_letter(i)))
                .unwrap_or_default();
            s += &format!(
                "      {}\n",
                wrap(
                    &format!(
                        "{}: {} [{}{letter}]",
                        cell.labels.join(", "),
                        first_sentences(&cell.detail, 1),
                        cell.verdict.label()
                    ),
                    WIDTH - 6,
                    "        "
                )
            );
        }
        if hidden > 0 {
            s += &format!("      ({hidden} more in the report)\n");
        }
        if causes.len() > 1 {
            for (i, cause) in causes.iter().enumerate() {
                s += &format!(
                    "      {}\n",
                    wrap(
                        &format!("({}) {}", cause_letter(i), first_sentences(cause, 2)),
                        WIDTH - 6,
                        "          "
                    )
                );
            }
        } else if let Some(cause) = causes.first().or(c.cause.as_ref()) {
            s += &format!(
                "      {}\n",
                wrap(
                    &format!("likely cause: {}", first_sentences(cause, 3)),
                    WIDTH - 6,
                    "        "
                )
            );
        }
    }
    for d in &sec.differences {
        s += &format!(
            "  {}\n",
            wrap(
                &format!("difference: {}", first_sentences(d, 3)),
                WIDTH - 2,
                "    "
            )
        );
    }
    if let Some(n) = &sec.live.note {
        s += &format!("  {}\n", wrap(&format!("live: {n}"), WIDTH - 2, "    "));
    }
    for t in &sec.live.tables {
        s += "\n";
        s += &format_table(t);
    }
    for d in &sec.live.disagreements {
        s += &format!(
            "  {}\n",
            wrap(
                &format!("simulated linux vs the kernel: {}", first_sentences(d, 3)),
                WIDTH - 2,
                "    "
            )
        );
    }
    s
}

/// The closing tally: claims by verdict per document, then all together.
pub fn format_tally(sections: &[Section]) -> String {
    let mut s = String::from("\nClaims by verdict (reproduced / not reproduced / not testable):\n");
    let mut total = (0, 0, 0);
    let w = sections.iter().map(|x| x.name.len()).max().unwrap_or(0);
    for sec in sections {
        let (a, b, c) = sec.counts();
        total = (total.0 + a, total.1 + b, total.2 + c);
        s += &format!(
            "  {:w$}  {a:3} / {b:3} / {c:3}   {}\n",
            sec.name, sec.doc.author
        );
    }
    s += &format!(
        "  {:w$}  {:3} / {:3} / {:3}\n",
        "all", total.0, total.1, total.2
    );
    s
}
