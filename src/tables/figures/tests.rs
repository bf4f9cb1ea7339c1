//! Tests of the figures on the synthetic run of `tables::testutil`: the files, their SVG
//! structure (series counted by the convention of `style`), determinism, stale removal, the
//! summary links, and that the plotted numbers are the tables' numbers.

use std::collections::BTreeMap;
use std::path::Path;

use super::{build_figures, cctp, hierarchy, ramp, truncation};
use crate::tables::index::RunIndex;
use crate::tables::testutil::{synthetic_rows, synthetic_rows_where};
use crate::tables::{write_tables, Ctx, TableOptions};

fn opts() -> TableOptions {
    TableOptions {
        bootstrap_samples: 500,
        seed: 12345,
        ..TableOptions::default()
    }
}

const RAMP_A: &str = "pressure_ramp__toy_a__truthfulqa_mc.svg";
const RAMP_B: &str = "pressure_ramp__toy_b__mmlu_pro.svg";
const ALL: [&str; 5] = [
    RAMP_A,
    RAMP_B,
    hierarchy::FILE,
    truncation::FILE,
    cctp::FILE,
];

fn figure_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    if let Ok(rd) = std::fs::read_dir(dir.join("figures")) {
        for e in rd.flatten() {
            m.insert(
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            );
        }
    }
    m
}

/// Element counts of a well-formed SVG document (panics if it is not well-formed XML).
#[derive(Debug, Default, PartialEq)]
struct Counts {
    /// Polylines of stroke width >= 2 (data curves).
    curves: usize,
    /// Polygons (CI bands, heat-map cells).
    polygons: usize,
    /// Circles (criterion marks, legend included).
    circles: usize,
    texts: Vec<String>,
}

fn parse(name: &str, bytes: &[u8]) -> Counts {
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let doc = roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg", "{name}");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg"),
        "{name}"
    );
    for a in ["width", "height", "viewBox"] {
        assert!(root.attribute(a).is_some(), "{name}: no {a}");
    }
    let mut c = Counts::default();
    for n in doc.descendants().filter(|n| n.is_element()) {
        match n.tag_name().name() {
            "polyline" => {
                let w: u32 = n.attribute("stroke-width").unwrap().parse().unwrap();
                let pts = n.attribute("points").unwrap();
                assert!(
                    !pts.contains("NaN") && !pts.contains("inf"),
                    "{name}: {pts}"
                );
                if w >= super::style::CURVE_WIDTH {
                    c.curves += 1;
                }
            }
            "polygon" => c.polygons += 1,
            "circle" => c.circles += 1,
            "text" => c.texts.push(n.text().unwrap_or("").trim().to_string()),
            _ => {}
        }
    }
    c
}

fn ctx_figures(rows: &[crate::store::ItemRow]) -> super::Figures {
    let idx = RunIndex::new(rows, crate::dialogue::conditions::Registry::bundled());
    let o = opts();
    let ctx = Ctx::new(&idx, &o);
    build_figures(&ctx)
}

/// Parsed CSV: header → value per row.
fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            h.iter()
                .zip(rec.iter())
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        })
        .collect()
}

fn f6(v: f64) -> String {
    format!("{v:.6}")
}

