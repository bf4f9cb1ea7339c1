//! The only place where hyst-tui calls llama.cpp's C API itself (through `llama-cpp-sys-2`):
//! what the lens and steering need and the `llama-cpp-2` crate does not expose. Everything
//! `unsafe` of `engine/inside` is in this file; the types it hands out are safe to use.
//!
//! Invariants, for every `unsafe` block below:
//! - A [`ProbeModel`] owns one `llama_model*` (non-null, freed once in `Drop`). A
//!   [`ProbeContext`] holds its model (an `Rc`, dropped after the context is freed), owns one `llama_context*` and one `llama_batch`
//!   (both freed in `Drop`, context first), and owns the [`Capture`] whose address it gave
//!   llama.cpp as the evaluation callback's user data: a `Box` turned into a raw pointer at
//!   creation and turned back into a `Box` only in `Drop`, after the context is freed, so the
//!   pointer is valid whenever llama.cpp can call back. Rust code touches the capture only
//!   between decode calls (`&mut self` methods), never while llama.cpp runs.
//! - The callback ([`on_tensor`]) runs inside `llama_decode`, on the calling thread. It never
//!   unwinds into C (its body runs under `catch_unwind`; a panic is recorded and reported after
//!   the decode), and it always answers `true` when handed data (`false` would stop the graph).
//! - The batch holds at most `n_batch` tokens (checked before each write), one sequence (0).
//! - GGUF readers ([`gguf_tensors`]) free their `gguf_context` before returning; only copies of
//!   names, types and offsets leave the function. Tensor bytes are read with `std::fs`.
//! - Row kernels ([`RowKernel`]) call ggml's CPU `from_float`/`vec_dot` for a type with buffers
//!   sized by `ggml_row_size` for that type and `n` elements.

use std::ffi::{c_void, CStr, CString};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::ptr::NonNull;
use std::rc::Rc;

use llama_cpp_sys_2 as sys;

/// The tensor-name prefix of the residual stream after a layer (`l_out-N`).
const RESIDUAL_PREFIX: &[u8] = b"l_out-";

/// A model loaded through the C API, for a context with the evaluation callback.
pub(crate) struct ProbeModel {
    ptr: NonNull<sys::llama_model>,
}

impl ProbeModel {
    /// Loads `path` with `gpu_layers` offloaded (the backend must be initialised: `model::backend`).
    pub(crate) fn load(path: &Path, gpu_layers: u32) -> Result<Self, String> {
        let c = path_cstring(path)?;
        // SAFETY: default params are plain data; the path is a valid C string for the call.
        let ptr = unsafe {
            let mut params = sys::llama_model_default_params();
            params.n_gpu_layers = i32::try_from(gpu_layers).unwrap_or(i32::MAX);
            sys::llama_model_load_from_file(c.as_ptr(), params)
        };
        NonNull::new(ptr)
            .map(|ptr| Self { ptr })
            .ok_or_else(|| format!("llama.cpp could not load {} a second time for the read-out", path.display()))
    }

    pub(crate) fn n_layer(&self) -> usize {
        // SAFETY: a valid model (struct invariant).
        unsafe { sys::llama_model_n_layer(self.ptr.as_ptr()) }.max(0) as usize
    }

    pub(crate) fn n_embd(&self) -> usize {
        // SAFETY: as above.
        unsafe { sys::llama_model_n_embd(self.ptr.as_ptr()) }.max(0) as usize
    }

    pub(crate) fn n_vocab(&self) -> usize {
        // SAFETY: as above; the vocabulary lives as long as the model.
        unsafe { sys::llama_vocab_n_tokens(sys::llama_model_get_vocab(self.ptr.as_ptr())) }.max(0) as usize
    }
}

impl Drop for ProbeModel {
    fn drop(&mut self) {
        // SAFETY: owned, freed once; every context holding it (an `Rc`) is gone.
        unsafe { sys::llama_model_free(self.ptr.as_ptr()) }
    }
}

/// What the evaluation callback fills: the last row of each `l_out-N` of a decode call.
struct Capture {
    /// Capture during the next decode call (else the callback asks for nothing).
    armed: bool,
    n_embd: usize,
    rows: Vec<Option<Vec<f32>>>,
    problem: Option<String>,
}

