//! Failures of the numbers-only exports (both faces): a failure is `-(1 + kind + ERROR_KINDS.len() · field)`
//! ([`crate::vocab::ERROR_KINDS`], [`crate::vocab::BOUNDARY_FIELDS`]), and [`error_detail`] gives its offending
//! value and the bound it broke; JS turns it into the typed `RangeError`/`TypeError` with `code` and `field`.

use core::cell::Cell;

use wasm_bindgen::prelude::wasm_bindgen;

use crate::input::{check_number, InputError, InputErrorKind};
use crate::vocab::ERROR_KINDS;
pub use crate::vocab::{ErrorField as Field, ErrorKind as FailKind};

thread_local! {
    static DETAIL: Cell<(f64, f64)> = const { Cell::new((0.0, 0.0)) };
}

/// A refused input: what, where, the value given and the bound it broke.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fail {
    pub(crate) kind: FailKind,
    pub(crate) field: u32,
    pub(crate) value: f64,
    pub(crate) bound: f64,
}

impl Fail {
    /// A failure with no bound.
    pub fn new(kind: FailKind, field: Field, value: f64) -> Fail {
        Fail { kind, field: field as u32, value, bound: 0.0 }
    }

    /// This failure with the bound it broke.
    pub fn bound(self, bound: f64) -> Fail {
        Fail { bound, ..self }
    }

    /// A number checked as a JS number ([`check_number`]), its failure named by `field`. Not inlined: every
    /// export checks numbers, and one copy of the check is smaller than one in each.
    #[inline(never)]
    pub fn number(field: Field, v: f64, min: u64, max: u64, integer: bool) -> Result<u64, Fail> {
        check_number("", v, min, max, integer).map_err(|e| Fail::from_input(&e, field as u32))
    }

    pub(crate) fn from_input(e: &InputError, field: u32) -> Fail {
        let (kind, value, bound) = match e.kind {
            InputErrorKind::NotFinite(v) => (FailKind::NotFinite, v, 0.0),
            InputErrorKind::Negative(v) => (FailKind::Negative, v, 0.0),
            InputErrorKind::NotInteger(v) => (FailKind::NotInteger, v, 0.0),
            InputErrorKind::TooSmall { value, min } => (FailKind::TooSmall, value, min),
            InputErrorKind::TooLarge { value, max } => (FailKind::TooLarge, value, max),
            _ => (FailKind::InvalidValue, f64::NAN, 0.0),
        };
        Fail { kind, field, value, bound }
    }

    pub(crate) fn encode(self) -> f64 {
        let _ = DETAIL.try_with(|d| d.set((self.value, self.bound)));
        let code = (self.kind as u32).saturating_add((ERROR_KINDS.len() as u32).saturating_mul(self.field));
        -1.0 - f64::from(code)
    }
}

pub(crate) fn run(f: impl FnOnce() -> Result<f64, Fail>) -> f64 {
    f().unwrap_or_else(Fail::encode)
}

/// The offending value (`0`) or the bound it broke (`1`) of the last failure.
#[wasm_bindgen(js_name = errorDetail)]
pub fn error_detail(which: f64) -> f64 {
    DETAIL.try_with(|d| if which == 0.0 { d.get().0 } else { d.get().1 }).unwrap_or(f64::NAN)
}
