//! The overlays over the views: which one is open, the help's scroll and the model switcher's
//! cursor. The what-if editor and its edits list open and close through the what-if
//! component's events, which the app routes here.

use super::action::Action;
use super::engines::ModelChoice;
use super::screen::Overlay;

pub(crate) struct Popups {
    overlay: Overlay,
    help_scroll: usize,
}

impl Default for Popups {
    fn default() -> Self {
        Popups { overlay: Overlay::None, help_scroll: 0 }
    }
}

impl Popups {
    /// Carries out an overlay action; `choices` are the models the switcher offers, `shown` the
    /// shown model (the switcher opens on it).
    pub(crate) fn update(&mut self, action: Action, choices: &[ModelChoice], shown: &str) {
        match action {
            Action::OpenHelp => {
                self.overlay = Overlay::Help;
                self.help_scroll = 0;
            }
            Action::ScrollHelp(d) => self.help_scroll = self.help_scroll.saturating_add_signed(d),
            Action::OpenModels => {
                let cur = choices.iter().position(|m| m.key == shown).unwrap_or(0);
                self.overlay = Overlay::Models { sel: cur };
            }
            Action::CloseOverlay => self.overlay = Overlay::None,
            Action::MoveModelCursor(d) => {
                if let Overlay::Models { sel } = self.overlay {
                    let last = choices.len().saturating_sub(1);
                    self.overlay = Overlay::Models { sel: sel.saturating_add_signed(d).min(last) };
                }
            }
            _ => {}
        }
    }

    /// Opens `o` (`Overlay::None` closes the open one).
    pub(crate) fn open(&mut self, o: Overlay) {
        self.overlay = o;
    }

    /// The model under the switcher's cursor, while it is open.
    pub(crate) fn selected_model(&self, mut choices: Vec<ModelChoice>) -> Option<ModelChoice> {
        let Overlay::Models { sel } = self.overlay else { return None };
        (sel < choices.len()).then(|| choices.swap_remove(sel))
    }

    pub(crate) fn overlay(&self) -> Overlay {
        self.overlay
    }
    pub(crate) fn help_scroll(&self) -> usize {
        self.help_scroll
    }
}
