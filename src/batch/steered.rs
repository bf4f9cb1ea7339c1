//! Steering operations of experiment files (`[operation.steering]`) in a run: their control
//! vectors found and checked before anything is scored, kept in the run directory, and checked
//! against each model's shape when it loads.
//!
//! A steered context is scored through the engine's read-out probe (`engine::inside`): from
//! scratch, with the control vector set there only, so no steered state meets an unsteered score
//! or the reverse. Its store key is the prompt's with the steering setting (vector hash, layers,
//! α) added ([`CachedScorer::score_steered_row`](super::CachedScorer::score_steered_row)).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Result};
use sha2::{Digest, Sha256};

use crate::dialogue::conditions::{Condition, Registry};
use crate::dialogue::recipe::{ExperimentSource, VectorFile};
use super::steering::{SplitRecord, SPLIT_FILE};
use crate::engine::inside::{ControlVector, Steering};

/// A steered operation of a run: its steering, and the items its direction was estimated on.
#[derive(Clone, Debug)]
pub struct SteeredOp {
    pub steering: Steering,
    /// Ids of the items in the training split of the direction (`split.json` beside the vector,
    /// written by `steer direction`, when it names this vector): they are never scored steered,
    /// so the operation's rows are all held-out.
    pub training: BTreeSet<String>,
    /// The dataset key the split record names (its training ids are of that dataset's items).
    pub training_dataset: Option<String>,
    /// Whether a split record naming the vector was found (without one, nothing says which items
    /// the direction was estimated on).
    pub has_split: bool,
}

impl SteeredOp {
    /// Whether the item (of dataset key `dataset`) is scored under this operation: it is not in
    /// the direction's training split.
    pub fn scores(&self, dataset: &str, item_id: &str) -> bool {
        let same_dataset = self.training_dataset.as_deref().is_none_or(|d| d == dataset);
        !(same_dataset && self.training.contains(item_id))
    }
}

/// The split record of a vector: its training ids and the dataset key they belong to.
#[derive(Clone, Default)]
struct Training {
    ids: BTreeSet<String>,
    dataset: Option<String>,
    found: bool,
}

/// The steered operations of a run, by condition key.
pub type Steerings = BTreeMap<String, SteeredOp>;

/// Where a run keeps a copy of each control vector it steers with (named by the file's SHA-256).
pub fn vectors_dir(run: &Path) -> PathBuf {
    run.join("vectors")
}

/// The recorded vector file of a steered condition: the record of `steering.vector` in the
/// experiment file that defines the condition (condition names are unique across a run's files;
/// two files may share a name).
fn recorded<'r>(registry: &'r Registry, c: &Condition, written: &str) -> Option<&'r VectorFile> {
    let defines = |e: &ExperimentSource| {
        crate::dialogue::recipe::parse_file(&e.content, &e.path, crate::dialogue::recipe::FileKind::Experiment).is_ok_and(|p| p.defs.iter().any(|d| d.name == c.key))
    };
    registry.user_experiments().iter().filter(|e| e.path == c.origin && defines(e)).flat_map(|e| &e.vectors).find(|v| v.written == written)
}

