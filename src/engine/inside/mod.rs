//! Inside the model: the residual stream at the answer slot after each layer, the letter lens
//! on it (`lens.rs`), and steering with llama.cpp's control vectors (`vector.rs`).
//!
//! The `llama-cpp-2` crate exposes neither llama.cpp's evaluation callback nor its control
//! vectors, so this part of the engine loads the model a second time through the C API
//! (`ffi.rs`, the only unsafe code) into a context of its own, the **probe**, made on first use
//! with the session's settings (one sequence, the same context size, batch size, threads and
//! no flash attention). On the CPU the second load maps the same file and costs little memory;
//! on a GPU it holds a second copy of the offloaded weights. A prompt is decoded from scratch in
//! the probe in the session's chunks, so an unsteered score through it is bit-identical to the
//! engine's (tests/inside.rs); the engine's own context and its prefix reuse are untouched.
//! A control vector is set on the probe only, so no steered KV state ever reaches the session,
//! and the probe forgets its KV cache before every prompt.

mod ffi;
mod lens;
mod vector;

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

pub use vector::ControlVector;

use super::model::{letter_variants, score_from_logits, Prompter};
use super::session::{chunk_end, MIN_TAIL};
use super::{EngineError, EngineOptions};
use crate::protocol::{ChatMessage, SlotScore};
use ffi::{ContextSettings, ProbeContext, ProbeModel};
use lens::Head;

/// A steering setting: `alpha` times the vector, added after layers `layers.0..=layers.1`.
#[derive(Clone, Debug)]
pub struct Steering {
    pub vector: Arc<ControlVector>,
    pub alpha: f32,
    pub layers: (usize, usize),
}

impl Steering {
    /// The setting's identity: the vector's hash, the layers and α (α's bits, so 0.1 and
    /// 0.1000001 differ).
    pub fn key(&self) -> String {
        format!("{}:{}-{}:{}", self.vector.hash(), self.layers.0, self.layers.1, self.alpha)
    }
}

/// What to read out of one prompt besides its score.
#[derive(Clone, Debug, Default)]
pub struct InspectOptions {
    /// The letter lens at every layer.
    pub lens: bool,
    /// The residual stream after every layer at the answer slot.
    pub residuals: bool,
    /// Decode under this steering.
    pub steering: Option<Steering>,
}

/// One prompt read out through the probe.
#[derive(Clone, Debug)]
pub struct Inspection {
    /// The answer slot's score, computed as the engine's (from scratch: nothing reused).
    pub score: SlotScore,
    /// Per layer 0..n_layer − 1: the option probabilities, in the score's letter order.
    pub lens: Option<Vec<Vec<f64>>>,
    /// The largest |lens − score| over the options at the last layer (0 on the CPU for an RMS-norm head).
    pub lens_anchor: Option<f64>,
    /// Per layer: the residual stream at the answer slot (`n_embd` floats).
    pub residuals: Option<Vec<Vec<f32>>>,
}

/// The worker's probe, made on first use.
pub(crate) struct Insides {
    path: PathBuf,
    gpu_layers: u32,
    threads: i32,
    n_ctx: u32,
    probe: Option<Probe>,
}

struct Probe {
    ctx: ProbeContext,
    head: Option<Head>,
    n_layer: usize,
    n_embd: usize,
    steering: Option<String>,
}

fn inside_err(e: String) -> EngineError {
    EngineError::Inside(e)
}

impl Insides {
    pub(crate) fn new(path: &Path, opts: &EngineOptions, n_ctx: u32) -> Self {
        Self {
            path: path.to_path_buf(),
            gpu_layers: opts.gpu_layers.unwrap_or_else(super::default_gpu_layers),
            threads: opts.threads as i32,
            n_ctx,
            probe: None,
        }
    }

    fn probe(&mut self) -> Result<&mut Probe, EngineError> {
        if self.probe.is_none() {
            super::model::backend()?;
            let model = Rc::new(ProbeModel::load(&self.path, self.gpu_layers).map_err(inside_err)?);
            let (n_layer, n_embd) = (model.n_layer(), model.n_embd());
            let settings = ContextSettings { n_ctx: self.n_ctx, n_batch: super::session::SINGLE_N_BATCH, threads: self.threads };
            let ctx = ProbeContext::new(model, &settings).map_err(inside_err)?;
            self.probe = Some(Probe { ctx, head: None, n_layer, n_embd, steering: None });
        }
        Ok(self.probe.as_mut().expect("made above"))
    }

    /// The model's layers and residual width.
    pub(crate) fn shape(&mut self) -> Result<(usize, usize), EngineError> {
        let p = self.probe()?;
        Ok((p.n_layer, p.n_embd))
    }

