//! Floats in store records. JSON has no NaN or infinities (serde_json writes them as `null`,
//! which does not read back as a number), yet scores have them: a letter whose tokens all have
//! probability 0 has log-score −∞, a metric of an empty set is NaN. Records therefore write a
//! non-finite value as the string `"NaN"`, `"inf"` or `"-inf"` and read it back exactly; a
//! `null` (what older records hold) reads as NaN. Finite values are written as before.
//!
//! Use with `#[serde(with = "crate::store::float")]` on `f64` fields and
//! `#[serde(with = "crate::store::float::vec")]` on `Vec<f64>` fields.

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeSeq, Serializer};

/// The text of a non-finite value, `None` for a finite one.
fn non_finite_name(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f64::INFINITY {
        Some("inf")
    } else if v == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    match non_finite_name(*v) {
        Some(name) => s.serialize_str(name),
        None => s.serialize_f64(*v),
    }
}

struct FloatVisitor;

impl<'de> Visitor<'de> for FloatVisitor {
    type Value = f64;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number, \"NaN\", \"inf\", \"-inf\" or null")
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        match v {
            "NaN" => Ok(f64::NAN),
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
        }
    }
    fn visit_unit<E: de::Error>(self) -> Result<f64, E> {
        Ok(f64::NAN)
    }
    fn visit_none<E: de::Error>(self) -> Result<f64, E> {
        Ok(f64::NAN)
    }
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    d.deserialize_any(FloatVisitor)
}

/// A float serialised the store's way (for values inside maps and sequences).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Float(pub f64);

impl serde::Serialize for Float {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize(&self.0, s)
    }
}

impl<'de> serde::Deserialize<'de> for Float {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Float, D::Error> {
        deserialize(d).map(Float)
    }
}

/// `Vec<f64>` fields.
pub(crate) mod vec {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for x in v {
            seq.serialize_element(&Float(*x))?;
        }
        seq.end()
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        let v: Vec<Float> = serde::Deserialize::deserialize(d)?;
        Ok(v.into_iter().map(|f| f.0).collect())
    }
}

#[cfg(test)]
mod tests {

    #[derive(serde::Serialize, serde::Deserialize, Debug)]
    struct R {
        #[serde(with = "super")]
        x: f64,
        #[serde(with = "super::vec")]
        v: Vec<f64>,
    }

    #[test]
    fn non_finite_values_round_trip_and_finite_ones_keep_their_text() {
        let r = R {
            x: f64::NAN,
            v: vec![f64::NEG_INFINITY, 0.1, f64::INFINITY, -0.0, 1e-300],
        };
        let s = serde_json::to_string(&r).unwrap();
        assert_eq!(s, r#"{"x":"NaN","v":["-inf",0.1,"inf",-0.0,1e-300]}"#);
        let back: R = serde_json::from_str(&s).unwrap();
        assert!(back.x.is_nan());
        assert_eq!(back.v[0], f64::NEG_INFINITY);
        assert_eq!(back.v[2], f64::INFINITY);
        assert_eq!(back.v[1].to_bits(), 0.1f64.to_bits());
        assert_eq!(back.v[3].to_bits(), (-0.0f64).to_bits());
        // Records written before this encoding hold `null` for a non-finite value.
        let old: R = serde_json::from_str(r#"{"x":null,"v":[null,2]}"#).unwrap();
        assert!(old.x.is_nan() && old.v[0].is_nan() && old.v[1] == 2.0);
        assert!(serde_json::from_str::<R>(r#"{"x":"nan","v":[]}"#).is_err());
    }
}
