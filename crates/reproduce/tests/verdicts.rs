//! Every verdict comes from the one rule over the points of what the
//! documents leave open, and every open value is listed with its range.

use tinygram_reproduce::open::verdict_over;
use tinygram_reproduce::{format_section, format_tally, json, reproduce, Claim, Verdict, WIDTH};

#[test]
fn every_verdict_is_the_one_rule_over_the_points_and_every_unknown_is_listed() {
    let secs = reproduce(&[], true, 2, &|_, _| {}).unwrap();
    let doc = json(&secs, true);
    let mut open = 0;
    for (sec, e) in secs.iter().zip(doc["experiments"].as_array().unwrap()) {
        // Every unknown is listed, with its range and why, and the section
        // was read over the points of those values.
        let listed = e["unknowns"].as_array().unwrap();
        assert_eq!(listed.len(), sec.unknowns.len(), "{}", sec.name);
        for (u, j) in sec.unknowns.iter().zip(listed) {
            assert_eq!(j["key"], u.key.as_str());
            assert!(
                j["range"]
                    .as_str()
                    .is_some_and(|r| r.contains("..") || r.starts_with("one of ")),
                "{}: {j}",
                sec.name
            );
            assert!(j["why"].as_str().is_some_and(|w| w.len() > 20), "{j}");
        }
        if sec.unknowns.is_empty() {
            assert_eq!(sec.points, 1, "{}", sec.name);
        } else {
            open += 1;
            // Every grid value at every draw.
            let grid: usize = sec
                .unknowns
                .iter()
                .map(|u| match &u.spec {
                    tinygram_lab::space::Spec::Values(v) => v.len(),
                    _ => 1,
                })
                .product();
            assert_eq!(sec.points, sec.samples as usize * grid, "{}", sec.name);
        }
        for c in &sec.claims {
            assert_eq!(c.points.of(), sec.points, "{}", c.id);
            if c.cells.is_empty() {
                assert_eq!(c.verdict, verdict_over(c.points), "{}", c.id);
            } else {
                for cell in &c.cells {
                    assert_eq!(cell.points.of(), sec.points, "{} {:?}", c.id, cell.labels);
                    assert_eq!(
                        cell.verdict,
                        verdict_over(cell.points),
                        "{} {:?}",
                        c.id,
                        cell.labels
                    );
                    if cell.verdict == Verdict::NotTestable && cell.points.reproduced > 0 {
                        assert!(cell.cause.is_some(), "{} {:?}", c.id, cell.labels);
                    }
                }
                // A claim over cells is read from its cells, the same way everywhere.
                let again = Claim::matrix("", "", "", String::new(), &[], c.cells.clone());
                assert_eq!(c.verdict, again.verdict, "{}", c.id);
            }
        }
        // Table shading follows the rule its figure is read by, over the same points.
        for t in &sec.tables {
            for r in &t.rows {
                for v in &r.values {
                    if let (Some(sp), Some(_)) = (&v.spread, v.published) {
                        assert_eq!(
                            v.outside(),
                            sp.reading == Some(tinygram_lab::Reading::Fails)
                        );
                    }
                }
            }
        }
    }
    assert_eq!(
        open,
        secs.len(),
        "every experiment lists what its document leaves open"
    );
    // The terminal output fits WIDTH columns and ends with the counts per document.
    let mut text: String = secs.iter().map(format_section).collect();
    text += &format_tally(&secs);
    for line in text.lines() {
        assert!(
            line.chars().count() <= WIDTH,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    for sec in &secs {
        assert!(
            text.contains(&format!("  {}", sec.name)),
            "{} counted",
            sec.name
        );
    }
    let d = &doc["experiments"][0];
    assert_eq!(d["name"], "doupnik-web");
    assert!(d["points"].as_u64().unwrap() > 1, "{}", d["points"]);
}
