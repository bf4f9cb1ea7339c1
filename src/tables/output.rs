//! One generated table and its Markdown and LaTeX files.

use super::format::{csv_text, project, table_of, tex_escape, Row, Shown, Table};

/// The id of the served-coverage table: like the experiment tables it is never listed as
/// missing (an in-process run has nothing to cover).
pub(crate) const SERVED_ID: &str = "Served";

/// The id of hyst-tui's experiment tables.
pub(crate) const EXPERIMENT_ID: &str = "Experiment";

/// Which clean-context-like criterion family (or CCTP tube) a table uses: the `Criterion
/// family:` line of its Markdown and LaTeX files and the `criterion:` of its summary entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum CriterionFamily {
    /// The table applies no criterion: `none`.
    None,
    /// No criterion, and what the table reports instead: `none (gap only)`.
    NoneBut(&'static str),
    /// The main family and where it shows: `main (clean_context_like_pass)`; bare `main` for
    /// an empty text.
    Main(&'static str),
    /// The main family, where it shows, and where the strict and loose families show:
    /// `main (...); ...`.
    MainAndOthers(&'static str, &'static str),
    /// Several families or tubes, as the table says in its own words.
    Several(&'static str),
    /// A table that defines a criterion or the operations rather than applying one.
    Definition,
}

impl std::fmt::Display for CriterionFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CriterionFamily::None => f.write_str("none"),
            CriterionFamily::NoneBut(what) => write!(f, "none ({what})"),
            CriterionFamily::Main("") => f.write_str("main"),
            CriterionFamily::Main(shown) => write!(f, "main ({shown})"),
            CriterionFamily::MainAndOthers(shown, others) => write!(f, "main ({shown}); {others}"),
            CriterionFamily::Several(text) => f.write_str(text),
            CriterionFamily::Definition => f.write_str("definition"),
        }
    }
}

/// One generated table (three files).
#[derive(Clone, Debug)]
pub(crate) struct Output {
    /// `Table 2`, … or `Aux`: set from the registry entry that built it.
    pub(crate) id: &'static str,
    /// File stem, e.g. `table02_pressure_ramp`.
    pub(crate) stem: String,
    pub(crate) title: String,
    /// Which clean-context-like criterion family (or CCTP tube) the table uses.
    pub(crate) family: CriterionFamily,
    /// The CSV file (artifact schema), written by `csv::Writer` from the typed rows.
    pub(crate) csv: String,
    /// The CSV rows as cells (the Markdown/LaTeX view unless `display` is set).
    pub(crate) table: Table,
    /// Markdown/LaTeX view when it differs from the CSV (e.g. a wide view of a long table).
    pub(crate) display: Option<Table>,
    pub(crate) notes: Vec<String>,
    /// Whether the table is written when it has no rows ([`Output::written_without_rows`]).
    pub(crate) written_without_rows: bool,
}

impl Output {
    /// A table of typed rows (see `format::rows`). A table of no rows is not written: a
    /// builder hands over what it has and need not check for nothing.
    pub(super) fn new<R: Row>(
        stem: &str,
        title: &str,
        family: CriterionFamily,
        rows: &[R],
    ) -> Output {
        Output {
            id: "",
            stem: stem.to_string(),
            title: title.to_string(),
            family,
            csv: csv_text(rows),
            table: table_of(rows),
            display: None,
            notes: Vec::new(),
            written_without_rows: false,
        }
    }
    /// Writes the table (its header and notes) even with no rows, where "none" is a finding.
    pub(super) fn written_without_rows(mut self) -> Output {
        self.written_without_rows = true;
        self
    }
    /// Whether the table is written: it has rows, or says it is written without them.
    pub(super) fn is_written(&self) -> bool {
        self.written_without_rows || !self.table.rows.is_empty()
    }
    /// The Markdown/LaTeX view, when it differs from the CSV.
    pub(super) fn with_display<R: Row>(mut self, rows: &[R]) -> Output {
        self.display = Some(table_of(rows));
        self
    }
    /// The Markdown/LaTeX view as a projection of the CSV rows (`format::Shown`).
    pub(super) fn with_view(mut self, shown: &[Shown]) -> Output {
        self.display = Some(project(&self.table, shown));
        self
    }
    pub(super) fn with_notes(mut self, notes: Vec<String>) -> Output {
        self.notes.extend(notes);
        self
    }
    fn shown(&self) -> &Table {
        self.display.as_ref().unwrap_or(&self.table)
    }
    fn heading(&self) -> String {
        if self.id == "Aux" || self.id == EXPERIMENT_ID || self.id == SERVED_ID {
            self.title.clone()
        } else {
            format!("{}: {}", self.id, self.title)
        }
    }

