//! The report directory: a markdown file, a self-contained HTML page (charts
//! inlined as SVG), each chart as its own .svg file, and report.json with
//! every claim and table for others' scripts.

use super::{
    cause_letter, chart, distinct_causes, mismatch, text_grid_live, Claim, LiveCell, LiveColumn,
    Quantity, Section, Table, Verdict, DOCUMENTS,
};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::path::Path;

/// The report.json schema's name; bump the number when a field changes meaning.
pub const SCHEMA: &str = "tinygram-reproduce/1";

const MISMATCH_LEGEND: &str = "lies outside the tolerance stated above";

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Minimal markdown-to-HTML for our own prose: `code` spans.
fn inline(s: &str) -> String {
    let mut out = String::new();
    let e = html_escape(s);
    let mut code = false;
    for part in e.split('`') {
        if code {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
        code = !code;
    }
    out
}

/// A number with as many digits as its size warrants.
fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn fmt_q(x: &Option<Quantity>) -> String {
    match x {
        Some(q) if q.unit.is_empty() => fmt_value(q.value),
        Some(q) => format!("{} {}", fmt_value(q.value), q.unit),
        None => "-".to_string(),
    }
}

/// A claim's published figure, or a note that the document gives none.
fn published_text(x: &Option<Quantity>) -> String {
    match x {
        Some(_) => fmt_q(x),
        None => "no figure given".to_string(),
    }
}

/// A claim's or cell's number is shaded when it is outside the tolerance of
/// the published figure at every point and the verdict is not reproduced:
/// shading and verdict follow the same rule.
fn q_mismatch(
    p: &Option<Quantity>,
    m: &Option<Quantity>,
    spread: Option<&super::Spread>,
    verdict: Verdict,
) -> bool {
    let outside = match spread {
        Some(sp) => sp.outside(),
        None => mismatch(p.as_ref().map(|q| q.value), m.as_ref().map(|q| q.value)),
    };
    outside && verdict == Verdict::NotReproduced
}

/// Ours as text: the median, and the 10th-90th percentile where it varies.
fn fmt_ours(m: &Option<Quantity>, spread: Option<&super::Spread>) -> String {
    match (m, spread) {
        (Some(q), Some(sp)) if sp.varies() => format!(
            "{} ({}-{}){}",
            fmt_value(q.value),
            fmt_value(sp.dist.p10),
            fmt_value(sp.dist.p90),
            if q.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", q.unit)
            }
        ),
        _ => fmt_q(m),
    }
}

/// The HTML id of a claim ("doupnik-web/x" -> "claim-doupnik-web-x").
fn claim_anchor(id: &str) -> String {
    format!("claim-{}", id.replace('/', "-"))
}