/// How the context is made; the engine's session uses the same values (`session/mod.rs`).
pub(crate) struct ContextSettings {
    pub n_ctx: u32,
    pub n_batch: u32,
    pub threads: i32,
}

/// A context of a [`ProbeModel`] whose decode calls can hand back the residual stream.
pub(crate) struct ProbeContext {
    model: Rc<ProbeModel>,
    ctx: NonNull<sys::llama_context>,
    batch: sys::llama_batch,
    n_batch: usize,
    capture: NonNull<Capture>,
}

impl ProbeContext {
    pub(crate) fn new(model: Rc<ProbeModel>, s: &ContextSettings) -> Result<Self, String> {
        let capture = NonNull::from(Box::leak(Box::new(Capture {
            armed: false,
            n_embd: model.n_embd(),
            rows: vec![None; model.n_layer()],
            problem: None,
        })));
        // SAFETY: plain-data params; the callback's user data is the capture, which outlives the
        // context (freed after it in Drop).
        let ctx = unsafe {
            let mut p = sys::llama_context_default_params();
            p.n_ctx = s.n_ctx;
            p.n_batch = s.n_batch;
            p.n_ubatch = s.n_batch;
            p.n_seq_max = 1;
            p.n_threads = s.threads;
            p.n_threads_batch = s.threads;
            p.flash_attn_type = sys::LLAMA_FLASH_ATTN_TYPE_DISABLED;
            p.cb_eval = Some(on_tensor);
            p.cb_eval_user_data = capture.as_ptr().cast::<c_void>();
            sys::llama_init_from_model(model.ptr.as_ptr(), p)
        };
        let Some(ctx) = NonNull::new(ctx) else {
            // SAFETY: leaked above, never handed to a live context.
            drop(unsafe { Box::from_raw(capture.as_ptr()) });
            return Err("cannot create a llama.cpp context for the read-out".into());
        };
        // SAFETY: allocates token arrays for n_batch tokens of one sequence each.
        let batch = unsafe { sys::llama_batch_init(s.n_batch as i32, 0, 1) };
        Ok(Self { model, ctx, batch, n_batch: s.n_batch as usize, capture })
    }

    pub(crate) fn n_ctx(&self) -> usize {
        // SAFETY: a valid context.
        unsafe { sys::llama_n_ctx(self.ctx.as_ptr()) as usize }
    }

    /// Forgets every token in the KV cache.
    pub(crate) fn clear(&mut self) {
        // SAFETY: a valid context; its memory lives as long as it.
        unsafe { sys::llama_memory_clear(sys::llama_get_memory(self.ctx.as_ptr()), true) }
    }

    /// Decodes `tokens` at positions `start..` of sequence 0 in one call, logits for the last
    /// token only when `last`; with `capture`, the residual rows of the call's last token are
    /// kept ([`take_residuals`](Self::take_residuals)).
    pub(crate) fn decode(&mut self, tokens: &[i32], start: usize, last: bool, capture: bool) -> Result<(), String> {
        if tokens.is_empty() || tokens.len() > self.n_batch {
            return Err(format!("a read-out decode call of {} tokens (1 to {} allowed)", tokens.len(), self.n_batch));
        }
        // SAFETY: the arrays hold n_batch entries (checked above); seq_id[i] points to one id.
        unsafe {
            for (i, &t) in tokens.iter().enumerate() {
                *self.batch.token.add(i) = t;
                *self.batch.pos.add(i) = (start + i) as i32;
                *self.batch.n_seq_id.add(i) = 1;
                **self.batch.seq_id.add(i) = 0;
                *self.batch.logits.add(i) = i8::from(last && i + 1 == tokens.len());
            }
            self.batch.n_tokens = tokens.len() as i32;
            let c = &mut *self.capture.as_ptr();
            c.armed = capture;
            c.problem = None;
            c.rows.iter_mut().for_each(|r| *r = None);
        }
        // SAFETY: a valid context and batch; the capture is not touched by Rust during the call.
        let rc = unsafe { sys::llama_decode(self.ctx.as_ptr(), self.batch) };
        // SAFETY: the decode call is over.
        let c = unsafe { &mut *self.capture.as_ptr() };
        c.armed = false;
        if let Some(p) = c.problem.take() {
            return Err(p);
        }
        match rc {
            0 => Ok(()),
            1 => Err("no room in the KV cache".into()),
            rc => Err(format!("llama_decode failed ({rc})")),
        }
    }

