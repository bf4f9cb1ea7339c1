//! Prefix-reuse bookkeeping (pure logic, no llama.cpp): which cached KV prefix a prompt may
//! reuse. ("Cache" here is the KV cache only; the run's score cache is `store/run_cache.rs`.)
//!
//! Exactness decides the design. llama.cpp's attention sums over KV *cells* in cell order, so a
//! prompt only scores bit-identically to a fresh evaluation when its tokens sit in cells
//! `0..n` in order — exactly where a fresh context puts them. (Measured: a branch whose prefix
//! cells were shared with another sequence via `seq_cp` and whose suffix landed in later cells
//! drifted by ~0.03 in log-probability.) So:
//!
//! - one *live* llama.cpp sequence (id 0) holds the last prompt's tokens in cells `0..len`; a new
//!   prompt keeps the longest common token prefix, drops the rest (`seq_rm`) and decodes its own
//!   suffix right after it;
//! - several earlier sequences are remembered as *snapshots* (`state_seq_get`, host memory). When a
//!   snapshot shares a longer prefix with the new prompt than the live sequence does, the cache is
//!   cleared and the snapshot restored into cells `0..len` (`state_seq_set`), then truncated and
//!   extended as above. Before the live sequence is cut, it is saved as a snapshot, so a ramp
//!   history stays available for every branch off it.

/// The fewest tokens ever decoded in one llama.cpp call (unless the whole prompt is shorter).
///
/// llama.cpp's CPU matmul kernels take a different path for a very small batch (measured: one
/// token for SmolLM2 Q4_1, up to four for Qwen2.5 Q4_K_M) than for a larger one, and the paths
/// round differently (~0.2 in a logit). Any batch of `MIN_TAIL` or more tokens gives bit-identical
/// per-token results whatever its size. So prompts are split so that no decode call is smaller
/// than this — in scratch and cached evaluation alike — and a cached prefix is cut back so that
/// at least this many tokens are decoded.
pub(crate) const MIN_TAIL: usize = 32;

/// Metadata of one snapshot (the bytes live with the llama.cpp session).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SnapshotMeta {
    pub tokens: Vec<i32>,
    pub last_used: u64,
    /// Host memory the snapshot takes.
    pub bytes: usize,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct PrefixCache {
    pub live: Vec<i32>,
    pub snapshots: Vec<SnapshotMeta>,
    pub max_snapshots: usize,
    /// Budget for the snapshots' host memory, in bytes.
    pub max_bytes: usize,
    /// The most snapshot memory ever held at once.
    pub peak_bytes: usize,
    clock: u64,
}

/// How to evaluate a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Save the live sequence as a snapshot first (it is about to be cut or replaced).
    pub save_live: bool,
    /// Restore this snapshot into the (cleared) cache before anything else.
    pub restore: Option<usize>,
    /// Tokens kept from the cache (positions `0..reuse`); the rest is decoded.
    pub reuse: usize,
}

