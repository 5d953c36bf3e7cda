//! Decoder and parser targets: each must accept or reject any input with an
//! error, never panic; what the codec accepts must survive a round trip.

use tinygram_proto::wire::{ChecksumCtx, TcpOptions, TcpRepr, MAX_OPTIONS_LEN};

/// TCP segment decoder (header, options, checksum). A segment that parses and
/// re-encodes must parse back to the same header and payload, and a checksum
/// the encoder fills must verify.
pub fn segment(data: &[u8]) {
    let ctx = ChecksumCtx::V4 {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
    };
    // Either outcome of the checksum check is fine; it must not panic.
    let _ = TcpRepr::parse(data, Some(ctx));
    let Ok((repr, range)) = TcpRepr::parse(data, None) else {
        return;
    };
    let payload = &data[range];
    let mut buf = vec![0; repr.buffer_len(payload.len())];
    if repr.emit(&mut buf, payload, Some(ctx)).is_err() {
        return;
    }
    let (back, r2) = TcpRepr::parse(&buf, Some(ctx))
        .unwrap_or_else(|e| panic!("re-encoded segment does not parse: {e}\n{repr:?}"));
    assert_eq!(back, repr, "segment round trip changed the header");
    assert_eq!(&buf[r2], payload, "segment round trip changed the payload");
}

/// TCP option parser alone. Parsed options that fit in 40 bytes re-encode
/// and parse back to the same value.
pub fn options(data: &[u8]) {
    let Ok(opts) = TcpOptions::parse(data) else {
        return;
    };
    let len = opts.encoded_len();
    if len > MAX_OPTIONS_LEN {
        return;
    }
    let mut buf = vec![0; len];
    if opts.emit(&mut buf).is_err() {
        return;
    }
    let back = TcpOptions::parse(&buf)
        .unwrap_or_else(|e| panic!("re-encoded options do not parse: {e}\n{opts:?}"));
    assert_eq!(back, opts, "option round trip changed the options");
}

/// pcap/pcapng reader, then the whole analysis (flows, findings) on whatever it read.
pub fn pcap(data: &[u8]) {
    let Ok(cap) = tinygram_analyze::read_bytes(data) else {
        return;
    };
    assert!(
        cap.stats.tcp_segments as usize == cap.packets.len(),
        "stats count {} TCP segments but {} packets were kept",
        cap.stats.tcp_segments,
        cap.packets.len()
    );
    let _ = tinygram_analyze::diagnose(&cap, &tinygram_analyze::Thresholds::default());
}

/// Scenario file parser (TOML text, then validation). Only UTF-8 reaches it,
/// as with a file read by `read_to_string`.
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = tinygram_sim::Scenario::from_str(text, "<fuzz>", &[]);
}

/// packetdrill script parser.
pub fn drill_script(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = tinygram_drill::parse_script(text, "<fuzz>");
}
