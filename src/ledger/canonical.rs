//! RFC 8785 JSON Canonicalization Scheme (JCS): one byte sequence per JSON value, so that the same input
//! always has the same fingerprint whatever its key order or whitespace.
//!
//! - Object members are sorted by their keys' UTF-16 code units (§3.2.3); a duplicate key is an error.
//! - Strings are written as ECMAScript's `JSON.stringify` writes them (§3.2.2.2): `"` and `\` escaped,
//!   `\b \t \n \f \r`, other controls as `\u00xx` (lower-case hex), everything else as is (UTF-8).
//! - Numbers are written as ECMAScript's `Number.prototype.toString` writes them (§3.2.2.3). How is a
//!   [`NumberFormat`]: [`EsNumbers`] does it in Rust; [`Verbatim`] keeps the source text, for text that an
//!   ECMAScript engine's `JSON.stringify` produced (which writes numbers by that very algorithm).

use core::cmp::Ordering;
use std::borrow::Cow;

use super::json::{Json, JsonError, Parser, MAX_DEPTH, MAX_TEXT_BYTES};

/// Where canonical output goes (a `String`, a hasher).
pub trait Sink {
    /// Appends text.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// How numbers are written.
pub trait NumberFormat {
    /// Writes the number whose JSON source text is `text`.
    fn write(&self, text: &str, out: &mut dyn Sink) -> Result<(), JsonError>;
}

/// Keeps numbers as written: correct for the output of an ECMAScript `JSON.stringify` (the reference
/// algorithm of RFC 8785), and the cheap choice in wasm, where JS serializes the value first.
#[derive(Clone, Copy, Debug, Default)]
pub struct Verbatim;

impl NumberFormat for Verbatim {
    fn write(&self, text: &str, out: &mut dyn Sink) -> Result<(), JsonError> {
        out.put(text);
        Ok(())
    }
}

/// Parses each number to an IEEE 754 double and writes it as ECMAScript does: shortest round-trip digits,
/// plain notation for exponents in [-7, 21), `e+`/`e-` otherwise, `-0` as `0`.
#[derive(Clone, Copy, Debug, Default)]
pub struct EsNumbers;

impl NumberFormat for EsNumbers {
    fn write(&self, text: &str, out: &mut dyn Sink) -> Result<(), JsonError> {
        let v: f64 = text.parse().map_err(|_| JsonError::NumberOutOfRange(text.to_owned()))?;
        if !v.is_finite() {
            return Err(JsonError::NumberOutOfRange(text.to_owned()));
        }
        out.put(&es_number(v));
        Ok(())
    }
}

/// ECMAScript `Number.prototype.toString()` of a finite double.
pub fn es_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest digit count that round-trips, e.g. "1.2345e-7". ECMAScript also
    // wants, among the candidates of that length, the one closest to v (RFC 8785 B: 1424953923781206.2):
    // that is v correctly rounded to that many digits, whenever it still round-trips.
    let shortest = format!("{:e}", v.abs());
    let k = shortest.split_once('e').map_or(0, |(m, _)| m.chars().filter(char::is_ascii_digit).count());
    let closest = format!("{:.*e}", k.saturating_sub(1), v.abs());
    let sci = if closest.parse::<f64>().ok() == Some(v.abs()) { closest } else { shortest };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let e: i64 = exp.parse().unwrap_or(0);
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let n = e.saturating_add(1); // the decimal point sits after n digits
    let mut s = String::new();
    if v < 0.0 {
        s.push('-');
    }
    let zeros = |count: i64| "0".repeat(usize::try_from(count).unwrap_or(0));
    if k <= n && n <= 21 {
        s.push_str(&digits);
        s.push_str(&zeros(n.saturating_sub(k)));
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(usize::try_from(n).unwrap_or(0).min(digits.len()));
        s.push_str(int);
        s.push('.');
        s.push_str(frac);
    } else if -6 < n && n <= 0 {
        s.push_str("0.");
        s.push_str(&zeros(n.saturating_neg()));
        s.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        s.push_str(first);
        if !rest.is_empty() {
            s.push('.');
            s.push_str(rest);
        }
        let e = n.saturating_sub(1);
        s.push_str(if e < 0 { "e-" } else { "e+" });
        s.push_str(&e.unsigned_abs().to_string());
    }
    s
}

