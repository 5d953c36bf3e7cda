//! The TCP wire layer: an owned header representation ([`TcpRepr`]) used by the
//! engine, plus the byte codec (`segment`, `options`) used by drivers and the
//! analyzer. The engine itself never touches header bytes.

mod repr;

pub use repr::*;
