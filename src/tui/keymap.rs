//! Keys → [`Action`]s. The keymap only reads where the keys go (the view, an open overlay,
//! whether a filter is being typed) and changes nothing; unknown keys map to `None`.
//! The help overlay (`views::overlays::HELP`) and the README's key table describe this file.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::{Action, Motion};
use super::screen::{Overlay, View};

/// Where a key goes, in order: an open overlay, then the filter being typed, then the global
/// keys, then the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyContext {
    pub(crate) view: View,
    pub(crate) overlay: Overlay,
    pub(crate) filter_mode: bool,
}

/// The action of a key in a context, `None` for a key that does nothing there.
pub(crate) fn action_for(cx: KeyContext, k: KeyEvent) -> Option<Action> {
    if k.modifiers.contains(KeyModifiers::CONTROL) && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('q')) {
        return Some(Action::Quit);
    }
    match cx.overlay {
        Overlay::Help => return Some(help_key(k)),
        Overlay::Models { .. } => return models_key(k),
        Overlay::Editor => return editor_key(k),
        Overlay::None => {}
    }
    if cx.filter_mode {
        return filter_key(k);
    }
    if let Some(a) = global_key(k) {
        return Some(a);
    }
    match cx.view {
        View::Items => items_key(k),
        View::Tables => tables_key(k),
        v => step_key(v, k),
    }
}

/// The help: j/k scroll, any other key closes it.
fn help_key(k: KeyEvent) -> Action {
    match k.code {
        KeyCode::Down | KeyCode::Char('j') => Action::ScrollHelp(1),
        KeyCode::Up | KeyCode::Char('k') => Action::ScrollHelp(-1),
        _ => Action::CloseOverlay,
    }
}

fn models_key(k: KeyEvent) -> Option<Action> {
    Some(match k.code {
        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('m') => Action::CloseOverlay,
        KeyCode::Down | KeyCode::Char('j') => Action::MoveModelCursor(1),
        KeyCode::Up | KeyCode::Char('k') => Action::MoveModelCursor(-1),
        KeyCode::Enter => Action::LoadSelectedModel,
        KeyCode::Char('c') => Action::ToggleCompareSelected,
        _ => return None,
    })
}

/// The what-if editor: every character is text; Enter scores, Alt-Enter breaks the line.
fn editor_key(k: KeyEvent) -> Option<Action> {
    Some(match k.code {
        KeyCode::Esc => Action::EditCancel,
        KeyCode::Enter if k.modifiers.contains(KeyModifiers::ALT) => Action::EditNewline,
        KeyCode::Enter => Action::EditApply,
        KeyCode::Backspace => Action::EditBackspace,
        KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => Action::EditClear,
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => Action::EditType(c),
        _ => return None,
    })
}

/// While a filter is typed every character is text.
fn filter_key(k: KeyEvent) -> Option<Action> {
    Some(match k.code {
        KeyCode::Esc => Action::ClearFilter,
        KeyCode::Enter => Action::KeepFilter,
        KeyCode::Backspace => Action::FilterBackspace,
        KeyCode::Char(c) => Action::FilterType(c),
        _ => return None,
    })
}

/// Keys that mean the same in every view.
fn global_key(k: KeyEvent) -> Option<Action> {
    Some(match k.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Char('?') => Action::OpenHelp,
        KeyCode::Char('m') => Action::OpenModels,
        KeyCode::Char(c @ '1'..='6') => Action::ShowView(View::ALL[(c as u8 - b'1') as usize]),
        KeyCode::Tab => Action::NextView,
        KeyCode::BackTab => Action::PreviousView,
        _ => return None,
    })
}

fn items_key(k: KeyEvent) -> Option<Action> {
    Some(match k.code {
        KeyCode::Down | KeyCode::Char('j') => Action::MoveItem(Motion::By(1)),
        KeyCode::Up | KeyCode::Char('k') => Action::MoveItem(Motion::By(-1)),
        KeyCode::PageDown => Action::MoveItem(Motion::By(10)),
        KeyCode::PageUp => Action::MoveItem(Motion::By(-10)),
        KeyCode::Char('g') | KeyCode::Home => Action::MoveItem(Motion::First),
        KeyCode::Char('G') | KeyCode::End => Action::MoveItem(Motion::Last),
        KeyCode::Enter => Action::ShowView(View::Dialogue),
        KeyCode::Char('s') => Action::CycleSort,
        KeyCode::Char('S') => Action::ReverseSort,
        KeyCode::Char('/') => Action::EditFilter,
        KeyCode::Esc => Action::ClearFilter,
        _ => return None,
    })
}

