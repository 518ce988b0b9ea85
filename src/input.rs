//! Values as a JavaScript caller sends them, for both faces' bindings: a number (an `f64`) checked and turned
//! into an integer, and the error that names the field by its JS name and prints numbers as JavaScript would.
//! Neutral ground: the client binding (`src/wasm/client.rs`) and the server binding (`src/wasm/ledger.rs`)
//! both use it, so neither face imports the other; the cores take typed Rust values
//! ([`crate::retry::Policy::new`]) and never see an `f64` option. Pure and native, so it is tested natively.

use core::fmt;

pub use crate::text::Quoted;

pub use crate::retry::MAX_DURATION_MS;

/// What is wrong with a value a caller sent.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputErrorKind {
    /// NaN or ±∞.
    NotFinite(f64),
    /// Below zero.
    Negative(f64),
    /// A count with a fraction.
    NotInteger(f64),
    /// Below the smallest accepted value.
    TooSmall {
        /// The value given.
        value: f64,
        /// The smallest accepted.
        min: f64,
    },
    /// Past the largest accepted value.
    TooLarge {
        /// The value given.
        value: f64,
        /// The largest accepted.
        max: f64,
    },
    /// A string that is none of the accepted names.
    InvalidValue {
        /// The value given.
        value: String,
        /// The accepted names.
        expected: &'static str,
    },
    /// A value of the wrong JS type (reported by the binding).
    WrongType {
        /// What was expected.
        expected: &'static str,
        /// What was given (`typeof`, or `null`).
        got: String,
    },
    /// A field this version does not know (a typo would otherwise be silently ignored).
    UnknownField,
}

/// An invalid input: which field (its dotted JS name, e.g. `budget.capacity`) and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct InputError {
    /// The option's JS name, dotted for nested options.
    pub field: String,
    /// What is wrong.
    pub kind: InputErrorKind,
}

impl InputError {
    /// A stable snake_case code for the kind of error.
    pub const fn code(&self) -> &'static str {
        match self.kind {
            InputErrorKind::NotFinite(_) => "not_finite",
            InputErrorKind::Negative(_) => "negative",
            InputErrorKind::NotInteger(_) => "not_integer",
            InputErrorKind::TooSmall { .. } => "too_small",
            InputErrorKind::TooLarge { .. } => "too_large",
            InputErrorKind::InvalidValue { .. } => "invalid_value",
            InputErrorKind::WrongType { .. } => "invalid_type",
            InputErrorKind::UnknownField => "unknown_option",
        }
    }

    /// Whether JS should see a `TypeError` (wrong kind of value) rather than a `RangeError` (a value out
    /// of range).
    pub const fn is_type_error(&self) -> bool {
        matches!(self.kind, InputErrorKind::WrongType { .. } | InputErrorKind::UnknownField)
    }
}

