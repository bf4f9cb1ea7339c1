//! A llama.cpp context and what its KV cache holds.
//!
//! The context holds one or more llama.cpp *sequences*. With one (the default) every prompt is
//! evaluated on sequence 0 as `prefix_reuse.rs` describes: one live sequence plus host-memory
//! snapshots, so that prefix reuse is bit-exact. With several (`--pack N`), each sequence has a
//! KV *stream* of its own (`kv_unified = false`): its tokens sit in cells `0..n` of its own
//! stream exactly as they would in a context of its own, so a decode call that carries tokens
//! of many sequences gives every one of them the bits it gets alone (measured on SmolLM2,
//! Qwen2.5 and Gemma 3; with a unified cache the same batch drifts by ~0.6 in a logit). A
//! decode call of several sequences needs the same number of tokens from each of them
//! (llama.cpp's equal split); a sequence that has fewer left is padded with tokens after its
//! last one — later positions, which causal attention never lets an earlier token see — and
//! the padding is removed afterwards.
//!
//! Sequences `0..item_lanes` are *lanes*: each keeps its live tokens and snapshots like the
//! one-sequence case and carries the prompts of one item at a time. The others are *forks*: a
//! group of prompts of one lane (an item's branches) is spread over them, each fork starting
//! from the lane's longest shared prefix (one of its snapshots, or its live cells — saved once
//! and loaded into each fork on the CPU, the stream copied with `seq_cp` on a GPU — then cut
//! back), so the prefix is decoded once and every branch's suffix goes into one decode call.

use std::cell::Cell;
use std::num::NonZeroU32;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::session::{LlamaStateSeqFlags, SeqState};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

mod generate;
mod replay;

pub(crate) use super::prefix_reuse::MIN_TAIL;
use super::prefix_reuse::PrefixCache;
use crate::util::add_since;
use super::{EngineError, EngineOptions};

/// Lanes (sequences that carry items) of a context of `seqs` sequences: one per 16 sequences,
/// so that each lane has about 15 forks for the ~14 branches of an item.
pub fn item_lanes(seqs: u32) -> usize {
    (seqs as usize).div_ceil(16).max(1)
}

/// Time spent in the parts of scoring a session does, and its decode calls (since it started).
#[derive(Default)]
pub(crate) struct Clocks {
    pub save: Cell<u64>,
    pub restore: Cell<u64>,
    pub decode: Cell<u64>,
    pub letters: Cell<u64>,
    pub decode_calls: Cell<u64>,
    /// Tokens in those calls, padding included, and the padding alone.
    pub decode_tokens: Cell<u64>,
    pub pad_tokens: Cell<u64>,
}

fn bump(cell: &Cell<u64>, by: u64) {
    cell.set(cell.get() + by);
}

/// One KV-cache operation or llama.cpp call a session made, in order: replaying them with
/// nothing around them ([`Session::replay`]) times raw llama.cpp on exactly the work hyst-tui
/// gave it (`bench batch`'s matched anchor).
#[derive(Clone, Debug)]
pub enum KvOp {
    /// Empty the whole KV cache.
    ClearAll,
    /// Empty one sequence.
    Clear { seq: i32 },
    /// Remove a sequence's tokens from position `from` on.
    Trim { seq: i32, from: u32 },
    /// Save a sequence into host memory as snapshot `id`.
    Save { seq: i32, id: u64 },
    /// Load snapshot `id` into a sequence.
    Restore { seq: i32, id: u64 },
    /// Copy one sequence's stream into another's.
    Copy { from: i32, to: i32 },
    /// One llama.cpp decode call: (token, position, sequence, logits wanted) per token.
    Decode { tokens: Vec<(i32, i32, i32, bool)> },
    /// Read the logits of one token of the last decode call.
    Logits { index: i32 },
}

/// The KV-cache bookkeeping of one sequence.
pub(crate) struct Lane {
    pub cache: PrefixCache,
    /// Snapshot bytes, in `cache.snapshots` order, with their ids (for the trace).
    snapshots: Vec<(u64, SeqState)>,
}

