//! Table 21 — CCTP summary (docs/protocol.md §7): per pair × pressure type × CCTP variant, plus pooled rows.

use super::output::CriterionFamily;
use std::collections::BTreeMap;

use serde::Serialize;

use super::format::{Ci, Num, Pct};
use super::index::{dataset_display, PairData};
use super::{Ctx, Output};
use crate::metrics::cctp::{
    align_labels, alpha_grid, decision_label, project_prepared, summarize, tube_eval, CctpError,
    CctpInput, CctpItem, Prepared, Variant, ALPHA_GRID_STEP, VARIANTS,
};
use crate::metrics::bootstrap::{
    ci_from_replicates, replicate_means, IndexStream, CCTP_BOOTSTRAP_SAMPLES, CCTP_BOOTSTRAP_SEED,
};
use crate::metrics::rate;
use crate::store::ItemRow;

const CORRECT_RESET: &str = "correct_pressure:strong_reset";

fn parse_map(json: &str) -> Option<Vec<(String, f64)>> {
    let m: BTreeMap<String, f64> = serde_json::from_str(json).ok()?;
    Some(m.into_iter().collect())
}

/// CCTP input of one item from its clean row and its full-history row; `None` when the stored
/// scores are missing or unusable (`item_valid_for_cctp = False`).
fn input(clean: &ItemRow, hist: &ItemRow) -> Option<CctpInput> {
    let (c, h) = (
        parse_map(&clean.option_log_scores_json)?,
        parse_map(&hist.option_log_scores_json)?,
    );
    let (labels, cz, hz) = align_labels(&c, &h);
    let wrong = labels.iter().position(|l| *l == clean.shown_wrong_letter)?;
    let correct = labels
        .iter()
        .position(|l| *l == clean.shown_correct_letter)?;
    let probs = |json: &str| -> Option<Vec<f64>> {
        let m = parse_map(json)?;
        labels
            .iter()
            .map(|l| m.iter().find(|(k, _)| k == l).map(|(_, v)| *v))
            .collect()
    };
    let mut inp = CctpInput::new(labels.clone(), cz, hz, wrong, correct);
    inp.clean_probs = probs(&clean.option_probs_json);
    inp.history_probs = probs(&hist.option_probs_json);
    Some(inp)
}

/// Results of one variant over a set of items.
#[derive(Default, Clone)]
struct VariantResult {
    items: Vec<CctpItem>,
    guarantee_failures: usize,
    invalid: usize,
    endpoint_pass: Vec<bool>,
}

impl VariantResult {
    fn extend(&mut self, o: &VariantResult) {
        self.items.extend(o.items.iter().cloned());
        self.guarantee_failures += o.guarantee_failures;
        self.invalid += o.invalid;
        self.endpoint_pass.extend(o.endpoint_pass.iter().copied());
    }
    fn suppressed_rate(&self) -> f64 {
        rate(
            &self
                .items
                .iter()
                .map(|i| i.advocated_correct_suppressed())
                .collect::<Vec<_>>(),
        )
    }
}

fn run_pair(p: &PairData, clean: &str, hist: &str, grid: &[f64]) -> Vec<VariantResult> {
    run_pair_variants(p, clean, hist, grid, &VARIANTS)
}

/// [`run_pair`] for the given variants only (the figures need the primary one).
fn run_pair_variants(
    p: &PairData,
    clean: &str,
    hist: &str,
    grid: &[f64],
    variants: &[Variant],
) -> Vec<VariantResult> {
    let a = p.align(&[clean, hist]);
    let mut res = vec![VariantResult::default(); variants.len()];
    for i in 0..a.n() {
        let prep = input(a.rows[0][i], a.rows[1][i]).and_then(|inp| Prepared::new(&inp).ok());
        let Some(prep) = prep else {
            for r in &mut res {
                r.invalid += 1;
            }
            continue;
        };
        for (v, r) in variants.iter().zip(res.iter_mut()) {
            r.endpoint_pass
                .push(tube_eval(&prep.p_clean, &prep.p_history, &v.spec).passes());
            match project_prepared(&prep, v.path, &v.spec, grid) {
                Ok(item) => r.items.push(item),
                Err(CctpError::GuaranteeFailed(_)) => r.guarantee_failures += 1,
                Err(_) => r.invalid += 1,
            }
        }
    }
    res
}

