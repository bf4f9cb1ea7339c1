//! Run plans (`--plan FILE`, `--plan paper`): a TOML file that says which suites run on which
//! model × dataset pairs, and which pairs each table pools. The bundled `paper` plan
//! (assets/plans/paper.toml) reproduces the paper's scopes.
//!
//! ```toml
//! [groups]                      # named model groups, usable as "@name"
//! original = ["qwen2.5-1.5b", "qwen2.5-7b"]
//! [datasets]                    # dataset key -> spec (--datasets replaces specs by key)
//! truthfulqa_mc = "truthfulqa:tqa.parquet"
//! [selection]                   # optional: n, seed
//! n = 500
//! [[run]]                       # models × datasets (or explicit pairs) get these suites
//! models = ["@original"]
//! datasets = ["truthfulqa_mc"]
//! suites = ["hierarchy", "r7"]
//! tables = ["Table 4"]          # these tables pool exactly the pairs of this entry
//! ```
//! A table named by no entry pools every pair of the run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Result};
use serde::Deserialize;

use crate::config::ModelsConfig;
use crate::data::DatasetSpec;
use crate::dialogue::Suite;
pub use crate::store::run_dir::{PlannedPair, RunPlan};

/// The bundled plan of the paper.
pub(crate) const PAPER_PLAN: &str = include_str!("../../assets/plans/paper.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    #[serde(default)]
    description: String,
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
    /// In file order (the order pairs run and tables list them).
    #[serde(default)]
    datasets: indexmap::IndexMap<String, String>,
    #[serde(default)]
    selection: PlanSelection,
    #[serde(default)]
    run: Vec<PlanEntry>,
    /// Experiment files (paths relative to the plan file), as `--experiment FILE`.
    #[serde(default)]
    experiments: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanSelection {
    n: Option<usize>,
    seed: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanEntry {
    #[serde(default)]
    models: Vec<String>,
    #[serde(default)]
    datasets: Vec<String>,
    #[serde(default)]
    pairs: Vec<(String, String)>,
    suites: Vec<String>,
    #[serde(default)]
    tables: Vec<String>,
}

/// `Table 2` for `2`, `table 2`, `Table02`; `Aux` for `aux`.
pub(crate) fn normalize_table_id(s: &str) -> Option<String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("aux") {
        return Some("Aux".into());
    }
    let digits = t.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c.is_whitespace());
    let n: u32 = digits.parse().ok()?;
    let prefix = &t[..t.len() - digits.len()];
    if !(prefix.trim().is_empty() || prefix.trim().eq_ignore_ascii_case("table")) || !(1..=23).contains(&n) {
        return None;
    }
    Some(format!("Table {n}"))
}

impl RunPlan {
    /// The experiment files a plan file names (`experiments = [...]`, relative to the plan
    /// file); none for the bundled plan. Read before the plan itself, because experiments join
    /// the condition registry first.
    pub fn experiment_files(arg: &str) -> Result<Vec<std::path::PathBuf>> {
        if arg == "paper" {
            return Ok(Vec::new());
        }
        let text = read_plan_file(arg)?;
        let f: PlanFile = toml::from_str(&text).map_err(|e| anyhow::anyhow!("run plan {arg}: {}", crate::util::toml_error(&text, &e)))?;
        let base = Path::new(arg).parent().unwrap_or(Path::new(""));
        Ok(f.experiments.iter().map(|e| base.join(e)).collect())
    }

    /// Reads `--plan`: `paper` (bundled) or a TOML file.
    pub fn load(arg: &str, models: &ModelsConfig) -> Result<RunPlan> {
        if arg == "paper" {
            return RunPlan::parse(PAPER_PLAN, "paper", models);
        }
        let text = read_plan_file(arg)?;
        RunPlan::parse(&text, arg, models)
    }