/// One prompt of a packed evaluation: evaluated on sequence `seq`, planned against the cache
/// of lane `source` (`seq == source`: on the lane itself; else a fork of it).
pub(crate) struct Unit<'a> {
    pub seq: usize,
    pub source: usize,
    pub tokens: &'a [i32],
}

pub(crate) struct Session<'m> {
    pub ctx: LlamaContext<'m>,
    /// One per llama.cpp sequence.
    pub lanes: Vec<Lane>,
    pub item_lanes: usize,
    n_batch: usize,
    batch: LlamaBatch<'static>,
    use_cache: bool,
    /// A snapshot too large for the byte budget was skipped (logged once).
    warned_budget: bool,
    /// Tokens one sequence holds.
    pub n_ctx: u32,
    pub(crate) clocks: Clocks,
    /// A fork copies its lane's stream on the device (a GPU) rather than through host memory.
    copy_on_device: bool,
    /// Every KV operation, while recording (`bench`).
    pub(crate) trace: Option<Vec<KvOp>>,
    /// The batch's tokens as added (for the trace).
    batch_tokens: Vec<(i32, i32, i32, bool)>,
    next_snapshot: u64,
}

/// End of the decode chunk starting at `start` (of `n` tokens): at most `n_batch` tokens, and the
/// chunk after it is never shorter than `min_tail` (the previous chunk gives some up instead).
pub(crate) fn chunk_end(start: usize, n: usize, n_batch: usize, min_tail: usize) -> usize {
    let end = (start + n_batch).min(n);
    let rest = n - end;
    if rest > 0 && rest < min_tail {
        // Leave `min_tail` for the last chunk, as long as this one keeps at least `min_tail`.
        let shortened = n - min_tail;
        if shortened >= start + min_tail {
            return shortened;
        }
    }
    end
}

fn decode_err(e: llama_cpp_2::DecodeError) -> EngineError {
    match e {
        llama_cpp_2::DecodeError::NoKvCacheSlot => EngineError::KvFull,
        other => EngineError::Backend(format!("llama.cpp decode failed: {other}")),
    }
}

fn backend_err(what: &str, e: impl std::fmt::Display) -> EngineError {
    EngineError::Backend(format!("{what}: {e}"))
}

/// Tokens per decode call of a one-sequence context (the read-out's probe uses it too).
pub(crate) const SINGLE_N_BATCH: u32 = 512;

