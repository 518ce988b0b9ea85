//! The binding room: the only place that knows JavaScript. It has no policy of its own.
//!
//! Both faces speak numbers: the client's exports ([`client`]) and the server's rule exports ([`ledger`])
//! take and return `f64`s, return a failure as a code ([`fail`]) that JS turns into a typed error, and import
//! nothing, so no JS runs inside them: no exception can unwind through their frames and no call can re-enter.
//! The server's string exports (`fingerprintJson`, `fingerprintCanonical`, `isValidOperationId`) take a JS
//! value: they check that it is a string primitive and measure its length (neither can throw, neither runs a
//! caller's code) before copying it, so no input makes the module allocate more than a documented bound
//! ([`crate::ledger::MAX_TEXT_BYTES`]). Nothing here panics (the crate denies `unwrap`/`expect`/`panic`/indexing).
//! What is left out of reach — a stack overflow inside a call, a tampered realm — is backstopped in JS
//! (`pkg-template/guard.js` puts the shadow stack pointer back).

/// The npm build's allocator (feature `small-alloc`): lol_alloc's free list, in a fraction of dlmalloc's code. Its
/// lock is a flag (wasm32 without threads): taken and given back around each allocation, never contended.
#[cfg(feature = "small-alloc")]
#[global_allocator]
static ALLOCATOR: lol_alloc::LockedAllocator<lol_alloc::FreeListAllocator> =
    lol_alloc::LockedAllocator::new(lol_alloc::FreeListAllocator::new());

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod drive;
#[cfg(feature = "client")]
mod ends;
#[cfg(feature = "server")]
mod error;
#[cfg(any(feature = "client", feature = "server"))]
mod fail;
#[cfg(feature = "client")]
pub mod hedge;
#[cfg(feature = "server")]
mod hold;

#[cfg(any(feature = "client", feature = "server"))]
pub use fail::error_detail;
#[cfg(feature = "server")]
mod ledger;
#[cfg(any(feature = "client", feature = "server"))]
pub mod out;
#[cfg(feature = "client")]
mod packed;
#[cfg(feature = "client")]
mod policy;
#[cfg(feature = "client")]
mod shared;
#[cfg(feature = "client")]
mod slab;
#[cfg(feature = "server")]
mod strings;
#[cfg(feature = "server")]
mod write;

#[cfg(feature = "server")]
pub use hold::{ledger_hold, ledger_hold_slots, ledger_hold_start};
#[cfg(feature = "server")]
pub use ledger::{
    ledger_admit, ledger_claim, ledger_config, ledger_default, ledger_finish, ledger_give_up_at, ledger_keep_alive,
    ledger_look, ledger_lookup, ledger_release, ledger_renew,
};
#[cfg(feature = "server")]
pub use strings::{fingerprint_canonical, fingerprint_json, is_valid_operation_id, max_fingerprint_bytes};
#[cfg(feature = "server")]
pub use write::{ledger_write, ledger_write_start};

/// The result of an exported function: a JS error value on failure.
#[cfg(feature = "server")]
type JsResult<T> = Result<T, wasm_bindgen::JsValue>;