pub(crate) fn common_prefix(a: &[i32], b: &[i32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl PrefixCache {
    pub(crate) fn new(max_snapshots: usize, max_bytes: usize) -> Self {
        Self {
            max_snapshots,
            max_bytes,
            ..Default::default()
        }
    }

    /// Host memory the snapshots take now.
    pub(crate) fn bytes(&self) -> usize {
        self.snapshots.iter().map(|s| s.bytes).sum()
    }

    /// Whether a snapshot of `bytes` can be kept at all (it fits the budget on its own).
    pub(crate) fn fits(&self, bytes: usize) -> bool {
        bytes <= self.max_bytes
    }

    /// Plans the evaluation of `tokens` (non-empty). At least the last `min_tail` tokens (and
    /// always the last one) are decoded, see [`MIN_TAIL`].
    pub(crate) fn plan(&self, tokens: &[i32], min_tail: usize) -> Plan {
        let cap = tokens.len().saturating_sub(min_tail.max(1));
        let live_lcp = common_prefix(&self.live, tokens).min(cap);
        let best = self
            .snapshots
            .iter()
            .enumerate()
            .map(|(i, s)| (i, common_prefix(&s.tokens, tokens).min(cap)))
            .max_by_key(|&(i, l)| (l, self.snapshots[i].last_used));
        let (restore, reuse) = match best {
            Some((i, l)) if l > live_lcp => (Some(i), l),
            _ => (None, live_lcp),
        };
        // The live sequence loses tokens when it is cut below its length or replaced.
        let loses = restore.is_some() || self.live.len() > reuse;
        let save_live = self.max_snapshots > 0 && loses && !self.live.is_empty() && !self.is_remembered(&self.live);
        Plan {
            save_live,
            restore,
            reuse,
        }
    }

    /// True when `tokens` is a prefix of (or equal to) a snapshot.
    fn is_remembered(&self, tokens: &[i32]) -> bool {
        self.snapshots
            .iter()
            .any(|s| s.tokens.len() >= tokens.len() && s.tokens[..tokens.len()] == *tokens)
    }

    /// Which snapshots go to make room for the live sequence as a new snapshot of `bytes`: the
    /// superseded ones (prefixes of it), then the least recently used ones other than `protect`,
    /// until both the count and the byte budget hold. `None` when they cannot hold without
    /// dropping `protect` (or the snapshot alone is over the budget): then nothing is saved.
    pub(crate) fn room_for(&self, protect: Option<&[i32]>, bytes: usize) -> Option<Vec<usize>> {
        let tokens = &self.live;
        let mut dropped: Vec<usize> = (0..self.snapshots.len())
            .filter(|&i| {
                let s = &self.snapshots[i].tokens;
                s.len() <= tokens.len() && tokens[..s.len()] == **s
            })
            .collect();
        loop {
            let kept: Vec<usize> = (0..self.snapshots.len()).filter(|i| !dropped.contains(i)).collect();
            let kept_bytes: usize = kept.iter().map(|&i| self.snapshots[i].bytes).sum();
            if kept.len() < self.max_snapshots && kept_bytes + bytes <= self.max_bytes {
                dropped.sort_unstable();
                return Some(dropped);
            }
            let lru = kept
                .into_iter()
                .filter(|&i| protect != Some(self.snapshots[i].tokens.as_slice()))
                .min_by_key(|&i| self.snapshots[i].last_used)?;
            dropped.push(lru);
        }
    }

    /// Records the live sequence as a snapshot of `bytes`, removing the snapshots `dropped`
    /// (ascending indices, from [`room_for`](Self::room_for)) from the metadata.
    pub(crate) fn push_snapshot(&mut self, dropped: &[usize], bytes: usize) {
        self.clock += 1;
        for &i in dropped.iter().rev() {
            self.snapshots.remove(i);
        }
        self.snapshots.push(SnapshotMeta {
            tokens: self.live.clone(),
            last_used: self.clock,
            bytes,
        });
        self.peak_bytes = self.peak_bytes.max(self.bytes());
    }

    pub(crate) fn touch(&mut self, snapshot: usize) {
        self.clock += 1;
        self.snapshots[snapshot].last_used = self.clock;
    }

    pub(crate) fn clear(&mut self) {
        self.live.clear();
        self.snapshots.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl PrefixCache {
        fn plan_t(&self, t: &[i32]) -> Plan {
            self.plan(t, 1)
        }

        /// Saves the live sequence when there is room; returns what was dropped.
        fn save(&mut self, protect: Option<&[i32]>, bytes: usize) -> Option<Vec<usize>> {
            let dropped = self.room_for(protect, bytes)?;
            self.push_snapshot(&dropped, bytes);
            Some(dropped)
        }
    }

    #[test]
    fn min_tail_cuts_reuse_back() {
        let mut c = PrefixCache::new(3, usize::MAX);
        c.live = (0..100).collect();
        let t: Vec<i32> = (0..110).collect();
        assert_eq!(c.plan(&t, 32).reuse, 78);
        assert_eq!(c.plan(&t[..20], 32).reuse, 0);
    }

    #[test]
    fn extends_the_live_sequence() {
        let mut c = PrefixCache::new(3, usize::MAX);
        c.live = vec![1, 2, 3];
        assert_eq!(c.plan_t(&[1, 2, 3, 4]), Plan { save_live: false, restore: None, reuse: 3 });
    }

    #[test]
    fn identical_prompt_still_decodes_its_last_token() {
        let mut c = PrefixCache::new(3, usize::MAX);
        c.live = vec![1, 2, 3];
        let p = c.plan_t(&[1, 2, 3]);
        assert_eq!(p.reuse, 2);
        // cutting the live sequence saves it first
        assert!(p.save_live);
    }

    #[test]
    fn branch_saves_history_and_later_restores_it() {
        let mut c = PrefixCache::new(3, usize::MAX);
        c.live = vec![1, 2, 3, 4, 5]; // a ramp history
        let p = c.plan_t(&[1, 2, 9]);
        assert_eq!(p, Plan { save_live: true, restore: None, reuse: 2 });
        assert_eq!(c.save(None, 1), Some(vec![]));
        c.live = vec![1, 2, 9];
        // The next branch off the history restores the snapshot (longer prefix than live).
        let p = c.plan_t(&[1, 2, 3, 4, 7]);
        assert_eq!(p.restore, Some(0));
        assert_eq!(p.reuse, 4);
        assert!(p.save_live, "the live branch is saved before being replaced");
    }

    #[test]
    fn no_save_when_already_remembered_or_disabled() {
        let mut c = PrefixCache::new(3, usize::MAX);
        c.live = vec![1, 2, 3];
        c.save(None, 1);
        assert!(!c.plan_t(&[1, 9]).save_live);
        let mut d = PrefixCache::new(0, usize::MAX);
        d.live = vec![1, 2, 3];
        assert!(!d.plan_t(&[1, 9]).save_live);
    }

    #[test]
    fn the_byte_budget_evicts_the_least_recently_used() {
        let mut c = PrefixCache::new(10, 100);
        c.live = vec![1];
        c.save(None, 40);
        c.live = vec![2];
        c.save(None, 40);
        assert_eq!(c.bytes(), 80);
        c.live = vec![3];
        // 80 + 40 > 100: the oldest goes.
        assert_eq!(c.save(None, 40), Some(vec![0]));
        assert_eq!(c.bytes(), 80);
        assert!(c.fits(100) && !c.fits(101));
        // A protected snapshot stays: the other one makes room.
        c.live = vec![4];
        assert_eq!(c.save(Some(&[2]), 40), Some(vec![1]));
        assert!(c.snapshots.iter().any(|s| s.tokens == vec![2]));
        assert_eq!(c.bytes(), 80);
        // When only dropping the protected one would make room, nothing is saved or dropped.
        c.live = vec![5];
        assert_eq!(c.save(Some(&[2]), 70), None);
        assert_eq!(c.bytes(), 80);
        assert_eq!(c.snapshots.len(), 2);
        // Over the budget on its own: never saved.
        assert_eq!(c.save(None, 101), None);
        assert_eq!(c.peak_bytes, 80);
    }

    #[test]
    fn snapshots_are_bounded_and_superseded() {
        let mut c = PrefixCache::new(2, usize::MAX);
        c.live = vec![1];
        c.save(None, 1);
        c.live = vec![1, 2]; // supersedes [1]
        assert_eq!(c.save(None, 1), Some(vec![0]));
        c.live = vec![5];
        assert_eq!(c.save(None, 1), Some(vec![]));
        c.live = vec![7];
        // over capacity: the least recently used ([1, 2]) goes
        assert_eq!(c.save(None, 1), Some(vec![0]));
        assert_eq!(c.snapshots.iter().map(|s| s.tokens.clone()).collect::<Vec<_>>(), vec![vec![5], vec![7]]);
        // a protected snapshot is never the one evicted
        c.live = vec![9];
        assert_eq!(c.save(Some(&[5]), 1), Some(vec![1]));
        assert!(c.snapshots.iter().any(|s| s.tokens == vec![5]));
    }
}
