//! The documentation cannot drift from the program (CONTRIBUTING.md, "The docs"):
//!
//! - every `hyst-tui …` and `cargo run --release -- …` line in a code block of the docs parses
//!   with the real command line definition (`src/cli.rs`, compiled into this test);
//! - every relative link and `#anchor` between the docs resolves (GitHub's heading anchors);
//! - `docs/reference/commands.md` is what the command line definition generates
//!   (`HYST_WRITE_DOCS=1` rewrites it);
//! - the bootstrap seeds and replicate counts have one home, docs/protocol.md, which states them
//!   as `src/metrics/bootstrap.rs` has them; no other page restates them;
//! - every command of the program has a row in the hand-written table of
//!   `docs/reference/cli.md`;
//! - every `src/…`, `prompts/…`, `assets/…`, `scripts/…` and `tests/…` path that a page of the
//!   docs or a comment of the code cites exists (a glob must match something);
//! - the help of `--suites` says truly what `all` stands for;
//! - every error line quoted on `docs/troubleshooting.md` is still in the source under `src/`.
//!
//! The key reference (`docs/reference/keys.md`) is generated from the keymap and checked by the
//! library's own test in `src/tui/keymap.rs`, which can reach the keymap's private table.

// The binary's command line definition, compiled here as it is: it depends only on the library
// and clap. (Its accessors for the commands are not used by this test.)
#[allow(dead_code)]
#[path = "../src/cli.rs"]
mod cli;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The generated command reference.
const COMMANDS_MD: &str = "docs/reference/commands.md";
/// The one home of the method, the seeds and the replicate counts.
const PROTOCOL_MD: &str = "docs/protocol.md";
/// What the commands do: its table has a row for every command.
const CLI_MD: &str = "docs/reference/cli.md";
/// Symptom, cause and fix of each error line.
const TROUBLESHOOTING_MD: &str = "docs/troubleshooting.md";

/// Every Markdown page of the documentation: the README, CONTRIBUTING.md, ARCHITECTURE.md, CHANGELOG.md and
/// docs/ (relative paths, sorted).
fn doc_pages(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "CHANGELOG.md"].iter().map(PathBuf::from).collect();
    walk(root, &root.join("docs"), &mut out);
    out.sort();
    out
}

fn read(root: &Path, rel: &Path) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{}: {e}", rel.display()))
}

// ---------------------------------------------------------------------------------------------
// Markdown, as far as these checks need it
// ---------------------------------------------------------------------------------------------

/// A fenced code block: its info string, its first line's number (1-based) and its lines.
struct Block {
    lang: String,
    line: usize,
    lines: Vec<String>,
}

/// The fenced code blocks of a page, and its other lines with their numbers (prose, headings,
/// tables).
fn split_blocks(text: &str) -> (Vec<Block>, Vec<(usize, String)>) {
    let mut blocks = Vec::new();
    let mut prose = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some((fence, mut b)) = open.take() {
            if trimmed.starts_with(&fence) && trimmed.trim_start_matches(fence.chars().next().unwrap()).trim().is_empty() {
                blocks.push(b);
            } else {
                b.lines.push(line.to_string());
                open = Some((fence, b));
            }
            continue;
        }
        let fence_char = if trimmed.starts_with("```") { Some('`') } else if trimmed.starts_with("~~~") { Some('~') } else { None };
        if let Some(c) = fence_char {
            let n = trimmed.chars().take_while(|&x| x == c).count();
            let fence: String = std::iter::repeat_n(c, n).collect();
            let lang = trimmed[n..].trim().split_whitespace().next().unwrap_or("").to_string();
            open = Some((fence, Block { lang, line: i + 2, lines: Vec::new() }));
        } else {
            prose.push((i + 1, line.to_string()));
        }
    }
    assert!(open.is_none(), "a code block is not closed");
    (blocks, prose)
}

/// A line without its inline code spans (`` `…` ``), which hold no links.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find('`') {
        out.push_str(&rest[..i]);
        let ticks = rest[i..].chars().take_while(|&c| c == '`').count();
        let after = &rest[i + ticks..];
        let fence = "`".repeat(ticks);
        match after.find(&fence) {
            Some(j) => rest = &after[j + ticks..],
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// GitHub's anchor of a heading: lower case, every character other than a letter, a digit, `_`,
/// `-` or a space dropped, spaces made hyphens; a repeated anchor gets `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let (_, prose) = split_blocks(text);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose {
        let t = line.trim_start();
        let level = t.chars().take_while(|&c| c == '#').count();
        if level == 0 || level > 6 || !t[level..].starts_with(' ') {
            continue;
        }
        let title = t[level..].trim().trim_end_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// The targets of the inline links and images on a line (`[text](target)`, `![alt](target)`),
/// outside code spans.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let mut rest = line.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        // Up to the matching `)`, with nested parentheses (anchors have none; paths may).
        let mut depth = 1;
        let mut end = None;
        for (j, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("").trim_matches(|c| c == '<' || c == '>');
        out.push(target.to_string());
        rest = &after[end..];
    }
    out
}

/// `a/b/../c` → `a/c` (a path inside the repository, or `None` when it leaves it).
fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(x) => out.push(x),
            _ => return None,
        }
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// (a) Command lines parse
// ---------------------------------------------------------------------------------------------

