//! `tinygram reproduce --quick`: the qualitative claims of the source
//! documents, checked on our own numbers (never tuned to theirs). A claim the
//! rules do not reproduce must be listed in the report as a difference with
//! its cause, never hidden.

use tinygram_cli::reproduce::{reproduce, Claim, Section, Verdict};

fn quick(name: &str) -> Section {
    let mut s = reproduce(&[name.to_string()], true, 2, false).unwrap();
    s.remove(0)
}

/// The claim with this id (the part after "experiment/").
fn claim<'a>(sec: &'a Section, slug: &str) -> &'a Claim {
    let id = format!("{}/{slug}", sec.name);
    sec.claims.iter().find(|c| c.id == id).unwrap_or_else(|| {
        let ids: Vec<_> = sec.claims.iter().map(|c| &c.id).collect();
        panic!("no claim {id}: {ids:?}")
    })
}

/// The claim is reproduced, and so is each of its cells.
fn holds(sec: &Section, slug: &str) {
    let c = claim(sec, slug);
    assert_eq!(c.verdict, Verdict::Reproduced, "{}: {}", c.id, c.text);
    for cell in &c.cells {
        assert_eq!(cell.verdict, Verdict::Reproduced, "{}: {:?}", c.id, cell);
    }
}

/// Every claim and cell not reproduced (or not testable) carries its own
/// likely cause, and a matrix claim is not reproduced exactly when one of
/// its cells is.
fn failures_are_explained(sec: &Section) {
    for c in &sec.claims {
        if c.verdict != Verdict::Reproduced {
            let cause = c.cause.as_deref().unwrap_or("");
            assert!(
                cause.len() > 40,
                "{}: {} is {:?} and names no cause",
                sec.name,
                c.text,
                c.verdict
            );
        }
        for cell in &c.cells {
            if cell.verdict != Verdict::Reproduced {
                assert!(
                    cell.cause.as_deref().unwrap_or("").len() > 40,
                    "{}: {:?} names no cause",
                    c.id,
                    cell
                );
            }
        }
        if !c.cells.is_empty() {
            let any_not = c.cells.iter().any(|x| x.verdict == Verdict::NotReproduced);
            assert_eq!(any_not, c.verdict == Verdict::NotReproduced, "{}", c.id);
        }
    }
}

/// Each failing cell of the claim (or the claim itself) names `cause`.
fn failing_ones_cite(sec: &Section, slug: &str, cause: &str) {
    let c = claim(sec, slug);
    for cell in &c.cells {
        if cell.verdict != Verdict::Reproduced {
            let got = cell.cause.as_deref().unwrap_or("");
            assert!(
                got.contains(cause),
                "{:?}: cause {got:?} lacks {cause:?}",
                cell.labels
            );
        }
    }
    if c.cells.is_empty() && c.verdict != Verdict::Reproduced {
        let got = c.cause.as_deref().unwrap_or("");
        assert!(
            got.contains(cause),
            "{}: cause {got:?} lacks {cause:?}",
            c.id
        );
    }
}

#[test]
fn cheshire_cliff_under_nagle_only() {
    let sec = quick("cheshire-cliff");
    holds(&sec, "cliff-under-nagle");
    holds(&sec, "no-cliff-under-fixes");
    // One claim for the fixes, link by link in its cells.
    assert_eq!(claim(&sec, "no-cliff-under-fixes").cells.len(), 2 * 3);
    failures_are_explained(&sec);
    // The WiFi-like figures differ from Cheshire's; the report says why.
    assert!(
        sec.differences
            .iter()
            .any(|d| d.contains("nominal link rate")),
        "{:?}",
        sec.differences
    );
}

