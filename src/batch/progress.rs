//! A one-line progress bar on stderr: items done/total, items/s, tokens/s, ETA. On a terminal it
//! redraws in place; otherwise it prints a line every few seconds. Logs go to the log file, so
//! nothing tears the line.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    total: usize,
    start: Instant,
    last_draw: Option<Instant>,
    tty: bool,
    drawn: bool,
}

fn fmt_secs(s: f64) -> String {
    if !s.is_finite() {
        return "--".into();
    }
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

impl Progress {
    pub fn new(total: usize) -> Self {
        Self {
            total,
            start: Instant::now(),
            last_draw: None,
            tty: std::io::stderr().is_terminal(),
            drawn: false,
        }
    }

    pub fn message(&mut self, msg: &str) {
        self.clear_line();
        eprintln!("{msg}");
    }

    fn clear_line(&mut self) {
        if self.tty && self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }

    pub fn line(&self, done: usize, tokens: u64, current: &str) -> String {
        let el = self.start.elapsed().as_secs_f64().max(1e-9);
        let ips = done as f64 / el;
        let tps = tokens as f64 / el;
        let eta = if done > 0 { (self.total - done) as f64 / ips } else { f64::NAN };
        let width = 24usize;
        let filled = if self.total > 0 { width * done / self.total } else { width };
        format!(
            "[{}{}] {done}/{} items · {ips:.2} items/s · {tps:.0} tok/s · ETA {} · {current}",
            "#".repeat(filled),
            "-".repeat(width - filled),
            self.total,
            fmt_secs(eta)
        )
    }

    pub fn tick(&mut self, done: usize, tokens: u64, current: &str) {
        let due = self.last_draw.is_none_or(|t| t.elapsed() >= Duration::from_millis(if self.tty { 100 } else { 5000 }));
        if !due && done != self.total {
            return;
        }
        self.last_draw = Some(Instant::now());
        let line = self.line(done, tokens, current);
        let mut e = std::io::stderr().lock();
        if self.tty {
            let _ = write!(e, "\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(e, "{line}");
        }
        let _ = e.flush();
    }

    pub fn finish(&mut self) {
        if self.tty && self.drawn {
            eprintln!();
            self.drawn = false;
        }
    }
}
