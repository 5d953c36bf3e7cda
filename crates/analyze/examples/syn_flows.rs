//! Writes a pcap of N one-SYN flows, the capture `docs/diagnose.md`
//! measures `diagnose` on: `cargo run --release -p tinygram-analyze
//! --example syn_flows -- 3000000 flood.pcap`.

#[path = "../tests/support/syn_flows.rs"]
#[allow(dead_code)]
mod syn_flows;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), Some(path)) = (args.get(1).and_then(|n| n.parse().ok()), args.get(2)) else {
        eprintln!("usage: syn_flows N OUT.pcap (N one-SYN flows, 56 bytes of file each)");
        return std::process::ExitCode::from(2);
    };
    let written = std::fs::File::create(path)
        .and_then(|f| syn_flows::write_syn_flows(std::io::BufWriter::new(f), n));
    if let Err(e) = written {
        eprintln!("error: {path}: {e}");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
