//! Tests of the what-if module's parts.

use std::path::Path;

use super::edit::*;
use super::editor::Editor;
use super::save::*;
use super::store::*;
use crate::protocol::ChatMessage;
use crate::tui::parts::Part;

use crate::dialogue::recipe::ExperimentSource;

#[test]
fn a_final_turn_splits_and_joins_back() {
    let content = "Please reset.\n\nAnswer again.\n\nQuestion:\nQ?\n\nOptions:\nA. x\nB. y";
    let msgs = vec![ChatMessage { role: "user".into(), content: content.into() }];
    let t = FinalTurn::of(&msgs, "Question:").unwrap();
    assert_eq!((t.message.as_str(), t.prefix.as_str()), ("Please reset.", "Answer again."));
    assert_eq!(t.with_message("Please reset."), content);
    assert_eq!(t.with_message("Forget it all."), content.replace("Please reset.", "Forget it all."));
    assert_eq!(t.with_message(" "), content.replace("Please reset.\n\n", ""));
    let e = with_text(&msgs, 0, "X", "Question:");
    assert!(e[0].content.starts_with("X\n\nAnswer again."));
}

/// R0 and the ramp's strong reset step are one dialogue (the registry's `same_as`), so an edit
/// of one is an edit of the other; no other step has a twin.
#[test]
fn r0_and_the_strong_reset_step_are_twins() {
    use crate::dialogue::CurvePoint;
    let (r0, step) = (Part::Op("ordinary_strong_reset"), Part::curve(CurvePoint::StrongReset));
    assert_eq!((r0_twin(r0), r0_twin(step)), (Some(step), Some(r0)));
    for p in crate::tui::parts::steps(crate::dialogue::conditions::Registry::bundled()).into_iter().filter(|&p| p != r0 && p != step) {
        assert_eq!(r0_twin(p), None, "{p:?}");
    }
}

#[test]
fn versions_and_undo() {
    let mut w = WhatIfs::default();
    let p = Part::Op("ordinary_strong_reset");
    assert!(!w.undo(0, p));
    let d = dialogue();
    let one = Version::new(with_text(&d, 1, "one", "Question:"), 1, d.clone());
    let two = Version::new(with_text(&one.messages, 0, "sys", "Question:"), 1, d.clone());
    w.push(0, p, one.clone());
    w.push(0, p, two.clone());
    assert_eq!(w.edited_steps(0), vec![(p, &two)]);
    assert!(w.edited_steps(1).is_empty());
    assert_eq!((w.current(0, p), w.versions(0, p)), (Some(&two), 2));
    assert!(w.undo(0, p));
    assert_eq!(w.current(0, p), Some(&one));
    assert!(w.undo(0, p));
    assert_eq!(w.current(0, p), None);
    assert_eq!(w.current(1, p), None);
    assert!(w.edited_steps(0).is_empty());
}

#[test]
fn the_next_wrong_option() {
    // Four options, C correct, B the item's own: from B on to D, then A, then D again.
    assert_eq!(next_wrong(4, 2, 1, 1), Some(3));
    assert_eq!(next_wrong(4, 2, 1, 3), Some(0));
    assert_eq!(next_wrong(4, 2, 1, 0), Some(3));
    // Three options: one other wrong option, and none after it; two: none at all.
    assert_eq!(next_wrong(3, 2, 1, 1), Some(0));
    assert_eq!(next_wrong(3, 2, 1, 0), None);
    assert_eq!(next_wrong(2, 0, 1, 1), None);
}

#[test]
fn the_saved_operation_is_valid_toml() {
    let op = SavedOp {
        name: "whatif_1".into(),
        short: "W1".into(),
        label: "what-if \"R0\"".into(),
        history: "kept",
        assistant: "model",
        message: "Line one\nline \\ two",
        prefix: "Answer again.",
        description: "d".into(),
    };
    let v: toml::Value = toml::from_str(&experiment_toml(&op)).unwrap();
    let o = &v["operation"][0];
    assert_eq!(o["message"].as_str(), Some("Line one\nline \\ two"));
    assert_eq!(o["label"].as_str(), Some("what-if \"R0\""));
    assert_eq!(content_path(Path::new("/x"), "a", "toml"), content_path(Path::new("/x"), "a", "toml"));
    assert_ne!(content_path(Path::new("/x"), "a", "toml"), content_path(Path::new("/x"), "b", "toml"));
}

fn msg(role: &str, content: &str) -> ChatMessage {
    ChatMessage { role: role.into(), content: content.into() }
}

/// A ramp-like dialogue: system, user 1 (clean), assistant 1, user 2 (pressure).
fn dialogue() -> Vec<ChatMessage> {
    vec![
        msg("system", "Be brief."),
        msg("user", "Answer.\n\nQuestion:\nQ?\n\nOptions:\nA. x\nB. y"),
        msg("assistant", "A"),
        msg("user", "It is B.\n\nAnswer again.\n\nQuestion:\nQ?\n\nOptions:\nA. x\nB. y"),
    ]
}

