//! The item list: the selected items, the text filter, the sort column and the selection. The
//! visible list is a filtered, sorted list of indices into the items; it is rebuilt by
//! [`ItemList::refresh`], which keeps the selected item selected.
//!
//! The filter (`/`) keeps the items whose id or question text contains it, ignoring case
//! (nothing else: not the dataset, category or options).

use std::cmp::Ordering;

use super::action::Motion;
use super::parts::Part;
use super::item_scores::ItemScores;
use crate::data::Selected;
use crate::protocol::SlotScore;

/// Sort column of the item list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SortKey {
    Index,
    Clean,
    R0,
    Gap,
    /// The gap of the `k`-th compared model.
    CmpGap(usize),
    Wf,
    Id,
}

impl SortKey {
    /// The next sort column when `compared` models are compared (their gaps follow the
    /// shown model's gap).
    pub(crate) fn next(self, compared: usize) -> SortKey {
        match self {
            SortKey::Index => SortKey::Clean,
            SortKey::Clean => SortKey::R0,
            SortKey::R0 => SortKey::Gap,
            SortKey::Gap if compared > 0 => SortKey::CmpGap(0),
            SortKey::CmpGap(k) if k + 1 < compared => SortKey::CmpGap(k + 1),
            SortKey::Gap | SortKey::CmpGap(_) => SortKey::Wf,
            SortKey::Wf => SortKey::Id,
            SortKey::Id => SortKey::Index,
        }
    }
    /// The column's name (a compared model's gap: "gap"; the view adds the model).
    pub(crate) fn name(self) -> &'static str {
        match self {
            SortKey::Index => "#",
            SortKey::Clean => "clean p(w)",
            SortKey::R0 => "R0 p(w)",
            SortKey::Gap | SortKey::CmpGap(_) => "gap",
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

    /// The row of item `e` for `model`, from its clean and R0 scores.
    pub(crate) fn of(scores: &ItemScores, model: &str, e: &Selected) -> ItemSummary {
        let id = &e.item.id;
        ItemSummary::new(scores.get(model, id, Part::Curve(0)), scores.get(model, id, Part::curve(crate::dialogue::CurvePoint::StrongReset)), e.wrong)
    }

    /// The verdict the gap is coloured by.
    pub(crate) fn gap_verdict(&self) -> crate::metrics::criteria::GapVerdict {
        super::parts::gap_verdict(self.gap())
    }

    /// R0 p(w) − clean p(w).
    pub(crate) fn gap(&self) -> Option<f64> {
        Some(self.r0_pw? - self.clean_pw?)
    }

    /// The value a score column sorts by (`CmpGap` reads this summary's gap: pass the
    /// compared model's summary).
    pub(crate) fn sort_value(&self, sort: SortKey) -> Option<f64> {
        match sort {
            SortKey::Clean => self.clean_pw,
            SortKey::R0 => self.r0_pw,
            SortKey::Gap | SortKey::CmpGap(_) => self.gap(),
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

    /// The next sort column, in its natural direction, with `compared` models compared (call
    /// [`refresh`](Self::refresh) after).
    pub(crate) fn cycle_sort(&mut self, compared: usize) {
        self.sort = self.sort.next(compared);
        self.reverse = false;
    }
    /// Back to list order when the sort column is a compared model's that is gone.
    pub(crate) fn forget_compared(&mut self, compared: usize) {
        if matches!(self.sort, SortKey::CmpGap(k) if k >= compared) {
            self.sort = SortKey::Index;
            self.reverse = false;
        }
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

    /// Whether an item passes the filter: its id or question contains it, ignoring case.
    pub(crate) fn matches(e: &Selected, filter_lower: &str) -> bool {
        filter_lower.is_empty() || [&e.item.id, &e.item.question].iter().any(|s| s.to_lowercase().contains(filter_lower))
    }

    /// Re-filters and re-sorts the list, keeping the selected item selected. `value` gives an
    /// item's value in a score column (sorting by one).
    pub(crate) fn refresh(&mut self, value: impl Fn(usize, &Selected, SortKey) -> Option<f64>) {
        let keep = self.current();
        let f = self.filter.to_lowercase();
        let entries = &self.entries;
        let mut v: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| Self::matches(e, &f))
            .map(|(i, _)| i)
            .collect();
        match self.sort {
            SortKey::Index => {}
            SortKey::Id => v.sort_by_key(|&i| entries.get(i).map(|e| &e.item.id)),
            sort => {
                let values: Vec<Option<f64>> =
                    entries.iter().enumerate().map(|(i, e)| value(i, e, sort)).collect();
                let value = |i: usize| values.get(i).copied().flatten();
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
        let none = |_: usize, _: &Selected, _: SortKey| None;
        assert_eq!(l.current(), Some(0));
        l.move_cursor(Motion::By(5));
        assert_eq!(l.current(), Some(2));
        l.move_cursor(Motion::By(isize::MIN));
        assert_eq!(l.current(), Some(0));
        l.move_cursor(Motion::Last);
        assert_eq!(l.current(), Some(2));
        // Sorting by id keeps the selected item selected.
        for _ in 0..5 {
            l.cycle_sort(0);
        }
        assert_eq!(l.sort(), SortKey::Id);
        l.refresh(none);
        assert_eq!(l.visible(), &[1, 0, 2]);
        assert_eq!(l.current(), Some(2));
        l.toggle_reverse();
        l.refresh(none);
        assert_eq!(l.visible(), &[2, 0, 1]);
        // The filter matches the id or the question, case-insensitively; nothing else.
        let mut x = entry("X1", "Cats?");
        x.item.dataset = "zoo".into();
        x.item.category = "felines".into();
        x.item.options = vec!["dog".into(), "bird".into()];
        for (f, hit) in [("x1", true), ("cats", true), ("", true), ("zoo", false), ("felines", false), ("dog", false)] {
            assert_eq!(ItemList::matches(&x, f), hit, "{f:?}");
        }
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
        l.cycle_sort(0); // clean p(w)
        let clean = [Some(0.2), None, Some(0.7)];
        l.refresh(|i, _, k| ItemSummary { clean_pw: clean[i], ..Default::default() }.sort_value(k));
        assert_eq!(l.visible(), &[2, 0, 1]);
        assert!(l.sort().by_score());
    }

    #[test]
    fn compared_gaps_are_sort_columns() {
        let mut k = SortKey::Index;
        let mut seen = vec![];
        for _ in 0..8 {
            k = k.next(2);
            seen.push(k);
        }
        use SortKey::*;
        assert_eq!(seen, [Clean, R0, Gap, CmpGap(0), CmpGap(1), Wf, Id, Index]);
        assert_eq!(Gap.next(0), Wf);
        let mut l = ItemList::new(vec![entry("a", ""), entry("b", "")]);
        for _ in 0..4 {
            l.cycle_sort(1);
        }
        assert_eq!(l.sort(), CmpGap(0));
        let gaps = [Some(0.1), Some(0.5)];
        l.refresh(|i, _, k| if k == CmpGap(0) { gaps[i] } else { None });
        assert_eq!(l.visible(), &[1, 0]);
        l.forget_compared(1);
        assert_eq!(l.sort(), CmpGap(0));
        l.forget_compared(0);
        assert_eq!(l.sort(), Index);
    }
}
