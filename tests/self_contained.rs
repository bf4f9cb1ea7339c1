//! The project stands on its own: no shipped file points a reader to a path outside the
//! repository.
//!
//! "Shipped" = every file git tracks plus every untracked file git does not ignore (so a new
//! file is checked before it is committed); without git, the checkout is walked, skipping
//! `.git/`, `target/` and `.hyst-cache/`. Two kinds of reference fail:
//!
//! 1. **Material that is not in the repository**: the development specification tree (a
//!    sibling directory `shared` with its protocol, design notes, paper tables and hooks; see
//!    [`SPEC_TREE`]) and absolute paths under the authors' workspace or home directories (`/work`,
//!    `/root`, `/home`, `/Users`; see [`MACHINE_DIRS`]). System locations a program legitimately
//!    uses (`/tmp`, `/dev/shm`, `/proc`, `/usr`, `~/.cache`) are not references to missing
//!    material and are allowed, and so is a machine directory inside a URL or in the middle of a
//!    relative path.
//! 2. **Markdown links** (`[text](target)`) whose relative target leaves the repository or does
//!    not exist in it. URLs and in-page anchors are not checked.
//!
//! Each offender is reported as `file:line`, with what it names.
//!
//! The patterns are assembled with `concat!`, so this file does not contain them literally.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Substrings that name the development specification tree, wherever they occur.
const SPEC_TREE: [&str; 5] = [
    concat!("..", "/shared"),
    concat!("shared", "/protocol.md"),
    concat!("shared", "/design.md"),
    concat!("shared", "/paper"),
    concat!("shared", "/hooks"),
];

