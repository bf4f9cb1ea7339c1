//! Every condition's messages, against docs/protocol.md §3: roles and turn count, which turns carry the
//! question block / the advocated option's text / the history, what is kept or replaced; plus a
//! golden snapshot of every condition's messages for one sample item.

mod common;

use hyst_tui::data::selection::select;
use hyst_tui::data::DatasetSpec;
use hyst_tui::dialogue::conditions::{self, build, Built, Kind};
use hyst_tui::dialogue::{run_ramp, Builder, Control, CurvePoint, DialogueItem};
use hyst_tui::protocol::{ChatMessage, Scorer, SlotScore};
use hyst_tui::prompts::PromptSet;

fn item() -> DialogueItem {
    let items = DatasetSpec::Sample.load().unwrap();
    let s = select(&items, None, 42).into_iter().find(|s| s.item.id == "sample_ex_01").unwrap();
    DialogueItem::from(&s)
}

/// Fixed ramp letters A1..A4 (the wrong letter from medium pressure on, as a pressured model might).
fn letters(d: &DialogueItem) -> [char; 4] {
    let w = (b'A' + d.wrong as u8) as char;
    let c = d.item.correct_letter();
    [c, w, w, c]
}

fn get(key: &str) -> Built {
    let p = PromptSet::bundled();
    let b = Builder::new(&p);
    let d = item();
    build(conditions::Registry::bundled().find(key).unwrap(), &b, &d, &letters(&d), d.item.correct_letter())
}

fn roles(m: &[ChatMessage]) -> String {
    m.iter().map(|m| &m.role[..1]).collect::<Vec<_>>().join("")
}

fn has_question_block(s: &str, d: &DialogueItem) -> bool {
    let p = PromptSet::bundled();
    s.contains(&format!("{}\n{}\n\n{}\n", p.question_header, d.item.question, p.options_header))
        && s.contains(&Builder::option_lines(&d.item.options))
        && s.ends_with(&p.closing_line)
}

#[test]
fn ramp_points_follow_the_protocol() {
    let d = item();
    let p = PromptSet::bundled();
    let wrong = &d.item.options[d.wrong];
    // clean: [S, U0]; U0 = question block with the clean prefix, no history.
    let clean = get("clean_context");
    assert_eq!(roles(&clean.messages), "su");
    assert!(clean.messages[1].content.starts_with(&p.clean_prefix));
    assert!(has_question_block(&clean.messages[1].content, &d));
    assert_eq!(get("clean_context_probe").messages, clean.messages);
    // weak [S,U1], medium [S,U1,A1,U2], strong [S,U1,A1,U2,A2,U3], medium reset (8+1), strong reset (10)
    for (key, r) in [
        ("weak_pressure", "su"),
        ("medium_pressure", "suau"),
        ("strong_pressure", "suauau"),
        ("medium_reset", "suauauau"),
        ("strong_reset", "suauauauau"),
    ] {
        let m = get(key).messages;
        assert_eq!(roles(&m), r, "{key}");
        for u in m.iter().filter(|m| m.role == "user") {
            assert!(has_question_block(&u.content, &d), "{key}: every user turn repeats the question");
        }
        // assistant turns are exactly one letter: the ramp letters in order
        let asst: Vec<&str> = m.iter().filter(|m| m.role == "assistant").map(|m| m.content.as_str()).collect();
        let l = letters(&d);
        assert_eq!(asst, l[..asst.len()].iter().map(|c| c.to_string()).collect::<Vec<_>>().iter().map(String::as_str).collect::<Vec<_>>());
    }
    let s = get("strong_reset").messages;
    // pressure turns name the wrong option's text, never a letter; reset turns do not name it
    for (i, u) in s.iter().filter(|m| m.role == "user").enumerate() {
        let first_para = u.content.split("\n\n").next().unwrap();
        assert_eq!(first_para.contains(wrong.as_str()), i < 3, "user turn {i}: {first_para}");
    }
    assert!(s[9].content.starts_with(&p.strong_reset));
    assert!(s[9].content.contains(&p.strong_reset_prefix));
    // R0 is the strong-reset step
    assert_eq!(get("ordinary_strong_reset").messages, s);
    assert_eq!(CurvePoint::StrongReset.index(), 5);
}

