//! The density-of-states picture of `planewave dos`, drawn from the results document it writes.
//!
//! Contract: [`DosPicture`] plots D(E) in states/eV per cell against E in eV with zero at the valence
//! maximum (integer occupations) or the Fermi level (smearing), spin down below the axis,
//! a vertical line at zero, and the region above `valid_up_to_ev` (too few bands) greyed. A
//! document with a `projected` part adds each atom and l's DOS in its own colour, named in a
//! legend.

use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;

use crate::picture::{Picture, FONT};

/// The picture of a density-of-states document (see `planewave_core::dos`).
pub struct DosPicture<'a> {
    pub doc: &'a Value,
    pub title: &'a str,
}

impl Picture for DosPicture<'_> {
    fn size(&self) -> (u32, u32) {
        (800, 500)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (doc, title) = (self.doc, self.title);
        let energies: Vec<f64> =
            serde_json::from_value(doc["energy_ev"].clone()).map_err(|e| e.to_string())?;
        let dos: Vec<Vec<f64>> =
            serde_json::from_value(doc["dos_per_ev"].clone()).map_err(|e| e.to_string())?;
        let (zero, what) = match (doc["vbm_ev"].as_f64(), doc["fermi_level_ev"].as_f64()) {
            (Some(v), _) => (v, "E - E_VBM (eV)"),
            (None, Some(f)) => (f, "E - E_F (eV)"),
            _ => (0.0, "E (eV)"),
        };
        let x0 = energies.first().copied().unwrap_or(0.0) - zero;
        let x1 = energies.last().copied().unwrap_or(1.0) - zero;
        let top = dos.iter().flatten().copied().fold(0.0, f64::max) * 1.05;
        let bottom = if dos.len() > 1 { -top } else { 0.0 };
        let mut chart = ChartBuilder::on(root)
            .caption(format!("{title}: density of states"), (FONT, 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, bottom..top.max(1e-9))
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_desc(what)
            .y_desc("states/eV per cell")
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 14))
            .draw()
            .map_err(|e| e.to_string())?;
        if let Some(v) = doc["valid_up_to_ev"]
            .as_f64()
            .map(|v| v - zero)
            .filter(|v| *v < x1)
        {
            let grey = Rectangle::new([(v, bottom), (x1, top)], BLACK.mix(0.08).filled());
            chart
                .draw_series(std::iter::once(grey))
                .map_err(|e| e.to_string())?;
        }
        for (spin, channel) in dos.iter().enumerate() {
            let (colour, sign) = if spin == 0 { (BLUE, 1.0) } else { (RED, -1.0) };
            let points = energies
                .iter()
                .zip(channel)
                .map(|(&e, &d)| (e - zero, sign * d));
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))
                .map_err(|e| e.to_string())?;
        }
        if let Some(projected) = doc["projected"]["pdos_per_ev"].as_object() {
            for (i, (key, channels)) in projected.iter().enumerate() {
                let channels: Vec<Vec<f64>> =
                    serde_json::from_value(channels.clone()).map_err(|e| e.to_string())?;
                let colour = Palette99::pick(i + 3).to_rgba();
                for (spin, channel) in channels.iter().enumerate() {
                    let sign = if spin == 0 { 1.0 } else { -1.0 };
                    let points =
                        (energies.iter().zip(channel)).map(|(&e, &d)| (e - zero, sign * d));
                    let series = chart
                        .draw_series(LineSeries::new(points, colour.stroke_width(1)))
                        .map_err(|e| e.to_string())?;
                    if spin == 0 {
                        series.label(key.as_str()).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], colour)
                        });
                    }
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK.mix(0.4))
                .label_font((FONT, 14))
                .draw()
                .map_err(|e| e.to_string())?;
        }
        let line = PathElement::new(vec![(0.0, bottom), (0.0, top)], BLACK.mix(0.6));
        chart
            .draw_series(std::iter::once(line))
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dos_is_drawn_from_its_document() {
        let doc = serde_json::json!({
            "energy_ev": [-2.0, -1.0, 0.0, 1.0, 2.0],
            "dos_per_ev": [[0.0, 1.0, 2.0, 0.5, 0.0]],
            "vbm_ev": 0.0, "valid_up_to_ev": 1.5,
        });
        let text = crate::picture::svg(&DosPicture {
            doc: &doc,
            title: "test",
        })
        .unwrap();
        assert!(text.starts_with("<svg") && text.contains("states/eV per cell"));
        assert!(text.contains("E - E_VBM (eV)") && text.contains("<polyline"));
    }

    #[test]
    fn a_projected_dos_is_drawn_with_its_legend() {
        let doc = serde_json::json!({
            "energy_ev": [-2.0, -1.0, 0.0, 1.0, 2.0],
            "dos_per_ev": [[0.0, 1.0, 2.0, 0.5, 0.0]],
            "projected": {"pdos_per_ev": {"1:Si:s": [[0.0, 0.6, 0.4, 0.1, 0.0]], "1:Si:p": [[0.0, 0.3, 1.5, 0.4, 0.0]]}},
        });
        let text = crate::picture::svg(&DosPicture {
            doc: &doc,
            title: "test",
        })
        .unwrap();
        assert!(
            text.contains("1:Si:s") && text.contains("1:Si:p"),
            "the legend names both"
        );
        assert!(text.matches("<polyline").count() >= 3);
    }
}
