//! Screenshots of a rendered buffer: SVG (one `<text>` per row, one `<tspan>` per run of
//! same-style cells, monospace, dark background), HTML (a `<pre>` of styled spans) and plain text.

use std::fmt::Write as _;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

const BG: &str = "#1e2127";
const FG: &str = "#d4d7dd";
const FONT: &str = "'DejaVu Sans Mono','Menlo','Consolas','Liberation Mono',monospace";
/// DejaVu Sans Mono's advance (0.602 em), so plain runs line up with the grid.
const CELL_W: f64 = 8.73;
const CELL_H: f64 = 17.0;
const FONT_SIZE: f64 = 14.5;
const PAD: f64 = 10.0;

/// The buffer as plain text: one line per row, trailing spaces removed.
pub fn buffer_to_text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(buf.area.x + x, buf.area.y + y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// xterm-like palette (One Dark flavoured) for the 16 named colours.
fn named(c: Color) -> Option<&'static str> {
    Some(match c {
        Color::Black => "#282c34",
        Color::Red => "#e06c75",
        Color::Green => "#98c379",
        Color::Yellow => "#e5c07b",
        Color::Blue => "#61afef",
        Color::Magenta => "#c678dd",
        Color::Cyan => "#56b6c2",
        Color::Gray => "#abb2bf",
        Color::DarkGray => "#5c6370",
        Color::LightRed => "#ff7b86",
        Color::LightGreen => "#b5e890",
        Color::LightYellow => "#ffd68a",
        Color::LightBlue => "#8cc8ff",
        Color::LightMagenta => "#de9bf0",
        Color::LightCyan => "#7fdbe6",
        Color::White => "#ffffff",
        _ => return None,
    })
}

fn indexed(i: u8) -> String {
    const BASE: [Color; 16] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    if i < 16 {
        return named(BASE[i as usize]).unwrap_or(FG).to_string();
    }
    if i >= 232 {
        let v = 8 + 10 * (i - 232);
        return format!("#{v:02x}{v:02x}{v:02x}");
    }
    let i = i - 16;
    let lv = |n: u8| if n == 0 { 0 } else { 55 + 40 * n };
    format!("#{:02x}{:02x}{:02x}", lv(i / 36), lv((i / 6) % 6), lv(i % 6))
}

/// CSS colour of a ratatui colour; `None` for the terminal default.
fn css(c: Color) -> Option<String> {
    match c {
        Color::Reset => None,
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
        Color::Indexed(i) => Some(indexed(i)),
        other => named(other).map(str::to_string),
    }
}

#[derive(Clone, PartialEq)]
struct RunStyle {
    fg: String,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
}

fn run_style(cell: &Cell) -> RunStyle {
    let mut fg = css(cell.fg);
    let mut bg = css(cell.bg);
    if cell.modifier.contains(Modifier::REVERSED) {
        let f = fg.take().unwrap_or_else(|| FG.to_string());
        let b = bg.take().unwrap_or_else(|| BG.to_string());
        fg = Some(b);
        bg = Some(f);
    }
    RunStyle {
        fg: fg.unwrap_or_else(|| FG.to_string()),
        bg,
        bold: cell.modifier.contains(Modifier::BOLD),
        dim: cell.modifier.contains(Modifier::DIM),
        italic: cell.modifier.contains(Modifier::ITALIC),
        underline: cell.modifier.contains(Modifier::UNDERLINED),
    }
}

/// Runs of same-style cells of one row: (first column, width in cells, text, style).
fn runs(buf: &Buffer, y: u16) -> Vec<(u16, u16, String, RunStyle)> {
    let mut out: Vec<(u16, u16, String, RunStyle)> = Vec::new();
    for x in 0..buf.area.width {
        let cell = &buf[(buf.area.x + x, buf.area.y + y)];
        let st = run_style(cell);
        let sym = cell.symbol();
        match out.last_mut() {
            Some(last) if last.3 == st => {
                last.1 += 1;
                last.2.push_str(sym);
            }
            _ => out.push((x, 1, sym.to_string(), st)),
        }
    }
    out
}

fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if (c as u32) < 0x20 => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// Width in eighths of a cell of the left block elements (`▏` … `█`).
fn block_eighths(c: char) -> Option<u8> {
    Some(match c {
        '█' => 8,
        '▉' => 7,
        '▊' => 6,
        '▋' => 5,
        '▌' => 4,
        '▍' => 3,
        '▎' => 2,
        '▏' => 1,
        _ => return None,
    })
}

