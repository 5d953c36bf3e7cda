//! The settings table's parse paths (profiles, scenario host keys, `tun
//! --set` and drill's sysctl lines all go through them): lines of
//! `KEY=VALUE` (set from profile syntax) or `profile NAME`, applied in order
//! to one configuration. Every line must be taken or refused with an error;
//! a value taken must read back the same from the text the table shows for
//! it; and a configuration that validates must open a connection whose SYN
//! and SYN-ACK go out.

use tinygram_proto::settings::{self, SETTINGS};
use tinygram_proto::{profile, Config, Connection, Instant, IsnSeries, SeqNumber};

/// Lines applied per input at most.
const MAX_LINES: usize = 64;

pub fn settings(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut c = Config::default();
    for line in text.lines().take(MAX_LINES) {
        if let Some(name) = line.strip_prefix("profile ") {
            if let Ok(p) = profile::find(name.trim()) {
                p.apply(&mut c);
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if settings::set_text(&mut c, key.trim(), value).is_ok() {
            reads_back(&c, key.trim());
        }
    }
    if c.validate().is_ok() {
        handshake_starts(c);
    }
}

/// The row's value in `c`, shown as profile text, parses and sets to itself.
fn reads_back(c: &Config, key: &str) {
    let row = SETTINGS
        .iter()
        .find(|s| s.name == key)
        .expect("a key set_text took is a row");
    let shown = row.get(c).to_string();
    let mut again = Config::default();
    let v = row
        .parse(&shown)
        .unwrap_or_else(|e| panic!("{key}: the shown value {shown:?} does not parse: {e}"));
    row.set(&mut again, v)
        .unwrap_or_else(|e| panic!("{key}: the shown value {shown:?} is refused: {e}"));
    assert_eq!(
        row.get(&again),
        row.get(c),
        "{key}: {shown:?} reads back as another value"
    );
}

/// A connection with the configuration sends its SYN, and a listener with
/// it answers with a SYN-ACK.
fn handshake_starts(c: Config) {
    let now = Instant::ZERO;
    let mut a = Connection::connect(c.clone(), 40000, 80, IsnSeries::new(SeqNumber(1)), now);
    let mut b = Connection::listen(c, 80, IsnSeries::new(SeqNumber(2)));
    let mut buf = Vec::new();
    let syn = a.poll_transmit(now, &mut buf).expect("a SYN");
    assert!(syn.flags.syn(), "the first segment is a SYN: {syn:?}");
    b.handle_segment(now, &syn, &buf);
    let reply = b.poll_transmit(now, &mut buf).expect("a SYN-ACK");
    assert!(reply.flags.syn() && reply.flags.ack(), "{reply:?}");
}
