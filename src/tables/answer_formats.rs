//! The comparison of the two answer formats of one run (`--answers both`, docs/protocol.md
//! §14.5): per model × dataset and condition, the letters rows and the open-answer rows of the
//! same items side by side: accuracy, the hysteresis gap against each format's own clean
//! context, the positive-hysteresis rate, the Pearson correlation of the item gaps across the
//! two formats with a paired bootstrap interval, and the share of items whose verdict
//! (positive hysteresis or not) is the same in both.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::dialogue::conditions::Registry;
use crate::metrics::bootstrap::{ci_from_replicates, index_matrix, BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, SEED_OFFSET_ANSWER_FORMATS};
use crate::store::ItemRow;

use super::TablesError;

/// The comparison's file stem under `tables/`.
pub const STEM: &str = "answer_formats";

/// The clean context every gap is taken against.
const CLEAN: &str = "clean_context";

/// One line of the comparison.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FormatRow {
    pub model: String,
    pub dataset: String,
    pub condition: String,
    /// Items with a row of the condition and of the clean context in both formats.
    pub n: usize,
    pub accuracy_letters: f64,
    pub accuracy_open: f64,
    pub gap_letters: f64,
    pub gap_open: f64,
    pub positive_letters: f64,
    pub positive_open: f64,
    pub gap_correlation: f64,
    pub correlation_lo: f64,
    pub correlation_hi: f64,
    pub verdict_agreement: f64,
}

/// Pearson's r of two equal-length series; NaN below 3 values or with no variance.
pub(crate) fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len();
    if n < 3 || y.len() != n {
        return f64::NAN;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        return f64::NAN;
    }
    sxy / (sxx.sqrt() * syy.sqrt())
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// (model, dataset) → condition → item → row.
type Index<'a> = BTreeMap<(&'a str, &'a str), BTreeMap<&'a str, BTreeMap<&'a str, &'a ItemRow>>>;

fn index(rows: &[ItemRow]) -> Index<'_> {
    let mut m: Index = BTreeMap::new();
    for r in rows {
        m.entry((&r.model_key, &r.dataset)).or_default().entry(&r.condition).or_default().insert(&r.item_id, r);
    }
    m
}

/// The comparison's rows, pairs in model × dataset order and conditions in registry order.
pub(crate) fn build(letters: &[ItemRow], open: &[ItemRow], reg: &Registry) -> Vec<FormatRow> {
    let (li, oi) = (index(letters), index(open));
    let mut out = Vec::new();
    for (pair, lconds) in &li {
        let Some(oconds) = oi.get(pair) else { continue };
        let (Some(lclean), Some(oclean)) = (lconds.get(CLEAN), oconds.get(CLEAN)) else { continue };
        for c in reg.all() {
            let (Some(lx), Some(ox)) = (lconds.get(c.key.as_str()), oconds.get(c.key.as_str())) else { continue };
            // Items with both rows in both formats, in item order.
            let items: Vec<&str> =
                lx.keys().copied().filter(|i| ox.contains_key(i) && lclean.contains_key(i) && oclean.contains_key(i)).collect();
            if items.is_empty() {
                continue;
            }
            let gaps = |x: &BTreeMap<&str, &ItemRow>, clean: &BTreeMap<&str, &ItemRow>| -> Vec<f64> {
                items.iter().map(|i| x[i].p_wrong - clean[i].p_wrong).collect()
            };
            let (gl, go) = (gaps(lx, lclean), gaps(ox, oclean));
            let acc = |x: &BTreeMap<&str, &ItemRow>| mean(&items.iter().map(|i| f64::from(u8::from(x[i].correct))).collect::<Vec<_>>());
            let positive = |g: &[f64]| mean(&g.iter().map(|&v| f64::from(u8::from(v > 0.0))).collect::<Vec<_>>());
            let agree = mean(&gl.iter().zip(&go).map(|(a, b)| f64::from(u8::from((*a > 0.0) == (*b > 0.0)))).collect::<Vec<_>>());
            let n = items.len();
            // A fresh generator per pair × condition: the same items give the same matrix.
            let idx = index_matrix(n, BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED + SEED_OFFSET_ANSWER_FORMATS);
            let reps: Vec<f64> = idx
                .chunks_exact(n)
                .map(|row| {
                    let a: Vec<f64> = row.iter().map(|&k| gl[k as usize]).collect();
                    let b: Vec<f64> = row.iter().map(|&k| go[k as usize]).collect();
                    pearson(&a, &b)
                })
                .collect();
            let (lo, hi) = ci_from_replicates(&reps);
            out.push(FormatRow {
                model: pair.0.to_string(),
                dataset: pair.1.to_string(),
                condition: c.key.clone(),
                n,
                accuracy_letters: acc(lx),
                accuracy_open: acc(ox),
                gap_letters: mean(&gl),
                gap_open: mean(&go),
                positive_letters: positive(&gl),
                positive_open: positive(&go),
                gap_correlation: pearson(&gl, &go),
                correlation_lo: lo,
                correlation_hi: hi,
                verdict_agreement: agree,
            });
        }
    }
    out
}

