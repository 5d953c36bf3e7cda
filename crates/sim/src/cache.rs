//! The size of the processor's last-level cache, which decides whether the
//! many-flow world prefetches each next event's connection state: when all
//! connections fit in the cache, the prefetches only cost (measured in
//! docs/benchmarks.md: 1,000 flows run faster without them, 5,000 slower).
//! A performance hint alone: no run's results depend on it.

use std::sync::OnceLock;

/// Bytes of the largest-level data or unified cache of CPU 0, as Linux
/// reports it in sysfs; `None` where it does not (another OS, no sysfs).
pub(crate) fn last_level_bytes() -> Option<u64> {
    static LLC: OnceLock<Option<u64>> = OnceLock::new();
    *LLC.get_or_init(|| read_sysfs(std::path::Path::new("/sys/devices/system/cpu/cpu0/cache")))
}

/// The largest level's size among `dir`'s `index*` entries (Data or Unified).
fn read_sysfs(dir: &std::path::Path) -> Option<u64> {
    let mut best: Option<(u32, u64)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let read = |f: &str| std::fs::read_to_string(path.join(f)).ok();
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        if read("type").is_some_and(|t| t.trim() == "Instruction") {
            continue;
        }
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(size.trim())) else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, size));
        }
    }
    best.map(|(_, size)| size)
}

/// A sysfs cache size: bytes, or with a K, M or G suffix (binary units).
fn parse_size(s: &str) -> Option<u64> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1024K"), Some(1 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    /// The largest level wins, and instruction caches are left out.
    #[test]
    fn the_largest_level_is_the_last() {
        let dir = std::env::temp_dir().join(format!("tinygram-cache-{}", std::process::id()));
        let add = |i: u32, level: u32, ty: &str, size: &str| {
            let d = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(d.join("type"), format!("{ty}\n")).unwrap();
            std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
        };
        add(0, 1, "Data", "32K");
        add(1, 1, "Instruction", "32K");
        add(2, 3, "Unified", "32768K");
        add(3, 2, "Unified", "1024K");
        add(4, 4, "Instruction", "64M");
        std::fs::create_dir_all(dir.join("uevent-not-an-index")).unwrap();
        assert_eq!(read_sysfs(&dir), Some(32 << 20));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read_sysfs(&dir), None);
    }
}
