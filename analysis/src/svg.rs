//! Small, dependency-free SVG charts for the HTML report: lines over time, box plots on a log
//! axis, and stacked shares. Each chart is a self-contained `<svg>` element.

use std::fmt::Write as _;

/// Colours for series, in order (colour-blind-safe, after Okabe & Ito).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// The colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for HTML and SVG.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// "Nice" tick values covering [lo, hi]: about `n` steps of 1, 2 or 5 × 10^k.
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let mut out = Vec::new();
    for k in first.. {
        // k × step, rounded off at 1e-9 so that 3 × 0.2 reads 0.6.
        let t = (k as f64 * step * 1e9).round() / 1e9;
        if t > hi + step * 1e-9 {
            break;
        }
        out.push(t);
    }
    out
}

/// A short label for a tick value.
fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        let m = format!("{:.1}", v / 1e6);
        format!("{}M", m.strip_suffix(".0").unwrap_or(&m))
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

const W: f64 = 960.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 28.0;

fn open(out: &mut String, height: f64, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="{W}" height="{height}" role="img" aria-label="{t}" font-family="system-ui, sans-serif" font-size="12"><text x="{LEFT}" y="18" font-size="14" font-weight="600">{t}</text>"#,
        t = escape(title)
    );
}

/// A series of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// Its colour, an index into [`PALETTE`] (the same series keeps its colour across charts).
    pub colour: usize,
    /// Points (x, y) in x order.
    pub points: Vec<(f64, f64)>,
}

/// Pixels a label of `text` takes at 11–12 px.
fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.6
}

/// Lines over a shared x axis (`x_label`, e.g. days), y from `y_range`.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    y_range: (f64, f64),
) -> String {
    let per_row = legend_columns(series.iter().map(|s| s.name.as_str()));
    let legend_rows = series.len().div_ceil(per_row);
    let plot_h = 220.0;
    let height = TOP + plot_h + 40.0 + 18.0 * legend_rows as f64;
    let mut out = String::new();
    open(&mut out, height, title);
    let (x0, x1) = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let (x0, x1) = if x0.is_finite() && x1 > x0 {
        (x0, x1)
    } else {
        (0.0, 1.0)
    };
    let (y0, y1) = y_range;
    let pw = W - LEFT - RIGHT;
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| TOP + plot_h - (y.clamp(y0, y1) - y0) / (y1 - y0) * plot_h;
    for t in ticks(y0, y1, 5) {
        let y = sy(t);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            tick_label(t)
        );
    }
    for t in ticks(x0, x1, 8) {
        let x = sx(t);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}" stroke="#999"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 4.0,
            TOP + plot_h + 16.0,
            tick_label(t)
        );
    }
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#444">{}</text><text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle" fill="#444">{}</text>"##,
        LEFT + pw / 2.0,
        TOP + plot_h + 32.0,
        escape(x_label),
        TOP + plot_h / 2.0,
        escape(y_label)
    );
    for s in series {
        let mut d = String::new();
        for (k, &(x, y)) in s.points.iter().enumerate() {
            if y.is_finite() {
                let _ = write!(
                    d,
                    "{}{:.1},{:.1}",
                    if k == 0 || d.is_empty() { "M" } else { "L" },
                    sx(x),
                    sy(y)
                );
            }
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.3" stroke-opacity="0.85"/>"#,
            colour(s.colour)
        );
    }
    legend(
        &mut out,
        series.iter().map(|s| (s.name.as_str(), s.colour)),
        TOP + plot_h + 44.0,
    );
    out.push_str("</svg>");
    out
}

/// How many legend entries fit on one row.
fn legend_columns<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    let widest = names.map(text_width).fold(0.0, f64::max) + 28.0;
    (((W - LEFT - RIGHT) / widest).floor() as usize).clamp(1, 4)
}

fn legend<'a>(out: &mut String, entries: impl Iterator<Item = (&'a str, usize)> + Clone, y: f64) {
    let per_row = legend_columns(entries.clone().map(|e| e.0));
    let column = (W - LEFT - RIGHT) / per_row as f64;
    for (i, (name, c)) in entries.enumerate() {
        let x = LEFT + (i % per_row) as f64 * column;
        let y = y + (i / per_row) as f64 * 18.0;
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            y - 10.0,
            colour(c),
            x + 16.0,
            y,
            escape(name)
        );
    }
}

/// One box of a box plot: the 10th, 25th, 50th, 75th and 90th percentiles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantiles {
    /// p10, p25, p50, p75, p90.
    pub q: [f64; 5],
    /// The mean, drawn as a dot.
    pub mean: f64,
    /// Observations.
    pub n: u64,
}

