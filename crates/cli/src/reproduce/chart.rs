//! Grouped bar charts as standalone SVG: opens in any browser or viewer and
//! needs no fonts installed (text is left to the viewer). The document's own
//! values are hollow markers on the bars they compare with; text is at least
//! 12 px.

use super::Chart;
use std::fmt::Write;

const W: f64 = 760.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 100.0;
/// Text size of ticks, axis and legend labels (px).
const FONT: f64 = 13.0;
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
    let plot_h = H - TOP - BOTTOM;
    let plot_w = W - LEFT - RIGHT;
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
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="{FONT}">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
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
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 5.0,
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
    let groups = c.categories.len().max(1) as f64;
    let gw = plot_w / groups;
    let nser = c.series.len().max(1) as f64;
    let bw = (gw * 0.8) / nser;
    let mut markers = Vec::new();
    for (gi, cat) in c.categories.iter().enumerate() {
        let gx = LEFT + gw * gi as f64;
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
    // Legend: entries laid out by label width (about 7.5 px a character at
    // 13 px), wrapping to a new row when the width runs out.
    let (mut lx, mut ly) = (LEFT + 10.0, H - 36.0);
    let place = |label: &str, lx: &mut f64, ly: &mut f64| {
        let w = 16.0 + 7.5 * label.chars().count() as f64 + 18.0;
        if *lx + w > W - RIGHT && *lx > LEFT + 10.0 {
            *lx = LEFT + 10.0;
            *ly += 17.0;
        }
        let at = (*lx, *ly);
        *lx += w;
        at
    };
    for (si, ser) in c.series.iter().enumerate() {
        let (x, yy) = place(&ser.label, &mut lx, &mut ly);
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="{}" width="11" height="11" fill="{}"/><text x="{}" y="{yy}">{}</text>"#,
            yy - 10.0,
            COLORS[si % COLORS.len()],
            x + 16.0,
            esc(&ser.label)
        );
    }
    if !markers.is_empty() {
        let (x, yy) = place("published", &mut lx, &mut ly);
        let _ = writeln!(
            s,
            r##"<circle cx="{}" cy="{}" r="5" fill="white" stroke="#222" stroke-width="2"/><text x="{}" y="{yy}">published</text>"##,
            x + 5.0,
            yy - 4.5,
            x + 16.0
        );
    }
    s.push_str("</svg>\n");
    s
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
    fn renders_bars_and_escapes_text() {
        let c = Chart {
            title: "a < b".into(),
            y_label: "req/s".into(),
            categories: vec!["x".into(), "y".into()],
            series: vec![
                Series {
                    label: "on".into(),
                    values: vec![5.0, 1500.0],
                    published: vec![Some(4.0), None],
                },
                Series {
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
