//! The letter lens across items (`hyst-tui lens`, docs/guide/inside.md): for each item, the
//! lens of the clean context, the pressured steps and the recovery operations, and per condition
//! the share of items whose advocated letter leads the correct one after each layer, with the
//! depth from which it leads for good.

use crate::data::selection::Selected;
use crate::dialogue::conditions::{self, build, Base, Registry};
use crate::dialogue::{run_ramp, Builder, Control, CurvePoint, DialogueItem};
use crate::engine::inside::InspectOptions;
use crate::engine::Engine;
use crate::prompts::PromptSet;

use super::steering::{Progress, SteerError};

/// The lens of one context of one item.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LensRow {
    pub item_id: String,
    pub condition: String,
    /// Option indices of the advocated wrong and the correct answer.
    pub wrong: usize,
    pub correct: usize,
    pub letters: Vec<char>,
    /// The scored option distribution.
    pub probs: Vec<f64>,
    /// Per layer, the option distribution of the lens.
    pub layers: Vec<Vec<f64>>,
    /// |lens − score| at the last layer.
    pub anchor: f64,
}

/// The conditions `hyst-tui lens` reads out by default: the clean context, the strongest
/// pressure, and the eight main recovery operations R0 … R6.
pub fn default_conditions(registry: &Registry) -> Vec<String> {
    let mut v = vec![CurvePoint::CleanContext.key().to_string(), CurvePoint::StrongPressure.key().to_string()];
    v.extend(registry.main_ops().iter().map(|o| o.key.to_string()));
    v
}

/// Reads out every item × condition (the ramps run unsteered, once per control).
pub fn lens_rows(
    engine: &Engine,
    registry: &Registry,
    prompts: &PromptSet,
    selected: &[Selected],
    condition_keys: &[String],
    steerings: &super::steered::Steerings,
    progress: Progress,
) -> Result<Vec<LensRow>, SteerError> {
    let conds = condition_keys
        .iter()
        .map(|k| registry.find(k).ok_or_else(|| SteerError::Failed(format!("unknown condition {k:?} (see `hyst-tui conditions`)"))))
        .collect::<Result<Vec<_>, _>>()?;
    let mut controls: Vec<Control> = Vec::new();
    for c in &conds {
        match conditions::base_of(c) {
            Base::Paper(ctl) if !controls.contains(&ctl) => controls.push(ctl),
            Base::Paper(_) => {}
            Base::Custom(_) => return Err(SteerError::Failed(format!("{} builds on a custom ramp; the lens command reads the paper's ramps", c.key))),
        }
    }
    let b = Builder::new(prompts);
    let total: usize = selected.iter().map(|s| conds.iter().filter(|c| steerings.get(&c.key).is_none_or(|op| op.scores(&s.item.dataset, &s.item.id))).count()).sum();
    let mut rows = Vec::with_capacity(total);
    for s in selected {
        let d = DialogueItem::from(s);
        let mut scorer = engine;
        let mut ramps = Vec::new();
        for &ctl in &controls {
            ramps.push((ctl, run_ramp(&mut scorer, &b, &d, ctl, &mut |_| {}).map_err(|e| format!("item {}: {e}", s.item.id))?));
        }
        let clean_letter = ramps[0].1.step(CurvePoint::CleanContext).score.pred_letter();
        for c in &conds {
            // A steering operation is read out under its steering, on held-out items only.
            let steered = steerings.get(&c.key);
            if steered.is_some_and(|op| !op.scores(&s.item.dataset, &s.item.id)) {
                continue;
            }
            let Base::Paper(ctl) = conditions::base_of(c) else { unreachable!("checked above") };
            let ramp = &ramps.iter().find(|(k, _)| *k == ctl).expect("ran above").1;
            let built = build(c, &b, &d, &ramp.letters, clean_letter);
            let letters = d.item.letters();
            let r = engine
                .inspect(&built.messages, &letters, InspectOptions { lens: true, steering: steered.map(|op| op.steering.clone()), ..Default::default() })
                .map_err(|e| format!("item {}, {}: {e}", s.item.id, c.key))?;
            rows.push(LensRow {
                item_id: s.item.id.clone(),
                condition: c.key.clone(),
                wrong: built.wrong,
                correct: built.correct,
                letters,
                probs: r.score.probs,
                layers: r.lens.unwrap_or_default(),
                anchor: r.lens_anchor.unwrap_or(f64::NAN),
            });
            if !progress("read-outs", rows.len(), total) {
                return Err(SteerError::Stopped);
            }
        }
    }
    Ok(rows)
}

/// The first layer from which p(wrong) > p(correct) at every deeper layer (`None`: not ahead at
/// the last layer).
pub fn overtaken_from(layers: &[Vec<f64>], wrong: usize, correct: usize) -> Option<usize> {
    let ahead = |p: &Vec<f64>| p.get(wrong).zip(p.get(correct)).is_some_and(|(w, c)| w > c);
    if !layers.last().is_some_and(ahead) {
        return None;
    }
    let mut from = layers.len() - 1;
    while from > 0 && ahead(&layers[from - 1]) {
        from -= 1;
    }
    Some(from)
}

