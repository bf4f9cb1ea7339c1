//! Steering directions: a vector per layer, read from and written to llama.cpp's control-vector
//! format (a GGUF file whose tensors `direction.N` each hold `n_embd` F32 values for layer N,
//! with `general.architecture = "controlvector"`), so that a vector made elsewhere (e.g. by
//! llama.cpp's cvector generator) can be brought here and one made here used there.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::ffi::gguf_tensors;

/// A direction per layer (layer N of the model: the residual after layer N is moved by it).
#[derive(Clone, Debug, PartialEq)]
pub struct ControlVector {
    pub n_embd: usize,
    /// Layer → direction (`n_embd` floats). Layer 0 is never steered by llama.cpp.
    pub layers: BTreeMap<usize, Vec<f32>>,
}

const GGML_TYPE_F32: u32 = 0;

impl ControlVector {
    /// A vector of width `n_embd` from `(layer, direction)` pairs.
    pub fn new(n_embd: usize, layers: impl IntoIterator<Item = (usize, Vec<f32>)>) -> Result<Self, String> {
        let v = Self { n_embd, layers: layers.into_iter().collect() };
        v.check()?;
        Ok(v)
    }

    fn check(&self) -> Result<(), String> {
        if self.layers.is_empty() {
            return Err("it holds no direction".into());
        }
        for (&l, d) in &self.layers {
            if l == 0 {
                return Err("it has a direction for layer 0, which llama.cpp never steers".into());
            }
            if d.len() != self.n_embd {
                return Err(format!("direction.{l} has {} values, the others {}", d.len(), self.n_embd));
            }
            if let Some(i) = d.iter().position(|x| !x.is_finite()) {
                return Err(format!("direction.{l} holds a value that is not finite (at {i})"));
            }
        }
        Ok(())
    }

    /// Reads a control-vector file; every problem is one line naming the file.
    pub fn read(path: &Path) -> Result<Self, String> {
        let bad = |why: String| format!("control vector {}: {why}", path.display());
        // ggml's GGUF reader logs through llama.cpp's logger: route it to the log file first.
        let _ = super::super::model::backend();
        let mut magic = [0u8; 4];
        let opened = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
        if std::io::Read::read_exact(&mut &opened, &mut magic).is_err() || &magic != b"GGUF" {
            return Err(bad("not a GGUF file".into()));
        }
        let index = gguf_tensors(path).map_err(bad)?.ok_or_else(|| bad("not a readable GGUF file (truncated or corrupt)".into()))?;
        let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        let mut layers = BTreeMap::new();
        let mut width = None;
        for t in &index.tensors {
            let Some(suffix) = t.name.strip_prefix("direction.") else { continue };
            let layer = suffix
                .parse::<u32>()
                .map_err(|_| bad(format!("tensor {:?}: the part after `direction.` is not a layer number", t.name)))? as usize;
            if t.ggml_type != GGML_TYPE_F32 || t.shape.len() != 1 {
                return Err(bad(format!("{} is not a 1-D F32 tensor", t.name)));
            }
            let n = t.shape[0];
            if *width.get_or_insert(n) != n {
                return Err(bad(format!("{} has {n} values, other directions {}", t.name, width.unwrap_or(0))));
            }
            let start = usize::try_from(t.offset).map_err(|_| bad("offset out of range".into()))?;
            let data = bytes.get(start..start + 4 * n).ok_or_else(|| bad(format!("{} lies past the end of the file", t.name)))?;
            layers.insert(layer, data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect());
        }
        let v = Self { n_embd: width.unwrap_or(0), layers };
        v.check().map_err(bad)?;
        Ok(v)
    }

    /// Checks the vector fits a model of `n_layer` layers `n_embd` wide and covers `layers`.
    pub fn fits(&self, n_layer: usize, n_embd: usize, layers: (usize, usize)) -> Result<(), String> {
        if self.n_embd != n_embd {
            return Err(format!("the control vector is {} wide but the model's residual stream is {n_embd}", self.n_embd));
        }
        if let Some((&l, _)) = self.layers.iter().next_back().filter(|(&l, _)| l >= n_layer) {
            return Err(format!("the control vector has a direction for layer {l} but the model has layers 0-{}", n_layer - 1));
        }
        let (a, b) = layers;
        if a == 0 || a > b || b >= n_layer {
            return Err(format!("steering layers {a}-{b}: give a range within 1-{}", n_layer - 1));
        }
        let missing = self.missing_layers(layers);
        if !missing.is_empty() {
            return Err(format!("the control vector has no direction for layer(s) {}", compact(&missing)));
        }
        Ok(())
    }

    /// The layers of `first..=last` it has no direction for.
    pub fn missing_layers(&self, (first, last): (usize, usize)) -> Vec<usize> {
        (first..=last).filter(|l| !self.layers.contains_key(l)).collect()
    }

    /// The layers it covers, lowest and highest.
    pub fn span(&self) -> (usize, usize) {
        (*self.layers.keys().next().unwrap_or(&1), *self.layers.keys().next_back().unwrap_or(&1))
    }

