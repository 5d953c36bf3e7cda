//! `whatif`'s capture inference: a capture (given whole, or a conversation
//! the bytes describe, written as one) is read, split into flows, and each
//! flow's inference must come back without a panic, with every scenario key
//! it sets, and every value it says to sweep, accepted by the scenario
//! parser (whatif writes them into a scenario file `tinygram run` must run).

use crate::Input;
use tinygram_proto::wire::{Ipv4Repr, SackBlocks, TcpOptions, TcpRepr, Timestamps};
use tinygram_proto::{Flags, SeqNumber};

/// Flows inferred per input at most (a capture may hold many).
const MAX_FLOWS: usize = 8;
/// Segments a described conversation holds at most.
const MAX_SEGMENTS: usize = 200;

/// The scenario every inferred key is applied to.
const BASE: &str = "name = \"fuzz\"\nduration = \"60s\"\n\
                    [workload]\ntype = \"request-response\"\nrequest = [100]\nresponse = [100]\n";

/// Reads `data` as a pcap or pcapng file if it starts like one, else as the
/// conversation it describes ([`conversation`]); infers every flow (up to
/// eight) and checks its scenario keys.
pub fn infer(data: &[u8]) {
    let bytes = if is_capture(data) {
        data.to_vec()
    } else {
        conversation(data)
    };
    let Ok(cap) = tinygram_analyze::read_bytes(&bytes) else {
        return;
    };
    for flow in tinygram_analyze::flows(&cap).iter().take(MAX_FLOWS) {
        let inf = tinygram_analyze::infer(flow);
        check_keys(&inf);
    }
}

/// Every key, with its value and then each sweep value, must parse as a
/// `--set` override of a plain scenario.
fn check_keys(inf: &tinygram_analyze::FlowInference) {
    let keys = inf.scenario_keys();
    let all: Vec<String> = keys
        .iter()
        .map(|k| format!("{}={}", k.key, k.value))
        .collect();
    if let Err(e) = tinygram_sim::Scenario::from_str(BASE, "<fuzz>", &all) {
        panic!("whatif's inferred keys do not make a scenario: {e}\n{all:#?}");
    }
    for k in keys.iter().filter(|k| !k.sweep.is_empty()) {
        for v in &k.sweep {
            let mut set = all.clone();
            set.push(format!("{}={v}", k.key));
            if let Err(e) = tinygram_sim::Scenario::from_str(BASE, "<fuzz>", &set) {
                panic!(
                    "whatif would sweep {}={v}, which no scenario takes: {e}",
                    k.key
                );
            }
        }
    }
}

fn is_capture(data: &[u8]) -> bool {
    matches!(
        data.get(..4),
        Some([0xa1, 0xb2, 0xc3, 0xd4] | [0xd4, 0xc3, 0xb2, 0xa1])
            | Some([0xa1, 0xb2, 0x3c, 0x4d] | [0x4d, 0x3c, 0xb2, 0xa1])
            | Some([0x0a, 0x0d, 0x0d, 0x0a])
    )
}

