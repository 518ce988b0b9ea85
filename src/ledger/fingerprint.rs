//! Input fingerprints: SHA-256 over the RFC 8785 canonical form, as lower-case hex. Same input in any key
//! order or spacing → the same fingerprint; any change of a value → another.

use sha2::{Digest, Sha256};

use super::canonical::{self, EsNumbers, NumberFormat, Sink, Verbatim};
use super::json::{JsonError, MAX_TEXT_BYTES};

/// Feeds the hasher in blocks: the canonical writer emits many tiny pieces, and each `update` has a cost.
struct Hasher {
    sha: Sha256,
    buf: Vec<u8>,
}

const BLOCK: usize = 16 * 1024;

impl Sink for Hasher {
    fn put(&mut self, s: &str) {
        if self.buf.len().saturating_add(s.len()) > BLOCK {
            self.sha.update(&self.buf);
            self.buf.clear();
        }
        if s.len() > BLOCK {
            self.sha.update(s.as_bytes());
        } else {
            self.buf.extend_from_slice(s.as_bytes());
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len().saturating_mul(2));
    for b in bytes {
        for nibble in [b >> 4, b & 0x0f] {
            s.push(char::from(HEX.get(usize::from(nibble)).copied().unwrap_or(b'0')));
        }
    }
    s
}

fn fingerprint_with(text: &str, numbers: &dyn NumberFormat) -> Result<String, JsonError> {
    let mut h = Hasher { sha: Sha256::new(), buf: Vec::with_capacity(BLOCK) };
    canonical::stream(text, numbers, &mut h)?; // no tree: about twice the text's length at most
    h.sha.update(&h.buf);
    Ok(hex(&h.sha.finalize()))
}

/// The fingerprint of any JSON text: canonicalized by RFC 8785 (numbers re-written by ECMAScript's rules),
/// then SHA-256, hex.
pub fn fingerprint(text: &str) -> Result<String, JsonError> {
    fingerprint_with(text, &EsNumbers)
}

/// The fingerprint of the output of an ECMAScript `JSON.stringify`: its numbers are already in canonical
/// form, so they are kept as written (this is what the wasm binding uses).
pub fn fingerprint_of_js_json(text: &str) -> Result<String, JsonError> {
    fingerprint_with(text, &Verbatim)
}

/// The fingerprint of a text that is already canonical (RFC 8785), as the package's JS writer produces it:
/// SHA-256 of its UTF-8 bytes, hex. Nothing is parsed or checked but the size: `Err(TooLarge)` past
/// [`MAX_TEXT_BYTES`].
pub fn fingerprint_of_canonical(text: &str) -> Result<String, JsonError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(JsonError::TooLarge { bytes: text.len() });
    }
    Ok(sha256_hex(text.as_bytes()))
}

/// SHA-256 of bytes, hex (for tests and for callers that canonicalize elsewhere).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}
