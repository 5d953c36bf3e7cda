//! tinygram-analyze: pcap/pcapng captures -> TCP flows -> findings.
//!
//! Depends only on the engine's wire codec (see ARCHITECTURE.md), so it reads
//! any capture: tinygram's own, tcpdump's, tshark's.

pub mod capture;
pub mod diagnose;
pub mod evidence;
pub mod exchange;
pub mod flow;
pub mod flowtable;
mod hold_findings;
pub mod holds;
pub mod infer;
pub mod sendrule;
pub mod timeseq;

pub use capture::{read_bytes, read_file, Capture, CaptureError, Packet, ReadStats};
pub use diagnose::{
    diagnose, diagnose_file, diagnose_flow, Diagnosis, FileDiagnosis, Finding, FlowReport, Kind,
    Recommendation, Remedy, ReplayEffect, Thresholds,
};
pub use evidence::{Confidence, Inferred, Span};
pub use exchange::{exchanges, Exchange, Exchanges, Shape};
pub use flow::{flows, Flow, Seg};
pub use flowtable::{FlowSummary, FlowTable, Selected, Summarised};
pub use holds::{holds, Hold, HoldCause};
pub use infer::{infer, FlowInference, ScenarioKey, SideInference};
pub use sendrule::{send_rules, SendRule, SendRules};