#[test]
fn doupnik_web_claims() {
    let sec = quick("doupnik-web");
    failures_are_explained(&sec);
    holds(&sec, "new-policy-matches-nagle-off");
    let t = &sec.tables[0];
    // --quick covers the 4 KiB client window as well as 16 KiB.
    for rwnd in ["16KiB", "4KiB"] {
        assert!(
            t.rows.iter().any(|r| r.labels[1] == rwnd),
            "no {rwnd} rows in --quick"
        );
    }
    // About 5 requests/s on the short file under strict Nagle and a 200 ms
    // delayed ACK, with a client that counts full-sized segments.
    let strict = claim(&sec, "strict-nagle-held-tail");
    let cell = |labels: &[&str]| {
        strict
            .cells
            .iter()
            .find(|c| {
                c.labels
                    .iter()
                    .map(String::as_str)
                    .eq(labels.iter().copied())
            })
            .unwrap_or_else(|| panic!("no cell {labels:?}"))
    };
    assert_eq!(
        cell(&["16KiB", "full-sized only", "2.2 KB"]).verdict,
        Verdict::Reproduced
    );
    // Where the FreeBSD-like stall is missing, the cause is the client's
    // counting rule (no single rule gives both published 5 req/s) or, with a
    // 4 KiB buffer, the window update the client's read sends at once: both
    // rest on what the paper does not give, so those cells are not testable.
    for c in &strict.cells {
        let cause = c.cause.as_deref().unwrap_or("");
        assert!(
            c.verdict == Verdict::Reproduced
                || (c.verdict == Verdict::NotTestable
                    && (cause.contains("no single counting rule")
                        || cause.contains("window its read opened"))),
            "{:?}: {cause}",
            c.labels
        );
        assert_eq!(c.published.as_ref().map(|q| q.value), Some(5.0));
    }
    // One claim with one cell per window, client and file; each cause once.
    assert_eq!(strict.cells.len(), 2 * 2 * 2);
    let cause = strict.cause.as_deref().unwrap_or("");
    assert_eq!(
        cause.matches("no single counting rule").count(),
        2,
        "{cause}"
    );
    assert!(sec
        .differences
        .iter()
        .any(|d| d.contains("no single client ACK-counting rule")));
    // The new policy against Nagle-off on the 33 KB file: checked for every
    // server, window and client; by the rules (Doupnik 2.1 Rule 2) the 4 KB
    // writes each end a data set, so where the claim fails the two policies
    // must have sent the same segments, and the cause says so, once.
    let small = claim(&sec, "new-policy-fewer-small-segments");
    assert_eq!(
        small.cells.len(),
        3 * 2 * 2,
        "one per server, window and client"
    );
    failing_ones_cite(&sec, "new-policy-fewer-small-segments", "Rule 2");
    if small.verdict == Verdict::NotReproduced {
        let cause = small.cause.as_deref().unwrap_or("");
        assert_eq!(cause.matches("Rule 2").count(), 1, "{cause}");
    }
    for c in &small.cells {
        // "a vs b small segments per request": never more than Nagle-off.
        let v: Vec<f64> = c
            .detail
            .split(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
            .filter_map(|x| x.parse().ok())
            .collect();
        assert!(v[0] <= v[1], "{}", c.detail);
    }
    assert!(sec
        .differences
        .iter()
        .any(|d| d.contains("exactly the segments Nagle-off")));
    // Doupnik's liberal-Nagle case (Linux-2.2, 4 KB window, 33 KB) is checked
    // and, where our rules differ, explained.
    failing_ones_cite(&sec, "liberal-nagle-caught-by-delayed-ack", "SWS");
    // Each difference is listed once, not once per window.
    let mut d = sec.differences.clone();
    d.sort();
    d.dedup();
    assert_eq!(d.len(), sec.differences.len(), "{:?}", sec.differences);
    // Ratios read as ratios: no "1x slower".
    assert!(sec.findings.iter().all(|f| !f.contains(" 1x slower")));
    // The 33 KB held tail: about 5 requests/s with strict Nagle, Table 1's 5 beside it.
    let v = t
        .value(
            &["FreeBSD-like", "16KiB", "any segment", "Nagle on"],
            "33 KB rate",
        )
        .unwrap();
    let rps = v.measured.unwrap();
    assert!(
        (3.0..=7.0).contains(&rps),
        "FreeBSD-like Nagle on, 33 KB: {rps}"
    );
    assert_eq!(v.published, Some(5.0));
    // Charts for both windows, with Table 1's values as markers.
    assert!(sec.charts.iter().any(|c| c.title.contains("window 4KiB")));
    assert!(sec.charts.iter().any(|c| c.title.contains("window 16KiB")));
    assert!(sec.charts.iter().any(|c| c
        .series
        .iter()
        .any(|s| s.published.iter().any(Option::is_some))));
}

#[test]
fn davids_traces_claims() {
    let sec = quick("davids-traces");
    failures_are_explained(&sec);
    holds(&sec, "nagle-off-50-packets");
    holds(&sec, "naglim-30");
    // Trace 1 by the rules: a one-shot 200 ms delayed ACK releases
    // 10 + 200 + 200 + 90 bytes (4 packets in 600 ms), and the engine does
    // that; Davids' 5 packets in 654 ms is a free-running 200 ms timer whose
    // first tick came 54 ms after the first segment.
    use tinygram_cli::reproduce::nagle_release_schedule;
    assert_eq!(nagle_release_schedule(None), (4, 600));
    assert_eq!(nagle_release_schedule(Some(54)), (5, 654));
    assert_eq!(nagle_release_schedule(Some(200)), (4, 600));
    let t = &sec.tables[0];
    let t1 = t.value(&["1"], "data packets").unwrap();
    assert_eq!((t1.measured, t1.published), (Some(4.0), Some(5.0)));
    let ms = t.value(&["1"], "time to send").unwrap();
    assert!((595.0..=610.0).contains(&ms.measured.unwrap()), "{ms:?}");
    assert_eq!(ms.published, Some(654.0));
    // The timer's phase is not in the document: not testable, and why.
    let c1 = claim(&sec, "trace-1-nagle-10ms-writes");
    assert_eq!(c1.verdict, Verdict::NotTestable);
    failing_ones_cite(
        &sec,
        "trace-1-nagle-10ms-writes",
        "free-running 200 ms timer",
    );
    assert_eq!(c1.measured.as_ref().map(|q| q.value), Some(4.0));
    // Trace 2: all 50 back-to-back writes in 2 packets, 200 ms (Davids: 2, 201 ms).
    let t2 = t.value(&["2"], "data packets").unwrap();
    assert_eq!((t2.measured, t2.published), (Some(2.0), Some(2.0)));
}

#[test]
fn westfield_interactivity_beats_the_fixed_delay() {
    let sec = quick("westfield-ftp");
    failures_are_explained(&sec);
    holds(&sec, "interactivity-beats-fixed-delay");
    holds(&sec, "fuzzball-keeps-delaying");
    holds(&sec, "fixed-delay-crawls");
}

#[test]
fn fox_satellite_claims() {
    let sec = quick("fox-satellite");
    failures_are_explained(&sec);
    holds(&sec, "64k-window-limited");
    holds(&sec, "big-window-fills-link");
    // As the appendix compared them (NAK with noise against no NAK with congestion).
    holds(&sec, "nak-beats-no-nak");
    assert_eq!(
        claim(&sec, "nak-beats-no-nak").cells.len(),
        2,
        "BER 1e-7 and 1e-6"
    );
    holds(&sec, "noise-beats-congestion");
    // The controlled comparison is there too, and the split of the gain.
    assert_eq!(claim(&sec, "nak-beats-dupack-controlled").cells.len(), 2);
    assert!(
        sec.findings.iter().any(|f| f.contains("accounts for")),
        "{:?}",
        sec.findings
    );
}

#[test]
fn report_is_written_and_self_contained() {
    let dir = tempfile::tempdir().unwrap();
    let secs = reproduce(&["cheshire-cliff".to_string()], true, 2, false).unwrap();
    tinygram_cli::reproduce::write_report(dir.path(), &secs, true).unwrap();
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("</html>"));
    assert!(html.contains("99,913"));
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| link |"));
    assert!(dir.path().join("cheshire-cliff-1.svg").exists());
    // Cheshire's 5.2 Mb/s beside our WiFi-like figure, flagged as more than 2x off.
    assert!(md.contains("[5.2] (!)"), "{md}");
    assert!(html.contains("class=\"mismatch\""));
    // Time-sequence graphs scale to the page (they carry a viewBox), and no
    // chart text is under 12 px at the page's 1,100-px width.
    for (caption, svg) in &secs[0].plots {
        let head = svg.split('>').next().unwrap();
        assert!(head.contains("viewBox=\"0 0 1280 "), "{caption}: {head}");
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size.split('"').next().unwrap().parse().unwrap();
            assert!(px * 1100.0 / 1280.0 >= 12.0, "{caption}: font-size {px}");
        }
    }
    assert!(html.contains("figure svg{width:100%;height:auto}"));
}

