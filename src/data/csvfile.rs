//! Reading a whole CSV file with the `csv` crate (RFC 4180: quoted fields, doubled quotes, line
//! breaks inside quotes; `\n`, `\r\n` or `\r` line ends; a UTF-8 byte order mark at the start is
//! skipped). The first record is the header. Every malformed input is one [`DataError`] naming the
//! file and the line: bad UTF-8, a record whose field count differs from the header's, a quoted
//! field that is never closed. Records whose fields are all blank are skipped.

use std::path::Path;

use csv::StringRecord;
use serde::de::DeserializeOwned;

use super::item::DataError;

/// A CSV file: its header and its non-blank data records.
pub(crate) struct Table {
    /// The file as named in errors.
    pub(crate) file: String,
    pub(crate) header: StringRecord,
    pub(crate) records: Vec<Record>,
}

/// One data record.
pub(crate) struct Record {
    /// 1-based row as a spreadsheet numbers it: the header is row 1, blank lines count, a line
    /// break inside a quoted field does not.
    pub(crate) row: usize,
    pub(crate) fields: StringRecord,
}

/// Reads and parses `path` (see the module docs).
pub fn read(path: &Path) -> Result<Table, DataError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| DataError::File {
        file: file.clone(),
        message: format!("cannot read: {e}"),
    })?;
    parse(&bytes, &file)
}

/// Reads `path` and deserialises every data record into `T` by header name (after trimming each
/// field). `columns` are the header names `T` needs; a missing one is an error naming it, columns
/// not in `T` are ignored.
pub fn read_rows<T: DeserializeOwned>(path: &Path, columns: &[&str]) -> Result<Vec<T>, DataError> {
    let mut table = read(path)?;
    table.require(columns)?;
    for r in &mut table.records {
        r.fields.trim();
    }
    table
        .records
        .iter()
        .map(|r| table.deserialize(r, &table.header))
        .collect()
}

/// Parses CSV bytes; `file` names them in errors.
fn parse(bytes: &[u8], file: &str) -> Result<Table, DataError> {
    let at_line = |line: usize, message: String| DataError::File {
        file: file.into(),
        message: format!("line {line}: {message}"),
    };
    let mut lines = Lines::new(bytes);
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    // (line, record) for every record, the header first.
    let mut raw: Vec<(usize, StringRecord)> = Vec::new();
    let mut rec = StringRecord::new();
    loop {
        match rdr.read_record(&mut rec) {
            Ok(true) => {
                let start = rec.position().map_or(0, |p| p.byte() as usize);
                raw.push((lines.line_of_record_at(start), rec.clone()));
            }
            Ok(false) => break,
            Err(e) => {
                return Err(match e.kind() {
                    csv::ErrorKind::Utf8 { pos, err } => {
                        let line = lines.line_of_record_at(pos.as_ref().map_or(0, |p| p.byte() as usize));
                        let column = raw
                            .first()
                            .and_then(|(_, h)| h.get(err.field()))
                            .map(|name| format!(" (column `{}`)", name.trim()))
                            .unwrap_or_default();
                        at_line(line, format!("not valid UTF-8 in field {}{column}", err.field() + 1))
                    }
                    _ => DataError::File {
                        file: file.into(),
                        message: e.to_string(),
                    },
                })
            }
        }
    }
    // The csv crate ends an unclosed quoted field silently at the end of the input, so such a
    // field is always in the last record: parse that record again with a line `""` appended,
    // which is a record of its own unless the quote is still open.
    if let Some((line, last)) = raw.last() {
        let start = lines.record_start(last.position().map_or(0, |p| p.byte() as usize));
        let mut tail = bytes[start..].to_vec();
        tail.extend_from_slice(b"\n\"\"\n");
        let n = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(tail.as_slice())
            .byte_records()
            .count();
        if n < 2 {
            return Err(at_line(
                *line,
                "unterminated quoted field: a quote opened in the record starting here is never closed".into(),
            ));
        }
    }
    let mut it = raw.into_iter();
    let Some((_, header)) = it.next() else {
        return Err(DataError::File {
            file: file.into(),
            message: "empty file".into(),
        });
    };
    // Line breaks inside quoted fields so far: row = line - those.
    let mut quoted_breaks = count_breaks(header.iter());
    let mut records = Vec::new();
    for (line, fields) in it {
        let row = line - quoted_breaks;
        quoted_breaks += count_breaks(fields.iter());
        if fields.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        if fields.len() != header.len() {
            return Err(at_line(
                line,
                format!("{} fields, but the header has {}", fields.len(), header.len()),
            ));
        }
        records.push(Record { row, fields });
    }
    Ok(Table {
        file: file.into(),
        header,
        records,
    })
}

