//! Human units for scenario files and reports: durations (`"200ms"`), sizes
//! (`"64KB"`, `"64KiB"`) and bit rates (`"1.544Mbps"`, `"1.544Mb/s"`).
//!
//! Parsing is exact where it can be: durations and sizes are computed from the
//! decimal digits, not through floating point, so `"0.1s"` is exactly 100 ms.

use std::time::Duration;

/// An exact non-negative decimal `digits[.digits]`, scaled by `scale` and
/// returned as (integer part, whether a fraction was lost), or None if malformed.
fn scaled_decimal(num: &str, scale: u128) -> Option<(u128, bool)> {
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: u128 = 0;
    for b in int.bytes() {
        value = value.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
    }
    let mut value = value.checked_mul(scale)?;
    // Add the fraction digit by digit: digit * scale / 10^k, tracking lost precision.
    let mut unit = scale;
    let mut lost = false;
    for b in frac.bytes() {
        let d = u128::from(b - b'0');
        if unit % 10 != 0 {
            lost |= d != 0;
            unit = 0;
            continue;
        }
        unit /= 10;
        value = value.checked_add(d * unit)?;
    }
    Some((value, lost))
}

/// Splits `"1.5ms"` into (`"1.5"`, `"ms"`), trimming spaces between them.
fn split_number(s: &str) -> (&str, &str) {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// A leading sign, `nan` or `inf` gets its own message rather than "bad number".
fn sign_error(kind: &str, s: &str) -> Option<String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    if t.starts_with('-') {
        Some(format!("bad {kind} {s:?}: must not be negative"))
    } else if lower.starts_with("nan") || lower.starts_with("+nan") {
        Some(format!("bad {kind} {s:?}: not a number"))
    } else {
        None
    }
}

/// Parses `"200ms"`, `"1.5s"`, `"50us"` (or `"µs"`), `"10ns"`, `"2m"`; `"0"` needs no unit.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let expected = || {
        format!(
            "bad duration {s:?}: expected a number with a unit ns, us, ms, s or m (like \"200ms\")"
        )
    };
    if let Some(e) = sign_error("duration", s) {
        return Err(e);
    }
    let (num, unit) = split_number(s.strip_prefix('+').unwrap_or(s));
    let scale: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "" if !num.is_empty() && num.bytes().all(|b| b == b'0' || b == b'.') => 1,
        _ => return Err(expected()),
    };
    let (ns, lost) = scaled_decimal(num, scale).ok_or_else(expected)?;
    if lost {
        return Err(format!("bad duration {s:?}: finer than a nanosecond"));
    }
    let ns = u64::try_from(ns).map_err(|_| format!("bad duration {s:?}: too large"))?;
    Ok(Duration::from_nanos(ns))
}

/// Parses sizes in bytes: `"1448"`, `"1448B"`, decimal `"64KB"` (64 000), `"1MB"`,
/// `"1GB"`, `"1TB"`, and binary `"64KiB"` (65 536), `"1MiB"`, `"1GiB"`, `"1TiB"`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let expected = || {
        format!(
            "bad size {s:?}: expected a number of bytes with an optional unit B, KB, MB, GB, KiB, MiB or GiB (like \"64KB\")"
        )
    };
    if let Some(e) = sign_error("size", s) {
        return Err(e);
    }
    let (num, unit) = split_number(s.strip_prefix('+').unwrap_or(s));
    let scale: u128 = match unit {
        "" | "B" | "b" => 1,
        "KB" | "kB" | "K" | "k" => 1_000,
        "MB" | "M" => 1_000_000,
        "GB" | "G" => 1_000_000_000,
        "TB" | "T" => 1_000_000_000_000,
        "KiB" | "Ki" => 1 << 10,
        "MiB" | "Mi" => 1 << 20,
        "GiB" | "Gi" => 1 << 30,
        "TiB" | "Ti" => 1 << 40,
        _ => return Err(expected()),
    };
    // Binary scales are not powers of ten: do the fraction in two steps.
    let (bytes, lost) = if scale.is_power_of_two() && scale > 1 {
        let (milli, lost) = scaled_decimal(num, 1_000_000_000).ok_or_else(expected)?;
        let total = milli
            .checked_mul(scale)
            .ok_or_else(|| format!("bad size {s:?}: too large"))?;
        (total / 1_000_000_000, lost || total % 1_000_000_000 != 0)
    } else {
        scaled_decimal(num, scale).ok_or_else(expected)?
    };
    if lost {
        return Err(format!("bad size {s:?}: not a whole number of bytes"));
    }
    u64::try_from(bytes).map_err(|_| format!("bad size {s:?}: too large"))
}

