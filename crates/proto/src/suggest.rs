//! "Did you mean" hints for misspelled names: scenario keys, policy names,
//! option names. One helper, so every parser suggests the same way.

/// Levenshtein distance between two strings, counted in chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a typo: at
/// most 2 edits, or a third of the candidate's length for long names.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, c)| *d > 0 && *d <= 2.max(c.chars().count() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The error for `s`, not a name in `all` (name, description), where names
/// may take an argument (`naglim:N`): the closest name of the same form
/// ("naglm:30" is a near miss of "naglim:N", not of "nagle") and the list.
pub fn unknown_policy(what: &str, s: &str, all: &[(&str, &str)]) -> String {
    let bases = all
        .iter()
        .filter(|(n, _)| n.contains(':') == s.contains(':'))
        .map(|(n, _)| n.split(':').next().unwrap_or(n));
    let base = s.split(':').next().unwrap_or(s);
    format!(
        "unknown {what} {s:?}{} (expected one of: {})",
        did_you_mean(base, bases),
        all.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    )
}

/// `"; did you mean \"nagle\"?"` when `word` is a near miss of a candidate, else `""`.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean {c:?}?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested_and_far_ones_are_not() {
        assert_eq!(edit_distance("nagel", "nagle"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(
            closest("nagel", ["nodelay", "nagle", "cork"]),
            Some("nagle")
        );
        assert_eq!(
            closest("sned_policy", ["send_policy", "ack_policy"]),
            Some("send_policy")
        );
        assert_eq!(closest("zzzzzz", ["nodelay", "nagle"]), None);
        // An exact match is not a typo.
        assert_eq!(closest("nagle", ["nagle"]), None);
        assert_eq!(
            did_you_mean("delyaed", ["immediate", "delayed"]),
            "; did you mean \"delayed\"?"
        );
        assert_eq!(did_you_mean("bogus", ["immediate", "delayed"]), "");
    }

    /// Every name parser of the engine's settings suggests the near miss.
    #[test]
    fn every_name_parser_suggests() {
        use crate::policy::{AckPolicyKind, DelackCount, SendPolicyKind, WindowUpdate};
        use crate::{LossIs, OptionSet, SlowStart};
        let cases = [
            ("nagel".parse::<SendPolicyKind>().unwrap_err(), "\"nagle\""),
            (
                "nagle-libral".parse::<SendPolicyKind>().unwrap_err(),
                "\"nagle-liberal\"",
            ),
            (
                "naglm:30".parse::<SendPolicyKind>().unwrap_err(),
                "\"naglim\"",
            ),
            (
                "delyaed".parse::<AckPolicyKind>().unwrap_err(),
                "\"delayed\"",
            ),
            (
                "quikack".parse::<AckPolicyKind>().unwrap_err(),
                "\"quickack\"",
            ),
            ("ful".parse::<DelackCount>().unwrap_err(), "\"full\""),
            (
                "imediate".parse::<WindowUpdate>().unwrap_err(),
                "\"immediate\"",
            ),
            ("nosie".parse::<LossIs>().unwrap_err(), "\"noise\""),
            ("doubel".parse::<SlowStart>().unwrap_err(), "\"double\""),
            (
                OptionSet::default().enable("timestamp").unwrap_err(),
                "\"timestamps\"",
            ),
        ];
        for (err, want) in cases {
            assert!(err.contains(&format!("did you mean {want}?")), "{err}");
        }
        let far = "zzzzzzz".parse::<SendPolicyKind>().unwrap_err();
        assert!(
            !far.contains("did you mean") && far.contains("expected one of"),
            "{far}"
        );
        assert_eq!("noise".parse::<LossIs>(), Ok(LossIs::Noise));
        assert_eq!("double".parse::<SlowStart>(), Ok(SlowStart::Double));
    }
}
