//! TCP over UDP in the runner's packet path (RFC 6951 5.1's encapsulation,
//! as FreeBSD runs TCP in it): which encapsulated segments reach TCP, which
//! connection takes them, and the TCP_REMOTE_UDP_ENCAPS_PORT socket option.
//! The engine keeps each connection's port (`udp_encaps_port`); the runner
//! adds the UDP header to what the engine sends and strips it from what the
//! script sends.

use crate::ast::UdpPorts;
use crate::report::secs;
use crate::runner::Runner;
use crate::syscall::{Outcome, Sock, SockKind};

impl Runner<'_> {
    /// The encapsulation port a scripted segment arrives with (0: plain
    /// TCP), or `None` when it never reaches TCP: a datagram to any UDP port
    /// but the host's tunneling port (FreeBSD net.inet.tcp.udp_tunneling_port,
    /// 0: none) is not TCP's (FreeBSD tcp_subr.c, the tunnel socket's only port).
    pub(crate) fn arrival_port(&mut self, udp: Option<UdpPorts>) -> Option<u16> {
        let Some(u) = udp else {
            return Some(0);
        };
        let tunnel = self.host.udp_tunneling_port();
        if tunnel == 0 || u.dst != tunnel {
            self.report.trace.push(format!(
                "{} (not TCP's: UDP port {} is not the tunneling port {tunnel})",
                secs(self.now),
                u.dst
            ));
            return None;
        }
        Some(u.src)
    }

    /// Whether the live connection takes a segment that came with
    /// encapsulation port `arrival`. A listener takes any, and the connection
    /// it opens keeps that port (FreeBSD tcp_syncache.c syncache_add); past
    /// LISTEN a segment with another port is handled as for no connection
    /// (FreeBSD tcp_input.c: t_port != port goes to dropwithreset;
    /// tcp_timewait.c tcp_twcheck answers the same in TIME-WAIT).
    pub(crate) fn encaps_admits(&mut self, arrival: u16) -> bool {
        let Some(c) = self.conn.as_mut() else {
            return false;
        };
        if c.state() == tinygram_proto::State::Listen {
            c.set_udp_encaps_port(arrival);
            return true;
        }
        if c.udp_encaps_port() == arrival {
            return true;
        }
        // Under syncookies_only the handshake's state is the cookie, which
        // holds no port: the ACK that completes it brings its own.
        self.host.syncookies_only() && c.take_cookie_udp_encaps_port(arrival)
    }

    /// Whether an ICMP error quoting a segment sent with `quoted` reaches the
    /// connection: a quoted UDP datagram is TCP's only from the tunneling
    /// port (FreeBSD tcp_subr.c tcp_ctlinput_viaudp), and the connection
    /// takes the error only when the quoted port is its own
    /// (tcp_ctlinput_with_port: t_port != port is ignored).
    pub(crate) fn icmp_reaches(&self, quoted: Option<UdpPorts>) -> bool {
        let port = match quoted {
            None => 0,
            Some(u) => {
                let tunnel = self.host.udp_tunneling_port();
                if tunnel == 0 || u.src != tunnel {
                    return false;
                }
                u.dst
            }
        };
        self.conn
            .as_ref()
            .is_some_and(|c| c.udp_encaps_port() == port)
    }

    /// FreeBSD tcp_usrreq.c TCP_REMOTE_UDP_ENCAPS_PORT: a port from 0 to
    /// 65535, a nonzero one only while the host has a tunneling port, and
    /// only on a socket not yet connecting or listening (EINVAL otherwise).
    pub(crate) fn set_remote_udp_encaps_port(&mut self, fd: i64, sock: &Sock, v: i64) -> Outcome {
        let Ok(port) = u16::try_from(v) else {
            self.errno_reason = Some(format!("port {v} is not from 0 to 65535"));
            return Outcome::Done(Err("EINVAL"));
        };
        if port != 0 && self.host.udp_tunneling_port() == 0 {
            self.errno_reason = Some("net.inet.tcp.udp_tunneling_port is 0".into());
            return Outcome::Done(Err("EINVAL"));
        }
        if !matches!(sock.kind, SockKind::Fresh | SockKind::Bound) {
            self.errno_reason = Some("the socket is no longer CLOSED".into());
            return Outcome::Done(Err("EINVAL"));
        }
        if let Some(s) = self.socks.get_mut(&fd) {
            s.cfg.udp_encaps_port = port;
            s.set_by_script.insert("TCP_REMOTE_UDP_ENCAPS_PORT".into());
        }
        Outcome::Done(Ok(0))
    }

    /// getsockopt TCP_REMOTE_UDP_ENCAPS_PORT: the connection's port once it
    /// has one (an accepted connection's is the one its SYN came with).
    pub(crate) fn remote_udp_encaps_port(&self, sock: &Sock) -> i64 {
        let live = matches!(sock.kind, SockKind::Stream | SockKind::Listener);
        match (&self.conn, live) {
            (Some(c), true) => i64::from(c.udp_encaps_port()),
            _ => i64::from(sock.cfg.udp_encaps_port),
        }
    }
}
