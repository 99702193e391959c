//! The band-structure picture of `planewave bands`, drawn from the results document it writes.
//!
//! Contract: [`BandPicture`] plots every band against the length along the path (1/bohr), energies in
//! eV (all of the computed bands) with zero at the valence maximum (integer occupations) or the Fermi level (smearing),
//! the vertices as vertical lines with their labels (`G`, `Gamma` drawn as Γ; a jump's two
//! labels as `U|K`), spin up blue and down red, and the gap's edges as a shaded band with its width in
//! the caption. plotters draws it ([`crate::picture`]: SVG and PNG).

use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;

use crate::picture::{Picture, FONT};

use planewave_core::input::units::EV_PER_HARTREE;

/// The picture of a band-structure document (see `planewave_core::band_structure`).
pub struct BandPicture<'a> {
    pub doc: &'a Value,
    pub title: &'a str,
}

impl Picture for BandPicture<'_> {
    fn size(&self) -> (u32, u32) {
        (800, 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (doc, title) = (self.doc, self.title);
        let x: Vec<f64> =
            serde_json::from_value(doc["distance_inv_bohr"].clone()).map_err(|e| e.to_string())?;
        let bands: Vec<Vec<Vec<f64>>> =
            serde_json::from_value(doc["eigenvalues_ha"].clone()).map_err(|e| e.to_string())?;
        let labels: Vec<(usize, String)> =
            serde_json::from_value(doc["labels"].clone()).map_err(|e| e.to_string())?;
        let (zero, what) = match (doc["vbm_ha"].as_f64(), doc["fermi_level_ha"].as_f64()) {
            (Some(v), _) => (v, "E - E_VBM (eV)"),
            (None, Some(f)) => (f, "E - E_F (eV)"),
            _ => (0.0, "E (eV)"),
        };
        let ev = |e: f64| (e - zero) * EV_PER_HARTREE;
        let lowest = bands
            .iter()
            .flatten()
            .flatten()
            .fold(f64::INFINITY, |a, &e| a.min(ev(e)));
        let highest = bands
            .iter()
            .flatten()
            .flatten()
            .fold(f64::NEG_INFINITY, |a, &e| a.max(ev(e)));
        let y = (lowest - 1.0, highest + 0.5);
        let x_end = x.last().copied().unwrap_or(1.0).max(1e-9);
        let caption = match doc["gap_ev"].as_f64() {
            Some(g) => {
                let kind = if doc["gap_direct"].as_bool() == Some(true) {
                    "direct"
                } else {
                    "indirect"
                };
                format!("{title}: gap {g:.3} eV ({kind})")
            }
            None => title.to_string(),
        };
        let mut chart = ChartBuilder::on(root)
            .caption(caption, (FONT, 22))
            .margin(15)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..x_end, y.0..y.1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .light_line_style(WHITE)
            .y_desc(what)
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 14))
            .draw()
            .map_err(|e| e.to_string())?;
        if let Some(g) = doc["gap_ev"].as_f64() {
            let gap = Rectangle::new([(0.0, 0.0), (x_end, g)], RGBColor(255, 236, 179).filled());
            chart
                .draw_series(std::iter::once(gap))
                .map_err(|e| e.to_string())?;
        }
        for (spin, channel) in bands.iter().enumerate() {
            let colour = if spin == 0 { BLUE } else { RED };
            for n in 0..channel.first().map_or(0, Vec::len) {
                let points = x.iter().zip(channel).map(|(&d, e)| (d, ev(e[n])));
                chart
                    .draw_series(LineSeries::new(points, colour.stroke_width(2)))
                    .map_err(|e| e.to_string())?;
            }
        }
        for (at, text) in merged_labels(&labels, &x) {
            let line = PathElement::new(vec![(at, y.0), (at, y.1)], BLACK.mix(0.5));
            chart
                .draw_series(std::iter::once(line))
                .map_err(|e| e.to_string())?;
            let style = (FONT, 18).into_font().color(&BLACK);
            let pixel = chart.backend_coord(&(at, y.0));
            root.draw_text(&text, &style, (pixel.0 - 5, pixel.1 + 8))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// The labels at their path lengths, Γ spelt out, labels at one length joined (`U|K`).
fn merged_labels(labels: &[(usize, String)], x: &[f64]) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    for (i, label) in labels {
        let name = match label.as_str() {
            "G" | "Gamma" | "GAMMA" | "\\Gamma" => "Γ".to_string(),
            other => other.to_string(),
        };
        let at = x.get(*i).copied().unwrap_or(0.0);
        match out.last_mut() {
            Some((x0, text)) if (*x0 - at).abs() < 1e-12 => *text = format!("{text}|{name}"),
            _ => out.push((at, name)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_band_path_is_drawn_with_its_labels() {
        let doc = serde_json::json!({
            "distance_inv_bohr": [0.0, 0.5, 1.0, 1.0, 1.5],
            "eigenvalues_ha": [[[-0.2, 0.1], [-0.1, 0.2], [0.0, 0.3], [0.0, 0.3], [-0.1, 0.25]]],
            "labels": [[0, "G"], [2, "X"], [3, "U"], [4, "K"]],
            "vbm_ha": 0.0, "cbm_ha": 0.1, "gap_ev": 2.72, "gap_direct": false,
        });
        let text = crate::picture::svg(&BandPicture {
            doc: &doc,
            title: "test",
        })
        .unwrap();
        assert!(text.starts_with("<svg"), "{}", &text[..40]);
        for part in ["Γ", "X|U", "K", "gap 2.720 eV (indirect)", "E - E_VBM (eV)"] {
            assert!(text.contains(part), "no `{part}` in the picture");
        }
        assert!(text.matches("<polyline").count() >= 2, "two bands");
    }
}
