//! The numbers of an attempt outcome that the core checks on the way in (the one protocol: `packed.rs`).

use super::error::range_error;
use super::JsResult;
use crate::retry::policy::{check_number, Num};

/// `outcome.code`: a safe integer.
pub fn jsonrpc_code(v: f64) -> JsResult<i64> {
    jsonrpc_code_of("outcome.code", v)
}

/// A JSON-RPC code in `field`: a safe integer.
pub fn jsonrpc_code_of(field: &str, v: f64) -> JsResult<i64> {
    if !v.is_finite() || v.fract() != 0.0 || v.abs() > 9_007_199_254_740_991.0 {
        return Err(range_error("not_integer", field, &format!("{field} must be a safe integer, got {}", Num(v))));
    }
    Ok(v as i64)
}

/// `outcome.status`: a three-digit HTTP status.
pub fn http_status(v: f64) -> JsResult<u16> {
    let status = check_number("outcome.status", v, 100, 999, true)?;
    Ok(u16::try_from(status).unwrap_or(999))
}