/// Dialogue, Trace, Slot, Recovery: the step cursor and item navigation.
fn step_key(view: View, k: KeyEvent) -> Option<Action> {
    Some(match k.code {
        KeyCode::Left | KeyCode::Char('h') | KeyCode::Up | KeyCode::Char('k') => Action::MoveStep(Motion::By(-1)),
        KeyCode::Right | KeyCode::Char('l') | KeyCode::Down | KeyCode::Char('j') => Action::MoveStep(Motion::By(1)),
        KeyCode::Home | KeyCode::Char('g') => Action::MoveStep(Motion::First),
        KeyCode::End | KeyCode::Char('G') => Action::MoveStep(Motion::Last),
        KeyCode::Char('r') => Action::ToggleRampOps,
        KeyCode::Char('n') | KeyCode::Char(']') => Action::MoveItem(Motion::By(1)),
        KeyCode::Char('p') | KeyCode::Char('[') => Action::MoveItem(Motion::By(-1)),
        KeyCode::Char('e') => Action::ToggleQuestionBlocks,
        KeyCode::Char('a') if view == View::Dialogue => Action::Generate,
        KeyCode::Char('E') if view == View::Dialogue => Action::StartEdit,
        KeyCode::Char('u') if view == View::Dialogue => Action::UndoEdit,
        KeyCode::Char('S') if view == View::Dialogue => Action::SaveEdit,
        KeyCode::PageUp => Action::ScrollDialogue(5),
        KeyCode::PageDown => Action::ScrollDialogue(-5),
        KeyCode::Enter if view == View::Recovery => Action::ShowView(View::Dialogue),
        KeyCode::Esc => Action::ShowView(View::Items),
        _ => return None,
    })
}

