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

pub(crate) const FONT: &str = "sans-serif";
// Text sizes (plotters points; SVG px are about 0.8 of them) are chosen so
// the smallest text stays at least 12 px when the 1280-px graph is scaled
// down to a 1,100-px report page.
const W: u32 = 1280;
const H: u32 = 720;

pub(crate) fn register_font() {
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

/// A tick value as people write it: at most six decimals, trailing zeros
/// dropped (0.6, not the 0.6000000000000001 that summing steps gives).
pub fn axis_number(v: f64) -> String {
    let t = format!("{v:.6}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".to_string()
    } else {
        t.to_string()
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

/// Holds that come from window and congestion limits rather than the send
/// policy (the why-trace's `cwnd`, `window` and `sws`).
fn is_flow_rule(rule: &str) -> bool {
    matches!(rule, "cwnd" | "window" | "sws")
}

/// A colour per hold rule, so the legend names what each shade is.
fn rule_color(rule: &str) -> RGBColor {
    match rule {
        "nagle" => RGBColor(255, 160, 30),
        "minshall" => RGBColor(225, 90, 170),
        "doupnik" => RGBColor(140, 90, 220),
        "naglim" => RGBColor(200, 170, 0),
        "cork" => RGBColor(170, 110, 60),
        "cwnd" => RGBColor(70, 130, 230),
        "window" => RGBColor(40, 170, 170),
        "sws" => RGBColor(130, 130, 130),
        _ => RGBColor(255, 120, 60),
    }
}

/// Spans merged where they touch or overlap, in time order (seconds).
fn merge_spans<'a>(spans: impl Iterator<Item = &'a Span>) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = spans
        .map(|s| (s.t0, s.t1))
        .filter(|(a, b)| b >= a)
        .collect();
    v.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 + 1e-9 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The path's round trip as the graph shows it: the median time from a data
/// segment (not a retransmission) to the first ACK covering it.
fn round_trip(ts: &TimeSeq) -> f64 {
    let mut samples = Vec::new();
    let mut j = 0;
    for d in ts.data.iter().filter(|d| !d.retransmit) {
        while j < ts.acks.len() && ts.acks[j].0 < d.t {
            j += 1;
        }
        if let Some(&(t, _)) = ts.acks[j..].iter().find(|&&(_, a)| a >= d.hi) {
            samples.push(t - d.t);
        }
    }
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
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
            (FONT, 26).into_font(),
        )
        .margin(12)
        .x_label_area_size(58)
        .y_label_area_size(110)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc(format!("time ({unit})"))
        .y_desc("sequence number (bytes, relative to the ISN)")
        .y_label_formatter(&|v| bytes_label(*v))
        .x_label_formatter(&|v| axis_number(*v))
        .label_style((FONT, 18))
        .axis_desc_style((FONT, 19))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;

    let px_per_x = f64::from(W - 130) / (x1 - x0);
    // Holds, one colour per rule, named in the legend. The send policy's
    // holds are the story and always shown; the flow-control ones (cwnd,
    // peer window, sender SWS) last up to a round trip whenever ACKs clock
    // a transfer, so only those longer than that are shaded, and faintly.
    let rtt = round_trip(ts);
    let flow_min = 1.5 * rtt;
    let mut rules: Vec<&str> = Vec::new();
    for sp in &ts.holds {
        if !rules.contains(&sp.label.as_str()) {
            rules.push(&sp.label);
        }
    }
    rules.sort_by_key(|r| (is_flow_rule(r), *r));
    let label_style = TextStyle::from((FONT, 18).into_font()).color(&RGBColor(90, 60, 20));
    for rule in rules {
        let flow = is_flow_rule(rule);
        let color = rule_color(rule);
        // Each hold is judged on its own length before merging: a transfer
        // held by cwnd between every two ACKs is ACK clocking, not a stall,
        // and Nagle waiting one round trip for an ACK is Nagle working.
        let of_rule = || ts.holds.iter().filter(|sp| sp.label == rule);
        let long = merge_spans(of_rule().filter(|sp| sp.t1 - sp.t0 > flow_min));
        let short = if flow {
            Vec::new()
        } else {
            merge_spans(of_rule().filter(|sp| sp.t1 - sp.t0 <= flow_min))
        };
        let layers = [
            (
                short,
                color.mix(0.10),
                format!("held by {rule}, each hold under 1.5 round trips"),
            ),
            (
                long,
                color.mix(if flow { 0.16 } else { 0.28 }),
                if flow {
                    format!("held by {rule} (over 1.5 round trips)")
                } else {
                    format!("held by {rule} (send policy)")
                },
            ),
        ];
        for (i, (spans, fill, legend)) in layers.into_iter().enumerate() {
            if spans.is_empty() {
                continue;
            }
            chart
                .draw_series(
                    spans
                        .iter()
                        .map(|&(a, b)| Rectangle::new([(a * k, y0), (b * k, y1)], fill.filled())),
                )?
                .label(legend)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], fill.filled()));
            // Names on the plot too, where a long hold leaves room.
            for &(a, b) in spans.iter().filter(|_| i == 1) {
                if (b - a) * k * px_per_x > 30.0 {
                    chart.draw_series(std::iter::once(Text::new(
                        rule.to_string(),
                        (a * k, y1 - (y1 - y0) * 0.03),
                        label_style.clone(),
                    )))?;
                }
            }
        }
    }
    // Stalls the analyzer found: a band along the time axis.
    let stall_fill = RGBColor(230, 60, 60).mix(0.55);
    let band = y0 + (y1 - y0) * 0.04;
    let stalls = merge_spans(ts.stalls.iter());
    if !stalls.is_empty() {
        chart
            .draw_series(
                stalls.iter().map(|&(a, b)| {
                    Rectangle::new([(a * k, y0), (b * k, band)], stall_fill.filled())
                }),
            )?
            .label("stall found by diagnose")
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], stall_fill.filled())
            });
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
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, 18))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::axis_number;

    #[test]
    fn tick_labels_read_as_people_write_them() {
        assert_eq!(axis_number(0.1 + 0.2 + 0.3), "0.6");
        assert_eq!(axis_number(0.6000000000000001), "0.6");
        assert_eq!(axis_number(40.0), "40");
        assert_eq!(axis_number(-0.0000001), "0");
        assert_eq!(axis_number(2.5e-5), "0.000025");
    }
}