    /// The logits of the last decoded token with logits (a copy).
    pub(crate) fn last_logits(&self) -> Vec<f32> {
        let n = self.model.n_vocab();
        // SAFETY: the last decode asked for logits; llama.cpp holds n_vocab floats there.
        unsafe {
            let p = sys::llama_get_logits_ith(self.ctx.as_ptr(), -1);
            if p.is_null() {
                return Vec::new();
            }
            std::slice::from_raw_parts(p, n).to_vec()
        }
    }

    /// The residual stream after each layer at the last token of the last capturing decode
    /// (`None` for a layer llama.cpp did not name `l_out-N`).
    pub(crate) fn take_residuals(&mut self) -> Vec<Option<Vec<f32>>> {
        // SAFETY: no decode call is running (`&mut self`).
        let c = unsafe { &mut *self.capture.as_ptr() };
        std::mem::replace(&mut c.rows, vec![None; self.model.n_layer()])
    }

    /// Sets llama.cpp's control vector: `data` holds `(n_layer − 1) × n_embd` floats, layer `il`
    /// at `(il − 1) × n_embd`, added at layers `il_start..=il_end`; `None` clears it.
    pub(crate) fn set_control_vector(&mut self, data: Option<(&[f32], usize, usize)>) -> Result<(), String> {
        let n_embd = self.model.n_embd() as i32;
        // SAFETY: a valid context; data outlives the call (llama.cpp copies it to its tensors).
        let rc = unsafe {
            match data {
                None => sys::llama_set_adapter_cvec(self.ctx.as_ptr(), std::ptr::null(), 0, n_embd, -1, -1),
                Some((v, a, b)) => sys::llama_set_adapter_cvec(self.ctx.as_ptr(), v.as_ptr(), v.len(), n_embd, a as i32, b as i32),
            }
        };
        if rc == 0 {
            Ok(())
        } else {
            Err("llama.cpp refused the control vector (its width is not the model's)".into())
        }
    }
}

impl Drop for ProbeContext {
    fn drop(&mut self) {
        // SAFETY: owned, freed once, the context before the capture it calls back into.
        unsafe {
            sys::llama_batch_free(self.batch);
            sys::llama_free(self.ctx.as_ptr());
            drop(Box::from_raw(self.capture.as_ptr()));
        }
    }
}

/// The layer of a residual tensor's name (`l_out-N`).
fn residual_layer(name: &[u8]) -> Option<usize> {
    std::str::from_utf8(name.strip_prefix(RESIDUAL_PREFIX)?).ok()?.parse().ok()
}

/// llama.cpp's evaluation callback: asked for each node of the graph (`ask`), it wants the
/// residual tensors while armed; handed one, it copies the last row out.
unsafe extern "C" fn on_tensor(t: *mut sys::ggml_tensor, ask: bool, user: *mut c_void) -> bool {
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: user is the context's capture (see the module's invariants); t is a live node.
        let (c, t) = unsafe { (&mut *user.cast::<Capture>(), &*t) };
        if !c.armed {
            return false;
        }
        // SAFETY: ggml names are NUL-terminated within the 64-byte field.
        let name = unsafe { CStr::from_ptr(t.name.as_ptr()) }.to_bytes();
        let Some(layer) = residual_layer(name).filter(|&l| l < c.rows.len()) else {
            return false;
        };
        if ask {
            return true;
        }
        let (width, cols) = (t.ne[0].max(0) as usize, t.ne[1].max(0) as usize);
        if cols == 0 {
            c.problem = Some(format!("the residual l_out-{layer} holds no token of this call"));
            return true;
        }
        if t.type_ != sys::GGML_TYPE_F32 || t.nb[0] != 4 || width != c.n_embd {
            c.problem = Some(format!("the residual l_out-{layer} is not {} floats a token", c.n_embd));
            return true;
        }
        let mut row = vec![0f32; width];
        // SAFETY: the tensor is computed (handed with ask = false); the last column lies at
        // (cols − 1) × nb[1] and holds width contiguous floats (checked above).
        unsafe {
            sys::ggml_backend_tensor_get(t, row.as_mut_ptr().cast::<c_void>(), (cols - 1) * t.nb[1], width * 4);
        }
        c.rows[layer] = Some(row);
        true
    }));
    match outcome {
        Ok(v) => v || !ask,
        Err(_) => {
            // SAFETY: as above; only a flag is written.
            let c = unsafe { &mut *user.cast::<Capture>() };
            c.problem = Some("the read-out callback failed (a bug in hyst-tui)".into());
            !ask
        }
    }
}