/// Bit-rate units, case-sensitive (a lower-case `b` is bits): each scale's
/// forms, in the order the error message lists them.
const RATE_UNITS: &[(f64, &[&str])] = &[
    (1.0, &["bps", "b/s", "bit/s"]),
    (1e3, &["kbps", "kb/s", "kbit/s", "Kbps", "Kb/s", "Kbit/s"]),
    (1e6, &["Mbps", "Mb/s", "Mbit/s", "mbps"]),
    (1e9, &["Gbps", "Gb/s", "Gbit/s", "gbps"]),
    (1e12, &["Tbps", "Tb/s", "Tbit/s", "tbps"]),
];

/// Byte-rate units (an upper-case `B`): not rates a link is given in, but a
/// common slip, answered with the bit-rate equivalent.
const BYTE_RATE_UNITS: &[(f64, &[&str])] = &[
    (1.0, &["B/s", "Bps"]),
    (1e3, &["kB/s", "KB/s", "kBps", "KBps"]),
    (1e6, &["MB/s", "MBps"]),
    (1e9, &["GB/s", "GBps"]),
    (1e12, &["TB/s", "TBps"]),
    (1024.0, &["KiB/s"]),
    (1_048_576.0, &["MiB/s"]),
    (1_073_741_824.0, &["GiB/s"]),
];

/// Looks `unit` up in a unit table.
fn unit_scale(table: &[(f64, &[&str])], unit: &str) -> Option<f64> {
    table
        .iter()
        .find(|(_, forms)| forms.contains(&unit))
        .map(|(scale, _)| *scale)
}

/// A decimal number as [`split_number`] cut it: digits with at most one point.
fn rate_number(num: &str) -> Option<f64> {
    if num.is_empty() || num == "." || num.bytes().filter(|&b| b == b'.').count() > 1 {
        return None;
    }
    num.parse().ok()
}

/// Parses rates in bits per second: `"100bps"`, `"56kbps"`, `"1.544Mb/s"`,
/// `"10Mbit/s"`, `"1Gbps"`, `"1Tbps"` (every form in [`RATE_UNITS`]). `"0"` and
/// `"unlimited"`/`"infinite"` give 0.0 and infinity. A byte rate (`"1MB/s"`) is
/// an error giving its bit-rate equivalent.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let expected = || {
        let forms: Vec<String> = RATE_UNITS.iter().map(|(_, f)| f.join(", ")).collect();
        format!(
            "bad rate {s:?}: expected a number with a bit-rate unit (like \"10Mbps\" or \"1.544Mb/s\"), or \"0\" or \"unlimited\" for no limit; units (case-sensitive, lower-case b = bits): {}",
            forms.join("; ")
        )
    };
    if let Some(e) = sign_error("rate", s) {
        return Err(e);
    }
    let t = s.trim();
    if matches!(t, "unlimited" | "infinite" | "inf") {
        return Ok(f64::INFINITY);
    }
    let (num, unit) = split_number(t.strip_prefix('+').unwrap_or(t));
    if let Some(byte_scale) = unit_scale(BYTE_RATE_UNITS, unit) {
        let v = rate_number(num).ok_or_else(expected)?;
        let bits = v * byte_scale * 8.0;
        let equivalent = if bits.is_finite() && bits > 0.0 {
            format!(
                "; {num}{unit} is {} (\"{}\")",
                fmt_rate(bits),
                fmt_rate(bits).replace("bps", "b/s")
            )
        } else {
            String::new()
        };
        return Err(format!(
            "bad rate {s:?}: {unit} is bytes per second, and rates are in bits per second (a lower-case b){equivalent}"
        ));
    }
    let scale = match unit_scale(RATE_UNITS, unit) {
        Some(scale) => scale,
        None if !num.is_empty()
            && unit.is_empty()
            && num.bytes().all(|b| b == b'0' || b == b'.') =>
        {
            1.0
        }
        None => return Err(expected()),
    };
    let v = rate_number(num).ok_or_else(expected)?;
    let v = v * scale;
    if !v.is_finite() {
        return Err(format!("bad rate {s:?}: too large"));
    }
    Ok(v)
}