/// SVG screenshot with colours.
pub(crate) fn buffer_to_svg(buf: &Buffer) -> String {
    let w = buf.area.width as f64 * CELL_W + 2.0 * PAD;
    let h = buf.area.height as f64 * CELL_H + 2.0 * PAD;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.1} {h:.1}" font-family="{FONT}" font-size="{FONT_SIZE}">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="{BG}" rx="6"/>"#);
    // Backgrounds first, then text on top.
    for y in 0..buf.area.height {
        for (x, n, _, st) in runs(buf, y) {
            if let Some(bg) = &st.bg {
                let _ = writeln!(
                    s,
                    r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{CELL_H}" fill="{bg}"/>"#,
                    PAD + x as f64 * CELL_W,
                    PAD + y as f64 * CELL_H,
                    n as f64 * CELL_W
                );
            }
        }
    }
    for y in 0..buf.area.height {
        let rs = runs(buf, y);
        if rs.iter().all(|r| r.2.trim().is_empty()) {
            continue;
        }
        let base = PAD + y as f64 * CELL_H + CELL_H * 0.77;
        let mut rects = String::new();
        let _ = write!(s, r#"<text y="{base:.1}">"#);
        for (x0, n, _, st) in rs {
            let mut attrs = format!(r#" fill="{}""#, st.fg);
            if st.bold {
                attrs.push_str(r#" font-weight="bold""#);
            }
            if st.dim {
                attrs.push_str(r#" opacity="0.6""#);
            }
            if st.italic {
                attrs.push_str(r#" font-style="italic""#);
            }
            if st.underline {
                attrs.push_str(r#" text-decoration="underline""#);
            }
            // Plain text runs are placed once; every other glyph (box drawing, blocks, braille,
            // symbols, which fonts often take from a fallback with other widths) at its own
            // cell, so the grid holds in any renderer.
            let mut seg = String::new();
            let mut seg_x = 0u16;
            let flush = |seg: &mut String, seg_x: u16, out: &mut String| {
                if !seg.is_empty() {
                    let _ = write!(out, r#"<tspan x="{:.1}"{attrs}>{}</tspan>"#, PAD + seg_x as f64 * CELL_W, xml_escape(seg));
                    seg.clear();
                }
            };
            for cx in x0..x0 + n {
                let sym = buf[(buf.area.x + cx, buf.area.y + y)].symbol();
                let Some(ch) = sym.chars().next() else { continue };
                if ch == ' ' {
                    flush(&mut seg, seg_x, &mut s);
                    continue;
                }
                let simple = ch.is_ascii_graphic() || (ch.is_alphanumeric() && (ch as u32) < 0x250) || ch == '·';
                if simple {
                    if seg.is_empty() {
                        seg_x = cx;
                    }
                    seg.push(ch);
                } else if let Some(eighths) = block_eighths(ch) {
                    // Bars as rectangles: no seams between cells.
                    flush(&mut seg, seg_x, &mut s);
                    let _ = writeln!(
                        rects,
                        r#"<rect x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{}" shape-rendering="crispEdges"{}/>"#,
                        PAD + cx as f64 * CELL_W,
                        PAD + y as f64 * CELL_H + 1.0,
                        CELL_W * eighths as f64 / 8.0 + if eighths == 8 { 0.6 } else { 0.0 },
                        CELL_H - 2.0,
                        st.fg,
                        if st.dim { r#" opacity="0.6""# } else { "" }
                    );
                } else {
                    flush(&mut seg, seg_x, &mut s);
                    seg.push_str(sym);
                    seg_x = cx;
                    flush(&mut seg, seg_x, &mut s);
                }
            }
            flush(&mut seg, seg_x, &mut s);
        }
        s.push_str("</text>\n");
        s.push_str(&rects);
    }
    s.push_str("</svg>\n");
    s
}

/// HTML page with a `<pre>` of styled spans.
pub(crate) fn buffer_to_html(buf: &Buffer) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hyst-tui</title></head>\n<body style=\"background:{BG};margin:0;padding:12px\">\n<pre style=\"font-family:{FONT};font-size:14px;line-height:1.25;color:{FG};background:{BG};margin:0\">"
    );
    for y in 0..buf.area.height {
        for (_, _, text, st) in runs(buf, y) {
            let plain = st.fg == FG && st.bg.is_none() && !st.bold && !st.dim && !st.italic && !st.underline;
            if plain {
                s.push_str(&xml_escape(&text));
                continue;
            }
            let mut css_s = format!("color:{}", st.fg);
            if let Some(bg) = &st.bg {
                let _ = write!(css_s, ";background:{bg}");
            }
            if st.bold {
                css_s.push_str(";font-weight:bold");
            }
            if st.dim {
                css_s.push_str(";opacity:0.6");
            }
            if st.italic {
                css_s.push_str(";font-style:italic");
            }
            if st.underline {
                css_s.push_str(";text-decoration:underline");
            }
            let _ = write!(s, "<span style=\"{css_s}\">{}</span>", xml_escape(&text));
        }
        s.push('\n');
    }
    s.push_str("</pre>\n</body></html>\n");
    s
}

/// Renders by the file extension (`.svg`, `.html`/`.htm`, `.txt`).
pub(crate) fn export(buf: &Buffer, path: &std::path::Path) -> anyhow::Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let content = match ext.as_str() {
        "svg" => buffer_to_svg(buf),
        "html" | "htm" => buffer_to_html(buf),
        "txt" => buffer_to_text(buf),
        other => anyhow::bail!("--out {}: unknown format {other:?} (use .svg, .html or .txt)", path.display()),
    };
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    std::fs::write(path, content)?;
    Ok(())
}