impl<'m> Session<'m> {
    pub(crate) fn new(model: &'m LlamaModel, backend: &LlamaBackend, opts: &EngineOptions, n_ctx: u32) -> Result<Self, EngineError> {
        let seqs = opts.pack.max(1);
        // One sequence: the settings every earlier version used. Several: a KV stream each,
        // and calls large enough for every sequence to bring at least MIN_TAIL tokens.
        let n_batch: u32 = if seqs == 1 { SINGLE_N_BATCH } else { (seqs * 64).clamp(SINGLE_N_BATCH, 8192) };
        let mut params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx.saturating_mul(seqs)))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_seq_max(seqs)
            .with_n_threads(opts.threads as i32)
            .with_n_threads_batch(opts.threads as i32)
            .with_flash_attention_policy(llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED);
        if seqs > 1 {
            params = params.with_kv_unified(false);
        }
        let ctx = model
            .new_context(backend, params)
            .map_err(|e| EngineError::Backend(format!("cannot create a llama.cpp context: {e}")))?;
        let item_lanes = item_lanes(seqs);
        let per_lane_bytes = opts.snapshot_bytes() / item_lanes;
        let lanes = (0..seqs as usize)
            .map(|i| {
                let snapshots = if opts.cache && i < item_lanes { opts.slots.saturating_sub(1) as usize } else { 0 };
                Lane { cache: PrefixCache::new(snapshots, per_lane_bytes), snapshots: Vec::new() }
            })
            .collect();
        Ok(Self {
            n_ctx: ctx.n_ctx() / seqs,
            ctx,
            lanes,
            item_lanes,
            warned_budget: false,
            n_batch: n_batch as usize,
            batch: LlamaBatch::new(n_batch as usize, 1),
            use_cache: opts.cache,
            clocks: Clocks::default(),
            copy_on_device: super::provenance::on_gpu(opts.gpu_layers.unwrap_or_else(super::default_gpu_layers)),
            trace: None,
            batch_tokens: Vec::new(),
            next_snapshot: 0,
        })
    }

    /// Sequences in the context.
    pub(crate) fn seqs(&self) -> usize {
        self.lanes.len()
    }

    /// Host memory held by every lane's snapshots, and the most any lane ever held (summed).
    pub(crate) fn snapshot_bytes(&self) -> (usize, usize) {
        let now = self.lanes.iter().map(|l| l.cache.bytes()).sum();
        let peak = self.lanes.iter().map(|l| l.cache.peak_bytes).sum();
        (now, peak)
    }

    fn record(&mut self, op: KvOp) {
        if let Some(t) = &mut self.trace {
            t.push(op);
        }
    }

    /// Empties sequence `seq` (with one sequence, the whole cache, as always).
    fn clear_seq(&mut self, seq: usize) -> Result<(), EngineError> {
        if self.seqs() == 1 {
            self.ctx.clear_kv_cache();
            self.record(KvOp::ClearAll);
        } else {
            self.ctx
                .kv_cache_seq_rm(seq as i32, None, None)
                .map_err(|e| backend_err("KV cache removal failed", e))?;
            self.record(KvOp::Clear { seq: seq as i32 });
        }
        Ok(())
    }

    /// Removes the tokens of `seq` from position `from` on.
    fn trim(&mut self, seq: usize, from: usize) -> Result<(), EngineError> {
        self.ctx
            .kv_cache_seq_rm(seq as i32, Some(from as u32), None)
            .map_err(|e| backend_err("KV cache removal failed", e))?;
        self.record(KvOp::Trim { seq: seq as i32, from: from as u32 });
        Ok(())
    }

    /// Saves lane `lane`'s live tokens as a snapshot when there is room (keeping the snapshot
    /// holding `protect`).
    fn save_live(&mut self, lane: usize, protect: Option<&[i32]>) -> Result<(), EngineError> {
        let t0 = Instant::now();
        let size = self.ctx.state_seq_get_size_ext(lane as i32, LlamaStateSeqFlags::empty());
        let l = &self.lanes[lane];
        if let Some(dropped) = l.cache.room_for(protect, size) {
            let state = self
                .ctx
                .state_seq_get(lane as i32, LlamaStateSeqFlags::empty())
                .map_err(|e| backend_err("saving a KV snapshot", e))?;
            let id = self.next_snapshot;
            self.next_snapshot += 1;
            self.record(KvOp::Save { seq: lane as i32, id });
            let l = &mut self.lanes[lane];
            l.cache.push_snapshot(&dropped, size);
            for &i in dropped.iter().rev() {
                l.snapshots.remove(i);
            }
            l.snapshots.push((id, state));
            add_since(&self.clocks.save, t0);
        } else if !l.cache.fits(size) && !self.warned_budget {
            self.warned_budget = true;
            tracing::info!(
                "a KV snapshot takes {} bytes, over the snapshot memory budget of {} bytes: prefix reuse continues from the live sequence only",
                size,
                l.cache.max_bytes
            );
        }
        Ok(())
    }

    /// Loads snapshot `i` of lane `lane` into sequence `seq` (emptied first).
    fn restore(&mut self, lane: usize, i: usize, seq: usize) -> Result<(), EngineError> {
        let t0 = Instant::now();
        self.clear_seq(seq)?;
        let (id, state) = &self.lanes[lane].snapshots[i];
        let id = *id;
        self.ctx
            .state_seq_set(state, seq as i32)
            .map_err(|e| backend_err("restoring a KV snapshot", e))?;
        self.record(KvOp::Restore { seq: seq as i32, id });
        self.lanes[lane].cache.touch(i);
        add_since(&self.clocks.restore, t0);
        Ok(())
    }

    /// Sets lane `lane` up for `tokens`: saves, restores and trims as its cache plans, leaving
    /// the reused prefix in the lane's sequence. Returns the tokens reused.
    fn prepare_lane(&mut self, lane: usize, tokens: &[i32]) -> Result<usize, EngineError> {
        self.prepare_lane_tail(lane, tokens, MIN_TAIL)
    }

    /// [`prepare_lane`](Self::prepare_lane) decoding at least the last `min_tail` tokens.
    fn prepare_lane_tail(&mut self, lane: usize, tokens: &[i32], min_tail: usize) -> Result<usize, EngineError> {
        let plan = if self.use_cache {
            self.lanes[lane].cache.plan(tokens, min_tail.max(MIN_TAIL))
        } else {
            super::prefix_reuse::Plan { save_live: false, restore: None, reuse: 0 }
        };
        // Snapshot indices shift when saving drops superseded ones: remember the tokens.
        let restore_tokens = plan.restore.map(|i| self.lanes[lane].cache.snapshots[i].tokens.clone());
        if plan.save_live {
            self.save_live(lane, restore_tokens.as_deref())?;
        }
        if let Some(want) = restore_tokens {
            let i = self.lanes[lane]
                .cache
                .snapshots
                .iter()
                .position(|sn| sn.tokens == want)
                .ok_or_else(|| EngineError::Backend("internal: planned KV snapshot disappeared".into()))?;
            self.restore(lane, i, lane)?;
            self.lanes[lane].cache.live = want;
        }
        if plan.reuse == 0 {
            self.clear_seq(lane)?;
        } else {
            self.trim(lane, plan.reuse)?;
        }
        self.lanes[lane].cache.live.truncate(plan.reuse);
        Ok(plan.reuse)
    }

    /// Sets fork `seq` up for `tokens` from lane `source`'s longest shared prefix (its live
    /// tokens copied, or a snapshot restored); the lane itself is not changed. Returns the
    /// tokens reused.
    fn prepare_fork(&mut self, source: usize, seq: usize, tokens: &[i32], live: &mut Option<(u64, SeqState)>) -> Result<usize, EngineError> {
        let plan = if self.use_cache {
            self.lanes[source].cache.plan(tokens, MIN_TAIL)
        } else {
            super::prefix_reuse::Plan { save_live: false, restore: None, reuse: 0 }
        };
        if let Some(i) = plan.restore {
            self.restore(source, i, seq)?;
            self.trim(seq, plan.reuse)?;
        } else if plan.reuse > 0 && self.copy_on_device {
            // On a GPU a copy of the whole stream stays in device memory.
            let t0 = Instant::now();
            self.ctx
                .copy_kv_cache_seq(source as i32, seq as i32, None, None)
                .map_err(|e| backend_err("copying a KV sequence", e))?;
            self.record(KvOp::Copy { from: source as i32, to: seq as i32 });
            add_since(&self.clocks.restore, t0);
            self.trim(seq, plan.reuse)?;
        } else if plan.reuse > 0 {
            // On the CPU the lane's live cells are saved once per call and loaded into each
            // fork: that copies the cells in use, not the whole stream.
            if live.is_none() {
                let t0 = Instant::now();
                let state = self
                    .ctx
                    .state_seq_get(source as i32, LlamaStateSeqFlags::empty())
                    .map_err(|e| backend_err("saving a KV snapshot", e))?;
                let id = self.next_snapshot;
                self.next_snapshot += 1;
                self.record(KvOp::Save { seq: source as i32, id });
                *live = Some((id, state));
                add_since(&self.clocks.save, t0);
            }
            let t0 = Instant::now();
            self.clear_seq(seq)?;
            let (id, state) = live.as_ref().expect("saved above");
            let id = *id;
            self.ctx
                .state_seq_set(state, seq as i32)
                .map_err(|e| backend_err("restoring a KV snapshot", e))?;
            self.record(KvOp::Restore { seq: seq as i32, id });
            add_since(&self.clocks.restore, t0);
            self.trim(seq, plan.reuse)?;
        } else {
            self.clear_seq(seq)?;
        }
        self.lanes[seq].cache.live = tokens[..plan.reuse].to_vec();
        Ok(plan.reuse)
    }

    fn clear_batch(&mut self) {
        self.batch.clear();
        self.batch_tokens.clear();
    }

    fn add(&mut self, token: i32, pos: usize, seq: usize, logits: bool) -> Result<(), EngineError> {
        self.batch
            .add(LlamaToken(token), pos as i32, &[seq as i32], logits)
            .map_err(|e| EngineError::Backend(e.to_string()))?;
        if self.trace.is_some() {
            self.batch_tokens.push((token, pos as i32, seq as i32, logits));
        }
        Ok(())
    }

    /// One llama.cpp decode call of the batch as filled (`pad` of its tokens are padding).
    fn decode_batch(&mut self, pad: usize) -> Result<(), EngineError> {
        if self.trace.is_some() {
            let tokens = std::mem::take(&mut self.batch_tokens);
            self.record(KvOp::Decode { tokens });
        }
        let t0 = Instant::now();
        let r = self.ctx.decode(&mut self.batch).map_err(decode_err);
        add_since(&self.clocks.decode, t0);
        bump(&self.clocks.decode_calls, 1);
        bump(&self.clocks.decode_tokens, self.batch.n_tokens() as u64);
        bump(&self.clocks.pad_tokens, pad as u64);
        r
    }
}