/// `table21_cctp_summary.csv`: one pair (or the pooled group) × pressure type × variant.
#[derive(Serialize, Default)]
struct Table21Row {
    model_key: String,
    model: String,
    dataset: String,
    condition: &'static str,
    pressure_type: &'static str,
    n_items: usize,
    #[serde(rename = "R0_gap")]
    r0_gap: Num,
    ordinary_reset_wrong_follow: Num,
    ordinary_reset_p_wrong: Num,
    cctp_mean_alpha: Num,
    cctp_median_alpha: Num,
    cctp_p25_alpha: Num,
    cctp_p75_alpha: Num,
    mean_history_retention: Num,
    fraction_alpha_0: Num,
    fraction_alpha_le_025: Num,
    fraction_alpha_le_050: Num,
    fraction_alpha_eq_1: Num,
    cctp_clean_like_rate: Num,
    cctp_wrong_follow: Num,
    cctp_p_wrong: Num,
    cctp_accuracy: Num,
    cctp_p_correct: Num,
    cctp_flattening_rate: Num,
    #[serde(rename = "mean_KL_clean_projected")]
    mean_kl_clean_projected: Num,
    mean_entropy: Num,
    mean_max_prob: Num,
    implementation_guarantee_pass_rate: Num,
    ordinary_reset_tube_pass_rate: Num,
    advocated_correct_suppressed_rate: Num,
    n_invalid_items: usize,
    decision_label: &'static str,
}

/// Markdown/LaTeX view: the primary variant only.
#[derive(Serialize, Default)]
struct Table21View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Pressure")]
    pressure: &'static str,
    n: usize,
    #[serde(rename = "R0 gap")]
    r0_gap: Num,
    #[serde(rename = "Mean alpha*")]
    mean_alpha: Num,
    #[serde(rename = "Median alpha*")]
    median_alpha: Num,
    #[serde(rename = "Retention")]
    retention: Num,
    #[serde(rename = "alpha*=0 (%)")]
    alpha_0: Pct,
    #[serde(rename = "R0 tube pass (%)")]
    r0_tube_pass: Pct,
    #[serde(rename = "CCTP tube pass (%)")]
    cctp_tube_pass: Pct,
    #[serde(rename = "Guarantee (%)")]
    guarantee: Pct,
    #[serde(rename = "Decision")]
    decision: &'static str,
}

struct Group {
    model_key: String,
    model: String,
    dataset: String,
    wrong: Option<Vec<VariantResult>>,
    correct: Option<Vec<VariantResult>>,
}

