//! The item list: the selected items, the text filter, the sort column and the selection. The
//! visible list is a filtered, sorted list of indices into the items; it is rebuilt by
//! [`ItemList::refresh`], which keeps the selected item selected.

use std::cmp::Ordering;

use super::action::Motion;
use crate::data::Selected;
use crate::protocol::SlotScore;

/// Sort column of the item list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SortKey {
    Index,
    Clean,
    R0,
    Gap,
    Wf,
    Id,
}

impl SortKey {
    pub(crate) fn next(self) -> SortKey {
        match self {
            SortKey::Index => SortKey::Clean,
            SortKey::Clean => SortKey::R0,
            SortKey::R0 => SortKey::Gap,
            SortKey::Gap => SortKey::Wf,
            SortKey::Wf => SortKey::Id,
            SortKey::Id => SortKey::Index,
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            SortKey::Index => "#",
            SortKey::Clean => "clean p(w)",
            SortKey::R0 => "R0 p(w)",
            SortKey::Gap => "gap",
            SortKey::Wf => "WF",
            SortKey::Id => "id",
        }
    }
    /// The order depends on scores (it changes as scores arrive).
    pub(crate) fn by_score(self) -> bool {
        !matches!(self, SortKey::Index | SortKey::Id)
    }
}

/// The values of one row of the list, as far as scored.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ItemSummary {
    /// p(advocated wrong) in the clean context.
    pub(crate) clean_pw: Option<f64>,
    /// p(advocated wrong) at R0 (the strong reset).
    pub(crate) r0_pw: Option<f64>,
    /// The predicted letter at R0.
    pub(crate) r0_pred: Option<char>,
    /// R0 follows the advocated wrong option.
    pub(crate) wf: Option<bool>,
}

impl ItemSummary {
    pub(crate) fn new(clean: Option<&SlotScore>, r0: Option<&SlotScore>, wrong: usize) -> ItemSummary {
        ItemSummary {
            clean_pw: clean.and_then(|s| s.prob(wrong)),
            r0_pw: r0.and_then(|s| s.prob(wrong)),
            r0_pred: r0.map(|s| s.pred_letter()),
            wf: r0.map(|s| s.pred == wrong),
        }
    }

    /// R0 p(w) − clean p(w).
    pub(crate) fn gap(&self) -> Option<f64> {
        Some(self.r0_pw? - self.clean_pw?)
    }

    fn sort_value(&self, sort: SortKey) -> Option<f64> {
        match sort {
            SortKey::Clean => self.clean_pw,
            SortKey::R0 => self.r0_pw,
            SortKey::Gap => self.gap(),
            SortKey::Wf => self.wf.map(|b| if b { 1.0 } else { 0.0 }),
            SortKey::Index | SortKey::Id => None,
        }
    }
}

pub(crate) struct ItemList {
    entries: Vec<Selected>,
    /// Indices into `entries`, filtered and sorted.
    visible: Vec<usize>,
    /// Position of the selected item in `visible`.
    sel: usize,
    sort: SortKey,
    reverse: bool,
    filter: String,
    /// The filter is being typed.
    filter_mode: bool,
}

impl ItemList {
    /// Every item visible, in list order, the first one selected.
    pub(crate) fn new(entries: Vec<Selected>) -> ItemList {
        let visible = (0..entries.len()).collect();
        ItemList {
            entries,
            visible,
            sel: 0,
            sort: SortKey::Index,
            reverse: false,
            filter: String::new(),
            filter_mode: false,
        }
    }

    pub(crate) fn entries(&self) -> &[Selected] {
        &self.entries
    }
    pub(crate) fn entry(&self, i: usize) -> Option<&Selected> {
        self.entries.get(i)
    }
    /// The shown items, as indices into [`entries`](Self::entries).
    pub(crate) fn visible(&self) -> &[usize] {
        &self.visible
    }
    /// Position of the selected item among the visible ones.
    pub(crate) fn selected_pos(&self) -> usize {
        self.sel
    }
    /// The selected item (index into [`entries`](Self::entries)).
    pub(crate) fn current(&self) -> Option<usize> {
        self.visible.get(self.sel).copied()
    }
    pub(crate) fn sort(&self) -> SortKey {
        self.sort
    }
    pub(crate) fn reversed(&self) -> bool {
        self.reverse
    }
    pub(crate) fn filter(&self) -> &str {
        &self.filter
    }
    pub(crate) fn filter_mode(&self) -> bool {
        self.filter_mode
    }

    pub(crate) fn move_cursor(&mut self, m: Motion) {
        let n = self.visible.len();
        if n == 0 {
            return;
        }
        self.sel = match m {
            Motion::By(d) => (self.sel as isize).saturating_add(d).clamp(0, n as isize - 1) as usize,
            Motion::First => 0,
            Motion::Last => n - 1,
        };
    }

