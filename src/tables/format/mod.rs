//! Typed table rows and the three renderers (CSV, Markdown, LaTeX).
//!
//! A table is a slice of typed rows ([`rows`]) whose fields are the cell types of [`cells`]:
//! `csv::Writer` writes them (RFC 4180 quoting) and [`table_of`] turns them into a [`Table`] of
//! [`Cell`]s for the Markdown and LaTeX renderers below.
//!
//! Formatting is deterministic and locale-free:
//! - CSV: floats with 6 decimals (`{:.6}`), NaN as an empty field, booleans `True`/`False`
//!   (pandas style).
//! - Markdown / LaTeX: floats with 3 decimals, percentages with 1 decimal, NaN as `NA`.
//! - A value that rounds to zero is printed without a sign (never `-0.000`).

/// Methods of a serde `Serializer` that reject their value with `$err(method name)`.
macro_rules! reject {
    ($err:ident; $($method:ident($($ty:ty),*)),* $(,)?) => {
        $(
            fn $method(self, $(_: $ty),*) -> Result<Self::Ok, Self::Error> {
                Err($err(stringify!($method)))
            }
        )*
    };
}

/// All scalar methods of a serde `Serializer`, rejecting their value with `$err(method name)`.
macro_rules! reject_scalars {
    ($err:ident) => {
        reject!(
            $err;
            serialize_bool(bool),
            serialize_i8(i8),
            serialize_i16(i16),
            serialize_i32(i32),
            serialize_i64(i64),
            serialize_u8(u8),
            serialize_u16(u16),
            serialize_u32(u32),
            serialize_u64(u64),
            serialize_f32(f32),
            serialize_f64(f64),
            serialize_char(char),
            serialize_str(&str),
            serialize_bytes(&[u8]),
            serialize_none(),
            serialize_unit(),
            serialize_unit_struct(&'static str),
            serialize_unit_variant(&'static str, u32, &'static str),
        );
    };
}

/// The compound methods of a serde `Serializer` (but tuples, structs and options) that reject
/// their value with `$err(what)`.
macro_rules! reject_compound {
    ($err:ident) => {
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<Self::Ok, Self::Error> {
            Err($err("an enum"))
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Self::Error> {
            Err($err("a sequence"))
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Self::Error> {
            Err($err("a tuple struct"))
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Self::Error> {
            Err($err("an enum"))
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Self::Error> {
            Err($err("a map (serde flatten)"))
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Self::Error> {
            Err($err("an enum"))
        }
    };
}

mod cells;
mod join;
mod projection;
mod rows;

pub(crate) use cells::{Ci, Num, Pct, PyBool};
pub(crate) use join::Join;
pub(crate) use projection::{project, Shown};
pub(crate) use rows::{csv_text, table_of, Row};

/// One table cell of the Markdown/LaTeX view.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell {
    Text(String),
    Int(i64),
    /// A plain number (probability, gap, rate as a fraction, …).
    Num(f64),
    /// A fraction shown as a percentage.
    Pct(f64),
    Bool(bool),
    /// A 95% interval `[lo, hi]`.
    Ci {
        lo: f64,
        hi: f64,
    },
    /// Missing value (`NA`).
    Na,
}

impl Cell {
    fn is_numeric(&self) -> bool {
        matches!(
            self,
            Cell::Int(_) | Cell::Num(_) | Cell::Pct(_) | Cell::Ci { .. }
        )
    }
}

/// Fixed-precision float; `None` for NaN. Never prints a negative zero.
pub(crate) fn fmt_float(v: f64, decimals: usize) -> Option<String> {
    if v.is_nan() {
        return None;
    }
    if v.is_infinite() {
        return Some(if v > 0.0 { "inf".into() } else { "-inf".into() });
    }
    let s = format!("{:.*}", decimals, v);
    if let Some(rest) = s.strip_prefix('-') {
        if rest.chars().all(|c| c == '0' || c == '.') {
            return Some(rest.to_string());
        }
    }
    Some(s)
}

/// Display text (Markdown and LaTeX, before escaping).
fn display_value(c: &Cell) -> String {
    let na = || "NA".to_string();
    match c {
        Cell::Text(s) => s.clone(),
        Cell::Int(i) => i.to_string(),
        Cell::Num(v) => fmt_float(*v, 3).unwrap_or_else(na),
        Cell::Pct(v) => fmt_float(*v * 100.0, 1).unwrap_or_else(na),
        Cell::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Cell::Ci { lo, hi } => {
            match (fmt_float(*lo, 3), fmt_float(*hi, 3)) {
                (Some(a), Some(b)) => format!("[{a}, {b}]"),
                _ => na(),
            }
        }
        Cell::Na => na(),
    }
}

/// A rectangular table.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Table {
    pub(crate) columns: Vec<String>,
    pub(crate) rows: Vec<Vec<Cell>>,
}

impl Table {
    pub(crate) fn new(columns: &[&str]) -> Table {
        Table {
            columns: columns.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }
    /// Appends a row; panics on a width mismatch (a programming error).
    pub(crate) fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "row width does not match the columns {:?}",
            self.columns
        );
        self.rows.push(row);
    }
    /// Index of a column by name.
    pub(crate) fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    // ------------------------------------------------------------------------------------------
    // Markdown
    // ------------------------------------------------------------------------------------------

    /// A pipe table padded to column width (readable as plain text in a terminal); numeric
    /// columns are right-aligned.
    pub(crate) fn to_markdown(&self) -> String {
        let header: Vec<String> = self.columns.iter().map(|s| md_escape(s)).collect();
        let body: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| md_escape(&display_value(c))).collect())
            .collect();
        let ncol = header.len();
        let numeric: Vec<bool> = (0..ncol)
            .map(|j| {
                let mut any = false;
                for r in &self.rows {
                    match &r[j] {
                        Cell::Na => {}
                        c if c.is_numeric() => any = true,
                        _ => return false,
                    }
                }
                any
            })
            .collect();
        let width: Vec<usize> = (0..ncol)
            .map(|j| {
                body.iter()
                    .map(|r| r[j].chars().count())
                    .chain(std::iter::once(header[j].chars().count()))
                    .max()
                    .unwrap_or(0)
                    .max(3)
            })
            .collect();
        let pad = |s: &str, j: usize| -> String {
            let n = s.chars().count();
            let fill = " ".repeat(width[j].saturating_sub(n));
            if numeric[j] {
                format!("{fill}{s}")
            } else {
                format!("{s}{fill}")
            }
        };
        let mut out = String::new();
        let row_line = |cells: &[String], out: &mut String| {
            out.push('|');
            for (j, c) in cells.iter().enumerate() {
                out.push(' ');
                out.push_str(&pad(c, j));
                out.push_str(" |");
            }
            out.push('\n');
        };
        row_line(&header, &mut out);
        out.push('|');
        for j in 0..ncol {
            if numeric[j] {
                out.push_str(&format!(" {}: |", "-".repeat(width[j] - 1)));
            } else {
                out.push_str(&format!(" {} |", "-".repeat(width[j])));
            }
        }
        out.push('\n');
        for r in &body {
            row_line(r, &mut out);
        }
        out
    }

    // ------------------------------------------------------------------------------------------
    // LaTeX
    // ------------------------------------------------------------------------------------------

    /// A booktabs `tabular` (no surrounding float).
    pub(crate) fn to_latex_tabular(&self) -> String {
        let ncol = self.columns.len();
        let numeric: Vec<bool> = (0..ncol)
            .map(|j| {
                !self.rows.is_empty()
                    && self
                        .rows
                        .iter()
                        .all(|r| matches!(r[j], Cell::Na) || r[j].is_numeric())
            })
            .collect();
        let spec: String = numeric.iter().map(|&n| if n { 'r' } else { 'l' }).collect();
        let mut out = format!("\\begin{{tabular}}{{{spec}}}\n\\toprule\n");
        let header: Vec<String> = self.columns.iter().map(|s| tex_escape(s)).collect();
        out.push_str(&header.join(" & "));
        out.push_str(" \\\\\n\\midrule\n");
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(|c| tex_escape(&display_value(c))).collect();
            out.push_str(&cells.join(" & "));
            out.push_str(" \\\\\n");
        }
        out.push_str("\\bottomrule\n\\end{tabular}\n");
        out
    }
}

