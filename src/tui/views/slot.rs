//! Answer slot: the most probable next tokens over the whole vocabulary at the current step, each
//! letter's variant tokens with their raw probabilities, the letter mass, and the tail of the
//! rendered prompt with its token count.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{bar, block, message, option_of, pad, pending_text, trunc};
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::keymap::key_for;
use crate::tui::parts::part_label;

/// A token's text with whitespace made visible.
pub(crate) fn show_token(t: &str) -> String {
    let mut s = String::new();
    for c in t.chars() {
        match c {
            ' ' => s.push('␣'),
            '\n' => s.push('↵'),
            '\t' => s.push('⇥'),
            c if c.is_control() => s.push('�'),
            c => s.push(c),
        }
    }
    if s.is_empty() {
        "∅".into()
    } else {
        s
    }
}

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let Some((item, e)) = app.current_entry() else {
        message(f, area, app, "Answer slot", "No item.");
        return;
    };
    let part = app.current_part();
    let Some(s) = app.score(item, part) else {
        message(
            f,
            area,
            app,
            &format!("Answer slot · {} · {}", e.item.id, part_label(app.reg(), part)),
            &pending_text(app, item, part),
        );
        return;
    };
    let top_h = (s.top_tokens.len().max(s.letters.len()) as u16 + 4).min(area.height.saturating_sub(6)).max(6);
    // With the lens on, it takes the place of the rendered prompt and most of the height.
    let top_h = if app.lens_on() { top_h.min(area.height / 3).max(6) } else { top_h };
    let [top, bottom] = Layout::vertical([Constraint::Length(top_h), Constraint::Min(3)]).areas(area);
    let [tl, tr] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);

    // Top tokens.
    let letter_ids: Vec<(i32, char)> = s
        .variants
        .iter()
        .flat_map(|v| v.ids.iter().map(move |&id| (id, v.letter)))
        .collect();
    let b = block(app, format!("Top tokens · {} · {}", e.item.id, part_label(app.reg(), part)));
    let inner = b.inner(tl);
    f.render_widget(b, tl);
    let w = inner.width as usize;
    let tok_w = 10usize.min(w / 3);
    let bar_w = w.saturating_sub(3 + tok_w + 8 + 9 + 3).max(3);
    let mut lines = vec![Line::from(Span::styled(
        format!("{:>2} {} {:>7} {:>8}", "#", pad("token", tok_w), "id", "p"),
        th.header(),
    ))];
    for (i, t) in s.top_tokens.iter().enumerate() {
        let letter = letter_ids.iter().find(|(id, _)| *id == t.id).map(|x| x.1);
        let st = match letter.map(option_of) {
            Some(i) if i == Some(e.wrong) => th.wrong(),
            Some(i) if i == Some(e.item.correct) => th.correct(),
            Some(_) => th.bold(),
            None => th.plain(),
        };
        lines.push(Line::from(vec![
            Span::raw(format!("{:>2} ", i + 1)),
            Span::styled(pad(&show_token(&t.text), tok_w), st),
            Span::styled(format!(" {:>7}", t.id), th.dim()),
            Span::raw(format!(" {:>8.5}", t.prob)),
            Span::raw(" "),
            Span::styled(bar(t.prob, bar_w), st),
            Span::styled(if letter.is_some() { " L" } else { "" }, th.dim()),
        ]));
    }
    if s.top_tokens.is_empty() {
        lines.push(Line::from(Span::styled("(no top tokens stored)", th.dim())));
    }
    f.render_widget(Paragraph::new(lines), inner);

    // Letter variants.
    // A served score's letter tokens outside the server's top K have a bound, not a value.
    let bound = s.bound.as_ref();
    let title = match bound {
        Some(b) => format!("Letter variants (served top-{}: {} unseen, each ≤ {:.1e})", b.k, b.unseen.len(), b.bound),
        None => "Letter variants (raw full-vocabulary p)".to_string(),
    };
    let b = block(app, title);
    let inner = b.inner(tr);
    f.render_widget(b, tr);
    let mut lines = vec![
        Line::from(vec![
            Span::styled("letter mass ", th.dim()),
            Span::styled(format!("{:.5}", s.letter_mass), th.bold()),
        ]),
        Line::from(Span::styled("(next-token mass on letter tokens)", th.dim())),
        Line::from(""),
    ];
    if s.variants.is_empty() {
        lines.push(Line::from(Span::styled("(variants: not in stored rows)", th.dim())));
        for (i, l) in s.letters.iter().enumerate() {
            let p = s.prob(i).map_or_else(|| "·".to_string(), |p| format!("{p:.4}"));
            lines.push(Line::from(format!("{l}  option p {p}")));
        }
    } else {
        lines.push(Line::from(Span::styled(
            format!("{:<3} {:<6} {:>7} {:>9} {:>8}", "L", "token", "id", "raw p", "option p"),
            th.header(),
        )));
    }
    for (i, v) in s.variants.iter().enumerate() {
        let st = if i == e.wrong {
            th.wrong()
        } else if i == e.item.correct {
            th.correct()
        } else {
            th.bold()
        };
        for (j, id) in v.ids.iter().enumerate() {
            let txt = v.texts.get(j).map(|t| show_token(t)).unwrap_or_default();
            let p = s.variant_probs.get(i).and_then(|x| x.get(j)).copied().unwrap_or(f64::NAN);
            let unseen = bound.filter(|b| v.texts.get(j).is_some_and(|t| b.unseen.contains(t)));
            let raw = match unseen {
                Some(b) => format!(" {:>9}", format!("≤{:.1e}", b.bound)),
                None => format!(" {p:>9.5}"),
            };
            let (lab, op) = if j == 0 {
                let mut op = format!("{:>8.4}", s.probs.get(i).copied().unwrap_or(f64::NAN));
                if let Some(b) = bound {
                    if let (Some(lo), Some(hi)) = (b.probs_lo.get(i), b.probs_hi.get(i)) {
                        op.push_str(&format!(" [{lo:.4}, {hi:.4}]"));
                    }
                }
                (v.letter.to_string(), op)
            } else {
                (String::new(), String::new())
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{lab:<3} "), st),
                Span::raw(pad(&txt, 6)),
                Span::styled(format!(" {id:>7}"), th.dim()),
                Span::raw(raw),
                Span::styled(format!(" {op}"), st),
            ]));
        }
    }
    f.render_widget(Paragraph::new(lines), inner);

    if app.lens_on() {
        super::lens::render(f, bottom, app, e);
        return;
    }
    // Rendered prompt tail.
    let title = format!(
        "Rendered prompt (tail) · {} tokens · {} evaluated, {} reused",
        s.prompt_tokens, s.tokens_evaluated, s.tokens_reused
    );
    let b = block(app, trunc(&title, bottom.width.saturating_sub(4) as usize));
    let inner = b.inner(bottom);
    f.render_widget(b, bottom);
    if s.rendered_prompt.is_empty() {
        f.render_widget(
            Paragraph::new(format!(
                " the rendered prompt is not stored in a run's item rows (load the model with {})",
                key_for(Action::OpenModels)
            ))
            .style(th.dim()),
            inner,
        );
        return;
    }
    let w = inner.width.max(1) as usize;
    let mut rows: Vec<Line> = Vec::new();
    for raw in s.rendered_prompt.split('\n') {
        let chars: Vec<char> = raw.chars().collect();
        if chars.is_empty() {
            rows.push(Line::from(Span::styled("↵", th.dim())));
            continue;
        }
        for chunk in chars.chunks(w) {
            let text: String = chunk.iter().collect();
            rows.push(special_spans(&text, app));
        }
    }
    let h = inner.height as usize;
    let tail: Vec<Line> = rows.into_iter().rev().take(h).collect::<Vec<_>>().into_iter().rev().collect();
    f.render_widget(Paragraph::new(tail), inner);
}

/// Dims special tokens such as `<|im_start|>` inside a prompt line.
fn special_spans(text: &str, app: &App) -> Line<'static> {
    let th = app.theme();
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        let Some(len) = rest[start..].find('>') else { break };
        let tok = &rest[start..start + len + 1];
        let special = tok.len() > 2 && (tok.starts_with("<|") || tok.starts_with("<start_of") || tok.starts_with("<end_of") || tok == "<bos>" || tok == "<s>" || tok == "</s>");
        if !special {
            spans.push(Span::raw(rest[..start + 1].to_string()));
            rest = &rest[start + 1..];
            continue;
        }
        if start > 0 {
            spans.push(Span::raw(rest[..start].to_string()));
        }
        spans.push(Span::styled(tok.to_string(), th.accent()));
        rest = &rest[start + len + 1..];
    }
    if !rest.is_empty() {
        spans.push(Span::raw(rest.to_string()));
    }
    Line::from(spans)
}
