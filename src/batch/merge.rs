//! `hyst-tui merge`: the shards of one run (`--shard K/N`, by item or by model; the tasks of a
//! `hyst-tui slurm` run) combined into one run directory.
//!
//! Shards are named one by one, by a parent directory (its sub-directories that are shard runs;
//! a `hyst-tui slurm` run directory: its `tasks/`), or by a glob (`runs/shard*`, for scripts
//! that cannot rely on the shell to expand it). The merge refuses, in one line naming the shard,
//! a shard that is incomplete, of another configuration or numeric provenance, missing from
//! 1..N, or given twice. Merging again writes the same files (item rows, tables, the shards'
//! scores in `cache/`, manifest): it is idempotent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::shard::ShardBy;
use crate::store::lock::RunLock;
use crate::store::run_dir::MANIFEST_FILE;
use crate::dialogue::recipe::ExperimentSource;
use crate::store::run_dir::runs_registry;
use crate::store::{read_item_rows, sort_rows, Manifest, RunConfig, ScoreCache};
use crate::tables::TableOptions;

/// What [`merge`] did.
pub struct MergeSummary {
    pub runs: usize,
    pub rows: usize,
    pub shards: Vec<Option<(usize, usize)>>,
    pub tables: Vec<PathBuf>,
    /// Score records in the merged run's cache.
    pub scores: usize,
}

fn is_run_dir(d: &Path) -> bool {
    d.join(MANIFEST_FILE).is_file()
}

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// `*` any run of characters, `?` one character, `[abc]` / `[a-z]` one of a set.
fn glob_match(pattern: &[char], name: &[char]) -> bool {
    match pattern.first() {
        None => name.is_empty(),
        Some('*') => (0..=name.len()).any(|i| glob_match(&pattern[1..], &name[i..])),
        Some('?') => !name.is_empty() && glob_match(&pattern[1..], &name[1..]),
        Some('[') => {
            let Some(close) = pattern.iter().skip(2).position(|c| *c == ']').map(|p| p + 2) else {
                return name.first() == Some(&'[') && glob_match(&pattern[1..], &name[1..]);
            };
            let Some(c) = name.first() else { return false };
            let set = &pattern[1..close];
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= *c && *c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == *c;
                    i += 1;
                }
            }
            hit && glob_match(&pattern[close + 1..], &name[1..])
        }
        Some(p) => name.first() == Some(p) && glob_match(&pattern[1..], &name[1..]),
    }
}

/// The directories a glob names, sorted.
fn expand_glob(pattern: &Path) -> Result<Vec<PathBuf>> {
    let mut found = vec![PathBuf::new()];
    for comp in pattern.components() {
        let part = comp.as_os_str().to_string_lossy().to_string();
        if !has_wildcard(&part) {
            for f in &mut found {
                f.push(comp.as_os_str());
            }
            continue;
        }
        let pat: Vec<char> = part.chars().collect();
        let mut next = Vec::new();
        for base in &found {
            let dir = if base.as_os_str().is_empty() { Path::new(".") } else { base.as_path() };
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if glob_match(&pat, &name.chars().collect::<Vec<_>>()) && e.path().is_dir() {
                    next.push(base.join(&name));
                }
            }
        }
        found = next;
    }
    found.sort();
    Ok(found.into_iter().filter(|p| p.is_dir()).collect())
}