fn path_cstring(path: &Path) -> Result<CString, String> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).map_err(|_| format!("{}: the path holds a NUL byte", path.display()))
}

/// One tensor of a GGUF file: its name, ggml type, shape, and where its bytes are.
#[derive(Clone, Debug)]
pub(crate) struct GgufTensor {
    pub name: String,
    pub ggml_type: u32,
    pub shape: Vec<usize>,
    /// Byte offset from the start of the file.
    pub offset: u64,
    pub bytes: usize,
}

/// A GGUF file's tensors and its string and float metadata.
#[derive(Clone, Debug, Default)]
pub(crate) struct GgufIndex {
    pub tensors: Vec<GgufTensor>,
    pub strings: Vec<(String, String)>,
    pub floats: Vec<(String, f32)>,
}

/// Reads the tensor directory and metadata of a GGUF file (`None`: ggml could not parse it).
pub(crate) fn gguf_tensors(path: &Path) -> Result<Option<GgufIndex>, String> {
    let c = path_cstring(path)?;
    // SAFETY: no_alloc with no ggml context: only the directory is read; freed below.
    let g = unsafe { sys::gguf_init_from_file(c.as_ptr(), sys::gguf_init_params { no_alloc: true, ctx: std::ptr::null_mut() }) };
    if g.is_null() {
        return Ok(None);
    }
    let mut out = GgufIndex::default();
    // SAFETY: g is valid until gguf_free; strings are copied before it.
    unsafe {
        let base = sys::gguf_get_data_offset(g) as u64;
        for i in 0..sys::gguf_get_n_tensors(g) {
            let name = CStr::from_ptr(sys::gguf_get_tensor_name(g, i)).to_string_lossy().into_owned();
            let ne = sys::gguf_get_tensor_ne(g, i);
            let shape: Vec<usize> = (0..4).map(|d| (*ne.add(d)).max(0) as usize).collect();
            let dims = shape.iter().rposition(|&n| n != 1).map_or(1, |p| p + 1);
            out.tensors.push(GgufTensor {
                name,
                ggml_type: sys::gguf_get_tensor_type(g, i) as u32,
                shape: shape[..dims].to_vec(),
                offset: base + sys::gguf_get_tensor_offset(g, i) as u64,
                bytes: sys::gguf_get_tensor_size(g, i),
            });
        }
        for k in 0..sys::gguf_get_n_kv(g) {
            let key = CStr::from_ptr(sys::gguf_get_key(g, k)).to_string_lossy().into_owned();
            match sys::gguf_get_kv_type(g, k) {
                sys::GGUF_TYPE_STRING => {
                    let v = CStr::from_ptr(sys::gguf_get_val_str(g, k)).to_string_lossy().into_owned();
                    out.strings.push((key, v));
                }
                sys::GGUF_TYPE_FLOAT32 => out.floats.push((key, sys::gguf_get_val_f32(g, k))),
                _ => {}
            }
        }
        sys::gguf_free(g);
    }
    Ok(Some(out))
}

/// ggml's CPU arithmetic for rows of one weight type: the activation is converted to the type
/// the dot product wants (`from_float`, e.g. Q8_0 for quantized weights), then `vec_dot`, as
/// llama.cpp's CPU matrix product does for one output row.
pub(crate) struct RowKernel {
    n: usize,
    weight_row_bytes: usize,
    activation_bytes: usize,
    from_float: unsafe extern "C" fn(*const f32, *mut c_void, i64),
    vec_dot: unsafe extern "C" fn(i32, *mut f32, usize, *const c_void, usize, *const c_void, usize, i32),
    to_float: Option<unsafe extern "C" fn(*const c_void, *mut f32, i64)>,
}