/// Values of `attr="..."` in `s`.
fn attr_values<'a>(s: &'a str, attr: &str) -> Vec<&'a str> {
    let pat = format!("{attr}=\"");
    s.split(pat.as_str())
        .skip(1)
        .map(|x| x.split('"').next().unwrap())
        .collect()
}

/// The number in the overview cell of class `class` in experiment `name`'s row.
fn overview_count(html: &str, name: &str, class: &str) -> u64 {
    let row = html
        .split(&format!("<tr data-experiment=\"{name}\">"))
        .nth(1)
        .unwrap_or_else(|| panic!("no overview row for {name}"));
    let row = row.split("</tr>").next().unwrap();
    let cell = row
        .split(&format!("<td class=\"{class}\">"))
        .nth(1)
        .unwrap_or_else(|| panic!("{name}: no {class} cell"));
    cell.split('<').next().unwrap().parse().unwrap()
}

#[test]
fn report_json_html_and_sources() {
    let dir = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("tinygram")
        .unwrap()
        .args(["reproduce", "--quick", "--json", "--jobs", "2", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let file = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&file).expect("report.json parses");
    assert_eq!(stdout, doc, "--json prints report.json");

    let exps = doc["experiments"].as_array().unwrap();
    assert_eq!(exps.len(), 5);
    let mut ids = std::collections::HashSet::new();
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    let verdicts = ["reproduced", "not_reproduced", "not_testable"];
    for e in exps {
        let name = e["name"].as_str().unwrap();
        let claims = e["claims"].as_array().unwrap();
        assert!(!claims.is_empty(), "{name}: no claims");
        let mut counts = [0u64; 3];
        for c in claims {
            for k in [
                "id",
                "source",
                "text",
                "published",
                "measured",
                "verdict",
                "cause",
            ] {
                assert!(c.get(k).is_some(), "{name}: claim lacks {k}: {c}");
            }
            let id = c["id"].as_str().unwrap();
            assert!(id.starts_with(&format!("{name}/")), "{id}");
            assert!(
                id.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "-/".contains(ch)),
                "{id} is not slug-like"
            );
            assert!(ids.insert(id.to_string()), "duplicate claim id {id}");
            assert!(
                c["source"]["document"].as_str().unwrap().contains('"'),
                "{c}"
            );
            assert!(!c["source"]["section"].as_str().unwrap().is_empty());
            assert!(!c["text"].as_str().unwrap().is_empty());
            let v = c["verdict"].as_str().unwrap();
            let i = verdicts
                .iter()
                .position(|x| *x == v)
                .unwrap_or_else(|| panic!("{id}: verdict {v}"));
            counts[i] += 1;
            if v != "reproduced" {
                assert!(
                    c["cause"].as_str().is_some_and(|s| s.len() > 40),
                    "{id}: no cause"
                );
            }
            for q in [&c["published"], &c["measured"]] {
                assert!(
                    q.is_null() || (q["value"].is_f64() && q["unit"].is_string()),
                    "{id}: {q}"
                );
            }
            for cell in c["cells"].as_array().unwrap() {
                assert!(
                    verdicts.contains(&cell["verdict"].as_str().unwrap()),
                    "{id}: {cell}"
                );
                assert!(cell.get("published").is_some() && cell.get("measured").is_some());
            }
        }
        // The overview's counts, in report.json and in the HTML, are the claims'.
        for (i, v) in verdicts.iter().enumerate() {
            assert_eq!(e["counts"][v].as_u64(), Some(counts[i]), "{name} {v}");
            assert_eq!(
                overview_count(&html, name, &format!("n-{v}")),
                counts[i],
                "{name} {v}"
            );
        }
        let tables = e["tables"].as_array().unwrap();
        assert!(!tables.is_empty(), "{name}: no tables");
        for t in tables {
            let cols = t["value_columns"].as_array().unwrap().len();
            for r in t["rows"].as_array().unwrap() {
                let vals = r["values"].as_array().unwrap();
                assert_eq!(vals.len(), cols, "{name}: {r}");
                for v in vals {
                    assert!(
                        v.get("published").is_some() && v.get("measured").is_some(),
                        "{v}"
                    );
                    assert!(v["column"].is_string());
                }
            }
        }
    }
    // Table 1 sits beside our numbers: FreeBSD, 16 KB window, Nagle off, 2.2 KB: 1508 req/s.
    let doupnik = exps.iter().find(|e| e["name"] == "doupnik-web").unwrap();
    let row = doupnik["tables"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["labels"]["server"] == "FreeBSD-like"
                && r["labels"]["client rwnd"] == "16KiB"
                && r["labels"]["server policy"] == "Nagle off"
        })
        .expect("FreeBSD-like 16KiB Nagle off row");
    let v = &row["values"][0];
    assert_eq!(
        (v["column"].as_str(), v["unit"].as_str()),
        (Some("2.2 KB rate"), Some("req/s"))
    );
    assert_eq!(v["published"].as_f64(), Some(1508.0));
    assert!(v["measured"].as_f64().unwrap() > 0.0);
    // Every verdict shows up somewhere in the quick set.
    for v in verdicts {
        assert!(
            file.contains(&format!("\"verdict\": \"{v}\"")),
            "no {v} claim"
        );
    }

    // Contents and overview link to sections that exist.
    let ids_in_html: std::collections::HashSet<&str> =
        attr_values(&html, "id").into_iter().collect();
    let nav = html
        .split("<nav id=\"contents\">")
        .nth(1)
        .unwrap()
        .split("</nav>")
        .next()
        .unwrap();
    for target in ["#overview", "#sources"]
        .into_iter()
        .map(String::from)
        .chain(
            exps.iter()
                .map(|e| format!("#{}", e["name"].as_str().unwrap())),
        )
    {
        assert!(
            nav.contains(&format!("href=\"{target}\"")),
            "contents lack {target}"
        );
    }
    for href in attr_values(&html, "href") {
        let id = href
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("external link {href}"));
        assert!(ids_in_html.contains(id), "link #{id} has no target");
    }
    // Sources are cited in full, each experiment names its document.
    for cite in [
        "J. R. Doupnik, \"A new TCP transmission policy replacing Nagle mode\", Internet-Draft draft-doupnik-tcpimpl-nagle-mode-00, Utah State University, June 1999",
        "N. Davids, \"TCP -- Either Fast or Efficient\", Sys Admin magazine vol. 10 no. 5, May 2001",
        "R. Fox, \"TCP Big Window and Nak Options\", RFC 1106, Tandem, June 1989",
        "W. Westfield and D. Mills, \"Improving TCP throughput\", posts to mod.protocols.tcp-ip, October-November 1985",
        "S. Cheshire, \"TCP Performance problems caused by interaction between Nagle's Algorithm and Delayed ACK\", web page, 20 May 2005, updated November 2012",
    ] {
        let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
        assert!(md.contains(cite), "report.md lacks {cite}");
        let escaped = cite.replace('"', "&quot;");
        assert!(html.contains(&escaped), "index.html lacks {cite}");
    }
    // No internal paths or document numbers in any output file.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for bad in ["seed 00", concat!("shared", "/"), concat!("DESIGN", ".md")] {
            assert!(!text.contains(bad), "{} contains {bad:?}", path.display());
        }
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("Report:"),
        "{stderr}"
    );
}

#[test]
fn unknown_experiment_is_a_clear_error() {
    let e = reproduce(&["nope".to_string()], true, 1, false).unwrap_err();
    assert!(
        e.contains("unknown experiment \"nope\"") && e.contains("cheshire-cliff"),
        "{e}"
    );
}
