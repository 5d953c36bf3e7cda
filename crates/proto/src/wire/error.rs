//! Errors of the byte codec. Parsing never panics: every malformed input maps
//! to one of these.

/// Why bytes could not be parsed, or a representation could not be emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer is shorter than the fixed header or than the length a header field claims.
    #[error("truncated: buffer shorter than the header says")]
    Truncated,
    /// TCP data offset below 5 words (RFC 9293 3.1).
    #[error("bad TCP data offset: {words} words (minimum 5)")]
    BadDataOffset {
        /// The 4-bit data offset field, in 32-bit words.
        words: u8,
    },
    /// A TCP option is malformed (RFC 9293 3.1 option format, or the option's own RFC).
    #[error("bad TCP option kind {kind}: {reason}")]
    BadOption {
        /// The option kind byte.
        kind: u8,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The Internet checksum (RFC 1071) does not verify.
    #[error("bad checksum")]
    BadChecksum,
    /// Emit: options need more than the 40 bytes a 4-bit data offset allows (RFC 9293 3.1).
    #[error("TCP options need {len} bytes, at most 40 fit")]
    OptionsTooLong {
        /// Bytes the padded options would take.
        len: usize,
    },
    /// Emit: the output buffer does not have the size the representation needs.
    #[error("buffer is {actual} bytes, expected {expected}")]
    BufferLength {
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// Emit: the payload does not fit the IP length field.
    #[error("payload of {len} bytes does not fit the IP length field")]
    PayloadTooLong {
        /// Payload length asked for.
        len: usize,
    },
    /// IP version nibble is not the one expected (RFC 791 3.1, RFC 8200 3).
    #[error("bad IP version {version}")]
    BadVersion {
        /// The version nibble found.
        version: u8,
    },
    /// IPv4 IHL below 5 or total length smaller than the header (RFC 791 3.1).
    #[error("bad IPv4 header length")]
    BadHeaderLen,
    /// IPv4 fragment (MF set or nonzero offset): reassembly is not supported (RFC 791 3.2).
    #[error("IPv4 fragment: reassembly is not supported")]
    Fragmented,
    /// The IP payload is not TCP (protocol / next header other than 6).
    #[error("not TCP: protocol {protocol}")]
    NotTcp {
        /// The IPv4 protocol or IPv6 next header found.
        protocol: u8,
    },
    /// IPv6 extension headers are not supported (RFC 8200 4).
    #[error("unsupported IPv6 extension header {next_header}")]
    Ipv6ExtensionHeader {
        /// The next-header value naming the extension.
        next_header: u8,
    },
}
