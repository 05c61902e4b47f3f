//! PNG line charts of bench curves: plotters' bitmap backend with the DejaVu Sans font compiled
//! in (the `ab_glyph` text backend), so plotting needs no system fonts.

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use shingled_bench::Series;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        // DejaVu Sans is a valid TrueType font; a failure would only mean unlabelled axes.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

/// A tick label without float noise (`0.7`, `12`, `3156`).
fn short(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Draws `series` (and their paper points, as crosses, labelled "(paper, fitted)" when a model
/// constant was fitted to them: `Series::paper_fitted`) on one chart; `log_y` for curves that
/// span decades (fig3's SMR curve, the PB cliff).
pub fn line_chart(path: &Path, title: &str, series: &[Series], log_y: bool) -> Result<()> {
    line_chart_xy(path, title, series, false, log_y)
}

/// [`line_chart`] with a choice of logarithmic x axis too (a latency CDF spans decades of ms).
pub fn line_chart_xy(path: &Path, title: &str, series: &[Series], log_x: bool, log_y: bool) -> Result<()> {
    chart(path, title, series, &[], log_x, log_y)
}

/// [`line_chart`] with, for series `i`, the points `validated[i]` drawn as hollow squares of
/// its colour, labelled "NAME (full run)": a sampled curve's points checked by full simulations.
pub fn line_chart_validated(
    path: &Path,
    title: &str,
    series: &[Series],
    validated: &[Vec<(f64, f64)>],
) -> Result<()> {
    chart(path, title, series, validated, false, false)
}

fn chart(
    path: &Path,
    title: &str,
    series: &[Series],
    validated: &[Vec<(f64, f64)>],
    log_x: bool,
    log_y: bool,
) -> Result<()> {
    register_font();
    let pts = || {
        series.iter().flat_map(|s| s.points.iter().chain(s.paper.iter())).chain(validated.iter().flatten())
    };
    if pts().next().is_none() {
        return Err(anyhow!("nothing to plot"));
    }
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in pts() {
        if !log_x || x > 0.0 {
            x0 = x0.min(x);
            x1 = x1.max(x);
        }
        if !log_y || y > 0.0 {
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let (x_label, y_label) = (series[0].x_label.clone(), series[0].y_label.clone());
    png_output(path)?;
    let (w, h) = (1000, 620);
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let colors =
        [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44), RGBColor(148, 103, 189)];
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .label_style(("sans-serif", 16))
                .x_label_formatter(&|v| short(*v))
                .y_label_formatter(&|v| short(*v))
                .draw()
                .map_err(|e| anyhow!("{e}"))?;
            for (i, s) in series.iter().enumerate() {
                let c = colors[i % colors.len()];
                let line: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| (!log_y || p.1 > 0.0) && (!log_x || p.0 > 0.0))
                    .collect();
                chart
                    .draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))
                    .map_err(|e| anyhow!("{e}"))?
                    .label(s.name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
                if line.len() <= 40 {
                    chart
                        .draw_series(line.iter().map(|&p| Circle::new(p, 3, c.filled())))
                        .map_err(|e| anyhow!("{e}"))?;
                }
                if !s.paper.is_empty() {
                    let paper: Vec<(f64, f64)> =
                        s.paper.iter().copied().filter(|p| !log_y || p.1 > 0.0).collect();
                    chart
                        .draw_series(paper.iter().map(|&p| Cross::new(p, 7, c.stroke_width(2))))
                        .map_err(|e| anyhow!("{e}"))?
                        .label(format!("{} (paper{})", s.name, if s.paper_fitted { ", fitted" } else { "" }))
                        .legend(move |(x, y)| Cross::new((x + 10, y), 6, c.stroke_width(2)));
                }
                if let Some(full) = validated.get(i).filter(|v| !v.is_empty()) {
                    let full: Vec<(f64, f64)> =
                        full.iter().copied().filter(|p| !log_y || p.1 > 0.0).collect();
                    let square = move |(x, y): (f64, f64)| {
                        EmptyElement::at((x, y)) + Rectangle::new([(-6, -6), (6, 6)], c.stroke_width(2))
                    };
                    chart
                        .draw_series(full.iter().map(|&p| square(p)))
                        .map_err(|e| anyhow!("{e}"))?
                        .label(format!("{} (full run)", s.name))
                        .legend(move |(x, y)| {
                            Rectangle::new([(x + 4, y - 6), (x + 16, y + 6)], c.stroke_width(2))
                        });
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 15))
                .draw()
                .map_err(|e| anyhow!("{e}"))?;
        }};
    }
    let mut builder = ChartBuilder::on(&root);
    builder.caption(title, ("sans-serif", 20)).margin(15).x_label_area_size(45).y_label_area_size(70);
    let (ylo, yhi) =
        if log_y { (y0.max(1e-6) / 1.5, y1 * 1.5) } else { (0.0, if y1 > 0.0 { y1 * 1.1 } else { 1.0 }) };
    let (xlo, xhi) = (x0.max(1e-9) / 1.2, x1 * 1.2);
    match (log_x, log_y) {
        (false, true) => {
            draw!(builder.build_cartesian_2d(x0..x1, (ylo..yhi).log_scale()).map_err(|e| anyhow!("{e}"))?)
        }
        (false, false) => draw!(builder.build_cartesian_2d(x0..x1, ylo..yhi).map_err(|e| anyhow!("{e}"))?),
        (true, true) => draw!(builder
            .build_cartesian_2d((xlo..xhi).log_scale(), (ylo..yhi).log_scale())
            .map_err(|e| anyhow!("{e}"))?),
        (true, false) => {
            draw!(builder.build_cartesian_2d((xlo..xhi).log_scale(), ylo..yhi).map_err(|e| anyhow!("{e}"))?)
        }
    }
    root.present().map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
    drop(root);
    save_png(path, &pixels, w, h)
}

