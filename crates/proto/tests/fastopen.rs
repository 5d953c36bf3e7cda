//! TCP Fast Open (RFC 7413) in the engine: the server's cookie and SYN data,
//! the client's cookie request, SYN data and its resend.

use tinygram_proto::fastopen::{FastOpenConfig, FastOpenOption, TfoCookie};
use tinygram_proto::wire::TcpOptions;
use tinygram_proto::{Config, Connection, Flags, Instant, IsnSeries, SeqNumber, State, TcpRepr};

fn t(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

fn cookie() -> TfoCookie {
    TfoCookie::new(&[0x30, 0x21, 0xb9, 0xd8, 0x89, 0x01, 0x7e, 0xeb]).unwrap()
}

fn fo(c: TfoCookie) -> Option<FastOpenOption> {
    Some(FastOpenOption {
        experimental: false,
        cookie: c,
    })
}

fn server() -> Connection {
    let cfg = Config {
        fast_open: FastOpenConfig {
            server: true,
            server_cookie: Some(cookie()),
            queue: 16,
            ..FastOpenConfig::default()
        },
        ..Config::default()
    };
    Connection::listen(cfg, 80, IsnSeries::new(SeqNumber(5000)))
}

fn syn(option: Option<FastOpenOption>) -> TcpRepr {
    TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: SeqNumber(1000),
        flags: Flags::SYN,
        window: 65535,
        options: TcpOptions {
            mss: Some(1460),
            fast_open: option,
            ..TcpOptions::default()
        },
        ..TcpRepr::default()
    }
}

fn out(c: &mut Connection, now: Instant) -> (TcpRepr, Vec<u8>) {
    let mut p = Vec::new();
    let r = c.poll_transmit(now, &mut p).expect("a segment");
    (r, p)
}

/// RFC 7413 4.3.1: a cookie request, or a wrong cookie, is answered with the
/// cookie and the SYN's data is not acknowledged.
#[test]
fn server_gives_a_cookie_and_drops_data_without_a_valid_one() {
    for (option, data) in [
        (fo(TfoCookie::REQUEST), &b""[..]),
        (fo(TfoCookie::new(&[1; 8]).unwrap()), &b"0123456789"[..]),
    ] {
        let mut s = server();
        s.handle_segment(t(0), &syn(option), data);
        let (r, p) = out(&mut s, t(0));
        assert!(r.flags.syn() && r.flags.ack());
        assert_eq!(
            r.ack,
            SeqNumber(1001),
            "data without a valid cookie is not acked"
        );
        assert!(p.is_empty());
        assert_eq!(r.options.fast_open, fo(cookie()));
        assert!(!s.fast_open().syn_data);
    }
}

/// RFC 7413 4.3.2: data in a SYN with a valid cookie is acknowledged by the
/// SYN-ACK and readable; a listener without Fast Open ignores it.
#[test]
fn server_takes_syn_data_with_a_valid_cookie() {
    let mut s = server();
    s.handle_segment(t(0), &syn(fo(cookie())), b"0123456789");
    let (r, _) = out(&mut s, t(0));
    assert_eq!(r.ack, SeqNumber(1011));
    assert_eq!(r.options.fast_open, None);
    assert!(s.fast_open().syn_data);
    let mut buf = [0u8; 64];
    assert_eq!(s.read(&mut buf), 10);
    assert_eq!(&buf[..10], b"0123456789");

    let mut plain = Connection::listen(Config::default(), 80, IsnSeries::new(SeqNumber(5000)));
    plain.handle_segment(t(0), &syn(fo(cookie())), b"0123456789");
    let (r, _) = out(&mut plain, t(0));
    assert_eq!(r.ack, SeqNumber(1001));
    assert_eq!(r.options.fast_open, None);

    let mut no_queue = Connection::listen(
        Config {
            fast_open: FastOpenConfig {
                server: true,
                server_cookie: Some(cookie()),
                queue: 0,
                ..FastOpenConfig::default()
            },
            ..Config::default()
        },
        80,
        IsnSeries::new(SeqNumber(5000)),
    );
    no_queue.handle_segment(t(0), &syn(fo(cookie())), b"0123456789");
    assert_eq!(out(&mut no_queue, t(0)).0.ack, SeqNumber(1001));
}

