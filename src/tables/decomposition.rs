//! Table 10 — failure decomposition on R0 (with paired CIs, and counts).

use super::output::CriterionFamily;
use super::boot::{as_f64, paired_cis, Stat};
use serde::Serialize;

use super::common::*;
use super::format::{Ci, Num};
use super::index::dataset_short;
use super::{Ctx, Output};
use crate::metrics::bootstrap::SEED_OFFSET_DECOMPOSITION;
use crate::metrics::{
    contamination_advocated_flags, contamination_any_wrong_flags, failure_decomposition,
    DecompCell,
};

/// `table10_decomposition_counts.csv`.
#[derive(Serialize, Default)]
struct CountsRow {
    model: String,
    model_key: String,
    dataset: String,
    n: usize,
    stable_correct_count: usize,
    history_contamination_count: usize,
    context_correction_count: usize,
    knowledge_task_failure_count: usize,
    clean_correct_count: usize,
    clean_correct_to_history_wrong_count: usize,
    stable_correct_rate: Num,
    history_contamination_rate: Num,
    context_correction_rate: Num,
    knowledge_task_failure_rate: Num,
    clean_correct_to_history_wrong_rate: Num,
    /// The paper's "Hist. | clean": history_contamination_count / clean_correct_count.
    history_contamination_given_clean_correct_rate: Num,
}

/// Markdown/LaTeX view of the CI table: the paper's columns (fractions, as printed), then
/// the interval and the advocated-wrong-only rate.
#[derive(Serialize, Default)]
struct Table10View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Stable")]
    stable: Num,
    #[serde(rename = "Hist.")]
    history: Num,
    #[serde(rename = "Corr.")]
    correction: Num,
    #[serde(rename = "Fail")]
    failure: Num,
    #[serde(rename = "Hist. | clean")]
    history_given_clean_correct: Num,
    n: usize,
    #[serde(rename = "Hist. | clean 95% CI")]
    history_given_clean_correct_ci: Ci,
    #[serde(rename = "Advocated wrong | clean")]
    advocated_given_clean_correct: Num,
    #[serde(rename = "Advocated wrong | clean 95% CI")]
    advocated_given_clean_correct_ci: Ci,
}

pub(super) fn table10(ctx: &Ctx) -> Vec<Output> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_DECOMPOSITION);
    let mut long = Vec::new();
    let mut counts = Vec::new();
    let mut wide = Vec::new();
    for (p, _, a) in ctx.idx.clean_r0_pairs() {
        let n = a.n();
        let (c, r) = (a.obs(0), a.obs(1));
        let dec = failure_decomposition(&c, &r);
        let cell_flags = |cell: DecompCell| -> Vec<f64> {
            as_f64(
                &c.iter()
                    .zip(&r)
                    .map(|(x, y)| DecompCell::of(x, y) == cell)
                    .collect::<Vec<_>>(),
            )
        };
        let fl = [
            cell_flags(DecompCell::Stable),
            cell_flags(DecompCell::History),
            cell_flags(DecompCell::Correction),
            cell_flags(DecompCell::Failure),
        ];
        let contam = contamination_advocated_flags(&c, &r);
        let hist_clean = contamination_any_wrong_flags(&c, &r);
        let cis = paired_cis(
            &mut stream,
            n,
            samples,
            &[
                Stat::Mean(&fl[0]),
                Stat::Mean(&fl[1]),
                Stat::Mean(&fl[2]),
                Stat::Mean(&fl[3]),
                Stat::Ratio(&contam),
                Stat::Ratio(&hist_clean),
            ],
        );
        let est = [
            dec.stable_correct_rate,
            dec.history_contamination_rate,
            dec.context_correction_rate,
            dec.knowledge_task_failure_rate,
            dec.advocated_wrong_given_clean_correct,
            dec.hist_given_clean_correct,
        ];
        let names = [
            "stable_correct",
            "history_contamination",
            "context_correction",
            "task_failure",
            "contamination_given_clean_correct",
            "history_contamination_given_clean_correct",
        ];
        for k in 0..6 {
            let mut row = LongRow::new(
                "failure_decomposition",
                p,
                "failure_decomposition",
                names[k],
                est[k],
                cis[k],
                n,
            );
            if k >= 4 {
                row = row.notes(format!(
                    "clean_correct_denominator={}",
                    dec.clean_correct_count
                ));
            }
            long.push(row);
        }
        counts.push(CountsRow {
            model: p.model.clone(),
            model_key: p.model_key.clone(),
            dataset: p.dataset.clone(),
            n: dec.n,
            stable_correct_count: dec.stable_correct_count,
            history_contamination_count: dec.history_contamination_count,
            context_correction_count: dec.context_correction_count,
            knowledge_task_failure_count: dec.knowledge_task_failure_count,
            clean_correct_count: dec.clean_correct_count,
            clean_correct_to_history_wrong_count: dec.clean_correct_to_history_wrong_count,
            stable_correct_rate: Num(dec.stable_correct_rate),
            history_contamination_rate: Num(dec.history_contamination_rate),
            context_correction_rate: Num(dec.context_correction_rate),
            knowledge_task_failure_rate: Num(dec.knowledge_task_failure_rate),
            clean_correct_to_history_wrong_rate: Num(dec.advocated_wrong_given_clean_correct),
            history_contamination_given_clean_correct_rate: Num(dec.hist_given_clean_correct),
        });
        wide.push(Table10View {
            model: p.model.clone(),
            dataset: dataset_short(&p.dataset),
            stable: Num(est[0]),
            history: Num(est[1]),
            correction: Num(est[2]),
            failure: Num(est[3]),
            history_given_clean_correct: Num(est[5]),
            n,
            history_given_clean_correct_ci: Ci::from(cis[5]),
            advocated_given_clean_correct: Num(est[4]),
            advocated_given_clean_correct_ci: Ci::from(cis[4]),
        });
    }
    sort_by_model_dataset(&mut wide, |r| (&r.model, &r.dataset));
    let notes = vec![
        "On R0 vs clean: Stable = clean correct and R0 correct; Hist. = clean correct and R0 not correct; Corr. = clean wrong and R0 correct; Fail = clean wrong and R0 wrong (rates over all items, sum to 1).".to_string(),
        "Hist. | clean (the paper's column) = Hist. / (Stable + Hist.) = #(clean correct and R0 not correct, any wrong option) / #(clean correct): long-CSV metric history_contamination_given_clean_correct, counts-CSV history_contamination_given_clean_correct_rate.".to_string(),
        "Advocated wrong | clean = #(clean correct and R0 follows the advocated wrong answer) / #(clean correct) (the hierarchy contamination; the artifact's contamination_given_clean_correct / clean_correct_to_history_wrong_rate). It is a different, smaller number than the paper's Hist. | clean.".to_string(),
    ];
    vec![
        Output::new("table10_failure_decomposition", "Failure decomposition on R0", CriterionFamily::None, &long_table(long, samples, seed))
            .with_display(&wide)
            .with_notes({
                let mut n = notes.clone();
                n.push(format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) = base seed + 3, one matrix per pair."));
                n
            }),
        Output::new("table10_decomposition_counts", "Failure decomposition counts and rates", CriterionFamily::None, &counts).with_notes(notes),
    ]
}
