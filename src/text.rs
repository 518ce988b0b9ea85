//! Printing helpers both cores and both bindings share (no decisions, no JS names).

use core::fmt;

/// Displays a string in double quotes without core's `Debug` escaping (which brings Unicode tables).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars().take(64) {
            if c.is_control() {
                f.write_str("?")?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        f.write_str(if self.0.chars().nth(64).is_some() { "…\"" } else { "\"" })
    }
}