impl<'m> Session<'m> {
    /// Decodes `tokens[from..]` of sequence `seq` at positions `from..`; logits for the last
    /// token only. Every call holds at most `n_batch` tokens and none fewer than `MIN_TAIL`
    /// (unless the prompt is shorter).
    fn decode_range(&mut self, seq: usize, tokens: &[i32], from: usize) -> Result<(), EngineError> {
        let n = tokens.len();
        let mut start = from;
        while start < n {
            let end = chunk_end(start, n, self.n_batch, MIN_TAIL);
            self.clear_batch();
            for (i, &t) in tokens[start..end].iter().enumerate() {
                let pos = start + i;
                self.add(t, pos, seq, pos + 1 == n)?;
            }
            self.decode_batch(0)?;
            start = end;
        }
        Ok(())
    }

    /// Checks a prompt fits one sequence.
    pub(crate) fn check_fits(&self, tokens: &[i32]) -> Result<(), EngineError> {
        if tokens.len() > self.n_ctx as usize {
            return Err(EngineError::ContextOverflow { tokens: tokens.len(), n_ctx: self.n_ctx });
        }
        Ok(())
    }

    /// What an error leaves: an unknown KV state, so everything is forgotten and the next prompt
    /// starts clean; a full cache is an overflow of the prompt's `n` tokens.
    fn after_error(&mut self, e: EngineError, n: usize) -> EngineError {
        self.clear();
        match e {
            EngineError::KvFull => EngineError::ContextOverflow { tokens: n, n_ctx: self.n_ctx },
            e => e,
        }
    }

