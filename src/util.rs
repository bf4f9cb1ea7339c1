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