fn verdict_counts_text(c: &Claim) -> String {
    let (r, n, t) = c.cell_counts();
    let total = c.cells.len();
    let mut parts = Vec::new();
    for (k, what) in [
        (r, "reproduced"),
        (n, "not reproduced"),
        (t, "not testable"),
    ] {
        if k > 0 {
            parts.push(format!("{what} in {k}"));
        }
    }
    format!(
        "{} of the {total} settings checked.",
        capitalize(&parts.join(", "))
    )
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

// ----- markdown ------------------------------------------------------------

fn md_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

fn md_grid(headers: &[String], rows: &[Vec<String>]) -> String {
    let mut s = md_row(headers);
    s += &format!("|{}\n", "---|".repeat(headers.len()));
    for r in rows {
        s += &md_row(r);
    }
    s
}

fn md_table(t: &Table, live: &[&LiveColumn]) -> String {
    let (headers, rows) = text_grid_live(t, live);
    format!("*{}*\n\n{}", t.title, md_grid(&headers, &rows))
}

fn md_claim(c: &Claim) -> String {
    let mut s = format!(
        "- **{}**: {} ({}; `{}`)\n",
        c.verdict.label(),
        c.text,
        c.source,
        c.id
    );
    if c.cells.is_empty() {
        if c.published.is_some() || c.measured.is_some() {
            let _ = writeln!(
                s,
                "  - published: {}; ours: {}{}",
                published_text(&c.published),
                fmt_ours(&c.measured, c.spread.as_ref()),
                if q_mismatch(&c.published, &c.measured, c.spread.as_ref(), c.verdict) {
                    " (!)"
                } else {
                    ""
                }
            );
        }
        if let Some(cause) = &c.cause {
            s += &md_cause("likely cause", cause);
        }
        return s;
    }
    let _ = writeln!(s, "\n  {}\n", verdict_counts_text(c));
    let causes = distinct_causes(&c.cells);
    let mut headers = c.cell_headers.clone();
    headers.extend(["published", "ours", "our figures", "verdict"].map(String::from));
    let rows: Vec<Vec<String>> = c
        .cells
        .iter()
        .map(|cell| {
            let mut r = cell.labels.clone();
            r.push(fmt_q(&cell.published));
            let mut ours = fmt_ours(&cell.measured, cell.spread.as_ref());
            if q_mismatch(
                &cell.published,
                &cell.measured,
                cell.spread.as_ref(),
                cell.verdict,
            ) {
                ours.push_str(" (!)");
            }
            r.push(ours);
            r.push(cell.detail.clone());
            r.push(format!(
                "{}{}",
                cell.verdict.label(),
                cause_ref(&causes, &cell.cause)
            ));
            r
        })
        .collect();
    for line in md_grid(&headers, &rows).lines() {
        let _ = writeln!(s, "  {line}");
    }
    s.push('\n');
    match causes.as_slice() {
        [] => {}
        [one] => s += &md_cause("likely cause", one),
        many => {
            for (i, x) in many.iter().enumerate() {
                s += &md_cause(&format!("likely cause ({})", cause_letter(i)), x);
            }
        }
    }
    s
}

/// A cause in markdown: two or three sentences, the evidence folded below.
fn md_cause(label: &str, cause: &str) -> String {
    let (head, rest) = crate::cause_parts(cause);
    let mut s = format!("  - {label}: {head}\n");
    if let Some(rest) = rest {
        let _ = writeln!(
            s,
            "    <details><summary>evidence</summary>\n\n    {rest}\n\n    </details>"
        );
    }
    s
}

/// A cause in HTML: two or three sentences, the evidence folded below.
fn html_cause(cause: &str) -> String {
    let (head, rest) = crate::cause_parts(cause);
    match rest {
        Some(rest) => format!(
            "{} <details><summary>evidence</summary>{}</details>",
            inline(&head),
            inline(&rest)
        ),
        None => inline(&head),
    }
}

/// " (a)" when a cell's cause is one of several distinct causes.
fn cause_ref(causes: &[String], cause: &Option<String>) -> String {
    if causes.len() < 2 {
        return String::new();
    }
    cause
        .as_ref()
        .and_then(|x| causes.iter().position(|y| y == x))
        .map(|i| format!(" ({})", cause_letter(i)))
        .unwrap_or_default()
}

// ----- HTML ----------------------------------------------------------------

fn html_table(t: &Table, live: &[&LiveColumn]) -> String {
    let mut s = format!(
        "<table class=\"results\">\n<caption>{}</caption>\n<tr>",
        html_escape(&t.title)
    );
    for h in &t.label_headers {
        let _ = write!(s, "<th>{}</th>", html_escape(h));
    }
    for c in &t.columns {
        if c.unit.is_empty() {
            let _ = write!(s, "<th>{}</th>", html_escape(&c.name));
        } else {
            let _ = write!(
                s,
                "<th>{}<br><span class=\"unit\">{}</span></th>",
                html_escape(&c.name),
                html_escape(&c.unit)
            );
        }
    }
    for c in live {
        let _ = write!(
            s,
            "<th class=\"live\">{}<br><span class=\"unit\">{}</span></th>",
            html_escape(&c.name),
            html_escape(&c.unit)
        );
    }
    s += "</tr>\n";
    for (ri, r) in t.rows.iter().enumerate() {
        s += "<tr>";
        for l in &r.labels {
            let _ = write!(s, "<td class=\"label\">{}</td>", html_escape(l));
        }
        for (i, v) in r.values.iter().enumerate() {
            let d = t.columns.get(i).map_or(1, |c| c.digits);
            let m = match &v.spread {
                Some(sp) => sp.text(d),
                None => v
                    .measured
                    .map_or_else(|| "-".to_string(), |x| format!("{x:.d$}")),
            };
            let p = v
                .published
                .map(|p| format!(" <span class=\"pub\">[{}]</span>", super::fmt_num(p)))
                .unwrap_or_default();
            if v.outside() {
                let _ = write!(
                    s,
                    "<td class=\"mismatch\" title=\"ours {MISMATCH_LEGEND}\">{m}{p}</td>"
                );
            } else {
                let _ = write!(s, "<td>{m}{p}</td>");
            }
        }
        for c in live {
            match c.cells.get(ri) {
                Some(LiveCell::Value(x)) => {
                    let _ = write!(s, "<td class=\"live\">{x:.d$}</td>", d = c.digits);
                }
                Some(LiveCell::Absent(why)) => {
                    let _ = write!(s, "<td class=\"live na\">n/a: {}</td>", html_escape(why));
                }
                None => s += "<td class=\"live\">-</td>",
            }
        }
        s += "</tr>\n";
    }
    s + "</table>\n"
}

/// What the document leaves open, in a paragraph and a list: each value's
/// range and why, and how many points the verdicts were read over.
pub fn unknowns_text(sec: &Section, quick: bool) -> String {
    if sec.unknowns.is_empty() {
        return "**Left open.** Nothing this experiment's verdicts depend on is run as a range \
                yet: each cell is one run at the values stated above."
            .into();
    }
    let mut s = format!(
        "**Left open.** The document does not give these values; every cell ran at {} \
         points of them (seeded draws of each range, at each value of a listed choice){}, and \
         a verdict holds only if it holds at every point (not testable where the points \
         disagree):",
        sec.points,
        if quick {
            " (--quick: fewer draws than the full run)"
        } else {
            ""
        }
    );
    for u in &sec.unknowns {
        let _ = write!(s, "\n- `{}`: {}; {}.", u.key, u.spec.describe(), u.why);
    }
    s
}

fn html_q_cell(cell: &super::Cell) -> String {
    let (p, m) = (&cell.published, &cell.measured);
    let class = if q_mismatch(p, m, cell.spread.as_ref(), cell.verdict) {
        " class=\"mismatch\""
    } else {
        ""
    };
    format!(
        "<td>{}</td><td{class}>{}</td>",
        html_escape(&fmt_q(p)),
        html_escape(&fmt_ours(m, cell.spread.as_ref()))
    )
}

fn html_claim(c: &Claim) -> String {
    let key = c.verdict.key();
    let mut s = format!(
        "<div class=\"claim\" id=\"{}\">\n<p><span class=\"verdict v-{key}\">{}</span> {} \
         <span class=\"cite\">({}; <code>{}</code>)</span></p>\n",
        claim_anchor(&c.id),
        c.verdict.label(),
        inline(&c.text),
        html_escape(&c.source),
        html_escape(&c.id)
    );
    if c.cells.is_empty() {
        if c.published.is_some() || c.measured.is_some() {
            let class = if q_mismatch(&c.published, &c.measured, c.spread.as_ref(), c.verdict) {
                " class=\"mismatch\""
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "<p class=\"pm\">Published: {}; <span{class}>ours: {}</span></p>",
                html_escape(&published_text(&c.published)),
                html_escape(&fmt_ours(&c.measured, c.spread.as_ref()))
            );
        }
        if let Some(cause) = &c.cause {
            let _ = writeln!(
                s,
                "<div class=\"cause\"><i>Likely cause:</i> {}</div>",
                html_cause(cause)
            );
        }
        return s + "</div>\n";
    }
    let _ = writeln!(s, "<p class=\"pm\">{}</p>", verdict_counts_text(c));
    let causes = distinct_causes(&c.cells);
    s += "<table class=\"cells\">\n<tr>";
    for h in &c.cell_headers {
        let _ = write!(s, "<th>{}</th>", html_escape(h));
    }
    s += "<th>published</th><th>ours</th><th>our figures</th><th>verdict</th></tr>\n";
    for cell in &c.cells {
        s += "<tr>";
        for l in &cell.labels {
            let _ = write!(s, "<td class=\"label\">{}</td>", html_escape(l));
        }
        s += &html_q_cell(cell);
        let _ = writeln!(
            s,
            "<td class=\"label\">{}</td><td class=\"label\"><span class=\"v-{}\">{}</span>{}</td></tr>",
            html_escape(&cell.detail),
            cell.verdict.key(),
            cell.verdict.label(),
            cause_ref(&causes, &cell.cause)
        );
    }
    s += "</table>\n";
    match causes.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(
                s,
                "<div class=\"cause\"><i>Likely cause:</i> {}</div>",
                html_cause(one)
            );
        }
        many => {
            s += "<p class=\"cause\"><i>Likely causes:</i></p><ol type=\"a\" class=\"cause\">\n";
            for x in many {
                let _ = writeln!(s, "<li>{}</li>", html_cause(x));
            }
            s += "</ol>\n";
        }
    }
    s + "</div>\n"
}