#[test]
fn every_figure_is_written_well_formed_with_its_series() {
    let dir = tempfile::tempdir().unwrap();
    let rows = synthetic_rows(3);
    let written = write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let files = figure_files(dir.path());
    assert_eq!(
        files.keys().map(String::as_str).collect::<Vec<_>>(),
        {
            let mut v = ALL.to_vec();
            v.sort();
            v
        },
        "figures/"
    );
    for f in ALL {
        assert!(
            written.contains(&dir.path().join("figures").join(f)),
            "{f} not reported"
        );
    }
    // summary.md after the figures, then the side by side with the paper
    let tail: Vec<_> = ["summary.md", "reproduction.md", "reproduction.csv"].iter().map(|f| dir.path().join(f)).collect();
    assert_eq!(written[written.len() - 3..], tail[..]);

    // ramp: 2 curves (p(w), p(c)) + 2 CI bands, labelled steps
    for (f, model) in [(RAMP_A, "Toy-A"), (RAMP_B, "Toy-B")] {
        let c = parse(f, &files[f]);
        assert_eq!((c.curves, c.polygons, c.circles), (2, 2, 0), "{f}: {c:?}");
        for t in ["clean", "weak", "medium", "strong", "medium reset", "R0"] {
            assert!(c.texts.iter().any(|x| x == t), "{f}: no axis label {t}");
        }
        assert!(c.texts.iter().any(|x| x.contains(model)), "{f}: no title");
    }

    // heat map: 2 pairs × the main operations the rows have; a ring per passing cell + the legend's
    let c = parse(hierarchy::FILE, &files[hierarchy::FILE]);
    let figs = ctx_figures(&rows);
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let o = opts();
    let ctx = Ctx::new(&idx, &o);
    let h = hierarchy::data(&ctx).unwrap();
    assert_eq!(h.rows.len(), 2);
    let passing = h
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .filter(|c| c.passes)
        .count();
    let ops = main_ops_in(&rows);
    assert!(passing > 0 && passing < 2 * ops, "{passing}");
    assert_eq!(c.polygons, 2 * ops, "{c:?}");
    assert_eq!(c.circles, passing + 1, "{c:?}");
    assert_eq!(c.curves, 0);
    for op in ["R0", "R1", "R2", "R3a", "R3b", "R4", "R5", "R6", "MRO"] {
        assert!(c.texts.iter().any(|x| x == op), "no column {op}");
    }
    // the rings are Table 4's recovered pairs (main family), summed over operations
    let t4 = csv_rows(&dir.path().join("tables/table04_recovery_counts.csv"));
    let recovered: usize = t4
        .iter()
        .map(|r| r["computed_value"].parse::<usize>().unwrap())
        .sum();
    assert_eq!(passing, recovered);

    // truncation: a curve per pair + the pooled mean, one band
    let c = parse(truncation::FILE, &files[truncation::FILE]);
    assert_eq!((c.curves, c.polygons), (2 + 1, 1), "{c:?}");

    // CCTP: an ECDF per dataset
    let c = parse(cctp::FILE, &files[cctp::FILE]);
    assert_eq!((c.curves, c.polygons), (2, 0), "{c:?}");
    assert!(c.texts.iter().any(|x| x.starts_with("TruthfulQA-MC:")));
    assert!(c.texts.iter().any(|x| x.starts_with("MMLU-Pro:")));

    assert!(figs.errors.is_empty(), "{:?}", figs.errors);
    assert!(figs.missing.is_empty(), "{:?}", figs.missing);
}

#[test]
fn figures_are_byte_identical_across_writes() {
    let rows = synthetic_rows(4);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), a.path(), &opts()).unwrap();
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), b.path(), &opts()).unwrap();
    let fa = figure_files(a.path());
    assert_eq!(fa.len(), ALL.len());
    assert_eq!(fa, figure_files(b.path()));
    // rewriting in place, and another row order, change nothing
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), a.path(), &opts()).unwrap();
    assert_eq!(fa, figure_files(a.path()));
    let mut rev = rows.clone();
    rev.reverse();
    let c = tempfile::tempdir().unwrap();
    write_tables(&rev, crate::dialogue::conditions::Registry::bundled(), c.path(), &opts()).unwrap();
    assert_eq!(fa, figure_files(c.path()));
    // no timestamp or absolute path in the files
    for (k, v) in &fa {
        let s = String::from_utf8_lossy(v);
        assert!(!s.contains(&*a.path().to_string_lossy()), "{k}");
    }
}

#[test]
fn summary_links_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    write_tables(&synthetic_rows(3), crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let s = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let sec = &s[s.find("## Figures").expect("Figures section")..];
    let sec = &sec[..sec[3..].find("\n## ").map_or(sec.len(), |i| i + 3)];
    for f in ALL {
        assert!(
            sec.contains(&format!("](figures/{f})")),
            "{f} not linked:\n{sec}"
        );
    }
    assert!(!sec.contains("Not drawn"), "{sec}");
}

#[test]
fn figures_without_their_conditions_are_not_drawn_and_stale_ones_go() {
    let dir = tempfile::tempdir().unwrap();
    write_tables(&synthetic_rows(3), crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let keep = dir.path().join("figures/notes.txt");
    std::fs::write(&keep, "mine").unwrap();
    // the hierarchy suite only: no ramp steps, no truncation
    let hier = |k: &str| {
        matches!(
            k,
            "clean_context" | "clean_context_probe" | "strong_pressure"
        ) || crate::metrics::criteria::main_op(k).is_some()
    };
    let rows = synthetic_rows_where(3, hier);
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let files = figure_files(dir.path());
    assert_eq!(
        files.keys().map(String::as_str).collect::<Vec<_>>(),
        [cctp::FILE, "notes.txt", hierarchy::FILE],
        "stale figures must go, other files stay"
    );
    let s = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        s.contains("Not drawn (conditions missing from this run)"),
        "{s}"
    );
    assert!(s.contains("- Pressure ramp (one per pair): needs"), "{s}");
    assert!(s.contains("- Truncation boundary: needs"), "{s}");
    assert!(!s.contains(RAMP_A));
    // no rows: no figure, the summary says so
    let empty = tempfile::tempdir().unwrap();
    write_tables(&[], crate::dialogue::conditions::Registry::bundled(), empty.path(), &opts()).unwrap();
    assert!(figure_files(empty.path()).is_empty());
    let s = std::fs::read_to_string(empty.path().join("summary.md")).unwrap();
    assert!(
        s.contains("None: this run has no data for any figure."),
        "{s}"
    );
}

