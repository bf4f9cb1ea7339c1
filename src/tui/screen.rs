//! What can be on screen: the six views, the overlays drawn over them, and the screens that
//! `hyst-tui snapshot` renders (a view, or an overlay on top of one).

/// The views, in key order 1…6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Items,
    Dialogue,
    Trace,
    Slot,
    Recovery,
    Tables,
}

impl View {
    pub(crate) const ALL: [View; 6] = [View::Items, View::Dialogue, View::Trace, View::Slot, View::Recovery, View::Tables];
    pub(crate) fn name(self) -> &'static str {
        match self {
            View::Items => "Items",
            View::Dialogue => "Dialogue",
            View::Trace => "Trace",
            View::Slot => "Slot",
            View::Recovery => "Recovery",
            View::Tables => "Tables",
        }
    }
    pub(crate) fn index(self) -> usize {
        View::ALL.iter().position(|v| *v == self).unwrap_or(0)
    }
    /// The next view in key order (Tab), wrapping around.
    pub(crate) fn next(self) -> View {
        View::ALL[(self.index() + 1) % View::ALL.len()]
    }
    /// The previous view in key order (Shift-Tab), wrapping around.
    pub(crate) fn previous(self) -> View {
        View::ALL[(self.index() + View::ALL.len() - 1) % View::ALL.len()]
    }
    /// The view's name on the command line (`snapshot --view`).
    pub(crate) fn key(self) -> &'static str {
        match self {
            View::Items => "items",
            View::Dialogue => "dialogue",
            View::Trace => "trace",
            View::Slot => "slot",
            View::Recovery => "recovery",
            View::Tables => "tables",
        }
    }
}

/// A popup over the current view; it takes the keys while it is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    /// The model switcher, its cursor on `models[sel]` of the models config.
    Models { sel: usize },
    /// The what-if editor of the Dialogue (`E`): every key is text.
    Editor,
    /// The list of the item's what-if edits (`V`), its cursor on the row of step `at` (rows
    /// come and go while `w` scores, the cursor stays on its step).
    Edits { at: crate::tui::parts::Part },
}

/// What `snapshot` can render: a view, or one of the overlays on top of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    View(View),
    Help,
    Models,
}

impl Screen {
    /// Every screen: the views in key order, then the help and the model switcher.
    pub fn all() -> Vec<Screen> {
        View::ALL.iter().map(|v| Screen::View(*v)).chain([Screen::Help, Screen::Models]).collect()
    }
    pub fn name(self) -> &'static str {
        match self {
            Screen::View(v) => v.key(),
            Screen::Help => "help",
            Screen::Models => "models",
        }
    }
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Screen::View(View::Slot) => &["answer-slot"],
            _ => &[],
        }
    }
}
