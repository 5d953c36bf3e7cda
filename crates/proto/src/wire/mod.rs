//! The TCP wire layer: an owned header representation ([`TcpRepr`]) used by the
//! engine, plus the byte codec (`segment`, `options`, `ip`, `checksum`) used by
//! drivers and the analyzer. The engine itself never touches header bytes.

mod checksum;
mod error;
mod ip;
mod options;
mod repr;
mod segment;

pub use checksum::{accumulate, fold, internet_checksum, ChecksumCtx, IP_PROTO_TCP};
pub use error::WireError;
pub use ip::{Ipv4Repr, Ipv6Repr, ECN_CE, ECN_ECT0};
pub use options::{
    kind, rfc1106, MAX_OPTIONS_LEN, MAX_WINDOW_SCALE, RFC1106_BIGWIN_MAX, RFC1106_BIGWIN_UPPER_MAX,
};
pub use repr::*;
pub use segment::{field, TcpSegment};