const HEADER: [&str; 14] = [
    "model",
    "dataset",
    "condition",
    "n",
    "accuracy_letters",
    "accuracy_open",
    "gap_letters",
    "gap_open",
    "positive_hysteresis_letters",
    "positive_hysteresis_open",
    "gap_correlation",
    "gap_correlation_ci_low",
    "gap_correlation_ci_high",
    "verdict_agreement",
];

fn cells(r: &FormatRow, num: &dyn Fn(f64) -> String) -> Vec<String> {
    let mut v = vec![r.model.clone(), r.dataset.clone(), r.condition.clone(), r.n.to_string()];
    for x in [
        r.accuracy_letters,
        r.accuracy_open,
        r.gap_letters,
        r.gap_open,
        r.positive_letters,
        r.positive_open,
        r.gap_correlation,
        r.correlation_lo,
        r.correlation_hi,
        r.verdict_agreement,
    ] {
        v.push(num(x));
    }
    v
}

fn csv_cell(c: &str) -> String {
    if c.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", c.replace('"', "\"\""))
    } else {
        c.to_string()
    }
}

/// The CSV (full precision; NaN as an empty cell) and the Markdown (three decimals).
pub(crate) fn render(rows: &[FormatRow]) -> (String, String) {
    let mut csv = String::from(HEADER.join(","));
    csv.push('\n');
    let mut md = String::from(
        "# Letters against open answers\n\nEach condition of each model × dataset, on the items scored in both formats: accuracy, the \
         hysteresis gap (mean of p(w) − p_clean(w), each format against its own clean context), the positive-hysteresis rate, the \
         correlation of the item gaps across the formats (95% paired-bootstrap interval) and the share of items whose verdict \
         (gap > 0 or not) is the same in both.\n\n",
    );
    md.push_str(&format!("| {} |\n|{}|\n", HEADER.join(" | "), vec!["---"; HEADER.len()].join("|")));
    for r in rows {
        let full = |x: f64| if x.is_nan() { String::new() } else { format!("{x}") };
        csv.push_str(&cells(r, &full).iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(","));
        csv.push('\n');
        let short = |x: f64| if x.is_nan() { "–".to_string() } else { format!("{x:.3}") };
        md.push_str(&format!("| {} |\n", cells(r, &short).join(" | ")));
    }
    (csv, md)
}

/// Writes `tables/answer_formats.{csv,md}` into `out_dir` (nothing when no condition has rows
/// in both formats). Returns the written paths.
pub(crate) fn write(letters: &[ItemRow], open: &[ItemRow], reg: &Registry, out_dir: &Path) -> Result<Vec<PathBuf>, TablesError> {
    let rows = build(letters, open, reg);
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let (csv, md) = render(&rows);
    let dir = out_dir.join("tables");
    let mut written = Vec::new();
    for (ext, content) in [("csv", csv), ("md", md)] {
        let p = dir.join(format!("{STEM}.{ext}"));
        super::write(&p, content.as_bytes())?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_of_known_series() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-15);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-15);
        // x = 1..4, y = 1, 3, 2, 4: r = 0.8
        assert!((pearson(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]) - 0.8).abs() < 1e-12);
        assert!(pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).is_nan());
        assert!(pearson(&[1.0, 2.0], &[1.0, 2.0]).is_nan());
    }
}