#[test]
fn any_message_can_be_edited() {
    let d = dialogue();
    let h = "Question:";
    // What an edit replaces: the text before a question block, else the whole message.
    assert_eq!(editable_text(&d, 0, h).as_deref(), Some("Be brief."));
    assert_eq!(editable_text(&d, 1, h).as_deref(), Some(""), "the clean turn has only a prefix");
    assert_eq!(editable_text(&d, 2, h).as_deref(), Some("A"));
    assert_eq!(editable_text(&d, 3, h).as_deref(), Some("It is B."));
    assert_eq!(editable_text(&d, 4, h), None);
    let e = with_text(&with_text(&with_text(&d, 0, "Be careful.", h), 2, "B", h), 3, "Surely B?", h);
    assert_eq!(e[0].content, "Be careful.");
    assert_eq!(e[1], d[1], "unedited messages stay");
    assert_eq!(e[2].content, "B");
    assert_eq!(e[3].content, d[3].content.replace("It is B.", "Surely B?"));
    // An edit of the clean turn puts a message before its prefix.
    let edits = e.clone();
    let e = with_text(&d, 1, "Hi.", h);
    assert!(e[1].content.starts_with("Hi.\n\nAnswer.\n\nQuestion:"), "{}", e[1].content);
    // The final user message, and whether an edit is only that.
    assert_eq!(final_user(&d), Some(3));
    assert!(only_final(&d, &with_text(&d, 3, "x", h)));
    assert!(!only_final(&d, &edits));
    assert!(!only_final(&d, &with_text(&d, 1, "x", h)));
    assert!(!only_final(&d, &d), "no change is no edit");
    assert_eq!(what_changed(&d, &d, h), "");
    assert_eq!(what_changed(&d, &with_text(&d, 3, "Sure?", h), h), "Sure?");
    assert_eq!(what_changed(&d, &edits, h), describe(&d, &edits, h));
    assert_eq!(describe(&d, &edits, h), "system: Be careful. · assistant 1: B · user 2: Surely B?");
    assert_eq!((message_name(&d, 0), message_name(&d, 2), message_name(&d, 3)), ("system".into(), "assistant 1".into(), "user 2".into()));
}

#[test]
fn exchanges_are_deleted_and_repeated() {
    let d = dialogue();
    let h = "Question:";
    // The exchange of user 1 (index 1) and its answer (index 2), from either message.
    let del = delete_exchange(&d, 2).unwrap();
    assert_eq!(del, vec![d[0].clone(), d[3].clone()]);
    assert_eq!(delete_exchange(&d, 1).unwrap(), del);
    let rep = repeat_exchange(&d, 1).unwrap();
    assert_eq!(rep, vec![d[0].clone(), d[1].clone(), d[2].clone(), d[1].clone(), d[2].clone(), d[3].clone()]);
    assert_eq!(describe(&d, &rep, h), "2 turns → 3");
    assert_eq!(describe(&d, &del, h), "2 turns → 1");
    // Neither the system prompt nor the final turn is an exchange of the history.
    assert!(delete_exchange(&d, 0).is_err());
    assert!(delete_exchange(&d, 3).is_err());
    assert!(repeat_exchange(&d, 3).is_err());
    // A repeated exchange's copy is edited on its own.
    let e = with_text(&rep, 3, "Again.", h);
    assert_eq!(e[1], d[1]);
    assert_ne!(e[3], d[1]);
}

#[test]
fn the_message_cursor() {
    let d = dialogue();
    // Unselected = the final user message; it stops at the ends.
    assert_eq!(move_message(&d, None, -1), Some(2));
    assert_eq!(move_message(&d, None, 1), Some(3));
    assert_eq!(move_message(&d, Some(1), -5), Some(0));
    assert_eq!(move_message(&d, Some(0), 1), Some(1));
    assert_eq!(move_message(&[], None, 1), None);
}

#[test]
fn the_editor_cursor() {
    let mut e = Editor::new(0, Part::Curve(0), 0, "ab\nçdef\ng".into());
    assert_eq!(e.cursor, e.text.len());
    e.up(); // from the end of "g" (column 1) to column 1 of "çdef"
    e.insert('X');
    assert_eq!(e.text, "ab\nçXdef\ng");
    e.up();
    e.insert('Y'); // column 2 of "ab" = its end
    assert_eq!(e.text, "abY\nçXdef\ng");
    e.up();
    assert_eq!(e.cursor, 0, "up from the first line goes to its start");
    e.end();
    e.left();
    e.backspace(); // deletes the 'b' before 'Y'
    assert_eq!(e.text, "aY\nçXdef\ng");
    e.down();
    e.home();
    e.delete(); // the 'ç' (two bytes)
    assert_eq!(e.text, "aY\nXdef\ng");
    e.right();
    e.right();
    e.down(); // column 2 is past "g": its end
    e.insert('!');
    assert_eq!(e.text, "aY\nXdef\ng!");
    e.down();
    assert_eq!(e.cursor, e.text.len());
    e.home();
    e.backspace(); // joins the lines
    assert_eq!(e.text, "aY\nXdefg!");
    e.clear();
    e.backspace();
    e.delete();
    e.left();
    assert_eq!((e.text.as_str(), e.cursor), ("", 0));
    e.set_text("new".into());
    assert_eq!(e.cursor, 3);
}

