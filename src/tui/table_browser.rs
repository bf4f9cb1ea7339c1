//! The Tables view's state: the Markdown files of a run directory (`summary.md` first, then
//! `reproduction.md`, then `tables/*.md`), the file shown and its scroll position, and how many items the tables are
//! built from. While the view is shown the directory is rescanned once a second (a listing and
//! two `stat`s) and a file is read again only when its modification time or length changed; it
//! is rescanned at once when the view is opened and when a batch ends, so tables a batch
//! rewrites while it runs, or at its end, show up without a key.
//!
//! The item count: a table file that states it in its header (a line before its first table
//! with "N items", "items: N" or "n_items = N") gives its own; otherwise the count comes from
//! the "Pairs" table of the run's `summary.md` (items per model × dataset pair).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::markdown::{self, Doc};

#[derive(Default)]
pub(crate) struct TableBrowser {
    dir: Option<PathBuf>,
    files: Vec<PathBuf>,
    sel: usize,
    scroll: usize,
    hscroll: usize,
    doc: Option<Doc>,
    /// The shown file as last read: (path, modification time, length).
    stamp: Option<Stamp>,
    /// The item count the shown file's header states.
    header_items: Option<usize>,
    /// `summary.md` as last read, and the items of each pair of its "Pairs" table.
    summary_stamp: Option<Stamp>,
    pair_items: Vec<usize>,
    last_scan: Option<Instant>,
    /// Where the run stands (`batch::status`), and the manifest stamp it was read at.
    progress: Option<String>,
    progress_stamp: Option<Stamp>,
    /// When a slurm run's tasks were last looked at (every 5 s: it asks squeue).
    progress_at: Option<Instant>,
}

/// One line of where a run directory that is still going stands (a run, or a `hyst-tui slurm`
/// run's tasks); `None` for a complete run.
pub(crate) fn progress_line(dir: &Path) -> Option<String> {
    use crate::batch::status::{ago, statuses};
    let st = statuses(dir).ok()?;
    if st.iter().all(|s| s.complete) {
        return None;
    }
    let (done, total): (usize, usize) = st.iter().fold((0, 0), |(d, t), s| (d + s.items_done, t + s.items_total));
    let contexts: usize = st.iter().map(|s| s.contexts).sum();
    if let [one] = st.as_slice() {
        return Some(format!("{done}/{total} items · {contexts} contexts · {} · last progress {}", one.state(), ago(one.last_progress)));
    }
    let tasks: Vec<_> = st.iter().filter(|s| s.label.starts_with("task ")).collect();
    let merged = st.iter().find(|s| s.label == "merged");
    let tasks_done = tasks.iter().filter(|s| s.complete).count();
    let task_items: (usize, usize) = tasks.iter().fold((0, 0), |(d, t), s| (d + s.items_done, t + s.items_total));
    Some(format!(
        "slurm: {tasks_done}/{} tasks complete · {}/{} items · merged run {}",
        tasks.len(),
        task_items.0,
        task_items.1,
        merged.map_or("-", |m| m.state())
    ))
}

type Stamp = (PathBuf, Option<SystemTime>, u64);

fn stamp_of(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok();
    (path.to_path_buf(), meta.as_ref().and_then(|m| m.modified().ok()), meta.map_or(0, |m| m.len()))
}

/// The item count a table file states before its first table: "N items", "items: N" or
/// "n_items = N" (case-insensitive).
pub(crate) fn header_item_count(text: &str) -> Option<usize> {
    let num = |w: &str| w.trim_end_matches(['.', ';', ':']).parse::<usize>().ok();
    for line in text.lines().take_while(|l| !l.trim_start().starts_with('|')) {
        let l = line.to_lowercase().replace(['*', '`', ','], "");
        let words: Vec<&str> = l.split(|c: char| c.is_whitespace() || c == '(' || c == ')').filter(|w| !w.is_empty()).collect();
        for (i, raw) in words.iter().enumerate() {
            let w = raw.trim_end_matches(['.', ';', ':']);
            if w == "items" {
                if let Some(n) = i.checked_sub(1).and_then(|j| num(words[j])) {
                    return Some(n);
                }
            }
            if w == "items" || w == "n_items" {
                let (sep, value) = match words.get(i + 1) {
                    Some(&"=") | Some(&":") => (true, words.get(i + 2)),
                    v => (raw.ends_with(':'), v),
                };
                if let Some(n) = value.filter(|_| sep).and_then(|v| num(v)) {
                    return Some(n);
                }
            }
        }
    }
    None
}