    /// Parses and checks a plan: every model in models.toml, every dataset key declared, every
    /// suite and table known.
    pub fn parse(text: &str, name: &str, models: &ModelsConfig) -> Result<RunPlan> {
        let f: PlanFile = toml::from_str(text).map_err(|e| anyhow::anyhow!("run plan {name}: {}", crate::util::toml_error(text, &e)))?;
        if f.run.is_empty() {
            bail!("run plan {name}: no [[run]] entries");
        }
        let bad = |m: String| anyhow::anyhow!("run plan {name}: {m}");
        // Groups may name other groups.
        fn expand(name: &str, groups: &BTreeMap<String, Vec<String>>, depth: usize, out: &mut Vec<String>) -> std::result::Result<(), String> {
            if depth > 8 {
                return Err(format!("group @{name} refers to itself"));
            }
            let g = groups.get(name).ok_or_else(|| format!("unknown model group @{name}"))?;
            for m in g {
                match m.strip_prefix('@') {
                    Some(inner) => expand(inner, groups, depth + 1, out)?,
                    None => out.push(m.clone()),
                }
            }
            Ok(())
        }
        let resolve_models = |list: &[String]| -> Result<Vec<String>> {
            let mut out = Vec::new();
            for m in list {
                match m.strip_prefix('@') {
                    Some(g) => expand(g, &f.groups, 0, &mut out).map_err(&bad)?,
                    None => out.push(m.clone()),
                }
            }
            for m in &out {
                models.get(m).map_err(|e| bad(e.to_string()))?;
            }
            Ok(out)
        };
        let mut datasets: Vec<(String, String)> = Vec::new();
        for (key, spec) in &f.datasets {
            let parsed = DatasetSpec::parse(spec).map_err(|e| bad(format!("dataset {key}: {e}")))?;
            if parsed.key() != *key {
                bail!(bad(format!("dataset {key}: the spec {spec:?} is a {} dataset", parsed.key())));
            }
            datasets.push((key.clone(), spec.clone()));
        }
        let known_dataset = |d: &str| -> Result<()> {
            if datasets.iter().any(|(k, _)| k == d) {
                Ok(())
            } else {
                Err(bad(format!("dataset {d:?} is not declared in [datasets]")))
            }
        };
        let mut pair_suites: BTreeMap<(String, String), BTreeSet<Suite>> = BTreeMap::new();
        let mut model_order: Vec<String> = Vec::new();
        let mut table_scopes: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
        for (i, e) in f.run.iter().enumerate() {
            let at = |m: String| bad(format!("[[run]] {}: {m}", i + 1));
            let mut suites = BTreeSet::new();
            for s in &e.suites {
                match Suite::EVERY.iter().find(|x| x.key() == s) {
                    Some(x) => {
                        suites.insert(*x);
                    }
                    None if s == "all" => suites.extend(Suite::ALL),
                    None => bail!(at(format!("unknown suite {s:?}"))),
                }
            }
            let pairs: Vec<(String, String)> = if e.pairs.is_empty() {
                if e.models.is_empty() {
                    bail!(at("needs `models` (and `datasets`) or `pairs`".into()));
                }
                let ms = resolve_models(&e.models)?;
                let ds: Vec<String> = if e.datasets.is_empty() { datasets.iter().map(|(k, _)| k.clone()).collect() } else { e.datasets.clone() };
                ms.iter().flat_map(|m| ds.iter().map(move |d| (m.clone(), d.clone()))).collect()
            } else {
                if !e.models.is_empty() || !e.datasets.is_empty() {
                    bail!(at("give either `pairs` or `models`/`datasets`, not both".into()));
                }
                for (m, _) in &e.pairs {
                    models.get(m).map_err(|err| at(err.to_string()))?;
                }
                e.pairs.clone()
            };
            for (m, d) in &pairs {
                known_dataset(d)?;
                if !model_order.contains(m) {
                    model_order.push(m.clone());
                }
                pair_suites.entry((m.clone(), d.clone())).or_default().extend(suites.iter().copied());
            }
            for t in &e.tables {
                let id = normalize_table_id(t).ok_or_else(|| at(format!("unknown table {t:?} (Table 1 … Table 23, Aux)")))?;
                table_scopes.entry(id).or_default().extend(pairs.iter().cloned());
            }
        }
        let mut pairs = Vec::new();
        for m in &model_order {
            for (d, _) in &datasets {
                if let Some(s) = pair_suites.get(&(m.clone(), d.clone())) {
                    pairs.push(PlannedPair {
                        model: m.clone(),
                        dataset: d.clone(),
                        suites: s.iter().copied().collect(),
                    });
                }
            }
        }
        Ok(RunPlan {
            name: name.to_string(),
            description: f.description,
            pairs,
            table_scopes,
            datasets,
            n: f.selection.n,
            seed: f.selection.seed,
        })
    }

