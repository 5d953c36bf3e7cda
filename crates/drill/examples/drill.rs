//! Runs `tinygram drill` standalone: `cargo run -p tinygram-drill --example drill -- SCRIPT.pkt...`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tinygram_drill::run_cli(&args));
}
