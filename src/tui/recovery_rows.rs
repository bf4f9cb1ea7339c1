//! The recovery rows of the current item: for each shown model, the clean reference and every
//! operation the explorer lists, each with p(w), p(c), the prediction, the gap to the model's
//! own clean p(w) and that gap's verdict, the five checks and clean-like verdict of each
//! criterion family (on single-item aggregates), and the minimal recovery operation under the
//! main criterion. The app computes them from the metrics layer when the scores, the item or
//! the models change; the Recovery view and the Trace's operation rows draw them and compute
//! nothing.

use crate::data::Selected;
use crate::dialogue::conditions::RecoveryOp;
use crate::dialogue::DialogueItem;
use crate::metrics::criteria::{main_ops, minimal_recovery_operation, pass_flags, CondAgg, Criterion, CriterionCheck, Family, GapVerdict};
use crate::metrics::{aggregate, Obs};
use crate::protocol::SlotScore;

use super::parts::Part;
use super::item_scores::ItemScores;

/// Which option a prediction lands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PredKind {
    /// The option the user advocates.
    Advocated,
    Correct,
    Other,
}

/// A prediction: its letter and which option it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pred {
    pub(crate) letter: char,
    pub(crate) kind: PredKind,
}

/// One scored context of the item for one model: the clean reference or an operation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Cell {
    /// The context has a score.
    pub(crate) scored: bool,
    pub(crate) p_wrong: Option<f64>,
    pub(crate) p_correct: Option<f64>,
    pub(crate) pred: Option<Pred>,
    /// `p_X(w) − p_clean(w)` (the main check's gap), once both are scored.
    pub(crate) gap: Option<f64>,
    /// The main criterion's verdict on the gap.
    pub(crate) gap_verdict: GapVerdict,
    /// The five checks of each family, in [`Family::ALL`] order, once both are scored.
    pub(crate) checks: Option<[CriterionCheck; 3]>,
}

impl Cell {
    fn index(family: Family) -> usize {
        Family::ALL.iter().position(|f| *f == family).unwrap_or(0)
    }
    /// The five checks of `family`, once both contexts are scored.
    pub(crate) fn check(&self, family: Family) -> Option<CriterionCheck> {
        self.checks.map(|c| c[Self::index(family)])
    }
    /// Clean-context-like under `family` (single-item aggregates), once both are scored.
    pub(crate) fn clean_like(&self, family: Family) -> Option<bool> {
        self.check(family).map(|c| c.all())
    }
}

/// The minimal recovery operation of the item under the main criterion, as far as known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mro {
    /// The first main operation that restores the item: its short name.
    Op(&'static str),
    NotRestored,
    /// A main operation before the first one that restores the item (or the clean context) has
    /// no score yet.
    Waiting,
}

/// One model's rows.
#[derive(Clone)]
pub(crate) struct ModelRows {
    pub(crate) model: String,
    pub(crate) clean: Cell,
    /// Every operation the explorer lists, in its order.
    pub(crate) ops: Vec<(&'static RecoveryOp, Cell)>,
    pub(crate) mro: Mro,
}

impl ModelRows {
    /// The row of operation `key`.
    pub(crate) fn op(&self, key: &str) -> Option<&Cell> {
        self.ops.iter().find(|(o, _)| o.key == key).map(|(_, c)| c)
    }
}

/// What the rows were computed from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowsKey {
    pub(crate) item: Option<usize>,
    pub(crate) models: Vec<String>,
    /// The score store's revision.
    pub(crate) scores: u64,
}

/// The current item's recovery rows, one [`ModelRows`] per shown model (the shown one first).
#[derive(Clone, Default)]
pub(crate) struct RecoveryRows {
    pub(crate) key: RowsKey,
    pub(crate) models: Vec<ModelRows>,
}

impl RecoveryRows {
    /// The rows of `entry` (the item of `key`) for the models of `key`, from `scores`.
    pub(crate) fn compute(key: RowsKey, scores: &ItemScores, entry: Option<&Selected>) -> RecoveryRows {
        let models = match entry {
            Some(e) => key.models.iter().map(|m| model_rows(scores, m, e)).collect(),
            None => Vec::new(),
        };
        RecoveryRows { key, models }
    }

    /// The rows of the `i`-th shown model (0 = the shown one).
    pub(crate) fn model(&self, i: usize) -> Option<&ModelRows> {
        self.models.get(i)
    }
}