/// Per condition (in `conditions`' order): per layer, the share of items whose advocated letter
/// leads the correct one.
pub fn lead_shares(rows: &[LensRow], conditions: &[String]) -> Vec<(String, Vec<f64>)> {
    conditions
        .iter()
        .map(|c| {
            let of: Vec<&LensRow> = rows.iter().filter(|r| &r.condition == c).collect();
            let n_layer = of.iter().map(|r| r.layers.len()).min().unwrap_or(0);
            let shares = (0..n_layer)
                .map(|l| of.iter().filter(|r| r.layers[l][r.wrong] > r.layers[l][r.correct]).count() as f64 / of.len() as f64)
                .collect();
            (c.clone(), shares)
        })
        .collect()
}

/// One line of the depth table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DepthRow {
    pub condition: String,
    pub n: usize,
    /// Items whose advocated letter leads at the last layer (= their score's p(w) > p(c)).
    pub wrong_ahead: usize,
    /// Over those items: the mean and the smallest and largest layer from which it leads for good.
    pub mean_depth: f64,
    pub min_depth: Option<usize>,
    pub max_depth: Option<usize>,
    /// The largest |lens − score| at the last layer over the condition's items.
    pub max_anchor: f64,
}

pub fn depth_table(rows: &[LensRow], conditions: &[String]) -> Vec<DepthRow> {
    conditions
        .iter()
        .map(|c| {
            let of: Vec<&LensRow> = rows.iter().filter(|r| &r.condition == c).collect();
            let depths: Vec<usize> = of.iter().filter_map(|r| overtaken_from(&r.layers, r.wrong, r.correct)).collect();
            DepthRow {
                condition: c.clone(),
                n: of.len(),
                wrong_ahead: depths.len(),
                mean_depth: if depths.is_empty() { f64::NAN } else { depths.iter().sum::<usize>() as f64 / depths.len() as f64 },
                min_depth: depths.iter().min().copied(),
                max_depth: depths.iter().max().copied(),
                max_anchor: of.iter().map(|r| r.anchor).fold(0.0, f64::max),
            }
        })
        .collect()
}