/// Compares two strings by their UTF-16 code units (not by code points: they differ above U+FFFF).
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn write_string(s: &str, out: &mut dyn Sink) {
    out.put("\"");
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{8}' => "\\b",
            '\t' => "\\t",
            '\n' => "\\n",
            '\u{c}' => "\\f",
            '\r' => "\\r",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.put(s.get(start..i).unwrap_or(""));
        if esc.is_empty() {
            const HEX: [&str; 16] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f"];
            let n = c as usize;
            out.put("\\u00");
            out.put(HEX.get(n >> 4).copied().unwrap_or("0"));
            out.put(HEX.get(n & 0xf).copied().unwrap_or("0"));
        } else {
            out.put(esc);
        }
        start = i.saturating_add(c.len_utf8());
    }
    out.put(s.get(start..).unwrap_or(""));
    out.put("\"");
}

/// Writes `value` canonically into `out`.
pub fn write(value: &Json<'_>, numbers: &dyn NumberFormat, out: &mut dyn Sink) -> Result<(), JsonError> {
    match value {
        Json::Null => out.put("null"),
        Json::Bool(true) => out.put("true"),
        Json::Bool(false) => out.put("false"),
        Json::Number(text) => numbers.write(text, out)?,
        Json::String(s) => write_string(s, out),
        Json::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write(item, numbers, out)?;
            }
            out.put("]");
        }
        Json::Object(members) => {
            let mut sorted: Vec<_> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| utf16_cmp(&a.0, &b.0));
            if let Some(w) = sorted.windows(2).find(|w| matches!(w, [a, b] if a.0 == b.0)) {
                return Err(JsonError::DuplicateKey(w.first().map(|m| m.0.to_string()).unwrap_or_default()));
            }
            out.put("{");
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_string(k, out);
                out.put(":");
                write(v, numbers, out)?;
            }
            out.put("}");
        }
    }
    Ok(())
}

/// Counts what passes through to a sink, and stops passing it on past [`MAX_TEXT_BYTES`] (numbers written
/// by ECMAScript's rules may be longer than in the source: `1e20` is 21 digits).
pub struct Bounded<'s> {
    sink: &'s mut dyn Sink,
    bytes: usize,
}

impl<'s> Bounded<'s> {
    /// Wraps `sink`.
    pub fn new(sink: &'s mut dyn Sink) -> Self {
        Bounded { sink, bytes: 0 }
    }

    /// `Err(TooLarge)` if more than [`MAX_TEXT_BYTES`] were written.
    pub fn check(&self) -> Result<(), JsonError> {
        if self.bytes > MAX_TEXT_BYTES {
            Err(JsonError::TooLarge { bytes: self.bytes })
        } else {
            Ok(())
        }
    }
}

impl Sink for Bounded<'_> {
    fn put(&mut self, s: &str) {
        self.bytes = self.bytes.saturating_add(s.len());
        if self.bytes <= MAX_TEXT_BYTES {
            self.sink.put(s);
        }
    }
}

/// Writes `value` canonically into `out`, or `Err(TooLarge)` if the canonical text would be longer than
/// [`MAX_TEXT_BYTES`] (then `out` holds a prefix of it).
pub fn write_bounded(value: &Json<'_>, numbers: &dyn NumberFormat, out: &mut dyn Sink) -> Result<(), JsonError> {
    let mut bounded = Bounded::new(out);
    write(value, numbers, &mut bounded)?;
    bounded.check()
}

/// Parses `text` and writes its canonical form into `out` in one pass, without building a tree: scalars and
/// arrays go straight through; an object's members are written into a buffer of the object's own, then
/// emitted in key order. So the memory a text costs is about twice its length (plus 20 bytes per object
/// member), where a tree cost up to 16 times (an array of small numbers: 274 MiB for 16 MiB of text in wasm).
///
/// Errors: those of [`super::json::parse`] (syntax, depth, lone surrogates, size) take precedence; then the
/// first duplicate key or out-of-range number met; then [`JsonError::TooLarge`] if the canonical text is
/// longer than [`MAX_TEXT_BYTES`] (`out` then holds a prefix of it).
pub fn stream(text: &str, numbers: &dyn NumberFormat, out: &mut dyn Sink) -> Result<(), JsonError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(JsonError::TooLarge { bytes: text.len() });
    }
    let mut p = Parser::new(text);
    let mut st = Stream { numbers, deferred: None };
    let mut bounded = Bounded::new(out);
    p.ws();
    st.value(&mut p, 0, &mut bounded)?;
    p.ws();
    if !p.at_end() {
        return Err(JsonError::Syntax { at: p.at() });
    }
    if let Some(e) = st.deferred {
        return Err(e);
    }
    bounded.check()
}

