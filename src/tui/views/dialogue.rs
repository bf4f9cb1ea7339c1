//! Dialogue: the conversation of the current step, turn by turn (pressure / recovery messages
//! set apart from the repeated question block), and the step's option distribution. With
//! compared models: each assistant turn of the ramp also shows the letter each compared model
//! chose at that step of its own ramp (their conversations differ from the first letter on),
//! the answer slot shows each model's prediction, and the ramp strip has a row per model.

use crate::dialogue::conditions::ids;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{bar, block, fmt_p, message, option_of, pad, pending_text, trunc, width, wrap};
use crate::data::{Item, Selected};
use crate::protocol::letter;
use crate::tui::app::App;
use crate::tui::action::Action;
use crate::tui::keymap::{action_hints, hints, key_for, Where};
use crate::tui::parts::gap_verdict;
use crate::tui::generations::GenState;
use crate::tui::engine_slot::EngineState;
use crate::tui::whatif::{EditScore, WhatIfShown};
use crate::dialogue::conditions::Registry;
use crate::dialogue::CURVE;
use crate::tui::parts::{part_label, split_user_turn, Part};

/// Labels of the ramp's user turns (weak pressure … strong reset).
fn ramp_turns(n: usize) -> Vec<String> {
    CURVE.iter().filter(|p| p.ramp_step().is_some()).take(n).map(|p| p.label().to_string()).collect()
}

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let Some((item, e)) = app.current_entry() else {
        let text = format!("No item (the filter hides every item: {} in the Items view clears it).", key_for(Action::ClearFilter));
        message(f, area, app, "Dialogue", &text);
        return;
    };
    let side = area.width >= 72;
    let (left, right) = if side {
        let rw = (area.width as u32 * 42 / 100).clamp(36, 64) as u16;
        let [l, r] = Layout::horizontal([Constraint::Min(30), Constraint::Length(rw)]).areas(area);
        (l, r)
    } else {
        let [l, r] = Layout::vertical([Constraint::Min(6), Constraint::Length(14)]).areas(area);
        (l, r)
    };
    transcript(f, left, app, item, e);
    distribution(f, right, app, item, e);
}

fn turn_labels(reg: &Registry, part: Part, n_user: usize) -> Vec<String> {
    match part {
        Part::Curve(0) | Part::Curve(6) => vec!["clean question".into(); n_user],
        Part::Curve(_) => ramp_turns(n_user),
        Part::Step(k) => match reg.find(k).map(|c| c.kind) {
            Some(crate::dialogue::conditions::Kind::RampStep(r, _)) => custom_ramp_turns(r, n_user),
            _ => vec![k.to_string(); n_user],
        },
        Part::Op(k) => {
            let last = reg.recovery_op(k).map(|o| format!("{} {}", o.short, o.name)).unwrap_or_else(|| k.to_string());
            let custom = reg
                .find(k)
                .and_then(|c| c.recipe())
                .and_then(|r| r.ramp.as_deref().filter(|_| r.keeps_history() && r.history == crate::dialogue::recipe::History::Kept));
            let mut v: Vec<String> = if let Some(r) = custom {
                custom_ramp_turns(r, n_user.saturating_sub(1))
            } else if n_user == 5 {
                ramp_turns(4)
            } else {
                vec!["replacement context".into(); n_user.saturating_sub(1)]
            };
            v.push(last);
            v
        }
    }
}

/// Turn labels of a custom ramp's steps (`<ramp> pressure · <step>`).
fn custom_ramp_turns(r: &crate::dialogue::recipe::RampDef, n: usize) -> Vec<String> {
    (0..n).map(|k| r.steps.get(k).map_or_else(|| r.name.clone(), |s| format!("{} pressure · {}", r.name, s.name))).collect()
}

fn message_style(app: &App, label: &str) -> Style {
    if label.contains("pressure") {
        app.theme().pressure()
    } else {
        app.theme().recovery()
    }
}