/// Shell words of a command line: quotes and backslashes as a POSIX shell reads them, `#` at the
/// start of a word begins a comment, and `&&`, `||`, `|`, `;` separate commands (returned as
/// words of their own).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                cur.push(e);
                            }
                        }
                        _ => cur.push(d),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(d) = chars.next() {
                    cur.push(d);
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '&' | '|' | ';' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
                let mut op = c.to_string();
                if (c == '&' || c == '|') && chars.peek() == Some(&c) {
                    op.push(chars.next().unwrap());
                }
                words.push(op);
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// The hyst-tui invocations of a shell line, each as its argument vector (`hyst-tui` first):
/// `hyst-tui …`, `target/release/hyst-tui …`, `cargo run --release -- …`, after any `VAR=value`
/// assignments; redirections are not arguments.
fn invocations(line: &str) -> Vec<Vec<String>> {
    let words = shell_words(line);
    let mut out = Vec::new();
    for cmd in words.split(|w| matches!(w.as_str(), "&&" | "||" | "|" | ";" | "&")) {
        let ws: Vec<&String> = cmd.iter().skip_while(|w| is_assignment(w)).collect();
        // Redirections: `> FILE`, `2> FILE`, `>FILE`, `< FILE`.
        let mut args = Vec::new();
        let mut i = 0;
        while i < ws.len() {
            let w = ws[i].as_str();
            let op = w.trim_start_matches(|c: char| c.is_ascii_digit());
            if op.starts_with('>') || op.starts_with('<') {
                if op.trim_start_matches(['>', '<', '&']).is_empty() {
                    i += 1;
                }
            } else {
                args.push(w.to_string());
            }
            i += 1;
        }
        let argv = match args.first().map(String::as_str) {
            Some("hyst-tui") | Some("target/release/hyst-tui") | Some("./target/release/hyst-tui") => {
                let mut v = vec!["hyst-tui".to_string()];
                v.extend(args[1..].iter().cloned());
                v
            }
            Some("cargo") if args.len() >= 3 && args[1] == "run" => match args.iter().position(|a| a == "--") {
                Some(k) => {
                    let mut v = vec!["hyst-tui".to_string()];
                    v.extend(args[k + 1..].iter().cloned());
                    v
                }
                None => vec!["hyst-tui".to_string()],
            },
            _ => continue,
        };
        out.push(argv);
    }
    out
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with(|c: char| c.is_ascii_digit()),
        None => false,
    }
}

/// The shell lines of a code block: a line ending in `\` continues on the next, `$ ` prompts
/// are dropped. Blocks of data (TOML, JSON, Rust) hold no command lines.
fn shell_lines(b: &Block) -> Vec<(usize, String)> {
    if matches!(b.lang.as_str(), "toml" | "json" | "jsonl" | "rust" | "csv" | "python" | "jinja") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    for (k, raw) in b.lines.iter().enumerate() {
        let l = raw.trim();
        let l = l.strip_prefix("$ ").unwrap_or(l);
        if cur.is_empty() {
            start = b.line + k;
        }
        match l.strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(l);
                out.push((start, std::mem::take(&mut cur)));
            }
        }
    }
    if !cur.is_empty() {
        out.push((start, cur));
    }
    out
}

/// Every hyst-tui command line in a code block of the docs: (page, line, argument vector).
fn documented_command_lines(root: &Path) -> Vec<(PathBuf, usize, Vec<String>)> {
    let mut out = Vec::new();
    for page in doc_pages(root) {
        // The generated reference shows usage lines, not command lines.
        if page == Path::new(COMMANDS_MD) {
            continue;
        }
        let (blocks, _) = split_blocks(&read(root, &page));
        for b in &blocks {
            for (line, text) in shell_lines(b) {
                for argv in invocations(&text) {
                    out.push((page.clone(), line, argv));
                }
            }
        }
    }
    out
}

/// Why `argv` does not parse with the real command line definition (`None`: it parses).
fn parse_error(argv: &[String]) -> Option<String> {
    match cli::command().try_get_matches_from(argv) {
        Ok(_) => None,
        Err(e) => Some(e.render().to_string().lines().next().unwrap_or("").to_string()),
    }
}

#[test]
fn every_documented_command_line_parses() {
    let root = Path::new(ROOT);
    let lines = documented_command_lines(root);
    assert!(lines.len() >= 20, "the docs' code blocks should hold command lines; found {}", lines.len());
    let bad: Vec<String> = lines
        .iter()
        .filter_map(|(page, line, argv)| parse_error(argv).map(|e| format!("{}:{line}: `{}`: {e}", page.display(), argv.join(" "))))
        .collect();
    assert!(bad.is_empty(), "command lines in the docs that hyst-tui does not accept:\n{}", bad.join("\n"));
}

/// The reading of command lines itself: continuations, comments, `&&`, redirections and
/// environment assignments; and a broken line is caught.
#[test]
fn command_lines_are_read_as_a_shell_reads_them() {
    let b = Block {
        lang: "sh".into(),
        line: 1,
        lines: vec![
            "cargo run --release -- models fetch smollm2-135m && cargo run --release -- --batch --limit 5".into(),
            "HYST_LOG=debug hyst-tui --batch --datasets 'sample' \\".into(),
            "  --limit 2     # a comment --nonsense".into(),
            "hyst-tui completions bash > ~/.local/share/bash-completion/completions/hyst-tui".into(),
            "vllm serve some/model --port 8000".into(),
        ],
    };
    let argvs: Vec<Vec<String>> = shell_lines(&b).iter().flat_map(|(_, l)| invocations(l)).collect();
    let want: Vec<Vec<&str>> = vec![
        vec!["hyst-tui", "models", "fetch", "smollm2-135m"],
        vec!["hyst-tui", "--batch", "--limit", "5"],
        vec!["hyst-tui", "--batch", "--datasets", "sample", "--limit", "2"],
        vec!["hyst-tui", "completions", "bash"],
    ];
    assert_eq!(argvs, want.iter().map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).collect::<Vec<_>>());
    for argv in &argvs {
        assert_eq!(parse_error(argv), None, "{argv:?}");
    }
    for broken in [
        &["hyst-tui", "--batch", "--limit", "N"][..],
        &["hyst-tui", "batch", "--no-such-flag"],
        &["hyst-tui", "models", "fetch"],
        &["hyst-tui", "snapshot", "--view", "nowhere", "--out", "x.svg"],
    ] {
        let argv: Vec<String> = broken.iter().map(|s| s.to_string()).collect();
        assert!(parse_error(&argv).is_some(), "{broken:?} should not parse");
    }
}