    /// Replaces dataset specs by key with the ones given on the command line.
    pub(crate) fn override_datasets(&mut self, specs: &[String]) -> Result<()> {
        for spec in specs {
            let key = DatasetSpec::parse(spec)?.key();
            match self.datasets.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = spec.clone(),
                None => bail!("--datasets {spec}: the plan {} has no dataset {key}", self.name),
            }
        }
        Ok(())
    }

    /// Models in run order.
    pub(crate) fn models(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for p in &self.pairs {
            if !v.contains(&p.model) {
                v.push(p.model.clone());
            }
        }
        v
    }

    /// Every suite of any pair.
    pub(crate) fn suites(&self) -> Vec<Suite> {
        let s: BTreeSet<Suite> = self.pairs.iter().flat_map(|p| p.suites.iter().copied()).collect();
        s.into_iter().collect()
    }

    /// The suites of a pair (`None`: the pair is not in the plan).
    pub(crate) fn suites_of(&self, model: &str, dataset: &str) -> Option<&[Suite]> {
        self.pairs.iter().find(|p| p.model == model && p.dataset == dataset).map(|p| p.suites.as_slice())
    }
}

/// A run plan file's text: a bounded regular UTF-8 file without control characters (a plan may
/// come from a colleague).
fn read_plan_file(arg: &str) -> Result<String> {
    let text = crate::util::read_input_file(Path::new(arg)).map_err(|e| anyhow::anyhow!("cannot read run plan {arg}: {}", e.trim_start_matches("cannot read: ")))?;
    if let Some(m) = crate::util::toml_control_character(&text) {
        bail!("run plan {arg}: {m}");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models() -> ModelsConfig {
        ModelsConfig::bundled().unwrap()
    }

    #[test]
    fn the_paper_plan_has_the_paper_scopes() {
        let p = RunPlan::load("paper", &models()).unwrap();
        assert_eq!(p.pairs.len(), 14);
        let with = |s: Suite| p.pairs.iter().filter(|x| x.suites.contains(&s)).count();
        assert_eq!(with(Suite::Hierarchy), 14);
        assert_eq!(with(Suite::Truncation), 5);
        assert_eq!(with(Suite::Relabel), 6);
        assert_eq!(p.table_scopes["Table 2"].len(), 8);
        assert_eq!(p.table_scopes["Table 8"].len(), 6);
        assert_eq!(p.table_scopes["Table 4"].len(), 14);
        assert_eq!(p.table_scopes["Table 18"], p.table_scopes["Table 5"]);
        assert_eq!(p.models()[0], "qwen2.5-1.5b");
        assert_eq!((p.n, p.seed), (Some(500), Some(42)));
    }

    #[test]
    fn table_ids_and_mistakes() {
        assert_eq!(normalize_table_id("2").as_deref(), Some("Table 2"));
        assert_eq!(normalize_table_id("table 18").as_deref(), Some("Table 18"));
        assert_eq!(normalize_table_id("aux").as_deref(), Some("Aux"));
        assert_eq!(normalize_table_id("Table 24"), None);
        assert_eq!(normalize_table_id("Figure 2"), None);
        let m = models();
        let base = "[datasets]\nsample = \"sample\"\n";
        for (plan, needle) in [
            ("[[run]]\nmodels=[\"nope\"]\nsuites=[\"ramp\"]\n", "unknown model"),
            ("[[run]]\nmodels=[\"smollm2-135m\"]\nsuites=[\"bogus\"]\n", "unknown suite"),
            ("[[run]]\nmodels=[\"@x\"]\nsuites=[\"ramp\"]\n", "unknown model group @x"),
            ("[[run]]\nmodels=[\"smollm2-135m\"]\ndatasets=[\"mmlu_pro\"]\nsuites=[\"ramp\"]\n", "not declared"),
            ("[[run]]\nmodels=[\"smollm2-135m\"]\nsuites=[\"ramp\"]\ntables=[\"Table 99\"]\n", "unknown table"),
            ("", "no [[run]] entries"),
            ("[[run]]\nmodel=[\"smollm2-135m\"]\nsuites=[\"ramp\"]\n", "unknown field"),
        ] {
            let e = RunPlan::parse(&format!("{base}{plan}"), "t.toml", &m).unwrap_err().to_string();
            assert!(e.contains(needle) && e.starts_with("run plan t.toml"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