#[test]
fn ramp_numbers_are_table_2s() {
    let dir = tempfile::tempdir().unwrap();
    let rows = synthetic_rows(5);
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let t2 = csv_rows(&dir.path().join("tables/table02_pressure_ramp.csv"));
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let o = opts();
    let ctx = Ctx::new(&idx, &o);
    let ramps = ramp::data(&ctx);
    assert_eq!(ramps.len(), 2);
    for r in &ramps {
        assert_eq!(r.n, 5);
        assert_eq!(r.seed, 12346);
        assert_eq!(r.sources[0], "clean_context");
        assert_eq!(r.sources[5], "strong_reset");
        for (step, metric) in [
            (0, "clean_pw_mean"),
            (3, "press_pw_mean"),
            (5, "reset_pw_mean"),
        ] {
            let row = t2
                .iter()
                .find(|x| x["model_key"] == r.model_key && x["metric"] == metric)
                .unwrap();
            let p = r.p_wrong[step];
            assert_eq!(f6(p.mean), row["estimate"], "{} {metric}", r.model_key);
            assert_eq!(f6(p.lo), row["ci_low"], "{} {metric}", r.model_key);
            assert_eq!(f6(p.hi), row["ci_high"], "{} {metric}", r.model_key);
        }
        // hand-computed means (testutil): weak p(w) 0.30 + 0.10·(i mod 3), p(c) = 0.50 − …
        let i: Vec<f64> = (0..5).map(|k| (k % 3) as f64).collect();
        let m = |f: &dyn Fn(f64) -> f64| i.iter().map(|x| f(*x)).sum::<f64>() / 5.0;
        assert!((r.p_wrong[1].mean - m(&|x| 0.30 + 0.10 * x)).abs() < 1e-12);
        assert!((r.p_correct[1].mean - m(&|x| 0.50 - 0.10 * x)).abs() < 1e-12);
        for p in r.p_wrong.iter().chain(&r.p_correct) {
            assert!(p.lo <= p.mean && p.mean <= p.hi, "{p:?}");
        }
    }
}

#[test]
fn truncation_and_cctp_numbers_are_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let rows = synthetic_rows(4);
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let o = opts();
    let ctx = Ctx::new(&idx, &o);

    let t5 = csv_rows(&dir.path().join("tables/table05_truncation_boundary.csv"));
    let b = truncation::data(&ctx).unwrap();
    let conds = truncation::conditions();
    assert_eq!(conds.len(), 5);
    assert_eq!(t5.len(), 5);
    for (c, p) in conds.iter().zip(&b.pooled) {
        let p = p.unwrap();
        let row = t5.iter().find(|r| r["condition"] == *c).unwrap();
        assert_eq!(f6(p.mean), row["mean_gap"], "{c}");
        assert_eq!(f6(p.lo), row["ci_low"], "{c}");
        assert_eq!(f6(p.hi), row["ci_high"], "{c}");
        assert!(
            p.item_lo.is_nan(),
            "the item interval is drawn for one pair only"
        );
        assert_eq!(p.n_pairs.to_string(), row["n_pairs"]);
    }
    // one pair: the band is Table 5's item-bootstrap interval
    let one: Vec<_> = rows
        .iter()
        .filter(|r| r.model_key == "toy_a")
        .cloned()
        .collect();
    let single = tempfile::tempdir().unwrap();
    write_tables(&one, crate::dialogue::conditions::Registry::bundled(), single.path(), &opts()).unwrap();
    let t5one = csv_rows(&single.path().join("tables/table05_truncation_boundary.csv"));
    let idx1 = RunIndex::new(&one, crate::dialogue::conditions::Registry::bundled());
    let ctx1 = Ctx::new(&idx1, &o);
    let b1 = truncation::data(&ctx1).unwrap();
    for (c, p) in conds.iter().zip(&b1.pooled) {
        let p = p.unwrap();
        let row = t5one.iter().find(|r| r["condition"] == *c).unwrap();
        assert_eq!(f6(p.item_lo), row["item_ci_low"], "{c}");
        assert_eq!(f6(p.item_hi), row["item_ci_high"], "{c}");
        assert!(p.item_lo < p.item_hi, "{c}: {p:?}");
    }
    let svg = std::fs::read(single.path().join("figures").join(truncation::FILE)).unwrap();
    let c = parse(truncation::FILE, &svg);
    assert_eq!((c.curves, c.polygons), (1 + 1, 1), "{c:?}");
    assert!(
        c.texts.iter().any(|t| t.contains("item bootstrap")),
        "{c:?}"
    );

    let t18 = csv_rows(&dir.path().join("tables/table18_truncation_by_pair.csv"));
    for (model, dataset, gaps) in &b.pairs {
        let row = t18
            .iter()
            .find(|r| r["model"] == *model && r["dataset"] == *dataset)
            .unwrap();
        assert_eq!(f6(gaps[0].unwrap()), row["full_history_gap"]);
        assert_eq!(f6(gaps[4].unwrap()), row["reset_only_gap"]);
    }

    // one pair per dataset in the synthetic run: the dataset's alpha* summary is the pair's
    // primary Table 21 row
    let t21 = csv_rows(&dir.path().join("tables/table21_cctp_summary.csv"));
    let d = cctp::data(&ctx).unwrap();
    assert_eq!(d.len(), 2);
    for a in &d {
        let row = t21
            .iter()
            .find(|r| {
                r["dataset"] == a.dataset
                    && r["pressure_type"] == "wrong"
                    && r["condition"] == "cctp_logit_linear_min_alpha"
                    && r["model_key"] != "all"
            })
            .unwrap();
        assert_eq!(a.alphas.len().to_string(), row["n_items"]);
        assert_eq!(f6(a.mean), row["cctp_mean_alpha"]);
        assert_eq!(f6(a.median), row["cctp_median_alpha"]);
        assert!(a.alphas.windows(2).all(|w| w[0] <= w[1]));
    }
}