/// Absolute directory prefixes of a particular machine (flagged only at the start of a path).
const MACHINE_DIRS: [&str; 4] = [
    concat!("/wo", "rk/"),
    concat!("/ro", "ot/"),
    concat!("/ho", "me/"),
    concat!("/Us", "ers/"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped files, relative to the repository root, sorted.
fn shipped_files(root: &Path) -> Vec<String> {
    let git = Command::new("git")
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .current_dir(root)
        .output();
    let mut files: BTreeSet<String> = match git {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout)
            .expect("git prints UTF-8 paths")
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        _ => {
            let mut v = BTreeSet::new();
            walk(root, root, &mut v);
            v
        }
    };
    // `git ls-files --cached` still lists a tracked file that was deleted from the worktree.
    files.retain(|f| root.join(f).is_file());
    files.into_iter().collect()
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for e in entries {
        let e = e.expect("directory entry");
        let path = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        // `.git` is a directory in a clone and a file in a worktree: skip it either way.
        if dir == root && [".git", "target", ".hyst-cache"].contains(&name.as_ref()) {
            continue;
        }
        let ft = e.file_type().expect("file type");
        if ft.is_dir() {
            walk(root, &path, out);
        } else if ft.is_file() {
            let rel = path.strip_prefix(root).expect("inside the root");
            out.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The token around byte `at` of `line`: the run of characters up to whitespace or a quote,
/// bracket or backtick on either side.
fn token_around(line: &str, at: usize) -> &str {
    let stop = |c: char| c.is_whitespace() || "\"'`()[]<>{},;".contains(c);
    let start = line[..at].rfind(stop).map_or(0, |i| i + line[i..].chars().next().unwrap().len_utf8());
    let end = line[at..].find(stop).map_or(line.len(), |i| at + i);
    &line[start..end]
}

/// Whether the character before byte `at` makes a match there the start of an absolute path
/// (not the middle of a relative path, a word or `~/…`).
fn starts_a_path(line: &str, at: usize) -> bool {
    match line[..at].chars().next_back() {
        None => true,
        Some(c) => !(c.is_alphanumeric() || "._-/~$%".contains(c)),
    }
}

/// Normalises `base_dir/target` lexically; `None` when `..` climbs above the root.
fn resolve(base_dir: &Path, target: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in base_dir.join(target).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Relative targets of the Markdown links `[text](target)` of one line.
fn markdown_link_targets(line: &str) -> Vec<&str> {
    let mut v = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(j) = after.find(')') else { break };
        let target = after[..j].split_whitespace().next().unwrap_or("");
        let target = target.split('#').next().unwrap_or("");
        let external = target.contains("://") || target.starts_with("mailto:");
        if !target.is_empty() && !external {
            v.push(target);
        }
        rest = &after[j..];
    }
    v
}

/// Every offending reference of one file's text: `(line number, what it names)`.
/// `exists` says whether a repository-relative path is a shipped file or directory.
fn offenders(rel_path: &str, text: &str, exists: &dyn Fn(&Path) -> bool) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let is_markdown = rel_path.ends_with(".md");
    let base_dir = Path::new(rel_path).parent().unwrap_or(Path::new(""));
    for (n, line) in text.lines().enumerate() {
        let lineno = n + 1;
        for pat in SPEC_TREE {
            for (at, _) in line.match_indices(pat) {
                if !token_around(line, at).contains("://") {
                    found.push((lineno, format!("`{pat}` (the development specification tree, not shipped)")));
                }
            }
        }
        for pat in MACHINE_DIRS {
            for (at, _) in line.match_indices(pat) {
                if starts_a_path(line, at) && !token_around(line, at).contains("://") {
                    found.push((lineno, format!("`{}` (an absolute path on one machine)", token_around(line, at))));
                }
            }
        }
        if is_markdown {
            for target in markdown_link_targets(line) {
                match resolve(base_dir, target) {
                    None => found.push((lineno, format!("link `{target}` leaves the repository"))),
                    Some(p) if !exists(&p) => {
                        found.push((lineno, format!("link `{target}` names `{}`, which is not in the repository", p.display())))
                    }
                    Some(_) => {}
                }
            }
        }
    }
    found
}

#[test]
fn no_shipped_file_names_a_path_outside_the_repository() {
    let root = root();
    let files = shipped_files(&root);
    for must in ["README.md", "Cargo.toml", "docs/protocol.md", "src/lib.rs", "tests/self_contained.rs"] {
        assert!(files.iter().any(|f| f == must), "the shipped files must include {must}; found {} files", files.len());
    }
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let exists = |p: &Path| {
        let s = p.to_string_lossy().replace('\\', "/");
        set.contains(s.as_str()) || set.iter().any(|f| f.starts_with(&format!("{s}/"))) || s.is_empty()
    };
    let mut report = Vec::new();
    let mut scanned = 0;
    for f in &files {
        let bytes = std::fs::read(root.join(f)).unwrap_or_else(|e| panic!("cannot read {f}: {e}"));
        if bytes.contains(&0) {
            continue; // binary
        }
        scanned += 1;
        let text = String::from_utf8_lossy(&bytes);
        for (line, what) in offenders(f, &text, &exists) {
            report.push(format!("{f}:{line}: {what}"));
        }
    }
    assert!(scanned >= 5, "only {scanned} text files scanned");
    assert!(
        report.is_empty(),
        "{} reference(s) to paths outside the repository:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn the_scanner_names_the_line_of_each_offender_and_spares_system_paths() {
    let spec = concat!("..", "/shared/", "protocol.md");
    let work = concat!("/wo", "rk/main/x.rs");
    let text = format!(
        "fine line\n\
         see {spec} for details\n\
         let p = \"{work}\";\n\
         tmp: /tmp/x and /dev/shm/y and /proc/self/status and ~/.cache/hyst-tui\n\
         url: https://example.org{work} and a relative a{work}\n\
         [ok](docs/protocol.md) [anchor](#methods) [web](https://example.org/x)\n\
         [broken](docs/nothing.md) [out](../../elsewhere.md)\n"
    );
    let exists = |p: &Path| p == Path::new("docs/protocol.md");
    let got = offenders("README.md", &text, &exists);
    let lines: Vec<usize> = got.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, vec![2, 2, 3, 7, 7], "{got:#?}");
    assert!(got[0].1.contains(concat!("..", "/shared")) && got[1].1.contains(concat!("shared", "/protocol.md")), "{got:#?}");
    assert!(got[2].1.contains(work), "{got:#?}");
    assert!(got[3].1.contains("docs/nothing.md") && got[4].1.contains("leaves the repository"), "{got:#?}");
    // Markdown links are checked in Markdown files only.
    assert!(offenders("src/x.rs", "[broken](docs/nothing.md)", &exists).is_empty());
}