/// One TCP conversation between 10.0.0.1 and 10.0.0.2 the bytes describe,
/// as a raw-IPv4 pcap file: an optional handshake whose SYNs offer MSS,
/// window scaling, SACK and timestamps as the bytes say, then segments,
/// each with a direction, a time step, flags, a payload length, a window,
/// and whether it resends earlier data or acknowledges less than all.
pub fn conversation(data: &[u8]) -> Vec<u8> {
    let mut inp = Input::new(data);
    let mut pcap = Pcap::new();
    let ports = [inp.u16() | 1024, 80];
    let mut nxt = [SeqNumber(inp.u32()), SeqNumber(inp.u32())];
    let mut t_us: u64 = 1_000_000;
    let ts_on = inp.bool();
    let mss = 536 + u16::from(inp.u8()) * 4;
    if inp.bool() {
        for d in 0..2 {
            let opts = TcpOptions {
                mss: Some(mss),
                window_scale: inp.bool().then(|| inp.u8() % 15),
                sack_permitted: inp.bool(),
                timestamps: ts_on.then_some(Timestamps {
                    tsval: t_us as u32 / 1000,
                    tsecr: 0,
                }),
                ..TcpOptions::default()
            };
            let flags = if d == 0 {
                Flags::SYN
            } else {
                Flags::SYN | Flags::ACK
            };
            let seg = TcpRepr {
                src_port: ports[d],
                dst_port: ports[1 - d],
                seq: nxt[d],
                ack: nxt[1 - d] + 1,
                flags,
                window: inp.u16(),
                urgent: 0,
                options: opts,
            };
            nxt[d] += 1;
            t_us += u64::from(inp.u16());
            pcap.push(t_us, d, &seg, 0);
        }
    }
    for _ in 0..MAX_SEGMENTS {
        if inp.is_empty() {
            break;
        }
        let b = inp.u8();
        let d = usize::from(b & 1);
        t_us += u64::from(inp.u16()) << (b >> 5);
        let len = match inp.u8() {
            0..=63 => 0,
            n => usize::from(n) * usize::from(mss) / 255,
        };
        let mut flags = Flags::ACK;
        flags.set(Flags::PSH, b & 2 != 0 && len > 0);
        flags.set(Flags::FIN, b & 4 != 0 && b & 8 != 0);
        let resend = if b & 16 != 0 {
            usize::from(inp.u8()) * 16
        } else {
            0
        };
        let short_ack = if b & 8 != 0 && b & 4 == 0 {
            usize::from(inp.u8()) * 8
        } else {
            0
        };
        let mut opts = TcpOptions {
            timestamps: ts_on.then_some(Timestamps {
                tsval: (t_us / 1000) as u32,
                tsecr: (t_us / 1000) as u32,
            }),
            ..TcpOptions::default()
        };
        if b & 24 == 24 {
            let mut blocks = SackBlocks::default();
            let at = nxt[1 - d] + usize::from(inp.u8()) * 64;
            blocks.push(at, at + len.max(1));
            opts.sack_blocks = blocks;
        }
        let seg = TcpRepr {
            src_port: ports[d],
            dst_port: ports[1 - d],
            seq: nxt[d] - resend,
            ack: nxt[1 - d] - short_ack,
            flags,
            window: inp.u16(),
            urgent: 0,
            options: opts,
        };
        if resend == 0 {
            nxt[d] += seg.segment_len(len);
        }
        pcap.push(t_us, d, &seg, len);
    }
    pcap.bytes
}

/// A raw-IPv4 (LINKTYPE_RAW) pcap file being written.
struct Pcap {
    bytes: Vec<u8>,
    ident: u16,
}

impl Pcap {
    fn new() -> Pcap {
        let mut bytes = Vec::new();
        for x in [0xa1b2_c3d4u32.to_le_bytes().as_slice(), &2u16.to_le_bytes()] {
            bytes.extend_from_slice(x);
        }
        bytes.extend_from_slice(&4u16.to_le_bytes());
        bytes.extend_from_slice(&[0; 8]); // thiszone, sigfigs
        bytes.extend_from_slice(&65535u32.to_le_bytes());
        bytes.extend_from_slice(&101u32.to_le_bytes()); // LINKTYPE_RAW
        Pcap { bytes, ident: 0 }
    }

    /// One packet from side `d` (0: 10.0.0.1) with `len` payload bytes.
    fn push(&mut self, t_us: u64, d: usize, seg: &TcpRepr, len: usize) {
        let addr = [[10, 0, 0, 1], [10, 0, 0, 2]];
        let payload = vec![b'x'; len];
        let ip = Ipv4Repr {
            src: addr[d],
            dst: addr[1 - d],
            ttl: 64,
            ident: self.ident,
            dont_frag: true,
            payload_len: seg.buffer_len(len),
            ecn: 0,
        };
        self.ident = self.ident.wrapping_add(1);
        let mut pkt = vec![0; Ipv4Repr::HEADER_LEN + seg.buffer_len(len)];
        let (head, tcp) = pkt.split_at_mut(Ipv4Repr::HEADER_LEN);
        if ip.emit(head).is_err() || seg.emit(tcp, &payload, Some(ip.checksum_ctx())).is_err() {
            return;
        }
        self.bytes
            .extend_from_slice(&((t_us / 1_000_000) as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&((t_us % 1_000_000) as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&(pkt.len() as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&(pkt.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(&pkt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A described conversation reads back as one flow with its segments.
    #[test]
    fn a_described_conversation_is_one_flow() {
        // Ports, both ISNs, timestamps on, MSS 936, a handshake; each SYN
        // without window scaling or SACK, window 65535, 100 us later.
        let mut data = vec![0x30, 0x39, 0, 0, 0, 9, 0, 0, 1, 0, 1, 100, 1];
        data.extend_from_slice(&[0, 0, 0xff, 0xff, 0, 100, 0, 0, 0xff, 0xff, 0, 100]);
        for i in 0..10u8 {
            data.extend_from_slice(&[i & 1 | 2, 0, 40, 200, 0xff, 0xff]);
        }
        let cap = tinygram_analyze::read_bytes(&conversation(&data)).expect("a pcap");
        let flows = tinygram_analyze::flows(&cap);
        assert_eq!(flows.len(), 1);
        assert!(flows[0].saw_syn);
        assert_eq!(flows[0].segs.len(), 12);
        infer(&data);
    }
}