fn letter_mark(app: &App, item: &Item, wrong: usize, l: char) -> Span<'static> {
    let i = option_of(l);
    if i == Some(wrong) {
        Span::styled(" ✗ advocated wrong", app.theme().wrong())
    } else if i == Some(item.correct) {
        Span::styled(" ✓ correct", app.theme().correct())
    } else {
        Span::styled(" (other)", app.theme().dim())
    }
}

/// A letter with its mark (✗ advocated wrong, ✓ correct), `·` when unknown.
fn letter_span(app: &App, item: &Item, wrong: usize, l: Option<char>) -> Span<'static> {
    let th = app.theme();
    match l {
        None => Span::styled("·", th.dim()),
        Some(l) if option_of(l) == Some(wrong) => Span::styled(format!("{l}✗"), th.wrong()),
        Some(l) if option_of(l) == Some(item.correct) => Span::styled(format!("{l}✓"), th.correct()),
        Some(l) => Span::raw(l.to_string()),
    }
}

fn transcript(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected) {
    let th = app.theme();
    let part = app.current_part();
    // A what-if edit shows in place: its message in the final turn.
    let edited = app.whatif_messages(item, part);
    let wi = app.whatif(item, part);
    // The option the shown dialogue advocates: a what-if version's (w), else the item's.
    let wrong = wi.as_ref().map_or(e.wrong, |w| w.wrong);
    let title = match (&edited, &wi) {
        (Some(_), Some(w)) => format!("Dialogue · {} · {} · what-if {} ({}: back)", e.item.id, part_label(app.reg(), part), w.version, key_for(Action::UndoEdit)),
        _ => format!("Dialogue · {} · {}", e.item.id, part_label(app.reg(), part)),
    };
    let b = block(app, title);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let w = inner.width.saturating_sub(1) as usize;
    let Some(msgs) = edited.or_else(|| app.messages(item, part)) else {
        let t = pending_text(app, item, part);
        f.render_widget(Paragraph::new(format!(" {t}")).style(th.dim()), inner);
        return;
    };
    let n_user = msgs.iter().filter(|m| m.role == "user").count();
    let labels = turn_labels(app.reg(), part, n_user);
    let header = &app.prompts().question_header;
    let mut lines: Vec<Line> = Vec::new();
    let indent = |s: &str, st: Style, bar_st: Option<Style>, out: &mut Vec<Line>| {
        for l in wrap(s, w.saturating_sub(3)) {
            match bar_st {
                Some(bs) => out.push(Line::from(vec![Span::raw(" "), Span::styled("▌ ", bs), Span::styled(l, st)])),
                None => out.push(Line::from(vec![Span::raw("   "), Span::styled(l, st)])),
            }
        }
    };
    let compared = app.compared();
    // The shown model's ramp letters: an assistant turn that is one of them is a ramp turn.
    let own = app.ramp_letters_of(app.model_key(), item);
    let mut u = 0;
    let mut a = 0;
    // The selected message (J/K): its role stands out, and the transcript scrolls to it.
    let selected = app.message_cursor();
    let mut selected_line = None;
    let role = |mi: usize, text: String| -> Vec<Span<'static>> {
        if selected == Some(mi) {
            vec![Span::styled(text, th.selected()), Span::styled(format!(" ◂ {} edits", key_for(Action::StartEdit)), th.accent())]
        } else {
            vec![Span::styled(text, th.role())]
        }
    };
    for (mi, m) in msgs.iter().enumerate() {
        if selected == Some(mi) {
            selected_line = Some(lines.len());
        }
        match m.role.as_str() {
            "system" => {
                lines.push(Line::from(role(mi, "system".into())));
                indent(&m.content, th.dim(), None, &mut lines);
            }
            "user" => {
                let label = labels.get(u).cloned().unwrap_or_default();
                u += 1;
                let mut head = role(mi, format!("user {u}"));
                head.insert(1, Span::styled(format!(" · {label}"), th.dim()));
                lines.push(Line::from(head));
                let st = message_style(app, &label);
                match split_user_turn(&m.content, header) {
                    Some((msg, prefix, blk)) => {
                        if !msg.is_empty() {
                            indent(msg, st, Some(st), &mut lines);
                        }
                        if !prefix.is_empty() {
                            indent(prefix, th.plain(), None, &mut lines);
                        }
                        if app.cursor().expand_blocks() {
                            indent(blk, th.dim(), None, &mut lines);
                        } else {
                            lines.push(Line::from(vec![
                                Span::raw("   "),
                                Span::styled(format!("[question block: {} options]", e.item.options.len()), th.dim()),
                            ]));
                        }
                    }
                    None => indent(&m.content, st, Some(st), &mut lines),
                }
            }
            _ => {
                let l = m.content.trim().chars().next().unwrap_or('?');
                let mut spans = role(mi, "assistant".into());
                let marker = spans.split_off(1);
                spans.extend([Span::raw("  "), Span::styled(m.content.trim().to_string(), th.bold())]);
                if m.content.trim().chars().count() == 1 && part != Part::Op(ids::NEUTRAL_SUMMARY) {
                    spans.push(letter_mark(app, &e.item, wrong, l));
                }
                let ramp_turn = m.content.trim().chars().count() == 1 && own.get(a).copied().flatten() == Some(l);
                // The compared models' letters belong to the original dialogue, not to an edit.
                if ramp_turn && !compared.is_empty() && wi.is_none() {
                    spans.push(Span::styled("  │", th.dim()));
                    for (i, cm) in compared.iter().enumerate() {
                        let theirs = app.ramp_letters_of(cm, item).get(a).copied().flatten();
                        spans.push(Span::styled(format!(" {}: ", trunc(cm, 12)), th.model(i + 1)));
                        spans.push(letter_span(app, &e.item, e.wrong, theirs));
                    }
                }
                a += 1;
                spans.extend(marker);
                lines.push(Line::from(spans));
            }
        }
    }
    // The answer slot.
    let mut slot = vec![Span::styled("answer slot", th.role()), Span::raw(" ")];
    // With a what-if edit: the edited dialogue's answer slot.
    let score = match wi.as_ref().map(|w| w.score) {
        Some(Some(EditScore::Done(s))) => Some(&**s),
        Some(_) => {
            slot.push(Span::styled(format!("▶ _  {}", edit_waiting(app)), th.warn()));
            None
        }
        None => app.score(item, part),
    };
    match score {
        _ if slot.len() > 2 => {}
        Some(s) => {
            let l = s.pred_letter();
            slot.push(Span::styled(format!("▶ {l}"), th.bold()));
            slot.push(letter_mark(app, &e.item, wrong, l));
            slot.push(Span::styled(format!("  p={}", fmt_p(s.prob(s.pred))), th.dim()));
        }
        None => slot.push(Span::styled(format!("▶ _  {}", pending_text(app, item, part)), th.warn())),
    }
    lines.push(Line::from(slot));
    for (i, cm) in compared.iter().enumerate() {
        let mut l = vec![Span::styled(format!("  {} ", trunc(cm, 20)), th.model(i + 1)), Span::raw("▶ ")];
        let s = app.score_of(cm, item, part);
        l.push(letter_span(app, &e.item, e.wrong, s.map(|s| s.pred_letter())));
        if let Some(s) = s {
            l.push(Span::styled(format!("  p={}  p(w)={}", fmt_p(s.prob(s.pred)), fmt_p(s.prob(e.wrong))), th.dim()));
        }
        lines.push(Line::from(l));
    }

    let h = inner.height as usize;
    let max_off = lines.len().saturating_sub(h);
    let mut off = max_off.saturating_sub(app.cursor().dialogue_scroll());
    if let Some(sl) = selected_line {
        if sl < off {
            off = sl;
        } else if sl >= off + h {
            off = (sl + 1).saturating_sub(h).min(max_off);
        }
    }
    let visible: Vec<Line> = lines.into_iter().skip(off).take(h).collect();
    f.render_widget(Paragraph::new(visible), inner);
}

