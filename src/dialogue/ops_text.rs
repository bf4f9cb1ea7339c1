//! Sentences that name the recovery operations, rendered from the condition registry: where a
//! note, a legend or a help line lists operations, its text holds a placeholder instead of the
//! list, so an operation added to `prompts/conditions.toml` shows up in every such sentence (as
//! ripgrep renders its flag lists from its one flag table). A test fails when a literal list of
//! the operations comes back in the sources.
//!
//! Placeholders ([`ops_text`]):
//!
//! | placeholder | bundled registry |
//! |---|---|
//! | `{main_ops}` | `R0, R1, R2, R3a, R3b, R4, R5, R6` (the minimal-recovery scan order) |
//! | `{main_first}`, `{main_last}` | `R0`, `R6` |
//! | `{main_count}` | `eight` |
//! | `{ops_first}`, `{ops_last}` | `R0`, `R7`: the lowest and highest level of the built-in operations |
//! | `{appendix_ops}`, `{appendix_count}` | `R6′, R2′`, `two` |
//! | `{evidence_ops}` | `R7` |
//! | `{family_instruction}`, `{family_state}` | `R0, R1, R2`, `R3a, R3b, R4, R5` |
//! | `{ordering_<family>}` | e.g. `{ordering_state_changing}` = `R3a, R3b, R5` |

use super::conditions::{RecoveryOp, Registry};
use super::recipe::{Group, OpFamily, OrderingFamily};
use crate::prompts::fill;

/// `text` with every placeholder of the module doc replaced by the registry's operations (other
/// braces stay as they are).
pub fn ops_text(text: &str) -> String {
    if !text.contains('{') {
        return text.to_string();
    }
    let vars = placeholders();
    let refs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    fill(text, &refs)
}