/// Escapes a Markdown table cell: pipes, and line breaks folded to spaces.
pub(crate) fn md_escape(s: &str) -> String {
    s.replace(['\r', '\n'], " ").replace('|', "\\|")
}

/// Escapes LaTeX special characters in text mode (and writes α, ≤, − and – as LaTeX).
pub(crate) fn tex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            // the few non-ASCII symbols of the paper's labels
            'α' => out.push_str("$\\alpha$"),
            '≤' => out.push_str("$\\leq$"),
            '−' => out.push_str("$-$"),
            '–' => out.push_str("--"),
            '^' => out.push_str("\\textasciicircum{}"),
            '\n' | '\r' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

/// Truncates display text to `max` characters (adds `...`).
pub(crate) fn shorten(s: &str, max: usize) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= max {
        s
    } else {
        let t: String = s.chars().take(max.saturating_sub(3)).collect();
        format!("{}...", t.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_and_na() {
        assert_eq!(fmt_float(-0.0, 3).unwrap(), "0.000");
        assert_eq!(fmt_float(-0.00001, 3).unwrap(), "0.000");
        assert_eq!(fmt_float(-0.0015, 3).unwrap(), "-0.002");
        assert_eq!(fmt_float(0.2166666, 6).unwrap(), "0.216667");
        assert!(fmt_float(f64::NAN, 3).is_none());
        let mut t = Table::new(&["a", "b_c", "x"]);
        t.push(vec![
            Cell::Num(f64::NAN),
            Cell::Text("p|q, r".into()),
            Cell::Pct(0.5),
        ]);
        let md = t.to_markdown();
        assert!(
            md.contains("NA") && md.contains("p\\|q, r") && md.contains("50.0"),
            "{md}"
        );
        let tex = t.to_latex_tabular();
        assert!(
            tex.contains("b\\_c") && tex.contains("\\toprule") && tex.contains("NA"),
            "{tex}"
        );
    }

    #[test]
    fn tex_escapes_specials() {
        assert_eq!(
            tex_escape("a_b 50% & #1 {x} ~^\\"),
            "a\\_b 50\\% \\& \\#1 \\{x\\} \\textasciitilde{}\\textasciicircum{}\\textbackslash{}"
        );
        assert_eq!(tex_escape("Mean α* (gap ≤ 0.05) − x – y"), "Mean $\\alpha$* (gap $\\leq$ 0.05) $-$ x -- y");
    }
}