/// One group of bars of [`bar_chart`]: a name (legend) and one value per category (`None`
/// leaves a gap).
pub struct BarSeries {
    /// Legend text.
    pub name: String,
    /// One value per category.
    pub values: Vec<Option<f64>>,
}

/// Grouped vertical bars: one slot per category (labelled under the axis), one bar per series
/// in each slot. The legend is drawn when there are several series.
pub fn bar_chart(
    path: &Path,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[BarSeries],
) -> Result<()> {
    register_font();
    let n = categories.len();
    if n == 0 || series.is_empty() {
        return Err(anyhow!("nothing to plot"));
    }
    let y1 = series.iter().flat_map(|s| s.values.iter().flatten()).fold(0.0f64, |a, &v| a.max(v));
    // Headroom above the tallest bar: 10%, plus the legend's height (about 10 + 22 px per series
    // of a ~520 px plot) when one is drawn, so that the legend never covers a bar.
    let legend = if series.len() > 1 { (10.0 + 22.0 * series.len() as f64) / 520.0 } else { 0.0 };
    let hi = if y1 > 0.0 { y1 * 1.1 / (1.0 - legend.min(0.6)) } else { 1.0 };
    let width = (n as u32 * 90).clamp(800, 2400);
    png_output(path)?;
    let (w, h) = (width, 620);
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
    ];
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..n as f64, 0.0..hi)
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_label)
        .label_style(("sans-serif", 16))
        .y_label_formatter(&|v| short(*v))
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let slot = 0.8 / series.len() as f64;
    for (si, s) in series.iter().enumerate() {
        let c = colors[si % colors.len()];
        let bars = s.values.iter().enumerate().filter_map(|(i, v)| {
            let x0 = i as f64 + 0.1 + si as f64 * slot;
            v.map(|v| Rectangle::new([(x0, 0.0), (x0 + slot * 0.95, v)], c.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(|e| anyhow!("{e}"))?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()));
    }
    // Category labels under the axis, centred on each slot, in pixels of the whole image.
    let style = TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let max_chars = ((width as usize / n) / 8).max(4);
    for (i, cat) in categories.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let text: String = if cat.chars().count() > max_chars {
            cat.chars().take(max_chars - 1).chain(std::iter::once('…')).collect()
        } else {
            cat.clone()
        };
        root.draw(&Text::new(text, (x, y + 8), style.clone())).map_err(|e| anyhow!("{e}"))?;
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(|e| anyhow!("{e}"))?;
    }
    root.present().map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
    drop(chart);
    drop(root);
    save_png(path, &pixels, w, h)
}

/// Checks before drawing that `path` names a PNG file that can be written: the charts are PNG
/// only, and a device, FIFO or link is handled as every output is (`shingled_core::output`).
pub fn png_output(path: &Path) -> Result<()> {
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
        return Err(anyhow!(
            "{}: only PNG charts are drawn; name the file with a .png extension",
            path.display()
        ));
    }
    shingled_core::output::check_output(path).map_err(|e| anyhow!("writing {e}"))
}

/// Encodes the RGB `pixels` (`w` x `h`) as a PNG and writes it to `path`.
fn save_png(path: &Path, pixels: &[u8], w: u32, h: u32) -> Result<()> {
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut wr| wr.write_image_data(pixels))
        .map_err(|e| anyhow!("encoding {}: {e}", path.display()))?;
    crate::out::file(path, bytes)
}
