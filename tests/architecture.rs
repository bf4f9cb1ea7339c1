//! The pipeline's layering, read from the imports of `src/**`: every module may use only the
//! layers below its own (src/lib.rs lists them). A `use crate::…`, a `crate::…` path, a grouped
//! `crate::{…}` or a `super::…` path that climbs out of its module and reaches a layer at or
//! above its own fails this test with the file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layers, lowest first. Modules on one line are siblings: they may not use each other.
/// `engine` (llama.cpp and served models) sits just below its users, `batch` and `tui`: the
/// store, the measures and the tables work on stored rows and never reach it.
const LAYERS: &[&[&str]] = &[
    &["protocol", "util"],
    &["config", "data", "prompts"],
    &["dialogue", "fetch", "logging"],
    &["store"],
    &["metrics"],
    &["tables", "engine"],
    &["batch"],
    &["tui"],
];

/// Files of the binary (the command line): they may use every library layer, and nothing in
/// the library may use them.
const BINARY: &[&str] = &["main", "cli", "commands"];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module path of a source file: `src/tables/registry.rs` → [tables, registry];
/// `src/metrics/cctp/mod.rs` → [metrics, cctp]; `src/lib.rs` → [].
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().to_string()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && stem != "lib" {
        parts.push(stem);
    }
    parts
}

/// Code of a line without its `//` comment (good enough for import paths: no string in our
/// sources holds `crate::`).
fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

fn ident_at(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// First path segments of every `crate::` path on a line: `crate::a::b` → a;
/// `crate::{a::x, b::{y, z}}` → a, b.
fn crate_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        // `hyst_tui::…` or `some_crate::` are not `crate::`.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut seg_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => seg_start = true,
                    c if seg_start && !c.is_whitespace() => {
                        seg_start = false;
                        let id = ident_at(&group[j..]);
                        if !id.is_empty() {
                            out.push(id);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let id = ident_at(rest);
            if !id.is_empty() {
                out.push(id);
            }
        }
    }
    out
}

/// Top-level modules reached by `super::` paths that climb to the crate root.
fn super_targets(line: &str, module: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("super::") {
        let before = rest[..i].chars().last();
        let mut tail = &rest[i..];
        rest = &rest[i + "super::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut ups = 0;
        while let Some(t) = tail.strip_prefix("super::") {
            ups += 1;
            tail = t;
        }
        if ups >= module.len() {
            // Climbed to the crate root: the next segment may be a top-level module. (Inline
            // `mod tests` blocks sit one level deeper than their file, so their `super::x` can
            // land here too; only names of top-level modules count.)
            let id = ident_at(tail);
            if rank(&id).is_some() || BINARY.contains(&id.as_str()) {
                out.push(id);
            }
        }
    }
    out
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    let mut edges: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut unknown = Vec::new();
    for f in &files {
        let module = module_path(&src, f);
        let Some(top) = module.first().cloned() else { continue }; // lib.rs
        let is_binary = BINARY.contains(&top.as_str());
        let my_rank = rank(&top);
        if my_rank.is_none() && !is_binary {
            unknown.push(format!("{}: module `{top}` is in no layer of this test", f.display()));
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let c = code(line);
            let mut targets = if is_binary { Vec::new() } else { crate_targets(c) };
            targets.extend(super_targets(c, &module));
            for t in targets {
                if t == top || t == "self" {
                    continue;
                }
                *edges.entry((top.clone(), t.clone())).or_default() += 1;
                let bad = match (my_rank, rank(&t)) {
                    _ if BINARY.contains(&t.as_str()) && !is_binary => Some("the command line is a leaf nothing in the library may use"),
                    (Some(mine), Some(theirs)) if theirs == mine => Some("a sibling on the same layer"),
                    (Some(mine), Some(theirs)) if theirs > mine => Some("a layer above"),
                    (_, None) if !BINARY.contains(&t.as_str()) => Some("a module in no layer"),
                    _ => None,
                };
                if let Some(why) = bad {
                    violations.push(format!("{}:{}: `{top}` uses `{t}` ({why}): {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    let summary: Vec<String> = edges.iter().map(|((a, b), n)| format!("{a} -> {b} ({n})")).collect();
    eprintln!("import edges:\n{}", summary.join("\n"));
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    assert!(
        violations.is_empty(),
        "{} upward or sideways imports:\n{}\n\nall edges:\n{}",
        violations.len(),
        violations.join("\n"),
        summary.join("\n")
    );
    // The test must have seen the pipeline's real edges (it would pass vacuously on a parse bug).
    for (a, b) in [("engine", "protocol"), ("dialogue", "protocol"), ("tables", "metrics"), ("batch", "engine"), ("tui", "batch")] {
        assert!(edges.contains_key(&(a.to_string(), b.to_string())), "expected edge {a} -> {b}; edges:\n{}", summary.join("\n"));
    }
}

#[test]
fn stored_results_never_reach_the_engine() {
    let engine = rank("engine").unwrap();
    for m in ["store", "metrics", "tables"] {
        assert!(rank(m).unwrap() <= engine, "`{m}` could import `engine`: it must sit on or below engine's layer");
    }
    for user in ["batch", "tui"] {
        assert!(rank(user).unwrap() > engine, "`{user}` uses the engine: it must sit above it");
    }
}

#[test]
fn the_parser_finds_every_import_form() {
    assert_eq!(crate_targets("use crate::engine::{Engine, Job};"), ["engine"]);
    assert_eq!(crate_targets("use crate::{store::X, metrics::{a, b}, tui};"), ["store", "metrics", "tui"]);
    assert_eq!(crate_targets("let x = crate::batch::run(&m);"), ["batch"]);
    assert!(crate_targets("use hyst_tui::engine::Engine;").is_empty());
    assert!(crate_targets("use other_crate::x;").is_empty());
    let m = vec!["tables".to_string(), "hierarchy".to_string()];
    assert_eq!(super_targets("use super::super::tui::App;", &m), ["tui"]);
    assert!(super_targets("use super::index::RunIndex;", &m).is_empty());
    assert_eq!(code("use crate::a; // crate::b"), "use crate::a; ");
}

/// The read-out's own calls into llama.cpp's C API (engine/inside) are all in one file, whose
/// header states their invariants.
#[test]
fn the_read_out_keeps_its_unsafe_code_in_ffi_rs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine/inside");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.len() >= 4, "engine/inside has its files");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let uses = text.lines().filter(|l| code(l).contains("unsafe")).count();
        if f.ends_with("ffi.rs") {
            assert!(uses > 0 && text.contains("Invariants"), "ffi.rs holds the unsafe code and its invariants");
        } else {
            assert_eq!(uses, 0, "{} uses unsafe: move it to engine/inside/ffi.rs", f.display());
        }
    }
}
