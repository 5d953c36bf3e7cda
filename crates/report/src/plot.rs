//! tcptrace-style time-sequence graphs (Cheshire found his stall in one):
//! each data segment a vertical bar at (time, sequence range), the cumulative
//! ACK line, the receive window's right edge, retransmissions, SACK blocks and
//! NAKs, and shaded spans where data was held (with the rule's name) or where
//! the analyzer found a stall.
//!
//! SVG or PNG by the file's extension. Text is measured (and, for PNG, drawn)
//! with a font compiled into the binary, so no system font is needed.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;
use tinygram_analyze::timeseq::{Span, TimeSeq};
use tinygram_proto::{Instant, TraceEvent};

const FONT: &str = "sans-serif";
const W: u32 = 1280;
const H: u32 = 720;

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let font = epaint_default_fonts::UBUNTU_LIGHT;
        for style in [FontStyle::Normal, FontStyle::Bold] {
            plotters::style::register_font(FONT, style, font)
                .unwrap_or_else(|_| panic!("embedded font parses"));
        }
    });
}

/// Spans where the sender held data, from its why-trace: each `Release` covers
/// `[at - held, at]`; a hold never released runs to `end`. Times in seconds.
pub fn holds_from_trace(trace: &[TraceEvent], end: Instant) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut open: Option<(Instant, &'static str)> = None;
    for ev in trace {
        match ev {
            TraceEvent::Hold { at, rule, .. } => {
                open.get_or_insert((*at, rule.name()));
            }
            TraceEvent::Release { at, rule, held, .. } => {
                let t1 = at.as_secs_f64();
                spans.push(Span {
                    t0: t1 - held.as_secs_f64(),
                    t1,
                    label: rule.name().to_string(),
                });
                open = None;
            }
            _ => {}
        }
    }
    if let Some((t0, rule)) = open {
        if end > t0 {
            spans.push(Span {
                t0: t0.as_secs_f64(),
                t1: end.as_secs_f64(),
                label: rule.to_string(),
            });
        }
    }
    spans
}

/// Writes the graph to `path`: SVG for `.svg`, PNG for `.png`.
pub fn render(ts: &TimeSeq, path: &Path) -> Result<(), String> {
    register_font();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") => {
            let root = SVGBackend::new(path, (W, H)).into_drawing_area();
            draw(&root, ts).map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())
        }
        Some("png") => {
            let root = BitMapBackend::new(path, (W, H)).into_drawing_area();
            draw(&root, ts).map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())
        }
        _ => Err(format!(
            "{}: plot files must end in .svg or .png",
            path.display()
        )),
    }
}

/// Renders the graph as an SVG document in memory.
pub fn render_svg_string(ts: &TimeSeq) -> Result<String, String> {
    register_font();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, H)).into_drawing_area();
        draw(&root, ts).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(s)
}

/// A time axis unit that keeps tick labels short.
fn time_unit(span: f64) -> (f64, &'static str) {
    if span < 0.002 {
        (1e6, "µs")
    } else if span < 2.0 {
        (1e3, "ms")
    } else {
        (1.0, "s")
    }
}