/// Trims `"1.500"` to `"1.5"` and `"2.000"` to `"2"`.
fn trim_decimal(mut s: String) -> String {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    s
}

/// Formats a duration in the largest unit that keeps it readable: `"1.5s"`,
/// `"200ms"`, `"50us"`, `"10ns"`; round-trips through [`parse_duration`] when exact.
pub fn fmt_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        return "0s".to_string();
    }
    let (scale, unit) = if ns >= 1_000_000_000 {
        (1e9, "s")
    } else if ns >= 1_000_000 {
        (1e6, "ms")
    } else if ns >= 1_000 {
        (1e3, "us")
    } else {
        return format!("{ns}ns");
    };
    let text = trim_decimal(format!("{:.3}", ns as f64 / scale));
    format!("{text}{unit}")
}

/// Formats a byte count: exact binary or decimal units when they fit (`"64KiB"`,
/// `"64KB"`), plain bytes below 10 000 (`"1448B"`), else two decimals (`"12.35MB"`).
pub fn fmt_size(bytes: u64) -> String {
    if bytes < 10_000 && (bytes == 0 || bytes % 1024 != 0) {
        return format!("{bytes}B");
    }
    const BIN: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    const DEC: [(u64, &str); 4] = [
        (1_000_000_000_000, "TB"),
        (1_000_000_000, "GB"),
        (1_000_000, "MB"),
        (1_000, "KB"),
    ];
    for (scale, unit) in BIN {
        if bytes >= scale && bytes % scale == 0 {
            return format!("{}{unit}", bytes / scale);
        }
    }
    for (scale, unit) in DEC {
        if bytes >= scale {
            let text = trim_decimal(format!("{:.2}", bytes as f64 / scale as f64));
            return format!("{text}{unit}");
        }
    }
    format!("{bytes}B")
}

