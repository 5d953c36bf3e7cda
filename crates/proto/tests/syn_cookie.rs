//! The engine's SYN cookie entry points, and bytes lost when a reset sends a
//! passive open in SYN-RECEIVED back to LISTEN.

use tinygram_proto::wire::{TcpOptions, Timestamps};
use tinygram_proto::{Config, Connection, Flags, Instant, SeqNumber, State, TcpRepr};

fn t(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

fn syn() -> TcpRepr {
    TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: SeqNumber(1000),
        flags: Flags::SYN,
        window: 65535,
        options: TcpOptions {
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamps: Some(Timestamps { tsval: 1, tsecr: 0 }),
            nak_permitted: true,
            ..TcpOptions::default()
        },
        ..TcpRepr::default()
    }
}

/// The cookie SYN-ACK is a passive open's SYN-ACK for an MSS-only SYN: ISS
/// the cookie, ACK of their SYN, our MSS, no option a cookie cannot carry.
/// The cookie ACK then builds an ESTABLISHED connection that took its data.
#[test]
fn a_cookie_ack_builds_an_established_connection() {
    let mut cfg = Config::default();
    for o in ["wscale", "sack", "timestamps", "bigwin", "nak"] {
        cfg.options.enable(o).unwrap();
    }
    let cookie = SeqNumber(0xdead_beef);
    let sa = Connection::cookie_syn_ack(&cfg, &syn(), cookie, 1300, t(0));
    assert_eq!(sa.flags, Flags::SYN | Flags::ACK);
    assert_eq!((sa.seq, sa.ack), (cookie, SeqNumber(1001)));
    assert_eq!((sa.src_port, sa.dst_port), (80, 40000));
    assert_eq!(sa.options.mss, Some(cfg.mss));
    assert!(sa.options.window_scale.is_none() && !sa.options.sack_permitted);
    assert!(sa.options.timestamps.is_none(), "no timestamps: {sa:?}");
    assert!(sa.options.big_window_offer.is_none() && !sa.options.nak_permitted);

    let ack = TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: SeqNumber(1001),
        ack: cookie + 1,
        flags: Flags::ACK | Flags::PSH,
        window: 5000,
        ..TcpRepr::default()
    };
    let never = |_: Instant, _: u16, _: u16| SeqNumber(7);
    let mut c = Connection::from_syn_cookie(cfg, &ack, b"hello", 1300, never, t(1));
    assert_eq!(c.state(), State::Established);
    assert_eq!((c.iss(), c.irs()), (cookie, SeqNumber(1000)));
    assert_eq!(c.snd_una(), cookie + 1);
    assert_eq!(c.effective_mss(), 1300);
    assert_eq!(c.snd_wnd(), 5000);
    assert_eq!(
        c.srtt(),
        None,
        "no round-trip sample from a SYN-ACK nobody timed"
    );
    let mut buf = [0u8; 16];
    let n = c.read(&mut buf);
    assert_eq!(&buf[..n], b"hello");
    assert_eq!(c.write(b"back", false), Ok(4));
    let mut payload = Vec::new();
    let mut sent = Vec::new();
    while let Some(seg) = c.poll_transmit(t(1), &mut payload) {
        sent.extend_from_slice(&payload);
        assert_eq!(seg.ack, SeqNumber(1006));
    }
    assert_eq!(sent, b"back");
}

/// Bytes written in SYN-RECEIVED (and data received there) vanish when a
/// RST sends the connection back to LISTEN: the counter says how many.
#[test]
fn a_reset_in_syn_received_reports_the_bytes_it_lost() {
    let quiet = |_: Instant, _: u16, _: u16| SeqNumber(5000);
    let mut c = Connection::listen(Config::default(), 80, quiet);
    c.handle_segment(t(0), &syn(), &[]);
    assert_eq!(c.state(), State::SynReceived);
    assert_eq!(c.write(b"early bytes", false), Ok(11));
    let rst = TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: SeqNumber(1001),
        flags: Flags::RST,
        ..TcpRepr::default()
    };
    c.handle_segment(t(1), &rst, &[]);
    assert_eq!(c.state(), State::Listen);
    assert_eq!(c.counters().bytes_lost_to_reset, 11);
    assert_eq!(c.counters().rsts_received, 1);
}
