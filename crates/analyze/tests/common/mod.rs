//! Shared by the generated ground-truth tests: a seeded scenario generator and
//! the seed list with its replay variables.

/// splitmix64: a tiny deterministic generator for scenario choices.
pub struct Gen(pub u64);

impl Gen {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// Generator seeds `1..=runs`, or the one `{prefix}_SEED` names; `{prefix}_RUNS`
/// overrides `runs`.
pub fn seeds(prefix: &str, runs: u64) -> Vec<u64> {
    let runs = std::env::var(format!("{prefix}_RUNS"))
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(runs);
    match std::env::var(format!("{prefix}_SEED")) {
        Ok(v) => vec![v
            .parse()
            .unwrap_or_else(|_| panic!("{prefix}_SEED is a number"))],
        Err(_) => (1..=runs).collect(),
    }
}
