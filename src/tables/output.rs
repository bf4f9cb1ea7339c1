//! One generated table and its Markdown and LaTeX files.

use super::format::{csv_text, table_of, tex_escape, Row, Table};

/// The id of the served-coverage table: like the experiment tables it is never listed as
/// missing (an in-process run has nothing to cover).
pub(crate) const SERVED_ID: &str = "Served";

/// The id of hyst-tui's experiment tables.
pub(crate) const EXPERIMENT_ID: &str = "Experiment";

/// One generated table (three files).
#[derive(Clone, Debug)]
pub(crate) struct Output {
    /// `Table 2`, … or `Aux`: set from the registry entry that built it.
    pub(crate) id: &'static str,
    /// File stem, e.g. `table02_pressure_ramp`.
    pub(crate) stem: String,
    pub(crate) title: String,
    /// Which clean-context-like criterion family (or CCTP tube) the table uses.
    pub(crate) family: String,
    /// The CSV file (artifact schema), written by `csv::Writer` from the typed rows.
    pub(crate) csv: String,
    /// The CSV rows as cells (the Markdown/LaTeX view unless `display` is set).
    pub(crate) table: Table,
    /// Markdown/LaTeX view when it differs from the CSV (e.g. a wide view of a long table).
    pub(crate) display: Option<Table>,
    pub(crate) notes: Vec<String>,
    /// Whether the table is written when it has no rows ([`Output::written_without_rows`]).
    written_without_rows: bool,
}

impl Output {
    /// A table of typed rows (see `format::rows`). A table of no rows is not written: a
    /// builder hands over what it has and need not check for nothing.
    pub(super) fn new<R: Row>(stem: &str, title: &str, family: &str, rows: &[R]) -> Output {
        Output {
            id: "",
            stem: stem.to_string(),
            title: title.to_string(),
            family: family.to_string(),
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
