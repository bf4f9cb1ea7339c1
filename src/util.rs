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

/// The largest file a person writes for the tool that it reads (models.toml, an experiment, a
/// run plan, a prompt set): far above any real one (the bundled files are under 40 KB), far below
/// what would hold up a run.
pub(crate) const MAX_INPUT_FILE_BYTES: u64 = 4 << 20;

/// Reads a text file written by a person — perhaps a colleague's, so treated as input: a
/// regular file (not a FIFO or a device that never ends), at most [`MAX_INPUT_FILE_BYTES`],
/// UTF-8. The error is the reason alone; the caller names the file.
pub(crate) fn read_input_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(format!("{} bytes: more than the {MAX_INPUT_FILE_BYTES} bytes a file of settings may have", meta.len()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(format!("more than the {MAX_INPUT_FILE_BYTES} bytes a file of settings may have"));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// The first control character in a TOML document's keys and strings (raw or written as an
/// escape such as `\u001b`), as `field `a.b[2]`: …`. Tabs and line breaks are text; every
/// other control character (a terminal escape sequence, a bell, NUL) would reach a terminal,
/// a table or a model's prompt unseen, so files carrying one are refused. `None` when there is
/// none, or when the text is not TOML (the caller's parser then says why).
pub(crate) fn toml_control_character(src: &str) -> Option<String> {
    fn bad(s: &str) -> Option<char> {
        s.chars().find(|&c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    }
    fn walk(v: &toml::Value, at: &str) -> Option<(String, char)> {
        match v {
            toml::Value::String(s) => bad(s).map(|c| (at.to_string(), c)),
            toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| walk(x, &format!("{at}[{i}]"))),
            toml::Value::Table(t) => t.iter().find_map(|(k, x)| {
                let here = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                bad(k).map(|c| (here.clone(), c)).or_else(|| walk(x, &here))
            }),
            _ => None,
        }
    }
    let doc: toml::Table = toml::from_str(src).ok()?;
    let (at, c) = walk(&toml::Value::Table(doc), "")?;
    Some(format!("field `{at}`: a control character (U+{:04X}) is not allowed in a settings file", c as u32))
}

/// A byte count in decimal units with one decimal: `1.5 KB`, `4.1 GB`, `1.2 TB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Adds the nanoseconds since `t0` to `cell` (a clock one thread keeps).
pub(crate) fn add_since(cell: &std::cell::Cell<u64>, t0: std::time::Instant) {
    cell.set(cell.get() + t0.elapsed().as_nanos() as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_found_raw_or_escaped_and_text_passes() {
        assert_eq!(toml_control_character("a = \"x\ny\\tz\"\n[t]\nb = \"\"\"\nline\nline\n\"\"\"\n"), None);
        let esc = toml_control_character("[models.m]\nname = \"x \\u001b[31mred\"\n").unwrap();
        assert_eq!(esc, "field `models.m.name`: a control character (U+001B) is not allowed in a settings file");
        let bell = toml_control_character("a = [\"ok\", \"bell \\u0007\"]\n").unwrap();
        assert!(bell.starts_with("field `a[1]`: a control character (U+0007)"), "{bell}");
        // Raw control characters are not TOML: the parser refuses them itself.
        assert_eq!(toml_control_character("a = \"bell \u{7}\"\n"), None);
        assert!(toml_control_character("\"k\\u0000\" = 1\n").unwrap().contains("U+0000"));
        assert_eq!(toml_control_character("not = = toml"), None);
    }

    #[test]
    fn input_files_are_regular_bounded_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.toml");
        std::fs::write(&p, "a = 1\n").unwrap();
        assert_eq!(read_input_file(&p).unwrap(), "a = 1\n");
        assert_eq!(read_input_file(dir.path()).unwrap_err(), "not a regular file");
        std::fs::write(&p, [b'a', 0xff, b'b']).unwrap();
        assert_eq!(read_input_file(&p).unwrap_err(), "not UTF-8 text (byte 1)");
        std::fs::File::create(&p).unwrap().set_len(MAX_INPUT_FILE_BYTES + 1).unwrap();
        assert!(read_input_file(&p).unwrap_err().starts_with(&format!("{} bytes: more than", MAX_INPUT_FILE_BYTES + 1)));
        assert!(read_input_file(&dir.path().join("none")).unwrap_err().starts_with("cannot read: "));
    }

    #[test]
    fn toml_errors_are_one_line_with_a_position() {
        let src = "a = 1\nb = = 2\n";
        let e = toml::from_str::<toml::Table>(src).unwrap_err();
        let s = toml_error(src, &e);
        assert!(s.starts_with("line 2, column "), "{s}");
        assert!(!s.contains('\n'));
    }
}

/// `scheme://host[:port]` of a URL.
pub(crate) fn origin(url: &str) -> &str {
    let after = url.find("://").map(|i| i + 3).unwrap_or(0);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

/// Whether requests to `url` go around a proxy: loopback hosts and `NO_PROXY` matches (ureq
/// itself reads the proxy variables but not `NO_PROXY`).
pub(crate) fn no_proxy_for(url: &str) -> bool {
    let o = origin(url);
    let hostport = o.split("://").nth(1).unwrap_or(o);
    let host = if hostport.starts_with('[') {
        hostport.split(']').next().unwrap_or(hostport).trim_start_matches('[')
    } else {
        hostport.split(':').next().unwrap_or(hostport)
    };
    if host == "localhost" || host == "::1" || host.starts_with("127.") {
        return true;
    }
    let list = std::env::var("NO_PROXY").or_else(|_| std::env::var("no_proxy")).unwrap_or_default();
    list.split(',').map(str::trim).filter(|s| !s.is_empty()).any(|p| {
        let p = p.trim_start_matches("*.").trim_start_matches('.');
        p == "*" || host == p || host.ends_with(&format!(".{p}"))
    })
}