/// Reads the control vector of every steered condition in `conds` (one error line when one is
/// missing, changed or malformed): from where the experiment file found it, else from the run
/// directory's copy, whichever has the recorded bytes.
pub fn load(registry: &Registry, conds: &[&Condition], run: &Path) -> Result<Steerings> {
    let mut out = Steerings::new();
    let mut read: BTreeMap<String, (Arc<ControlVector>, Training)> = BTreeMap::new();
    for c in conds {
        let Some(spec) = c.recipe().and_then(|r| r.steering.as_ref()) else { continue };
        let Some(file) = recorded(registry, c, &spec.vector) else {
            bail!("operation `{}` of {}: its control vector {} was not found when the experiment file was read", c.key, c.origin, spec.vector);
        };
        let (vector, training) = match read.get(&file.sha256) {
            Some(v) => v.clone(),
            None => {
                let copy = vectors_dir(run).join(format!("{}.gguf", file.sha256));
                let at = [PathBuf::from(&file.path), copy]
                    .into_iter()
                    .filter(|p| !p.as_os_str().is_empty())
                    .find(|p| std::fs::read(p).is_ok_and(|b| hex::encode(Sha256::digest(&b)) == file.sha256));
                let Some(at) = at else {
                    bail!(
                        "operation `{}` of {}: the control vector {} is no longer what the experiment recorded (sha256 {}), and the run directory has no copy",
                        c.key,
                        c.origin,
                        file.path,
                        &file.sha256[..12]
                    );
                };
                let v = Arc::new(ControlVector::read(&at).map_err(|e| anyhow::anyhow!("operation `{}`: {e}", c.key))?);
                let training = training_split(&at, &split_copy(run, &file.sha256), &v)?;
                read.insert(file.sha256.clone(), (v.clone(), training.clone()));
                (v, training)
            }
        };
        let layers = spec.layers.unwrap_or_else(|| vector.span());
        // Layers the vector has no direction for are refused here, before any model loads.
        let missing = vector.missing_layers(layers);
        if let (Some(first), Some(last)) = (missing.first(), missing.last()) {
            let (lo, hi) = vector.span();
            bail!("operation `{}` of {}: steering layers {}-{}: the control vector has no direction for layer(s) {first}-{last} (it has {lo}-{hi})", c.key, c.origin, layers.0, layers.1);
        }
        let steering = Steering { vector, alpha: spec.alpha, layers };
        out.insert(c.key.clone(), SteeredOp { steering, training: training.ids, training_dataset: training.dataset, has_split: training.found });
    }
    Ok(out)
}

/// The run directory's copy of the split record of a vector.
fn split_copy(run: &Path, sha256: &str) -> PathBuf {
    vectors_dir(run).join(format!("{sha256}.{SPLIT_FILE}"))
}

/// The split record beside a vector file (`split.json` in its folder), if one is there.
fn split_beside(vector: &Path) -> PathBuf {
    vector.parent().unwrap_or(Path::new(".")).join(SPLIT_FILE)
}

/// The training items of the direction `v` read from `at`: from the split record beside it, else
/// the run's copy, when the record names this very vector; none when there is no such record (a
/// vector made elsewhere). A record that cannot be read is an error.
fn training_split(at: &Path, copy: &Path, v: &ControlVector) -> Result<Training> {
    for p in [split_beside(at), copy.to_path_buf()] {
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        let r: SplitRecord = serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: not a split record: {e}", p.display()))?;
        if r.vector_hash == v.hash() {
            let dataset = crate::data::DatasetSpec::parse(&r.dataset).ok().map(|d| d.key());
            return Ok(Training { ids: r.split.train.into_iter().collect(), dataset, found: true });
        }
    }
    Ok(Training::default())
}

/// Keeps a copy of each control vector in the run directory (`vectors/<sha256>.gguf`, with its
/// split record), so the stored run stays whole after the original file moves (the explorer on
/// `--run` and `merge` use it; a resumed batch reads the experiment file's vector).
pub fn keep_copies(registry: &Registry, run: &Path) -> Result<()> {
    for v in registry.user_experiments().iter().flat_map(|e| &e.vectors) {
        let copy = vectors_dir(run).join(format!("{}.gguf", v.sha256));
        if copy.exists() {
            continue;
        }
        let Ok(bytes) = std::fs::read(&v.path) else { continue };
        if hex::encode(Sha256::digest(&bytes)) != v.sha256 {
            continue;
        }
        std::fs::create_dir_all(vectors_dir(run))?;
        crate::store::write_atomic(&copy, &bytes)?;
        if let Ok(split) = std::fs::read(split_beside(Path::new(&v.path))) {
            crate::store::write_atomic(&split_copy(run, &v.sha256), &split)?;
        }
    }
    Ok(())
}

/// Checks every steering fits a model of `n_layer` layers whose residual stream is `n_embd` wide.
pub fn check_fits(steerings: &Steerings, model: &str, (n_layer, n_embd): (usize, usize)) -> Result<()> {
    for (key, op) in steerings {
        let s = &op.steering;
        if let Err(e) = s.vector.fits(n_layer, n_embd, s.layers) {
            bail!("operation `{key}` on model `{model}`: {e}");
        }
    }
    Ok(())
}

