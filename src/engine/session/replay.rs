//! Raw llama.cpp on recorded operations ([`KvOp`]): `bench batch`'s matched anchor.

use std::time::Instant;

use llama_cpp_2::context::session::{LlamaStateSeqFlags, SeqState};
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;

use super::{backend_err, decode_err, KvOp, Session};
use crate::engine::EngineError;

impl Session<'_> {
    /// Replays `ops` on an emptied cache with nothing but llama.cpp calls (no planning, no
    /// letters: logits are only read) and returns the seconds it took; empties the cache after.
    pub(crate) fn replay(&mut self, ops: &[KvOp]) -> Result<f64, EngineError> {
        use std::collections::HashMap;
        self.clear();
        let recording = self.trace.take();
        let mut saved: HashMap<u64, SeqState> = HashMap::new();
        let mut batch = LlamaBatch::new(self.n_batch, 1);
        let mut sink = 0f32;
        let t0 = Instant::now();
        let mut run = || -> Result<(), EngineError> {
            for op in ops {
                match op {
                    KvOp::ClearAll => self.ctx.clear_kv_cache(),
                    KvOp::Clear { seq } => {
                        self.ctx.kv_cache_seq_rm(*seq, None, None).map_err(|e| backend_err("replay", e))?;
                    }
                    KvOp::Trim { seq, from } => {
                        self.ctx.kv_cache_seq_rm(*seq, Some(*from), None).map_err(|e| backend_err("replay", e))?;
                    }
                    KvOp::Save { seq, id } => {
                        let s = self.ctx.state_seq_get(*seq, LlamaStateSeqFlags::empty()).map_err(|e| backend_err("replay", e))?;
                        saved.insert(*id, s);
                    }
                    KvOp::Restore { seq, id } => {
                        let s = saved.get(id).ok_or_else(|| EngineError::Backend("replay: unknown snapshot".into()))?;
                        self.ctx.state_seq_set(s, *seq).map_err(|e| backend_err("replay", e))?;
                    }
                    KvOp::Copy { from, to } => {
                        self.ctx.copy_kv_cache_seq(*from, *to, None, None).map_err(|e| backend_err("replay", e))?;
                    }
                    KvOp::Decode { tokens } => {
                        batch.clear();
                        for &(t, pos, seq, logits) in tokens {
                            batch.add(LlamaToken(t), pos, &[seq], logits).map_err(|e| EngineError::Backend(e.to_string()))?;
                        }
                        self.ctx.decode(&mut batch).map_err(decode_err)?;
                    }
                    KvOp::Logits { index } => sink += self.ctx.get_logits_ith(*index)[0],
                }
            }
            Ok(())
        };
        let r = run();
        let secs = t0.elapsed().as_secs_f64();
        std::hint::black_box(sink);
        self.clear();
        self.trace = recording;
        r.map(|_| secs)
    }
}
