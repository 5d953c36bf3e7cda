//! tinygram-proto: a sans-IO TCP engine.
//!
//! Nothing here reads a clock, does I/O or draws random numbers: drivers (the
//! simulator, the TUN driver, the drill runner) pass time and segments in and
//! take segments and timer deadlines out. See [`Connection`] for the call order.

pub mod bigwin;
pub mod cc;
pub mod chrono;
pub mod config;
pub mod conn;
pub mod counters;
pub mod endpoint;
pub mod fastopen;
pub mod isn;
pub mod nak;
pub mod policy;
pub mod prefetch;
pub mod profile;
pub mod prr;
pub mod rack;
pub mod recv_buf;
pub mod rtt;
pub mod sack;
pub mod sack_bsd;
pub mod send_buf;
pub mod sent;
pub mod seq;
pub mod settings;
pub mod skb;
pub mod state;
pub mod suggest;
pub mod time;
pub mod timestamps;
pub mod trace;
pub mod tso;
pub mod wire;

pub use cc::{CcFactory, CcInit, CongestionControl};
pub use config::{
    BufferLimit, Config, ConfigError, LossIs, OptionSet, RecoverySet, SlowStart, SndBufCounts,
};
pub use conn::{rst_reply, ConnError, Connection, WriteError};
pub use counters::Counters;
pub use endpoint::{Endpoint, Unmatched};
pub use isn::{IsnGenerator, IsnSeries};
pub use policy::{DelackCount, WindowAdvertise, WindowUpdate};
pub use profile::Profile;
pub use seq::SeqNumber;
pub use state::State;
pub use time::{Duration, Instant};
pub use trace::{HoldRule, TraceEvent};
pub use wire::{Flags, TcpOptions, TcpRepr};