#[test]
fn recovery_operations_keep_replace_or_delete_the_history() {
    let d = item();
    let p = PromptSet::bundled();
    let r0 = get("ordinary_strong_reset").messages;
    let history = &r0[1..9];
    // preserved history, BASE system, new final turn
    for (key, msg) in [
        ("explicit_user_retraction", Some(p.get("r1_retraction").unwrap())),
        ("self_verification_final_label", Some(p.get("r6_instruction").unwrap())),
        ("evidence_for_each_option_then_answer", Some(p.get("r6_evidence_comparison").unwrap())),
        ("source_skepticism_reset", Some(p.get("r2_source_skepticism").unwrap())),
        ("system_level_reset", None),
        ("evidence_grounded_recovery", None),
    ] {
        let m = get(key).messages;
        assert_eq!(roles(&m), "suauauauau", "{key}");
        assert_eq!(&m[1..9], history, "{key}: history kept");
        assert!(has_question_block(&m[9].content, &d), "{key}");
        if let Some(msg) = msg {
            assert!(m[9].content.starts_with(msg), "{key}");
        }
        if key == "system_level_reset" {
            assert_eq!(m[0].content, format!("{}\n\n{}", p.system, p.get("r2_system_addition").unwrap()));
            assert!(m[9].content.starts_with(p.get("r2_prefix").unwrap()), "R2 final turn is the question block only");
        } else {
            assert_eq!(m[0].content, p.system, "{key}");
        }
    }
    // R7: trusted evidence with repr(question) and the correct text
    let r7 = get("evidence_grounded_recovery").messages;
    let correct = &d.item.options[d.item.correct];
    assert!(r7[9].content.contains(&format!("{} '{}': {}.", p.r7_evidence_lead_in, d.item.question, correct)), "{}", r7[9].content);
    // R3a = the clean prompt, byte for byte; R3b: no history, reset instruction as the prefix
    assert_eq!(get("fresh_context_deletion").messages, get("clean_context").messages);
    let r3b = get("context_truncation").messages;
    assert_eq!(roles(&r3b), "su");
    assert!(r3b[1].content.starts_with(p.get("r3b_prefix").unwrap()) && has_question_block(&r3b[1].content, &d));
    // R4: history replaced by [summary, "Understood."]
    let r4 = get("neutral_summary_replacement").messages;
    assert_eq!(roles(&r4), "suau");
    assert_eq!(r4[1].content, p.get("r4_summary").unwrap());
    assert_eq!(r4[2].content, p.get("r4_ack").unwrap());
    assert!(r4[3].content.starts_with(p.get("r4_prefix").unwrap()));
    // R5: structured state, not the question block (no closing line)
    let r5 = get("factual_state_reconstruction").messages;
    assert_eq!(roles(&r5), "su");
    assert!(r5[1].content.contains(&d.item.question));
    assert!(r5[1].content.contains(&Builder::option_lines(&d.item.options)));
    assert!(!r5[1].content.contains(&p.closing_line));
}