// ---------------------------------------------------------------------------------------------
// (b) Links and anchors resolve
// ---------------------------------------------------------------------------------------------

/// Every relative link of the docs that does not resolve: (page, line, target, why).
fn broken_links(root: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let mut anchor_cache: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    for page in doc_pages(root) {
        let text = read(root, &page);
        let (_, prose) = split_blocks(&text);
        let dir = page.parent().unwrap_or(Path::new("")).to_path_buf();
        for (line, l) in prose {
            for target in link_targets(&l) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let file = if path.is_empty() { Some(page.clone()) } else { normalize(&dir.join(path)) };
                let Some(file) = file else {
                    bad.push(format!("{}:{line}: {target}: leaves the repository", page.display()));
                    continue;
                };
                if !root.join(&file).exists() {
                    bad.push(format!("{}:{line}: {target}: no such file {}", page.display(), file.display()));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                if file.extension().is_none_or(|x| x != "md") {
                    bad.push(format!("{}:{line}: {target}: an anchor into a file that is not Markdown", page.display()));
                    continue;
                }
                let known = anchor_cache.entry(file.clone()).or_insert_with(|| anchors(&read(root, &file)));
                if !known.contains(anchor) {
                    bad.push(format!("{}:{line}: {target}: {} has no heading with the anchor #{anchor}", page.display(), file.display()));
                }
            }
        }
    }
    bad
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let root = Path::new(ROOT);
    let bad = broken_links(root);
    assert!(bad.is_empty(), "links in the docs that lead nowhere:\n{}", bad.join("\n"));
}

#[test]
fn anchors_are_githubs() {
    let text = "# hyst-tui\n## Served models (vLLM, llama-server, SGLang, APIs)\n### 4.5 Numerical exactness and provenance\n\
                ## `hyst-tui models fetch`\n## Notes\n## Notes\n```\n# not a heading\n```\n## R6′ and α*: tables\n";
    let got = anchors(text);
    for want in [
        "hyst-tui",
        "served-models-vllm-llama-server-sglang-apis",
        "45-numerical-exactness-and-provenance",
        "hyst-tui-models-fetch",
        "notes",
        "notes-1",
        "r6-and-α-tables",
    ] {
        assert!(got.contains(want), "{want} not in {got:?}");
    }
    assert!(!got.contains("not-a-heading"));
    assert_eq!(link_targets("see [a](b.md#c) and `[x](y)` and ![i](../p.svg)"), vec!["b.md#c", "../p.svg"]);
}

// ---------------------------------------------------------------------------------------------
// (c) The command reference is generated
// ---------------------------------------------------------------------------------------------

/// Text of a help string on one line of a Markdown table: `|` escaped, and `<`, `>` outside code
/// spans written as entities (`<data dir>` is no HTML tag).
fn cell(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    for (i, part) in one_line.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 0 {
            out.push_str(&part.replace('<', "&lt;").replace('>', "&gt;"));
        } else {
            out.push_str(part);
        }
    }
    out.replace('|', "\\|")
}

/// A sentence joined to another: `a` ends with a full stop before `b` starts.
fn then(a: &str, b: &str) -> String {
    let a = a.trim_end();
    if a.is_empty() {
        b.to_string()
    } else if a.ends_with(['.', '!', '?']) {
        format!("{a} {b}")
    } else {
        format!("{a}. {b}")
    }
}

/// How an argument is written: `--long <VALUE>`, `-s, --long`, `<POSITIONAL>...`.
fn arg_form(a: &clap::Arg) -> String {
    let values: Vec<String> = a.get_value_names().map(|v| v.iter().map(|n| format!("<{n}>")).collect()).unwrap_or_default();
    let takes = a.get_action().takes_values();
    let value = if takes {
        if values.is_empty() {
            format!(" <{}>", a.get_id().as_str().to_uppercase())
        } else {
            format!(" {}", values.join(" "))
        }
    } else {
        String::new()
    };
    let many = matches!(a.get_action(), clap::ArgAction::Append);
    if a.is_positional() {
        let v = if values.is_empty() { format!("<{}>", a.get_id().as_str().to_uppercase()) } else { values.join(" ") };
        return if many { format!("{v}...") } else { v };
    }
    let mut names = Vec::new();
    if let Some(s) = a.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = a.get_long() {
        names.push(format!("--{l}"));
    }
    for alias in a.get_visible_aliases().unwrap_or_default() {
        names.push(format!("--{alias}"));
    }
    format!("{}{value}", names.join(", "))
}

/// The help of an argument with its default and its possible values.
fn arg_help(a: &clap::Arg) -> String {
    let mut h = a.get_long_help().or(a.get_help()).map(|s| s.to_string()).unwrap_or_default();
    if a.get_action().takes_values() {
        let pv: Vec<String> = a.get_possible_values().iter().filter(|p| !p.is_hide_set()).map(|p| format!("`{}`", p.get_name())).collect();
        if !pv.is_empty() {
            h = then(&h, &format!("Values: {}.", pv.join(", ")));
        }
        let defaults: Vec<String> = a.get_default_values().iter().map(|d| d.to_string_lossy().to_string()).collect();
        if !defaults.is_empty() && !a.is_hide_default_value_set() {
            h = then(&h, &format!("Default: `{}`.", defaults.join(",")));
        }
    }
    if a.is_required_set() {
        h = then(&h, "Required.");
    }
    if matches!(a.get_action(), clap::ArgAction::Append) && !a.is_positional() {
        h = then(&h, "Repeatable.");
    }
    cell(&h)
}

