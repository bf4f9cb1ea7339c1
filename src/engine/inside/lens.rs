//! The letter lens: the model's output head (final norm, then the output rows of the letter
//! tokens, then whatever the architecture applies to logits) applied to the residual stream
//! after each layer, scored over the options as the answer slot is (docs/protocol.md §4.3).
//!
//! The arithmetic repeats what llama.cpp's CPU back-end does for the last layer — RMS norm with
//! a double-precision sum of squares and a single-precision scale, the norm weight, the
//! activation converted to the dot product's type, ggml's own `vec_dot` per output row — so
//! that on the CPU the lens of the last layer gives the scored letters' logits bit for bit.
//! LayerNorm heads are computed in double precision (close, not bit-equal).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::ffi::{GgufIndex, GgufTensor, RowKernel};
use crate::engine::scoring::letters_from_logps;
use crate::protocol::LetterTokens;

enum NormKind {
    Rms,
    Layer,
}

/// How an architecture changes the logits after the output matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LogitTransform {
    /// `cap · tanh(x / cap)` (Gemma 2's final soft-capping).
    SoftCap(f32),
    /// `x / s` (Granite's `logit_scale`).
    Divide(f32),
    /// `x · s` (Cohere's `logit_scale`).
    Multiply(f32),
}

/// The output head of a model, read from its GGUF file; letter-token rows are read on demand.
pub(crate) struct Head {
    kind: NormKind,
    eps: f32,
    weight: Vec<f32>,
    bias: Option<Vec<f32>>,
    transforms: Vec<LogitTransform>,
    matrix: GgufTensor,
    /// `output.bias` (F32, one value per token), added after the output matrix.
    bias_of_output: Option<GgufTensor>,
    kernel: RowKernel,
    rows: HashMap<i32, Vec<u8>>,
    biases: HashMap<i32, f32>,
    file: std::fs::File,
}

fn find<'a>(index: &'a GgufIndex, name: &str) -> Option<&'a GgufTensor> {
    index.tensors.iter().find(|t| t.name == name)
}

fn read_at(file: &mut std::fs::File, offset: u64, bytes: usize) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; bytes];
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_exact(&mut buf))
        .map_err(|e| format!("cannot read the output head's weights: {e}"))?;
    Ok(buf)
}

/// A 1-D tensor of `n` values as floats.
fn vector(file: &mut std::fs::File, t: &GgufTensor, n: usize) -> Result<Vec<f32>, String> {
    if t.shape != [n] {
        return Err(format!("{} has shape {:?}, not [{n}]", t.name, t.shape));
    }
    let k = RowKernel::new(t.ggml_type, n)?;
    k.to_floats(&read_at(file, t.offset, k.row_bytes())?)
}

impl Head {
    /// Reads the head of the model at `path` (its tensor directory is `index`; `arch` is its
    /// `general.architecture`, `n_embd` its width).
    pub(crate) fn open(path: &Path, index: &GgufIndex, n_embd: usize) -> Result<Self, String> {
        let arch = index.strings.iter().find(|(k, _)| k == "general.architecture").map(|(_, v)| v.as_str()).unwrap_or("");
        let float = |key: &str| index.floats.iter().find(|(k, _)| *k == format!("{arch}.{key}")).map(|&(_, v)| v);
        let (kind, eps) = match (float("attention.layer_norm_rms_epsilon"), float("attention.layer_norm_epsilon")) {
            (Some(e), _) => (NormKind::Rms, e),
            (None, Some(e)) => (NormKind::Layer, e),
            (None, None) => return Err(format!("the lens does not know the final norm of architecture {arch:?} (no norm epsilon in its metadata)")),
        };
        // Architectures whose graph scales logits with no key in the GGUF: a lens without that
        // scale would be wrong at every layer.
        if arch.starts_with("minicpm") || arch.starts_with("grok") {
            return Err(format!("the lens does not know the logit scale architecture {arch:?} applies"));
        }
        let mut transforms = Vec::new();
        if let Some(cap) = float("final_logit_softcapping").filter(|&c| c > 0.0) {
            transforms.push(LogitTransform::SoftCap(cap));
        }
        if let Some(s) = float("logit_scale").filter(|&s| s != 1.0) {
            transforms.push(if arch.starts_with("granite") {
                LogitTransform::Divide(s)
            } else if arch.starts_with("cohere") || arch.starts_with("command") {
                LogitTransform::Multiply(s)
            } else {
                return Err(format!("the lens does not know how architecture {arch:?} applies its logit_scale"));
            });
        }
        let mut file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let norm = find(index, "output_norm.weight").ok_or("the model has no output_norm.weight")?;
        let weight = vector(&mut file, norm, n_embd)?;
        let bias = find(index, "output_norm.bias").map(|t| vector(&mut file, t, n_embd)).transpose()?;
        let matrix = find(index, "output.weight")
            .or_else(|| find(index, "token_embd.weight"))
            .ok_or("the model has neither output.weight nor token_embd.weight")?
            .clone();
        if matrix.shape.len() != 2 || matrix.shape[0] != n_embd {
            return Err(format!("{} has shape {:?}, not [{n_embd}, vocabulary]", matrix.name, matrix.shape));
        }
        let kernel = RowKernel::new(matrix.ggml_type, n_embd)?;
        if kernel.row_bytes() * matrix.shape[1] != matrix.bytes {
            return Err(format!("{} holds {} bytes, not {} rows of {}", matrix.name, matrix.bytes, matrix.shape[1], kernel.row_bytes()));
        }
        let output_bias = find(index, "output.bias").cloned();
        if let Some(b) = &output_bias {
            if b.ggml_type != 0 || b.shape != [matrix.shape[1]] {
                return Err(format!("output.bias is not {} F32 values", matrix.shape[1]));
            }
        }
        Ok(Self {
            kind,
            eps,
            weight,
            bias,
            transforms,
            matrix,
            bias_of_output: output_bias,
            kernel,
            rows: HashMap::new(),
            biases: HashMap::new(),
            file,
        })
    }

