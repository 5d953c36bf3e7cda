#![no_main]
//! cargo-fuzz entry for tinygram_fuzz_targets::infer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| tinygram_fuzz_targets::infer(data));