fn render_command(out: &mut String, cmd: &mut clap::Command, path: &str, depth: usize) {
    let heading = "#".repeat((depth + 2).min(4));
    out.push_str(&format!("{heading} `{path}`\n\n"));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        out.push_str(&format!("{}\n\n", cell(&about.to_string()).replace("\\|", "|")));
    }
    let usage = cmd.render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    out.push_str(&format!("```text\n{usage}\n```\n\n"));
    let args: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .filter(|a| depth == 0 || !a.is_global_set())
        .cloned()
        .collect();
    if !args.is_empty() {
        out.push_str("| argument | what it does |\n|---|---|\n");
        for a in &args {
            let global = if depth == 0 && a.is_global_set() { " (global: any command)" } else { "" };
            out.push_str(&format!("| `{}`{global} | {} |\n", arg_form(a).replace('|', "\\|"), arg_help(a)));
        }
        out.push('\n');
    }
    let subs: Vec<String> = cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help").map(|s| s.get_name().to_string()).collect();
    if depth > 0 && subs.is_empty() {
        let globals: Vec<String> =
            cmd.get_arguments().filter(|a| a.is_global_set() && !a.is_hide_set()).filter_map(|a| a.get_long()).map(|l| format!("`--{l}`")).collect();
        out.push_str(&format!(
            "Global options it uses: {}.\n\n",
            if globals.is_empty() { "none".to_string() } else { globals.join(", ") }
        ));
    }
    if !subs.is_empty() && depth > 0 {
        out.push_str(&format!("Commands: {}.\n\n", subs.iter().map(|s| format!("[`{s}`](#{})", slug(&format!("{path} {s}")))).collect::<Vec<_>>().join(", ")));
    }
    for s in subs {
        let mut sub = cmd.find_subcommand_mut(&s).unwrap().clone();
        render_command(out, &mut sub, &format!("{path} {s}"), depth + 1);
    }
}

fn slug(title: &str) -> String {
    title.to_lowercase().chars().filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' ')).map(|c| if c == ' ' { '-' } else { c }).collect()
}

/// The command reference, generated from the command line definition.
fn commands_reference() -> String {
    let mut cmd = cli::command();
    cmd.build();
    let mut out = String::from(
        "# Command reference\n\n\
         <!-- Generated from src/cli.rs by tests/docs.rs; do not edit. Rewrite it with\n     \
         HYST_WRITE_DOCS=1 cargo test --release --test docs -->\n\n\
         Every command and flag of `hyst-tui`, with the help it prints (`hyst-tui help COMMAND`).\n\
         What the commands do beyond their help, the exit codes and the environment are in\n\
         [what the commands do](cli.md). Global options (marked so below) are accepted by every command; each\n\
         command lists those it uses, as its `--help` does.\n\n",
    );
    let subs: Vec<String> = cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help").map(|s| s.get_name().to_string()).collect();
    out.push_str(&format!(
        "Commands: {}.\n\n",
        subs.iter().map(|s| format!("[`{s}`](#{})", slug(&format!("hyst-tui {s}")))).collect::<Vec<_>>().join(", ")
    ));
    render_command(&mut out, &mut cmd, "hyst-tui", 0);
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[test]
fn the_command_reference_is_generated_from_the_command_line() {
    let root = Path::new(ROOT);
    let want = commands_reference();
    let path = root.join(COMMANDS_MD);
    if std::env::var_os("HYST_WRITE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{COMMANDS_MD} is not what src/cli.rs generates; rewrite it with HYST_WRITE_DOCS=1 cargo test --release --test docs"
    );
    // Every command, nested ones too, and every visible flag is in it.
    for (path, sub) in command_paths() {
        assert!(want.contains(&format!("`{path}`")), "{path}");
        for a in sub.get_arguments().filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version")) {
            for l in a.get_long().into_iter().chain(a.get_visible_aliases().unwrap_or_default()) {
                assert!(want.contains(&format!("--{l}")), "--{l} of {path}");
            }
        }
    }
}

/// Every command of the program with its path (`hyst-tui bench inside`), nested commands
/// after their parent; `help` left out.
fn command_paths() -> Vec<(String, clap::Command)> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
            let p = format!("{path} {}", sub.get_name());
            out.push((p.clone(), sub.clone()));
            walk(sub, &p, out);
        }
    }
    let mut cmd = cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "hyst-tui", &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// (c2) The hand-written command table names every command
// ---------------------------------------------------------------------------------------------

/// The commands of `commands` (paths as `command_paths` gives them) that have no row in the
/// table of `page`: a row is a table line whose first cell starts with `` `PATH`` followed by
/// the end of the span, a space or `[`. A command with commands of its own (`bench`) is
/// covered by its commands' rows.
fn commands_without_a_row(page: &str, commands: &[(String, bool)]) -> Vec<String> {
    let firsts: Vec<String> = page
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l[2..].split(" | ").next().unwrap_or("").to_string())
        .collect();
    commands
        .iter()
        .filter(|(_, has_subcommands)| !has_subcommands)
        .filter(|(path, _)| {
            !firsts.iter().any(|cell| {
                cell.split(" / ").any(|c| {
                    c.strip_prefix('`').and_then(|c| c.strip_prefix(path.as_str())).is_some_and(|rest| rest.starts_with(['`', ' ', '[']))
                })
            })
        })
        .map(|(path, _)| path.clone())
        .collect()
}

#[test]
fn every_command_has_a_row_in_the_hand_written_table() {
    let root = Path::new(ROOT);
    let page = read(root, Path::new(CLI_MD));
    let commands: Vec<(String, bool)> =
        command_paths().iter().map(|(p, c)| (p.clone(), c.get_subcommands().any(|s| s.get_name() != "help"))).collect();
    assert!(commands.iter().any(|(p, _)| p == "hyst-tui bench inside"), "the walk should reach nested commands");
    let missing = commands_without_a_row(&page, &commands);
    assert!(missing.is_empty(), "{CLI_MD}: the table \"The commands\" has no row for: {}", missing.join(", "));
}

