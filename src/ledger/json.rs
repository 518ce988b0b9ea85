//! A small JSON parser for fingerprints: text → [`Json`], with the limits a server needs (depth, size,
//! valid Unicode, no duplicate keys). Numbers keep their source text; [`canonical`](super::canonical) decides
//! how to write them.

use core::fmt;
use std::borrow::Cow;

/// The deepest nesting accepted. Deeper input is rejected (a recursive parser must not overflow the stack).
pub const MAX_DEPTH: usize = 256;

/// The longest JSON text accepted, and the longest canonical text written, in UTF-8 bytes (16 MiB; the
/// package exports it as `MAX_FINGERPRINT_BYTES`). Fingerprinting a text this long takes at most about
/// 100 MiB of wasm memory ([`super::canonical::stream`] builds no tree; the worst shape is an object with a
/// million keys); a parsed [`Json`] tree of it can take far more. Longer input is a [`JsonError::TooLarge`],
/// never a trap.
pub const MAX_TEXT_BYTES: usize = 16 * 1024 * 1024;

/// A parsed JSON value, borrowing from the source text where it can (numbers always; strings without
/// escapes). Object members keep their order of appearance; numbers keep their text.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as written in the source (grammar-checked).
    Number(&'a str),
    /// A string (decoded).
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Json<'a>>),
    /// An object's members, in source order.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// Why a text is not acceptable JSON for a fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonError {
    /// Not JSON at byte `at`.
    Syntax {
        /// Byte offset of the problem.
        at: usize,
    },
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A `\u` escape produced a lone surrogate (I-JSON requires valid Unicode).
    LoneSurrogate {
        /// Byte offset of the escape.
        at: usize,
    },
    /// An object has the same key twice.
    DuplicateKey(String),
    /// A number that is not finite once parsed (e.g. `1e400`).
    NumberOutOfRange(String),
    /// The text, or its canonical form, is longer than [`MAX_TEXT_BYTES`].
    TooLarge {
        /// How many bytes were seen when the limit was passed (at least `MAX_TEXT_BYTES + 1`).
        bytes: usize,
    },
}

impl JsonError {
    /// A stable snake_case code.
    pub const fn code(&self) -> &'static str {
        match self {
            JsonError::Syntax { .. } => "invalid_json",
            JsonError::TooDeep => "too_deep",
            JsonError::LoneSurrogate { .. } => "lone_surrogate",
            JsonError::DuplicateKey(_) => "duplicate_key",
            JsonError::NumberOutOfRange(_) => "number_out_of_range",
            JsonError::TooLarge { .. } => "too_large",
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Syntax { at } => write!(f, "not valid JSON at byte {at}"),
            JsonError::TooDeep => write!(f, "nested deeper than {MAX_DEPTH} levels"),
            JsonError::LoneSurrogate { at } => write!(f, "a lone UTF-16 surrogate at byte {at} (not valid Unicode)"),
            JsonError::DuplicateKey(k) => {
                write!(f, "the key {} appears twice in one object", crate::text::Quoted(k))
            }
            JsonError::NumberOutOfRange(n) => write!(f, "the number {n} is out of the range of a double"),
            JsonError::TooLarge { bytes } => {
                write!(f, "the JSON text is {bytes} bytes or more, longer than the limit of {MAX_TEXT_BYTES} bytes")
            }
        }
    }
}

impl std::error::Error for JsonError {}

/// Parses one JSON text (surrounding whitespace allowed).
pub fn parse(text: &str) -> Result<Json<'_>, JsonError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(JsonError::TooLarge { bytes: text.len() });
    }
    let mut p = Parser::new(text);
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(JsonError::Syntax { at: p.i });
    }
    Ok(v)
}

