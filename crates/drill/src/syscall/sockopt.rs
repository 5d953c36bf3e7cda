//! tinygram's own socket options: `TCP_TINYGRAM_<KEY>` for every row of the
//! engine's table of settings (`tinygram_proto::settings`), KEY being the
//! row's name upper-cased. The script's value is read by the row's kind and
//! set with [`Setting::set`], so a new row is a new option with no code here;
//! [`SPECIAL`] names the few options that do more than set their row.

use super::int_of;
use crate::ast::Expr;
use tinygram_proto::settings::{self, Kind, Setting, Value, SETTINGS};
use tinygram_proto::{Config, ConfigError, Duration};

/// What every option derived from the table starts with.
pub(crate) const PREFIX: &str = "TCP_TINYGRAM_";

/// Options that do more than set their row, with what they add, for the
/// README's table; setsockopt applies each next to the generic path.
#[cfg(test)]
const SPECIAL: &[(&str, &str)] = &[
    (
        "TCP_TINYGRAM_SEND_POLICY",
        "as `TCP_NODELAY` and `TCP_CORK`, also on a live connection; `\"cork\"` remembers the policy `TCP_CORK` 0 restores",
    ),
    (
        "TCP_TINYGRAM_SYN_RETRIES",
        "also sets `synack_retries`: one count for both opens, as it had before the two keys split",
    ),
    (
        "TCP_TINYGRAM_OPTIONS",
        "also turns off inferring the options from the script's SYN (below)",
    ),
];

/// Limits that involve two settings (`Config::validate` checks one against
/// the other), so a setsockopt of either is checked against the other's value
/// on the socket.
const PAIRS: &[(&str, &str)] = &[
    ("rto_min", "rto_max"),
    ("adaptive_min", "adaptive_max"),
    ("buffer_cap", "mss"),
];

/// The option that sets row `s`: `TCP_TINYGRAM_` and its name upper-cased.
pub(crate) fn option_name(s: &Setting) -> String {
    format!("{PREFIX}{}", s.name.to_ascii_uppercase())
}

/// The row behind option `name`: `None` when `name` is not a `TCP_TINYGRAM_*`
/// name, an error with a did-you-mean when it is one the table does not have.
pub(crate) fn row(name: &str) -> Option<Result<&'static Setting, String>> {
    let key = name.strip_prefix(PREFIX)?;
    Some(
        SETTINGS
            .iter()
            .find(|s| s.name.to_ascii_uppercase() == key)
            .ok_or_else(|| {
                let names: Vec<String> = SETTINGS.iter().map(option_name).collect();
                format!(
                    "{name} is not one of tinygram's socket options{}; each setting `tinygram scenario` lists is {PREFIX} and its name upper-cased",
                    tinygram_proto::suggest::did_you_mean(name, names.iter().map(String::as_str))
                )
            }),
    )
}

/// The value `e` gives row `s`: a string in profile syntax (`"200ms"`,
/// `"wscale,sack"`, `"none"`) or a number, `n` or `[n]`: milliseconds for a
/// duration (as drill has always read them), nonzero for true (as Linux
/// reads a boolean option, tcp(7)).
pub(crate) fn value_of(s: &Setting, e: &Expr) -> Result<Value, String> {
    if let Expr::Str(text) = e {
        return s.parse(text);
    }
    let expected = || format!("expected {}", value_syntax(s.kind));
    let n = int_of(e).ok_or_else(expected)?;
    let n = u64::try_from(n).map_err(|_| format!("{n} is negative; {}", expected()))?;
    Ok(match s.kind {
        Kind::Flag => Value::Flag(n != 0),
        Kind::Count { .. } | Kind::Limit { .. } | Kind::Bytes { .. } => Value::Count(n),
        Kind::Number { .. } => Value::Number(n as f64),
        Kind::Time { .. } => Value::Time(Duration::from_millis(n)),
        Kind::Name | Kind::Names { .. } => return Err(expected()),
    })
}