impl RowKernel {
    /// The kernel for rows of `n` elements of ggml type `weight_type`.
    pub(crate) fn new(weight_type: u32, n: usize) -> Result<Self, String> {
        if weight_type as sys::ggml_type >= sys::GGML_TYPE_COUNT || n == 0 {
            return Err(format!("ggml type {weight_type} with rows of {n} is not a weight type this build knows"));
        }
        let ty = weight_type as sys::ggml_type;
        // SAFETY: type traits are static tables; ggml_cpu_init is idempotent and fills the
        // conversion tables the CPU functions use.
        unsafe {
            sys::ggml_cpu_init();
            let cpu = sys::ggml_get_type_traits_cpu(ty);
            if cpu.is_null() {
                return Err(format!("ggml type {weight_type} has no CPU arithmetic"));
            }
            let cpu = &*cpu;
            let dot_ty = cpu.vec_dot_type;
            let (Some(vec_dot), Some(from_float)) = (cpu.vec_dot, (*sys::ggml_get_type_traits_cpu(dot_ty)).from_float) else {
                return Err(format!("ggml type {weight_type} has no CPU dot product"));
            };
            let blck = (*sys::ggml_get_type_traits(ty)).blck_size.max(1) as usize;
            let dot_blck = (*sys::ggml_get_type_traits(dot_ty)).blck_size.max(1) as usize;
            if n % blck != 0 || n % dot_blck != 0 {
                return Err(format!("rows of {n} elements do not split into ggml type {weight_type}'s blocks"));
            }
            Ok(Self {
                n,
                weight_row_bytes: sys::ggml_row_size(ty, n as i64),
                activation_bytes: sys::ggml_row_size(dot_ty, n as i64),
                from_float,
                vec_dot,
                to_float: (*sys::ggml_get_type_traits(ty)).to_float,
            })
        }
    }

    /// Bytes of one weight row.
    pub(crate) fn row_bytes(&self) -> usize {
        self.weight_row_bytes
    }

    /// The activation `x` in the dot product's type.
    pub(crate) fn activation(&self, x: &[f32]) -> Vec<u8> {
        assert_eq!(x.len(), self.n, "activation width");
        let mut out = vec![0u8; self.activation_bytes];
        // SAFETY: x holds n floats; out holds the row size of the dot type for n elements.
        unsafe { (self.from_float)(x.as_ptr(), out.as_mut_ptr().cast::<c_void>(), self.n as i64) };
        out
    }

    /// The dot product of one weight row with an [`activation`](Self::activation).
    pub(crate) fn dot(&self, row: &[u8], activation: &[u8]) -> f32 {
        assert_eq!(row.len(), self.weight_row_bytes, "weight row size");
        assert_eq!(activation.len(), self.activation_bytes, "activation size");
        let mut s = 0f32;
        // SAFETY: both buffers have the sizes the types need for n elements (asserted).
        unsafe { (self.vec_dot)(self.n as i32, &mut s, 0, row.as_ptr().cast(), 0, activation.as_ptr().cast(), 0, 1) };
        s
    }

    /// One weight row as floats (for a direction made from a token's output row).
    pub(crate) fn to_floats(&self, row: &[u8]) -> Result<Vec<f32>, String> {
        assert_eq!(row.len(), self.weight_row_bytes, "weight row size");
        let mut out = vec![0f32; self.n];
        match self.to_float {
            // SAFETY: row holds one row of n elements of the type; out holds n floats.
            Some(f) => unsafe { f(row.as_ptr().cast(), out.as_mut_ptr(), self.n as i64) },
            None => {
                if self.weight_row_bytes != self.n * 4 {
                    return Err("this weight type cannot be converted to floats".into());
                }
                for (o, b) in out.iter_mut().zip(row.chunks_exact(4)) {
                    *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::residual_layer;

    #[test]
    fn residual_names_give_their_layer() {
        assert_eq!(residual_layer(b"l_out-0"), Some(0));
        assert_eq!(residual_layer(b"l_out-27"), Some(27));
        assert_eq!(residual_layer(b"l_out-"), None);
        assert_eq!(residual_layer(b"attn_out-3"), None);
        assert_eq!(residual_layer(b"l_out-3 (view)"), None);
    }
}
