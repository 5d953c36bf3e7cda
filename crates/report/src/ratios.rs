//! A chart of measured speed ratios against their goals (docs/benchmarks.md):
//! one horizontal bar per benchmark on a logarithmic axis, the goal marked
//! across it, so a reader sees at once which goals are met and by how much.

use crate::plot::{axis_number, register_font, FONT};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One benchmark's measured ratio and its goal (both "times faster").
#[derive(Clone, Debug, PartialEq)]
pub struct RatioBar {
    /// What was measured, as the chart labels it.
    pub what: String,
    /// The measured ratio.
    pub measured: f64,
    /// The goal the ratio should reach.
    pub goal: f64,
    /// The goal is a ceiling (a cost ratio), not a floor (a speed-up).
    pub lower_is_better: bool,
}

impl RatioBar {
    /// Whether the measured ratio meets its goal.
    pub fn met(&self) -> bool {
        if self.lower_is_better {
            self.measured <= self.goal
        } else {
            self.measured >= self.goal
        }
    }
}

const W: u32 = 1280;
const ROW: u32 = 46;

/// Renders the bars as an SVG document; every ratio must be positive and finite.
pub fn ratios_svg(bars: &[RatioBar], title: &str) -> Result<String, String> {
    if bars.is_empty() {
        return Err("no ratios to draw".into());
    }
    for b in bars {
        if !(b.measured.is_finite() && b.measured > 0.0 && b.goal.is_finite() && b.goal > 0.0) {
            return Err(format!(
                "{}: ratios must be positive numbers (measured {}, goal {})",
                b.what, b.measured, b.goal
            ));
        }
    }
    register_font();
    let lo = bars
        .iter()
        .flat_map(|b| [b.measured, b.goal])
        .fold(f64::INFINITY, f64::min);
    let hi = bars
        .iter()
        .flat_map(|b| [b.measured, b.goal])
        .fold(0.0, f64::max);
    // Whole decades around every value, so the ticks read 0.1, 1, 10, 100.
    let x0 = 10f64.powf((lo / 1.5).log10().floor());
    let x1 = 10f64.powf((hi * 1.5).log10().ceil());
    let h = 130 + ROW * bars.len() as u32;
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let n = bars.len() as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 26))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(440)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..n)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("ratio (logarithmic scale; the black mark is the goal; green: met)")
            .x_label_formatter(&|v| axis_number(*v))
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 18))
            .draw()
            .map_err(|e| e.to_string())?;
        let met = RGBColor(60, 150, 90);
        let short = RGBColor(220, 120, 50);
        let left = TextStyle::from((FONT, 17).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        let right =
            TextStyle::from((FONT, 17).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, b) in bars.iter().enumerate() {
            // The first bar at the top.
            let y = n - 1.0 - i as f64;
            let color = if b.met() { met } else { short };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x0, y + 0.2), (b.measured, y + 0.8)],
                    color.mix(0.8).filled(),
                )))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(b.goal, y + 0.08), (b.goal, y + 0.92)],
                    BLACK.stroke_width(3),
                )))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!(
                        "{}x (goal {} {}x)",
                        axis_number(round2(b.measured)),
                        if b.lower_is_better {
                            "at most"
                        } else {
                            "at least"
                        },
                        b.goal
                    ),
                    (b.measured.max(b.goal) * 1.12, y + 0.5),
                    left.clone(),
                )))
                .map_err(|e| e.to_string())?;
            let (px, py) = chart.backend_coord(&(x0, y + 0.5));
            root.draw(&Text::new(b.what.clone(), (px - 10, py), right.clone()))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(s)
}

/// Two decimals are all a ratio's label needs.
fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(what: &str, measured: f64, goal: f64) -> RatioBar {
        RatioBar {
            what: what.into(),
            measured,
            goal,
            lower_is_better: false,
        }
    }

    #[test]
    fn draws_every_bar_with_its_goal() {
        let svg = ratios_svg(
            &[
                bar("simulator vs ns-3", 60.0, 100.0),
                bar("pair", 1.51, 1.5),
            ],
            "ratios",
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("simulator vs ns-3"));
        assert!(svg.contains("60x (goal at least 100x)"));
        assert!(svg.contains("1.51x (goal at least 1.5x)"));
    }

    #[test]
    fn a_cost_ratio_meets_its_goal_from_below() {
        let mut b = bar("100,000 flows", 3.5, 2.0);
        assert!(!bar("x", 60.0, 100.0).met() && bar("x", 1.51, 1.5).met());
        b.lower_is_better = true;
        assert!(!b.met());
        b.measured = 1.9;
        assert!(b.met());
        let svg = ratios_svg(&[b], "t").unwrap();
        assert!(svg.contains("1.9x (goal at most 2x)"), "{svg}");
    }

    #[test]
    fn bad_ratios_are_named() {
        assert!(ratios_svg(&[], "t").is_err());
        let e = ratios_svg(&[bar("tun", 0.0, 0.9)], "t").unwrap_err();
        assert!(e.contains("tun"), "{e}");
        let e = ratios_svg(&[bar("x", f64::NAN, 1.0)], "t").unwrap_err();
        assert!(e.contains("positive"), "{e}");
    }
}
