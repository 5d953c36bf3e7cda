//! A listening port and its backlog of half-open connections (RFC 9293
//! 3.10.1: a passive OPEN; RFC 4987 3.1: the backlog a SYN flood fills).

use crate::config::Config;

/// One listening port: the settings its connections start from and how
/// many of them are half-open (SYN-RECEIVED, opened by a SYN).
#[derive(Clone, Debug)]
pub struct Listener {
    pub port: u16,
    /// The passive connections' settings; its `backlog` and `syn_cookies`
    /// say what happens to SYNs once the backlog is full.
    pub config: Config,
    half_open: usize,
}

impl Listener {
    pub fn new(port: u16, config: Config) -> Listener {
        Listener {
            port,
            config,
            half_open: 0,
        }
    }

    /// Half-open connections counted against the backlog.
    pub fn half_open(&self) -> usize {
        self.half_open
    }

    /// Whether another half-open connection fits (RFC 4987 3.1: past the
    /// backlog, a listener either drops SYNs or answers them statelessly).
    pub fn has_room(&self) -> bool {
        self.config
            .backlog
            .is_none_or(|limit| self.half_open < limit as usize)
    }

    /// A SYN opened a connection: one more half-open.
    pub fn opened(&mut self) {
        self.half_open += 1;
    }

    /// A half-open connection left SYN-RECEIVED (established or ended).
    pub fn settled(&mut self) {
        self.half_open = self.half_open.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backlog_bounds_half_open_connections_and_none_means_no_limit() {
        let cfg = Config {
            backlog: Some(2),
            ..Config::default()
        };
        let mut l = Listener::new(80, cfg);
        assert!(l.has_room());
        l.opened();
        l.opened();
        assert!(!l.has_room());
        l.settled();
        assert!(l.has_room() && l.half_open() == 1);
        let mut open = Listener::new(80, Config::default());
        assert_eq!(Config::default().backlog, None);
        for _ in 0..100_000 {
            open.opened();
        }
        assert!(open.has_room());
    }
}
