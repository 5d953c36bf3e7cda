//! tinygram-drill