/// The tokenizer, shared with the streaming canonicalizer ([`super::canonical::stream`]).
pub(super) struct Parser<'a> {
    text: &'a str,
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Parser { text, s: text.as_bytes(), i: 0 }
    }

    /// The byte offset reached.
    pub(super) fn at(&self) -> usize {
        self.i
    }

    pub(super) fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    pub(super) fn bump(&mut self) {
        self.i = self.i.saturating_add(1);
    }

    pub(super) fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }

    pub(super) fn eat(&mut self, lit: &[u8]) -> Result<(), JsonError> {
        let end = self.i.saturating_add(lit.len());
        if self.s.get(self.i..end) == Some(lit) {
            self.i = end;
            Ok(())
        } else {
            Err(JsonError::Syntax { at: self.i })
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json<'a>, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        match self.peek() {
            Some(b'n') => self.eat(b"null").map(|()| Json::Null),
            Some(b't') => self.eat(b"true").map(|()| Json::Bool(true)),
            Some(b'f') => self.eat(b"false").map(|()| Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => {
                self.bump();
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.bump();
                    return Ok(Json::Array(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth.saturating_add(1))?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.bump(),
                        Some(b']') => {
                            self.bump();
                            return Ok(Json::Array(items));
                        }
                        _ => return Err(JsonError::Syntax { at: self.i }),
                    }
                }
            }
            Some(b'{') => {
                self.bump();
                let mut members: Vec<(Cow<'a, str>, Json<'a>)> = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.bump();
                    return Ok(Json::Object(members));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(JsonError::Syntax { at: self.i });
                    }
                    let key = self.string()?;
                    self.ws();
                    self.eat(b":")?;
                    self.ws();
                    let v = self.value(depth.saturating_add(1))?;
                    members.push((key, v));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.bump(),
                        Some(b'}') => {
                            self.bump();
                            return Ok(Json::Object(members));
                        }
                        _ => return Err(JsonError::Syntax { at: self.i }),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => self.number().map(Json::Number),
            _ => Err(JsonError::Syntax { at: self.i }),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.bump();
        }
        self.i.saturating_sub(start)
    }

    pub(super) fn number(&mut self) -> Result<&'a str, JsonError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        match self.peek() {
            Some(b'0') => self.bump(),
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(JsonError::Syntax { at: self.i }),
        }
        if self.peek() == Some(b'.') {
            self.bump();
            if self.digits() == 0 {
                return Err(JsonError::Syntax { at: self.i });
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            if self.digits() == 0 {
                return Err(JsonError::Syntax { at: self.i });
            }
        }
        // ASCII by construction, so the byte offsets are char boundaries.
        self.text.get(start..self.i).ok_or(JsonError::Syntax { at: start })
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = self.peek().and_then(|b| char::from(b).to_digit(16)).ok_or(JsonError::Syntax { at: self.i })?;
            v = (v << 4) | d;
            self.bump();
        }
        Ok(v)
    }

    pub(super) fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.bump(); // the opening quote
                     // The common case: no escapes, so the string is a slice of the source.
        let start = self.i;
        while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
            self.bump();
        }
        if self.peek() == Some(b'"') {
            let s = self.text.get(start..self.i).ok_or(JsonError::Syntax { at: start })?;
            self.bump();
            return Ok(Cow::Borrowed(s));
        }
        self.i = start;
        let mut out = String::new();
        loop {
            // Copy a run of plain bytes at once (the input is a &str: runs split at ASCII are valid UTF-8).
            let start = self.i;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.bump();
            }
            let run = self.s.get(start..self.i).ok_or(JsonError::Syntax { at: start })?;
            out.push_str(core::str::from_utf8(run).map_err(|_| JsonError::Syntax { at: start })?);
            match self.peek() {
                Some(b'"') => {
                    self.bump();
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    let at = self.i;
                    self.bump();
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.bump();
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if self.s.get(self.i..self.i.saturating_add(2)) != Some(b"\\u") {
                                    return Err(JsonError::LoneSurrogate { at });
                                }
                                self.i = self.i.saturating_add(2);
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(JsonError::LoneSurrogate { at });
                                }
                                ((hi.wrapping_sub(0xD800) << 10) | lo.wrapping_sub(0xDC00)).wrapping_add(0x10000)
                            // in range: < 0x110000
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(JsonError::LoneSurrogate { at });
                            } else {
                                hi
                            };
                            out.push(char::from_u32(code).ok_or(JsonError::LoneSurrogate { at })?);
                            continue;
                        }
                        _ => return Err(JsonError::Syntax { at: self.i }),
                    };
                    out.push(c);
                    self.bump();
                }
                // A raw control character or the end of input.
                _ => return Err(JsonError::Syntax { at: self.i }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(
            parse(" [1, -0.5e+3, \"a\\u00e9\\ud83d\\ude00\", null, {}] "),
            Ok(Json::Array(vec![
                Json::Number("1"),
                Json::Number("-0.5e+3"),
                Json::String("aé😀".into()),
                Json::Null,
                Json::Object(vec![]),
            ]))
        );
        for bad in [
            "",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "\"\\x\"",
            "\"a",
            "[1] 2",
            "{\"a\":1,}",
            "\"\u{1}\"",
            "nul",
            "1e",
        ] {
            assert!(matches!(parse(bad), Err(JsonError::Syntax { .. })), "{bad:?}");
        }
        assert!(matches!(parse("\"\\ud800\""), Err(JsonError::LoneSurrogate { .. })));
        assert!(matches!(parse("\"\\udc00x\""), Err(JsonError::LoneSurrogate { .. })));
        assert_eq!(parse(&"[".repeat(MAX_DEPTH + 2)), Err(JsonError::TooDeep));
        assert!(parse(&format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH))).is_ok());
    }
}