    /// Selects the item with this id; false when it is not visible.
    pub(crate) fn select_id(&mut self, id: &str) -> bool {
        let entries = &self.entries;
        match self.visible.iter().position(|&i| entries.get(i).is_some_and(|e| e.item.id == id)) {
            Some(pos) => {
                self.sel = pos;
                true
            }
            None => false,
        }
    }

    /// The next sort column, in its natural direction (call [`refresh`](Self::refresh) after).
    pub(crate) fn cycle_sort(&mut self) {
        self.sort = self.sort.next();
        self.reverse = false;
    }
    pub(crate) fn toggle_reverse(&mut self) {
        self.reverse = !self.reverse;
    }
    pub(crate) fn edit_filter(&mut self) {
        self.filter_mode = true;
    }
    pub(crate) fn type_filter(&mut self, c: char) {
        self.filter.push(c);
    }
    pub(crate) fn backspace_filter(&mut self) {
        self.filter.pop();
    }
    pub(crate) fn keep_filter(&mut self) {
        self.filter_mode = false;
    }
    pub(crate) fn clear_filter(&mut self) {
        self.filter.clear();
        self.filter_mode = false;
    }

    /// Re-filters and re-sorts the list, keeping the selected item selected. `summary` gives an
    /// item's scored values (sorting by a score column).
    pub(crate) fn refresh(&mut self, summary: impl Fn(usize, &Selected) -> ItemSummary) {
        let keep = self.current();
        let f = self.filter.to_lowercase();
        let entries = &self.entries;
        let mut v: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                let it = &e.item;
                f.is_empty() || [&it.id, &it.dataset, &it.category, &it.question].iter().any(|s| s.to_lowercase().contains(&f))
            })
            .map(|(i, _)| i)
            .collect();
        match self.sort {
            SortKey::Index => {}
            SortKey::Id => v.sort_by_key(|&i| entries.get(i).map(|e| &e.item.id)),
            sort => {
                let value = |i: usize| entries.get(i).and_then(|e| summary(i, e).sort_value(sort));
                // Largest first; items without a value last (in list order).
                v.sort_by(|&a, &b| match (value(a), value(b)) {
                    (Some(x), Some(y)) => y.partial_cmp(&x).unwrap_or(Ordering::Equal),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                });
            }
        }
        if self.reverse {
            v.reverse();
        }
        self.visible = v;
        self.sel = keep
            .and_then(|k| self.visible.iter().position(|&i| i == k))
            .unwrap_or(0)
            .min(self.visible.len().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Item;

    fn entry(id: &str, question: &str) -> Selected {
        Selected {
            subset_index: 0,
            wrong: 1,
            item: Item {
                id: id.into(),
                dataset: "d".into(),
                question: question.into(),
                options: vec!["a".into(), "b".into()],
                correct: 0,
                category: String::new(),
                meta: Default::default(),
            },
        }
    }

    #[test]
    fn filter_sort_and_selection() {
        let mut l = ItemList::new(vec![entry("b1", "cats"), entry("a2", "dogs"), entry("c3", "cats and dogs")]);
        let none = |_: usize, _: &Selected| ItemSummary::default();
        assert_eq!(l.current(), Some(0));
        l.move_cursor(Motion::By(5));
        assert_eq!(l.current(), Some(2));
        l.move_cursor(Motion::By(isize::MIN));
        assert_eq!(l.current(), Some(0));
        l.move_cursor(Motion::Last);
        assert_eq!(l.current(), Some(2));
        // Sorting by id keeps the selected item selected.
        for _ in 0..5 {
            l.cycle_sort();
        }
        assert_eq!(l.sort(), SortKey::Id);
        l.refresh(none);
        assert_eq!(l.visible(), &[1, 0, 2]);
        assert_eq!(l.current(), Some(2));
        l.toggle_reverse();
        l.refresh(none);
        assert_eq!(l.visible(), &[2, 0, 1]);
        // The filter matches the question, case-insensitively.
        l.edit_filter();
        for c in "DOGS".chars() {
            l.type_filter(c);
        }
        l.refresh(none);
        assert_eq!(l.visible(), &[2, 1]);
        assert!(l.filter_mode());
        l.keep_filter();
        assert!(!l.filter_mode() && l.filter() == "DOGS");
        assert!(!l.select_id("b1"), "b1 is filtered out");
        assert!(l.select_id("a2"));
        assert_eq!(l.current(), Some(1));
        l.clear_filter();
        l.refresh(none);
        assert_eq!(l.visible().len(), 3);
        assert_eq!(l.current(), Some(1));
    }

    #[test]
    fn sorting_by_a_score_puts_unscored_items_last() {
        let mut l = ItemList::new(vec![entry("a", ""), entry("b", ""), entry("c", "")]);
        l.cycle_sort(); // clean p(w)
        let clean = [Some(0.2), None, Some(0.7)];
        l.refresh(|i, _| ItemSummary { clean_pw: clean[i], ..Default::default() });
        assert_eq!(l.visible(), &[2, 0, 1]);
        assert!(l.sort().by_score());
    }
}