/// Saved operations are named by their content: two edits saved in different sessions load
/// together (`--experiment A --experiment B`), and the short label fits 8 characters.
#[test]
fn saved_operations_have_unique_names() {
    let ops: Vec<String> = ["Forget it.", "Start over."]
        .iter()
        .map(|m| {
            let id = op_id("kept", "model", m, "Answer again.");
            let (name, short) = op_names(&id);
            assert!(short.chars().count() <= 8 && name.starts_with("whatif_"), "{name} {short}");
            experiment_toml(&SavedOp {
                name,
                short,
                label: format!("R0 what-if {id}"),
                history: "kept",
                assistant: "model",
                message: m,
                prefix: "Answer again.",
                description: "d".into(),
            })
        })
        .collect();
    assert_ne!(ops[0], ops[1]);
    assert_eq!(op_id("kept", "model", "Forget it.", "Answer again."), op_id("kept", "model", "Forget it.", "Answer again."));
    let files = [ExperimentSource::new("a/whatif_a.toml", ops[0].clone()), ExperimentSource::new("b/whatif_b.toml", ops[1].clone())];
    crate::dialogue::conditions::Registry::with_experiments(&files).unwrap();
}

#[test]
fn an_edited_conversation_file_is_what_score_reads() {
    let d = dialogue();
    let e = with_text(&d, 0, "Be careful.", "Question:");
    let text = conversation_jsonl(&d, &e, &['A', 'B']);
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["letters"], "A,B");
    let back: Vec<ChatMessage> = serde_json::from_value(lines[1]["messages"].clone()).unwrap();
    assert_eq!(back, e);
    let orig: Vec<ChatMessage> = serde_json::from_value(lines[0]["messages"].clone()).unwrap();
    assert_eq!(orig, d);
}

/// A saved ramp-step edit is the paper's ramp with that step rewritten: parsed as an
/// experiment file, its steps build exactly the paper's ramp dialogues for an item (the
/// edited step with the new message), so its batch run measures the edit on every item.
#[test]
fn a_saved_ramp_step_is_the_papers_ramp_with_the_edit() {
    use crate::dialogue::{conditions, recipe, Builder, Control, DialogueItem, CURVE};
    let prompts = crate::prompts::PromptSet::bundled();
    let b = Builder::new(&prompts);
    let item = crate::data::Item {
        id: "x".into(),
        dataset: "sample".into(),
        question: "Which is a prime?".into(),
        options: vec!["4".into(), "7".into(), "9".into()],
        correct: 1,
        category: String::new(),
        meta: Default::default(),
    };
    let d = DialogueItem { item, wrong: 2 };
    let letters = ['B', 'C', 'C', 'B'];
    let message = "Everyone I asked picked {wrong_option_text}.";
    let saved = SavedRamp { id: "1a2b3c4", step: 1, message, prefix: "Answer again.", description: "d".into() };
    let text = ramp_experiment_toml(&saved);
    let parsed = recipe::parse_file(&text, "whatif_1a2b3c4.toml", recipe::FileKind::Experiment).unwrap();
    let r = &parsed.ramps[0];
    assert_eq!((r.name.as_str(), r.short.as_str(), r.steps.len()), ("whatif_1a2b3c4", "V1A2B3", 4));
    assert_eq!(parsed.defs[0].name, "whatif_1a2b3c4_r0");
    for k in 0..4 {
        let ours = conditions::custom_ramp_messages(&b, &d, r, k, &letters);
        let mut paper = b.curve_messages(&d, Control::PressureWrong, CURVE[k + 1], &letters);
        if k >= 1 {
            // The medium-pressure turn (user 2) carries the edit from step 1 on.
            let orig = b.ramp_user(&d, Control::PressureWrong, 1);
            let edited = orig.replace(&crate::prompts::fill(&prompts.medium_pressure, &[("advocated_option_text", "9")]), "Everyone I asked picked 9.");
            let edited = edited.replace(&prompts.pressure_prefix, "Answer again.");
            let i = paper.iter().position(|m| m.content == orig).unwrap();
            paper[i].content = edited;
        }
        assert_eq!(ours, paper, "step {k}");
    }
    conditions::Registry::with_experiments(&[ExperimentSource::new("whatif_1a2b3c4.toml", text)]).unwrap();
}
