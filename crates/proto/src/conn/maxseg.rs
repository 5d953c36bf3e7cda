//! TCP_MAXSEG on a live connection: FreeBSD lowers the MSS it sends with
//! (tcp_usrreq.c, t_maxseg); Linux keeps it for the next handshake only.

use super::Connection;

/// FreeBSD net.inet.tcp.minmss: no TCP_MAXSEG leaves segments (with 40
/// bytes of IPv4 and TCP headers) smaller than this (tcp_var.h TCP_MINMSS).
const FREEBSD_MIN_MSS: usize = 216;

impl Connection {
    /// TCP_MAXSEG on a synchronized connection, where `maxseg_live` is set:
    /// the MSS sent becomes `mss`, options still coming out of it (FreeBSD
    /// tcp_usrreq.c: t_maxseg = optval when 0 < optval <= t_maxseg and
    /// optval + 40 >= net.inet.tcp.minmss). Returns false, changing nothing,
    /// when the value is refused (EINVAL) or the setting is off.
    pub fn lower_snd_mss(&mut self, mss: u16) -> bool {
        let opts = self.snd_mss_options();
        let current = self.snd_mss + opts;
        let mss = usize::from(mss);
        if !self.cfg.maxseg_live
            || !self.state.synchronized()
            || mss == 0
            || mss > current
            || mss + 40 < FREEBSD_MIN_MSS
        {
            return false;
        }
        self.snd_mss = mss.saturating_sub(opts).max(1);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::isn::IsnSeries;
    use crate::seq::SeqNumber;
    use crate::time::Instant;
    use crate::wire::{Flags, TcpOptions, TcpRepr};
    use crate::Connection;

    fn established(maxseg_live: bool) -> Connection {
        let cfg = Config {
            maxseg_live,
            ..Config::default()
        };
        let mut c = Connection::listen(cfg, 80, IsnSeries::with_step(SeqNumber(1), 0));
        let mut seg = TcpRepr {
            src_port: 4000,
            dst_port: 80,
            seq: SeqNumber(7),
            ack: SeqNumber(0),
            flags: Flags::SYN,
            window: 65_535,
            urgent: 0,
            options: TcpOptions {
                mss: Some(1460),
                ..TcpOptions::default()
            },
        };
        let t = Instant::from_millis(1);
        c.handle_segment(t, &seg, &[]);
        let mut buf = Vec::new();
        while c.poll_transmit(t, &mut buf).is_some() {}
        seg.flags = Flags::ACK;
        seg.seq = SeqNumber(8);
        seg.ack = SeqNumber(2);
        seg.options = TcpOptions::default();
        c.handle_segment(t, &seg, &[]);
        assert!(c.state().synchronized());
        c
    }

    #[test]
    fn maxseg_lowers_the_mss_sent_within_freebsds_bounds() {
        let mut c = established(true);
        assert_eq!(c.effective_mss(), 1460);
        assert!(!c.lower_snd_mss(1461), "only lower");
        assert!(!c.lower_snd_mss(0));
        assert!(
            !c.lower_snd_mss(175),
            "175 + 40 is under net.inet.tcp.minmss"
        );
        assert!(c.lower_snd_mss(1400));
        assert_eq!(c.effective_mss(), 1400);
        assert!(c.lower_snd_mss(176));
        assert_eq!(c.effective_mss(), 176);
    }

    #[test]
    fn without_the_setting_a_live_connection_keeps_its_mss() {
        let mut c = established(false);
        assert!(!c.lower_snd_mss(1400));
        assert_eq!(c.effective_mss(), 1460);
    }
}