#[test]
fn truncation_false_context_and_relabel() {
    let d = item();
    let p = PromptSet::bundled();
    let r0 = get("ordinary_strong_reset").messages;
    let ex = |i: usize| r0[1 + 2 * i..3 + 2 * i].to_vec();
    let cases: [(&str, Vec<usize>); 5] = [
        ("full_history_reset", vec![0, 1, 2, 3]),
        ("remove_strong_only", vec![0, 1, 3]),
        ("remove_medium_strong", vec![0, 3]),
        ("remove_all_pressure", vec![3]),
        ("reset_only", vec![]),
    ];
    for (key, keep) in cases {
        let m = get(key).messages;
        let mut want = vec![r0[0].clone()];
        for k in keep {
            want.extend(ex(k));
        }
        want.push(r0[9].clone());
        assert_eq!(m, want, "{key}: original letters, R0 final turn");
    }
    assert_eq!(get("fresh_context").messages, get("clean_context").messages);
    assert_eq!(get("reset_only").messages, get("clean_no_mention").messages);
    assert_eq!(get("user_pressure").messages, r0);
    let wrong = &d.item.options[d.wrong];
    for key in ["neutral_wrong_mention", "explicit_false_wrong_mention", "quoted_false_claim"] {
        let m = get(key).messages;
        assert_eq!(roles(&m), "suau", "{key}");
        assert!(m[1].content.contains(wrong.as_str()), "{key}");
        assert_eq!(m[2].content, p.get("false_context_ack").unwrap());
        assert_eq!(m[3], r0[9], "{key}: R0 final turn");
    }
    assert!(get("quoted_false_claim").messages[1].content.contains(&format!("'{wrong}'")));
    // relabel: history kept; shuffle moves the advocated wrong text to a new letter
    let base = get("baseline_strong_reset");
    assert_eq!(base.messages, r0);
    let sh = get("option_relabel_shuffle_reset");
    assert_eq!(&sh.messages[..9], &r0[..9]);
    assert_ne!(sh.wrong, d.wrong, "the wrong text moved");
    assert_eq!(sh.options[sh.wrong], *wrong);
    assert_eq!(sh.options[sh.correct], d.item.options[d.item.correct]);
    assert_eq!(sh.old_wrong_letter, (b'A' + d.wrong as u8) as char);
    let perm = sh.permutation.clone().unwrap();
    for (new, &old) in perm.iter().enumerate() {
        assert_eq!(sh.options[new], d.item.options[old]);
    }
    let ns = get("option_relabel_no_shuffle_reset");
    assert_eq!(ns.options, d.item.options);
    assert!(ns.messages[9].content.contains(p.get("relabel_no_shuffle").unwrap()));
}

/// Plays a fixed letter sequence, to test the self-conditioned ramp without a model.
struct Scripted(Vec<char>, usize);

impl Scorer for Scripted {
    type Error = std::convert::Infallible;
    fn score(&mut self, _m: &[ChatMessage], slot: &hyst_tui::protocol::AnswerSlot) -> Result<SlotScore, Self::Error> {
        let letters = &slot.labels();
        let l = self.0[self.1 % self.0.len()];
        self.1 += 1;
        Ok(common::scripted_score(letters, l))
    }
}

#[test]
fn the_ramp_appends_the_models_own_letters() {
    let p = PromptSet::bundled();
    let b = Builder::new(&p);
    let d = item();
    // clean, weak, medium, strong, medium reset, strong reset, probe
    let mut s = Scripted(vec!['A', 'B', 'C', 'D', 'E', 'F', 'A'], 0);
    let r = run_ramp(&mut s, &b, &d, Control::PressureWrong, &mut |_| {}).unwrap();
    assert_eq!(r.letters, ['B', 'C', 'D', 'E']);
    let last = &r.step(CurvePoint::StrongReset).messages;
    let asst: Vec<&str> = last.iter().filter(|m| m.role == "assistant").map(|m| m.content.as_str()).collect();
    assert_eq!(asst, ["B", "C", "D", "E"]);
    // the correct-pressure control advocates the correct text with the same templates
    let mut s = Scripted(vec!['A'], 0);
    let c = run_ramp(&mut s, &b, &d, Control::CorrectPressure, &mut |_| {}).unwrap();
    let u1 = &c.step(CurvePoint::WeakPressure).messages[1].content;
    let want = hyst_tui::prompts::fill(&p.weak_pressure, &[("advocated_option_text", &d.item.options[d.item.correct])]);
    assert_eq!(u1.split("\n\n").next().unwrap(), want);
    // the neutral-history control names no option in its messages
    let mut s = Scripted(vec!['A'], 0);
    let n = run_ramp(&mut s, &b, &d, Control::NeutralHistory, &mut |_| {}).unwrap();
    for st in &n.steps {
        let u = &st.messages.last().unwrap().content;
        let first = u.split("\n\n").next().unwrap();
        for o in &d.item.options {
            assert!(!first.contains(o.as_str()), "{first}");
        }
    }
    assert!(matches!(conditions::Registry::bundled().find("neutral_history:strong_reset").unwrap().kind, Kind::Curve(Control::NeutralHistory, _)));
}

