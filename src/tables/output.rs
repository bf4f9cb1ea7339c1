//! One generated table and its Markdown and LaTeX files.

use super::format::{tex_escape, Table};

/// One generated table (three files).
#[derive(Clone, Debug)]
pub struct Output {
    /// `Table 2`, … or `Aux`: set from the registry entry that built it.
    pub id: &'static str,
    /// File stem, e.g. `table02_pressure_ramp`.
    pub stem: String,
    pub title: String,
    /// Which clean-context-like criterion family (or CCTP tube) the table uses.
    pub family: String,
    /// CSV content (artifact schema).
    pub csv: Table,
    /// Markdown/LaTeX view when it differs from the CSV (e.g. a wide view of a long table).
    pub display: Option<Table>,
    pub notes: Vec<String>,
}

impl Output {
    pub(super) fn new(stem: &str, title: &str, family: &str, csv: Table) -> Output {
        Output {
            id: "",
            stem: stem.to_string(),
            title: title.to_string(),
            family: family.to_string(),
            csv,
            display: None,
            notes: Vec::new(),
        }
    }
    pub(super) fn with_display(mut self, t: Table) -> Output {
        self.display = Some(t);
        self
    }
    pub(super) fn with_notes(mut self, notes: Vec<String>) -> Output {
        self.notes.extend(notes);
        self
    }
    fn shown(&self) -> &Table {
        self.display.as_ref().unwrap_or(&self.csv)
    }
    fn heading(&self) -> String {
        if self.id == "Aux" {
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