/// The depth table as CSV.
pub fn depth_csv(rows: &[DepthRow]) -> String {
    let opt = |v: Option<usize>| v.map(|x| x.to_string()).unwrap_or_default();
    let mut s = String::from("condition,n,wrong_ahead_at_last_layer,mean_depth,min_depth,max_depth,max_anchor\n");
    for r in rows {
        s.push_str(&format!("{},{},{},{},{},{},{}\n", r.condition, r.n, r.wrong_ahead, r.mean_depth, opt(r.min_depth), opt(r.max_depth), r.max_anchor));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(condition: &str, layers: Vec<Vec<f64>>) -> LensRow {
        LensRow { item_id: "i".into(), condition: condition.into(), wrong: 1, correct: 0, letters: vec!['A', 'B'], probs: layers.last().unwrap().clone(), layers, anchor: 0.0 }
    }

    #[test]
    fn the_advocated_letter_leads_from_the_first_layer_of_its_last_run() {
        let l = |w: f64| vec![1.0 - w, w];
        let layers = vec![l(0.6), l(0.3), l(0.6), l(0.8)];
        assert_eq!(overtaken_from(&layers, 1, 0), Some(2));
        assert_eq!(overtaken_from(&layers[..2], 1, 0), None);
        assert_eq!(overtaken_from(&[l(0.9)], 1, 0), Some(0));
    }

    #[test]
    fn shares_and_depths_per_condition() {
        let l = |w: f64| vec![1.0 - w, w];
        let rows = vec![
            row("a", vec![l(0.2), l(0.7), l(0.9)]),
            row("a", vec![l(0.6), l(0.4), l(0.3)]),
            row("b", vec![l(0.9), l(0.9), l(0.9)]),
        ];
        let conds = vec!["a".to_string(), "b".to_string()];
        let shares = lead_shares(&rows, &conds);
        assert_eq!(shares[0].1, vec![0.5, 0.5, 0.5]);
        assert_eq!(shares[1].1, vec![1.0, 1.0, 1.0]);
        let d = depth_table(&rows, &conds);
        assert_eq!((d[0].n, d[0].wrong_ahead, d[0].mean_depth, d[0].min_depth), (2, 1, 1.0, Some(1)));
        assert_eq!((d[1].wrong_ahead, d[1].max_depth), (1, Some(0)));
        assert!(depth_csv(&d).starts_with("condition,n,wrong_ahead_at_last_layer"));
    }
}

/// The figure's label of a condition: `R0 (ordinary_strong_reset)` for an operation, else its key.
pub fn condition_label(registry: &Registry, c: &str) -> String {
    match registry.recovery_op(c) {
        Some(o) => format!("{} ({})", o.short, c),
        None => c.to_string(),
    }
}

/// Writes the lens of `rows` (one model on one dataset) into `dir`: `lens.jsonl`,
/// `lens_depth.csv` and `lens.svg`. Returns the depth table.
pub fn write_lens(dir: &std::path::Path, rows: &[LensRow], conditions: &[String], registry: &Registry, model: &str, dataset: &str, n_items: usize) -> anyhow::Result<Vec<DepthRow>> {
    use anyhow::Context as _;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let write = |name: &str, text: &str| -> anyhow::Result<()> {
        let p = dir.join(name);
        crate::store::write_atomic(&p, text.as_bytes()).with_context(|| format!("cannot write {}", p.display()))
    };
    let mut jsonl = String::new();
    for r in rows {
        jsonl.push_str(&serde_json::to_string(&serde_json::json!({"model": model, "dataset": dataset, "row": r}))?);
        jsonl.push('\n');
    }
    write("lens.jsonl", &jsonl)?;
    let depth = depth_table(rows, conditions);
    write("lens_depth.csv", &depth_csv(&depth))?;
    // A condition read out on fewer items (a steering operation: held-out items only) says how many.
    let label = |c: &str| match depth.iter().find(|d| d.condition == c) {
        Some(d) if d.n != n_items => format!("{}, n = {}", condition_label(registry, c), d.n),
        _ => condition_label(registry, c),
    };
    let series: Vec<(String, Vec<f64>)> = lead_shares(rows, conditions).into_iter().map(|(c, s)| (label(&c), s)).collect();
    let svg = crate::tables::render_lens_lead(&format!("Letter lens on {model}: where the advocated letter leads"), &series, n_items)
        .map_err(|e| anyhow::anyhow!("the lens figure: {e}"))?;
    write("lens.svg", &svg)?;
    Ok(depth)
}

/// The folder of one pair's lens in a run directory: `lens/<model>__<dataset>`.
pub fn pair_dir(run: &std::path::Path, model: &str, dataset: &str) -> std::path::PathBuf {
    let safe = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect::<String>();
    run.join("lens").join(format!("{}__{}", safe(model), safe(dataset)))
}

/// `--batch --lens`: reads out the lens of the pair's items, for the default conditions the pair
/// scores and its steering operations (under their steering, held-out items only), into
/// [`pair_dir`]. A served model is skipped with a notice. Returns whether the run was stopped.
pub(super) fn read_out_pair(
    plan: &super::BatchPlan,
    engine: &Engine,
    model: &crate::config::ModelEntry,
    job: &super::pair::PairJob,
    observer: &mut dyn super::BatchObserver,
) -> anyhow::Result<bool> {
    use super::BatchEvent;
    let Some(first) = job.items.first() else { return Ok(false) };
    let dataset = first.item.dataset.clone();
    if model.endpoint.is_some() {
        let message = format!("--lens: model `{}` is served, and a server does not expose its layers: no lens for it", model.key);
        observer.event(BatchEvent::Notice { message: &message });
        return Ok(false);
    }
    let scored: Vec<&str> = job.conds.iter().map(|c| c.key.as_str()).collect();
    let mut conditions: Vec<String> = default_conditions(plan.registry).into_iter().filter(|c| scored.contains(&c.as_str())).collect();
    // (The lens reads the paper's ramps: a steering operation on a custom ramp's context is left out.)
    conditions.extend(
        job.conds.iter().filter(|c| plan.steerings.contains_key(&c.key) && matches!(conditions::base_of(c), Base::Paper(_))).map(|c| c.key.clone()),
    );
    let message = format!("--lens: reading out {} items × {} conditions of {} on {dataset}", job.items.len(), conditions.len(), model.key);
    observer.event(BatchEvent::Notice { message: &message });
    let check = observer.stop_check();
    let mut progress = |_: &str, _: usize, _: usize| !check.as_ref().is_some_and(|c| c());
    let rows = match lens_rows(engine, plan.registry, &plan.prompts, job.items, &conditions, &plan.steerings, &mut progress) {
        Ok(rows) => rows,
        Err(SteerError::Stopped) => return Ok(true),
        // The scored items stand: a failed read-out is reported, and the run goes on.
        Err(SteerError::Failed(e)) => {
            let message = format!("--lens on {} / {dataset} failed, no lens written for it: {e}", model.key);
            observer.event(BatchEvent::Notice { message: &message });
            return Ok(false);
        }
    };
    let dir = pair_dir(&plan.out, &model.key, &dataset);
    write_lens(&dir, &rows, &conditions, plan.registry, &model.key, &dataset, job.items.len())?;
    let message = format!("--lens: {}/lens.jsonl, lens_depth.csv, lens.svg", dir.display());
    observer.event(BatchEvent::Notice { message: &message });
    Ok(false)
}
