//! `summary.md`: what was computed, links to every table file, criterion families, and the
//! tables that could not be built from this run.

use std::collections::BTreeSet;

use serde::Serialize;

use super::definitions::FamilyView;
use super::format::{md_escape, table_of, Cell, Table};
use super::index::{dataset_display, RunIndex};
use super::registry::TABLES;
use super::{Output, TableOptions};
use crate::metrics::bootstrap::{
    SEED_OFFSET_CONTROLS, SEED_OFFSET_DECOMPOSITION, SEED_OFFSET_PRESSURE_RAMP,
    SEED_OFFSET_RECOVERY_OPS, SEED_OFFSET_RELABEL,
};
use crate::metrics::criteria::Family;

/// A row of the `Pairs` section.
#[derive(Serialize, Default)]
struct PairView {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Model key")]
    model_key: String,
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Items")]
    items: usize,
    #[serde(rename = "Conditions")]
    conditions: usize,
}

/// A row of the `Table scopes` section.
#[derive(Serialize, Default)]
struct ScopeView {
    #[serde(rename = "Table")]
    table: String,
    #[serde(rename = "Pairs")]
    pairs: usize,
    #[serde(rename = "Model / dataset")]
    list: String,
}

/// The `Table scopes` section: which pairs each table of a run plan pools (empty without one).
fn scopes_section(opts: &TableOptions) -> String {
    if opts.scopes.is_empty() {
        return String::new();
    }
    let rows: Vec<ScopeView> = opts
        .scopes
        .iter()
        .map(|(t, pairs)| ScopeView {
            table: t.clone(),
            pairs: pairs.len(),
            list: pairs
                .iter()
                .map(|(m, d)| format!("{m}/{d}"))
                .collect::<Vec<_>>()
                .join(", "),
        })
        .collect();
    format!(
        "## Table scopes (run plan)\n\nThe run plan names the pairs these tables pool (pairs of the scope that the run lacks are simply absent); every other table pools all pairs of the run.\n\n{}\n",
        table_of(&rows).to_markdown()
    )
}

/// A row of the `Not written` section.
#[derive(Serialize, Default)]
struct MissingView {
    #[serde(rename = "Table")]
    table: &'static str,
    #[serde(rename = "Content")]
    content: &'static str,
    #[serde(rename = "Needs")]
    needs: &'static str,
}