#[test]
fn golden_messages_of_every_condition() {
    let mut out = String::new();
    // The built-in registry (prompts/conditions.toml) reproduces this snapshot of the code it
    // replaced byte for byte; experiment operations have their own snapshot below.
    for c in conditions::Registry::bundled().all().iter().filter(|c| !c.is_experiment()) {
        let b = get(&c.key);
        out.push_str(&format!("=== {} ({}) wrong={} correct={}\n", c.key, c.label, (b'A' + b.wrong as u8) as char, (b'A' + b.correct as u8) as char));
        for m in &b.messages {
            out.push_str(&format!("--- {}\n{}\n", m.role, m.content));
        }
    }
    insta::assert_snapshot!("messages_sample_ex_01", out);
}

/// The self-consistency operations on sample_ex_01 with ramp letters [correct, wrong, wrong,
/// correct] and a clean prediction that is neither (so the three constructions differ): the
/// exact messages, checked by hand against docs/protocol.md.
#[test]
fn golden_messages_of_the_self_consistency_operations() {
    let p = PromptSet::bundled();
    let b = Builder::new(&p);
    let d = item();
    let n = d.item.options.len();
    let clean = (0..n).find(|&i| i != d.item.correct && i != d.wrong).map(|i| (b'A' + i as u8) as char).unwrap();
    let mut out = format!("clean prediction = {clean}\n");
    for key in ["reset_after_correct_letters", "reset_after_clean_letters", "reset_after_user_turns_only"] {
        let c = conditions::Registry::bundled().find(key).unwrap();
        assert!(c.is_experiment());
        let built = build(c, &b, &d, &letters(&d), clean);
        out.push_str(&format!("=== {} ({})\n", c.key, c.label));
        for m in &built.messages {
            out.push_str(&format!("--- {}\n{}\n", m.role, m.content));
        }
    }
    // Hand checks: R0c and R0p keep the user turns of R0 and change only the assistant letters;
    // R0u is one user turn holding the four pressure messages and the R0 turn.
    let r0 = get("ordinary_strong_reset").messages;
    let correct = get("reset_after_correct_letters").messages;
    assert_eq!(correct.len(), r0.len());
    for (i, (a, m)) in r0.iter().zip(&correct).enumerate() {
        if m.role == "assistant" {
            assert_eq!(m.content, d.item.correct_letter().to_string(), "turn {i}");
        } else {
            assert_eq!(a, m, "turn {i}");
        }
    }
    let user_only = get("reset_after_user_turns_only").messages;
    assert_eq!(roles(&user_only), "su");
    let joined: Vec<&str> = r0.iter().filter(|m| m.role == "user").map(|m| m.content.as_str()).collect();
    assert_eq!(user_only[1].content, joined.join("\n\n"));
    insta::assert_snapshot!("messages_self_consistency_sample_ex_01", out);
}

/// Conditions declared `same_as` another build exactly its messages.
#[test]
fn same_as_conditions_build_identical_messages() {
    let mut n = 0;
    for c in conditions::Registry::bundled().all() {
        if let Some(t) = c.same_as {
            assert_eq!(get(&c.key).messages, get(t).messages, "{} vs {t}", c.key);
            n += 1;
        }
    }
    assert_eq!(
        n, 9,
        "full_history_reset, reset_only, fresh_context, user_pressure, baseline_strong_reset, R0 (the ramp's strong_reset) and the clean probe of each ramp"
    );
}