#[test]
fn a_command_without_a_row_is_found() {
    let page = "| command | what it does |\n|---|---|\n| `hyst-tui models list [--no-verify]` | x |\n\
                | `hyst-tui --batch [OPTIONS]` / `hyst-tui batch [OPTIONS]` | y |\n| `hyst-tui lens` | z |\n";
    let commands: Vec<(String, bool)> = [
        ("hyst-tui models", true),
        ("hyst-tui models list", false),
        ("hyst-tui batch", false),
        ("hyst-tui lens", false),
        ("hyst-tui models fetch", false),
        ("hyst-tui steer sweep", false),
    ]
    .iter()
    .map(|(p, s)| (p.to_string(), *s))
    .collect();
    assert_eq!(commands_without_a_row(page, &commands), vec!["hyst-tui models fetch", "hyst-tui steer sweep"]);
}

// ---------------------------------------------------------------------------------------------
// (c3) `--suites all` is what its help says
// ---------------------------------------------------------------------------------------------

/// The suite keys a help text names after `` `all` = `` (up to `; not`), and those it names as
/// left out (after `; not`).
fn all_in_help(help: &str) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let after = &help[help.find("`all` = ")? + "`all` = ".len()..];
    let after = after.split(')').next().unwrap_or(after);
    let (inside, outside) = match after.split_once("; not ") {
        Some((a, b)) => (a, b),
        None => (after, ""),
    };
    let names = |s: &str| -> BTreeSet<String> {
        let list = s.split_once(':').map(|(_, l)| l).unwrap_or("");
        list.split(',').map(|w| w.trim().trim_end_matches('.').to_string()).filter(|w| !w.is_empty()).collect()
    };
    let left_out: BTreeSet<String> =
        outside.split(',').map(|w| w.trim().trim_end_matches('.').to_string()).filter(|w| !w.is_empty()).collect();
    Some((names(inside), left_out))
}

#[test]
fn the_help_of_suites_all_is_true() {
    use cli::Command as C;
    // What `all` expands to, through the real parser and the real expansion.
    let parsed = <cli::Cli as clap::Parser>::try_parse_from(["hyst-tui", "batch", "--suites", "all"]).unwrap();
    let Some(C::Batch(args)) = parsed.command else { panic!("`batch --suites all` should parse as the batch command") };
    let expanded: BTreeSet<String> = args.suites().iter().map(|s| s.key().to_string()).collect();
    let every: BTreeSet<String> = hyst_tui::dialogue::Suite::EVERY.iter().map(|s| s.key().to_string()).collect();
    let left_out: BTreeSet<String> = every.difference(&expanded).cloned().collect();
    assert!(!expanded.is_empty());

    let cmd = cli::command();
    let batch = cmd.find_subcommand("batch").unwrap();
    let arg = batch.get_arguments().find(|a| a.get_id() == "suites").unwrap();
    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    let (named, named_out) = all_in_help(&help).unwrap_or_else(|| panic!("--suites help does not say what `all` is: {help}"));
    assert_eq!(named, expanded, "--suites help: the suites `all` runs ({help})");
    assert_eq!(named_out, left_out, "--suites help: the suites `all` leaves out ({help})");
    let value = arg.get_possible_values().into_iter().find(|v| v.get_name() == "all").unwrap();
    let value_help = value.get_help().map(|h| h.to_string()).unwrap_or_default();
    assert!(
        left_out.iter().all(|s| value_help.contains(s.as_str())) && (left_out.is_empty() || !value_help.starts_with("every suite")),
        "the help of the value `all` ({value_help:?}) does not say that it leaves out {left_out:?}"
    );
    // The pages that say what `all` runs say it as the help does.
    let root = Path::new(ROOT);
    for page in doc_pages(root) {
        for (n, line) in read(root, &page).lines().enumerate() {
            if line.contains("--suites all") && line.contains("every suite") && !left_out.is_empty() {
                panic!("{}:{}: `--suites all` is not every suite (it leaves out {left_out:?})", page.display(), n + 1);
            }
        }
    }
}

#[test]
fn a_false_suites_help_is_found() {
    let (a, b) = all_in_help("Suites (default: hierarchy; `all` = the paper's suites: ramp, r7; not self-consistency).").unwrap();
    assert_eq!(a, ["ramp", "r7"].iter().map(|s| s.to_string()).collect());
    assert_eq!(b, ["self-consistency"].iter().map(|s| s.to_string()).collect());
    let (a, b) = all_in_help("Suites (default: hierarchy; `all` = every suite).").unwrap();
    assert!(a.is_empty() && b.is_empty(), "an `all` that names no suite names none");
    assert!(all_in_help("Suites, comma separated.").is_none());
}

// ---------------------------------------------------------------------------------------------
// (d) Facts with one home
// ---------------------------------------------------------------------------------------------

/// The `const NAME: TYPE = NUMBER;` items of a source file.
fn numeric_consts(src: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in src.lines() {
        let l = line.trim();
        let Some(rest) = l.strip_prefix("pub(crate) const ").or_else(|| l.strip_prefix("pub const ")).or_else(|| l.strip_prefix("const ")) else { continue };
        let Some((name, rest)) = rest.split_once(':') else { continue };
        let Some((_, value)) = rest.split_once('=') else { continue };
        let value = value.trim().trim_end_matches(';').replace('_', "");
        if let Ok(v) = value.parse::<u64>() {
            out.insert(name.trim().to_string(), v);
        }
    }
    out
}

/// 10000 → "10,000".
fn with_commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The bootstrap's seeds and replicate counts, from the code.
struct BootstrapFacts {
    samples: u64,
    seed: u64,
    offsets: BTreeMap<String, u64>,
    cctp_samples: u64,
    cctp_seed: u64,
}

