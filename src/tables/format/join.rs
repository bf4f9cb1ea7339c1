//! [`Join`]: the columns of one row struct followed by those of another, as one struct (serde's
//! `flatten` would serialise a map, which `csv` does not write).

use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};

/// A row made of the fields of `A`, then the fields of `B` (both structs). E.g. the key columns
/// of a by-pair table followed by the metric columns it shares with the pooled table.
#[derive(Clone, Debug, Default)]
pub(crate) struct Join<A, B>(pub(crate) A, pub(crate) B);

impl<A: Serialize, B: Serialize> Serialize for Join<A, B> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Join", 0)?;
        self.0.serialize(Fields(&mut st))?;
        self.1.serialize(Fields(&mut st))?;
        st.end()
    }
}

/// Forwards the fields of a struct to an enclosing struct serializer.
struct Fields<'a, S>(&'a mut S);

impl<S: SerializeStruct> SerializeStruct for Fields<'_, S> {
    type Ok = ();
    type Error = S::Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        self.0.serialize_field(key, value)
    }
    fn end(self) -> Result<(), S::Error> {
        Ok(())
    }
}

fn not_a_struct<E: ser::Error>(what: &str) -> E {
    E::custom(format!("Join joins two structs, not {what}"))
}

impl<'a, S: SerializeStruct> Serializer for Fields<'a, S> {
    type Ok = ();
    type Error = S::Error;
    type SerializeSeq = Impossible<(), S::Error>;
    type SerializeTuple = Impossible<(), S::Error>;
    type SerializeTupleStruct = Impossible<(), S::Error>;
    type SerializeTupleVariant = Impossible<(), S::Error>;
    type SerializeMap = Impossible<(), S::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), S::Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, S::Error> {
        Ok(self)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        value.serialize(self)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), S::Error> {
        Err(not_a_struct("an Option"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_a_struct("a tuple"))
    }
    reject_compound!(not_a_struct);
    reject_scalars!(not_a_struct);
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::super::{csv_text, table_of, Num};
    use super::Join;

    #[derive(Serialize, Default)]
    struct Key {
        model: String,
    }
    #[derive(Serialize, Default)]
    struct Metrics {
        #[serde(rename = "p(w)")]
        pw: Num,
    }

    #[test]
    fn joins_columns_in_order() {
        let rows = [Join(Key { model: "m".into() }, Metrics { pw: Num(0.5) })];
        assert_eq!(csv_text(&rows), "model,p(w)\nm,0.500000\n");
        assert_eq!(table_of(&rows).columns, vec!["model", "p(w)"]);
        let empty: [Join<Key, Metrics>; 0] = [];
        assert_eq!(csv_text(&empty), "model,p(w)\n");
    }
}