    fn row(&mut self, token: i32) -> Result<&[u8], String> {
        if token < 0 || token as usize >= self.matrix.shape[1] {
            return Err(format!("token {token} is outside the output matrix"));
        }
        if !self.rows.contains_key(&token) {
            let bytes = self.kernel.row_bytes();
            let row = read_at(&mut self.file, self.matrix.offset + token as u64 * bytes as u64, bytes)?;
            self.rows.insert(token, row);
        }
        Ok(&self.rows[&token])
    }

    /// The output row of `token` as floats (a direction that pushes the model toward it).
    pub(crate) fn token_row(&mut self, token: i32) -> Result<Vec<f32>, String> {
        let row = self.row(token)?.to_vec();
        self.kernel.to_floats(&row)
    }

    /// The final norm of a residual, as llama.cpp's CPU back-end computes it.
    fn normalise(&self, x: &[f32]) -> Vec<f32> {
        let n = x.len();
        match self.kind {
            NormKind::Rms => {
                let sum: f64 = x.iter().map(|&v| f64::from(v * v)).sum();
                let mean = (sum / n as f64) as f32;
                let scale = 1.0f32 / (mean + self.eps).sqrt();
                x.iter().zip(&self.weight).map(|(&v, &w)| (v * scale) * w).collect()
            }
            NormKind::Layer => {
                let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
                let var = x.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n as f64;
                let scale = 1.0 / (var + f64::from(self.eps)).sqrt();
                let y = x.iter().zip(&self.weight).map(|(&v, &w)| ((f64::from(v) - mean) * scale) as f32 * w);
                match &self.bias {
                    Some(b) => y.zip(b).map(|(v, &b)| v + b).collect(),
                    None => y.collect(),
                }
            }
        }
    }

    /// The logits of `tokens` for the residual `x`.
    pub(crate) fn logits(&mut self, x: &[f32], tokens: &[i32]) -> Result<Vec<f32>, String> {
        let act = self.kernel.activation(&self.normalise(x));
        let mut out = Vec::with_capacity(tokens.len());
        for &t in tokens {
            self.row(t)?;
            let mut v = self.kernel.dot(&self.rows[&t], &act);
            if let Some(b) = &self.bias_of_output {
                if !self.biases.contains_key(&t) {
                    let raw = read_at(&mut self.file, b.offset + 4 * t as u64, 4)?;
                    self.biases.insert(t, f32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]));
                }
                v += self.biases[&t];
            }
            for tr in &self.transforms {
                v = match *tr {
                    LogitTransform::SoftCap(c) => ((v * (1.0 / c)).tanh()) * c,
                    LogitTransform::Divide(s) => v * (1.0 / s),
                    LogitTransform::Multiply(s) => v * s,
                };
            }
            out.push(v);
        }
        Ok(out)
    }

    /// The option distribution of one residual: each letter's variants' logits through the
    /// answer slot's letter arithmetic (the full-vocabulary normaliser cancels when the letters
    /// are renormalised, so only the letter rows are needed).
    pub(crate) fn letter_probs(&mut self, x: &[f32], variants: &[LetterTokens]) -> Result<Vec<f64>, String> {
        let mut lps = Vec::with_capacity(variants.len());
        for v in variants {
            lps.push(self.logits(x, &v.ids)?.into_iter().map(f64::from).collect::<Vec<f64>>());
        }
        Ok(letters_from_logps(&lps).probs)
    }
}
