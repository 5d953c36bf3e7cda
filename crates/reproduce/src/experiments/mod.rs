//! The experiments: which variants each document's experiment needs, the
//! published numbers, and what to read off our results.

mod cheshire;
mod davids;
mod doupnik;
mod fox;
mod westfield;

use crate::{
    document, q, scenario, At, Cell, Chart, Claim, Column, Done, Experiment, Job, Row, Section,
    Series, Table, Unknown, Val, Verdict,
};
use cheshire::*;
use davids::*;
use doupnik::*;
use fox::*;
use westfield::*;

pub use davids::{nagle_release_schedule, trace_figures};

/// Every experiment, in the order of the report.
pub static EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "doupnik-web",
        title: "Web serving with Nagle on, off and the new policy",
        doc: "doupnik-1999",
        part: "section 3, Table 1",
        base: include_str!("../../../../scenarios/doupnik-web.toml"),
        unknowns: doupnik_unknowns,
        jobs: doupnik_jobs,
        section: doupnik_section,
    },
    Experiment {
        name: "davids-traces",
        title: "50 writes of 10 bytes: Nagle, NODELAY, naglim and the delayed-ACK time",
        doc: "davids-2001",
        part: "traces 1-7 (Figures 1-7)",
        base: include_str!("../../../../scenarios/davids-traces.toml"),
        unknowns: davids_unknowns,
        jobs: davids_jobs,
        section: davids_section,
    },
    Experiment {
        name: "cheshire-cliff",
        title: "The 99,912 / 99,913-byte cliff",
        doc: "cheshire-2005",
        part: "Case Study: WiFi Performance Testing Program, and the November 2012 update",
        base: include_str!("../../../../scenarios/cheshire-cliff.toml"),
        unknowns: cheshire_unknowns,
        jobs: cheshire_jobs,
        section: cheshire_section,
    },
    Experiment {
        name: "westfield-ftp",
        title: "FTP into a one-segment window: delayed ACK, interactivity and fuzzball",
        doc: "westfield-mills-1985",
        part: "Westfield's post of 31 October 1985 and Mills' reply of 1 November",
        base: include_str!("../../../../scenarios/westfield-ftp.toml"),
        unknowns: westfield_unknowns,
        jobs: westfield_jobs,
        section: westfield_section,
    },
    Experiment {
        name: "fox-satellite",
        title: "Big windows and NAKs over a noisy satellite link",
        doc: "rfc1106",
        part: "appendix, Figures 1 and 2",
        base: include_str!("../../../../scenarios/fox-satellite.toml"),
        unknowns: fox_unknowns,
        jobs: fox_jobs,
        section: fox_section,
    },
];

/// A section with the experiment's name, title and source filled in.
pub(crate) fn shell(name: &str) -> Section {
    let e = EXPERIMENTS
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no experiment {name:?}"));
    Section {
        name: e.name,
        title: e.title,
        doc: document(e.doc),
        part: e.part,
        setup: String::new(),
        tables: Vec::new(),
        charts: Vec::new(),
        findings: Vec::new(),
        differences: Vec::new(),
        claims: Vec::new(),
        plots: Vec::new(),
        live: Default::default(),
        unknowns: Vec::new(),
        samples: 0,
        points: 1,
    }
}

fn base_of(name: &str) -> &'static str {
    EXPERIMENTS
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.base)
        .unwrap_or("")
}

/// A base scenario with its `[workload]` table replaced by `workload`
/// (TOML lines), for runs whose workload is of another type than the file's.
fn with_workload(base: &str, workload: &str) -> String {
    let head = base.split("[workload]").next().unwrap_or(base);
    format!("{head}[workload]\n{workload}\n")
}

fn o(k: &str, v: impl std::fmt::Display) -> String {
    format!("{k}={v}")
}

fn find<'a>(done: &'a [Done], key: &[&str]) -> Option<&'a Done> {
    done.iter()
        .find(|d| d.key.iter().map(String::as_str).eq(key.iter().copied()))
}
