//! Typed rows. A table's rows are a `#[derive(Serialize, Default)]` struct whose field names are
//! the column names (`#[serde(rename = "...")]` where a name is not an identifier) and whose
//! field types are the cell types of [`super::cells`]. [`csv_text`] writes the rows with
//! `csv::Writer`; [`table_of`] collects them as (column, cell) pairs into a [`Table`] for the
//! Markdown and LaTeX renderers.
//!
//! A row type with columns known only at run time implements `Serialize` by hand as a struct
//! whose field names are `&'static str` (e.g. from a `LazyLock<Vec<String>>`).

use std::fmt;

use serde::ser::{self, Impossible, Serialize, SerializeStruct, SerializeTuple, Serializer};

use super::cells::{BOOL, CI, NUM, PCT};
use super::{Cell, Table};

/// A typed table row: serialisable as a struct, with a `Default` that names the columns of an
/// empty table.
pub(crate) trait Row: Serialize + Default {}
impl<T: Serialize + Default> Row for T {}

/// The CSV file of `rows`: the header (column names), then one record per row.
pub(crate) fn csv_text<R: Row>(rows: &[R]) -> String {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(columns(rows))
        .expect("writing a CSV header to memory");
    for r in rows {
        w.serialize(r).expect("a table row serialises to CSV");
    }
    let bytes = w.into_inner().expect("flushing a CSV writer to memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8")
}

/// `rows` as cells, for the Markdown and LaTeX renderers.
pub(crate) fn table_of<R: Row>(rows: &[R]) -> Table {
    let columns = columns(rows);
    let mut t = Table::new(&columns);
    for r in rows {
        let (names, cells): (Vec<&str>, Vec<Cell>) = row_cells(r).into_iter().unzip();
        assert_eq!(names, columns, "rows of one table have the same columns");
        t.push(cells);
    }
    t
}

/// Column names of a row type: those of the first row, else those of `R::default()`.
fn columns<R: Row>(rows: &[R]) -> Vec<&'static str> {
    let cells = match rows.first() {
        Some(r) => row_cells(r),
        None => row_cells(&R::default()),
    };
    cells.into_iter().map(|(name, _)| name).collect()
}

/// The (column, cell) pairs of one row. A row that is not a struct of cell types is a
/// programming error.
fn row_cells<R: Serialize>(row: &R) -> Vec<(&'static str, Cell)> {
    let mut s = RowSerializer { cells: Vec::new() };
    row.serialize(&mut s)
        .unwrap_or_else(|e| panic!("{}: {e}", std::any::type_name::<R>()));
    s.cells
}

#[derive(Debug)]
struct RowError(String);

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RowError {}

impl ser::Error for RowError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        RowError(msg.to_string())
    }
}

fn unsupported(what: &str) -> RowError {
    RowError(format!(
        "a table row is a struct of text, counts, Option and the cell types of tables::format \
         (Num, Pct, Ci, PyBool); got {what}"
    ))
}

/// Collects the fields of one row struct.
struct RowSerializer {
    cells: Vec<(&'static str, Cell)>,
}

impl SerializeStruct for &mut RowSerializer {
    type Ok = ();
    type Error = RowError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), RowError> {
        let cell = value.serialize(CellSerializer { raw: false })?;
        self.cells.push((key, cell));
        Ok(())
    }
    fn end(self) -> Result<(), RowError> {
        Ok(())
    }
}

impl<'s> Serializer for &'s mut RowSerializer {
    type Ok = ();
    type Error = RowError;
    type SerializeSeq = Impossible<(), RowError>;
    type SerializeTuple = Impossible<(), RowError>;
    type SerializeTupleStruct = Impossible<(), RowError>;
    type SerializeTupleVariant = Impossible<(), RowError>;
    type SerializeMap = Impossible<(), RowError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), RowError>;

    fn is_human_readable(&self) -> bool {
        false
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, RowError> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, RowError> {
        Err(unsupported("a tuple as a row"))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), RowError> {
        Err(unsupported("an Option as a row"))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), RowError> {
        value.serialize(self)
    }
    reject_compound!(unsupported);
    reject_scalars!(unsupported);
}

/// Serialises one field into a cell. `raw` is set inside a cell type's marker, where the bare
/// float, boolean or pair of floats is allowed (outside it, a bare `f64` or `bool` would be
/// written with serde's default formatting in the CSV, so it is rejected).
struct CellSerializer {
    raw: bool,
}

impl CellSerializer {
    fn int(v: i64) -> Result<Cell, RowError> {
        Ok(Cell::Int(v))
    }
    fn uint(v: u64) -> Result<Cell, RowError> {
        Ok(i64::try_from(v).map_or_else(|_| Cell::Text(v.to_string()), Cell::Int))
    }
}

impl Serializer for CellSerializer {
    type Ok = Cell;
    type Error = RowError;
    type SerializeSeq = Impossible<Cell, RowError>;
    type SerializeTuple = PairSerializer;
    type SerializeTupleStruct = Impossible<Cell, RowError>;
    type SerializeTupleVariant = Impossible<Cell, RowError>;
    type SerializeMap = Impossible<Cell, RowError>;
    type SerializeStruct = Impossible<Cell, RowError>;
    type SerializeStructVariant = Impossible<Cell, RowError>;

