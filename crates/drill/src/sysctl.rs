//! Host sysctls a script's shell lines set (`sysctl -q net.ipv4.NAME=VALUE`)
//! that select a module: they apply to every socket the script creates after them.

use tinygram_proto::{CcFactory, Config};

/// The module-selecting sysctls a script has set so far.
#[derive(Clone, Debug, Default)]
pub struct Sysctls {
    /// net.ipv4.tcp_congestion_control (Documentation/networking/ip-sysctl.rst).
    pub congestion: Option<CcFactory>,
}

impl Sysctls {
    /// Applies the settings to a new socket's configuration.
    pub fn apply(&self, cfg: &mut Config) {
        if let Some(c) = &self.congestion {
            cfg.congestion = c.clone();
        }
    }

    /// Takes the sysctl assignments it models out of a shell command and
    /// returns the lines left over (not run), or an error naming a bad value.
    pub fn absorb(&mut self, command: &str) -> Result<Vec<String>, String> {
        let mut left = Vec::new();
        // Lines may be continued with a backslash; each `sysctl` word starts a group.
        let joined = command.replace("\\\n", " ");
        for line in joined.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let mut words = line.split_whitespace().peekable();
            if words.peek() != Some(&"sysctl") {
                left.push(line.to_string());
                continue;
            }
            let mut unknown = Vec::new();
            for w in words.skip(1) {
                if w.starts_with('-') {
                    continue;
                }
                match w.split_once('=') {
                    Some((k, v)) if self.set(k, v)? => {}
                    _ => unknown.push(w),
                }
            }
            if !unknown.is_empty() {
                left.push(format!("sysctl {}", unknown.join(" ")));
            }
        }
        Ok(left)
    }

    /// Sets one sysctl; false when it is not one this runner models.
    fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        match key {
            "net.ipv4.tcp_congestion_control" => {
                self.congestion =
                    Some(CcFactory::by_name(value).map_err(|e| format!("sysctl {key}: {e}"))?);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn congestion_sysctl_is_applied_and_other_lines_are_left() {
        let mut s = Sysctls::default();
        let left = s
            .absorb("../common/defaults.sh\nsysctl -q net.ipv4.tcp_congestion_control=cubic\nsysctl -q net.ipv4.tcp_min_tso_segs=4")
            .unwrap();
        assert_eq!(
            left,
            [
                "../common/defaults.sh",
                "sysctl net.ipv4.tcp_min_tso_segs=4"
            ]
        );
        let mut c = Config::default();
        assert_eq!(c.congestion.name(), "newreno");
        s.apply(&mut c);
        assert_eq!(c.congestion.name(), "cubic");
        let e = s
            .absorb("sysctl -q net.ipv4.tcp_congestion_control=cubci")
            .unwrap_err();
        assert!(e.contains("cubic"), "{e}");
    }
}