    pub(super) fn markdown(&self) -> String {
        let mut s = format!("# {}\n\n", self.heading());
        s.push_str(&format!(
            "Criterion family: {}. Source CSV: `{}.csv`.\n\n",
            self.family, self.stem
        ));
        s.push_str(&self.shown().to_markdown());
        if !self.notes.is_empty() {
            s.push_str("\nNotes:\n");
            for n in &self.notes {
                s.push_str(&format!("- {}\n", n.replace('\n', " ")));
            }
        }
        s
    }

    pub(super) fn latex(&self) -> String {
        let mut s = format!(
            "% hyst-tui {}\n% Criterion family: {}\n",
            self.heading(),
            self.family
        );
        s.push_str("% Requires \\usepackage{booktabs}.\n");
        s.push_str("\\begin{table}[ht]\n\\centering\n\\small\n");
        s.push_str(&format!("\\caption{{{}}}\n", tex_escape(&self.heading())));
        s.push_str(&format!("\\label{{tab:{}}}\n", self.stem.replace('_', "-")));
        s.push_str(&self.shown().to_latex_tabular());
        s.push_str("\\end{table}\n");
        for n in &self.notes {
            s.push_str(&format!("% Note: {}\n", n.replace(['\n', '\r'], " ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;
    use crate::dialogue::conditions::Registry;
    use crate::tables::format::Num;
    use crate::tables::index::RunIndex;
    use crate::tables::registry::TableSpec;
    use crate::tables::{Ctx, TableOptions};

    #[derive(Serialize, Default)]
    struct Value {
        value: Num,
    }

    fn no_rows() -> Output {
        Output::new("empty", "Empty", CriterionFamily::None, &[] as &[Value])
    }

    fn one_row() -> Output {
        Output::new("full", "Full", CriterionFamily::None, &[Value { value: Num(1.0) }])
    }

    #[test]
    fn a_table_of_no_rows_is_not_written_unless_it_says_so() {
        assert!(!no_rows().is_written());
        assert!(no_rows().written_without_rows().is_written());
        assert!(one_row().is_written());
        // the registry drops it: the builder hands over what it has
        let spec = TableSpec {
            id: "Aux",
            title: "Test",
            needs: "nothing",
            stems: &["empty", "full"],
            build: |_| vec![no_rows(), one_row()],
        };
        let idx = RunIndex::new(&[], Registry::bundled());
        let opts = TableOptions::default();
        let stems: Vec<String> = spec.run(&Ctx::new(&idx, &opts)).into_iter().map(|o| o.stem).collect();
        assert_eq!(stems, ["full"]);
    }

    #[test]
    fn each_criterion_family_has_one_spelling() {
        let spelt = |f: CriterionFamily| f.to_string();
        assert_eq!(spelt(CriterionFamily::None), "none");
        assert_eq!(spelt(CriterionFamily::NoneBut("gap only")), "none (gap only)");
        assert_eq!(spelt(CriterionFamily::Main("")), "main");
        assert_eq!(spelt(CriterionFamily::Main("x_pass")), "main (x_pass)");
        assert_eq!(spelt(CriterionFamily::MainAndOthers("x", "y")), "main (x); y");
        assert_eq!(spelt(CriterionFamily::Several("strict / main")), "strict / main");
        assert_eq!(spelt(CriterionFamily::Definition), "definition");
        // and the files say it
        let md = one_row().markdown();
        assert!(md.contains("Criterion family: none. Source CSV: `full.csv`."), "{md}");
        assert!(one_row().latex().contains("% Criterion family: none\n"));
    }
}