    /// llama.cpp's layout scaled by `alpha`: `(n_layer − 1) × n_embd` floats, layer `il` at
    /// `(il − 1) × n_embd` (zeros where the vector has no direction).
    pub fn scaled_data(&self, n_layer: usize, alpha: f32) -> Vec<f32> {
        let mut data = vec![0f32; n_layer.saturating_sub(1) * self.n_embd];
        for (&l, d) in &self.layers {
            if (1..n_layer).contains(&l) {
                let at = (l - 1) * self.n_embd;
                for (o, &x) in data[at..at + self.n_embd].iter_mut().zip(d) {
                    *o = alpha * x;
                }
            }
        }
        data
    }

    /// A hex SHA-256 of the width, layers and values (the vector's identity in store keys).
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update((self.n_embd as u64).to_le_bytes());
        for (&l, d) in &self.layers {
            h.update((l as u64).to_le_bytes());
            for x in d {
                h.update(x.to_le_bytes());
            }
        }
        hex::encode(h.finalize())
    }

    /// Writes the vector in llama.cpp's control-vector format (GGUF v3).
    pub fn write(&self, path: &Path, model_hint: &str) -> std::io::Result<()> {
        const ALIGN: usize = 32;
        let mut out = Vec::new();
        let string = |out: &mut Vec<u8>, s: &str| {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        };
        out.extend(b"GGUF");
        out.extend(3u32.to_le_bytes());
        out.extend((self.layers.len() as u64).to_le_bytes());
        out.extend(3u64.to_le_bytes());
        for (k, v) in [("general.architecture", "controlvector"), ("controlvector.model_hint", model_hint)] {
            string(&mut out, k);
            out.extend(8u32.to_le_bytes()); // string
            string(&mut out, v);
        }
        string(&mut out, "controlvector.layer_count");
        out.extend(5u32.to_le_bytes()); // int32
        out.extend((self.layers.len() as i32).to_le_bytes());
        let tensor_bytes = self.n_embd * 4;
        let padded = tensor_bytes.div_ceil(ALIGN) * ALIGN;
        for (i, &l) in self.layers.keys().enumerate() {
            string(&mut out, &format!("direction.{l}"));
            out.extend(1u32.to_le_bytes());
            out.extend((self.n_embd as u64).to_le_bytes());
            out.extend(GGML_TYPE_F32.to_le_bytes());
            out.extend(((i * padded) as u64).to_le_bytes());
        }
        out.resize(out.len().div_ceil(ALIGN) * ALIGN, 0);
        for d in self.layers.values() {
            let start = out.len();
            for x in d {
                out.extend(x.to_le_bytes());
            }
            out.resize(start + padded, 0);
        }
        let mut f = std::fs::File::create(path)?;
        f.write_all(&out)?;
        f.sync_all()
    }
}

/// "3, 5-7" for [3, 5, 6, 7].
fn compact(v: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { v[i].to_string() } else { format!("{}-{}", v[i], v[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_vector_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v.gguf");
        let v = ControlVector::new(5, [(1, vec![1.0, -2.0, 0.5, 0.0, 3.25]), (3, vec![0.1; 5])]).unwrap();
        v.write(&p, "llama").unwrap();
        let back = ControlVector::read(&p).unwrap();
        assert_eq!(back, v);
        assert_eq!(back.hash(), v.hash());
        assert_eq!(back.span(), (1, 3));
        let data = v.scaled_data(4, 2.0);
        assert_eq!(data.len(), 15);
        assert_eq!(&data[0..5], &[2.0, -4.0, 1.0, 0.0, 6.5]);
        assert_eq!(&data[5..10], &[0.0; 5]);
        assert_eq!(&data[10..15], &[0.2; 5]);
    }

    #[test]
    fn bad_vectors_are_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("not.gguf");
        std::fs::write(&p, b"hello world").unwrap();
        assert!(ControlVector::read(&p).unwrap_err().contains("not a GGUF file"), "plain text");
        let v = ControlVector::new(4, [(2, vec![1.0; 4])]).unwrap();
        v.write(&p, "x").unwrap();
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        assert!(ControlVector::read(&p).is_err(), "truncated");
        assert!(ControlVector::new(4, [(2, vec![f32::NAN; 4])]).unwrap_err().contains("not finite"));
        assert!(ControlVector::new(4, [(2, vec![1.0; 3])]).unwrap_err().contains("3 values"));
        assert!(ControlVector::new(4, []).unwrap_err().contains("no direction"));
        assert!(v.fits(30, 5, (2, 2)).unwrap_err().contains("4 wide"));
        assert!(v.fits(30, 4, (2, 4)).unwrap_err().contains("no direction for layer(s) 3-4"));
        assert!(v.fits(30, 4, (0, 2)).unwrap_err().contains("within 1-29"));
        assert!(v.fits(2, 4, (1, 1)).unwrap_err().contains("layer 2"));
        v.fits(30, 4, (2, 2)).unwrap();
        assert_eq!(compact(&[3, 5, 6, 7, 9]), "3, 5-7, 9");
    }
}
