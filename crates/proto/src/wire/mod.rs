//! The TCP wire layer: an owned header representation ([`TcpRepr`]) used by the
//! engine, plus the byte codec (`options`, `error`) used by drivers and the
//! analyzer. The engine itself never touches header bytes.

mod error;
mod options;
mod repr;

pub use error::WireError;
pub use options::{
    kind, rfc1106, MAX_OPTIONS_LEN, MAX_WINDOW_SCALE, RFC1106_BIGWIN_MAX, RFC1106_BIGWIN_UPPER_MAX,
};
pub use repr::*;
