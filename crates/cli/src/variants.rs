//! `tinygram run` on a file with `[[variant]]` tables: every variant's headline
//! figures in one table, and in the JSON under `variants`.

use std::fmt::Write;
use tinygram_sim::metrics::RunResult;

/// Sum of a counter over both hosts.
fn both(r: &RunResult, f: fn(&tinygram_sim::metrics::HostResult) -> u64) -> u64 {
    f(&r.client) + f(&r.server)
}

/// The comparison table: the base run first, then each variant.
/// `transactions`: whether the workload counts transactions (request-response,
/// interactive); a bulk transfer shows goodput only.
pub fn table(base: &RunResult, rows: &[(String, RunResult)], transactions: bool) -> String {
    let mut s = String::from(
        "\nVariants (the file's [[variant]] tables; --variant NAME runs one in full):\n",
    );
    let name_w = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .chain([6])
        .max()
        .unwrap_or(6);
    let _ = write!(s, "  {:<name_w$}  {:>12}", "", "goodput kB/s");
    if transactions {
        let _ = write!(s, "  {:>10}  {:>12}", "trans/s", "p50 ms");
    }
    let _ = writeln!(
        s,
        "  {:>8}  {:>8}  {:>9}  integrity",
        "retrans", "timeouts", "sim s"
    );
    let all = std::iter::once(("(base)", base)).chain(rows.iter().map(|(n, r)| (n.as_str(), r)));
    for (name, r) in all {
        let _ = write!(
            s,
            "  {:<name_w$}  {:>12.1}",
            name,
            r.goodput_bytes_per_s / 1e3
        );
        if transactions {
            let p50 = if r.completion_ms.is_empty() {
                "n/a".to_string()
            } else {
                crate::output::sig3(r.completion_ms.p50)
            };
            let _ = write!(s, "  {:>10.2}  {:>12}", r.transactions_per_s, p50);
        }
        let _ = writeln!(
            s,
            "  {:>8}  {:>8}  {:>9.3}  {}",
            both(r, |h| h.retransmits),
            both(r, |h| h.timeouts),
            r.sim_time_s,
            if r.integrity_ok { "ok" } else { "FAILED" }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinygram_lab::run::run_variants as run_all;
    use tinygram_sim::ScenarioSet;

    #[test]
    fn each_variant_runs_its_own_configuration() {
        let text = r#"
duration = "5s"
[client]
send_policy = "nagle"
mss = 1448
[server]
ack_policy = "delayed"
mss = 1448
[workload]
type = "request-response"
request = [100000]
response = [1]
requests = 5

[[variant]]
name = "minshall"
client.send_policy = "minshall"
"#;
        let set = ScenarioSet::from_str(text, "t.toml", &[]).unwrap();
        let base = tinygram_sim::run(&set.base);
        let rows = run_all(&set.variants);
        assert_eq!(rows.len(), 1);
        // Cheshire's stall under strict Nagle, gone under Minshall.
        assert!(base.completion_ms.p50 > 150.0, "{}", base.completion_ms.p50);
        assert!(
            rows[0].1.completion_ms.p50 < 20.0,
            "{}",
            rows[0].1.completion_ms.p50
        );
        let t = table(&base, &rows, true);
        assert!(t.contains("p50 ms"), "{t}");
        assert!(!table(&base, &rows, false).contains("p50 ms"));
        assert!(t.contains("(base)") && t.contains("minshall"), "{t}");
        let j = tinygram_lab::Run {
            base: tinygram_lab::Outcome::TwoHost(Box::new(base.clone())),
            variants: rows.clone(),
        }
        .to_json();
        assert_eq!(j["variants"][0]["name"], "minshall");
        assert!(j["transactions"].is_u64());
    }

    #[test]
    fn no_completed_transaction_shows_n_a() {
        let text = "duration = \"1s\"\n[workload]\nrequests = 3\n\n\
                    [[variant]]\nname = \"far\"\nlink.delay = \"2s\"\n";
        let set = ScenarioSet::from_str(text, "t.toml", &[]).unwrap();
        let base = tinygram_sim::run(&set.base);
        let rows = run_all(&set.variants);
        assert_eq!(rows[0].1.transactions, 0);
        let t = table(&base, &rows, true);
        let far = t
            .lines()
            .find(|l| l.trim_start().starts_with("far"))
            .unwrap();
        assert!(far.contains("n/a") && !far.contains("0.000"), "{t}");
    }
}
