//! `--stack`: whose defaults a new socket gets before the script's own setsockopts.
//!
//! Upstream packetdrill scripts (google/packetdrill gtests/net/tcp, the Linux
//! kernel's tools/testing/selftests/net/packetdrill) are written against
//! Linux and lean on its defaults without saying so: above all, Linux ACKs
//! the first data of a connection at once (quick-ACK mode) where tinygram's
//! default `delayed` policy waits 200 ms. `--stack linux` gives new sockets
//! the Linux behaviour the engine already models; the script's setsockopts
//! still override it.

use std::fmt;
use std::str::FromStr;
use tinygram_proto::policy::SendPolicyKind;
use tinygram_proto::profile::{self, Profile};
use tinygram_proto::Config;

/// Whose defaults new sockets get: a stack profile (`tinygram profiles`).
/// `rfc` (alias `tinygram`) is the engine's own defaults.
#[derive(Clone, Copy, Debug)]
pub struct Stack(&'static Profile);

impl Default for Stack {
    fn default() -> Self {
        Stack::rfc()
    }
}

impl PartialEq for Stack {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}
impl Eq for Stack {}

impl Stack {
    /// The engine's own defaults (`Config::default()`): strict Nagle, delayed ACK.
    pub fn rfc() -> Stack {
        Stack(&profile::RFC)
    }

    /// Linux's defaults, as far as the engine models them (the `linux` profile).
    pub fn linux() -> Stack {
        Stack(&profile::LINUX)
    }

    /// The profile behind this stack.
    pub fn profile(self) -> &'static Profile {
        self.0
    }

    /// The configuration a new socket starts from: the profile's settings,
    /// each with its source in `tinygram profiles NAME`.
    ///
    /// Buffers keep the profile's sizes; the drill runner sizes the receive
    /// buffer from the script's `wscale` as before.
    pub fn config(self) -> Config {
        self.0.config()
    }

    /// The send policy `TCP_NODELAY` 0 selects: the stack's flavour of Nagle
    /// (its own send policy, or strict Nagle if the profile sends at once).
    pub fn nagle(self) -> SendPolicyKind {
        match self.config().send_policy {
            SendPolicyKind::NoDelay => SendPolicyKind::Nagle,
            p => p,
        }
    }
}

impl FromStr for Stack {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        profile::find(s)
            .map(Stack)
            .map_err(|e| e.replacen("unknown profile", "unknown stack", 1))
    }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinygram_proto::policy::AckPolicyKind;
    use tinygram_proto::{Duration, SlowStart};

    #[test]
    fn linux_defaults_are_valid_and_differ_where_linux_does() {
        let l = Stack::linux().config();
        assert!(l.validate().is_ok());
        assert_eq!(l.ack_policy, AckPolicyKind::QuickAck);
        assert_eq!(l.send_policy, SendPolicyKind::Minshall);
        assert_eq!(l.rto_max, Duration::from_secs(120));
        assert_eq!(l.congestion.name(), "cubic");
        assert_eq!(l.slow_start, SlowStart::Hystart);
        assert!(l.recovery.prr && l.recovery.tlp && l.recovery.rack);
        let t = Stack::rfc().config();
        assert_eq!(format!("{t:?}"), format!("{:?}", Config::default()));
        assert_eq!("linux".parse::<Stack>(), Ok(Stack::linux()));
        // `tinygram`, the stack's old name, is an alias of `rfc`.
        assert_eq!("tinygram".parse::<Stack>(), Ok(Stack::rfc()));
        assert_eq!(Stack::rfc().to_string(), "rfc");
        let e = "linx".parse::<Stack>().unwrap_err();
        assert!(
            e.contains("unknown stack") && e.contains("did you mean \"linux\"?"),
            "{e}"
        );
        assert_eq!(Stack::linux().nagle(), SendPolicyKind::Minshall);
        assert_eq!(Stack::rfc().nagle(), SendPolicyKind::Nagle);
    }
}
