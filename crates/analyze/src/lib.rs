//! tinygram-analyze: pcap/pcapng captures -> TCP flows -> findings.
//!
//! Depends only on the engine's wire codec (see ARCHITECTURE.md), so it reads
//! any capture: tinygram's own, tcpdump's, tshark's.

pub mod capture;
pub mod diagnose;
pub mod evidence;
pub mod flow;
pub mod infer;
pub mod timeseq;

pub use capture::{read_bytes, read_file, Capture, CaptureError, Packet, ReadStats};
pub use diagnose::{diagnose, Diagnosis, Finding, FlowReport, Kind, Thresholds};
pub use evidence::{Confidence, Inferred, Span};
pub use flow::{flows, Flow, Seg};
pub use infer::{infer, FlowInference, ScenarioKey, SideInference};