fn tables_key(k: KeyEvent) -> Option<Action> {
    Some(match k.code {
        KeyCode::Left | KeyCode::Char('h') => Action::MoveTableFile(-1),
        KeyCode::Right | KeyCode::Char('l') => Action::MoveTableFile(1),
        KeyCode::Down | KeyCode::Char('j') => Action::ScrollTable(1),
        KeyCode::Up | KeyCode::Char('k') => Action::ScrollTable(-1),
        KeyCode::PageDown => Action::ScrollTable(15),
        KeyCode::PageUp => Action::ScrollTable(-15),
        KeyCode::Char('g') | KeyCode::Home => Action::ScrollTableTop,
        KeyCode::Char('L') | KeyCode::Char('>') => Action::PanTable(8),
        KeyCode::Char('H') | KeyCode::Char('<') => Action::PanTable(-8),
        KeyCode::Char('[') => Action::MoveRun(-1),
        KeyCode::Char(']') => Action::MoveRun(1),
        KeyCode::Enter => Action::OpenSelectedRun,
        KeyCode::Char('b') => Action::StartBatch,
        KeyCode::Char('x') => Action::StopBatch,
        KeyCode::Esc => Action::ShowView(View::Items),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(view: View) -> KeyContext {
        KeyContext { view, overlay: Overlay::None, filter_mode: false }
    }
    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ch(c: char) -> KeyEvent {
        key(KeyCode::Char(c))
    }

    #[test]
    fn global_keys_in_every_view() {
        for v in View::ALL {
            assert_eq!(action_for(cx(v), ch('q')), Some(Action::Quit), "{v:?}");
            assert_eq!(action_for(cx(v), ch('?')), Some(Action::OpenHelp), "{v:?}");
            assert_eq!(action_for(cx(v), ch('m')), Some(Action::OpenModels), "{v:?}");
            assert_eq!(action_for(cx(v), ch('3')), Some(Action::ShowView(View::Trace)), "{v:?}");
            assert_eq!(action_for(cx(v), key(KeyCode::Tab)), Some(Action::NextView), "{v:?}");
            assert_eq!(action_for(cx(v), key(KeyCode::BackTab)), Some(Action::PreviousView), "{v:?}");
        }
        assert_eq!(action_for(cx(View::Items), ch('6')), Some(Action::ShowView(View::Tables)));
        assert_eq!(action_for(cx(View::Items), ch('7')), None);
    }

    #[test]
    fn ctrl_c_quits_everywhere_even_while_typing_a_filter() {
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        let ctrl_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
        for overlay in [Overlay::None, Overlay::Help, Overlay::Models { sel: 0 }] {
            for filter_mode in [false, true] {
                let c = KeyContext { view: View::Items, overlay, filter_mode };
                assert_eq!(action_for(c, ctrl_c), Some(Action::Quit));
                assert_eq!(action_for(c, ctrl_q), Some(Action::Quit));
            }
        }
    }

    #[test]
    fn items_keys() {
        let c = cx(View::Items);
        assert_eq!(action_for(c, ch('j')), Some(Action::MoveItem(Motion::By(1))));
        assert_eq!(action_for(c, key(KeyCode::Up)), Some(Action::MoveItem(Motion::By(-1))));
        assert_eq!(action_for(c, key(KeyCode::PageDown)), Some(Action::MoveItem(Motion::By(10))));
        assert_eq!(action_for(c, ch('G')), Some(Action::MoveItem(Motion::Last)));
        assert_eq!(action_for(c, key(KeyCode::Home)), Some(Action::MoveItem(Motion::First)));
        assert_eq!(action_for(c, key(KeyCode::Enter)), Some(Action::ShowView(View::Dialogue)));
        assert_eq!(action_for(c, ch('s')), Some(Action::CycleSort));
        assert_eq!(action_for(c, ch('S')), Some(Action::ReverseSort));
        assert_eq!(action_for(c, ch('/')), Some(Action::EditFilter));
        assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ClearFilter));
        // Keys of other views do nothing here.
        assert_eq!(action_for(c, ch('e')), None);
        assert_eq!(action_for(c, ch('b')), None);
        assert_eq!(action_for(c, key(KeyCode::F(5))), None);
    }

    #[test]
    fn a_typed_filter_takes_every_character() {
        let c = KeyContext { filter_mode: true, ..cx(View::Items) };
        assert_eq!(action_for(c, ch('q')), Some(Action::FilterType('q')));
        assert_eq!(action_for(c, ch('1')), Some(Action::FilterType('1')));
        assert_eq!(action_for(c, key(KeyCode::Backspace)), Some(Action::FilterBackspace));
        assert_eq!(action_for(c, key(KeyCode::Enter)), Some(Action::KeepFilter));
        assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ClearFilter));
        assert_eq!(action_for(c, key(KeyCode::Down)), None);
    }

    #[test]
    fn step_keys_in_the_detail_views() {
        for v in [View::Dialogue, View::Trace, View::Slot, View::Recovery] {
            let c = cx(v);
            assert_eq!(action_for(c, ch('l')), Some(Action::MoveStep(Motion::By(1))), "{v:?}");
            assert_eq!(action_for(c, key(KeyCode::Left)), Some(Action::MoveStep(Motion::By(-1))), "{v:?}");
            assert_eq!(action_for(c, ch('k')), Some(Action::MoveStep(Motion::By(-1))), "{v:?}");
            assert_eq!(action_for(c, ch('G')), Some(Action::MoveStep(Motion::Last)), "{v:?}");
            assert_eq!(action_for(c, ch('r')), Some(Action::ToggleRampOps), "{v:?}");
            assert_eq!(action_for(c, ch(']')), Some(Action::MoveItem(Motion::By(1))), "{v:?}");
            assert_eq!(action_for(c, ch('p')), Some(Action::MoveItem(Motion::By(-1))), "{v:?}");
            assert_eq!(action_for(c, ch('e')), Some(Action::ToggleQuestionBlocks), "{v:?}");
            assert_eq!(action_for(c, key(KeyCode::PageUp)), Some(Action::ScrollDialogue(5)), "{v:?}");
            assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ShowView(View::Items)), "{v:?}");
            assert_eq!(action_for(c, ch('s')), None, "{v:?}");
            assert_eq!(action_for(c, ch('z')), None, "{v:?}");
        }
        // The what-if editor takes every character.
        let ed = KeyContext { overlay: Overlay::Editor, ..cx(View::Dialogue) };
        assert_eq!(action_for(ed, ch('q')), Some(Action::EditType('q')));
        assert_eq!(action_for(ed, key(KeyCode::Enter)), Some(Action::EditApply));
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)), Some(Action::EditNewline));
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)), Some(Action::EditClear));
        assert_eq!(action_for(ed, key(KeyCode::Esc)), Some(Action::EditCancel));
        assert_eq!(action_for(cx(View::Dialogue), ch('E')), Some(Action::StartEdit));
        assert_eq!(action_for(cx(View::Dialogue), ch('u')), Some(Action::UndoEdit));
        assert_eq!(action_for(cx(View::Dialogue), ch('S')), Some(Action::SaveEdit));
        assert_eq!(action_for(cx(View::Slot), ch('E')), None);
        // a generates from the Dialogue only.
        assert_eq!(action_for(cx(View::Dialogue), ch('a')), Some(Action::Generate));
        assert_eq!(action_for(cx(View::Trace), ch('a')), None);
        assert_eq!(action_for(cx(View::Items), ch('a')), None);
        // Enter opens the operation's dialogue from Recovery only.
        assert_eq!(action_for(cx(View::Recovery), key(KeyCode::Enter)), Some(Action::ShowView(View::Dialogue)));
        assert_eq!(action_for(cx(View::Trace), key(KeyCode::Enter)), None);
    }

    #[test]
    fn tables_keys() {
        let c = cx(View::Tables);
        assert_eq!(action_for(c, ch('l')), Some(Action::MoveTableFile(1)));
        assert_eq!(action_for(c, ch('h')), Some(Action::MoveTableFile(-1)));
        assert_eq!(action_for(c, ch('j')), Some(Action::ScrollTable(1)));
        assert_eq!(action_for(c, key(KeyCode::PageUp)), Some(Action::ScrollTable(-15)));
        assert_eq!(action_for(c, ch('g')), Some(Action::ScrollTableTop));
        assert_eq!(action_for(c, ch('L')), Some(Action::PanTable(8)));
        assert_eq!(action_for(c, ch('<')), Some(Action::PanTable(-8)));
        assert_eq!(action_for(c, ch('b')), Some(Action::StartBatch));
        assert_eq!(action_for(c, ch('x')), Some(Action::StopBatch));
        assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ShowView(View::Items)));
        assert_eq!(action_for(c, ch(']')), Some(Action::MoveRun(1)));
        assert_eq!(action_for(c, ch('[')), Some(Action::MoveRun(-1)));
        assert_eq!(action_for(c, key(KeyCode::Enter)), Some(Action::OpenSelectedRun));
        assert_eq!(action_for(c, ch('G')), None);
    }

    #[test]
    fn overlays_take_the_keys() {
        let help = KeyContext { overlay: Overlay::Help, ..cx(View::Dialogue) };
        assert_eq!(action_for(help, ch('j')), Some(Action::ScrollHelp(1)));
        assert_eq!(action_for(help, key(KeyCode::Up)), Some(Action::ScrollHelp(-1)));
        // Any other key closes the help, even a global one.
        assert_eq!(action_for(help, ch('q')), Some(Action::CloseOverlay));
        assert_eq!(action_for(help, ch('2')), Some(Action::CloseOverlay));

        let models = KeyContext { overlay: Overlay::Models { sel: 1 }, ..cx(View::Items) };
        assert_eq!(action_for(models, ch('j')), Some(Action::MoveModelCursor(1)));
        assert_eq!(action_for(models, ch('k')), Some(Action::MoveModelCursor(-1)));
        assert_eq!(action_for(models, key(KeyCode::Enter)), Some(Action::LoadSelectedModel));
        assert_eq!(action_for(models, ch('c')), Some(Action::ToggleCompareSelected));
        for close in [ch('q'), ch('m'), key(KeyCode::Esc)] {
            assert_eq!(action_for(models, close), Some(Action::CloseOverlay));
        }
        assert_eq!(action_for(models, ch('1')), None);
        assert_eq!(action_for(models, ch('x')), None);
    }
}
