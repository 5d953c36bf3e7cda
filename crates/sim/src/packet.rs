//! Packets on their way, in either world: one slab indexed by the events
//! that carry them, and a pool of payload buffers reused so that a run
//! allocates once per packet in flight at its peak, not once per segment.

use crate::link::{Fate, Link};
use crate::qdisc::ecn;
use rand_chacha::ChaCha8Rng;
use tinygram_proto::wire::IPV4_HEADER_LEN;
use tinygram_proto::TcpRepr;

/// A packet on its way.
pub(crate) struct Packet {
    pub repr: TcpRepr,
    pub payload: Vec<u8>,
    /// Sending and receiving host.
    pub src: u32,
    pub dst: u32,
    /// The endpoint the destination host's demultiplexer gives this packet,
    /// when the sender knew it ([`crate::drive::NO_EP`]: look the 4-tuple up on arrival).
    pub to_ep: u32,
    /// The IPv4 ECN field ([`crate::qdisc::ecn`]); links and queues may set CE.
    pub ecn: u8,
    /// Bytes of the IPv4 datagram, taken once: every link and queue on the
    /// way asks, and the header's length walks its options.
    ip_len: u32,
}

impl Packet {
    /// A segment an engine just emitted (`ect`: its `transmit_ect`), from host `src` to `dst`.
    #[inline]
    pub fn sent(
        repr: TcpRepr,
        payload: Vec<u8>,
        (src, dst): (u32, u32),
        to_ep: u32,
        ect: bool,
    ) -> Packet {
        let ip_len = datagram_len(&repr, &payload);
        Packet {
            repr,
            payload,
            src,
            dst,
            to_ep,
            ecn: if ect { ecn::ECT0 } else { ecn::NOT_ECT },
            ip_len,
        }
    }

    /// Offers the packet to `link` at `at`: an ECN-capable packet is marked
    /// CE when the link's backlog has reached its marking threshold (RFC
    /// 3168 5, step marking), then the link decides its fate.
    pub fn offer(
        &mut self,
        link: &mut Link,
        at: tinygram_proto::Instant,
        rng: &mut ChaCha8Rng,
    ) -> Fate {
        let mark_at = link.config().ecn_mark_bytes;
        if ecn::capable(self.ecn) && mark_at > 0 && link.backlog(at) >= mark_at {
            self.ecn = ecn::CE;
        }
        link.transmit(at, self.ip_len(), rng)
    }

    /// Bytes of the IPv4 datagram.
    pub fn ip_len(&self) -> usize {
        debug_assert_eq!(
            self.ip_len,
            datagram_len(&self.repr, &self.payload),
            "a packet changed after it was sent"
        );
        self.ip_len as usize
    }
}

/// Bytes of the IPv4 datagram carrying `repr` and `payload` (under 2^32:
/// the engine's segments fit a 64 KB super-packet).
fn datagram_len(repr: &TcpRepr, payload: &[u8]) -> u32 {
    (IPV4_HEADER_LEN + repr.header_len() + payload.len()) as u32
}

/// The packets in flight and spare payload buffers.
#[derive(Default)]
pub(crate) struct Pool {
    slab: Vec<Option<Packet>>,
    free_slots: Vec<u32>,
    spare_payloads: Vec<Vec<u8>>,
}

impl Pool {
    /// Keeps `p` until an event takes it; its id.
    pub fn store(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free_slots.pop() {
            self.slab[i as usize] = Some(p);
            i
        } else {
            self.slab.push(Some(p));
            (self.slab.len() - 1) as u32
        }
    }

    /// Takes packet `id` out (it must be live).
    pub fn take(&mut self, id: u32) -> Packet {
        let p = self.slab[id as usize].take().expect("live packet");
        self.free_slots.push(id);
        p
    }

    /// Packet `id`, if live.
    pub fn get(&self, id: u32) -> Option<&Packet> {
        self.slab.get(id as usize).and_then(|p| p.as_ref())
    }

    /// Packet `id`, if live.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut Packet> {
        self.slab.get_mut(id as usize).and_then(|p| p.as_mut())
    }

    /// Drops packet `id` (if live), keeping its payload buffer.
    pub fn recycle(&mut self, id: u32) {
        if let Some(p) = self.slab[id as usize].take() {
            self.spare_payloads.push(p.payload);
        }
        self.free_slots.push(id);
    }

    /// A payload buffer to fill (possibly holding old bytes).
    pub fn buffer(&mut self) -> Vec<u8> {
        self.spare_payloads.pop().unwrap_or_default()
    }

    /// Returns a payload buffer for reuse.
    pub fn give_back(&mut self, payload: Vec<u8>) {
        self.spare_payloads.push(payload);
    }

    /// A copy of `p` with its own payload buffer (a link's duplicate).
    pub fn copy(&mut self, p: &Packet) -> Packet {
        let mut payload = self.buffer();
        payload.clear();
        payload.extend_from_slice(&p.payload);
        Packet {
            repr: p.repr,
            payload,
            src: p.src,
            dst: p.dst,
            to_ep: p.to_ep,
            ecn: p.ecn,
            ip_len: p.ip_len,
        }
    }

    /// Stores a copy of live packet `id` (a link's duplicate); the copy's id.
    pub fn duplicate(&mut self, id: u32) -> u32 {
        let orig = self.slab[id as usize].take().expect("live packet");
        let copy = self.copy(&orig);
        self.slab[id as usize] = Some(orig);
        self.store(copy)
    }

    /// What a link's verdict makes of stored packet `id`: nothing when
    /// dropped (its buffer is kept), else when it arrives, and the stored
    /// duplicate and when that arrives if the link duplicated it. (The packet
    /// stays in the slab throughout: a packet is ~150 bytes, and each move
    /// of one is a `memcpy`.)
    pub fn after_link(&mut self, fate: Fate, id: u32) -> Option<Crossed> {
        match fate {
            Fate::Dropped(_) => {
                self.recycle(id);
                None
            }
            Fate::Delivered { at, duplicate_at } => Some(Crossed {
                at,
                pkt: id,
                duplicate: duplicate_at.map(|dup_at| (dup_at, self.duplicate(id))),
            }),
        }
    }
}

/// A packet that crossed a link: when it arrives, and its duplicate's arrival.
pub(crate) struct Crossed {
    pub at: tinygram_proto::Instant,
    pub pkt: u32,
    pub duplicate: Option<(tinygram_proto::Instant, u32)>,
}