const CSS: &str = "\
body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}\
caption{caption-side:top;text-align:left;font-style:italic;padding:0 0 4px}\
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}\
td.label,th{text-align:left}\
th{background:#f3f3f3}\
.unit{font-weight:normal;color:#666;font-size:12px}\
.pub{color:#666}\
.mismatch{background:#fde2c8}\
.live{background:#e8f0fb}\
td.na{color:#666;font-size:85%}\
.verdict{font-weight:bold;padding:0 4px;border-radius:3px}\
.v-reproduced{color:#1f6f1f}\
.v-not_reproduced{color:#b22}\
.v-not_testable{color:#7a5b00}\
.claim{border-left:4px solid #ddd;padding:0 0 0 10px;margin:1em 0}\
.cite{color:#666;font-size:13px}\
.cause{font-size:14px}\
figure{margin:1em 0}\
figure svg{width:100%;height:auto}\
.chart svg{max-width:100%;height:auto}\
figcaption{font-size:14px;color:#444}\
code{background:#f3f3f3;padding:0 3px}\
nav ol{margin:0}";

/// Writes `dir/report.md`, `dir/index.html`, `dir/report.json` and the charts
/// as `dir/<experiment>-<n>.svg`.
pub fn write_report(dir: &Path, sections: &[Section], quick: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mode = if quick {
        "the quick set, `--quick`, with fewer variants and shorter runs"
    } else {
        "the full set"
    };
    let intro = format!(
        "Generated by `tinygram reproduce` ({mode}). Every \"ours\" number comes from the \
         simulator running the rules; the published numbers are shown beside them (in \
         brackets in tables, as hollow markers in charts) for comparison only, and nothing \
         is tuned to them. Each claim of a document is checked on our numbers and marked \
         reproduced, not reproduced (with its likely cause) or not testable (the document \
         does not give what the claim depends on). The same claims and tables are in \
         `report.json`."
    );
    let intro = format!("{intro}\n\n**Tolerance.** {}", super::tolerance_text());
    let intro = if sections.iter().any(|s| !s.live.columns.is_empty()) {
        format!(
            "{intro} The columns named \"{}\" and \"tinygram ... over TUN\" were measured \
             live (`--live`) on this machine's own kernel and on tinygram over a TUN device, \
             not simulated; each section's \"Linux today, measured live\" says how, and \
             checks the simulated linux stack against the kernel.",
            super::live_column_name()
        )
    } else {
        intro
    };
    let mut md = format!(
        "# tinygram: the source documents' experiments, reproduced\n\n{intro}\n\n## Contents\n\n\
         - [Overview](#overview)\n"
    );
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>tinygram reproduce</title><style>{CSS}</style></head><body>\n\
         <h1>tinygram: the source documents' experiments, reproduced</h1>\n<p>{}</p>\n\
         <nav id=\"contents\"><h2>Contents</h2><ol>\n<li><a href=\"#overview\">Overview</a></li>\n",
        inline(&intro).replace("**Tolerance.**", "<b>Tolerance.</b>")
    );
    for (i, sec) in sections.iter().enumerate() {
        let _ = writeln!(md, "- [{}. {}](#{})", i + 1, sec.title, sec.name);
        let _ = writeln!(
            html,
            "<li><a href=\"#{}\">{}</a></li>",
            sec.name,
            html_escape(sec.title)
        );
    }
    md += "- [Sources](#sources)\n\n";
    html += "<li><a href=\"#sources\">Sources</a></li>\n</ol></nav>\n";

    // Overview: claims by verdict per experiment.
    md += "<a id=\"overview\"></a>\n## Overview\n\nClaims by verdict; a claim checked over a \
           matrix of settings counts once (its settings are in its own table).\n\n\
           | experiment | source | reproduced | not reproduced | not testable |\n|---|---|---|---|---|\n";
    html += "<h2 id=\"overview\">Overview</h2>\n<p>Claims by verdict; a claim checked over a \
             matrix of settings counts once (its settings are in its own table).</p>\n\
             <table class=\"overview\">\n<tr><th>experiment</th><th>source</th>\
             <th>reproduced</th><th>not reproduced</th><th>not testable</th></tr>\n";
    let mut totals = (0, 0, 0);
    for (i, sec) in sections.iter().enumerate() {
        let (r, n, t) = sec.counts();
        totals = (totals.0 + r, totals.1 + n, totals.2 + t);
        let _ = writeln!(
            md,
            "| [{}. {}](#{}) | {} | {r} | {n} | {t} |",
            i + 1,
            sec.title,
            sec.name,
            sec.doc.short()
        );
        let _ = writeln!(
            html,
            "<tr data-experiment=\"{}\"><td class=\"label\"><a href=\"#{}\">{}. {}</a></td>\
             <td class=\"label\">{}</td><td class=\"n-reproduced\">{r}</td>\
             <td class=\"n-not_reproduced\">{n}</td><td class=\"n-not_testable\">{t}</td></tr>",
            sec.name,
            sec.name,
            i + 1,
            html_escape(sec.title),
            html_escape(&sec.doc.short())
        );
    }
    let _ = writeln!(
        md,
        "| all | | {} | {} | {} |\n\nIn tables, (!) marks a value of ours that \
         {MISMATCH_LEGEND}.\n",
        totals.0, totals.1, totals.2
    );
    let _ = writeln!(
        html,
        "<tr><td class=\"label\"><b>all</b></td><td></td><td>{}</td><td>{}</td><td>{}</td></tr>\n\
         </table>\n<p>In tables, a <span class=\"mismatch\">shaded</span> value of ours \
         {MISMATCH_LEGEND}; published values are in brackets.</p>",
        totals.0, totals.1, totals.2
    );

    for (i, sec) in sections.iter().enumerate() {
        let source = format!("{} ({}), {}", sec.doc.short(), sec.doc.date, sec.part);
        let _ = write!(
            md,
            "<a id=\"{}\"></a>\n## {}. {}\n\nSource: {source}.\n\n{}\n\n",
            sec.name,
            i + 1,
            sec.title,
            sec.setup,
        );
        let _ = writeln!(
            html,
            "<section id=\"{}\">\n<h2>{}. {}</h2>\n<p class=\"source\">Source: {} \
             [<a href=\"#src-{}\">full citation</a>]</p>",
            sec.name,
            i + 1,
            html_escape(sec.title),
            html_escape(&source),
            sec.doc.key
        );
        for p in sec.setup.split("\n\n") {
            let _ = writeln!(html, "<p>{}</p>", inline(p));
        }
        let open = unknowns_text(sec, quick);
        let _ = writeln!(md, "{open}\n");
        for p in open.split("\n") {
            let _ = writeln!(html, "<p>{}</p>", inline(p.trim_start_matches("- ")));
        }
        for (ti, t) in sec.tables.iter().enumerate() {
            md += &md_table(t, &sec.live_columns(ti));
            md += "\n";
            html += &html_table(t, &sec.live_columns(ti));
        }
        for (ci, c) in sec.charts.iter().enumerate() {
            let file = format!("{}-{}.svg", sec.name, ci + 1);
            let svg = chart::svg(c);
            std::fs::write(dir.join(&file), &svg)?;
            let _ = writeln!(md, "![{}]({file})\n", c.title);
            let _ = writeln!(html, "<div class=\"chart\">{svg}</div>");
        }
        for (pi, (caption, svg)) in sec.plots.iter().enumerate() {
            let file = format!("{}-timeseq-{}.svg", sec.name, pi + 1);
            std::fs::write(dir.join(&file), svg)?;
            let _ = writeln!(md, "![{caption}]({file})\n\n*{caption}*\n");
            // Inlined, so index.html stays one self-contained file; the CSS
            // scales it to the page width (it carries a viewBox).
            let _ = writeln!(
                html,
                "<figure>{svg}<figcaption>{}</figcaption></figure>",
                html_escape(caption)
            );
        }
        if !sec.findings.is_empty() {
            md += "### What the numbers say\n\n";
            html += "<h3>What the numbers say</h3><ul>\n";
            for f in &sec.findings {
                let _ = writeln!(md, "- {f}");
                let _ = writeln!(html, "<li>{}</li>", inline(f));
            }
            md += "\n";
            html += "</ul>\n";
        }
        if !sec.claims.is_empty() {
            md += "### The document's claims, checked on our numbers\n\n";
            html += "<h3>The document's claims, checked on our numbers</h3>\n";
            for c in &sec.claims {
                md += &md_claim(c);
                html += &html_claim(c);
            }
            md += "\n";
        }
        if !sec.differences.is_empty() {
            md += "### Differences from the document, and their likely causes\n\n";
            html += "<h3>Differences from the document, and their likely causes</h3><ul>\n";
            for d in &sec.differences {
                let _ = writeln!(md, "- {d}");
                let _ = writeln!(html, "<li>{}</li>", inline(d));
            }
            md += "\n";
            html += "</ul>\n";
        }
        let live = &sec.live;
        if live.note.is_some() || !live.tables.is_empty() || !live.disagreements.is_empty() {
            md += "### Linux today, measured live\n\n";
            html += "<h3>Linux today, measured live</h3>\n";
            if let Some(n) = &live.note {
                let _ = writeln!(md, "{n}\n");
                let _ = writeln!(html, "<p>{}</p>", inline(n));
            }
            for t in &live.tables {
                md += &md_table(t, &[]);
                md += "\n";
                html += &html_table(t, &[]);
            }
            if !live.disagreements.is_empty() {
                md += "Where the simulated `linux` stack and the kernel disagree:\n\n";
                html += "<p>Where the simulated <code>linux</code> stack and the kernel disagree:</p><ul>\n";
                for d in &live.disagreements {
                    let _ = writeln!(md, "- {d}");
                    let _ = writeln!(html, "<li>{}</li>", inline(d));
                }
                md += "\n";
                html += "</ul>\n";
            }
        }
        html += "</section>\n";
    }

    md += "<a id=\"sources\"></a>\n## Sources\n\n";
    html += "<h2 id=\"sources\">Sources</h2>\n<ol>\n";
    for d in DOCUMENTS.iter() {
        let _ = writeln!(md, "- {}.", d.citation());
        let _ = writeln!(
            html,
            "<li id=\"src-{}\">{}.</li>",
            d.key,
            html_escape(&d.citation())
        );
    }
    html += "</ol>\n</body></html>\n";
    std::fs::write(dir.join("report.md"), md)?;
    std::fs::write(dir.join("index.html"), html)?;
    let mut js =
        serde_json::to_string_pretty(&json(sections, quick)).map_err(std::io::Error::other)?;
    js.push('\n');
    std::fs::write(dir.join("report.json"), js)?;
    Ok(())
}