fn bootstrap_facts(root: &Path) -> BootstrapFacts {
    let c = numeric_consts(&read(root, Path::new("src/metrics/bootstrap.rs")));
    let get = |k: &str| *c.get(k).unwrap_or_else(|| panic!("src/metrics/bootstrap.rs has no const {k}"));
    let offsets: BTreeMap<String, u64> = c.iter().filter(|(k, _)| k.starts_with("SEED_OFFSET_")).map(|(k, v)| (k.clone(), *v)).collect();
    assert!(offsets.len() >= 5, "the bootstrap's seed offsets: {offsets:?}");
    BootstrapFacts {
        samples: get("BOOTSTRAP_SAMPLES"),
        seed: get("BOOTSTRAP_SEED"),
        offsets,
        cctp_samples: get("CCTP_BOOTSTRAP_SAMPLES"),
        cctp_seed: get("CCTP_BOOTSTRAP_SEED"),
    }
}

/// What restates a seed or a replicate count on a page that is not their home: (line, text).
fn restated_bootstrap_facts(text: &str, f: &BootstrapFacts) -> Vec<(usize, String)> {
    let mut hits = Vec::new();
    // Lines are joined in pairs so that a phrase broken over two lines is seen too.
    let lines: Vec<&str> = text.lines().collect();
    for i in 0..lines.len() {
        let joined = format!("{} {}", lines[i], lines.get(i + 1).copied().unwrap_or(""));
        let lower = joined.to_lowercase();
        let mut why = Vec::new();
        if lines[i].contains(&f.seed.to_string()) {
            why.push(format!("the base seed {}", f.seed));
        }
        if lines[i].contains("default_rng(") {
            why.push("a bootstrap generator's seed".to_string());
        }
        for w in ["seed +", "seed+", "base +", "base+"] {
            if lower.contains(w) && lower[lower.find(w).unwrap() + w.len()..].trim_start().starts_with(|c: char| c.is_ascii_digit()) {
                why.push(format!("a seed offset (`{w} N`)"));
            }
        }
        // A number of replicates: "10,000 replicates", "1,000 bootstrap replicates", "replicates: 10,000".
        for n in [f.samples, f.cctp_samples, 2000] {
            for form in [with_commas(n), n.to_string()] {
                for pat in [format!("{form} replicate"), format!("{form} bootstrap replicate"), format!("replicates: {form}"), format!("replicates {form}")] {
                    if lower.contains(&pat) && lines[i].to_lowercase().contains(&form) {
                        why.push(format!("a replicate count ({form})"));
                    }
                }
            }
        }
        if !why.is_empty() {
            why.dedup();
            hits.push((i + 1, why.join(", ")));
        }
    }
    hits
}