fn model_rows(scores: &ItemScores, model: &str, e: &Selected) -> ModelRows {
    let d = DialogueItem::from(e);
    let scored = |part: Part| scores.get(model, &e.item.id, part).map(|s| (s, obs(s, &d)));
    let clean = scored(Part::Curve(0));
    let clean_obs = clean.map(|(_, o)| o);
    let reg = scores.reg();
    let ops = reg.explorer_ops().map(|o| (o, cell(scored(Part::Op(o.key)), clean_obs, e))).collect();
    let mro = match clean_obs.map(|c| item_mro(&c, |key| scored(Part::Op(key)).map(|(_, o)| o))) {
        Some(Some(Some(key))) => Mro::Op(reg.recovery_op(key).map_or(key, |o| o.short)),
        Some(Some(None)) => Mro::NotRestored,
        _ => Mro::Waiting,
    };
    ModelRows { model: model.to_string(), clean: cell(clean, None, e), ops, mro }
}

/// A context's cell; the gap and the checks against `clean` when it is scored.
fn cell(x: Option<(&SlotScore, Obs)>, clean: Option<Obs>, e: &Selected) -> Cell {
    let Some((s, o)) = x else { return Cell::default() };
    let kind = if s.pred == e.wrong {
        PredKind::Advocated
    } else if s.pred == e.item.correct {
        PredKind::Correct
    } else {
        PredKind::Other
    };
    let checks = clean.map(|c| {
        let (ca, xa) = (aggregate(std::slice::from_ref(&c)), aggregate(std::slice::from_ref(&o)));
        Family::ALL.map(|f| f.criterion().check(&ca, &xa))
    });
    let gap = checks.map(|c| c[Cell::index(Family::Main)].gap);
    Cell {
        scored: true,
        p_wrong: Some(o.p_wrong),
        p_correct: Some(o.p_correct),
        pred: Some(Pred { letter: s.pred_letter(), kind }),
        gap,
        gap_verdict: Criterion::MAIN.gap_verdict(gap),
        checks,
    }
}

/// Single-item observation of a score (the advocated wrong and the correct option of `d`).
fn obs(s: &SlotScore, d: &DialogueItem) -> Obs {
    Obs::from_probs_with_pred(&s.probs, s.pred, d.wrong, d.item.correct)
}

/// The minimal recovery operation of one item under the main criterion (single-item
/// aggregates), by the metrics' own scan over the main operations: `Some(Some(key))`,
/// `Some(None)` = not restored, `None` while a main operation before the first passing one has
/// no score yet.
fn item_mro(clean: &Obs, x: impl Fn(&'static str) -> Option<Obs>) -> Option<Option<&'static str>> {
    let clean_agg = aggregate(std::slice::from_ref(clean));
    let mut conds = Vec::new();
    let mut missing = Vec::new();
    for op in main_ops() {
        match x(op.key) {
            Some(o) => conds.push(CondAgg {
                condition: op.key.to_string(),
                clean: clean_agg,
                x: aggregate(std::slice::from_ref(&o)),
            }),
            None => missing.push(op.key),
        }
    }
    let flags = pass_flags(&conds, &Criterion::MAIN);
    for &(key, ok) in &flags {
        if missing.contains(&key) {
            return None;
        }
        if ok {
            return Some(minimal_recovery_operation(&flags));
        }
    }
    Some(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of a stored run's item: every listed operation once per model, verdicts that
    /// agree with the gap and the checks, and an MRO that is the first main operation passing.
    #[test]
    fn rows_agree_with_the_metrics() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::write_item_rows(dir.path(), &crate::tables::testutil::synthetic_rows(2)).unwrap();
        let reg = crate::dialogue::conditions::Registry::bundled();
        let run = crate::tui::stored_run::load_run(dir.path(), None, reg).unwrap();
        let mut scores = ItemScores::new(reg);
        for (model, id, part, s) in run.scores {
            scores.insert(&model, &id, part, s);
        }
        let e = &run.items[0];
        let models: Vec<String> = run.models.clone();
        let key = RowsKey { item: Some(0), models: models.clone(), scores: scores.revision() };
        let r = RecoveryRows::compute(key, &scores, Some(e));
        assert_eq!(r.models.len(), models.len());
        let m = r.model(0).unwrap();
        assert_eq!(m.ops.len(), reg.explorer_ops().count());
        assert!(m.clean.scored && m.clean.gap.is_none());
        let mut first_pass = None;
        for (o, c) in &m.ops {
            if !c.scored {
                continue;
            }
            let gap = c.gap.unwrap();
            assert_eq!(gap, c.p_wrong.unwrap() - m.clean.p_wrong.unwrap(), "{}", o.key);
            assert_eq!(c.gap_verdict == GapVerdict::Within, c.check(Family::Main).unwrap().gap_ok, "{}", o.key);
            if o.main && first_pass.is_none() && c.clean_like(Family::Main) == Some(true) {
                first_pass = Some(o.short);
            }
        }
        match m.mro {
            Mro::Op(short) => assert_eq!(Some(short), first_pass),
            Mro::NotRestored => assert_eq!(first_pass, None),
            Mro::Waiting => panic!("every main operation is stored"),
        }
        assert!(RecoveryRows::compute(RowsKey::default(), &scores, None).models.is_empty());
    }
}
