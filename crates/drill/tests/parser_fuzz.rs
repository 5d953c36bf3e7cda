//! The parser and runner never panic, whatever the input.

use proptest::prelude::*;
use tinygram_drill::{parse_script, run_script, Settings};

/// Fragments of real script syntax, so random lines get deep into the parser.
const PIECES: &[&str] = &[
    "0",
    "+0",
    "+.1",
    "*",
    "~",
    "...",
    " ",
    "<",
    ">",
    "S",
    ".",
    "P",
    "F",
    "R",
    "-",
    "0:0(0)",
    "1:1001(1000)",
    "ack",
    "win",
    "1",
    "65535",
    "<mss 1460>",
    "<",
    ">",
    ",",
    "nop",
    "sack 1:2",
    "TS val 1 ecr 0",
    "wscale 7",
    "sackOK",
    "socket(..., SOCK_STREAM, IPPROTO_TCP) = 3",
    "listen(3, 1) = 0",
    "bind(3, ..., ...) = 0",
    "accept(3, ..., ...) = 4",
    "connect(3, ..., ...)",
    "= -1 EAGAIN (x)",
    "write(4, ..., 10) = 10",
    "read(4, ..., 10) = 10",
    "close(4) = 0",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "=",
    "|",
    "\"",
    "`",
    "%{",
    "}%",
    "//",
    "/*",
    "*/",
    "\n",
    "--tolerance_usecs=",
    "0x",
    "99999999999999999999",
    "setsockopt(3, IPPROTO_TCP, TCP_NODELAY, [1], 4) = 0",
];

fn script_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(PIECES).prop_map(str::to_string),
            "[ -~]{0,12}",
            any::<char>().prop_map(|c| c.to_string()),
        ],
        0..40,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parser_never_panics(text in script_text()) {
        let _ = parse_script(&text, "fuzz.pkt");
    }

    #[test]
    fn runner_never_panics(text in script_text()) {
        if let Ok(script) = parse_script(&text, "fuzz.pkt") {
            let _ = run_script(&script, &Settings::default());
        }
    }
}

#[test]
fn well_formed_prefix_with_random_tail_is_handled() {
    let base = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 bind(3, ..., ...) = 0\n+0 listen(3, 1) = 0\n";
    for tail in [
        "+0 < S 0:0(0) win 0 <mss 0>\n",
        "+0 < S. 4294967295:4294967295(0) ack 4294967295 win 1\n",
        "+0 > S. 0:0(0) ack 1 <...>\n+0 > S. 0:0(0) ack 1\n",
        "+0 read(3, ..., 10) = 0\n",
        "+0 accept(3, ..., ...) = -1 EAGAIN\n",
        "+0 write(7, ..., 10) = 10\n",
        "+1000000 < . 1:1(0) ack 1 win 1\n",
        "* > . 1:1(0) ack 1\n",
    ] {
        let text = format!("{base}{tail}");
        let script = parse_script(&text, "t.pkt").unwrap();
        let _ = run_script(&script, &Settings::default());
    }
}
