//! The Tables view's state: the Markdown files of a run directory (`summary.md` first, then
//! `tables/*.md`), the file shown and its scroll position. The directory is rescanned and the
//! shown file reloaded when it changes on disk (a batch writes its tables when it finishes).

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
    stamp: Option<(PathBuf, Option<SystemTime>, u64)>,
    last_scan: Option<Instant>,
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
    /// file when it changed on disk.
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
        let mut files = Vec::new();
        let summary = dir.join("summary.md");
        if summary.is_file() {
            files.push(summary);
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
            return;
        };
        let meta = std::fs::metadata(&path).ok();
        let stamp = (path.clone(), meta.as_ref().and_then(|m| m.modified().ok()), meta.map_or(0, |m| m.len()));
        if self.stamp.as_ref() != Some(&stamp) || self.doc.is_none() {
            self.doc = std::fs::read_to_string(&path).ok().map(|s| markdown::parse(&s));
            self.stamp = Some(stamp);
        }
    }
}