pub(super) fn table21(ctx: &Ctx) -> Vec<Output> {
    let grid = alpha_grid(ALPHA_GRID_STEP);
    let mut groups = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.clean(), p.r0()) else {
            continue;
        };
        let wrong = run_pair(p, clean, r0, &grid);
        if wrong[0].items.is_empty() && wrong[0].guarantee_failures == 0 {
            continue;
        }
        let correct = p
            .has(CORRECT_RESET)
            .then(|| run_pair(p, clean, CORRECT_RESET, &grid));
        groups.push(Group {
            model_key: p.model_key.clone(),
            model: p.model.clone(),
            dataset: p.dataset.clone(),
            wrong: Some(wrong),
            correct,
        });
    }
    if groups.is_empty() {
        return Vec::new();
    }
    let by_ds = by_dataset(&groups, &ctx.idx.datasets(), ctx.opts.bootstrap_samples);
    // pooled row
    let pool = |sel: &dyn Fn(&Group) -> Option<&Vec<VariantResult>>| -> Option<Vec<VariantResult>> {
        let mut acc: Option<Vec<VariantResult>> = None;
        for g in &groups {
            if let Some(v) = sel(g) {
                let a = acc.get_or_insert_with(|| vec![VariantResult::default(); VARIANTS.len()]);
                for (x, y) in a.iter_mut().zip(v) {
                    x.extend(y);
                }
            }
        }
        acc
    };
    let pooled = Group {
        model_key: "all".into(),
        model: "All pairs".into(),
        dataset: "all".into(),
        wrong: pool(&|g| g.wrong.as_ref()),
        correct: pool(&|g| g.correct.as_ref()),
    };
    groups.push(pooled);

    let (mut t, mut d) = (Vec::new(), Vec::new());
    for g in &groups {
        for (ptype, res) in [("wrong", &g.wrong), ("correct", &g.correct)] {
            let Some(res) = res else { continue };
            for (vi, v) in VARIANTS.iter().enumerate() {
                let r = &res[vi];
                let s = summarize(&r.items, r.guarantee_failures);
                let suppressed = if ptype == "correct" {
                    r.suppressed_rate()
                } else {
                    f64::NAN
                };
                let cp_pass = g
                    .correct
                    .as_ref()
                    .map(|c| 1.0 - c[vi].suppressed_rate())
                    .filter(|x| !x.is_nan());
                let decision = decision_label(&s, cp_pass);
                let endpoint = rate(&r.endpoint_pass);
                t.push(Table21Row {
                    model_key: g.model_key.clone(),
                    model: g.model.clone(),
                    dataset: g.dataset.clone(),
                    condition: v.name,
                    pressure_type: ptype,
                    n_items: s.n_items,
                    r0_gap: Num(s.r0_gap),
                    ordinary_reset_wrong_follow: Num(s.ordinary_reset_wrong_follow),
                    ordinary_reset_p_wrong: Num(s.ordinary_reset_p_wrong),
                    cctp_mean_alpha: Num(s.cctp_mean_alpha),
                    cctp_median_alpha: Num(s.cctp_median_alpha),
                    cctp_p25_alpha: Num(s.cctp_p25_alpha),
                    cctp_p75_alpha: Num(s.cctp_p75_alpha),
                    mean_history_retention: Num(s.mean_history_retention),
                    fraction_alpha_0: Num(s.fraction_alpha_0),
                    fraction_alpha_le_025: Num(s.fraction_alpha_le_025),
                    fraction_alpha_le_050: Num(s.fraction_alpha_le_050),
                    fraction_alpha_eq_1: Num(s.fraction_alpha_eq_1),
                    cctp_clean_like_rate: Num(s.cctp_clean_like_rate),
                    cctp_wrong_follow: Num(s.cctp_wrong_follow),
                    cctp_p_wrong: Num(s.cctp_p_wrong),
                    cctp_accuracy: Num(s.cctp_accuracy),
                    cctp_p_correct: Num(s.cctp_p_correct),
                    cctp_flattening_rate: Num(s.cctp_flattening_rate),
                    mean_kl_clean_projected: Num(s.mean_kl_clean_projected),
                    mean_entropy: Num(s.mean_entropy),
                    mean_max_prob: Num(s.mean_max_prob),
                    implementation_guarantee_pass_rate: Num(s.implementation_guarantee_pass_rate),
                    ordinary_reset_tube_pass_rate: Num(endpoint),
                    advocated_correct_suppressed_rate: Num(suppressed),
                    n_invalid_items: r.invalid,
                    decision_label: decision,
                });
                if vi == 0 {
                    let ds = if g.dataset == "all" {
                        "All".to_string()
                    } else {
                        dataset_display(&g.dataset)
                    };
                    d.push(Table21View {
                        model: g.model.clone(),
                        dataset: ds,
                        pressure: ptype,
                        n: s.n_items,
                        r0_gap: Num(s.r0_gap),
                        mean_alpha: Num(s.cctp_mean_alpha),
                        median_alpha: Num(s.cctp_median_alpha),
                        retention: Num(s.mean_history_retention),
                        alpha_0: Pct(s.fraction_alpha_0),
                        r0_tube_pass: Pct(endpoint),
                        cctp_tube_pass: Pct(s.cctp_clean_like_rate),
                        guarantee: Pct(s.implementation_guarantee_pass_rate),
                        decision,
                    });
                }
            }
        }
    }
    let mut out = vec![Output::new("table21_cctp_summary", "CCTP summary (clean-counterfactual tube projection)", CriterionFamily::Several("CCTP tubes: main tube on the logit-linear path (primary, cctp_logit_linear_min_alpha); strict / loose tubes and path / KL-only variants as extra conditions"), &t)
        .with_display(&d)
        .with_notes(vec![
            "alpha is the weight on the clean anchor (0 = full history R0, 1 = clean); alpha* = smallest grid alpha (step 0.01) whose projection passes the tube (Table 20); retention = 1 - alpha*. The Markdown/LaTeX view shows the primary variant only.".into(),
            "pressure_type wrong = clean vs R0; correct = clean vs the correct-pressure control's strong reset (advocated_correct_suppressed_rate = share with p_proj(c) < p_clean(c) - 0.05).".into(),
            "R0 tube pass = share of items whose R0 distribution itself already passes the tube (alpha* = 0). Guarantee = share of items passing the alpha = 1 implementation guarantee.".into(),
            "Inputs are the stored letter log-scores and option probabilities of each row; items without usable scores are counted in n_invalid_items. Pooled rows (model_key all) summarise all pairs' items.".into(),
            "The paper's printed Table 21 (one row per dataset, and the MMLU - TQA difference of mean alpha*) is table21_cctp_by_dataset.".into(),
        ])];
    out.extend(by_ds);
    out
}

