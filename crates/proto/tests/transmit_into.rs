//! `poll_transmit_into` and `TcpRepr::parse_into` fill a header the caller
//! keeps and reuses: every field must be written, or a stale option from the
//! previous segment (a SACK block, a timestamp, an MSS) would leak into the
//! next. Two identical transfers, one through `poll_transmit` (a fresh header
//! each time) and one through `poll_transmit_into` with a header full of junk
//! before every call, must send the same segments.

use tinygram_proto::wire::{Nak, RawOptions, SackBlocks, Timestamps};
use tinygram_proto::{
    Config, Connection, Duration, Flags, Instant, IsnSeries, OptionSet, SeqNumber, TcpOptions,
    TcpRepr,
};

/// A header with something in every field, as a reused slot would hold.
fn junk() -> TcpRepr {
    let mut sack_blocks = SackBlocks::default();
    sack_blocks.push(SeqNumber(11), SeqNumber(22));
    sack_blocks.push(SeqNumber(33), SeqNumber(44));
    TcpRepr {
        src_port: 1,
        dst_port: 2,
        seq: SeqNumber(3),
        ack: SeqNumber(4),
        flags: Flags::SYN | Flags::RST | Flags::URG,
        window: 5,
        urgent: 6,
        options: TcpOptions {
            mss: Some(7),
            window_scale: Some(8),
            sack_permitted: true,
            sack_blocks,
            timestamps: Some(Timestamps {
                tsval: 9,
                tsecr: 10,
            }),
            big_window_offer: Some(11),
            big_window_upper: Some(12),
            nak_permitted: true,
            nak: Some(Nak {
                seq: SeqNumber(13),
                count: 14,
            }),
            fast_open: None,
            unknown: RawOptions::default(),
        },
    }
}

/// Every segment of a transfer with a handshake, data both ways, a lost
/// segment (SACK recovery), a FIN one way and, last, a reset the other.
fn transfer(into: bool) -> Vec<(usize, TcpRepr, Vec<u8>)> {
    let cfg = Config {
        mss: 1000,
        options: OptionSet {
            window_scale: true,
            timestamps: true,
            sack: true,
            ..OptionSet::default()
        },
        ..Config::default()
    };
    let mut conns = [
        Connection::connect(
            cfg.clone(),
            40000,
            80,
            IsnSeries::new(SeqNumber(1000)),
            Instant::ZERO,
        ),
        Connection::listen(cfg, 80, IsnSeries::new(SeqNumber(5000))),
    ];
    let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let (mut written, mut sent_data, mut log) = (0usize, 0usize, Vec::new());
    let mut now = Instant::ZERO;
    let mut buf = Vec::new();
    let mut sink = vec![0u8; 65536];
    for step in 0..1000 {
        if conns[0].state().synchronized() && written < data.len() {
            written += conns[0].write(&data[written..], false).unwrap_or(0);
        }
        if step == 500 {
            conns[1].write(b"bye", false).expect("established");
            conns[1].close();
        }
        if step == 700 {
            conns[0].abort();
        }
        for side in 0..2 {
            loop {
                let repr = if into {
                    let mut out = junk();
                    if !conns[side].poll_transmit_into(now, &mut buf, &mut out) {
                        break;
                    }
                    out
                } else {
                    match conns[side].poll_transmit(now, &mut buf) {
                        Some(r) => r,
                        None => break,
                    }
                };
                log.push((side, repr, buf.clone()));
                if side == 0 && !buf.is_empty() {
                    sent_data += 1;
                    if sent_data == 5 {
                        continue; // lost: the receiver SACKs what follows
                    }
                }
                let mut bytes = vec![0u8; repr.buffer_len(buf.len())];
                repr.emit(&mut bytes, &buf, None).expect("encodable");
                let mut parsed = junk();
                let body = TcpRepr::parse_into(&bytes, None, &mut parsed).expect("parses");
                assert_eq!(parsed, repr, "parse_into left a field of the junk header");
                conns[1 - side].handle_segment(now, &parsed, &bytes[body]);
            }
            while conns[side].read(&mut sink) > 0 {}
        }
        now += Duration::from_millis(1);
        for c in &mut conns {
            c.handle_timeout(now);
        }
    }
    log
}

#[test]
fn into_variants_send_what_the_by_value_ones_do() {
    let plain = transfer(false);
    let into = transfer(true);
    assert_eq!(plain.len(), into.len(), "different segment counts");
    for (i, (a, b)) in plain.iter().zip(&into).enumerate() {
        assert_eq!((a.0, &a.1), (b.0, &b.1), "segment {i}'s header differs");
        assert!(a.2 == b.2, "segment {i}'s payload differs");
    }
    // The transfer went through the paths it is meant to cover.
    let has = |f: &dyn Fn(&TcpRepr) -> bool| plain.iter().any(|(_, r, _)| f(r));
    assert!(has(&|r| r.flags.syn() && r.options.mss.is_some()), "no SYN");
    assert!(has(&|r| !r.options.sack_blocks.is_empty()), "no SACK block");
    assert!(has(&|r| r.options.timestamps.is_some()), "no timestamps");
    assert!(has(&|r| r.flags.fin()), "no FIN");
    assert!(has(&|r| r.flags.rst()), "no RST");
    let data_segments = plain
        .iter()
        .filter(|(s, _, p)| *s == 0 && !p.is_empty())
        .count();
    assert!(data_segments > 40, "only {data_segments} data segments");
}
