//! The endpoint alone: segments for no connection in, what to do out.
use super::*;
use crate::conn::Connection;
use crate::isn::IsnSeries;
use crate::seq::SeqNumber;
use crate::wire::Flags;
use std::net::Ipv4Addr;

const US: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 2);
const A: Ipv4Addr = Ipv4Addr::new(10, 7, 0, 1);

fn t(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

fn tuple(port: u16) -> (SocketAddrV4, SocketAddrV4) {
    (SocketAddrV4::new(US, 80), SocketAddrV4::new(A, port))
}

fn syn(port: u16, iss: u32) -> TcpRepr {
    let mut s = TcpRepr {
        src_port: port,
        dst_port: 80,
        seq: SeqNumber(iss),
        flags: Flags::SYN,
        window: 65535,
        ..TcpRepr::default()
    };
    s.options.mss = Some(1460);
    s
}

/// The handshake's third segment answering `synack`.
fn third(port: u16, iss: u32, synack: &TcpRepr) -> TcpRepr {
    TcpRepr {
        src_port: port,
        dst_port: 80,
        seq: SeqNumber(iss + 1),
        ack: synack.seq + 1,
        flags: Flags::ACK,
        window: 65535,
        ..TcpRepr::default()
    }
}

fn listening(backlog: Option<u32>, syn_cookies: bool) -> Endpoint {
    let mut e = Endpoint::new(IsnKey::fixed([7; 16]));
    let cfg = Config {
        backlog,
        syn_cookies,
        ..Config::default()
    };
    e.listen(80, cfg);
    e
}

/// SYNs open connections up to the backlog; beyond it each gets a cookie
/// SYN-ACK (no options but the MSS, RFC 4987 3.6) and nothing is kept; the
/// ACK returning a cookie is accepted with the MSS it carried, a forged one
/// is refused with a RST; a settled connection frees its place.
#[test]
fn past_the_backlog_syns_get_cookies_that_verify() {
    let mut e = listening(Some(2), true);
    assert_eq!(
        e.unmatched(t(0), tuple(1), &syn(1, 10), 0, true),
        Unmatched::Open
    );
    assert_eq!(
        e.unmatched(t(0), tuple(2), &syn(2, 10), 0, true),
        Unmatched::Open
    );
    assert_eq!(e.half_open(), 2);
    let mut s = syn(3, 500);
    s.options.sack_permitted = true;
    s.options.window_scale = Some(7);
    let Unmatched::SendCookie(sa) = e.unmatched(t(1), tuple(3), &s, 0, true) else {
        panic!("a cookie SYN-ACK");
    };
    assert!(sa.flags.syn() && sa.flags.ack() && sa.ack == SeqNumber(501));
    assert_eq!(sa.options.mss, Some(Config::default().mss));
    assert!(!sa.options.sack_permitted && sa.options.window_scale.is_none());
    assert_eq!(e.half_open(), 2, "a cookie keeps no state");

    let ack = third(3, 500, &sa);
    assert_eq!(
        e.unmatched(t(2), tuple(3), &ack, 5, true),
        Unmatched::FromCookie { mss: 1460 }
    );
    let c = Connection::from_syn_cookie(
        Config::default(),
        &ack,
        b"hello",
        1460,
        IsnSeries::new(SeqNumber(1)),
        t(2),
    );
    assert!(c.state().synchronized());

    let mut forged = ack;
    forged.ack = sa.seq + 2;
    match e.unmatched(t(2), tuple(3), &forged, 0, true) {
        Unmatched::CookieRejected(rst) => assert!(rst.flags.rst() && rst.seq == forged.ack),
        other => panic!("{other:?}"),
    }
    // The right cookie on another tuple is no cookie.
    assert!(matches!(
        e.unmatched(t(2), tuple(4), &third(4, 500, &sa), 0, true),
        Unmatched::CookieRejected(_)
    ));
    e.settled(80);
    assert_eq!(
        e.unmatched(t(3), tuple(5), &syn(5, 10), 0, true),
        Unmatched::Open
    );
}

/// With cookies off, a SYN past the backlog is dropped unanswered.
#[test]
fn without_cookies_a_full_backlog_drops_syns() {
    let mut e = listening(Some(1), false);
    assert_eq!(
        e.unmatched(t(0), tuple(1), &syn(1, 10), 0, true),
        Unmatched::Open
    );
    assert_eq!(
        e.unmatched(t(0), tuple(2), &syn(2, 10), 0, true),
        Unmatched::BacklogFull
    );
    assert_eq!(e.half_open(), 1);
}

/// No listener, or an ACK when no cookie left recently: a RST (RFC 9293
/// 3.10.7.1); a RST is never answered; a host not accepting drops SYNs.
#[test]
fn everything_else_is_reset_ignored_or_refused() {
    let mut e = listening(None, true);
    let mut to_closed = syn(1, 10);
    to_closed.dst_port = 81;
    match e.unmatched(t(0), tuple(1), &to_closed, 0, true) {
        Unmatched::Reset(rst) => {
            assert!(rst.flags.rst() && rst.flags.ack() && rst.ack == SeqNumber(11));
            assert_eq!((rst.src_port, rst.dst_port), (81, 1));
        }
        other => panic!("{other:?}"),
    }
    let stray = third(2, 10, &syn(9, 99));
    assert!(
        matches!(
            e.unmatched(t(0), tuple(2), &stray, 0, true),
            Unmatched::Reset(_)
        ),
        "no cookie left: an unsolicited ACK is not looked at"
    );
    let mut rst = syn(3, 10);
    rst.flags = Flags::RST;
    assert_eq!(
        e.unmatched(t(0), tuple(3), &rst, 0, true),
        Unmatched::Ignored
    );
    assert_eq!(
        e.unmatched(t(0), tuple(4), &syn(4, 10), 0, false),
        Unmatched::Refused
    );
    assert_eq!(e.half_open(), 0);
}

/// A port no longer listening answers SYNs with a RST.
#[test]
fn a_closed_listener_resets_syns() {
    let mut e = listening(None, true);
    e.unlisten(80);
    assert!(matches!(
        e.unmatched(t(0), tuple(1), &syn(1, 10), 0, true),
        Unmatched::Reset(_)
    ));
    assert!(e.listener(80).is_none());
}
