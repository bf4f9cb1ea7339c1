//! Option letters: `A` is the first option, `Z` the 26th (the most that can be scored).

/// The letter of option `i` (0 = `A`). `i` must be below 26.
pub fn letter(i: usize) -> char {
    debug_assert!(i < 26, "option index {i} has no letter");
    (b'A' + i as u8) as char
}

/// The option index of a letter: exactly one uppercase ASCII letter, surrounding whitespace
/// ignored (`" B "` → 1). Anything else — lowercase, two letters, empty — is `None`.
pub fn letter_index(s: &str) -> Option<usize> {
    let mut it = s.trim().chars();
    match (it.next(), it.next()) {
        (Some(c), None) if c.is_ascii_uppercase() => Some((c as u8 - b'A') as usize),
        _ => None,
    }
}

/// Letters A, B, C, … for `n` options (at most 26).
pub fn default_letters(n: usize) -> Vec<char> {
    (0..n.min(26)).map(letter).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_and_indices_round_trip() {
        for i in 0..26 {
            assert_eq!(letter_index(&letter(i).to_string()), Some(i));
        }
        assert_eq!(default_letters(4), vec!['A', 'B', 'C', 'D']);
        assert_eq!(default_letters(30).len(), 26);
    }

    #[test]
    fn only_one_uppercase_letter_is_an_index() {
        assert_eq!(letter_index(" C\n"), Some(2));
        for bad in ["", "a", "AB", "1", "Ä", "A B"] {
            assert_eq!(letter_index(bad), None, "{bad:?}");
        }
    }
}
