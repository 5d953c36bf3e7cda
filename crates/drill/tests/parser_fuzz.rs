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

/// One well-formed event line with random numbers, so the runner and engine get exercised.
fn event_line() -> impl Strategy<Value = String> {
    let time = prop_oneof![
        Just("+0".to_string()),
        (0u32..3000).prop_map(|ms| format!("+{}.{:03}", ms / 1000, ms % 1000)),
        Just("*".to_string()),
        (0u32..2000, 0u32..500).prop_map(|(a, b)| format!(
            "+{}.{:03}~+{}.{:03}",
            a / 1000,
            a % 1000,
            (a + b) / 1000,
            (a + b) % 1000
        )),
    ];
    let flags = prop::sample::select(vec!["S", "S.", ".", "P.", "F.", "R", "R.", "-", "FP."]);
    let num = prop_oneof![0u32..5000, any::<u32>()];
    let opts = prop::sample::select(vec![
        "",
        " <mss 1000>",
        " <mss 0>",
        " <...>",
        " <nop,wscale 14>",
        " <sackOK,sack 1:100>",
        " <TS val 5 ecr 0>",
    ]);
    let packet = (
        prop::sample::select(vec!["<", ">"]),
        flags,
        num.clone(),
        0u32..3000,
        num.clone(),
        any::<u16>(),
        opts,
    )
        .prop_map(|(d, f, seq, len, ack, win, o)| {
            let ack = if f.contains('.') {
                format!(" ack {ack}")
            } else {
                String::new()
            };
            format!(
                "{d} {f} {seq}:{}({len}){ack} win {win}{o}",
                seq.wrapping_add(len)
            )
        });
    let call = prop::sample::select(vec![
        "socket(..., SOCK_STREAM, IPPROTO_TCP) = 3",
        "bind(3, ..., ...) = 0",
        "listen(3, 1) = 0",
        "accept(3, ..., ...) = 4",
        "fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0",
        "connect(3, ..., ...) = -1 EINPROGRESS",
        "write(4, ..., 3000) = 3000",
        "write(3, ..., 100) = 100",
        "read(4, ..., 1000) = 0",
        "close(4) = 0",
        "close(3) = 0",
        "shutdown(4, SHUT_WR) = 0",
        "send(4, ..., 10, MSG_MORE) = 10",
        "getsockopt(4, SOL_SOCKET, SO_ERROR, [0], [4]) = 0",
        "setsockopt(3, IPPROTO_TCP, TCP_TINYGRAM_ACK_POLICY, \"immediate\", 9) = 0",
    ])
    .prop_map(str::to_string);
    let call_time = prop_oneof![
        Just("+0".to_string()),
        (0u32..3000).prop_map(|ms| format!("+{}.{:03}", ms / 1000, ms % 1000))
    ];
    prop_oneof![
        (time, packet).prop_map(|(t, e)| format!("{t} {e}")),
        (call_time, call).prop_map(|(t, e)| format!("{t} {e}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn runner_never_panics_on_well_formed_scripts(lines in prop::collection::vec(event_line(), 0..25)) {
        let text = format!("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n{}\n", lines.join("\n"));
        let script = parse_script(&text, "gen.pkt").unwrap();
        let _ = run_script(&script, &Settings::default());
    }
}
