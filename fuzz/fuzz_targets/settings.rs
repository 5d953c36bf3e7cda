#![no_main]
//! cargo-fuzz entry for tinygram_fuzz_targets::settings.
libfuzzer_sys::fuzz_target!(|data: &[u8]| tinygram_fuzz_targets::settings(data));
