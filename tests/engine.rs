//! The engine on real GGUF models (no mocks): exact prefix reuse, templates, BOS handling, the
//! protocol's letter math, and clear errors for bad input.

mod common;

use common::*;
use hyst_tui::config::{ModelsConfig, SystemPolicy};
use hyst_tui::data::pyrandom::PyRandom;
use hyst_tui::data::selection::select;
use hyst_tui::data::DatasetSpec;
use hyst_tui::dialogue::conditions::{self, build};
use hyst_tui::dialogue::{Builder, DialogueItem};
use hyst_tui::engine::{Engine, EngineError, EngineOptions};
use hyst_tui::protocol::{ChatMessage, SlotScore};
use hyst_tui::prompts::PromptSet;

/// ≥ 20 multi-turn conversations sharing prefixes: every ramp, hierarchy and truncation
/// condition of the `n_items` sample items with the shortest question blocks (to keep CPU time
/// down), with fixed ramp letters.
fn shared_prefix_conversations(n_items: usize) -> Vec<(Vec<ChatMessage>, Vec<char>)> {
    let prompts = PromptSet::bundled();
    let b = Builder::new(&prompts);
    let items = DatasetSpec::Sample.load().unwrap();
    let mut sel = select(&items, None, 42);
    sel.sort_by_key(|s| s.item.question.len() + s.item.options.iter().map(String::len).sum::<usize>());
    let mut out = Vec::new();
    for s in sel.into_iter().take(n_items) {
        let d = DialogueItem::from(&s);
        let letters = [s.item.correct_letter(), s.wrong_letter(), s.wrong_letter(), s.item.correct_letter()];
        for c in conditions::Registry::bundled().all() {
            if matches!(c.suite, hyst_tui::dialogue::Suite::Ramp | hyst_tui::dialogue::Suite::Hierarchy | hyst_tui::dialogue::Suite::Truncation) {
                out.push((build(c, &b, &d, &letters, s.item.correct_letter()).messages, s.item.letters()));
            }
        }
    }
    out
}

fn bits(s: &SlotScore) -> Vec<u64> {
    let mut v: Vec<u64> = s.log_scores.iter().chain(&s.probs).map(|x| x.to_bits()).collect();
    v.extend([s.entropy.to_bits(), s.max_prob.to_bits(), s.letter_mass.to_bits(), s.margin_top2.to_bits()]);
    v.extend(s.top_tokens.iter().map(|t| t.prob.to_bits()));
    v
}

fn check_reuse_is_exact(key: &str, n_items: usize) {
    let mut convs = shared_prefix_conversations(n_items);
    assert!(convs.len() >= 20, "{} conversations", convs.len());
    PyRandom::from_int(7).shuffle(&mut convs);
    let eng = engine(key);
    let cached: Vec<SlotScore> = convs.iter().map(|(m, l)| eng.score(m, l).unwrap()).collect();
    let reused: usize = cached.iter().map(|s| s.tokens_reused).sum();
    let total: usize = cached.iter().map(|s| s.prompt_tokens).sum();
    assert!(reused * 2 > total, "{key}: prefix reuse barely happened ({reused} of {total} tokens)");
    for (i, (m, l)) in convs.iter().enumerate() {
        eng.clear_cache().unwrap();
        let scratch = eng.score(m, l).unwrap();
        assert_eq!(scratch.tokens_reused, 0);
        assert_eq!(scratch.prompt_hash, cached[i].prompt_hash);
        assert_eq!(bits(&scratch), bits(&cached[i]), "{key}: conversation {i} differs between cached and scratch scoring");
    }
}

#[test]
fn prefix_reuse_is_bit_identical_smollm2() {
    check_reuse_is_exact(SMOL, 2);
}

#[test]
fn prefix_reuse_is_bit_identical_qwen() {
    check_reuse_is_exact(QWEN, 1);
}

