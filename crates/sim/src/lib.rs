//! tinygram-sim