    fn head(&mut self) -> Result<&mut Head, EngineError> {
        let path = self.path.clone();
        let p = self.probe()?;
        if p.head.is_none() {
            let index = ffi::gguf_tensors(&path).map_err(inside_err)?.ok_or_else(|| inside_err(format!("{}: not a readable GGUF file", path.display())))?;
            p.head = Some(Head::open(&path, &index, p.n_embd).map_err(|e| inside_err(format!("the letter lens: {e}")))?);
        }
        Ok(p.head.as_mut().expect("made above"))
    }

    /// The output row of `token` as floats (a direction toward that token).
    pub(crate) fn token_row(&mut self, token: i32) -> Result<Vec<f32>, EngineError> {
        self.head()?.token_row(token).map_err(inside_err)
    }

    /// Scores `messages` through the probe, with what `opts` asks for.
    pub(crate) fn inspect(
        &mut self,
        prompter: &mut Prompter,
        messages: &[ChatMessage],
        letters: &[char],
        opts: &InspectOptions,
        top_k: usize,
    ) -> Result<Inspection, EngineError> {
        let prepared = prompter.prepare(messages)?;
        let variants = letter_variants(prompter, letters)?;
        let p = self.probe()?;
        set_steering(p, opts.steering.as_ref())?;
        let tokens = &prepared.tokens;
        if tokens.len() > p.ctx.n_ctx() {
            return Err(EngineError::ContextOverflow { tokens: tokens.len(), n_ctx: p.ctx.n_ctx() as u32 });
        }
        let capture = opts.lens || opts.residuals;
        p.ctx.clear();
        let n = tokens.len();
        let mut start = 0;
        while start < n {
            let end = chunk_end(start, n, super::session::SINGLE_N_BATCH as usize, MIN_TAIL);
            let last = end == n;
            if let Err(e) = p.ctx.decode(&tokens[start..end], start, last, capture && last) {
                p.ctx.clear();
                return Err(inside_err(format!("the read-out decode failed: {e}")));
            }
            start = end;
        }
        let logits = p.ctx.last_logits();
        let residuals = if capture {
            let rows = p.ctx.take_residuals();
            let missing: Vec<usize> = rows.iter().enumerate().filter(|(_, r)| r.is_none()).map(|(i, _)| i).collect();
            if !missing.is_empty() {
                return Err(inside_err(format!(
                    "llama.cpp named no residual tensor l_out-N for layer(s) {missing:?} of this architecture; the lens cannot read them"
                )));
            }
            Some(rows.into_iter().flatten().collect::<Vec<_>>())
        } else {
            None
        };
        p.ctx.clear();
        let score = score_from_logits(prompter.model, &logits, &variants, top_k, &prepared, (n, 0));
        let (mut lens, mut lens_anchor) = (None, None);
        if opts.lens {
            let head = self.head()?;
            let rows = residuals.as_ref().expect("captured");
            let layers = rows
                .iter()
                .map(|r| head.letter_probs(r, &variants))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| inside_err(format!("the letter lens: {e}")))?;
            let last = layers.last().expect("a model has layers");
            lens_anchor = Some(last.iter().zip(&score.probs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max));
            lens = Some(layers);
        }
        Ok(Inspection { score, lens, lens_anchor, residuals: if opts.residuals { residuals } else { None } })
    }
}

/// Makes the probe's control vector `steering` (nothing when it already is).
fn set_steering(p: &mut Probe, steering: Option<&Steering>) -> Result<(), EngineError> {
    let key = steering.map(Steering::key);
    if key == p.steering {
        return Ok(());
    }
    // A setting is checked before anything changes; one llama.cpp refuses leaves the probe
    // unsteered (or, if even clearing fails, marked unknown so that the next call sets it anew).
    if let Some(s) = steering {
        s.vector.fits(p.n_layer, p.n_embd, s.layers).map_err(inside_err)?;
        if !s.alpha.is_finite() {
            return Err(inside_err(format!("steering strength {} is not a finite number", s.alpha)));
        }
    }
    let set = match steering {
        None => p.ctx.set_control_vector(None),
        Some(s) => p.ctx.set_control_vector(Some((&s.vector.scaled_data(p.n_layer, s.alpha), s.layers.0, s.layers.1))),
    };
    match set {
        Ok(()) => {
            p.steering = key;
            Ok(())
        }
        Err(e) => {
            p.steering = match p.ctx.set_control_vector(None) {
                Ok(()) => None,
                Err(_) => Some(String::from("unknown")),
            };
            Err(inside_err(e))
        }
    }
}