#[test]
fn the_seeds_and_replicate_counts_have_one_home() {
    let root = Path::new(ROOT);
    let f = bootstrap_facts(root);
    // Their home states them as the code has them.
    let protocol = read(root, Path::new(PROTOCOL_MD));
    let mut missing = Vec::new();
    let need = |s: String, missing: &mut Vec<String>| {
        if !protocol.contains(&s) {
            missing.push(s);
        }
    };
    need(format!("Replicates: {}", with_commas(f.samples)), &mut missing);
    need(format!("base seed {}", f.seed), &mut missing);
    for (name, k) in &f.offsets {
        if !protocol.contains(&format!("default_rng({} + {k})", f.seed)) {
            missing.push(format!("default_rng({} + {k}) ({name})", f.seed));
        }
    }
    need(format!("`default_rng({})`, **{}** replicates", f.cctp_seed, with_commas(f.cctp_samples)), &mut missing);
    assert!(missing.is_empty(), "{PROTOCOL_MD} §8 does not state the bootstrap as src/metrics/bootstrap.rs has it; missing: {missing:?}");
    // And no other page restates them.
    let mut bad = Vec::new();
    for page in doc_pages(root) {
        if page == Path::new(PROTOCOL_MD) {
            continue;
        }
        for (line, why) in restated_bootstrap_facts(&read(root, &page), &f) {
            bad.push(format!("{}:{line}: {why}", page.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "the bootstrap's seeds and replicate counts have one home, {PROTOCOL_MD} §8.3; link to it instead of restating them:\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_restated_seed_or_replicate_count_is_found() {
    let f = BootstrapFacts { samples: 10_000, seed: 12345, offsets: BTreeMap::new(), cctp_samples: 1_000, cctp_seed: 42 };
    for text in [
        "CIs use 10,000 replicates everywhere.",
        "seeds 12345 + k per group",
        "a paired bootstrap CI (base seed + 8)",
        "bands (seed = base + 1, the ramp group's)",
        "- Replicates: 10,000",
        "CCTP uses 1,000\nbootstrap replicates",
        "one stream, `default_rng(42)`",
    ] {
        assert!(!restated_bootstrap_facts(text, &f).is_empty(), "not found in {text:?}");
    }
    for text in ["10,000 items of the dataset", "the selection seed 42 (`--seed`)", "a paired bootstrap CI (its own stream)", "2,000 tokens"] {
        assert!(restated_bootstrap_facts(text, &f).is_empty(), "wrongly found in {text:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// (e) Cited paths exist
// ---------------------------------------------------------------------------------------------

/// The top folders whose paths the docs and the comments cite.
const CITED_ROOTS: [&str; 5] = ["src/", "prompts/", "assets/", "scripts/", "tests/"];

/// The paths a line cites: a word that starts with one of [`CITED_ROOTS`] (not in the middle of
/// another path, a URL or a variable: `$OUT/src/x`, `../src/x` and `tmp/tests/x` are not
/// citations), up to the first character that cannot be part of a path. A trailing `.` or `,`
/// ends the sentence, not the path. Each comes with whether a placeholder (`<…>`, `{…}`, `…`)
/// follows it at once, so that it is only the start of a name.
fn cited_paths(line: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let bytes: Vec<char> = line.chars().collect();
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '*' | '-');
    let mut i = 0;
    while i < bytes.len() {
        let starts = CITED_ROOTS.iter().find(|r| bytes[i..].iter().take(r.len()).copied().eq(r.chars()));
        let boundary = i == 0 || !(path_char(bytes[i - 1]) || matches!(bytes[i - 1], '$' | '~'));
        if let (Some(_), true) = (starts, boundary) {
            let mut j = i;
            while j < bytes.len() && path_char(bytes[j]) {
                j += 1;
            }
            let mut p: String = bytes[i..j].iter().collect();
            while p.ends_with(['.', ',']) {
                p.pop();
            }
            let placeholder = matches!(bytes.get(j), Some('<' | '{' | '…'));
            out.push((p, placeholder));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// `*` in one name: any run of characters.
fn wild_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            let Some(rest) = name.strip_prefix(head) else { return false };
            (0..=rest.len()).filter(|&k| rest.is_char_boundary(k)).any(|k| wild_match(tail, &rest[k..]))
        }
    }
}

/// Whether a cited path names something in the repository: a file or folder, something a glob
/// matches, or (before a placeholder) the start of a name in its folder.
fn cited_path_exists(root: &Path, path: &str, placeholder: bool) -> bool {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let mut dirs = vec![root.to_path_buf()];
    for (k, part) in parts.iter().enumerate() {
        let last = k + 1 == parts.len();
        let mut next = Vec::new();
        for d in &dirs {
            if part.contains('*') || (last && placeholder && !path.ends_with('/')) {
                let Ok(entries) = std::fs::read_dir(d) else { continue };
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().to_string();
                    let fits = if part.contains('*') { wild_match(part, &name) } else { name.starts_with(part) };
                    if fits {
                        next.push(e.path());
                    }
                }
            } else if d.join(part).exists() {
                next.push(d.join(part));
            }
        }
        dirs = next;
        if dirs.is_empty() {
            return false;
        }
    }
    true
}

/// The files whose text cites paths, relative to the root: the doc pages, and the Rust sources,
/// tests and TOML files of the repository (their comments only).
fn citing_files(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, exts, out);
            } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = doc_pages(root);
    for dir in ["src", "tests"] {
        walk(root, &root.join(dir), &["rs"], &mut out);
    }
    for dir in ["prompts", "assets"] {
        walk(root, &root.join(dir), &["toml"], &mut out);
    }
    out.extend(["models.toml", "Cargo.toml"].iter().map(PathBuf::from));
    out.sort();
    out
}

/// The lines of a file that may cite a path: every line of a Markdown page; the comments of a
/// Rust file (`//`, `///`, `//!` lines) and of a TOML file (`#` lines and trailing `# …`).
fn citing_lines(rel: &Path, text: &str) -> Vec<(usize, String)> {
    let ext = rel.extension().and_then(|x| x.to_str()).unwrap_or("");
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim_start();
            let comment = match ext {
                "md" => Some(l),
                "rs" => t.starts_with("//").then_some(t),
                "toml" => l.find(" # ").map(|k| &l[k..]).or_else(|| t.starts_with('#').then_some(t)),
                _ => None,
            };
            comment.map(|c| (i + 1, c.to_string()))
        })
        .collect()
}

#[test]
fn every_cited_path_exists() {
    let root = Path::new(ROOT);
    let mut bad = Vec::new();
    let mut seen = 0;
    for rel in citing_files(root) {
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else { continue };
        for (line, l) in citing_lines(&rel, &text) {
            for (path, placeholder) in cited_paths(&l) {
                seen += 1;
                if !cited_path_exists(root, &path, placeholder) {
                    bad.push(format!("{}:{line}: {path}", rel.display()));
                }
            }
        }
    }
    assert!(seen >= 100, "the docs and comments should cite paths; found {seen}");
    assert!(bad.is_empty(), "paths cited in the docs or in comments that do not exist (renamed or removed?):\n{}", bad.join("\n"));
}

#[test]
fn a_stale_cited_path_is_found() {
    let root = Path::new(ROOT);
    let got = cited_paths("see `src/tables/paper.rs`, src/cli.rs:180, (src/dialogue/recipe.rs), $OUT/src/x, ../src/y and assets/plans/<name>.toml.");
    let want: Vec<(String, bool)> = vec![
        ("src/tables/paper.rs".into(), false),
        ("src/cli.rs".into(), false),
        ("src/dialogue/recipe.rs".into(), false),
        ("assets/plans/".into(), true),
    ];
    assert_eq!(got, want);
    assert!(!cited_path_exists(root, "src/tables/paper.rs", false), "a file that became a folder");
    assert!(cited_path_exists(root, "src/tables/paper/", false));
    assert!(cited_path_exists(root, "src/tables/*.rs", false));
    assert!(!cited_path_exists(root, "src/tables/*.py", false));
    assert!(cited_path_exists(root, "assets/plans/", true));
    assert!(cited_path_exists(root, "src/cl", true), "the start of a name before a placeholder");
    assert!(!cited_path_exists(root, "src/no_such_module.rs", false));
    assert_eq!(citing_lines(Path::new("x.rs"), "let p = \"src/nowhere.rs\";\n    // src/cli.rs"), vec![(2, "// src/cli.rs".to_string())]);
}

// ---------------------------------------------------------------------------------------------
// (f) The troubleshooting page quotes the program's own errors
// ---------------------------------------------------------------------------------------------

/// The error lines a page quotes: each line of a `text` code block that starts with `error: `,
/// without that prefix.
fn quoted_errors(page: &str) -> Vec<(usize, String)> {
    let (blocks, _) = split_blocks(page);
    let mut out = Vec::new();
    for b in blocks.iter().filter(|b| b.lang == "text") {
        for (k, l) in b.lines.iter().enumerate() {
            if let Some(e) = l.trim().strip_prefix("error: ") {
                out.push((b.line + k, e.to_string()));
            }
        }
    }
    out
}

/// The Rust sources under `src/`, as one text in which a string literal reads as it prints:
/// `\"` as `"`, `{{` and `}}` as `{` and `}`, a line continuation (`\` at the end of a line)
/// joined to the next line's text; and once more with every `{}` left out (an argument that may
/// print nothing).
fn source_text(root: &Path) -> String {
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    walk(&root.join("src"), &mut files);
    files.sort();
    let text = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect::<Vec<_>>().join("\n");
    let text = as_printed(&text);
    let without_empty_args = text.replace("{}", "");
    format!("{text}\n{without_empty_args}")
}

/// Source text as its string literals print: escaped quotes, doubled braces and line
/// continuations undone.
fn as_printed(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(k) = rest.find("\\\n") {
        out.push_str(&rest[..k]);
        rest = rest[k + 2..].trim_start();
    }
    out.push_str(rest);
    out.replace("\\\"", "\"").replace("{{", "{").replace("}}", "}")
}

/// The pieces of a quoted error (between the `…` that stand for what varies) that the source
/// does not contain. A piece is taken without the separators at its ends (`: `, `; `, `, `),
/// which may belong to the format string around a nested message.
fn pieces_not_in_source(quoted: &str, source: &str) -> Vec<String> {
    quoted
        .split('…')
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || matches!(c, ':' | ';' | ',')))
        .filter(|p| !p.is_empty())
        .filter(|p| !source.contains(p))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_quoted_error_is_the_programs() {
    let root = Path::new(ROOT);
    let page = read(root, Path::new(TROUBLESHOOTING_MD));
    let quoted = quoted_errors(&page);
    assert!(quoted.len() >= 30, "{TROUBLESHOOTING_MD} should quote the errors a user can meet; found {}", quoted.len());
    let source = source_text(root);
    let mut bad = Vec::new();
    for (line, q) in &quoted {
        let missing = pieces_not_in_source(q, &source);
        if !missing.is_empty() {
            bad.push(format!("{TROUBLESHOOTING_MD}:{line}: {missing:?} (of `error: {q}`)"));
        }
    }
    assert!(
        bad.is_empty(),
        "error lines quoted on the troubleshooting page that the program no longer prints (follow the message in src/, or drop the entry):\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_quoted_error_the_program_does_not_print_is_found() {
    let source = as_printed(
        "bail!(\"run directory {dir} is in use by pid {pid}\");\n#[error(\"set `template = {{ kind = \\\"named\\\" }}`\")]\n\
         format!(\"{} holds scores of another build: \\\n     stored: {theirs}\")",
    );
    assert!(pieces_not_in_source("run directory … is in use by pid …", &source).is_empty());
    assert!(pieces_not_in_source("set `template = { kind = \"named\" }`", &source).is_empty());
    assert!(pieces_not_in_source("… holds scores of another build: stored: …", &source).is_empty(), "a line continuation");
    assert!(pieces_not_in_source("dataset …: run directory …", &source).len() == 1, "separators at the ends of a piece");
    assert_eq!(pieces_not_in_source("run directory … is locked by pid …", &source), vec!["is locked by pid"]);
    let page = "x\n```text\nerror: one … two\nnot an error\n```\n```sh\nerror: in a shell block\n```\n";
    assert_eq!(quoted_errors(page), vec![(3, "one … two".to_string())]);
}

// ---------------------------------------------------------------------------------------------
// (g) The docs index lists every page
// ---------------------------------------------------------------------------------------------

#[test]
fn the_docs_index_lists_every_page() {
    let root = Path::new(ROOT);
    let index = Path::new("docs/README.md");
    let (_, prose) = split_blocks(&read(root, index));
    let linked: BTreeSet<PathBuf> =
        prose.iter().flat_map(|(_, l)| link_targets(l)).filter_map(|t| normalize(&Path::new("docs").join(t.split('#').next().unwrap_or("")))).collect();
    let missing: Vec<String> = doc_pages(root)
        .into_iter()
        .filter(|p| p.starts_with("docs") && p != index && !linked.contains(p))
        .map(|p| p.display().to_string())
        .collect();
    assert!(missing.is_empty(), "docs/README.md does not list: {}", missing.join(", "));
}

// ---------------------------------------------------------------------------------------------
// (h) A command's help lists only the global options it uses
// ---------------------------------------------------------------------------------------------

#[test]
fn a_commands_help_lists_only_the_global_options_it_uses() {
    let mut cmd = cli::command();
    cmd.build();
    let globals: BTreeSet<String> = cmd.get_arguments().filter(|a| a.is_global_set()).map(|a| a.get_id().to_string()).collect();
    for (path, sub) in command_paths() {
        let words: Vec<&str> = path.split(' ').skip(1).collect();
        for id in cli::unused_global_opts(&words) {
            assert!(globals.contains(id), "{path}: `{id}` is not a global option");
            if sub.get_subcommands().next().is_none() {
                let arg = sub.get_arguments().find(|a| a.get_id() == id).unwrap_or_else(|| panic!("{path} lacks the global {id}"));
                assert!(arg.is_hide_set(), "{path} --help lists {id}, which it does not use");
            }
        }
    }
    // The example of the issue: `tables` loads no model, so its help names no engine option, but
    // the option is still accepted.
    let help = cmd.clone().find_subcommand_mut("tables").unwrap().render_long_help().to_string();
    for engine_opt in ["--threads", "--no-cache", "--gpu-layers", "--allow-inexact-reuse", "--ctx"] {
        assert!(!help.contains(engine_opt), "tables --help lists {engine_opt}");
    }
    assert!(help.contains("--from"));
    // A hidden option is parsed as before, and its value reaches the global options.
    for argv in [["hyst-tui", "tables", "--from", "x", "--threads", "2", "--no-cache"], ["hyst-tui", "--threads", "2", "--no-cache", "tables", "--from", "x"]] {
        let m = cmd.clone().try_get_matches_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let parsed = <cli::Cli as clap::FromArgMatches>::from_arg_matches(&m).unwrap();
        assert_eq!((parsed.global.threads, parsed.global.no_cache), (Some(2), true), "{argv:?}");
    }
    let batch = cmd.clone().find_subcommand_mut("batch").unwrap().render_long_help().to_string();
    assert!(batch.contains("--threads") && batch.contains("--score-store"), "batch uses every global option");
}