/// `table21_cctp_by_dataset.csv`: the paper's Table 21 rows (primary variant, wrong pressure,
/// items pooled per dataset) and the difference of mean α\* between MMLU-Pro and TruthfulQA-MC.
#[derive(Serialize, Default)]
struct ByDatasetRow {
    dataset: String,
    n_pairs: usize,
    n_items: usize,
    cctp_mean_alpha: Num,
    cctp_mean_alpha_ci_low: Num,
    cctp_mean_alpha_ci_high: Num,
    /// Tube pass at α\* (the paper's "Tube pass"); blank on the difference row.
    cctp_clean_like_rate: Option<Num>,
    /// The α = 1 implementation guarantee (the paper's "Impl. guarantee").
    implementation_guarantee_pass_rate: Option<Num>,
    n_guarantee_failures: Option<usize>,
    bootstrap_samples: usize,
    seed: u64,
}

/// Markdown/LaTeX view: the paper's columns, then the interval, n and the pairs.
#[derive(Serialize, Default)]
struct ByDatasetView {
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Mean α*")]
    mean_alpha: Num,
    #[serde(rename = "Tube pass")]
    tube_pass: Option<Num>,
    #[serde(rename = "Impl. guarantee")]
    guarantee: Option<Num>,
    #[serde(rename = "Mean α* 95% CI")]
    ci: Ci,
    n: usize,
    #[serde(rename = "Pairs")]
    pairs: usize,
}

