//! Small robust statistics over timing samples: the largest cluster (a mode
//! for continuous values) and quantiles.

use serde::Serialize;

/// A group of nearby samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cluster {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub count: usize,
}

/// The cluster holding the most samples (the higher one on a tie: the
/// "upper mode"). Sorted samples join a cluster while within
/// `max(abs_tol, rel_tol x first)` of its first sample, so a cluster never
/// drifts along a spread of values.
pub fn upper_mode(xs: &[f64], rel_tol: f64, abs_tol: f64) -> Option<Cluster> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let mut best: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < v.len() {
        let first = v[i];
        let reach = first + abs_tol.max(rel_tol * first.abs());
        let j = i + v[i..].partition_point(|&x| x <= reach);
        if best.is_none_or(|(a, b)| j - i >= b - a) {
            best = Some((i, j));
        }
        i = j;
    }
    best.map(|(a, b)| {
        let c = &v[a..b];
        Cluster {
            median: c[c.len() / 2],
            lo: c[0],
            hi: c[c.len() - 1],
            count: c.len(),
        }
    })
}

/// The `q` quantile (0..=1) of the samples, nearest rank; `None` when empty.
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let k = ((v.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    Some(v[k])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_biggest_cluster_wins_and_ties_go_up() {
        let xs = [0.040, 0.0401, 0.0399, 0.2, 0.2, 0.0005];
        let c = upper_mode(&xs, 0.1, 0.001).unwrap();
        assert_eq!(c.count, 3);
        assert!((c.median - 0.040).abs() < 1e-9);
        let tie = upper_mode(&[0.04, 0.2], 0.1, 0.001).unwrap();
        assert_eq!(tie.median, 0.2);
        assert!(upper_mode(&[], 0.1, 0.0).is_none());
    }

    #[test]
    fn quantiles_take_the_nearest_rank() {
        let xs = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(quantile(&xs, 0.0), Some(1.0));
        assert_eq!(quantile(&xs, 0.5), Some(3.0));
        assert_eq!(quantile(&xs, 1.0), Some(5.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