fn bytes_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.2} MB", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0} kB", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ts: &TimeSeq,
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    // Extent of everything drawn.
    let mut t_lo = f64::INFINITY;
    let mut t_hi = f64::NEG_INFINITY;
    let mut s_lo = u64::MAX;
    let mut s_hi = 0u64;
    for d in &ts.data {
        t_lo = t_lo.min(d.t);
        t_hi = t_hi.max(d.t);
        s_lo = s_lo.min(d.lo);
        s_hi = s_hi.max(d.hi);
    }
    for &(t, a) in &ts.acks {
        t_lo = t_lo.min(t);
        t_hi = t_hi.max(t);
        if a > 0 {
            s_hi = s_hi.max(a);
        }
    }
    if !t_lo.is_finite() {
        t_lo = 0.0;
        t_hi = 1.0;
    }
    if s_lo == u64::MAX {
        s_lo = 0;
    }
    // The window edge can run far above the data; show a little of it.
    let data_span = (s_hi.saturating_sub(s_lo)).max(1);
    let top = ts
        .window_edge
        .iter()
        .map(|&(_, e)| e)
        .max()
        .unwrap_or(s_hi)
        .min(s_hi + data_span / 4)
        .max(s_hi);
    let span = (t_hi - t_lo).max(1e-6);
    let (k, unit) = time_unit(span);
    let x0 = (t_lo - span * 0.02) * k;
    let x1 = (t_hi + span * 0.02) * k;
    let y0 = s_lo.saturating_sub(data_span / 50) as f64;
    let y1 = top as f64 + data_span as f64 / 50.0 + 1.0;

    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("time-sequence graph: {}", ts.title),
            (FONT, 22).into_font(),
        )
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(90)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc(format!("time ({unit})"))
        .y_desc("sequence number (bytes, relative to the ISN)")
        .y_label_formatter(&|v| bytes_label(*v))
        .x_label_formatter(&|v| format!("{v}"))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;

    let hold_fill = RGBColor(255, 200, 80).mix(0.35);
    let stall_fill = RGBColor(230, 60, 60).mix(0.55);
    let label_style = TextStyle::from((FONT, 13).into_font()).color(&RGBColor(120, 70, 0));
    let px_per_x = f64::from(W - 110) / (x1 - x0);
    for (spans, fill, legend) in [
        (&ts.holds, hold_fill, "held (why-trace rule)"),
        (&ts.stalls, stall_fill, "stall found by diagnose"),
    ] {
        let mut first = true;
        let is_hold = std::ptr::eq(spans, &ts.holds);
        // Holds shade the whole height; stalls are a band along the time axis.
        let (lo, hi) = if is_hold {
            (y0, y1)
        } else {
            (y0, y0 + (y1 - y0) * 0.04)
        };
        for sp in spans.iter() {
            let (a, b) = (sp.t0 * k, sp.t1 * k);
            let series = chart.draw_series(std::iter::once(Rectangle::new(
                [(a, lo), (b, hi)],
                fill.filled(),
            )))?;
            if first {
                series.label(legend).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], fill.filled())
                });
                first = false;
            }
            if (b - a) * px_per_x > 30.0 && is_hold {
                chart.draw_series(std::iter::once(Text::new(
                    sp.label.clone(),
                    (a, y1 - (y1 - y0) * 0.03),
                    label_style.clone(),
                )))?;
            }
        }
    }

    // Receive window's right edge and cumulative ACK, as step lines.
    let step = |pts: &[(f64, u64)]| -> Vec<(f64, f64)> {
        let mut v = Vec::with_capacity(pts.len() * 2);
        let mut last: Option<f64> = None;
        for &(t, y) in pts {
            let y = (y as f64).min(y1);
            if let Some(ly) = last {
                v.push((t * k, ly));
            }
            v.push((t * k, y));
            last = Some(y);
        }
        v
    };
    let green = RGBColor(40, 150, 60);
    chart
        .draw_series(LineSeries::new(
            step(&ts.window_edge),
            green.stroke_width(2),
        ))?
        .label("receive window right edge")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], green.stroke_width(2)));
    let ackc = RGBColor(120, 120, 120);
    chart
        .draw_series(LineSeries::new(step(&ts.acks), ackc.stroke_width(2)))?
        .label("cumulative ACK")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], ackc.stroke_width(2)));

    // SACK blocks: short purple bars beside the ACK line.
    let purple = RGBColor(150, 60, 200);
    let mut first = true;
    for &(t, lo, hi) in &ts.sacks {
        let s = chart.draw_series(std::iter::once(PathElement::new(
            vec![(t * k, lo as f64), (t * k, hi as f64)],
            purple.stroke_width(3),
        )))?;
        if first {
            s.label("SACK block").legend(move |(x, y)| {
                PathElement::new(vec![(x + 7, y - 5), (x + 7, y + 5)], purple.stroke_width(3))
            });
            first = false;
        }
    }
    let red = RGBColor(210, 30, 30);
    if !ts.naks.is_empty() {
        chart
            .draw_series(
                ts.naks
                    .iter()
                    .map(|&(t, s)| Cross::new((t * k, s as f64), 5, red.stroke_width(2))),
            )?
            .label("NAK (RFC 1106)")
            .legend(move |(x, y)| Cross::new((x + 7, y), 5, red.stroke_width(2)));
    }

    // Data segments: vertical bars with end ticks, like tcptrace.
    let tick = (x1 - x0) / f64::from(W) * 3.0;
    let black = RGBColor(20, 20, 20);
    let blue = RGBColor(30, 90, 220);
    for (sel, color, name) in [
        (0u8, black, "data segment"),
        (1, blue, "sub-MSS segment"),
        (2, red, "retransmission"),
    ] {
        let marks: Vec<_> = ts
            .data
            .iter()
            .filter(|d| match sel {
                0 => !d.retransmit && !d.small,
                1 => !d.retransmit && d.small,
                _ => d.retransmit,
            })
            .collect();
        if marks.is_empty() {
            continue;
        }
        chart
            .draw_series(marks.iter().map(|d| {
                let x = d.t * k;
                let (lo, hi) = (d.lo as f64, d.hi as f64);
                PathElement::new(
                    vec![
                        (x - tick, lo),
                        (x + tick, lo),
                        (x, lo),
                        (x, hi),
                        (x - tick, hi),
                        (x + tick, hi),
                    ],
                    color.stroke_width(if sel == 2 { 2 } else { 1 }),
                )
            }))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x + 7, y - 6), (x + 7, y + 6)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, 14))
        .draw()?;
    Ok(())
}
