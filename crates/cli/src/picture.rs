//! Pictures in two formats from one drawing: SVG (text, for browsers and documents) and PNG
//! (pixels, for slides), drawn by plotters.
//!
//! Contract: a [`Picture`] draws itself on any plotters backend; [`svg`] returns the SVG text,
//! [`png`] writes the PNG file atomically (a temporary file, then a rename). Text is set in
//! DejaVu Sans, which the program carries (`crates/cli/fonts`), so neither format needs a font
//! installed on the machine.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// The font family every picture names.
pub const FONT: &str = "sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// Something drawn the same way in every format.
pub trait Picture {
    /// Width and height in pixels (SVG user units).
    fn size(&self) -> (u32, u32);
    /// Draw on `root`, already filled white.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Register the carried font once, under [`FONT`]; every call gets the first one's outcome.
fn fonts() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT, FontStyle::Normal, DEJAVU_SANS)
                .map_err(|_| "the carried DejaVu Sans font does not load".to_string())
        })
        .clone()
}

/// The picture as SVG text.
pub fn svg(p: &impl Picture) -> Result<String, String> {
    fonts()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, p.size()).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        p.draw(&root)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The picture written to `path` as PNG, at its size.
pub fn png(p: &impl Picture, path: &Path) -> Result<(), String> {
    fonts()?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp.png");
    let tmp = std::path::PathBuf::from(tmp);
    {
        let root = BitMapBackend::new(&tmp, p.size()).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        p.draw(&root)?;
        root.present()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The picture written next to `input` as `<stem>.<name>.svg` and `.png`; their paths.
pub fn write_both(
    p: &impl Picture,
    input: &Path,
    name: &str,
) -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    let (svg_path, png_path) = (
        crate::sibling(input, &format!("{name}.svg")),
        crate::sibling(input, &format!("{name}.png")),
    );
    crate::write_atomically(&svg_path, &svg(p)?)
        .map_err(|e| format!("cannot write {}: {e}", svg_path.display()))?;
    png(p, &png_path)?;
    Ok((svg_path, png_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A caption and a diagonal line.
    struct Sample;

    impl Picture for Sample {
        fn size(&self) -> (u32, u32) {
            (120, 80)
        }
        fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
            let style = (FONT, 20).into_font().color(&BLACK);
            root.draw_text("Γ-X", &style, (10, 10))
                .map_err(|e| e.to_string())?;
            let line = PathElement::new(vec![(0, 79), (119, 40)], BLUE);
            root.draw(&line).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn one_drawing_gives_an_svg_and_a_png_without_installed_fonts() {
        let text = svg(&Sample).unwrap();
        assert!(text.starts_with("<svg") && text.contains("Γ-X"), "{text}");
        let path =
            std::env::temp_dir().join(format!("planewave-picture-{}.png", std::process::id()));
        png(&Sample, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let dim = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!((dim(16), dim(20)), (120, 80), "IHDR width and height");
    }
}
