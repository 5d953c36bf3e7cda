//! Connection states (RFC 9293 3.3.2).

use core::fmt;

/// The RFC 9293 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

impl State {
    /// States in which we have sent our FIN (or will, once queued data is out).
    pub fn fin_sent(self) -> bool {
        matches!(
            self,
            State::FinWait1 | State::FinWait2 | State::Closing | State::LastAck | State::TimeWait
        )
    }
    /// States in which the peer has sent its FIN.
    pub fn fin_received(self) -> bool {
        matches!(
            self,
            State::CloseWait | State::Closing | State::LastAck | State::TimeWait
        )
    }
    /// The connection is synchronized (RFC 9293 3.5: past the handshake).
    pub fn synchronized(self) -> bool {
        !matches!(
            self,
            State::Closed | State::Listen | State::SynSent | State::SynReceived
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynReceived => "SYN-RECEIVED",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN-WAIT-1",
            State::FinWait2 => "FIN-WAIT-2",
            State::CloseWait => "CLOSE-WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST-ACK",
            State::TimeWait => "TIME-WAIT",
        })
    }
}