struct Stream<'n> {
    numbers: &'n dyn NumberFormat,
    /// The first duplicate key or bad number: reported at the end, unless the text is not JSON at all.
    deferred: Option<JsonError>,
}

impl Stream<'_> {
    fn defer(&mut self, e: JsonError) {
        if self.deferred.is_none() {
            self.deferred = Some(e);
        }
    }

    fn value(&mut self, p: &mut Parser<'_>, depth: usize, out: &mut dyn Sink) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        match p.peek() {
            Some(b'n') => p.eat(b"null").map(|()| out.put("null")),
            Some(b't') => p.eat(b"true").map(|()| out.put("true")),
            Some(b'f') => p.eat(b"false").map(|()| out.put("false")),
            Some(b'"') => p.string().map(|s| write_string(&s, out)),
            Some(b'-' | b'0'..=b'9') => {
                let text = p.number()?;
                if let Err(e) = self.numbers.write(text, out) {
                    self.defer(e);
                }
                Ok(())
            }
            Some(b'[') => {
                p.bump();
                out.put("[");
                p.ws();
                if p.peek() == Some(b']') {
                    p.bump();
                    out.put("]");
                    return Ok(());
                }
                let mut first = true;
                loop {
                    p.ws();
                    if !first {
                        out.put(",");
                    }
                    first = false;
                    self.value(p, depth.saturating_add(1), out)?;
                    p.ws();
                    match p.peek() {
                        Some(b',') => p.bump(),
                        Some(b']') => {
                            p.bump();
                            out.put("]");
                            return Ok(());
                        }
                        _ => return Err(JsonError::Syntax { at: p.at() }),
                    }
                }
            }
            Some(b'{') => self.object(p, depth, out),
            _ => Err(JsonError::Syntax { at: p.at() }),
        }
    }

    fn object<'a>(&mut self, p: &mut Parser<'a>, depth: usize, out: &mut dyn Sink) -> Result<(), JsonError> {
        p.bump();
        p.ws();
        if p.peek() == Some(b'}') {
            p.bump();
            out.put("{}");
            return Ok(());
        }
        let mut buf = String::new();
        let mut members: Vec<(Cow<'a, str>, usize, usize)> = Vec::new();
        loop {
            p.ws();
            if p.peek() != Some(b'"') {
                return Err(JsonError::Syntax { at: p.at() });
            }
            let key = p.string()?;
            p.ws();
            p.eat(b":")?;
            p.ws();
            let start = buf.len();
            self.value(p, depth.saturating_add(1), &mut buf)?;
            if buf.len() > MAX_TEXT_BYTES {
                return Err(JsonError::TooLarge { bytes: buf.len() });
            }
            members.push((key, start, buf.len()));
            p.ws();
            match p.peek() {
                Some(b',') => p.bump(),
                Some(b'}') => {
                    p.bump();
                    break;
                }
                _ => return Err(JsonError::Syntax { at: p.at() }),
            }
        }
        members.sort_unstable_by(|a, b| utf16_cmp(&a.0, &b.0));
        if let Some(w) = members.windows(2).find(|w| matches!(w, [a, b] if a.0 == b.0)) {
            self.defer(JsonError::DuplicateKey(w.first().map(|m| m.0.to_string()).unwrap_or_default()));
        }
        out.put("{");
        for (i, (key, start, end)) in members.iter().enumerate() {
            if i > 0 {
                out.put(",");
            }
            write_string(key, out);
            out.put(":");
            out.put(buf.get(*start..*end).unwrap_or(""));
        }
        out.put("}");
        Ok(())
    }
}

/// The canonical text of a JSON text, numbers written by ECMAScript's rules.
pub fn canonicalize(text: &str) -> Result<String, JsonError> {
    let mut out = String::with_capacity(text.len());
    stream(text, &EsNumbers, &mut out)?;
    Ok(out)
}
