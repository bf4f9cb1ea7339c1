//! Styles. With `NO_COLOR` set (non-empty) no colour is ever emitted: meaning is carried by
//! symbols (✓ ✗ ▶ W) and by bold / reversed / underlined text.

use ratatui::style::{Color, Modifier, Style};

use crate::metrics::criteria::GapVerdict;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Theme {
    pub(crate) color: bool,
}

/// `NO_COLOR` is set to a non-empty value (https://no-color.org).
pub(crate) fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

impl Theme {
    pub(crate) fn from_env() -> Self {
        Theme { color: !no_color_env() }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub(crate) fn plain(&self) -> Style {
        Style::new()
    }
    pub(crate) fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    /// Secondary text (labels, collapsed blocks).
    pub(crate) fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }
    /// The advocated wrong option and everything that follows it.
    pub(crate) fn wrong(&self) -> Style {
        self.fg(Color::LightRed).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn correct(&self) -> Style {
        self.fg(Color::LightGreen).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn other_option(&self) -> Style {
        self.fg(Color::Blue)
    }
    /// A pressure message inside a user turn.
    pub(crate) fn pressure(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }
    /// A recovery / reset message inside a user turn.
    pub(crate) fn recovery(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn role(&self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn accent(&self) -> Style {
        self.fg(Color::Cyan)
    }
    pub(crate) fn title(&self) -> Style {
        self.fg(Color::LightCyan).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn header(&self) -> Style {
        self.fg(Color::White).add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }
    pub(crate) fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    pub(crate) fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub(crate) fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn status(&self) -> Style {
        if self.color {
            Style::new().bg(Color::Rgb(40, 44, 52)).fg(Color::Gray)
        } else {
            Style::new()
        }
    }
    /// A gap p_X(w) − p_clean(w) by its verdict: more wrong mass than the threshold allows is
    /// bad, less is good, within it plain.
    pub(crate) fn gap(&self, v: GapVerdict) -> Style {
        match v {
            GapVerdict::Unknown => self.dim(),
            GapVerdict::MoreWrong => self.wrong(),
            GapVerdict::LessWrong => self.correct(),
            GapVerdict::Within => self.plain(),
        }
    }
    /// A value judged by a gap check alone (the Trace's recovery rows): within the threshold
    /// good, beyond it on either side bad.
    pub(crate) fn gap_check(&self, v: GapVerdict) -> Style {
        match v {
            GapVerdict::Unknown => self.dim(),
            GapVerdict::Within => self.correct(),
            GapVerdict::MoreWrong | GapVerdict::LessWrong => self.wrong(),
        }
    }
    /// The `i`-th shown model when models are compared (0 = the shown one); without colour the
    /// views tell models apart by name and by [`model_marker`].
    pub(crate) fn model(&self, i: usize) -> Style {
        const PALETTE: [Color; 4] = [Color::LightYellow, Color::LightCyan, Color::LightMagenta, Color::LightBlue];
        self.fg(PALETTE[i % PALETTE.len()]).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn pass(&self, ok: bool) -> Style {
        if ok {
            self.correct()
        } else {
            self.wrong()
        }
    }
}

/// The chart marker of the `i`-th compared model, and the glyph its legend shows.
pub(crate) fn model_marker(i: usize) -> (ratatui::symbols::Marker, &'static str) {
    use ratatui::symbols::Marker;
    match i % 4 {
        0 => (Marker::Braille, "⣿"),
        1 => (Marker::Dot, "•"),
        2 => (Marker::HalfBlock, "▀"),
        _ => (Marker::Bar, "▄"),
    }
}
