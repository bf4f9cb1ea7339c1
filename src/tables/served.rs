//! The letter coverage of served scores (`aux_served_letter_coverage`): written only for runs
//! with served models, so in-process runs keep their files.
//!
//! A served score reads the letter tokens' probabilities from the server's top K next tokens; a
//! letter token outside them has a value between 0 (the one used) and a bound. Per model and
//! dataset this table counts the contexts whose letters were all seen (exact), those with a
//! bound, those whose predicted letter the unseen tokens could change, and the widest interval
//! an option probability has under the bound (a thresholded verdict, e.g. the 0.05 clean band,
//! can flip only where its distance from the threshold is below that width).

use super::output::CriterionFamily;
use serde::Serialize;

use super::format::Num;
use super::index::dataset_display;
use super::{Ctx, Output};

#[derive(Serialize, Default)]
struct CoverageRow {
    model_key: String,
    model_short_name: String,
    dataset: String,
    contexts: usize,
    exact_contexts: usize,
    bounded_contexts: usize,
    /// Largest K the server returned for a bounded context.
    top_k: usize,
    /// Largest per-token bound, in scientific notation (it is usually below 0.001).
    max_unseen_token_bound: String,
    max_option_prob_interval: Num,
    prediction_may_change: usize,
}

pub(super) fn served_coverage(ctx: &Ctx) -> Vec<Output> {
    let mut rows = Vec::new();
    for p in &ctx.idx.pairs {
        let served: Vec<_> = p
            .conds
            .values()
            .flat_map(|m| m.values())
            .filter(|r| r.provenance_kind().is_served())
            .collect();
        if served.is_empty() {
            continue;
        }
        let bounds: Vec<_> = served.iter().filter_map(|r| r.letter_bound()).collect();
        let widest = bounds
            .iter()
            .flat_map(|b| b.probs_lo.iter().zip(&b.probs_hi).map(|(lo, hi)| hi - lo))
            .fold(0.0f64, f64::max);
        rows.push(CoverageRow {
            model_key: p.model_key.clone(),
            model_short_name: p.model.clone(),
            dataset: dataset_display(&p.dataset),
            contexts: served.len(),
            exact_contexts: served.len() - bounds.len(),
            bounded_contexts: bounds.len(),
            top_k: bounds.iter().map(|b| b.k).max().unwrap_or(0),
            max_unseen_token_bound: bounds
                .iter()
                .map(|b| b.bound)
                .reduce(f64::max)
                .map(|v| format!("{v:.2e}"))
                .unwrap_or_default(),
            max_option_prob_interval: Num(widest),
            prediction_may_change: bounds.iter().filter(|b| !b.pred_fixed).count(),
        });
    }
    vec![Output::new(
        "aux_served_letter_coverage",
        "Served models: letter coverage of the answer-slot scores",
        CriterionFamily::NoneBut("coverage of the letter tokens in the server's top-K log-probabilities"),
        &rows,
    )
    .with_notes(vec![
        "A bounded context had a letter token (e.g. \" A\") outside the server's top K; it is scored as 0 and could be at most the bound. Exact contexts saw every letter token.".into(),
        "max_option_prob_interval: the widest range an option probability takes over the unseen tokens' possible values; a thresholded criterion can change only where the value is closer to its threshold than that.".into(),
        "prediction_may_change: contexts whose predicted letter is not the same for every value of the unseen tokens.".into(),
    ])]
}

#[cfg(test)]
mod tests {
    use super::super::index::RunIndex;
    use super::super::testutil::synthetic_rows;
    use super::super::{build_tables, TableOptions};
    use crate::protocol::LetterBound;

    fn coverage(rows: &[crate::store::ItemRow]) -> Option<String> {
        let idx = RunIndex::new(rows, crate::dialogue::conditions::Registry::bundled());
        let out = build_tables(&idx, &TableOptions::for_plan(None));
        out.into_iter().find(|o| o.stem == "aux_served_letter_coverage").map(|o| o.csv)
    }

    #[test]
    fn in_process_runs_have_no_coverage_table() {
        assert_eq!(coverage(&synthetic_rows(2)), None);
    }

    #[test]
    fn served_rows_are_counted_exact_bounded_and_unfixed() {
        let mut rows = synthetic_rows(2);
        let n = rows.len();
        for (i, r) in rows.iter_mut().enumerate() {
            r.provenance = "served llama-server http://127.0.0.1:8080; letters bounded (top-20)".into();
            if i % 2 == 0 {
                let b = LetterBound {
                    k: 20,
                    unseen: vec![" D".into()],
                    bound: if i == 0 { 3e-4 } else { 1e-5 },
                    probs_lo: vec![0.5, 0.3, 0.2, 0.0],
                    probs_hi: vec![0.5, 0.3, 0.2, if i == 0 { 0.25 } else { 0.01 }],
                    pred_fixed: i != 0,
                };
                r.letter_bound_json = serde_json::to_string(&b).unwrap();
            }
        }
        // A row stored twice (a duplicate the tables count once) and an in-process row of the
        // same model: the manifest's counts agree with the table's.
        rows.push(rows[0].clone());
        let mut other = rows[1].clone();
        other.condition = "in_process_only".into();
        other.provenance = "llama.cpp in-process".into();
        rows.push(other);
        let mut manifest = (0, 0, 0);
        let keys: std::collections::BTreeSet<String> = rows.iter().map(|r| r.model_key.clone()).collect();
        for k in keys {
            let mut rec = crate::store::run_dir::ServedRecord {
                api: "llama-server".into(),
                url: String::new(),
                model: None,
                reported: Default::default(),
                prompt_source: String::new(),
                top_k: 20,
                letters: "bounded".into(),
                concurrency: 1,
                provenance: String::new(),
                contexts: 0,
                bounded: 0,
                prediction_not_fixed: 0,
            };
            rec.count_coverage(&k, &rows);
            manifest = (manifest.0 + rec.contexts, manifest.1 + rec.bounded, manifest.2 + rec.prediction_not_fixed);
        }
        assert_eq!(manifest, (n, n.div_ceil(2), 1), "the manifest's served counts");
        let csv = coverage(&rows).expect("a served run has the coverage table");
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "model_key,model_short_name,dataset,contexts,exact_contexts,bounded_contexts,top_k,max_unseen_token_bound,max_option_prob_interval,prediction_may_change"
        );
        let data: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let contexts: usize = data.iter().map(|r| r[3].parse::<usize>().unwrap()).sum();
        let exact: usize = data.iter().map(|r| r[4].parse::<usize>().unwrap()).sum();
        let bounded: usize = data.iter().map(|r| r[5].parse::<usize>().unwrap()).sum();
        let unfixed: usize = data.iter().map(|r| r[9].parse::<usize>().unwrap()).sum();
        assert_eq!(contexts, n);
        assert_eq!(bounded, n.div_ceil(2));
        assert_eq!(exact, n - bounded);
        assert_eq!(unfixed, 1);
        // The pair holding row 0 shows its bound and its 0.25-wide interval.
        assert!(data.iter().any(|r| r[7] == "3.00e-4" && r[8] == "0.250000"), "{csv}");
    }
}