    fn is_human_readable(&self) -> bool {
        false
    }
    fn serialize_str(self, v: &str) -> Result<Cell, RowError> {
        Ok(Cell::Text(v.to_string()))
    }
    fn serialize_i8(self, v: i8) -> Result<Cell, RowError> {
        Self::int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Cell, RowError> {
        Self::int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Cell, RowError> {
        Self::int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Cell, RowError> {
        Self::int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Cell, RowError> {
        Self::uint(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Cell, RowError> {
        Self::uint(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Cell, RowError> {
        Self::uint(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Cell, RowError> {
        Self::uint(v)
    }
    fn serialize_none(self) -> Result<Cell, RowError> {
        Ok(Cell::Na)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Cell, RowError> {
        value.serialize(self)
    }
    fn serialize_f64(self, v: f64) -> Result<Cell, RowError> {
        if self.raw {
            Ok(Cell::Num(v))
        } else {
            Err(unsupported("a bare f64 (use Num or Pct)"))
        }
    }
    fn serialize_bool(self, v: bool) -> Result<Cell, RowError> {
        if self.raw {
            Ok(Cell::Bool(v))
        } else {
            Err(unsupported("a bare bool (use PyBool)"))
        }
    }
    fn serialize_tuple(self, len: usize) -> Result<PairSerializer, RowError> {
        if self.raw && len == 2 {
            Ok(PairSerializer { ends: Vec::new() })
        } else {
            Err(unsupported("a tuple"))
        }
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Cell, RowError> {
        if ![NUM, PCT, CI, BOOL].contains(&name) {
            // any other newtype is transparent
            return value.serialize(self);
        }
        let raw = value.serialize(CellSerializer { raw: true })?;
        match (name, raw) {
            (NUM, c @ Cell::Num(_)) | (BOOL, c @ Cell::Bool(_)) | (CI, c @ Cell::Ci { .. }) => {
                Ok(c)
            }
            (PCT, Cell::Num(v)) => Ok(Cell::Pct(v)),
            (name, c) => Err(RowError(format!("malformed {name}: {c:?}"))),
        }
    }
    reject_compound!(unsupported);
    reject!(
        unsupported;
        serialize_f32(f32),
        serialize_char(char),
        serialize_bytes(&[u8]),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, RowError> {
        Err(unsupported("a nested struct"))
    }
}

/// The two ends of an interval inside its marker.
struct PairSerializer {
    ends: Vec<f64>,
}

impl SerializeTuple for PairSerializer {
    type Ok = Cell;
    type Error = RowError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), RowError> {
        match value.serialize(CellSerializer { raw: true })? {
            Cell::Num(v) => {
                self.ends.push(v);
                Ok(())
            }
            c => Err(RowError(format!("interval end {c:?}"))),
        }
    }
    fn end(self) -> Result<Cell, RowError> {
        match self.ends[..] {
            [lo, hi] => Ok(Cell::Ci { lo, hi }),
            _ => Err(RowError(format!("interval with {} ends", self.ends.len()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::super::{Ci, Num, Pct, PyBool};
    use super::*;

    #[derive(Serialize, Default)]
    struct Example {
        name: String,
        n: usize,
        seed: u64,
        #[serde(rename = "p(w)")]
        p: Num,
        share: Pct,
        ci: Ci,
        ok: PyBool,
        missing: Option<Num>,
    }

    fn example(p: f64) -> Example {
        Example {
            name: "a, \"b\"".into(),
            n: 3,
            seed: 12346,
            p: Num(p),
            share: Pct(0.25),
            ci: Ci(-1e-7, 0.5),
            ok: PyBool(true),
            missing: None,
        }
    }

    #[test]
    fn csv_and_cells() {
        let rows = [example(0.2166666), example(f64::NAN)];
        assert_eq!(
            csv_text(&rows),
            "name,n,seed,p(w),share,ci,ok,missing\n\
             \"a, \"\"b\"\"\",3,12346,0.216667,0.250000,\"[0.000000, 0.500000]\",True,\n\
             \"a, \"\"b\"\"\",3,12346,,0.250000,\"[0.000000, 0.500000]\",True,\n"
        );
        let t = table_of(&rows);
        assert_eq!(t.columns[3], "p(w)");
        // Debug text, because the NaN end makes the cells unequal to themselves
        assert_eq!(
            format!("{:?}", t.rows[0]),
            format!(
                "{:?}",
                [
                    Cell::Text("a, \"b\"".into()),
                    Cell::Int(3),
                    Cell::Int(12346),
                    Cell::Num(0.2166666),
                    Cell::Pct(0.25),
                    Cell::Ci {
                        lo: -1e-7,
                        hi: 0.5,
                    },
                    Cell::Bool(true),
                    Cell::Na,
                ]
            )
        );
    }

    #[test]
    fn empty_tables_keep_their_header() {
        let rows: [Example; 0] = [];
        assert_eq!(
            csv_text(&rows),
            "name,n,seed,p(w),share,ci,ok,missing\n"
        );
        assert_eq!(table_of(&rows).columns.len(), 8);
    }

    #[test]
    #[should_panic(expected = "bare f64")]
    fn bare_floats_are_rejected() {
        #[derive(Serialize, Default)]
        struct Bad {
            x: f64,
        }
        table_of(&[Bad { x: 1.0 }]);
    }
}