/// Displays an `f64` the way JavaScript would name it (`NaN`, `Infinity`, `2.5`, `1e+300`-ish), without
/// core's float formatter: that one costs about 20 KB of wasm, a fifth of the module.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v.is_nan() {
            return f.write_str("NaN");
        }
        if v.is_infinite() {
            return f.write_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
        }
        let sign = if v < 0.0 { "-" } else { "" };
        let a = v.abs();
        if a >= 1e15 {
            // Scientific, three decimals: divide down without libm.
            let (mut m, mut e) = (a, 0u32);
            while m >= 10.0 {
                m /= 10.0;
                e = e.saturating_add(1);
            }
            let milli = (m * 1000.0).round() as u64;
            return write!(f, "{sign}{}.{:03}e+{e}", milli / 1000, milli % 1000);
        }
        let whole = a.trunc() as u64;
        let micro = ((a - a.trunc()) * 1e6).round() as u64;
        let (whole, micro) = if micro >= 1_000_000 { (whole.saturating_add(1), 0) } else { (whole, micro) };
        if micro == 0 {
            return write!(f, "{sign}{whole}");
        }
        let mut digits = micro;
        let mut width = 6usize;
        while digits % 10 == 0 {
            digits /= 10;
            width = width.saturating_sub(1);
        }
        write!(f, "{sign}{whole}.{digits:0width$}")
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = &self.field;
        match &self.kind {
            InputErrorKind::NotFinite(v) => write!(f, "{field} must be a finite number, got {}", Num(*v)),
            InputErrorKind::Negative(v) => write!(f, "{field} must not be negative, got {}", Num(*v)),
            InputErrorKind::NotInteger(v) => write!(f, "{field} must be a whole number, got {}", Num(*v)),
            InputErrorKind::TooSmall { value, min } => {
                write!(f, "{field} must be at least {}, got {}", Num(*min), Num(*value))
            }
            InputErrorKind::TooLarge { value, max } => {
                write!(f, "{field} must be at most {}, got {}", Num(*max), Num(*value))
            }
            InputErrorKind::InvalidValue { value, expected } => {
                write!(f, "{field} must be one of {expected}, got {}", Quoted(value))
            }
            InputErrorKind::WrongType { expected, got } => write!(f, "{field} must be {expected}, got {got}"),
            InputErrorKind::UnknownField => write!(f, "{field} is not a known option"),
        }
    }
}

impl std::error::Error for InputError {}

/// Checks a raw number: finite, not negative, within `[min, max]`, and whole when `integer`.
/// Returns it rounded to an integer (durations are whole milliseconds; fractions of a ms are dropped).
pub fn check_number(field: &str, value: f64, min: u64, max: u64, integer: bool) -> Result<u64, InputError> {
    let err = |kind| Err(InputError { field: field.to_owned(), kind });
    if !value.is_finite() {
        return err(InputErrorKind::NotFinite(value));
    }
    if value < 0.0 {
        return err(InputErrorKind::Negative(value));
    }
    if integer && value.fract() != 0.0 {
        return err(InputErrorKind::NotInteger(value));
    }
    // Compare in f64 before converting, so that huge values are named, not saturated.
    if value > max as f64 {
        return err(InputErrorKind::TooLarge { value, max: max as f64 });
    }
    if value < min as f64 {
        return err(InputErrorKind::TooSmall { value, min: min as f64 });
    }
    // In range [0, max ≤ 2^53]: the cast is exact for integers and truncates fractions.
    Ok(value as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_display_like_javascript() {
        let cases = [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (-1.0, "-1"),
            (2.5, "2.5"),
            (0.001, "0.001"),
            (1.9999999, "2"),
            (123456.25, "123456.25"),
            (1e300, "1.000e+300"),
            (-2.5e20, "-2.500e+20"),
            (f64::MAX, "1.798e+308"),
        ];
        for (v, want) in cases {
            assert_eq!(Num(v).to_string(), want, "{v}");
        }
        assert_eq!(Quoted("fast").to_string(), "\"fast\"");
        assert_eq!(Quoted("a\nb").to_string(), "\"a?b\"");
        assert_eq!(Quoted(&"x".repeat(100)).to_string().chars().count(), 67);
    }

    #[test]
    fn messages_read_well() {
        let e = InputError { field: "maxAttempts".into(), kind: InputErrorKind::NotFinite(f64::NAN) };
        assert_eq!(e.to_string(), "maxAttempts must be a finite number, got NaN");
        assert!(!e.is_type_error());
    }

    #[test]
    fn numbers_are_checked_in_order() {
        let code = |v: f64, integer: bool| check_number("f", v, 1, 10, integer).map_err(|e| e.code());
        assert_eq!(code(f64::NAN, false), Err("not_finite"));
        assert_eq!(code(-1.0, false), Err("negative"));
        assert_eq!(code(1.5, true), Err("not_integer"));
        assert_eq!(code(1e300, false), Err("too_large"));
        assert_eq!(code(0.5, false), Err("too_small"));
        assert_eq!(code(7.9, false), Ok(7));
    }
}