fn client(c: Option<TfoCookie>) -> Connection {
    let cfg = Config {
        fast_open: FastOpenConfig {
            client: true,
            cookie: c,
            ..FastOpenConfig::default()
        },
        ..Config::default()
    };
    let mut c = Connection::connect(cfg, 40000, 80, IsnSeries::new(SeqNumber(100)), t(0));
    assert_eq!(c.write(&[7u8; 3000], false).unwrap(), 3000);
    c
}

fn syn_ack(ack: u32, option: Option<FastOpenOption>) -> TcpRepr {
    TcpRepr {
        src_port: 80,
        dst_port: 40000,
        seq: SeqNumber(9000),
        ack: SeqNumber(ack),
        flags: Flags::SYN | Flags::ACK,
        window: 65535,
        options: TcpOptions {
            mss: Some(1460),
            fast_open: option,
            ..TcpOptions::default()
        },
        ..TcpRepr::default()
    }
}

/// RFC 7413 4.1.3 / 4.2.1: without a cookie the SYN asks for one and carries
/// no data; the SYN-ACK's cookie is handed back for the cache; with it, the
/// next SYN carries the cookie and data.
#[test]
fn client_requests_a_cookie_then_sends_data_in_the_syn() {
    let mut c = client(None);
    let (r, p) = out(&mut c, t(0));
    assert_eq!(r.options.fast_open, fo(TfoCookie::REQUEST));
    assert!(p.is_empty());
    c.handle_segment(t(10), &syn_ack(101, fo(cookie())), &[]);
    assert_eq!(c.state(), State::Established);
    assert_eq!(c.fast_open().learned, fo(cookie()));

    let mut c = client(Some(cookie()));
    let (r, p) = out(&mut c, t(0));
    assert!(r.flags.syn() && !r.flags.ack());
    assert_eq!(r.options.fast_open, fo(cookie()));
    assert_eq!(p.len(), 1420, "the MSS less 40 bytes of options");
    c.handle_segment(t(10), &syn_ack(101 + 1420, None), &[]);
    assert!(c.fast_open().syn_data_acked);
    let (r, p) = out(&mut c, t(10));
    assert_eq!(
        r.seq,
        SeqNumber(101 + 1420),
        "the SYN's data is not sent again"
    );
    assert!(!p.is_empty());
}

/// RFC 7413 4.2.2: SYN data the SYN-ACK does not acknowledge is sent again
/// at once after the handshake.
#[test]
fn client_resends_syn_data_the_server_did_not_take() {
    let mut c = client(Some(cookie()));
    let (_, p) = out(&mut c, t(0));
    assert_eq!(p.len(), 1420);
    c.handle_segment(t(10), &syn_ack(101, None), &[]);
    assert!(!c.fast_open().syn_data_acked);
    let (r, p) = out(&mut c, t(10));
    assert_eq!(r.seq, SeqNumber(101));
    assert_eq!(p.first(), Some(&7));
    assert!(!r.flags.syn());
}

/// RFC 7413 4.2.2: a SYN that times out goes again without its data (and,
/// as Linux sends it, without the option).
#[test]
fn retransmitted_syn_carries_no_data() {
    let mut c = client(Some(cookie()));
    let (_, p) = out(&mut c, t(0));
    assert!(!p.is_empty());
    let when = c.poll_timeout().expect("SYN timer");
    c.handle_timeout(when);
    let (r, p) = out(&mut c, when);
    assert!(r.flags.syn());
    assert!(p.is_empty());
    assert_eq!(r.options.fast_open, None);
}
