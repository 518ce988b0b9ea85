//! Randomness, drawn only inside calls: Cloudflare Workers refuse it at module load.

use super::error::plain_error;
use super::JsResult;
use crate::retry::operation_id::uuid_v4;

fn fill(buf: &mut [u8]) -> JsResult<()> {
    getrandom::fill(buf).map_err(|e| {
        plain_error(
            "no_randomness",
            "",
            &format!("no secure randomness available here ({e}); in Workers draw it inside a request handler"),
        )
    })
}

/// 64 random bits, to seed the jitter generator.
pub fn seed() -> JsResult<u64> {
    let mut b = [0u8; 8];
    fill(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// A fresh UUID v4 operation id.
pub fn operation_id() -> JsResult<String> {
    let mut b = [0u8; 16];
    fill(&mut b)?;
    Ok(uuid_v4(b))
}
