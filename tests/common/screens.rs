//! Snapshots of screens that show probabilities computed by llama.cpp on this machine.
//!
//! The digits of a score depend on the kernels llama.cpp was built with (see
//! `src/engine/provenance.rs`: an AVX-512 build differs from an AVX2 build by up to 0.05 in an
//! option probability on Q4 models). `tests/snapshots/PROVENANCE` records the numeric provenance
//! the engine snapshots were made with. On a build with that provenance they are compared byte
//! for byte (insta). On any other build (another SIMD variant, an ARM Mac, a GPU backend, another
//! llama.cpp) the screen is compared with the stored snapshot with [`TOLERANCE`]: the same lines,
//! the same words and integers, every decimal number within the tolerance, and the glyphs drawn
//! from the numbers (bar blocks, braille curves, the clean-level marker) left out.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Decimal numbers on a foreign build may differ by this much, absolute, plus this much times
/// their size (probabilities: 0.06 covers the 0.05 measured between AVX2 and AVX-512 builds).
pub const TOLERANCE: f64 = 0.06;

pub fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// The numeric provenance the engine snapshots were made with.
pub fn recorded_provenance() -> String {
    let p = snapshot_dir().join("PROVENANCE");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).trim().to_string()
}

/// `None`: this build has the recorded provenance (exact snapshots); else why not.
pub fn foreign_provenance() -> Option<String> {
    let here = hyst_tui::engine::provenance::provenance(0);
    let recorded = recorded_provenance();
    (here != recorded).then(|| format!("this build's numeric provenance is {here:?}, the snapshots' {recorded:?}"))
}

/// The content of a stored insta snapshot (the text after its `---` header).
pub fn stored_snapshot(test_file: &str, name: &str) -> String {
    let stem = Path::new(test_file).file_stem().unwrap().to_string_lossy().into_owned();
    let p = snapshot_dir().join(format!("{stem}__{name}.snap"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let body = text.strip_prefix("---\n").and_then(|t| t.split_once("\n---\n")).map(|(_, b)| b);
    body.unwrap_or_else(|| panic!("{}: not an insta snapshot", p.display())).trim_end_matches('\n').to_string()
}

/// Glyphs whose shape follows the numbers: block elements (bars), braille (curves) and the
/// clean-level marker that a bar may cover.
fn drawn_from_numbers(c: char) -> bool {
    matches!(c, '\u{2580}'..='\u{259F}' | '\u{2800}'..='\u{28FF}' | '┊')
}

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Int(String),
    Decimal(f64),
}

fn tokens(line: &str) -> Vec<Token> {
    let cs: Vec<char> = line.chars().map(|c| if drawn_from_numbers(c) { ' ' } else { c }).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let signed = (c == '-' || c == '+') && cs.get(i + 1).is_some_and(|d| d.is_ascii_digit()) && (i == 0 || !cs[i - 1].is_alphanumeric());
        if c.is_ascii_digit() || signed {
            let start = i;
            i += 1;
            while i < cs.len() && (cs[i].is_ascii_digit() || (cs[i] == '.' && cs.get(i + 1).is_some_and(|d| d.is_ascii_digit()))) {
                i += 1;
            }
            let s: String = cs[start..i].iter().collect();
            out.push(if s.contains('.') { Token::Decimal(s.parse().unwrap()) } else { Token::Int(s) });
            continue;
        }
        let start = i;
        while i < cs.len() && !cs[i].is_whitespace() && !cs[i].is_ascii_digit() {
            i += 1;
        }
        out.push(Token::Word(cs[start..i].iter().collect()));
    }
    out
}

/// Compares a screen with a stored one under [`TOLERANCE`]; `Err` says where they differ.
pub fn close_to(screen: &str, stored: &str) -> Result<(), String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (screen.trim_end_matches('\n').lines().collect(), stored.lines().collect());
    if a.len() != b.len() {
        return Err(format!("{} lines, the snapshot has {}", a.len(), b.len()));
    }
    for (n, (x, y)) in a.iter().zip(&b).enumerate() {
        let (tx, ty) = (tokens(x), tokens(y));
        let same = tx.len() == ty.len()
            && tx.iter().zip(&ty).all(|(p, q)| match (p, q) {
                (Token::Decimal(u), Token::Decimal(v)) => (u - v).abs() <= TOLERANCE * (1.0 + u.abs().max(v.abs())),
                _ => p == q,
            });
        if !same {
            return Err(format!("line {}:\n  screen:   {x}\n  snapshot: {y}", n + 1));
        }
    }
    Ok(())
}

/// `insta::assert_snapshot!(name, screen)` on a build with the snapshots' numeric provenance;
/// on another build the screen must be [`close_to`] the stored snapshot.
#[allow(unused_macros)]
macro_rules! assert_engine_screen {
    ($name:expr, $screen:expr) => {{
        let screen: String = $screen;
        match crate::common::screens::foreign_provenance() {
            None => insta::assert_snapshot!($name, screen),
            Some(why) => {
                let stored = crate::common::screens::stored_snapshot(file!(), $name);
                if let Err(diff) = crate::common::screens::close_to(&screen, &stored) {
                    panic!("snapshot {} (compared within {} because {why}) differs at {diff}", $name, crate::common::screens::TOLERANCE);
                }
            }
        }
    }};
}
#[allow(unused_imports)]
pub(crate) use assert_engine_screen;