    /// Makes lane `lane` hold `tokens` (reusing its longest cached prefix) and leaves the last
    /// token's logits ready; returns (evaluated, reused).
    pub(crate) fn evaluate(&mut self, lane: usize, tokens: &[i32]) -> Result<(usize, usize), EngineError> {
        self.check_fits(tokens)?;
        let n = tokens.len();
        let result = self.prepare_lane(lane, tokens).and_then(|reuse| self.decode_range(lane, tokens, reuse).map(|_| reuse));
        match result {
            Ok(reuse) => {
                self.lanes[lane].cache.live = tokens.to_vec();
                Ok((n - reuse, reuse))
            }
            Err(e) => Err(self.after_error(e, n)),
        }
    }

    /// [`evaluate`](Self::evaluate) that also reads the logits of every position from `from` on
    /// (`from < tokens.len()`): `each(pos, logits)` for `pos` in `from..n`, in order. The
    /// reused prefix ends at `from` at the latest. Every decode call that holds one of those
    /// positions asks logits for all its tokens, so the output layer always runs on at least
    /// `MIN_TAIL` rows (or the whole prompt, when shorter) and a position's logits do not depend
    /// on how the prompt was split into calls: reused and scratch evaluation give the same bits.
    pub(crate) fn evaluate_positions(
        &mut self,
        lane: usize,
        tokens: &[i32],
        from: usize,
        each: &mut dyn FnMut(usize, &[f32]),
    ) -> Result<(usize, usize), EngineError> {
        self.check_fits(tokens)?;
        let n = tokens.len();
        if from >= n {
            return Err(EngineError::BadInput(format!("logits wanted from position {from} of a {n}-token prompt")));
        }
        let result = self.prepare_lane_tail(lane, tokens, n - from).and_then(|reuse| {
            let mut start = reuse;
            while start < n {
                let end = chunk_end(start, n, self.n_batch, MIN_TAIL);
                let wanted = end > from;
                self.clear_batch();
                for (i, &t) in tokens[start..end].iter().enumerate() {
                    self.add(t, start + i, lane, wanted || start + i + 1 == n)?;
                }
                self.decode_batch(0)?;
                if wanted {
                    for pos in from.max(start)..end {
                        let index = (pos - start) as i32;
                        self.record(KvOp::Logits { index });
                        each(pos, self.ctx.get_logits_ith(index));
                    }
                }
                start = end;
            }
            Ok(reuse)
        });
        match result {
            Ok(reuse) => {
                self.lanes[lane].cache.live = tokens.to_vec();
                Ok((n - reuse, reuse))
            }
            Err(e) => Err(self.after_error(e, n)),
        }
    }

