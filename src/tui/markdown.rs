//! Just enough Markdown for the run's `tables/*.md` and `summary.md`: headings, paragraphs,
//! bullet lists and pipe tables (which the Tables view draws as booktabs-style tables).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
    Center,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Block {
    Heading(usize, String),
    Text(String),
    Blank,
    Table {
        header: Vec<String>,
        align: Vec<Align>,
        rows: Vec<Vec<String>>,
    },
}

#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Doc {
    pub(crate) blocks: Vec<Block>,
}

/// Cells of a pipe-table row (`| a | b \| c |` → `["a", "b | c"]`).
pub(crate) fn split_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').filter(|x| !x.ends_with('\\')).unwrap_or(t);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

fn separator_align(cells: &[String]) -> Option<Vec<Align>> {
    cells
        .iter()
        .map(|c| {
            let c = c.trim();
            if c.is_empty() || !c.chars().all(|x| matches!(x, '-' | ':')) || !c.contains('-') {
                return None;
            }
            Some(match (c.starts_with(':'), c.ends_with(':')) {
                (true, true) => Align::Center,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// Strips inline markup the terminal cannot show (`**`, backticks).
pub(crate) fn inline(s: &str) -> String {
    s.replace("**", "").replace('`', "")
}

pub(crate) fn parse(src: &str) -> Doc {
    let lines: Vec<&str> = src.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim();
        if t.starts_with('|') {
            let header = split_row(t);
            let mut align = vec![Align::Left; header.len()];
            let mut j = i + 1;
            if let Some(a) = lines.get(j).map(|x| split_row(x)).and_then(|c| separator_align(&c)) {
                align = a;
                j += 1;
            }
            let mut rows = Vec::new();
            while j < lines.len() && lines[j].trim().starts_with('|') {
                rows.push(split_row(lines[j]).into_iter().map(|c| inline(&c)).collect());
                j += 1;
            }
            align.resize(header.len(), Align::Left);
            blocks.push(Block::Table {
                header: header.into_iter().map(|c| inline(&c)).collect(),
                align,
                rows,
            });
            i = j;
            continue;
        }
        if t.is_empty() {
            if !matches!(blocks.last(), Some(Block::Blank) | None) {
                blocks.push(Block::Blank);
            }
        } else if let Some(h) = t.strip_prefix('#') {
            let level = 1 + h.chars().take_while(|&c| c == '#').count();
            blocks.push(Block::Heading(level, inline(h.trim_start_matches('#').trim())));
        } else {
            blocks.push(Block::Text(inline(l.trim_end())));
        }
        i += 1;
    }
    Doc { blocks }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tables_and_text() {
        let d = parse("# Table 2\n\nSome **text**.\n\n| a | b |\n|---|---:|\n| x \\| y | 1.0 |\n| z | 2 |\n\n- note\n");
        assert_eq!(d.blocks[0], Block::Heading(1, "Table 2".into()));
        assert_eq!(d.blocks[2], Block::Text("Some text.".into()));
        match &d.blocks[4] {
            Block::Table { header, align, rows } => {
                assert_eq!(header, &vec!["a".to_string(), "b".to_string()]);
                assert_eq!(align, &vec![Align::Left, Align::Right]);
                assert_eq!(rows[0], vec!["x | y".to_string(), "1.0".to_string()]);
                assert_eq!(rows.len(), 2);
            }
            b => panic!("{b:?}"),
        }
        assert_eq!(d.blocks.last(), Some(&Block::Text("- note".into())));
    }
}