/// How a script writes a value of `kind`, for messages and the README.
fn value_syntax(kind: Kind) -> String {
    let none = |on: bool| if on { " or `\"none\"`" } else { "" };
    match kind {
        Kind::Flag => "`[1]` or `[0]` (`\"true\"`, `\"false\"`)".into(),
        Kind::Count { min, .. } if min > 0 => format!("`[n]`, at least {min}"),
        Kind::Count { .. } => "`[n]`".into(),
        Kind::Limit { .. } => format!("`[n]`{}", none(true)),
        Kind::Bytes { none: n, .. } => format!("`[bytes]`{}", none(n)),
        Kind::Number { like } => format!("`[n]` or a string: {like}"),
        Kind::Time { none: n } => {
            format!("`[ms]` or `\"200ms\"`, `\"500us\"`, `\"1s\"`{}", none(n))
        }
        Kind::Name => "`\"name\"`".into(),
        Kind::Names { like } => format!("comma-separated {like}, or `\"none\"`"),
    }
}

/// The settings-table keys option `name` sets: its row, `TCP_TINYGRAM_SYN_RETRIES`'s
/// two, or the row a Linux option maps to (each of those keeps its own arm in
/// setsockopt for its semantics); empty for other options.
pub(crate) fn keys(name: &str) -> &'static [&'static str] {
    match name {
        "SO_RCVBUF" => &["rcv_buf"],
        "SO_SNDBUF" => &["snd_buf"],
        "TCP_MAXSEG" => &["mss"],
        "TCP_SYNCNT" => &["syn_retries"],
        "TCP_CONGESTION" => &["congestion"],
        "TCP_TINYGRAM_SYN_RETRIES" => &["syn_retries", "synack_retries"],
        _ => match row(name) {
            Some(Ok(s)) => std::slice::from_ref(&s.name),
            _ => &[],
        },
    }
}

/// Copies setting `key` from `from` into `to`, through its row (so with its range check).
fn copy_key(to: &mut Config, from: &Config, key: &'static str) -> Result<(), ConfigError> {
    let s = settings::find(key).map_err(|msg| ConfigError { key, msg })?;
    s.set(to, s.get(from))
        .map_err(|msg| ConfigError { key, msg })
}

/// Copies what option `name` sets from `from` into `to`; `from` holds
/// values its setsockopt already accepted.
pub(crate) fn apply_named(to: &mut Config, from: &Config, name: &str) -> Result<(), ConfigError> {
    keys(name).iter().try_for_each(|k| copy_key(to, from, k))
}

/// Why the value option `name` put in `cfg` (the socket's whole configuration
/// after the call) is out of range, alone or against the other half of a
/// [`PAIRS`] limit, if it is: setsockopt then fails with EINVAL, as Linux's
/// does for a value out of range (setsockopt(2)). Checked for `TCP_MAXSEG`
/// and every `TCP_TINYGRAM_*` option; the other Linux options keep their own rules.
pub(crate) fn range_error(cfg: &Config, name: &str) -> Option<ConfigError> {
    if name != "TCP_MAXSEG" && !name.starts_with(PREFIX) {
        return None;
    }
    let mut checked: Vec<&'static str> = keys(name).to_vec();
    for k in keys(name) {
        for (a, b) in PAIRS {
            let other = if a == k {
                b
            } else if b == k {
                a
            } else {
                continue;
            };
            if !checked.contains(other) {
                checked.push(other);
            }
        }
    }
    // Only the fields these checks read come from the socket, so an error
    // elsewhere in its configuration (reported at listen()/connect()) cannot
    // mask or stand in for this one.
    let mut probe = Config::default();
    for k in &checked {
        if let Err(e) = copy_key(&mut probe, cfg, k) {
            return Some(e);
        }
    }
    probe.validate().err().filter(|e| checked.contains(&e.key))
}