    /// Evaluates several prompts in shared decode calls (see the module's notes) and calls
    /// `done(unit, logits, evaluated, reused)` for each as soon as its last token is decoded.
    /// Units are on distinct sequences; each fits its sequence ([`check_fits`](Self::check_fits)).
    pub(crate) fn evaluate_packed(
        &mut self,
        units: &[Unit],
        done: &mut dyn FnMut(usize, &[f32], usize, usize),
    ) -> Result<(), EngineError> {
        let longest = units.iter().map(|u| u.tokens.len()).max().unwrap_or(0);
        let result = self.packed_calls(units, done);
        if let Err(e) = result {
            return Err(self.after_error(e, longest));
        }
        for u in units.iter().filter(|u| u.seq == u.source) {
            self.lanes[u.seq].cache.live = u.tokens.to_vec();
        }
        Ok(())
    }

    fn packed_calls(&mut self, units: &[Unit], done: &mut dyn FnMut(usize, &[f32], usize, usize)) -> Result<(), EngineError> {
        // Forks first: they copy their lane before anything changes it.
        let mut order: Vec<usize> = (0..units.len()).collect();
        order.sort_by_key(|&i| (units[i].seq == units[i].source, units[i].seq));
        let mut from = vec![0usize; units.len()];
        let mut live: std::collections::HashMap<usize, Option<(u64, SeqState)>> = std::collections::HashMap::new();
        for &i in &order {
            let u = &units[i];
            from[i] = if u.seq == u.source {
                self.prepare_lane(u.seq, u.tokens)?
            } else {
                self.prepare_fork(u.source, u.seq, u.tokens, live.entry(u.source).or_default())?
            };
        }
        drop(live);
        let reused = from.clone();
        // A prompt shorter than MIN_TAIL is decoded alone, as it would be on its own (no
        // padding: a call that small takes other kernels); so is one whose padding could run
        // past its sequence's last cell (a tail of r < MIN_TAIL tokens is padded to MIN_TAIL).
        let n_ctx = self.n_ctx as usize;
        for (i, u) in units.iter().enumerate() {
            if u.tokens.len() < MIN_TAIL || u.tokens.len() + MIN_TAIL - 1 > n_ctx {
                self.decode_range(u.seq, u.tokens, from[i])?;
                let t0 = Instant::now();
                done(i, self.read_logits(), u.tokens.len() - reused[i], reused[i]);
                add_since(&self.clocks.letters, t0);
                from[i] = u.tokens.len();
            }
        }
        let max_units = (self.n_batch / MIN_TAIL).max(1);
        loop {
            // The units with tokens left, by sequence (llama.cpp splits a call at every gap
            // between sequence ids), at most as many as bring MIN_TAIL tokens each.
            let mut active: Vec<usize> = (0..units.len()).filter(|&i| from[i] < units[i].tokens.len()).collect();
            if active.is_empty() {
                return Ok(());
            }
            active.sort_by_key(|&i| units[i].seq);
            active.truncate(max_units);
            let least = active.iter().map(|&i| units[i].tokens.len() - from[i]).min().unwrap_or(MIN_TAIL);
            let m = least.clamp(MIN_TAIL, self.n_batch / active.len());
            self.clear_batch();
            let mut last_at = Vec::new();
            let mut pad = 0;
            for &i in &active {
                let u = &units[i];
                let n = u.tokens.len();
                let take = (n - from[i]).min(m);
                for k in 0..m {
                    let pos = from[i] + k;
                    if k < take {
                        self.add(u.tokens[pos], pos, u.seq, pos + 1 == n)?;
                        if pos + 1 == n {
                            last_at.push((i, self.batch.n_tokens() - 1, take < m));
                        }
                    } else {
                        // Padding after the prompt's last token, removed below.
                        self.add(u.tokens[n - 1], pos, u.seq, false)?;
                        pad += 1;
                    }
                }
                from[i] += take;
            }
            self.decode_batch(pad)?;
            for (i, at, padded) in last_at {
                let u = &units[i];
                self.record(KvOp::Logits { index: at });
                let t0 = Instant::now();
                done(i, self.ctx.get_logits_ith(at), u.tokens.len() - reused[i], reused[i]);
                add_since(&self.clocks.letters, t0);
                if padded && u.seq == u.source {
                    self.trim(u.seq, u.tokens.len())?;
                }
            }
        }
    }

