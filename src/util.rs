//! Small helpers every layer may use.

/// A TOML parse error as one line: `line L, column C: message` (the toml crate's own rendering
/// spans several lines with a source excerpt).
pub(crate) fn toml_error(src: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let start = span.start.min(src.len());
            let before = &src.as_bytes()[..start];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = start - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {col}: {msg}")
        }
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_errors_are_one_line_with_a_position() {
        let src = "a = 1\nb = = 2\n";
        let e = toml::from_str::<toml::Table>(src).unwrap_err();
        let s = toml_error(src, &e);
        assert!(s.starts_with("line 2, column "), "{s}");
        assert!(!s.contains('\n'));
    }
}