/// The "Items" column of the "Pairs" table of `summary.md`.
pub(crate) fn summary_pair_items(doc: &Doc) -> Vec<usize> {
    let mut in_pairs = false;
    for b in &doc.blocks {
        match b {
            markdown::Block::Heading(_, t) => in_pairs = t.trim() == "Pairs",
            markdown::Block::Table { header, rows, .. } if in_pairs => {
                let Some(col) = header.iter().position(|h| h.trim() == "Items") else { return vec![] };
                return rows.iter().filter_map(|r| r.get(col)?.trim().parse().ok()).collect();
            }
            _ => {}
        }
    }
    vec![]
}

impl TableBrowser {
    pub(crate) fn new(dir: Option<PathBuf>) -> TableBrowser {
        TableBrowser { dir, ..TableBrowser::default() }
    }

    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
    pub(crate) fn files(&self) -> &[PathBuf] {
        &self.files
    }
    /// Index of the shown file in [`files`](Self::files).
    pub(crate) fn selected(&self) -> usize {
        self.sel
    }
    pub(crate) fn scroll(&self) -> usize {
        self.scroll
    }
    pub(crate) fn hscroll(&self) -> usize {
        self.hscroll
    }
    /// The shown file, parsed.
    pub(crate) fn doc(&self) -> Option<&Doc> {
        self.doc.as_ref()
    }

    /// How many items the shown file is built from: its header's count, else the run's
    /// `summary.md` pairs ("3 items", "3 items × 2 pairs", "2–5 items × 3 pairs").
    pub(crate) fn items_text(&self) -> Option<String> {
        self.doc.as_ref()?;
        if let Some(n) = self.header_items {
            return Some(format!("{n} items"));
        }
        let p = &self.pair_items;
        let (lo, hi) = (p.iter().min()?, p.iter().max()?);
        let n = if lo == hi { lo.to_string() } else { format!("{lo}–{hi}") };
        Some(match p.len() {
            1 => format!("{n} items"),
            k => format!("{n} items × {k} pairs"),
        })
    }

    /// Where the run stands (items done, contexts, complete), while it is written.
    pub(crate) fn progress(&self) -> Option<&str> {
        self.progress.as_deref()
    }

    /// Browses another run directory (a batch's), from its first file.
    pub(crate) fn show_run(&mut self, dir: PathBuf) {
        self.dir = Some(dir);
        self.sel = 0;
        self.doc = None;
        self.refresh(true);
    }

    /// The previous (negative) or next (positive) file, from its top.
    pub(crate) fn move_file(&mut self, delta: isize) {
        let last = self.files.len().saturating_sub(1);
        self.sel = (self.sel as isize).saturating_add(delta).clamp(0, last as isize) as usize;
        self.scroll = 0;
        self.hscroll = 0;
        self.refresh(true);
    }

    /// Scrolls the shown file down (positive) or up (negative) by lines; the view stops at its
    /// last line.
    pub(crate) fn scroll_by(&mut self, lines: isize) {
        self.scroll = self.scroll.saturating_add_signed(lines);
    }

    pub(crate) fn scroll_to_top(&mut self) {
        self.scroll = 0;
    }

    pub(crate) fn pan(&mut self, columns: isize) {
        self.hscroll = self.hscroll.saturating_add_signed(columns);
    }

