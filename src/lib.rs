//! # mcp-retry-policy
//!
//! Safe retries for MCP `tools/call`. An agent calls `create_ticket`, the ticketing API succeeds, the
//! connection drops before the result arrives: should the client call again? This crate answers that
//! question the same way in a browser, in Node and in a Cloudflare Worker.
//!
//! The crate is a **pure, deterministic core** ([`retry`], [`ledger`]) and two faces over it: the wasm binding
//! (`src/wasm`, compiled only for `wasm32`, behind the npm package) and, with the `rmcp` feature on native
//! targets, `mcp_retry_policy::rmcp` — a retrying wrapper for [rmcp](https://docs.rs/rmcp) clients and an
//! operation ledger for rmcp servers (the book's guide: `docs/src/rust.md`, "From Rust"). The core never reads a clock, never draws
//! randomness, never does I/O and never panics: time (`now_ms`) and random bits are arguments, and every bad
//! input is a typed error.
//!
//! ```
//! use mcp_retry_policy::retry::{
//!     AttemptOutcome, Decision, Engine, FinalStatus, Policy, Reason, Revision, Safety, Sent,
//! };
//!
//! let mut engine = Engine::new(Policy::default());
//! let now = 1_000;
//! let mut call = engine.begin(now);
//! assert!(engine.admit(&mut call, now).is_ok(), "the breaker is closed");
//!
//! // The connection dropped after the request went out: the write may or may not have happened.
//! let lost = AttemptOutcome::Network { sent: Sent::Maybe };
//! let step = engine.record(&mut call, &lost, Safety::Unsafe, Revision::LATEST, now + 50, 7);
//! assert_eq!(step.decision, Decision::stop(FinalStatus::Unknown, Reason::UnsafeAfterUnknown));
//!
//! // The same failure on a read-only tool is retried after a jittered backoff.
//! let mut call = engine.begin(now);
//! assert!(engine.admit(&mut call, now).is_ok());
//! let step = engine.record(&mut call, &lost, Safety::ReadOnly, Revision::LATEST, now + 50, 7);
//! assert!(step.decision.is_retry());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod input;
pub mod ledger;
pub mod retry;
pub mod seam;
pub mod telemetry_names;
pub mod text;
pub mod vocab;

#[cfg(all(feature = "rmcp", not(target_arch = "wasm32")))]
pub mod rmcp;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

/// The book's Rust guide (`docs/src/rust.md`, "From Rust"), included here so that `cargo test --doc --features
/// rmcp,sqlite,postgres` compiles every ```` ```rust ```` block of the page, and runs each that needs no live
/// remote server.
#[cfg(all(doctest, feature = "rmcp", feature = "sqlite", feature = "postgres", not(target_arch = "wasm32")))]
#[doc = include_str!("../docs/src/rust.md")]
pub struct RustGuide;
