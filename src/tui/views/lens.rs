//! The Slot view's letter-lens panel (`L`): the option distribution after every layer for the
//! step, its clean counterpart, and with the steering what-if (`T`) the steered step; under each,
//! from which layer on the advocated letter stays ahead of the correct one.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::block;
use crate::batch::lens::overtaken_from;
use crate::data::selection::Selected;
use crate::engine::inside::Inspection;
use crate::tui::app::App;
use crate::tui::lenses::LensState;

pub(crate) fn render(f: &mut Frame, area: Rect, app: &App, e: &Selected) {
    let th = app.theme();
    let contexts = app.lens_contexts().unwrap_or_default();
    let steering = app.steering();
    let mut title = "Letter lens · option p after each layer · step | clean".to_string();
    if let Some(s) = steering {
        title.push_str(&format!(" | step steered (α {} at layers {}-{})", s.alpha, s.layers.0, s.layers.1));
    }
    let b = block(app, title);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let states: Vec<Option<&LensState>> = contexts.iter().map(|(m, s)| app.lens(m, s.as_ref())).collect();
    let done: Vec<Option<&Inspection>> = states
        .iter()
        .map(|s| match s {
            Some(LensState::Done(i)) => Some(&**i),
            _ => None,
        })
        .collect();
    if let Some(msg) = states.iter().find_map(|s| match s {
        Some(LensState::Failed(m)) => Some(m.clone()),
        _ => None,
    }) {
        f.render_widget(Paragraph::new(format!(" the lens failed: {msg}")).style(th.wrong()), inner);
        return;
    }
    if done.iter().any(Option::is_none) {
        f.render_widget(Paragraph::new(" reading the residual stream out, layer by layer…").style(th.dim()), inner);
        return;
    }
    let done: Vec<&Inspection> = done.into_iter().flatten().collect();
    let Some(first) = done.first() else {
        f.render_widget(Paragraph::new(" this step's conversation waits for an earlier letter").style(th.dim()), inner);
        return;
    };
    let letters = &first.score.letters;
    let lens: Vec<&Vec<Vec<f64>>> = done.iter().filter_map(|i| i.lens.as_ref()).collect();
    let n_layer = lens.iter().map(|l| l.len()).min().unwrap_or(0);
    // The step's advocated option is its what-if's when `w` changed it; the clean context's is
    // the item's.
    let step_wrong = app.current().and_then(|i| app.whatif_advocated(i, app.current_part())).unwrap_or(e.wrong);
    let wrong = step_wrong;
    let correct = e.item.correct;
    let style_of = |k: usize| -> Style {
        if k == wrong {
            th.wrong()
        } else if k == correct {
            th.correct()
        } else {
            th.plain()
        }
    };
    // Header: the letters of each block.
    let mut head = vec![Span::styled("layer", th.header())];
    for _ in &lens {
        head.push(Span::raw(" │"));
        for (k, l) in letters.iter().enumerate() {
            head.push(Span::styled(format!(" {l:>4}"), style_of(k).patch(th.header())));
        }
    }
    let mut lines = vec![Line::from(head)];
    // Rows: every layer when they fit, else evenly spread ones and always the last.
    let room = (inner.height as usize).saturating_sub(2 + usize::from(done.len() > 2)).max(2);
    let shown: Vec<usize> = if n_layer <= room {
        (0..n_layer).collect()
    } else {
        let mut v: Vec<usize> = (0..room - 1).map(|i| i * (n_layer - 1) / (room - 1)).collect();
        v.push(n_layer - 1);
        v.dedup();
        v
    };
    for &layer in &shown {
        let mut spans = vec![Span::styled(format!("{layer:>5}"), th.dim())];
        for l in &lens {
            spans.push(Span::raw(" │"));
            let p = &l[layer];
            let lead = p.iter().enumerate().fold(0, |b, (j, v)| if *v > p[b] { j } else { b });
            for (k, v) in p.iter().enumerate() {
                let st = if k == lead { style_of(k).patch(th.bold()) } else { th.dim() };
                spans.push(Span::styled(format!(" {:>4}", format!("{v:.2}").trim_start_matches('0')), st));
            }
        }
        lines.push(Line::from(spans));
    }
    // Under each block: where the advocated letter takes the lead for good; the steered score.
    let what = ["step", "clean", "steered"];
    let mut summary = Vec::new();
    for (i, l) in lens.iter().enumerate() {
        let w = if i == 1 { e.wrong } else { step_wrong };
        let s = match overtaken_from(l, w, correct) {
            Some(d) => format!("{}: wrong ahead from layer {d}", what[i.min(2)]),
            None => format!("{}: wrong not ahead at the last layer", what[i.min(2)]),
        };
        summary.push(Span::styled(s, th.dim()));
        summary.push(Span::raw("   "));
    }
    let anchor = done.iter().filter_map(|i| i.lens_anchor).fold(0.0, f64::max);
    if anchor > 1e-6 {
        summary.push(Span::styled(format!("lens vs score at the last layer: {anchor:.1e} (not llama.cpp's head arithmetic)"), th.wrong()));
    }
    lines.push(Line::from(summary));
    if let Some(st) = done.get(2) {
        let mut spans = vec![Span::styled("steered score: ", th.bold())];
        for (k, (l, p)) in st.score.letters.iter().zip(&st.score.probs).enumerate() {
            spans.push(Span::styled(format!("{l} {p:.3}  "), style_of(k)));
        }
        spans.push(Span::styled(format!("(unsteered: {})", first.score.letters.iter().zip(&done[0].score.probs).map(|(l, p)| format!("{l} {p:.3}")).collect::<Vec<_>>().join("  ")), th.dim()));
        lines.push(Line::from(spans));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