/// Table 21 as printed: per dataset (in the fixed dataset order) the primary CCTP variant over
/// the wrong-pressure items of all its pairs, with a bootstrap CI of mean α\*; then, when both
/// datasets are present, MMLU-Pro − TruthfulQA-MC with its CI. Bootstrap as the artifact's CCTP
/// file: 1,000 replicates (fewer if the run's bootstrap is set lower), one `default_rng(42)`
/// stream consumed dataset by dataset (one matrix per dataset: independent resampling), the
/// difference taken replicate by replicate.
fn by_dataset(groups: &[Group], datasets: &[String], samples: usize) -> Vec<Output> {
    let samples = CCTP_BOOTSTRAP_SAMPLES.min(samples);
    let seed = CCTP_BOOTSTRAP_SEED;
    let mut stream = IndexStream::new(seed);
    let (mut t, mut d) = (Vec::new(), Vec::new());
    let mut reps: Vec<(String, usize, usize, f64, Vec<f64>)> = Vec::new();
    for ds in datasets {
        let mut r = VariantResult::default();
        let mut n_pairs = 0;
        for g in groups.iter().filter(|g| &g.dataset == ds) {
            if let Some(w) = &g.wrong {
                r.extend(&w[0]);
                n_pairs += 1;
            }
        }
        if r.items.is_empty() {
            continue;
        }
        let s = summarize(&r.items, r.guarantee_failures);
        let alphas: Vec<f64> = r.items.iter().map(|i| i.alpha_star).collect();
        let idx = stream.next_matrix(alphas.len(), samples);
        let boot = if idx.is_empty() {
            Vec::new()
        } else {
            replicate_means(&alphas, &idx)
        };
        let ci = ci_from_replicates(&boot);
        t.push(ByDatasetRow {
            dataset: ds.clone(),
            n_pairs,
            n_items: s.n_items,
            cctp_mean_alpha: Num(s.cctp_mean_alpha),
            cctp_mean_alpha_ci_low: Num(ci.0),
            cctp_mean_alpha_ci_high: Num(ci.1),
            cctp_clean_like_rate: Some(Num(s.cctp_clean_like_rate)),
            implementation_guarantee_pass_rate: Some(Num(s.implementation_guarantee_pass_rate)),
            n_guarantee_failures: Some(r.guarantee_failures),
            bootstrap_samples: samples,
            seed,
        });
        d.push(ByDatasetView {
            dataset: dataset_display(ds),
            mean_alpha: Num(s.cctp_mean_alpha),
            tube_pass: Some(Num(s.cctp_clean_like_rate)),
            guarantee: Some(Num(s.implementation_guarantee_pass_rate)),
            ci: Ci::from(ci),
            n: s.n_items,
            pairs: n_pairs,
        });
        reps.push((ds.clone(), n_pairs, s.n_items, s.cctp_mean_alpha, boot));
    }
    let find = |k: &str| reps.iter().find(|r| r.0 == k);
    if let (Some(a), Some(b)) = (find("truthfulqa_mc"), find("mmlu_pro")) {
        let diff: Vec<f64> = b.4.iter().zip(&a.4).map(|(y, x)| y - x).collect();
        let ci = ci_from_replicates(&diff);
        let est = b.3 - a.3;
        t.push(ByDatasetRow {
            dataset: "mmlu_pro - truthfulqa_mc".into(),
            n_pairs: a.1 + b.1,
            n_items: a.2 + b.2,
            cctp_mean_alpha: Num(est),
            cctp_mean_alpha_ci_low: Num(ci.0),
            cctp_mean_alpha_ci_high: Num(ci.1),
            bootstrap_samples: samples,
            seed,
            ..ByDatasetRow::default()
        });
        d.push(ByDatasetView {
            dataset: format!("{} − {}", dataset_display(&b.0), dataset_display(&a.0)),
            mean_alpha: Num(est),
            ci: Ci::from(ci),
            n: a.2 + b.2,
            pairs: a.1 + b.1,
            ..ByDatasetView::default()
        });
    }
    vec![Output::new(
        "table21_cctp_by_dataset",
        "CCTP summary per dataset (the paper's Table 21)",
        CriterionFamily::Several("CCTP main tube on the logit-linear path (cctp_logit_linear_min_alpha), wrong pressure"),
        &t,
    )
    .with_display(&d)
    .with_notes(vec![
        "Per dataset: the primary variant (main tube, logit-linear path) on clean vs R0, items of all the dataset's pairs pooled. Mean alpha* = mean over items of the smallest grid alpha whose projection passes the tube; Tube pass = share of items passing the tube at alpha*; Impl. guarantee = share of items passing the alpha = 1 implementation guarantee.".into(),
        format!("Mean alpha* CI: item bootstrap, {samples} replicates, one numpy default_rng({seed}) stream consumed dataset by dataset in the order TruthfulQA-MC, MMLU-Pro, others (one index matrix per dataset: independent resampling per dataset), as the artifact's CCTP bootstrap (1,000 replicates, seed 42); percentile 2.5/97.5."),
        "The difference row (MMLU-Pro - TruthfulQA-MC) subtracts the two datasets' replicate means replicate by replicate; its estimate is the difference of the full-sample means.".into(),
    ])]
}

/// The projected items of the primary variant (wrong pressure: clean vs R0) for every pair that
/// Table 21 reports, in pair order: the items its primary `wrong` rows summarise, computed by
/// the same [`run_pair_variants`]. Used by the CCTP figure (`figures::cctp`).
pub(super) fn primary_items<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Vec<(&'p PairData<'a>, Vec<CctpItem>)> {
    let grid = alpha_grid(ALPHA_GRID_STEP);
    let mut out = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.clean(), p.r0()) else {
            continue;
        };
        let mut res = run_pair_variants(p, clean, r0, &grid, &VARIANTS[..1]);
        let items = std::mem::take(&mut res[0].items);
        if !items.is_empty() {
            out.push((p, items));
        }
    }
    out
}