/// The README's table of `TCP_TINYGRAM_*` options, one line per row of the
/// settings table, as markdown (a test keeps the README's copy in step).
#[cfg(test)]
fn readme_table() -> String {
    let mut out = String::from("| option | value | default | sets |\n| --- | --- | --- | --- |\n");
    for s in SETTINGS {
        let name = option_name(s);
        let mut doc = s.doc.replace('|', "\\|");
        if let Some((_, more)) = SPECIAL.iter().find(|(n, _)| *n == name) {
            doc.push_str("; **");
            doc.push_str(more);
            doc.push_str("**");
        }
        out.push_str(&format!(
            "| `{name}` | {} | `{}` | {doc} |\n",
            value_syntax(s.kind),
            s.default_value()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{start, Settings};
    use tinygram_proto::profile::PROFILES;

    /// Runs `socket()` and one setsockopt of `name` to `value` (script
    /// syntax), expecting `ret`; the socket's configuration after it.
    fn set_through_setsockopt(name: &str, value: &str, ret: &str) -> Config {
        let text = format!(
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
             +0 setsockopt(3, IPPROTO_TCP, {name}, {value}, 4) = {ret}\n"
        );
        let script = crate::parse::parse_script(&text, "sockopt.pkt").expect("parses");
        let mut r = start(&script, &Settings::default()).unwrap_or_else(|r| panic!("{r}"));
        if let Err(f) = r.run() {
            panic!("{name} {value}: {f:?}");
        }
        r.socks[&3].cfg.clone()
    }

    /// Values of row `s` worth setting: the default, every profile's, and
    /// one beside the default for kinds that have one.
    fn values(s: &Setting) -> Vec<Value> {
        let mut v = vec![s.default_value()];
        v.extend(PROFILES.iter().map(|p| s.get(&p.config())));
        v.push(match (s.kind, s.default_value()) {
            (_, Value::Flag(b)) => Value::Flag(!b),
            (Kind::Count { min, .. }, Value::Count(n)) => {
                Value::Count(if n == min { n + 1 } else { min })
            }
            (_, Value::Count(n)) => Value::Count(n / 2 + 1),
            (_, Value::Number(x)) => Value::Number(x + 1.0),
            (_, Value::Time(d)) => Value::Time(d / 2 + Duration::from_millis(1)),
            (_, Value::None) => s
                .parse("100ms")
                .or_else(|_| s.parse("4096"))
                .expect("a value"),
            (_, other) => other,
        });
        let mut seen = Vec::new();
        v.retain(|x| {
            let new = !seen.contains(x);
            seen.push(x.clone());
            new
        });
        v
    }

    #[test]
    fn every_setting_is_an_option_that_sets_its_row() {
        let mut tried = 0;
        for s in SETTINGS {
            let name = option_name(s);
            for v in values(s) {
                let text = v.to_string();
                let mut want = Config::default();
                settings::set_text(&mut want, s.name, &text)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                if name == "TCP_TINYGRAM_SYN_RETRIES" {
                    settings::set_text(&mut want, "synack_retries", &text).unwrap();
                }
                // A value the engine refuses on its own is refused at the call.
                let (ret, want) = match want.validate() {
                    Ok(()) => ("0", want),
                    Err(_) => ("-1 EINVAL (Invalid argument)", Config::default()),
                };
                let mut forms = vec![format!("{text:?}")];
                // The same value as a number: milliseconds, a count, 0 or 1.
                match v {
                    Value::Time(d) if d.subsec_micros() % 1000 == 0 => {
                        forms.push(format!("[{}]", d.as_millis()))
                    }
                    Value::Count(n) => forms.push(format!("[{n}]")),
                    Value::Flag(b) => forms.push(format!("[{}]", u8::from(b))),
                    _ => {}
                }
                for form in forms {
                    let got = set_through_setsockopt(&name, &form, ret);
                    assert_eq!(format!("{got:?}"), format!("{want:?}"), "{name} {form}");
                    tried += 1;
                }
            }
        }
        assert!(tried > 2 * SETTINGS.len(), "only {tried} values tried");
    }

    #[test]
    fn an_unknown_option_gets_a_did_you_mean() {
        let e = row("TCP_TINYGRAM_DELAK")
            .expect("a tinygram name")
            .unwrap_err();
        assert!(e.contains("did you mean \"TCP_TINYGRAM_DELACK\"?"), "{e}");
        // Key names are upper-case, as every socket option is.
        assert!(row("TCP_TINYGRAM_delack")
            .expect("a tinygram name")
            .is_err());
        assert!(row("TCP_NODELAY").is_none());
        assert_eq!(keys("TCP_TINYGRAM_DELACK_TICK"), &["delack_tick"]);
        assert_eq!(
            keys("TCP_TINYGRAM_SYN_RETRIES"),
            &["syn_retries", "synack_retries"]
        );
        assert!(keys("SO_MARK").is_empty());
    }

    #[test]
    fn numbers_are_read_by_the_rows_kind() {
        let read = |key: &str, e: Expr| value_of(settings::find(key).unwrap(), &e);
        assert_eq!(
            read("delack", Expr::Int(200)),
            Ok(Value::Time(Duration::from_millis(200)))
        );
        let one = Expr::List(vec![Expr::Int(3)]);
        assert_eq!(read("initial_window", one), Ok(Value::Count(3)));
        assert_eq!(read("dsack", Expr::Int(1)), Ok(Value::Flag(true)));
        assert_eq!(read("adaptive_k", Expr::Int(2)), Ok(Value::Number(2.0)));
        assert!(read("ack_policy", Expr::Int(1))
            .unwrap_err()
            .contains("\"name\""));
        assert!(read("max_retries", Expr::Int(-1))
            .unwrap_err()
            .contains("negative"));
        assert!(read("delack", Expr::Str("200".into()))
            .unwrap_err()
            .contains("unit"));
        assert_eq!(
            read("delack_tick", Expr::Str("none".into())),
            Ok(Value::None)
        );
    }

    #[test]
    fn the_readme_table_is_the_settings_table() {
        let readme = include_str!("../../README.md");
        let (begin, end) = (
            "<!-- sockopt-table: begin -->\n",
            "<!-- sockopt-table: end -->",
        );
        let at = readme.find(begin).expect("the README marks the table") + begin.len();
        let len = readme[at..].find(end).expect("the table's end marker");
        let want = readme_table();
        if readme[at..at + len] != want {
            if std::env::var_os("TINYGRAM_BLESS").is_some() {
                let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
                let text = format!("{}{want}{}", &readme[..at], &readme[at + len..]);
                std::fs::write(path, text).expect("README written");
            }
            panic!(
                "crates/drill/README.md's TCP_TINYGRAM_* table differs from the settings table; \
                 rerun with TINYGRAM_BLESS=1 to rewrite it:\n{want}"
            );
        }
        // Every option name the README mentions is one setsockopt takes.
        for word in readme.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.starts_with(PREFIX) && word != PREFIX {
                assert!(matches!(row(word), Some(Ok(_))), "README names {word}");
            }
        }
    }

    #[test]
    fn delack_over_500ms_is_out_of_range() {
        let cfg = Config {
            delack: Duration::from_millis(600),
            ..Config::default()
        };
        let e = range_error(&cfg, "TCP_TINYGRAM_DELACK").expect("refused");
        assert!(e.to_string().contains("RFC 1122 4.2.3.2"), "{e}");
        let ok = Config {
            delack: Duration::from_millis(500),
            ..Config::default()
        };
        assert!(range_error(&ok, "TCP_TINYGRAM_DELACK").is_none());
    }

    #[test]
    fn a_pair_is_checked_at_the_setsockopt_that_breaks_it() {
        let secs = Duration::from_secs;
        // RTO_MIN above the socket's RTO_MAX (default 60 s): refused.
        let cfg = Config {
            rto_min: secs(90),
            ..Config::default()
        };
        let e = range_error(&cfg, "TCP_TINYGRAM_RTO_MIN").expect("refused");
        assert_eq!(e.to_string(), "rto_min: must not exceed rto_max");
        // The same RTO_MIN once RTO_MAX made room: accepted.
        let roomy = Config {
            rto_max: secs(120),
            ..cfg.clone()
        };
        assert!(range_error(&roomy, "TCP_TINYGRAM_RTO_MIN").is_none());
        // Lowering RTO_MAX under the socket's RTO_MIN: refused at RTO_MAX.
        let low_max = Config {
            rto_min: secs(2),
            rto_max: secs(1),
            ..Config::default()
        };
        assert!(range_error(&low_max, "TCP_TINYGRAM_RTO_MAX").is_some());
        assert!(range_error(&Config::default(), "TCP_TINYGRAM_RTO_MAX").is_none());
        // A zero RTO_MIN is refused on its own.
        let zero = Config {
            rto_min: Duration::ZERO,
            ..Config::default()
        };
        assert!(range_error(&zero, "TCP_TINYGRAM_RTO_MIN").is_some());
        // ADAPTIVE_MIN against ADAPTIVE_MAX, from either side.
        let ms = Duration::from_millis;
        let cfg = Config {
            adaptive_min: ms(300),
            adaptive_max: ms(200),
            ..Config::default()
        };
        let e = range_error(&cfg, "TCP_TINYGRAM_ADAPTIVE_MIN").expect("refused");
        assert_eq!(e.key, "adaptive_min");
        assert!(range_error(&cfg, "TCP_TINYGRAM_ADAPTIVE_MAX").is_some());
        // An unrelated bad field on the socket does not make this call fail.
        let other_bad = Config {
            rcv_buf: 0,
            rto_min: secs(1),
            ..Config::default()
        };
        assert!(range_error(&other_bad, "TCP_TINYGRAM_RTO_MIN").is_none());
    }
}