// ----- report.json ---------------------------------------------------------

fn q_json(x: &Option<Quantity>) -> Value {
    match x {
        Some(q) => json!({ "value": q.value, "unit": q.unit }),
        None => Value::Null,
    }
}

fn labels_json(headers: &[String], labels: &[String]) -> Value {
    let mut m = Map::new();
    for (h, l) in headers.iter().zip(labels) {
        m.insert(h.clone(), json!(l));
    }
    Value::Object(m)
}

fn claim_json(sec: &Section, c: &Claim) -> Value {
    json!({
        "id": c.id,
        "source": {
            "document": sec.doc.short(),
            "key": sec.doc.key,
            "section": c.source,
        },
        "text": c.text,
        "published": q_json(&c.published),
        "measured": q_json(&c.measured),
        "verdict": c.verdict.key(),
        "cause": c.cause,
        "points": c.points.to_json(),
        "spread": c.spread.as_ref().map(super::Spread::to_json),
        "cells": c.cells.iter().map(|cell| json!({
            "labels": labels_json(&c.cell_headers, &cell.labels),
            "published": q_json(&cell.published),
            "measured": q_json(&cell.measured),
            "detail": cell.detail,
            "verdict": cell.verdict.key(),
            "cause": cell.cause,
            "configuration": cell.config,
            "points": cell.points.to_json(),
            "spread": cell.spread.as_ref().map(super::Spread::to_json),
        })).collect::<Vec<_>>(),
    })
}

