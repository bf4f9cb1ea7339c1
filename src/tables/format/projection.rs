//! A display that is a projection of the CSV row: [`project`] picks CSV columns by name, heads
//! them for the Markdown/LaTeX view and shows a fraction as a percentage, a pair of bounds as
//! one interval or a key by its display name. A table whose view shows nothing the CSV does not
//! hold writes the list of its shown columns, not a second row struct.

use super::{Cell, Table};

/// One column of a projected view.
#[derive(Clone, Copy)]
pub(crate) enum Shown {
    /// `As(csv, heading)`: the CSV column as it is.
    As(&'static str, &'static str),
    /// `Pct(csv, heading)`: a CSV fraction shown as a percentage.
    Pct(&'static str, &'static str),
    /// `Ci(low, high, heading)`: two CSV bounds shown as one interval.
    Ci(&'static str, &'static str, &'static str),
    /// `Text(csv, heading, f)`: a CSV text shown as `f` writes it (a key by its display name).
    Text(&'static str, &'static str, fn(&str) -> String),
}

impl Shown {
    fn heading(&self) -> &'static str {
        match *self {
            Shown::As(_, h) | Shown::Pct(_, h) | Shown::Ci(_, _, h) | Shown::Text(_, h, _) => h,
        }
    }
}

/// The view of `csv` that `shown` lists, row for row. A column the CSV does not have, or a
/// cell of the wrong kind, is a programming error.
pub(crate) fn project(csv: &Table, shown: &[Shown]) -> Table {
    let col = |name: &str| {
        csv.col(name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", csv.columns))
    };
    let headings: Vec<&str> = shown.iter().map(Shown::heading).collect();
    let mut view = Table::new(&headings);
    for row in &csv.rows {
        let cells = shown
            .iter()
            .map(|s| match *s {
                Shown::As(c, _) => row[col(c)].clone(),
                Shown::Pct(c, _) => match row[col(c)] {
                    Cell::Num(v) => Cell::Pct(v),
                    Cell::Na => Cell::Na,
                    ref other => panic!("{c}: a percentage of {other:?}"),
                },
                Shown::Ci(lo, hi, _) => match (&row[col(lo)], &row[col(hi)]) {
                    (Cell::Num(lo), Cell::Num(hi)) => Cell::Ci { lo: *lo, hi: *hi },
                    (a, b) => panic!("{lo}, {hi}: an interval of {a:?}, {b:?}"),
                },
                Shown::Text(c, _, f) => match &row[col(c)] {
                    Cell::Text(t) => Cell::Text(f(t)),
                    other => panic!("{c}: text from {other:?}"),
                },
            })
            .collect();
        view.push(cells);
    }
    view
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::super::{table_of, Ci, Num, Pct, PyBool};
    use super::*;

    #[derive(Serialize, Default)]
    struct Csv {
        dataset: String,
        rate: Num,
        lo: Num,
        hi: Num,
        pass: PyBool,
        n_items: usize,
    }

    #[derive(Serialize, Default)]
    struct Twin {
        #[serde(rename = "Dataset")]
        dataset: String,
        #[serde(rename = "Rate (%)")]
        rate: Pct,
        #[serde(rename = "CI")]
        ci: Ci,
        #[serde(rename = "Pass")]
        pass: PyBool,
        n: usize,
    }

    #[test]
    fn a_projection_equals_the_twin_struct_it_replaces() {
        let rows = [
            Csv { dataset: "mmlu_pro".into(), rate: Num(0.25), lo: Num(0.1), hi: Num(0.4), pass: PyBool(true), n_items: 3 },
            Csv { dataset: "x".into(), rate: Num(f64::NAN), lo: Num(f64::NAN), hi: Num(0.2), pass: PyBool(false), n_items: 0 },
        ];
        let twin: Vec<Twin> = rows
            .iter()
            .map(|r| Twin {
                dataset: super::super::super::index::dataset_display(&r.dataset),
                rate: Pct(r.rate.0),
                ci: Ci(r.lo.0, r.hi.0),
                pass: r.pass,
                n: r.n_items,
            })
            .collect();
        let shown = [
            Shown::Text("dataset", "Dataset", super::super::super::index::dataset_display),
            Shown::Pct("rate", "Rate (%)"),
            Shown::Ci("lo", "hi", "CI"),
            Shown::As("pass", "Pass"),
            Shown::As("n_items", "n"),
        ];
        let (view, twin) = (project(&table_of(&rows), &shown), table_of(&twin));
        // cell for cell (NaN included: compared as written out)
        assert_eq!(format!("{view:?}"), format!("{twin:?}"));
        assert_eq!(view.to_markdown(), twin.to_markdown());
        assert_eq!(view.to_latex_tabular(), twin.to_latex_tabular());
        assert!(view.to_markdown().contains("MMLU-Pro"), "{}", view.to_markdown());
    }
}