/// The rows a table may use for a condition: its own, then those of the conditions it is
/// declared the same as (to the ramp step at the end), then those declared the same as it.
#[test]
fn sources_follow_same_as() {
    let reg = hyst_tui::dialogue::conditions::Registry::bundled();
    let r0_class = ["ordinary_strong_reset", "strong_reset", "full_history_reset", "user_pressure", "baseline_strong_reset"];
    assert_eq!(reg.r0_ref(), r0_class);
    assert_eq!(reg.sources("full_history_reset"), ["full_history_reset", "ordinary_strong_reset", "strong_reset"]);
    assert_eq!(reg.sources("user_pressure"), ["user_pressure", "ordinary_strong_reset", "strong_reset"]);
    assert_eq!(reg.sources("strong_reset"), ["strong_reset", "ordinary_strong_reset", "full_history_reset", "user_pressure", "baseline_strong_reset"]);
    assert_eq!(reg.clean_ref(), ["clean_context_probe", "clean_context", "fresh_context"]);
    assert_eq!(reg.sources("clean_context"), ["clean_context", "clean_context_probe", "fresh_context"]);
    assert_eq!(reg.sources("fresh_context"), ["fresh_context", "clean_context_probe", "clean_context"]);
    assert_eq!(reg.sources("reset_only"), ["reset_only", "clean_no_mention"]);
    assert_eq!(reg.sources("clean_no_mention"), ["clean_no_mention", "reset_only"]);
    // R3a's prompt is the clean one too, but no table stands the clean rows in for an operation.
    assert_eq!(reg.sources("fresh_context_deletion"), ["fresh_context_deletion"]);
    assert_eq!(reg.sources("remove_strong_only"), ["remove_strong_only"]);
    assert!(reg.sources("no_such_condition").is_empty());
}

/// Open answers (docs/protocol.md §14): every condition that has an open form, on sample_ex_01
/// with the same ramp letters and clean prediction as the letters snapshot: the exact messages.
/// No lettered option list appears, and every assistant turn of a history is an option text.
#[test]
fn golden_open_answer_messages_of_every_condition() {
    let p = PromptSet::bundled().open_form(None).unwrap();
    let b = Builder::new(&p);
    let d = item();
    let lines = Builder::option_lines(&d.item.options);
    let mut out = String::new();
    for c in conditions::Registry::bundled().all().iter().filter(|c| !c.is_experiment() && c.has_open_form()) {
        let x = build(c, &b, &d, &letters(&d), d.item.correct_letter());
        for m in &x.messages {
            assert!(!m.content.contains(&lines), "{}: the option list is shown", c.key);
            // A replaced history (R4, the false-context controls) writes acknowledgements of its own.
            let acks = [p.get("r4_ack").unwrap(), p.get("false_context_ack").unwrap()];
            if m.role == "assistant" {
                assert!(d.item.options.contains(&m.content) || acks.contains(&m.content.as_str()), "{}: assistant turn {:?}", c.key, m.content);
            }
        }
        out.push_str(&format!("=== {} ({})\n", c.key, c.label));
        for m in &x.messages {
            out.push_str(&format!("--- {}\n{}\n", m.role, m.content));
        }
    }
    for key in ["baseline_strong_reset", "option_relabel_shuffle_reset"] {
        assert!(!conditions::Registry::bundled().find(key).unwrap().has_open_form(), "{key}");
    }
    insta::assert_snapshot!("messages_open_sample_ex_01", out);
}

#[test]
fn the_open_ramp_appends_the_models_own_option_texts() {
    let p = PromptSet::bundled().open_form(None).unwrap();
    let b = Builder::new(&p);
    let d = item();
    let mut s = Scripted(vec!['A', 'B', 'C', 'A', 'B', 'C', 'A'], 0);
    let r = run_ramp(&mut s, &b, &d, Control::PressureWrong, &mut |_| {}).unwrap();
    let last = &r.step(CurvePoint::StrongReset).messages;
    let asst: Vec<&str> = last.iter().filter(|m| m.role == "assistant").map(|m| m.content.as_str()).collect();
    let o = &d.item.options;
    assert_eq!(asst, [o[1].as_str(), o[2].as_str(), o[0].as_str(), o[1].as_str()]);
    assert!(matches!(b.slot(&d.item), hyst_tui::protocol::AnswerSlot::Open(ref t) if t == o));
}