impl Table {
    /// Each of `columns` must be in the header exactly once.
    fn require(&self, columns: &[&str]) -> Result<(), DataError> {
        for c in columns {
            match self.header.iter().filter(|h| h == c).count() {
                1 => {}
                0 => {
                    return Err(DataError::File {
                        file: self.file.clone(),
                        message: format!("missing column `{c}`"),
                    })
                }
                _ => {
                    return Err(DataError::File {
                        file: self.file.clone(),
                        message: format!("column `{c}` appears more than once"),
                    })
                }
            }
        }
        Ok(())
    }

    /// Deserialises one record by the names in `header` (the file's own, or a normalised copy).
    pub fn deserialize<T: DeserializeOwned>(&self, r: &Record, header: &StringRecord) -> Result<T, DataError> {
        r.fields.deserialize(Some(header)).map_err(|e| {
            let (field, message) = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => match err.field().map(|i| i as usize) {
                    Some(i) => (
                        header.get(i).unwrap_or("(row)").to_string(),
                        format!("{:?}: {}", r.fields.get(i).unwrap_or(""), err.kind()),
                    ),
                    None => ("(row)".to_string(), err.kind().to_string()),
                },
                _ => ("(row)".to_string(), e.to_string()),
            };
            DataError::Row {
                file: self.file.clone(),
                row: r.row,
                field,
                message,
            }
        })
    }
}

