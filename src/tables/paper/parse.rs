//! Parsing the printed tables: a TSV into header and rows, and a printed cell into its number
//! (with the decimals printed), interval `[lo, hi]` or count `k/N`.

/// One printed table as parsed from its TSV: header and rows (a blank first cell repeats the
/// row above).
pub(crate) struct Printed {
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
}

pub(crate) fn parse_tsv(text: &str) -> Printed {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split('\t')
        .map(|s| s.trim().to_string())
        .collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for l in lines {
        let mut r: Vec<String> = l.split('\t').map(|s| s.trim().to_string()).collect();
        r.resize(header.len(), String::new());
        if r.first().is_some_and(String::is_empty) {
            if let Some(prev) = rows.last().and_then(|p| p.first()) {
                r[0] = prev.clone();
            }
        }
        rows.push(r);
    }
    Printed { header, rows }
}

/// The text of a printed row's cell in column `col` (None when the table has no such column).
pub(super) fn printed_cell<'r>(printed: &Printed, prow: &'r [String], col: &str) -> Option<&'r str> {
    let i = printed.header.iter().position(|h| h == col)?;
    prow.get(i).map(String::as_str)
}

/// A printed number: its value and the decimals printed (`+0.440` → (0.44, 3); `41.2%` →
/// (41.2, 1)).
pub(super) fn printed_number(s: &str) -> Option<(f64, usize)> {
    let t = s.trim().trim_end_matches('%').trim_start_matches('+');
    let v: f64 = t.parse().ok()?;
    let d = t.split_once('.').map_or(0, |(_, f)| f.len());
    Some((v, d))
}

/// A printed interval `[lo, hi]`.
pub(super) fn printed_interval(s: &str) -> Option<((f64, usize), (f64, usize))> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (a, b) = inner.split_once(',')?;
    Some((printed_number(a)?, printed_number(b)?))
}

/// A printed count `k/N`.
pub(super) fn printed_count(s: &str) -> Option<(usize, usize)> {
    let (k, n) = s.trim().split_once('/')?;
    Some((k.trim().parse().ok()?, n.trim().parse().ok()?))
}