pub(super) fn render(
    idx: &RunIndex,
    opts: &TableOptions,
    outputs: &[Output],
    figures: &super::figures::Figures,
) -> String {
    let mut s = String::from("# hyst-tui results summary\n\n");
    if idx.open_answers {
        s.push_str("Answer format: **open answers**. The questions were asked without their options and each option text was scored as the answer (docs/protocol.md §14); p(w), p(c) and every table below come from those scores. The letters rows of the same run, if it has them, are one folder up.\n\n");
    }
    s.push_str(&format!(
        "Built from {} item rows ({} model x dataset pairs). Tables follow the paper \"Reset Is Not Recovery\" and the column names of its artifact (docs/protocol.md §9); every table is written as CSV, Markdown and LaTeX under `tables/`.\n\n",
        idx.n_rows,
        idx.pairs.len()
    ));
    s.push_str("The paper's printed values next to this run's: `reproduction.md` and `reproduction.csv` (`hyst-tui compare --paper RUN_DIR` rebuilds them).\n\n");
    if idx.duplicates > 0 {
        s.push_str(&format!("Note: {} duplicate rows (same pair, condition and item) were ignored; the first one was kept.\n\n", idx.duplicates));
    }

    // pairs
    s.push_str("## Pairs\n\n");
    let pairs: Vec<PairView> = idx
        .pairs
        .iter()
        .map(|p| {
            let items: BTreeSet<&(usize, String)> =
                p.conds.values().flat_map(|m| m.keys()).collect();
            PairView {
                model: p.model.clone(),
                model_key: p.model_key.clone(),
                dataset: dataset_display(&p.dataset),
                items: items.len(),
                conditions: p.conds.len(),
            }
        })
        .collect();
    if pairs.is_empty() {
        s.push_str("No rows.\n\n");
    } else {
        s.push_str(&table_of(&pairs).to_markdown());
        s.push('\n');
    }

    s.push_str(&scopes_section(opts));

    // criterion families
    s.push_str("## Criterion families\n\n");
    s.push_str("All three clean-context-like families are computed (thresholds in Table 22). Each table below says which one it uses. The MRO rule (`mro_success`, minimal recovery operation, repair classification) is the **main** family.\n\n");
    let f: Vec<FamilyView> = Family::ALL.into_iter().map(FamilyView::of).collect();
    s.push_str(&table_of(&f).to_markdown());
    s.push_str("\n**Table 4 discrepancy.** The paper's text says Table 4 counts recoveries with the *strict* family, but its printed counts (2/14 ... 14/14, and Table 16's \"Strict\" column) are the *main*-family counts (|gap| <= 0.05; assets/paper/README.md), as in the artifact's `table4_recovery_counts.csv`. hyst-tui prints the main count under the paper's labels (Table 4 \"Recovered pairs\" as k/N, CSV `computed_value`; Table 16 \"Strict\", CSV `mro_main_recovered`) and the artifact's strict (gap <= 0.025) and loose families as separately named sensitivity columns (`strict_computed_value` / `loose_computed_value`). Table 16's \"MRO\" column is a broader rule the paper does not specify: NA.\n");
    if let Some(t4) = outputs.iter().find(|o| o.stem == "table04_recovery_counts") {
        let (lab, st, mn, lo, np) = (
            t4.table.col("condition_label"),
            t4.table.col("strict_computed_value"),
            t4.table.col("computed_value"),
            t4.table.col("loose_computed_value"),
            t4.table.col("n_pairs"),
        );
        if let (Some(lab), Some(st), Some(mn), Some(lo), Some(np)) = (lab, st, mn, lo, np) {
            let mut c = Table::new(&[
                "Operation",
                "Recovered pairs (main)",
                "strict family (gap ≤ 0.025)",
                "loose family (gap ≤ 0.075)",
            ]);
            for r in &t4.table.rows {
                let of = match (&r[mn], &r[np]) {
                    (Cell::Int(k), Cell::Int(n)) => Cell::Text(format!("{k}/{n}")),
                    (c, _) => c.clone(),
                };
                c.push(vec![r[lab].clone(), of, r[st].clone(), r[lo].clone()]);
            }
            s.push_str("\nRecovered pairs in this run:\n\n");
            s.push_str(&c.to_markdown());
        }
    }
    s.push('\n');

    // bootstrap
    s.push_str("## Bootstrap\n\n");
    s.push_str(&format!(
        "Paired item bootstrap, {} replicates, percentile 2.5/97.5 (numpy `default_rng` stream, exact draw order). Base seed {}; groups: pressure ramp and Table 9 +{} ({}), behavioural controls +{} ({}), failure decomposition +{} ({}), recovery operations +{} ({}), relabel +{} ({}). Truncation, false-context and R7 intervals use a fresh generator with the base seed per group. Point estimates never depend on the seed.\n\n",
        opts.bootstrap_samples,
        opts.seed,
        SEED_OFFSET_PRESSURE_RAMP,
        opts.seed + SEED_OFFSET_PRESSURE_RAMP,
        SEED_OFFSET_CONTROLS,
        opts.seed + SEED_OFFSET_CONTROLS,
        SEED_OFFSET_DECOMPOSITION,
        opts.seed + SEED_OFFSET_DECOMPOSITION,
        SEED_OFFSET_RECOVERY_OPS,
        opts.seed + SEED_OFFSET_RECOVERY_OPS,
        SEED_OFFSET_RELABEL,
        opts.seed + SEED_OFFSET_RELABEL,
    ));

    // tables written
    s.push_str("## Tables\n\n");
    for o in outputs {
        s.push_str(&format!(
            "- **{}** {}: [md](tables/{stem}.md) · [csv](tables/{stem}.csv) · [tex](tables/{stem}.tex) ({} rows; criterion: {})\n",
            o.id,
            md_escape(&o.title),
            o.table.rows.len(),
            md_escape(&o.family.to_string()),
            stem = o.stem
        ));
    }
    s.push('\n');

    // figures written
    s.push_str(&super::figures::summary_section(figures));

    // not written
    let missing: Vec<MissingView> = TABLES
        .iter()
        .filter(|t| !t.written(outputs) && t.id != super::output::EXPERIMENT_ID && t.id != super::output::SERVED_ID)
        .map(|t| MissingView {
            table: t.id,
            content: t.title,
            needs: t.needs,
        })
        .collect();
    s.push_str("## Not written (conditions missing from this run)\n\n");
    if missing.is_empty() {
        s.push_str("None: every table had the data it needs.\n");
    } else {
        s.push_str(&table_of(&missing).to_markdown());
    }
    s.push_str("\n## Conventions\n\n");
    for line in [
        "Clean reference = the clean probe (`clean_context_probe`, identical prompt to `clean_context`); R0 = `ordinary_strong_reset` (else the identical ramp step `strong_reset`).",
        "Hysteresis gap = mean over items of p_X(w) - p_clean(w); positive-hysteresis rate uses a strict `> 0` with no tolerance.",
        "Paired analyses use the items present in every condition they need, in `subset_index` order.",
        "CSV: floats with 6 decimals, missing values empty, booleans True/False. Markdown/LaTeX: 3 decimals, percentages with 1 decimal, missing values NA.",
    ] {
        s.push_str(&format!("- {}\n", md_escape(line)));
    }
    s
}
