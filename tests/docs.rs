//! The documentation cannot drift from the program (CONTRIBUTING.md, "The docs"):
//!
//! - every `hyst-tui …` and `cargo run --release -- …` line in a code block of the docs parses
//!   with the real command line definition (`src/cli.rs`, compiled into this test);
//! - every relative link and `#anchor` between the docs resolves (GitHub's heading anchors);
//! - `docs/reference/commands.md` is what the command line definition generates
//!   (`HYST_WRITE_DOCS=1` rewrites it);
//! - the bootstrap seeds and replicate counts have one home, docs/protocol.md, which states them
//!   as `src/metrics/bootstrap.rs` has them; no other page restates them.
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

use clap::CommandFactory;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The generated command reference.
const COMMANDS_MD: &str = "docs/reference/commands.md";
/// The one home of the method, the seeds and the replicate counts.
const PROTOCOL_MD: &str = "docs/protocol.md";

/// Every Markdown page of the documentation: the README, CONTRIBUTING.md, ARCHITECTURE.md and
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
    let mut out: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"].iter().map(PathBuf::from).collect();
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
    match cli::Cli::command().try_get_matches_from(argv) {
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
    let mut cmd = cli::Cli::command();
    cmd.build();
    let mut out = String::from(
        "# Command reference\n\n\
         <!-- Generated from src/cli.rs by tests/docs.rs; do not edit. Rewrite it with\n     \
         HYST_WRITE_DOCS=1 cargo test --release --test docs -->\n\n\
         Every command and flag of `hyst-tui`, with the help it prints (`hyst-tui help COMMAND`).\n\
         What the commands do beyond their help, the exit codes and the environment are in\n\
         [what the commands do](cli.md). Global options (marked so below) work with every command.\n\n",
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
    // Every command and every visible flag is in it.
    let cmd = cli::Cli::command();
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        assert!(want.contains(&format!("`hyst-tui {}`", sub.get_name())), "{}", sub.get_name());
        for a in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            for l in a.get_long().into_iter().chain(a.get_visible_aliases().unwrap_or_default()) {
                assert!(want.contains(&format!("--{l}")), "--{l} of {}", sub.get_name());
            }
        }
    }
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