/// Every placeholder and its text. They name built-in operations only, which every registry
/// shares (an experiment file adds experiment operations), so the bundled registry says them.
pub fn placeholders() -> Vec<(String, String)> {
    let reg = Registry::bundled();
    let builtin = || reg.recovery_ops().iter().filter(|o| !o.is_experiment());
    let shorts = |ops: &mut dyn Iterator<Item = &RecoveryOp>| ops.map(|o| typeset(o.short)).collect::<Vec<_>>().join(", ");
    let in_group = |g: Group| builtin().filter(move |o| o.group == g);
    let main = reg.main_ops();
    let level = |o: &RecoveryOp| o.level.trim_start_matches('R').parse::<u32>().unwrap_or(0);
    let lowest = builtin().min_by_key(|o| level(o)).map_or("", |o| o.level);
    let highest = builtin().fold(None::<&RecoveryOp>, |best, o| match best {
        Some(b) if level(b) >= level(o) => Some(b),
        _ => Some(o),
    });
    let mut v = vec![
        ("main_ops", shorts(&mut main.iter())),
        ("main_first", main.first().map_or(String::new(), |o| typeset(o.short))),
        ("main_last", main.last().map_or(String::new(), |o| typeset(o.short))),
        ("main_count", number(main.len())),
        ("ops_first", lowest.to_string()),
        ("ops_last", highest.map_or(String::new(), |o| o.level.to_string())),
        ("appendix_ops", shorts(&mut in_group(Group::Appendix))),
        ("appendix_count", number(in_group(Group::Appendix).count())),
        ("evidence_ops", shorts(&mut in_group(Group::Evidence))),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect::<Vec<_>>();
    for f in [OpFamily::Instruction, OpFamily::State] {
        v.push((format!("family_{}", f.key()), shorts(&mut main.iter().filter(|o| o.family == Some(f)))));
    }
    for (o, key) in OrderingFamily::ALL {
        v.push((format!("ordering_{}", key.replace('-', "_")), shorts(&mut main.iter().filter(|x| x.ordering.contains(&o)))));
    }
    v
}

/// A short label as prose sets it: the appendix operations' apostrophe as a prime (`R6′`).
fn typeset(short: &str) -> String {
    short.replace('\'', "′")
}

/// A count in words (as the notes write them), digits from 21 on.
fn number(n: usize) -> String {
    const WORDS: [&str; 21] = [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
    ];
    WORDS.get(n).map_or(n.to_string(), |w| w.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The string literals of a Rust file's non-test code (comments and `#[cfg(test)]` modules
    /// left out), each with its line.
    fn literals(src: &str) -> Vec<(usize, String)> {
        let src = src.find("#[cfg(test)]\nmod ").map_or(src, |i| &src[..i]);
        let b: Vec<char> = src.chars().collect();
        let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
        while i < b.len() {
            match b[i] {
                '\n' => line += 1,
                '/' if b.get(i + 1) == Some(&'/') => {
                    while i < b.len() && b[i] != '\n' {
                        i += 1;
                    }
                    continue;
                }
                '\'' if b.get(i + 2) == Some(&'\'') || b.get(i + 1) == Some(&'\\') => {
                    // a char literal ('"', '\'', '\n', …)
                    let end = (i + 2..b.len()).find(|&j| b[j] == '\'').unwrap_or(b.len());
                    i = end + 1;
                    continue;
                }
                'r' if b.get(i + 1) == Some(&'#') && b.get(i + 2) == Some(&'"') => {
                    let start = i + 3;
                    let mut j = start;
                    while j + 1 < b.len() && !(b[j] == '"' && b[j + 1] == '#') {
                        j += 1;
                    }
                    let s: String = b[start..j].iter().collect();
                    out.push((line, s.clone()));
                    line += s.matches('\n').count();
                    i = j + 2;
                    continue;
                }
                '"' => {
                    let mut s = String::new();
                    let mut j = i + 1;
                    while j < b.len() && b[j] != '"' {
                        if b[j] == '\\' {
                            j += 1;
                        }
                        s.push(b[j]);
                        j += 1;
                    }
                    out.push((line, s.clone()));
                    line += s.matches('\n').count();
                    i = j + 1;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        out
    }

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// The ways a literal list of the registry's operations is written: ranges from the first to
    /// the last operation, three or more main operations in scan order, a family's members.
    fn forbidden() -> Vec<String> {
        let v = placeholders();
        let get = |k: &str| v.iter().find(|(x, _)| x == k).map(|(_, s)| s.clone()).unwrap();
        let mut out = Vec::new();
        for (a, b) in [(get("main_first"), get("main_last")), (get("ops_first"), get("ops_last"))] {
            for sep in [" … ", "…", " .. ", "..", "–", " – ", "-", " - ", " to "] {
                out.push(format!("{a}{sep}{b}"));
            }
        }
        let main: Vec<String> = Registry::bundled().main_ops().iter().map(|o| typeset(o.short)).collect();
        out.extend(main.windows(3).map(|w| w.join(", ")));
        out.extend(v.iter().filter(|(k, s)| (k.starts_with("family_") || k.starts_with("ordering_")) && s.contains(", ")).map(|(_, s)| s.clone()));
        out
    }

    /// ripgrep's way with its flag lists: no text of the program (string literals of src/,
    /// tests aside) nor the README lists the operations by hand; they write a placeholder that
    /// [`ops_text`] fills from the registry. And every placeholder written is one it knows.
    #[test]
    fn no_literal_list_of_operations() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let bad = forbidden();
        assert!(bad.iter().any(|b| b.contains("R0")), "{bad:?}");
        let known: Vec<String> = placeholders().into_iter().map(|(k, _)| k).collect();
        let prefixes = ["main_", "ops_", "appendix_", "evidence_", "family_", "ordering_"];
        let mut files = Vec::new();
        rust_files(&root.join("src"), &mut files);
        let mut offenders = Vec::new();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("tests") || name == "testutil.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, lit) in literals(&text) {
                let at = format!("{}:{line}", f.strip_prefix(root).unwrap().display());
                if let Some(b) = bad.iter().find(|b| lit.contains(b.as_str())) {
                    offenders.push(format!("{at}: lists the operations by hand ({b:?}): write a placeholder of dialogue/ops_text.rs"));
                }
                for (i, _) in lit.match_indices('{') {
                    let name: String = lit[i + 1..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    if prefixes.iter().any(|p| name.starts_with(p)) && lit[i + 1 + name.len()..].starts_with('}') && !known.contains(&name) {
                        offenders.push(format!("{at}: unknown placeholder {{{name}}}"));
                    }
                }
            }
        }
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        for (i, l) in readme.lines().enumerate() {
            if let Some(b) = bad.iter().find(|b| l.contains(b.as_str())) {
                offenders.push(format!("README.md:{}: lists the operations by hand ({b:?})", i + 1));
            }
        }
        assert!(offenders.is_empty(), "{}", offenders.join("\n"));
    }

    /// The bundled registry renders the texts as they were written before (the paper's
    /// operations first; an operation added to the registry extends the lists).
    #[test]
    fn the_bundled_registry_renders_as_before() {
        let main: Vec<&str> = Registry::bundled().main_ops().iter().map(|o| o.short).collect();
        assert_eq!(ops_text("{main_ops}"), main.join(", "));
        assert!(ops_text("{main_ops}").starts_with("R0, R1, R2, R3a, R3b, R4, R5, R6"));
        assert_eq!(ops_text("{main_first} … {main_last}"), format!("R0 … {}", main[main.len() - 1]));
        assert_eq!(ops_text("{main_count}"), number(main.len()));
        assert_eq!(ops_text("{appendix_count}: {appendix_ops}; {evidence_ops}"), "two: R6′, R2′; R7");
        let highest = Registry::bundled().recovery_ops().iter().filter(|o| !o.is_experiment()).map(|o| o.level).max_by_key(|l| l[1..].parse::<u32>().unwrap()).unwrap();
        assert_eq!(ops_text("{ops_first}…{ops_last}"), format!("R0…{highest}"));
        for (text, paper) in [
            ("{ordering_state_changing}", "R3a, R3b, R5"),
            ("{ordering_neutral_or_reconstruction}", "R4, R5"),
            ("{ordering_instruction_level}", "R1, R2"),
            ("{family_instruction}", "R0, R1, R2"),
            ("{family_state}", "R3a, R3b, R4, R5"),
        ] {
            assert!(ops_text(text).starts_with(paper), "{text}: {}", ops_text(text));
        }
        assert_eq!(number(8), "eight");
        assert_eq!(number(21), "21");
        assert_eq!(ops_text("{unknown} {x"), "{unknown} {x");
    }
}
