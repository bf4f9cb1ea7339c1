//! `hyst-tui completions SHELL`.

use anyhow::Result;

/// `hyst-tui completions SHELL`: the completion script on stdout.
pub fn run(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = crate::cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hyst-tui", &mut out);
    let mut script = String::from_utf8(out)?;
    if shell == clap_complete::Shell::Bash {
        // clap_complete's bash script spells the subcommand states of a hyphenated binary
        // two ways (the loop `hyst__tui__subcmd__models`, the case arms
        // `hyst__subcmd__tui__subcmd__models`), so nothing after the first word completes
        // (clap-rs/clap#6421). Spell the arms like the loop.
        script = script.replace("hyst__subcmd__tui__subcmd__", "hyst__tui__subcmd__");
    }
    use std::io::Write;
    std::io::stdout().write_all(script.as_bytes())?;
    Ok(())
}