fn distribution(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected) {
    let th = app.theme();
    let part = app.current_part();
    let title = format!("step {}/{} · {}", app.cursor().step() + 1, app.cursor().steps().len(), part_label(app.reg(), part));
    let b = block(app, trunc(&title, area.width.saturating_sub(6) as usize));
    let inner = b.inner(area);
    f.render_widget(b, area);
    let w = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();

    // Ramp strip: the model's letter at each step, the cursor's step reversed; a row per model
    // when models are compared.
    let models = app.engines().shown_models();
    let label_w = if models.len() > 1 { models.iter().map(|m| width(m)).max().unwrap_or(4).clamp(4, 10) + 1 } else { 5 };
    for (i, m) in models.iter().enumerate() {
        let (label, label_st) = if models.len() > 1 { (pad(&trunc(m, label_w - 1), label_w), th.model(i)) } else { ("ramp ".to_string(), th.dim()) };
        let mut strip = vec![Span::styled(label, label_st)];
        for k in 0..7 {
            let s = app.score_of(m, item, Part::Curve(k));
            let txt = s.map(|s| s.pred_letter().to_string()).unwrap_or_else(|| "·".into());
            let mut st = match s {
                Some(s) if s.pred == e.wrong => th.wrong(),
                Some(s) if s.pred == e.item.correct => th.correct(),
                _ => th.plain(),
            };
            if part == Part::Curve(k) {
                st = st.patch(th.selected());
            }
            strip.push(Span::styled(txt, st));
            if k < 6 {
                strip.push(Span::styled(if k == 5 { " │ " } else { " → " }, th.dim()));
            }
        }
        lines.push(Line::from(strip));
    }
    let names: Vec<String> = CURVE.iter().map(|p| p.short().chars().take(3).collect()).collect();
    lines.push(Line::from(Span::styled(format!("{}{}", " ".repeat(label_w), names.join(" ")), th.dim())));
    lines.push(Line::from(""));

    match app.score(item, part) {
        None => {
            lines.push(Line::from(Span::styled(format!(" {}", pending_text(app, item, part)), th.warn())));
            for (i, o) in e.item.options.iter().enumerate() {
                let mark = if i == e.item.correct {
                    "✓"
                } else if i == e.wrong {
                    "✗"
                } else {
                    " "
                };
                lines.push(Line::from(format!("  {} {} {mark}", letter(i), trunc(o, w.saturating_sub(8)))));
            }
        }
        Some(s) => {
            let longest = e.item.options.iter().map(|o| width(o)).max().unwrap_or(0);
            // ▶A text bar 0.000 ✓
            let fixed = 2 + 1 + 1 + 1 + 6 + 2;
            let room = w.saturating_sub(fixed);
            let bar_target = (room * 40 / 100).clamp(8, 24);
            let text_w = longest.min(room.saturating_sub(bar_target)).max(4);
            let bar_w = room.saturating_sub(text_w).max(1);
            for (i, &p) in s.probs.iter().enumerate() {
                let is_pred = i == s.pred;
                let opt = e.item.options.get(i).map(String::as_str).unwrap_or("");
                let bar_st = if i == e.wrong {
                    th.wrong()
                } else if i == e.item.correct {
                    th.correct()
                } else {
                    th.other_option()
                };
                let (mark, mark_st) = if i == e.item.correct {
                    ("✓", th.correct())
                } else if i == e.wrong {
                    ("✗", th.wrong())
                } else {
                    (" ", th.plain())
                };
                let letter_st = if is_pred { th.bold() } else { th.plain() };
                lines.push(Line::from(vec![
                    Span::styled(if is_pred { "▶" } else { " " }, th.bold()),
                    Span::styled(s.letters.get(i).map(|c| c.to_string()).unwrap_or_default(), letter_st),
                    Span::raw(" "),
                    Span::styled(pad(opt, text_w), if is_pred { th.bold() } else { th.plain() }),
                    Span::raw(" "),
                    Span::styled(bar(p, bar_w), bar_st),
                    Span::styled(format!(" {p:.3}"), letter_st),
                    Span::raw(" "),
                    Span::styled(mark, mark_st),
                ]));
            }
            lines.push(Line::from(""));
            let kv = |k: &str, v: String| vec![Span::styled(format!("{k} "), th.dim()), Span::styled(v, th.bold())];
            let mut l1 = kv("entropy", format!("{:.3} nats", s.entropy));
            l1.push(Span::raw("  "));
            l1.extend(kv("max p", fmt_p(Some(s.max_prob))));
            lines.push(Line::from(l1));
            let mut l2 = kv("margin", format!("{:.3}", s.margin_top2));
            l2.push(Span::raw("  "));
            l2.extend(kv("letter mass", fmt_p(Some(s.letter_mass))));
            lines.push(Line::from(l2));
            let w_p = s.probs.get(e.wrong).copied();
            let clean_w = app.score(item, Part::Curve(0)).and_then(|c| c.probs.get(e.wrong).copied());
            let mut l3 = kv("p(w)", fmt_p(w_p));
            if let (Some(x), Some(c)) = (w_p, clean_w) {
                l3.push(Span::styled(format!(" ({:+.3} vs clean)", x - c), th.gap(gap_verdict(Some(x - c)))));
            }
            lines.push(Line::from(l3));
            lines.push(Line::from(kv("prompt", format!("{} tokens", s.prompt_tokens))));
            if let Some(g) = app.generation(item, part) {
                generation_lines(app, g, w, &mut lines);
            }
            if let Some(wi) = app.whatif(item, part) {
                whatif_lines(app, item, e, s, wi, w, &mut lines);
            }
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(vec![
        Span::styled("▶", th.bold()),
        Span::styled(" predicted ", th.dim()),
        Span::styled("✓", th.correct()),
        Span::styled(" correct ", th.dim()),
        Span::styled("✗", th.wrong()),
        Span::styled(" adv. wrong", th.dim()),
    ]));
    lines.push(Line::from(Span::styled(hints(Where::Steps, "  "), th.dim())));
    lines.push(Line::from(Span::styled(hints(Where::Dialogue, "  "), th.dim())));
    // The question and the full option texts, if there is room.
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled("Question", th.header())));
    for l in wrap(&e.item.question, w) {
        lines.push(Line::from(l));
    }
    // The option the shown dialogue advocates (a what-if version's, else the item's).
    let advocated = app.whatif(item, part).map_or(e.wrong, |wi| wi.wrong);
    for (i, o) in e.item.options.iter().enumerate() {
        let (mark, st) = if i == e.item.correct {
            ("✓", th.correct())
        } else if i == advocated {
            ("✗", th.wrong())
        } else {
            (" ", th.plain())
        };
        for (j, l) in wrap(o, w.saturating_sub(4)).into_iter().enumerate() {
            let head = if j == 0 { format!("{}{} ", letter(i), mark) } else { "   ".into() };
            lines.push(Line::from(vec![Span::styled(head, st), Span::raw(" "), Span::raw(l)]));
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// What a what-if edit waits for while it has no score: the engine, its load, or a model.
fn edit_waiting(app: &App) -> String {
    match app.engine_state() {
        EngineState::Ready(_) => "scoring the edit…".into(),
        EngineState::Loading { .. } => "scoring the edit once the model has loaded…".into(),
        _ => format!("no model to score the edit ({} loads one)", key_for(Action::OpenModels)),
    }
}

/// What the model would say (`a`): its greedy continuation at the answer slot.
fn generation_lines(app: &App, g: &GenState, w: usize, lines: &mut Vec<Line<'static>>) {
    let th = app.theme();
    lines.push(Line::from(""));
    match g {
        GenState::Running => lines.push(Line::from(Span::styled(format!("would say: generating… ({} stops)", key_for(Action::Generate)), th.warn()))),
        GenState::Failed(e) => lines.push(Line::from(Span::styled(trunc(&format!("would say: failed: {e}"), w), th.error()))),
        GenState::Done(g) => {
            let end = if g.finished { ", end of turn" } else { "" };
            let n = g.tokens.len();
            let tokens = if n == 1 { "1 token".to_string() } else { format!("{n} tokens") };
            lines.push(Line::from(Span::styled(format!("would say (greedy, {tokens}{end}):"), th.dim())));
            let text = g.text.replace('\n', "⏎");
            for l in wrap(&format!("“{}”", text.trim_end()), w.saturating_sub(1)).into_iter().take(4) {
                lines.push(Line::from(Span::styled(format!(" {l}"), th.bold())));
            }
        }
    }
}

/// The what-if edit beside the original: both option distributions and both gaps vs clean,
/// p(w) and the gap measured on the option the version advocates.
fn whatif_lines(app: &App, item: usize, e: &Selected, orig: &crate::protocol::SlotScore, wi: WhatIfShown, w: usize, lines: &mut Vec<Line<'static>>) {
    let th = app.theme();
    let WhatIfShown { what, version, score, saved, wrong } = wi;
    lines.push(Line::from(""));
    let keys = action_hints(&[(Action::UndoEdit, "undo"), (Action::SaveEdit, "save"), (Action::OpenEdits, "list")], " · ");
    lines.push(Line::from(Span::styled(trunc(&format!("what-if {version} · {keys}"), w), th.accent())));
    if wrong != e.wrong {
        let (now, was) = (letter(wrong), letter(e.wrong));
        lines.push(Line::from(Span::styled(trunc(&format!(" the user advocates {now}, not {was}"), w), th.wrong())));
    }
    if !what.is_empty() {
        let text = what.replace('\n', "⏎");
        for l in wrap(&format!("“{text}”"), w.saturating_sub(1)).into_iter().take(2) {
            lines.push(Line::from(Span::styled(format!(" {l}"), th.bold())));
        }
    }
    let clean_w = app.score(item, Part::Curve(0)).and_then(|c| c.probs.get(wrong).copied());
    let s = match score {
        Some(EditScore::Done(s)) => s,
        Some(EditScore::Failed(err)) => {
            lines.push(Line::from(Span::styled(trunc(&format!(" failed: {err}"), w), th.error())));
            return;
        }
        _ => {
            lines.push(Line::from(Span::styled(format!(" {}", edit_waiting(app)), th.warn())));
            return;
        }
    };
    lines.push(Line::from(Span::styled("    original  edited", th.dim())));
    for (i, (&po, &pe)) in orig.probs.iter().zip(&s.probs).enumerate() {
        let mark = if i == e.item.correct {
            Span::styled(" ✓", th.correct())
        } else if i == wrong {
            Span::styled(" ✗", th.wrong())
        } else {
            Span::raw("")
        };
        let (mo, me) = (if i == orig.pred { "▶" } else { " " }, if i == s.pred { "▶" } else { " " });
        lines.push(Line::from(vec![
            Span::raw(format!(" {} ", s.letters.get(i).copied().unwrap_or('?'))),
            Span::raw(format!(" {mo}{po:.3}  ")),
            Span::styled(format!(" {me}{pe:.3}"), th.bold()),
            mark,
        ]));
    }
    let (wo, we) = (orig.probs.get(wrong).copied(), s.probs.get(wrong).copied());
    let mut l = vec![Span::styled(format!("p({}) ", letter(wrong)), th.dim()), Span::raw(fmt_p(wo)), Span::styled(" → ", th.dim()), Span::styled(fmt_p(we), th.bold())];
    if let (Some(c), Some(x)) = (clean_w, we) {
        let g = x - c;
        let go = wo.map(|o| format!("{:+.3} → ", o - c)).unwrap_or_default();
        l.push(Span::styled(format!(" (gap {go}"), th.dim()));
        l.push(Span::styled(format!("{g:+.3}"), th.gap(gap_verdict(Some(g)))));
        l.push(Span::styled(")", th.dim()));
    }
    lines.push(Line::from(l));
    if let Some(cmd) = saved {
        let what = if cmd.starts_with("hyst-tui score") { "saved; score the original and the edit:" } else { "saved; over the dataset:" };
        lines.push(Line::from(Span::styled(what, th.dim())));
        for l in wrap(cmd, w.saturating_sub(1)) {
            lines.push(Line::from(Span::styled(format!(" {l}"), th.accent())));
        }
    }
}