/// The shard run directories that `args` name (see the module text), in order, without
/// repeats of the same path.
pub fn shard_dirs(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::new();
    for a in args {
        let named = if !a.exists() && has_wildcard(&a.to_string_lossy()) {
            let v = expand_glob(a)?;
            if v.is_empty() {
                bail!("{}: the pattern matches no directory", a.display());
            }
            v
        } else if is_run_dir(a) {
            vec![a.clone()]
        } else if a.is_dir() {
            let parent = if a.join("tasks").is_dir() { a.join("tasks") } else { a.clone() };
            let mut v: Vec<PathBuf> = std::fs::read_dir(&parent)
                .with_context(|| format!("cannot read {}", parent.display()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir() && is_run_dir(p))
                .filter(|p| Manifest::read(p).is_ok_and(|m| m.config.shard.is_some()))
                .collect();
            v.sort();
            if v.is_empty() {
                bail!("{}: holds no shard run directories (written by `batch --shard K/N` or `hyst-tui slurm`)", a.display());
            }
            v
        } else {
            bail!("{}: no such run directory", a.display());
        };
        for d in named {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    Ok(out)
}

fn provenance_text(p: &str) -> &str {
    if p.is_empty() {
        "unknown"
    } else {
        p
    }
}

/// Combines the complete shards of one run into `out`: item rows, tables, the shards' scores,
/// manifest.
pub fn merge(args: &[PathBuf], out: &Path, extra: &[ExperimentSource], command_line: String) -> Result<MergeSummary> {
    let same_as_out = |d: &Path| match (d.canonicalize(), out.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let dirs: Vec<PathBuf> = shard_dirs(args)?.into_iter().filter(|d| !same_as_out(d)).collect();
    let mut base: Option<(RunConfig, &Path)> = None;
    let mut manifests = Vec::new();
    for d in &dirs {
        RunLock::check_free(d).map_err(|e| anyhow::anyhow!("{e}: a shard still being written cannot be merged"))?;
        let m = Manifest::read(d)?;
        let shard = m.config.shard.map(|(k, n)| format!("shard {k}/{n} ")).unwrap_or_default();
        if !m.complete {
            bail!(
                "{shard}{}: the run is not complete ({} of {} items): resume it first",
                d.display(),
                m.items_done,
                m.items_total
            );
        }
        let c = m.config.without_shard();
        match &base {
            None => base = Some((c, d)),
            Some((b, first)) if b.provenance != c.provenance => bail!(
                "runs of different numeric provenance cannot be merged: {}: {}; {}: {}",
                first.display(),
                provenance_text(&b.provenance),
                d.display(),
                provenance_text(&c.provenance)
            ),
            Some((b, first)) if *b != c => bail!(
                "{shard}{}: its configuration differs from {} (mixed runs cannot be merged)",
                d.display(),
                first.display()
            ),
            _ => {}
        }
        manifests.push(m);
    }
    let Some((cfg, _)) = base else { bail!("nothing to merge") };
    check_shard_set(&dirs, &manifests)?;
    // A served model's shards must all have been scored through one server.
    let mut served: BTreeMap<String, (crate::store::run_dir::ServedRecord, &Path)> = BTreeMap::new();
    for (d, m) in dirs.iter().zip(&manifests) {
        for (key, rec) in &m.served {
            match served.get(key) {
                Some((first, at)) if first.provenance != rec.provenance => bail!(
                    "model `{key}` was scored through different servers or settings, which cannot be merged: {}: {}; {}: {}",
                    at.display(),
                    first.provenance,
                    d.display(),
                    rec.provenance
                ),
                Some(_) => {}
                None => {
                    served.insert(key.clone(), (rec.clone(), d.as_path()));
                }
            }
        }
    }
    let _lock = RunLock::acquire(out)?;
    let reg = runs_registry(&dirs, extra)?;
    let mut rows = Vec::new();
    for d in &dirs {
        // A shard's open-answer rows live in its open/ folder.
        for rd in super::pair::row_dirs(d) {
            rows.extend(read_item_rows(&rd, reg)?);
        }
    }
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert((r.model_key.clone(), r.dataset.clone(), r.item_id.clone(), r.condition.clone(), r.answer_format.clone())));
    sort_rows(&mut rows, reg);
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let tables = super::pair::write_outputs(out, &rows, reg, &TableOptions::for_plan(cfg.plan.as_ref()))?;
    let scores = merge_caches(&dirs, out)?;
    copy_vectors(&dirs, out)?;
    let items: usize = manifests.iter().map(|m| m.items_total).sum();
    let mut manifest = Manifest::new(cfg, command_line, items);
    manifest.items_done = items;
    for (key, (mut rec, _)) in served {
        rec.count_coverage(&key, &rows);
        manifest.served.insert(key, rec);
    }
    for m in &manifests {
        manifest.steered.extend(m.steered.clone());
    }
    manifest.started = String::new();
    manifest.complete = true;
    manifest.write(out)?;
    Ok(MergeSummary {
        runs: dirs.len(),
        rows: rows.len(),
        shards: manifests.iter().map(|m| m.config.shard).collect(),
        tables,
        scores,
    })
}

/// Every shard of 1..N once, all of one N and one way of splitting.
fn check_shard_set(dirs: &[PathBuf], manifests: &[Manifest]) -> Result<()> {
    let mut n_by: Option<(usize, ShardBy, &Path)> = None;
    let mut by_k: BTreeMap<usize, &Path> = BTreeMap::new();
    for (d, m) in dirs.iter().zip(manifests) {
        let Some((k, n)) = m.config.shard else {
            bail!("{}: not a shard (its run has no --shard); merge combines the shards of one run", d.display());
        };
        let by = m.config.shard_by;
        match n_by {
            None => n_by = Some((n, by, d)),
            Some((n0, by0, first)) if (n0, by0) != (n, by) => bail!(
                "shard {k}/{n} (by {by}) in {}: the shards of {} are of {n0} (by {by0}): mixed splits cannot be merged",
                d.display(),
                first.display()
            ),
            _ => {}
        }
        if let Some(other) = by_k.insert(k, d) {
            bail!("shard {k}/{n} is given twice: {} and {}", other.display(), d.display());
        }
    }
    if let Some((n, _, _)) = n_by {
        if let Some(k) = (1..=n).find(|k| !by_k.contains_key(k)) {
            let given: Vec<String> = by_k.iter().map(|(k, d)| format!("{k}/{n} in {}", d.display())).collect();
            bail!("shard {k}/{n} is missing (given: {})", given.join(", "));
        }
    }
    Ok(())
}

/// The shards' score records, in key order, as the merged run's cache (written anew).
/// The shards' copies of their control vectors (steering operations), each once, in the merged
/// run's `vectors/`.
fn copy_vectors(dirs: &[PathBuf], out: &Path) -> Result<()> {
    let to = super::steered::vectors_dir(out);
    for d in dirs {
        let Ok(files) = std::fs::read_dir(super::steered::vectors_dir(d)) else { continue };
        for f in files.flatten() {
            let target = to.join(f.file_name());
            if !target.exists() {
                std::fs::create_dir_all(&to)?;
                std::fs::copy(f.path(), &target).with_context(|| format!("cannot copy {} into {}", f.path().display(), to.display()))?;
            }
        }
    }
    Ok(())
}

fn merge_caches(dirs: &[PathBuf], out: &Path) -> Result<usize> {
    let path = out.join("cache").join("scores.jsonl");
    if path.exists() {
        std::fs::remove_file(&path).with_context(|| format!("cannot replace {}", path.display()))?;
    }
    let mut all = Vec::new();
    let mut caches = Vec::new();
    for d in dirs {
        let p = d.join("cache").join("scores.jsonl");
        if p.is_file() {
            caches.push(ScoreCache::open(&p)?);
        }
    }
    for c in &caches {
        all.extend(c.sorted_rows().into_iter().cloned());
    }
    all.sort_by(|a, b| a.key.cmp(&b.key));
    let mut merged = ScoreCache::open(&path)?;
    merged.append(&all)?;
    Ok(merged.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        glob_match(&p.chars().collect::<Vec<_>>(), &n.chars().collect::<Vec<_>>())
    }

    #[test]
    fn globs_match_like_a_shell() {
        assert!(m("task-*", "task-001"));
        assert!(m("task-00?", "task-001"));
        assert!(!m("task-00?", "task-0001"));
        assert!(m("s[12]", "s2") && !m("s[12]", "s3"));
        assert!(m("s[1-3]x", "s2x") && !m("s[1-3]x", "s4x"));
        assert!(m("*", "") && !m("?", ""));
    }

    #[test]
    fn parents_and_globs_name_the_shard_dirs() {
        let t = tempfile::tempdir().unwrap();
        let mk = |name: &str, shard: Option<&str>| {
            let d = t.path().join(name);
            std::fs::create_dir_all(&d).unwrap();
            let s = shard.map(|s| format!("[{s}]")).unwrap_or("null".into());
            let cfg = format!(
                r#"{{"models":[],"datasets":[],"n":null,"seed":42,"subset_csv":null,"advocated_csv":null,"suites":[],"limit":null,"shard":{s},"shuffle_options":null,"prompts_fingerprint":"","scoring_settings":""}}"#
            );
            let man = format!(
                r#"{{"tool":"hyst-tui","version":"0","config":{cfg},"started":"","finished":null,"command_line":"","items_done":0,"items_total":0,"complete":true}}"#
            );
            std::fs::write(d.join(MANIFEST_FILE), man).unwrap();
            d
        };
        let a = mk("run/tasks/task-001", Some("1,2"));
        let b = mk("run/tasks/task-002", Some("2,2"));
        mk("run/merged", None);
        assert_eq!(shard_dirs(&[t.path().join("run")]).unwrap(), vec![a.clone(), b.clone()]);
        assert_eq!(shard_dirs(&[t.path().join("run/tasks")]).unwrap(), vec![a.clone(), b.clone()]);
        assert_eq!(shard_dirs(&[t.path().join("run/tasks/task-*")]).unwrap(), vec![a.clone(), b.clone()]);
        assert_eq!(shard_dirs(&[b.clone(), a.clone(), b.clone()]).unwrap(), vec![b.clone(), a.clone()]);
        let e = shard_dirs(&[t.path().join("run/tasks/x*")]).unwrap_err().to_string();
        assert!(e.ends_with("the pattern matches no directory"), "{e}");
        let e = shard_dirs(&[t.path().join("nothing")]).unwrap_err().to_string();
        assert!(e.ends_with("no such run directory"), "{e}");
        let empty = t.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(shard_dirs(&[empty]).unwrap_err().to_string().contains("holds no shard run directories"));
    }
}
