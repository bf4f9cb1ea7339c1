//! CCTP — clean-counterfactual tube projection (docs/protocol.md §7). Post-hoc, no inference.
//!
//! For one item, the option distribution of the full-history context (ordinary reset R0, or the
//! correct-pressure R0) is moved toward the clean distribution along a path indexed by α (the
//! weight on the **clean** anchor: α = 0 → full history, α = 1 → clean). α\* is the smallest grid
//! α whose projected distribution passes the tube test against clean.
//!
//! Decisions where the paper leaves room (documented in docs/protocol.md §7 and §11):
//! - The clean reference distribution `P` of the tube test, and both exact endpoints, are the
//!   renormalised option **probabilities** (negatives clipped to 0). When the caller does not
//!   supply probabilities they are the softmax of the log-scores (the scorer's own definition,
//!   docs/protocol.md §4.3), so P is identical for all three paths and the α = 1 guarantee holds exactly.
//! - Softmax is `exp(z − max z) / Σ exp(…)`, sums in numpy's pairwise order.
//! - The CCTP entropy clamps every probability to `1e-12` and renormalises before `−Σ q ln q`; KL
//!   uses the formula of docs/protocol.md §5.8 (clamp, no renormalisation), common labels only.
//! - Binding-constraint names are `top1_clean_match`, `p_top_clean`, `kl`, `entropy`, `max_prob`
//!   (priority order); `none` when α\* = 0.
//! - KL-only variants evaluate only the KL check; the other four checks are reported as passing.
//! - Non-finite log-scores, a label/score length mismatch, an out-of-range wrong/correct index or
//!   zero probability mass are input errors; a failed α = 1 guarantee is
//!   [`CctpError::GuaranteeFailed`]. Nothing here panics on data.

mod input;
mod numerics;
mod project;
#[cfg(test)]
mod reference;
mod spec;
mod summary;
mod tube;

pub(crate) use input::{align_labels, CctpError, CctpInput, Prepared};
pub(crate) use numerics::{alpha_grid, ALPHA_GRID_STEP};
pub(crate) use project::{project_prepared, CctpItem};
pub(crate) use spec::{Path, Tube, TubeSpec, Variant, VARIANTS};
pub(crate) use summary::{decision_label, summarize};
pub(crate) use tube::{tube_eval, BINDING_PRIORITY, KL_CHECK_EPS};