/// Box plots on a log axis (values + 1, so zeros show): one panel per class, one box per
/// series inside it, coloured by `colours` (indices into [`PALETTE`]).
pub fn box_panels(
    title: &str,
    x_label: &str,
    classes: &[(String, Vec<Option<Quantiles>>)],
    series: &[String],
    colours: &[usize],
) -> String {
    let row = 16.0;
    let panel_h = row * series.len() as f64 + 22.0;
    let plot_top = TOP + 8.0;
    let height = plot_top + panel_h * classes.len() as f64 + 40.0;
    let mut out = String::new();
    open(&mut out, height, title);
    let left = series.iter().map(|s| text_width(s)).fold(60.0, f64::max) + 16.0;
    let pw = W - left - RIGHT;
    let hi = classes
        .iter()
        .flat_map(|(_, qs)| qs.iter().flatten().map(|q| q.q[4].max(q.mean)))
        .fold(1.0f64, f64::max);
    let decades = (hi + 1.0).log10().ceil().max(1.0);
    let sx = |v: f64| left + (v.max(0.0) + 1.0).log10() / decades * pw;
    let bottom = plot_top + panel_h * classes.len() as f64;
    for d in 0..=decades as u32 {
        let v = 10f64.powi(d as i32) - 1.0;
        let x = sx(v);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{plot_top}" y2="{bottom:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            bottom + 14.0,
            tick_label(10f64.powi(d as i32))
        );
    }
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#444">{}</text>"##,
        left + pw / 2.0,
        bottom + 32.0,
        escape(x_label)
    );
    for (c, (class, boxes)) in classes.iter().enumerate() {
        let y0 = plot_top + panel_h * c as f64;
        let _ = write!(
            out,
            r##"<text x="8" y="{:.1}" font-weight="600">{}</text>"##,
            y0 + 14.0,
            escape(class)
        );
        for (i, b) in boxes.iter().enumerate() {
            let yc = y0 + 22.0 + row * i as f64 + row / 2.0 - 2.0;
            let _ = write!(
                out,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444" font-size="11">{}</text>"##,
                left - 6.0,
                yc + 4.0,
                escape(&series[i])
            );
            let Some(b) = b else {
                continue;
            };
            let [p10, p25, p50, p75, p90] = b.q.map(sx);
            let col = colour(colours.get(i).copied().unwrap_or(i));
            let _ = write!(
                out,
                r##"<line x1="{p10:.1}" x2="{p90:.1}" y1="{yc:.1}" y2="{yc:.1}" stroke="{col}"/><rect x="{p25:.1}" y="{:.1}" width="{:.1}" height="10" fill="{col}" fill-opacity="0.35" stroke="{col}"/><line x1="{p50:.1}" x2="{p50:.1}" y1="{:.1}" y2="{:.1}" stroke="{col}" stroke-width="2"/><circle cx="{:.1}" cy="{yc:.1}" r="2.5" fill="#000"/><title>{}: n = {}, p10 {:.1}, p25 {:.1}, median {:.1}, p75 {:.1}, p90 {:.1}, mean {:.1}</title>"##,
                yc - 5.0,
                (p75 - p25).max(1.0),
                yc - 6.0,
                yc + 6.0,
                sx(b.mean),
                escape(&series[i]),
                b.n,
                b.q[0],
                b.q[1],
                b.q[2],
                b.q[3],
                b.q[4],
                b.mean
            );
        }
    }
    out.push_str("</svg>");
    out
}

/// Horizontal 100 % bars: per series, the shares of `parts` (which add up to 1).
pub fn share_bars(title: &str, parts: &[String], series: &[(String, Vec<f64>)]) -> String {
    let row = 22.0;
    let height = TOP + 8.0 + row * series.len() as f64 + 50.0;
    let mut out = String::new();
    open(&mut out, height, title);
    let left = series
        .iter()
        .map(|(name, _)| text_width(name))
        .fold(60.0, f64::max)
        + 16.0;
    let pw = W - left - RIGHT;
    for (i, (name, shares)) in series.iter().enumerate() {
        let y = TOP + 8.0 + row * i as f64;
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444" font-size="11">{}</text>"##,
            left - 6.0,
            y + 13.0,
            escape(name)
        );
        let mut x = left;
        for (k, &share) in shares.iter().enumerate() {
            let w = share.max(0.0) * pw;
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{}" fill="{}"><title>{}: {}: {:.2} %</title></rect>"#,
                row - 6.0,
                colour(k),
                escape(name),
                escape(&parts[k]),
                share * 100.0
            );
            if w > 34.0 {
                let _ = write!(
                    out,
                    r##"<text x="{:.1}" y="{:.1}" fill="#fff" font-size="11">{:.1} %</text>"##,
                    x + 4.0,
                    y + 12.0,
                    share * 100.0
                );
            }
            x += w;
        }
    }
    legend(
        &mut out,
        parts.iter().map(String::as_str).zip(0..),
        TOP + 8.0 + row * series.len() as f64 + 24.0,
    );
    out.push_str("</svg>");
    out
}