/// Packed decoding (`--pack`) gives every conversation the bits it gets alone: two items on
/// two lanes at once, each lane's ramp one prompt at a time and the rest of its conversations
/// as one group spread over forks, against one prompt per decode call.
fn check_packing_is_exact(key: &str) {
    use hyst_tui::engine::{Job, JobOutput};
    // Each item's seven ramp points and its first nine other conversations.
    let all = shared_prefix_conversations(2);
    let half = all.len() / 2;
    let per_item = 16;
    let convs: Vec<_> = all[..per_item].iter().chain(&all[half..half + per_item]).cloned().collect();
    let alone = engine(key);
    let reference: Vec<SlotScore> = convs.iter().map(|(m, l)| alone.score(m, l).unwrap()).collect();
    drop(alone);
    let packed = engine_with(key, EngineOptions { threads: 2, pack: 32, ..EngineOptions::default() });
    assert_eq!(hyst_tui::engine::item_lanes(32), 2);
    let scored: Vec<Vec<SlotScore>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|lane| {
                let (packed, mine) = (&packed, &convs[lane * per_item..(lane + 1) * per_item]);
                s.spawn(move || {
                    let letters = mine[0].1.clone();
                    let prepared: Vec<_> = mine.iter().map(|(m, _)| packed.prepare(m).unwrap()).collect();
                    // The ramp's seven points one by one on the lane, then the rest together.
                    let mut out = Vec::new();
                    for p in &prepared[..7] {
                        match packed.run(Job::ScorePrepared { prepared: p.clone(), letters: letters.clone(), lane }).unwrap() {
                            JobOutput::Score(s) => out.push(*s),
                            _ => unreachable!(),
                        }
                    }
                    match packed.run(Job::ScoreGroup { prompts: prepared[7..].to_vec(), letters, lane }).unwrap() {
                        JobOutput::Scores(v) => out.extend(v),
                        _ => unreachable!(),
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let scored: Vec<SlotScore> = scored.into_iter().flatten().collect();
    assert_eq!(scored.len(), reference.len());
    for (i, (a, b)) in scored.iter().zip(&reference).enumerate() {
        assert_eq!(a.prompt_hash, b.prompt_hash);
        assert_eq!(bits(a), bits(b), "{key}: conversation {i} differs between packed and one-at-a-time decoding");
    }
    let st = &packed.stats;
    let calls = st.decode_calls.load(std::sync::atomic::Ordering::Relaxed);
    let tokens = st.decode_tokens.load(std::sync::atomic::Ordering::Relaxed);
    assert!(calls > 0 && (calls as usize) < convs.len(), "{key}: {calls} decode calls for {} conversations: nothing was packed", convs.len());
    assert!(tokens / calls > 64, "{key}: {} tokens per decode call", tokens / calls);
}

#[test]
fn packed_decoding_is_bit_identical_smollm2() {
    check_packing_is_exact("smollm2-135m");
}

#[test]
fn packed_decoding_is_bit_identical_qwen() {
    check_packing_is_exact("qwen2.5-coder-0.5b");
}

/// A prompt that nearly fills its sequence's context scores under packing as it does alone: the
/// padding that evens out a shared decode call must not run past the sequence's last cell.
#[test]
fn packing_a_prompt_that_nearly_fills_its_sequence() {
    use hyst_tui::engine::{Job, JobOutput};
    const CTX: usize = 256; // a multiple of 256, so llama.cpp keeps it as each sequence's size
    let opts = |pack| EngineOptions { threads: 2, pack, n_ctx: Some(CTX as u32), ..EngineOptions::default() };
    let alone = engine_with(SMOL, opts(1));
    // A question padded with words until the prompt is a few tokens short of the context.
    let conv = |words: usize| quiz(&format!("Which is right?{}", " yes".repeat(words)), &["one", "two", "three", "four"]);
    let len = |words: usize| alone.prepare(&conv(words)).unwrap().tokens.len();
    let mut words = 0;
    while len(words + 1) <= CTX - 4 {
        words += 1;
    }
    let long = conv(words);
    let long_len = len(words);
    // A second prompt 12 tokens shorter (so the long one's last call holds 12 tokens, padded
    // to 32 in a call of its own) and a third much shorter one.
    let others = [conv(words - 12), conv(words / 3)];
    assert!(long_len + 12 > CTX && long_len <= CTX, "{long_len} tokens");
    let letters = vec!['A', 'B', 'C', 'D'];
    let convs: Vec<_> = [long].into_iter().chain(others).collect();
    let reference: Vec<SlotScore> = convs
        .iter()
        .map(|m| {
            alone.clear_cache().unwrap();
            alone.score(m, &letters).unwrap()
        })
        .collect();
    drop(alone);
    let packed = engine_with(SMOL, opts(32));
    let prompts: Vec<_> = convs.iter().map(|m| packed.prepare(m).unwrap()).collect();
    let scored = match packed.run(Job::ScoreGroup { prompts, letters, lane: 0 }) {
        Ok(JobOutput::Scores(v)) => v,
        Ok(_) => unreachable!(),
        Err(e) => panic!("a {long_len}-token prompt in {CTX}-token sequences: {e}"),
    };
    for (i, (a, b)) in scored.iter().zip(&reference).enumerate() {
        assert_eq!(bits(a), bits(b), "prompt {i} differs between packed and alone");
    }
}

#[test]
fn no_cache_engine_matches_cached_engine() {
    let convs = shared_prefix_conversations(1);
    let a = engine(SMOL);
    let b = engine_with(SMOL, EngineOptions { threads: 2, cache: false, ..EngineOptions::default() });
    for (m, l) in convs.iter().take(12) {
        let x = a.score(m, l).unwrap();
        let y = b.score(m, l).unwrap();
        assert_eq!(y.tokens_reused, 0);
        assert_eq!(bits(&x), bits(&y));
    }
}

#[test]
fn the_snapshot_budget_is_kept_and_falling_back_changes_no_score() {
    use std::sync::atomic::Ordering;
    let convs = shared_prefix_conversations(1);
    let run = |budget: Option<u64>| {
        let e = engine_with(SMOL, EngineOptions { threads: 2, snapshot_mem: budget, ..EngineOptions::default() });
        let scores: Vec<Vec<u64>> = convs.iter().map(|(m, l)| bits(&e.score(m, l).unwrap())).collect();
        let reused: usize = convs.iter().map(|(m, l)| e.score(m, l).unwrap().tokens_reused).sum();
        let peak = e.stats.snapshot_peak_bytes.load(Ordering::Relaxed);
        (scores, reused, peak)
    };
    let (free, _, free_peak) = run(Some(1 << 34));
    assert!(free_peak > 0, "snapshots were taken");
    // Room for about one snapshot: the budget holds (measured), scores are the same bits.
    let one = free_peak / 2;
    let (tight, _, tight_peak) = run(Some(one));
    assert!(tight_peak <= one, "peak {tight_peak} over the budget {one}");
    assert_eq!(tight, free);
    // Below one snapshot: live-sequence reuse only, still the same bits.
    let (none, reused, none_peak) = run(Some(1024));
    assert_eq!(none_peak, 0);
    assert!(reused > 0, "the live sequence is still reused");
    assert_eq!(none, free);
}

fn conv(system: bool) -> Vec<ChatMessage> {
    let mut v = vec![];
    if system {
        v.push(ChatMessage::system("Sys."));
    }
    v.extend([ChatMessage::user("Hi?"), ChatMessage::assistant("B"), ChatMessage::user("Again?")]);
    v
}

#[test]
fn chatml_templates_render_exactly() {
    let smol = engine(SMOL);
    assert_eq!(
        smol.prepare(&conv(true)).unwrap().text,
        "<|im_start|>system\nSys.<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\nB<|im_end|>\n<|im_start|>user\nAgain?<|im_end|>\n<|im_start|>assistant\n"
    );
    // Without a system message SmolLM2's own template inserts its default one (llama.cpp's
    // built-in formatter would not): proof that the GGUF's Jinja is what renders.
    assert_eq!(
        smol.prepare(&conv(false)).unwrap().text,
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\nB<|im_end|>\n<|im_start|>user\nAgain?<|im_end|>\n<|im_start|>assistant\n"
    );
    let qwen = engine(QWEN);
    assert_eq!(
        qwen.prepare(&conv(false)).unwrap().text,
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\nB<|im_end|>\n<|im_start|>user\nAgain?<|im_end|>\n<|im_start|>assistant\n"
    );
    assert_eq!(
        qwen.prepare(&conv(true)).unwrap().text,
        "<|im_start|>system\nSys.<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\nB<|im_end|>\n<|im_start|>user\nAgain?<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn gemma_base_uses_named_template_with_system_folding_and_one_bos() {
    let e = entry(GEMMA);
    assert_eq!(e.system, SystemPolicy::FoldIntoFinalUser);
    let g = engine(GEMMA);
    let p = g.prepare(&conv(true)).unwrap();
    assert_eq!(
        p.text,
        "<bos><start_of_turn>user\nHi?<end_of_turn>\n<start_of_turn>model\nB<end_of_turn>\n<start_of_turn>user\nSys.\n\nAgain?<end_of_turn>\n<start_of_turn>model\n"
    );
    let bos = g.tokenize("<bos>", true).unwrap();
    assert_eq!(bos.len(), 1);
    assert_eq!(p.tokens[0], bos[0]);
    assert_eq!(p.tokens.iter().filter(|&&t| t == bos[0]).count(), 1, "exactly one BOS");
    let s = g.score(&conv(true), &['A', 'B', 'C', 'D']).unwrap();
    assert!((s.probs.iter().sum::<f64>() - 1.0).abs() < 1e-9);
}

#[test]
fn no_double_bos_for_any_test_model_and_a_double_bos_is_an_error() {
    for key in [SMOL, QWEN, GEMMA] {
        let g = engine(key);
        let info = g.info().clone();
        let p = g.prepare(&conv(true)).unwrap();
        let bos = g.tokenize(&info.bos, true).unwrap();
        let lead = p.tokens.iter().take_while(|&&t| Some(&t) == bos.first()).count();
        assert!(lead <= 1, "{key}: {lead} leading BOS tokens");
    }
    // A template that emits BOS twice is refused, not scored.
    let mut e = entry(GEMMA);
    e.template = hyst_tui::config::TemplateSpec::Inline {
        jinja: "{{ bos_token }}{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}".into(),
    };
    let g = Engine::start(&e, &e.path(&hyst_tui::config::models_dir()), EngineOptions { threads: 2, ..Default::default() }).unwrap();
    let err = g.score(&conv(false), &['A', 'B']).unwrap_err();
    assert!(matches!(err, EngineError::DoubleBos { count: 2 }), "{err}");
}

/// A plain user turn. (Qwen2.5-Coder-0.5B at Q4_K_M is a weak multiple-choice answerer with a
/// strong bias toward "A"; with this phrasing it answers the easy question below correctly.)
fn quiz(question: &str, options: &[&str]) -> Vec<ChatMessage> {
    let opts: Vec<String> = options.iter().enumerate().map(|(i, o)| format!("{}. {o}", (b'A' + i as u8) as char)).collect();
    vec![ChatMessage::user(format!("{question}\n{}\nAnswer with the letter of the correct option.", opts.join("\n")))]
}

#[test]
fn letter_math_properties_and_an_easy_question_on_qwen() {
    let q = engine(QWEN);
    let m = quiz("What is 2 + 2?", &["3", "4", "5", "22"]);
    let s = q.score(&m, &['A', 'B', 'C', 'D']).unwrap();
    assert!((s.probs.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert_eq!(s.pred_letter(), 'B', "probs {:?}", s.probs);
    // mean-of-variants rule, recomputed from the raw variant probabilities
    for (i, ps) in s.variant_probs.iter().enumerate() {
        let mean = ps.iter().sum::<f64>() / ps.len() as f64;
        assert!((s.log_scores[i] - mean.ln()).abs() < 1e-9);
    }
    let mass: f64 = s.variant_probs.iter().flatten().sum();
    assert!((s.letter_mass - mass).abs() < 1e-12);
    // Only the shown letters are scored, whatever the question shows.
    let two = q.score(&m, &['A', 'B']).unwrap();
    assert_eq!(two.letters, vec!['A', 'B']);
    assert_eq!(two.probs.len(), 2);
    assert!((two.probs.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    // Same logits: renormalising over A,B only is the ratio of the 4-letter scores.
    let r4 = (s.log_scores[1] - s.log_scores[0]).exp();
    let r2 = two.probs[1] / two.probs[0];
    assert!((r4 - r2).abs() / r4 < 1e-9);
}

#[test]
fn errors_are_clear() {
    let g = engine(SMOL);
    // 27 options
    let letters: Vec<char> = (0..27u8).map(|i| (b'A' + i % 26) as char).collect();
    let e = g.score(&conv(true), &letters).unwrap_err();
    assert!(e.to_string().contains("27 options"), "{e}");
    // context overflow
    let small = engine_with(SMOL, EngineOptions { threads: 2, n_ctx: Some(256), ..Default::default() });
    let long = vec![ChatMessage::user("word ".repeat(400))];
    let e = small.score(&long, &['A', 'B']).unwrap_err();
    assert!(matches!(e, EngineError::ContextOverflow { .. }), "{e}");
    assert!(e.to_string().contains("context holds 256"), "{e}");
    // the engine still works afterwards
    assert!(small.score(&conv(true), &['A', 'B']).is_ok());
    // a truncated GGUF
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(entry(SMOL).path(&hyst_tui::config::models_dir())).unwrap();
    let t = dir.path().join("trunc.gguf");
    std::fs::write(&t, &bytes[..2_000_000]).unwrap();
    let mut e = entry(SMOL);
    e.source = hyst_tui::config::Source::Local { path: t };
    let err = Engine::start(&e, &e.path(dir.path()), EngineOptions::default()).err().expect("must fail");
    assert!(err.to_string().contains("truncated or corrupt"), "{err}");
    // not a GGUF at all
    let n = dir.path().join("x.gguf");
    std::fs::write(&n, b"hello").unwrap();
    let err = Engine::start(&e, &n, EngineOptions::default()).err().expect("must fail");
    assert!(err.to_string().contains("not a GGUF file"), "{err}");
    // missing file
    let err = Engine::start(&e, &dir.path().join("none.gguf"), EngineOptions::default()).err().expect("must fail");
    assert!(err.to_string().contains("models fetch"), "{err}");
    // unknown model key
    let err = ModelsConfig::bundled().unwrap().get("no-such-model").unwrap_err();
    assert!(err.to_string().contains("unknown model `no-such-model`"), "{err}");
}

/// The render budget that stops a hostile chat template (src/engine/template.rs) is far above
/// what the shipped models' own templates need: a dialogue about ten times as long as the
/// protocol's longest renders on each with under a twentieth of it.
#[test]
fn real_templates_render_long_dialogues_well_within_the_render_budget() {
    let option = "Venus, the second planet, wrapped in clouds; ".repeat(20);
    let question = format!("Question:\nWhich planet is closest to the Sun?\n\nOptions:\nA. {option}\nB. Mercury\nC. Mars\nD. Earth\n\nAnswer with the letter only.");
    let mut long = vec![ChatMessage::system("You answer multiple-choice questions with the letter of the best option only.")];
    for i in 0..60 {
        long.push(ChatMessage::user(format!("Turn {i}. I am sure the answer is A.\n\n{question}")));
        long.push(ChatMessage::assistant("B"));
    }
    long.push(ChatMessage::user(question));
    for key in [SMOL, QWEN, GEMMA] {
        let g = engine(key);
        let p = g.prepare(&long).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(p.text.len() > 60_000, "{key}: {} bytes", p.text.len());
        let needed = hyst_tui::engine::render_fuel_needed(&entry(key), g.info(), &long).unwrap();
        println!("{key}: {needed} of {} render steps for {} messages", hyst_tui::engine::RENDER_FUEL, long.len());
        assert!(needed * 20 < hyst_tui::engine::RENDER_FUEL, "{key} needs {needed}");
    }
}
