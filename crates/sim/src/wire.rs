//! The one way to watch a run's wire, in either world: a [`Frame`] per
//! packet at the world's observation point (the two-host world: as its
//! sender offers it to the link; the many-flow world: as it starts onto the
//! bottleneck, a mirror port there), given to a tap, recorded as
//! [`WireEvent`]s, or both. Watching changes nothing in the run.

use crate::link::Fate;
use tinygram_proto::{Instant, TcpRepr};

/// A packet as a capture sees it.
pub struct Frame<'a> {
    /// When it was seen.
    pub at: Instant,
    /// Sending and receiving host (the two-host world: 0 client, 1 server).
    pub src: u32,
    pub dst: u32,
    /// 0: client side to server side, 1: the other way.
    pub dir: u8,
    pub repr: &'a TcpRepr,
    pub payload: &'a [u8],
    /// The IPv4 ECN field ([`crate::qdisc::ecn`]).
    pub ecn: u8,
    /// What the next link did with it: dropped, or when it (and a duplicate) arrived.
    pub fate: Fate,
}

/// A tap: called with every frame, in the order the run sees them.
pub type Tap = dyn FnMut(&Frame);

/// What a frame did on the wire, for captures (pcap) and plots.
#[derive(Clone, Debug)]
pub struct WireEvent {
    /// When the frame was seen (two hosts: offered to the link by its sender).
    pub at: Instant,
    /// 0: client to server, 1: server to client.
    pub dir: u8,
    pub repr: TcpRepr,
    pub payload_len: usize,
    /// Lost on the link (queue, random loss or bit error).
    pub dropped: bool,
    /// When it reached the other host (`None` if dropped).
    pub arrived: Option<Instant>,
    /// When the link's duplicate of it arrived, if the link duplicated it.
    pub duplicate_arrived: Option<Instant>,
}

impl WireEvent {
    /// The record of `f`.
    pub fn of(f: &Frame) -> WireEvent {
        let (dropped, arrived, duplicate_arrived) = match f.fate {
            Fate::Dropped(_) => (true, None, None),
            Fate::Delivered { at, duplicate_at } => (false, Some(at), duplicate_at),
        };
        WireEvent {
            at: f.at,
            dir: f.dir,
            repr: *f.repr,
            payload_len: f.payload.len(),
            dropped,
            arrived,
            duplicate_arrived,
        }
    }
}

/// A world's watchers: a recorded capture and a tap, each if asked for.
#[derive(Default)]
pub(crate) struct Watch {
    /// Frames seen, if a capture was requested.
    events: Option<Vec<WireEvent>>,
    /// Payload bytes of captured frames, if requested (for pcap files).
    payloads: Option<Vec<Vec<u8>>>,
    tap: Option<Box<Tap>>,
}

impl Watch {
    /// Records every frame (headers; payloads too if `payloads`).
    pub fn enable_capture(&mut self, payloads: bool) {
        self.events = Some(Vec::new());
        if payloads {
            self.payloads = Some(Vec::new());
        }
    }

    /// The frames recorded since [`Self::enable_capture`].
    pub fn capture(&self) -> (&[WireEvent], Option<&[Vec<u8>]>) {
        (
            self.events.as_deref().unwrap_or(&[]),
            self.payloads.as_deref(),
        )
    }

    pub fn set_tap(&mut self, tap: Box<Tap>) {
        self.tap = Some(tap);
    }

    /// Whether anyone watches (so a world builds no frame for nobody).
    #[inline]
    pub fn on(&self) -> bool {
        self.events.is_some() || self.tap.is_some()
    }

    /// Shows `f` to the watchers.
    pub fn see(&mut self, f: &Frame) {
        if let Some(events) = &mut self.events {
            events.push(WireEvent::of(f));
            if let Some(p) = &mut self.payloads {
                p.push(f.payload.to_vec());
            }
        }
        if let Some(tap) = &mut self.tap {
            tap(f);
        }
    }
}