/// Line breaks: `\r\n`, `\n`, or a lone `\r`.
fn count_breaks<'a>(fields: impl Iterator<Item = &'a str>) -> usize {
    fields
        .map(|f| {
            let b = f.as_bytes();
            (0..b.len())
                .filter(|&i| b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')))
                .count()
        })
        .sum()
}

/// Line numbers of byte offsets, for offsets met in increasing order.
struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0, line: 1 }
    }

    /// The reader's position before a record can sit before blank lines it skips, or on the `\n`
    /// of a `\r\n`: the record's first byte is past those.
    fn record_start(&self, at: usize) -> usize {
        let skip = self.bytes[at.min(self.bytes.len())..]
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        at + skip
    }

    /// The 1-based line of the record read from position `at`.
    fn line_of_record_at(&mut self, at: usize) -> usize {
        let to = self.record_start(at).min(self.bytes.len());
        while self.pos < to {
            let b = self.bytes[self.pos];
            if b == b'\n' || (b == b'\r' && self.bytes.get(self.pos + 1) != Some(&b'\n')) {
                self.line += 1;
            }
            self.pos += 1;
        }
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(t: &Table) -> Vec<(usize, Vec<String>)> {
        t.records
            .iter()
            .map(|r| (r.row, r.fields.iter().map(String::from).collect()))
            .collect()
    }

    fn err(bytes: &[u8]) -> String {
        match parse(bytes, "t.csv") {
            Ok(_) => panic!("{:?} should not parse", String::from_utf8_lossy(bytes)),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn quoted_fields_commas_quotes_line_breaks() {
        let t = parse(b"a,b,c\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\nplain,,\"\"\n", "t.csv").unwrap();
        assert_eq!(t.header.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(
            rows(&t),
            [
                (2, vec!["x, y".into(), "say \"hi\"".into(), "two\nlines".into()]),
                // row 3 (a spreadsheet's numbering), on line 4 of the file
                (3, vec!["plain".into(), "".into(), "".into()]),
            ]
        );
    }

    #[test]
    fn crlf_lone_cr_and_no_final_newline() {
        let lf = rows(&parse(b"a,b\n1,\"x\ny\"\n3,4", "t.csv").unwrap());
        let crlf = rows(&parse(b"a,b\r\n1,\"x\ny\"\r\n3,4\r\n", "t.csv").unwrap());
        let cr = rows(&parse(b"a,b\r1,\"x\ny\"\r3,4\r", "t.csv").unwrap());
        assert_eq!(lf, [(2, vec!["1".into(), "x\ny".into()]), (3, vec!["3".into(), "4".into()])]);
        assert_eq!(crlf, lf);
        assert_eq!(cr, lf);
    }

    #[test]
    fn utf8_bom_at_file_start_is_skipped() {
        let t = parse(b"\xEF\xBB\xBFquestion,answer\r\nQ,A\r\n", "t.csv").unwrap();
        assert_eq!(t.header.get(0), Some("question"));
        assert_eq!(rows(&t), [(2, vec!["Q".into(), "A".into()])]);
    }

    #[test]
    fn blank_records_are_skipped_but_counted_as_rows() {
        let t = parse(b"a,b\n\n1,2\n  \n , \n\r\n3,4\n\n", "t.csv").unwrap();
        assert_eq!(
            rows(&t),
            [(3, vec!["1".into(), "2".into()]), (7, vec!["3".into(), "4".into()])]
        );
    }

    #[test]
    fn unterminated_quote_names_file_and_line() {
        // In the last column the field count would still match: the check must not rely on it.
        let e = err(b"q,a\nQ1,A\nQ2,\"B\nQ3,C\n");
        assert_eq!(e, "t.csv: line 3: unterminated quoted field: a quote opened in the record starting here is never closed");
        let e = err(b"q,a\n\"Q1\n\nmore,A\n");
        assert!(e.starts_with("t.csv: line 2: unterminated quoted field"), "{e}");
        let e = err(b"q,a\r\nQ1,\"ends with an escaped quote\"\"");
        assert!(e.starts_with("t.csv: line 2: unterminated"), "{e}");
        let e = err(b"\"q,a");
        assert!(e.starts_with("t.csv: line 1: unterminated"), "{e}");
        // Closed quotes at the very end are fine.
        assert!(parse(b"q,a\nQ,\"A\"", "t.csv").is_ok());
        assert!(parse(b"q,a\nQ,\"A\"\"\"", "t.csv").is_ok());
        assert!(parse(b"q,a\nQ,\"\"", "t.csv").is_ok());
    }

    #[test]
    fn wrong_field_count_names_file_and_line() {
        let e = err(b"q,a,b\nQ1,A,x\n\"Q\n2\",A\n");
        assert_eq!(e, "t.csv: line 3: 2 fields, but the header has 3");
        let e = err(b"q,a\nQ1,A,extra\n");
        assert_eq!(e, "t.csv: line 2: 3 fields, but the header has 2");
    }

    #[test]
    fn bad_utf8_names_file_line_and_column() {
        let e = err(b"q,a\nQ1,A\n\"multi\nline\",B\nQ3,\xff\n");
        assert_eq!(e, "t.csv: line 5: not valid UTF-8 in field 2 (column `a`)");
        let e = err(b"q\xff,a\n");
        assert_eq!(e, "t.csv: line 1: not valid UTF-8 in field 1");
    }

    #[test]
    fn empty_file_and_missing_columns() {
        assert_eq!(err(b""), "t.csv: empty file");
        assert_eq!(err(b"\n\r\n"), "t.csv: empty file");
        let t = parse(b"a,b,a\n", "t.csv").unwrap();
        assert!(t.records.is_empty());
        assert!(t.require(&["b"]).is_ok());
        assert_eq!(t.require(&["c"]).unwrap_err().to_string(), "t.csv: missing column `c`");
        assert_eq!(t.require(&["a"]).unwrap_err().to_string(), "t.csv: column `a` appears more than once");
    }

    #[test]
    fn typed_rows_name_row_and_field() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct R {
            name: String,
            n: usize,
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.csv");
        std::fs::write(&p, "extra,n,name\nx, 4 ,\" a, b \"\n\ny,x5,c\n").unwrap();
        let e = read_rows::<R>(&p, &["name", "n"]).unwrap_err().to_string();
        assert_eq!(e, format!("{}: row 4: field `n`: \"x5\": invalid digit found in string", p.display()));
        std::fs::write(&p, "extra,n,name\nx, 4 ,\" a, b \"\n").unwrap();
        let got = read_rows::<R>(&p, &["name", "n"]).unwrap();
        assert_eq!(got, [R { name: "a, b".into(), n: 4 }]);
        let e = read_rows::<R>(&p, &["name", "n", "id"]).unwrap_err().to_string();
        assert!(e.ends_with("r.csv: missing column `id`"), "{e}");
        let e = read_rows::<R>(&dir.path().join("none.csv"), &[]).unwrap_err().to_string();
        assert!(e.contains("none.csv: cannot read"), "{e}");
    }
}
