//! Grouped bar charts as standalone SVG: opens in any browser or viewer and
//! needs no fonts installed (text is left to the viewer). The document's own
//! values are hollow markers on the bars they compare with; text is at least
//! 12 px.

use super::Chart;
use std::fmt::Write;

const W: f64 = 760.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
/// Height of the plot area; the margins below grow with the labels.
const PLOT_H: f64 = 230.0;
/// Text size of ticks, axis and legend labels (px).
const FONT: f64 = 13.0;
/// Rough width of one character at `FONT` px.
const CHAR_W: f64 = 7.5;
/// Legend row height.
const ROW_H: f64 = 17.0;
const COLORS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders `c` as an SVG document.
pub fn svg(c: &Chart) -> String {
    // The axis covers ours and the published values alike.
    let all = || {
        c.series.iter().flat_map(|s| {
            s.values
                .iter()
                .copied()
                .chain(s.published.iter().flatten().copied())
                .chain(s.spread.iter().flatten().map(|r| r.1))
        })
    };
    let max = all().fold(0.0f64, f64::max).max(1e-9);
    let min_pos = all().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let (lo, hi) = if c.log {
        let lo = 10f64.powf(min_pos.min(max).log10().floor()).max(1e-9);
        (lo, 10f64.powf(max.log10().ceil()).max(lo * 10.0))
    } else {
        (0.0, nice(max))
    };
    // Category labels are rotated 30 degrees and end under their group: the
    // longest sets the space below the plot, the first one the left margin.
    let groups = c.categories.len().max(1) as f64;
    let chars = |t: &str| t.chars().count() as f64 * CHAR_W;
    let longest = c.categories.iter().map(|t| chars(t)).fold(0.0, f64::max);
    let first = c.categories.first().map_or(0.0, |t| chars(t)) * 0.87;
    let mut left = 70.0f64;
    for _ in 0..2 {
        let gw = (W - left - RIGHT) / groups;
        left = left.max(first - gw / 2.0 + 6.0).min(W / 2.0);
    }
    let left = left;
    let legend_labels: Vec<&str> = c
        .series
        .iter()
        .map(|s| s.label.as_str())
        .chain(
            c.series
                .iter()
                .any(|s| s.published.iter().any(Option::is_some))
                .then_some("published"),
        )
        .collect();
    let (legend_at, legend_rows) = legend_layout(&legend_labels, left);
    let labels_h = longest * 0.5 + 26.0;
    let h = (TOP + PLOT_H + labels_h + legend_rows as f64 * ROW_H + 12.0).round();
    let plot_h = PLOT_H;
    let plot_w = W - left - RIGHT;
    let y = |v: f64| -> f64 {
        let f = if c.log {
            if v <= 0.0 {
                0.0
            } else {
                ((v.max(lo)).log10() - lo.log10()) / (hi.log10() - lo.log10())
            }
        } else {
            v / hi
        };
        TOP + plot_h * (1.0 - f.clamp(0.0, 1.0))
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="{FONT}">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        W / 2.0,
        esc(&c.title)
    );
    // Grid and y ticks.
    let ticks: Vec<f64> = if c.log {
        let mut t = Vec::new();
        let mut v = lo;
        while v <= hi * 1.0001 {
            t.push(v);
            v *= 10.0;
        }
        t
    } else {
        (0..=5).map(|i| hi * i as f64 / 5.0).collect()
    };
    for t in ticks {
        let yy = y(t);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            left - 5.0,
            yy + 4.0,
            fmt_tick(t)
        );
    }
    let _ = writeln!(
        s,
        r#"<text transform="translate(16,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + plot_h / 2.0,
        esc(&c.y_label)
    );
    let gw = plot_w / groups;
    let nser = c.series.len().max(1) as f64;
    let bw = (gw * 0.8) / nser;
    let mut markers = Vec::new();
    for (gi, cat) in c.categories.iter().enumerate() {
        let gx = left + gw * gi as f64;
        for (si, ser) in c.series.iter().enumerate() {
            let v = ser.values.get(gi).copied().unwrap_or(0.0);
            let x = gx + gw * 0.1 + bw * si as f64;
            let top = y(v);
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                (bw - 1.0).max(1.0),
                (TOP + plot_h - top).max(0.0),
                COLORS[si % COLORS.len()],
                esc(&ser.label),
                fmt_tick(v)
            );
            if let Some((lo, hi)) = ser.spread.get(gi).copied().flatten() {
                // Ours over the open values: a whisker from lowest to highest.
                let cx = x + bw / 2.0;
                let (y0, y1) = (y(lo), y(hi));
                let _ = writeln!(
                    s,
                    r##"<g class="spread" stroke="#222" stroke-width="1.5"><line x1="{cx:.1}" y1="{y0:.1}" x2="{cx:.1}" y2="{y1:.1}"/><line x1="{:.1}" y1="{y0:.1}" x2="{:.1}" y2="{y0:.1}"/><line x1="{:.1}" y1="{y1:.1}" x2="{:.1}" y2="{y1:.1}"/><title>{}: {} to {}</title></g>"##,
                    cx - 3.0,
                    cx + 3.0,
                    cx - 3.0,
                    cx + 3.0,
                    esc(&ser.label),
                    fmt_tick(lo),
                    fmt_tick(hi)
                );
            }
            if let Some(p) = ser.published.get(gi).copied().flatten() {
                if !c.log || p > 0.0 {
                    markers.push(format!(
                        r##"<circle class="published" cx="{:.1}" cy="{:.1}" r="5" fill="white" fill-opacity="0.6" stroke="#222" stroke-width="2"><title>{} (published): {}</title></circle>"##,
                        x + bw / 2.0,
                        y(p),
                        esc(&ser.label),
                        fmt_tick(p)
                    ));
                }
            }
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="end" transform="rotate(-30 {:.1} {})">{}</text>"#,
            gx + gw / 2.0,
            TOP + plot_h + 16.0,
            gx + gw / 2.0,
            TOP + plot_h + 16.0,
            esc(cat)
        );
    }
    // Markers over all bars, so no bar hides one.
    for m in &markers {
        s.push_str(m);
        s.push('\n');
    }
    // Legend rows start below the rotated category labels.
    let legend_top = TOP + plot_h + labels_h + ROW_H;
    for (i, &(x, row)) in legend_at.iter().enumerate() {
        let yy = legend_top + row as f64 * ROW_H;
        if let Some(ser) = c.series.get(i) {
            let _ = writeln!(
                s,
                r#"<rect x="{x}" y="{}" width="11" height="11" fill="{}"/><text x="{}" y="{yy}">{}</text>"#,
                yy - 10.0,
                COLORS[i % COLORS.len()],
                x + 16.0,
                esc(&ser.label)
            );
        } else {
            let _ = writeln!(
                s,
                r##"<circle cx="{}" cy="{}" r="5" fill="white" stroke="#222" stroke-width="2"/><text x="{}" y="{yy}">published</text>"##,
                x + 5.0,
                yy - 4.5,
                x + 16.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// Legend entries laid out by label width, wrapping to a new row when the
/// width runs out: each entry's (x, row), and the number of rows.
fn legend_layout(labels: &[&str], left: f64) -> (Vec<(f64, usize)>, usize) {
    let (mut x, mut row) = (left + 10.0, 0);
    let mut at = Vec::new();
    for l in labels {
        let w = 16.0 + CHAR_W * l.chars().count() as f64 + 18.0;
        if x + w > W - RIGHT && x > left + 10.0 {
            x = left + 10.0;
            row += 1;
        }
        at.push((x, row));
        x += w;
    }
    let rows = if labels.is_empty() { 0 } else { row + 1 };
    (at, rows)
}

fn nice(max: f64) -> f64 {
    let e = 10f64.powf(max.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if max <= m * e {
            return m * e;
        }
    }
    10.0 * e
}

fn fmt_tick(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::Series;
    use super::*;

    #[test]
    fn a_range_over_the_open_values_is_a_whisker_that_the_axis_covers() {
        let c = Chart {
            title: "t".into(),
            y_label: "req/s".into(),
            categories: vec!["a".into()],
            series: vec![Series {
                spread: vec![Some((4.0, 900.0))],
                label: "33 KB".into(),
                values: vec![100.0],
                published: vec![Some(5.0)],
            }],
            log: true,
        };
        let s = svg(&c);
        assert_eq!(s.matches(r#"<g class="spread""#).count(), 1);
        assert!(s.contains("33 KB: 4.00 to 900"), "{s}");
        assert!(s.contains(">1.0k<"), "the axis reaches 900: {s}");
    }

    #[test]
    fn renders_bars_and_escapes_text() {
        let c = Chart {
            title: "a < b".into(),
            y_label: "req/s".into(),
            categories: vec!["x".into(), "y".into()],
            series: vec![
                Series {
                    spread: Vec::new(),
                    label: "on".into(),
                    values: vec![5.0, 1500.0],
                    published: vec![Some(4.0), None],
                },
                Series {
                    spread: Vec::new(),
                    label: "off".into(),
                    values: vec![1200.0, 0.0],
                    published: vec![None, Some(20_000.0)],
                },
            ],
            log: true,
        };
        let s = svg(&c);
        assert!(s.starts_with("<svg"));
        assert!(s.contains("a &lt; b"));
        assert_eq!(s.matches("<rect x=").count(), 4 + 2); // bars + legend
                                                          // Two hollow published markers and one legend entry for them.
        assert_eq!(s.matches(r#"<circle class="published""#).count(), 2);
        assert!(!s.contains("class=\"spread\""), "no range, no whisker");
        assert!(s.contains(">published</text>"));
        // The axis reaches the published 20,000, above every bar.
        assert!(s.contains(">100.0k</text>"), "{s}");
        // No text smaller than 12 px.
        for size in s.split("font-size=\"").skip(1) {
            let px: f64 = size.split('"').next().unwrap().parse().unwrap();
            assert!(px >= 12.0, "font-size {px}");
        }
        assert!(s.trim_end().ends_with("</svg>"));
    }
}