/// What the manifest records of each steered operation.
pub fn records(steerings: &Steerings) -> BTreeMap<String, crate::store::run_dir::SteeredRecord> {
    steerings
        .iter()
        .map(|(k, op)| {
            let s = &op.steering;
            let rec = crate::store::run_dir::SteeredRecord { vector: s.vector.hash(), alpha: s.alpha, layers: s.layers, training_items: op.training.iter().cloned().collect() };
            (k.clone(), rec)
        })
        .collect()
}

/// One line per steered operation with items of the run in its direction's training split
/// (those items get no row of it).
pub fn held_back_notices(steerings: &Steerings, items: &[(&str, &str)]) -> Vec<String> {
    steerings
        .iter()
        .filter_map(|(key, op)| {
            if !op.has_split {
                return Some(format!(
                    "operation `{key}`: no split record (split.json of `steer direction`) names its vector, so nothing says which items the direction was estimated on: if they are among this run's, their steered rows are not held-out"
                ));
            }
            let n = items.iter().filter(|(dataset, id)| !op.scores(dataset, id)).count();
            (n > 0).then(|| {
                format!("operation `{key}`: {n} of the run's items are in its direction's training split (split.json) and are not scored steered: steering counts on held-out items only")
            })
        })
        .collect()
}

/// The steered conditions among `conds`, for a served model's refusal.
pub fn steered_keys<'c>(conds: &[&'c Condition]) -> Vec<&'c str> {
    conds.iter().filter(|c| c.is_steered()).map(|c| c.key.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialogue::recipe::ExperimentSource;

    /// An experiment file `name` in `dir` with one steering operation `op` on R0's context.
    fn experiment(dir: &Path, name: &str, op: &str, vector: &ControlVector, layers: &str) -> ExperimentSource {
        std::fs::create_dir_all(dir).unwrap();
        vector.write(&dir.join("v.gguf"), "test").unwrap();
        let text = format!("[[operation]]\nname = \"{op}\"\nshort = \"{}\"\ncontext = \"ordinary_strong_reset\"\n[operation.steering]\nvector = \"v.gguf\"\nalpha = 1\nlayers = \"{layers}\"\n", &op[..2]);
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        ExperimentSource::read(&path).unwrap()
    }

    fn vector(x: f32) -> ControlVector {
        ControlVector::new(4, (1..4).map(|l| (l, vec![x; 4]))).unwrap()
    }

    #[test]
    fn each_operation_steers_with_its_own_files_vector_even_when_two_files_share_a_name() {
        let t = tempfile::tempdir().unwrap();
        let (v1, v2) = (vector(1.0), vector(2.0));
        let a = experiment(&t.path().join("a"), "steer.toml", "s1_a", &v1, "1-3");
        let b = experiment(&t.path().join("b"), "steer.toml", "s2_b", &v2, "1-3");
        let reg = Registry::with_experiments(&[a, b]).unwrap();
        let conds: Vec<&Condition> = reg.all().iter().collect();
        let s = load(reg, &conds, t.path()).unwrap();
        assert_eq!(s["s1_a"].steering.vector.hash(), v1.hash());
        assert_eq!(s["s2_b"].steering.vector.hash(), v2.hash());
        assert!(!s["s1_a"].has_split, "no split.json beside the vector");
        // The run's copy stands in once the file is gone (a record read back from a manifest
        // has no path).
        keep_copies(reg, t.path()).unwrap();
        std::fs::remove_dir_all(t.path().join("a")).unwrap();
        let again = load(reg, &conds, t.path()).unwrap();
        assert_eq!(again["s1_a"].steering.vector.hash(), v1.hash());
    }

    #[test]
    fn layers_the_vector_lacks_are_refused_before_any_model_loads() {
        let t = tempfile::tempdir().unwrap();
        let e = experiment(t.path(), "x.toml", "s1_x", &vector(1.0), "2-9");
        let reg = Registry::with_experiments(&[e]).unwrap();
        let conds: Vec<&Condition> = reg.all().iter().collect();
        let err = load(reg, &conds, t.path()).unwrap_err().to_string();
        assert!(err.contains("steering layers 2-9: the control vector has no direction for layer(s) 4-9 (it has 1-3)"), "{err}");
    }
}