fn live_json(c: &LiveColumn) -> Value {
    json!({
        "name": c.name,
        "unit": c.unit,
        "cells": c.cells.iter().map(|x| match x {
            LiveCell::Value(v) => json!({ "value": v }),
            LiveCell::Absent(why) => json!({ "value": null, "absent": why }),
        }).collect::<Vec<_>>(),
    })
}

fn table_json(t: &Table, live: &[&LiveColumn]) -> Value {
    json!({
        "live_columns": live.iter().map(|c| live_json(c)).collect::<Vec<_>>(),
        "title": t.title,
        "label_columns": t.label_headers,
        "value_columns": t.columns.iter().map(|c| json!({"name": c.name, "unit": c.unit})).collect::<Vec<_>>(),
        "rows": t.rows.iter().map(|r| json!({
            "labels": labels_json(&t.label_headers, &r.labels),
            "values": r.values.iter().zip(&t.columns).map(|(v, c)| json!({
                "column": c.name,
                "unit": c.unit,
                "published": v.published,
                "measured": v.measured,
                "mismatch": v.outside(),
                "spread": v.spread.as_ref().map(super::Spread::to_json),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The report as JSON: every claim (with its verdict and cause) and every
/// table (published beside measured), per experiment; schema [`SCHEMA`].
pub fn json(sections: &[Section], quick: bool) -> Value {
    let count = |sec: &Section, v: Verdict| sec.claims.iter().filter(|c| c.verdict == v).count();
    json!({
        "schema": SCHEMA,
        "mode": if quick { "quick" } else { "full" },
        "tolerance": {
            "factor": super::TOLERANCE,
            "text": super::tolerance_text(),
        },
        "sources": DOCUMENTS.iter().map(|d| json!({
            "key": d.key,
            "author": d.author,
            "title": d.title,
            "date": d.date,
            "published_in": d.venue,
            "citation": d.citation(),
        })).collect::<Vec<_>>(),
        "experiments": sections.iter().map(|sec| json!({
            "name": sec.name,
            "title": sec.title,
            "source": {
                "document": sec.doc.short(),
                "key": sec.doc.key,
                "section": sec.part,
            },
            "counts": {
                "reproduced": count(sec, Verdict::Reproduced),
                "not_reproduced": count(sec, Verdict::NotReproduced),
                "not_testable": count(sec, Verdict::NotTestable),
            },
            "unknowns": sec.unknowns.iter().map(super::Unknown::to_json).collect::<Vec<_>>(),
            "samples": sec.samples,
            "points": sec.points,
            "claims": sec.claims.iter().map(|c| claim_json(sec, c)).collect::<Vec<_>>(),
            "tables": sec.tables.iter().enumerate()
                .map(|(i, t)| table_json(t, &sec.live_columns(i)))
                .collect::<Vec<_>>(),
            "live": {
                "note": sec.live.note,
                "tables": sec.live.tables.iter().map(|t| table_json(t, &[])).collect::<Vec<_>>(),
                "disagreements": sec.live.disagreements,
            },
            "findings": sec.findings,
            "differences": sec.differences,
        })).collect::<Vec<_>>(),
    })
}