/// One bar of [`change_bars`]: a configuration's change against the first, in percent, and
/// the half-width of its 95 % interval in percent of the first's mean.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The configuration.
    pub name: String,
    /// (mean − first's mean) / first's mean × 100.
    pub percent: f64,
    /// The configuration's interval half-width / first's mean × 100, if it has replicates.
    pub half_width: Option<f64>,
}

/// Horizontal bars from zero, one per configuration, with their 95 % intervals as whiskers:
/// how much each changes a figure against the first configuration.
pub fn change_bars(title: &str, changes: &[Change]) -> String {
    let row = 24.0;
    let height = TOP + 12.0 + row * changes.len() as f64 + 28.0;
    let mut out = String::new();
    open(&mut out, height, title);
    let left = changes
        .iter()
        .map(|c| text_width(&c.name))
        .fold(60.0, f64::max)
        + 16.0;
    let reach = changes
        .iter()
        .map(|c| c.percent.abs() + c.half_width.unwrap_or(0.0))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max);
    let ticks = ticks(-reach, reach, 8);
    let (lo, hi) = (
        ticks.first().copied().unwrap_or(-reach).min(-reach),
        ticks.last().copied().unwrap_or(reach).max(reach),
    );
    let pw = W - left - RIGHT - 40.0;
    let x = |v: f64| left + (v - lo) / (hi - lo) * pw;
    let bottom = TOP + 12.0 + row * changes.len() as f64;
    for t in &ticks {
        let _ = write!(
            out,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="{3}" stroke-width="1"/><text x="{0:.1}" y="{4:.1}" text-anchor="middle" fill="#555" font-size="11">{5} %</text>"##,
            x(*t),
            TOP + 8.0,
            bottom,
            if *t == 0.0 { "#444" } else { "#e5e5e5" },
            bottom + 14.0,
            tick_label(*t)
        );
    }
    for (i, c) in changes.iter().enumerate() {
        let y = TOP + 12.0 + row * i as f64;
        let (a, b) = (x(0.0_f64.min(c.percent)), x(0.0_f64.max(c.percent)));
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444" font-size="11">{}</text><rect x="{a:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {:+.1} %</title></rect>"##,
            left - 6.0,
            y + 14.0,
            escape(&c.name),
            y + 3.0,
            (b - a).max(0.5),
            row - 8.0,
            colour(i),
            escape(&c.name),
            c.percent
        );
        if let Some(h) = c.half_width.filter(|h| h.is_finite()) {
            let mid = y + row / 2.0 - 1.0;
            let _ = write!(
                out,
                r##"<line x1="{:.1}" y1="{mid:.1}" x2="{:.1}" y2="{mid:.1}" stroke="#222" stroke-width="1.2"/>"##,
                x(c.percent - h),
                x(c.percent + h)
            );
        }
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" fill="#222" font-size="11">{:+.1} %</text>"##,
            x(hi) + 4.0,
            y + 14.0,
            c.percent
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_bars_run_from_zero_with_their_intervals() {
        let s = change_bars(
            "work",
            &[
                Change {
                    name: "up".into(),
                    percent: 4.0,
                    half_width: Some(1.0),
                },
                Change {
                    name: "down<".into(),
                    percent: -70.0,
                    half_width: None,
                },
            ],
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("up: +4.0 %") && s.contains("down&lt;: -70.0 %"));
        // One whisker: the configuration with replicates.
        assert_eq!(s.matches(r##"stroke="#222""##).count(), 1);
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 1.0, 5), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(
            ticks(0.0, 330.0, 8),
            [0.0, 50.0, 100.0, 150.0, 200.0, 250.0, 300.0]
        );
        assert_eq!(tick_label(20000.0), "20k");
        assert_eq!(tick_label(0.5), "0.50");
    }

    #[test]
    fn charts_are_single_svg_elements_with_escaped_names() {
        let s = line_chart(
            "u",
            "days",
            "share",
            &[Series {
                name: "a<b".into(),
                colour: 0,
                points: vec![(0.0, 0.1), (1.0, 0.9)],
            }],
            (0.0, 1.0),
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("a&lt;b") && !s.contains("a<b"));
        assert!(s.contains(r#"<path d="M64.0,"#), "{s}");
    }
}
