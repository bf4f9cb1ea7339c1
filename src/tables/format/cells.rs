//! Cell types of the typed rows. Each knows its CSV text and its Markdown/LaTeX cell:
//!
//! | type | CSV | Markdown / LaTeX |
//! |---|---|---|
//! | [`Num`] | 6 decimals, empty for NaN | 3 decimals, `NA` |
//! | [`Pct`] (a fraction) | 6 decimals, empty for NaN | percentage, 1 decimal, `NA` |
//! | [`Ci`] | `[lo, hi]` with 6 decimals, empty when either is NaN | `[lo, hi]` with 3 decimals, `NA` |
//! | [`PyBool`] | `True` / `False` (pandas style) | `True` / `False` |
//!
//! Text (`String`, `&str`) and counts (`usize`, `u64`) are plain serde values; `Option::None` is
//! an empty CSV field and `NA` in Markdown/LaTeX. No value that rounds to zero prints a sign.
//!
//! A CSV writer is a human-readable serializer: it gets the CSV text. The cell collector of
//! [`super::rows`] is not: it gets a marker newtype struct around the raw value, so the
//! Markdown/LaTeX view formats the exact number (not the CSV's rounded text).

use serde::{Serialize, Serializer};

use super::fmt_float;

/// Marker names of the raw (non-human-readable) form, read by [`super::rows`].
pub(super) const NUM: &str = "hyst_tui::tables::Num";
pub(super) const PCT: &str = "hyst_tui::tables::Pct";
pub(super) const CI: &str = "hyst_tui::tables::Ci";
pub(super) const BOOL: &str = "hyst_tui::tables::PyBool";

/// A number (probability, gap, rate as a fraction, …).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Num(pub(crate) f64);

/// A fraction shown as a percentage in Markdown/LaTeX (the CSV keeps the fraction).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Pct(pub(crate) f64);

/// A 95% interval `[lo, hi]`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Ci(pub(crate) f64, pub(crate) f64);

/// A boolean written the pandas way (`True` / `False`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct PyBool(pub(crate) bool);

impl From<(f64, f64)> for Ci {
    fn from((lo, hi): (f64, f64)) -> Ci {
        Ci(lo, hi)
    }
}

/// CSV text of a float: 6 decimals, empty for NaN.
fn csv_float(v: f64) -> String {
    fmt_float(v, 6).unwrap_or_default()
}

/// CSV text of an interval: `[lo, hi]`, empty when either end is NaN.
fn csv_interval(lo: f64, hi: f64) -> String {
    match (fmt_float(lo, 6), fmt_float(hi, 6)) {
        (Some(a), Some(b)) => format!("[{a}, {b}]"),
        _ => String::new(),
    }
}

/// A cell's CSV text for a human-readable serializer (a CSV writer), else its marker around
/// the raw value (the cell collector of [`super::rows`]).
fn serialize_cell<S: Serializer, T: Serialize>(
    s: S,
    csv: impl FnOnce() -> String,
    marker: &'static str,
    raw: &T,
) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        s.serialize_str(&csv())
    } else {
        s.serialize_newtype_struct(marker, raw)
    }
}

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_cell(s, || csv_float(self.0), NUM, &self.0)
    }
}

impl Serialize for Pct {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_cell(s, || csv_float(self.0), PCT, &self.0)
    }
}

impl Serialize for Ci {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_cell(s, || csv_interval(self.0, self.1), CI, &(self.0, self.1))
    }
}

impl Serialize for PyBool {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = if self.0 { "True" } else { "False" };
        serialize_cell(s, || text.to_string(), BOOL, &self.0)
    }
}