/// Formats bits per second: `"1.544Mbps"`, `"1Gbps"`, `"56kbps"`, `"100bps"`;
/// 0 and infinity print as `"unlimited"` (a link with no serialization delay).
pub fn fmt_rate(bps: f64) -> String {
    if bps == 0.0 || bps.is_infinite() {
        return "unlimited".to_string();
    }
    if bps.is_nan() {
        return "NaN".to_string();
    }
    let (scale, unit) = if bps >= 1e12 {
        (1e12, "Tbps")
    } else if bps >= 1e9 {
        (1e9, "Gbps")
    } else if bps >= 1e6 {
        (1e6, "Mbps")
    } else if bps >= 1e3 {
        (1e3, "kbps")
    } else {
        (1.0, "bps")
    };
    let text = trim_decimal(format!("{:.3}", bps / scale));
    format!("{text}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("200ms"), Ok(Duration::from_millis(200)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0.1s"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("50us"), Ok(Duration::from_micros(50)));
        assert_eq!(parse_duration("50µs"), Ok(Duration::from_micros(50)));
        assert_eq!(parse_duration("10ns"), Ok(Duration::from_nanos(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration(" 20 ms "), Ok(Duration::from_millis(20)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0ms"), Ok(Duration::ZERO));
        assert_eq!(parse_duration(".5ms"), Ok(Duration::from_micros(500)));
    }

    #[test]
    fn duration_errors() {
        assert_eq!(
            parse_duration("20 parsecs").unwrap_err(),
            "bad duration \"20 parsecs\": expected a number with a unit ns, us, ms, s or m (like \"200ms\")"
        );
        for bad in [
            "",
            "ms",
            "200",
            "1.2.3s",
            "-5ms",
            "NaN",
            "nanms",
            "inf",
            "1e3ms",
            "0.5ns",
            "99999999999999999999s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should fail");
        }
        assert!(parse_duration("-5ms").unwrap_err().contains("negative"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("1448"), Ok(1448));
        assert_eq!(parse_size("1448B"), Ok(1448));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5KB"), Ok(1500));
        assert_eq!(parse_size("0.5KiB"), Ok(512));
        for bad in [
            "",
            "KB",
            "1.5B",
            "0.3KiB",
            "-1KB",
            "12 parsecs",
            "NaN",
            "1e3",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1.544Mbps"), Ok(1_544_000.0));
        assert_eq!(parse_rate("1Gbps"), Ok(1e9));
        assert_eq!(parse_rate("10Mbps"), Ok(1e7));
        assert_eq!(parse_rate("56kbps"), Ok(56_000.0));
        assert_eq!(parse_rate("100bps"), Ok(100.0));
        assert_eq!(parse_rate("0"), Ok(0.0));
        assert_eq!(parse_rate("unlimited"), Ok(f64::INFINITY));
        for bad in [
            "", "10", "10MB", "-1Mbps", "NaNMbps", "nan", "1..2Mbps", ".Mbps",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad:?} should fail");
        }
        assert!(parse_rate("-1Mbps").unwrap_err().contains("negative"));
    }

    #[test]
    fn rates_in_every_bit_rate_form() {
        for (text, bps) in [
            ("1.544Mb/s", 1_544_000.0),
            ("1.544 Mb/s", 1_544_000.0),
            ("1.544Mbit/s", 1_544_000.0),
            ("1.544Mbps", 1_544_000.0),
            ("1 Gb/s", 1e9),
            ("56kb/s", 56_000.0),
            ("56Kb/s", 56_000.0),
            ("56kbit/s", 56_000.0),
            ("9600b/s", 9600.0),
            ("9600bit/s", 9600.0),
            ("9600bps", 9600.0),
            ("2Tb/s", 2e12),
            // Forms accepted before bit/s spellings were added keep working.
            ("10mbps", 1e7),
            ("1gbps", 1e9),
        ] {
            assert_eq!(parse_rate(text), Ok(bps), "{text}");
        }
        let e = parse_rate("1.544Mbs").unwrap_err();
        for form in [
            "bps",
            "b/s",
            "bit/s",
            "kb/s",
            "Mb/s",
            "Mbit/s",
            "Gb/s",
            "Tbps",
            "unlimited",
        ] {
            assert!(
                e.contains(&format!(" {form}")) || e.contains(&format!("\"{form}\"")),
                "{form} missing from: {e}"
            );
        }
    }

    #[test]
    fn byte_rates_are_errors_with_the_bit_rate() {
        for (text, unit, bits) in [
            ("1MB/s", "MB/s", "8Mbps"),
            ("125kB/s", "kB/s", "1Mbps"),
            ("125KB/s", "KB/s", "1Mbps"),
            ("100B/s", "B/s", "800bps"),
            ("1.5 GB/s", "GB/s", "12Gbps"),
            ("1KiB/s", "KiB/s", "8.192kbps"),
        ] {
            let e = parse_rate(text).unwrap_err();
            assert!(
                e.contains(&format!("{unit} is bytes per second")),
                "{text}: {e}"
            );
            assert!(e.contains(bits), "{text}: wanted {bits} in {e}");
            assert!(e.contains(&bits.replace("bps", "b/s")), "{text}: {e}");
        }
    }

    #[test]
    fn formatting_round_trips() {
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(fmt_duration(Duration::from_millis(200)), "200ms");
        assert_eq!(fmt_duration(Duration::from_micros(50)), "50us");
        assert_eq!(fmt_duration(Duration::from_nanos(10)), "10ns");
        assert_eq!(fmt_duration(Duration::ZERO), "0s");
        assert_eq!(fmt_size(65_536), "64KiB");
        assert_eq!(fmt_size(64_000), "64KB");
        assert_eq!(fmt_size(1448), "1448B");
        assert_eq!(fmt_size(12_345_678), "12.35MB");
        assert_eq!(fmt_rate(1_544_000.0), "1.544Mbps");
        assert_eq!(fmt_rate(1e9), "1Gbps");
        assert_eq!(fmt_rate(56_000.0), "56kbps");
        assert_eq!(fmt_rate(100.0), "100bps");
        for d in ["1.5s", "200ms", "50us", "10ns"] {
            assert_eq!(fmt_duration(parse_duration(d).unwrap()), d);
        }
        for s in ["64KiB", "64KB", "1448B", "1MiB"] {
            assert_eq!(fmt_size(parse_size(s).unwrap()), s);
        }
        for r in ["1.544Mbps", "1Gbps", "56kbps", "100bps"] {
            assert_eq!(fmt_rate(parse_rate(r).unwrap()), r);
        }
    }
}