    pub(crate) fn clear(&mut self) {
        self.ctx.clear_kv_cache();
        self.record(KvOp::ClearAll);
        for l in &mut self.lanes {
            l.cache.clear();
            l.snapshots.clear();
        }
    }

    /// Decodes `n` tokens (cycling through `tokens`) from an empty cache; returns seconds.
    pub(crate) fn raw_decode(&mut self, tokens: &[i32], n: usize) -> Result<f64, EngineError> {
        if tokens.is_empty() || n == 0 || n > self.n_ctx as usize {
            return Err(EngineError::BadInput(format!("raw decode needs 1..={} tokens", self.n_ctx)));
        }
        let seq: Vec<i32> = tokens.iter().copied().cycle().take(n).collect();
        self.clear();
        let t0 = Instant::now();
        let r = self.decode_range(0, &seq, 0);
        let secs = t0.elapsed().as_secs_f64();
        self.clear();
        r.map(|_| secs)
    }

    /// Logits of the last token of the last decode call.
    pub(crate) fn last_logits(&self) -> &[f32] {
        self.ctx.get_logits_ith(self.batch.n_tokens() - 1)
    }

    /// [`last_logits`](Self::last_logits) for a score (recorded as read).
    pub(crate) fn read_logits(&mut self) -> &[f32] {
        self.record(KvOp::Logits { index: self.batch.n_tokens() - 1 });
        self.last_logits()
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_end, item_lanes};

    fn chunks(from: usize, n: usize) -> Vec<usize> {
        let mut v = vec![];
        let mut s = from;
        while s < n {
            let e = chunk_end(s, n, 512, 32);
            v.push(e - s);
            s = e;
        }
        v
    }

    #[test]
    fn no_decode_chunk_is_smaller_than_the_minimum_tail() {
        assert_eq!(chunks(0, 513), vec![481, 32]);
        assert_eq!(chunks(0, 1024), vec![512, 512]);
        assert_eq!(chunks(0, 1030), vec![512, 486, 32]);
        assert_eq!(chunks(100, 140), vec![40]);
        assert_eq!(chunks(0, 10), vec![10]);
        for n in 1..1600 {
            let c = chunks(0, n);
            assert_eq!(c.iter().sum::<usize>(), n);
            assert!(c.iter().all(|&x| x <= 512));
            if n >= 32 {
                assert!(c.iter().all(|&x| x >= 32), "{n}: {c:?}");
            }
        }
    }

    #[test]
    fn a_lane_per_sixteen_sequences() {
        assert_eq!(item_lanes(1), 1);
        assert_eq!(item_lanes(16), 1);
        assert_eq!(item_lanes(17), 2);
        assert_eq!(item_lanes(64), 4);
    }
}
