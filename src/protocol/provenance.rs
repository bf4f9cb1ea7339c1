//! Where a score was computed: in this process by llama.cpp, or by a served model over HTTP.
//! A score's numeric provenance string names it; its first word says which (`engine::served`
//! writes `served <api> <url> …`, the in-process engine its llama.cpp build).

/// The first word of a served score's provenance, with its space.
pub const SERVED_PROVENANCE_PREFIX: &str = "served ";

/// Where a score was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProvenanceKind {
    /// By a server over HTTP (`engine::served`).
    Served,
    /// By llama.cpp in this process (also an empty provenance: a version 1 record).
    InProcess,
}

impl ProvenanceKind {
    /// The kind a provenance string names.
    pub fn of(provenance: &str) -> ProvenanceKind {
        if provenance.starts_with(SERVED_PROVENANCE_PREFIX) {
            ProvenanceKind::Served
        } else {
            ProvenanceKind::InProcess
        }
    }
    pub fn is_served(self) -> bool {
        self == ProvenanceKind::Served
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_says_the_kind() {
        assert_eq!(ProvenanceKind::of("served llama-server http://127.0.0.1:8080; letters bounded (top-20)"), ProvenanceKind::Served);
        assert_eq!(ProvenanceKind::of("llama-cpp-sys-2 0.1.161, ggml 0.9 (abc); cpu AVX2"), ProvenanceKind::InProcess);
        assert_eq!(ProvenanceKind::of(""), ProvenanceKind::InProcess);
        // A word that merely begins with "served" is not the served prefix.
        assert_eq!(ProvenanceKind::of("servedx"), ProvenanceKind::InProcess);
    }
}