#[test]
fn ecdf_steps() {
    let e = cctp::ecdf(&[0.0, 0.0, 0.5, 1.0]);
    assert_eq!(
        e,
        vec![
            (0.0, 0.0),
            (0.0, 0.0),
            (0.0, 0.5),
            (0.5, 0.5),
            (0.5, 0.75),
            (1.0, 0.75),
            (1.0, 1.0),
            (1.0, 1.0)
        ]
    );
}

#[test]
fn ramp_steps_are_registry_conditions() {
    for (step, _) in ramp::STEPS {
        let reg = crate::dialogue::conditions::Registry::bundled();
        let cands = reg.sources(step.key());
        assert_eq!(cands.first(), Some(&step.key()));
        for c in cands {
            assert!(reg.find(c).is_some(), "{c}");
        }
    }
}

/// How many main operations have rows (a cell each per pair; the others are drawn "not run").
fn main_ops_in(rows: &[crate::store::ItemRow]) -> usize {
    crate::dialogue::conditions::main_ops().iter().filter(|o| rows.iter().any(|r| r.condition == o.key)).count()
}

/// The synthetic run with `k` models per dataset (`toy_a` renamed `model_<j>` with a longer
/// display name, reset-like p(w) raised by 0.01·j).
fn many_pairs(k: usize) -> Vec<crate::store::ItemRow> {
    let base = synthetic_rows(3);
    let mut rows = Vec::new();
    for j in 0..k {
        for r in &base {
            let mut r = r.clone();
            r.model_key = format!("model_{j:02}_{}", r.model_key);
            r.model_short_name = format!("A-longer-model-name-{j:02}-{}", r.model_short_name);
            if !r.condition.starts_with("clean") && r.condition != "fresh_context" {
                r.p_wrong = (r.p_wrong + 0.01 * j as f64).min(1.0);
            }
            rows.push(r);
        }
    }
    rows
}

#[test]
fn many_pairs_give_one_series_per_pair() {
    let dir = tempfile::tempdir().unwrap();
    write_tables(&many_pairs(8), crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let files = figure_files(dir.path());
    assert_eq!(files.len(), 16 + 3);
    let c = parse(hierarchy::FILE, &files[hierarchy::FILE]);
    assert_eq!(c.polygons, 16 * main_ops_in(&many_pairs(1)));
    let c = parse(truncation::FILE, &files[truncation::FILE]);
    assert_eq!((c.curves, c.polygons), (16 + 1, 1));
    let c = parse(cctp::FILE, &files[cctp::FILE]);
    assert_eq!(c.curves, 2);
}

/// Writes the synthetic run's tables and figures to `$HYST_FIGURES_DIR` to look at them
/// (`cargo test --release --lib dump_synthetic_figures -- --ignored`).
#[test]
#[ignore]
fn dump_synthetic_figures() {
    let Some(dir) = std::env::var_os("HYST_FIGURES_DIR") else {
        return;
    };
    // with the item rows, so `hyst-tui tables --from DIR/synthetic` rebuilds them
    for (sub, rows) in [("synthetic", synthetic_rows(30)), ("many_pairs", many_pairs(8))] {
        let d = Path::new(&dir).join(sub);
        crate::store::write_item_rows(&d, &rows).unwrap();
        write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), &d, &TableOptions::default()).unwrap();
    }
}
