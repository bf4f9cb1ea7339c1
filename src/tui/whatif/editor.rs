//! The what-if editor's text and cursor.

use crate::tui::parts::Part;

/// The text being typed in the editor, and its cursor (a byte offset on a character boundary).
#[derive(Clone, Debug, Default)]
pub(crate) struct Editor {
    pub(crate) item: usize,
    pub(crate) part: Option<Part>,
    /// The edited message's index in the step's dialogue.
    pub(crate) index: usize,
    pub(crate) text: String,
    pub(crate) cursor: usize,
}

impl Editor {
    /// The editor on `text`, the cursor at its end.
    pub(crate) fn new(item: usize, part: Part, index: usize, text: String) -> Editor {
        let cursor = text.len();
        Editor { item, part: Some(part), index, text, cursor }
    }

    /// Replaces the whole text (from `$EDITOR`), the cursor at its end.
    pub(crate) fn set_text(&mut self, text: String) {
        self.cursor = text.len();
        self.text = text;
    }

    pub(crate) fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Deletes the character before the cursor.
    pub(crate) fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    /// Deletes the character under the cursor.
    pub(crate) fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
    }

    pub(crate) fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub(crate) fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self, at: usize) -> usize {
        self.text[..at].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self, at: usize) -> usize {
        self.text[at..].find('\n').map_or(self.text.len(), |i| at + i)
    }

    /// To the start of the cursor's line.
    pub(crate) fn home(&mut self) {
        self.cursor = self.line_start(self.cursor);
    }

    /// To the end of the cursor's line.
    pub(crate) fn end(&mut self) {
        self.cursor = self.line_end(self.cursor);
    }

    /// The byte offset `col` characters into the line starting at `start` (its end if shorter).
    fn at_column(&self, start: usize, col: usize) -> usize {
        let end = self.line_end(start);
        self.text[start..end].char_indices().nth(col).map_or(end, |(i, _)| start + i)
    }

    /// One line up (typed lines, not the wrapped ones), keeping the column where it can.
    pub(crate) fn up(&mut self) {
        let start = self.line_start(self.cursor);
        if start == 0 {
            self.cursor = 0;
            return;
        }
        let col = self.text[start..self.cursor].chars().count();
        let prev = self.line_start(start - 1);
        self.cursor = self.at_column(prev, col);
    }

    /// One line down, keeping the column where it can.
    pub(crate) fn down(&mut self) {
        let end = self.line_end(self.cursor);
        if end == self.text.len() {
            self.cursor = end;
            return;
        }
        let col = self.text[self.line_start(self.cursor)..self.cursor].chars().count();
        self.cursor = self.at_column(end + 1, col);
    }
}