    /// Rescans the run directory (at most once a second unless forced) and reloads the shown
    /// file and `summary.md` when they changed on disk.
    pub(crate) fn refresh(&mut self, force: bool) {
        if !force && self.last_scan.is_some_and(|s| s.elapsed() < Duration::from_secs(1)) {
            return;
        }
        self.last_scan = Some(Instant::now());
        let Some(dir) = self.dir.clone() else {
            self.files.clear();
            self.doc = None;
            return;
        };
        let manifest = stamp_of(&dir.join("manifest.json"));
        let tasks = stamp_of(&dir.join("slurm").join("tasks.json"));
        // A plain run: read again when its manifest changed (after every item); a slurm run
        // (several manifests): at every rescan.
        let slurm_due = tasks.1.is_some() && self.progress_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(5));
        if self.progress_stamp.as_ref() != Some(&manifest) || slurm_due {
            self.progress = progress_line(&dir);
            self.progress_stamp = Some(manifest);
            self.progress_at = Some(Instant::now());
        }
        let mut files = Vec::new();
        let summary = dir.join("summary.md");
        if summary.is_file() {
            let st = stamp_of(&summary);
            if self.summary_stamp.as_ref() != Some(&st) {
                self.pair_items = std::fs::read_to_string(&summary).map(|s| summary_pair_items(&markdown::parse(&s))).unwrap_or_default();
                self.summary_stamp = Some(st);
            }
            files.push(summary);
        } else {
            self.pair_items.clear();
            self.summary_stamp = None;
        }
        // The side by side with the paper's printed values, right after the summary.
        let reproduction = dir.join("reproduction.md");
        if reproduction.is_file() {
            files.push(reproduction);
        }
        if let Ok(rd) = std::fs::read_dir(dir.join("tables")) {
            let mut md: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect();
            // Paper tables first, then the auxiliary ones.
            md.sort_by_key(|p| {
                let n = p.file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
                (!n.starts_with("table"), n)
            });
            files.extend(md);
        }
        let prev = self.files.get(self.sel).cloned();
        self.files = files;
        if let Some(p) = prev {
            if let Some(i) = self.files.iter().position(|f| *f == p) {
                self.sel = i;
            }
        }
        self.sel = self.sel.min(self.files.len().saturating_sub(1));
        let Some(path) = self.files.get(self.sel).cloned() else {
            self.doc = None;
            self.stamp = None;
            self.header_items = None;
            return;
        };
        let stamp = stamp_of(&path);
        if self.stamp.as_ref() != Some(&stamp) || self.doc.is_none() {
            let text = std::fs::read_to_string(&path).ok();
            self.header_items = text.as_deref().and_then(header_item_count);
            self.doc = text.map(|s| markdown::parse(&s));
            self.stamp = Some(stamp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_counts_from_a_header_or_the_summary() {
        assert_eq!(header_item_count("# T1: x\n\nBuilt from 12 items (2 pairs).\n\n| a |\n"), Some(12));
        assert_eq!(header_item_count("# T\n\nItems: 7\n"), Some(7));
        assert_eq!(header_item_count("# T\n\nn_items = 1,024\n"), Some(1024));
        assert_eq!(header_item_count("# T\n\nBuilt from 40 item rows.\n| 3 items |\n"), None);
        assert_eq!(header_item_count("# T\n\n| n_items |\n|---|\n| 5 |\n"), None);
        let doc = markdown::parse("# S\n\n## Pairs\n\n| Model | Items | Conditions |\n|---|--:|--:|\n| a | 3 | 30 |\n| b | 5 | 30 |\n\n## Other\n\n| Items |\n|---|\n| 9 |\n");
        assert_eq!(summary_pair_items(&doc), vec![3, 5]);

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("summary.md"), "# S\n\n## Pairs\n\n| Model | Items |\n|---|--:|\n| a | 3 |\n| b | 3 |\n").unwrap();
        std::fs::create_dir(dir.path().join("tables")).unwrap();
        std::fs::write(dir.path().join("tables/table01_x.md"), "# T1\n\nBuilt from 2 items.\n\n| a |\n|---|\n| 1 |\n").unwrap();
        let mut t = TableBrowser::new(Some(dir.path().to_path_buf()));
        t.refresh(true);
        assert_eq!(t.items_text().as_deref(), Some("3 items × 2 pairs"));
        t.move_file(1);
        assert_eq!(t.items_text().as_deref(), Some("2 items"));
        // A rewritten table is read again.
        std::fs::write(dir.path().join("tables/table01_x.md"), "# T1\n\nBuilt from 20 items.\n\n| a |\n|---|\n| 1 |\n").unwrap();
        t.refresh(true);
        assert_eq!(t.items_text().as_deref(), Some("20 items"));
    }

    #[test]
    fn reproduction_comes_right_after_the_summary() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("summary.md"), "# S\n").unwrap();
        std::fs::create_dir(dir.path().join("tables")).unwrap();
        std::fs::write(dir.path().join("tables/table01_x.md"), "# T1\n").unwrap();
        std::fs::write(dir.path().join("tables/aux_y.md"), "# A\n").unwrap();
        let names = |t: &TableBrowser| -> Vec<String> {
            t.files().iter().map(|p| p.file_name().unwrap().to_string_lossy().to_string()).collect()
        };
        let mut t = TableBrowser::new(Some(dir.path().to_path_buf()));
        t.refresh(true);
        assert_eq!(names(&t), ["summary.md", "table01_x.md", "aux_y.md"], "no reproduction.md yet");
        std::fs::write(dir.path().join("reproduction.md"), "# Reproduction\n").unwrap();
        t.refresh(true);
        assert_eq!(names(&t), ["summary.md", "reproduction.md", "table01_x.md", "aux_y.md"]);
    }
}
