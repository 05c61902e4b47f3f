//! PNG charts: plotters' bitmap backend with the DejaVu Sans font compiled in (the `ab_glyph`
//! text backend), so plotting needs no system fonts.
//!
//! Every chart is one PNG at exactly the path named: a [`Figure`] of one or more panels (line
//! charts or grouped bars) tiled in a grid under one title that says what was run (command or
//! experiment, trace, mode, set-up), with notes under the panels. Each panel's legend sits in
//! its own column to the right of the plot, so it never covers data.

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
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

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("{e}")
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

/// One figure: panels tiled `cols` to a row under a title and its subtitle lines, with notes
/// (what the markers mean, where the paper's values are or why there are none) under them.
pub struct Figure {
    /// What the figure shows, as the first line.
    pub title: String,
    /// The context: trace, mode, set-up, window, sampling, one line each.
    pub subtitle: Vec<String>,
    /// Notes under the panels.
    pub notes: Vec<String>,
    /// The panels, row by row.
    pub panels: Vec<Panel>,
    /// Panels per row (at least 1).
    pub cols: usize,
}

/// One panel of a [`Figure`].
pub struct Panel {
    /// The panel's caption.
    pub title: String,
    /// What it draws.
    pub kind: PanelKind,
}

/// What a panel draws.
pub enum PanelKind {
    /// Lines of `series` (their paper points as crosses, labelled "(paper, fitted)" when a
    /// model constant was fitted to them: `Series::paper_fitted`); for series `i`, the points
    /// `validated[i]` as hollow squares of its colour ("NAME (full run)"), and, when
    /// `overlay[i]`, the line black, thinner and dashed on top of the others (a reference curve that may
    /// coincide with another: LRU's exact hit ratio over its sampled one).
    Lines {
        series: Vec<Series>,
        validated: Vec<Vec<(f64, f64)>>,
        overlay: Vec<bool>,
        log_x: bool,
        log_y: bool,
    },
    /// Grouped vertical bars: one slot per category (labelled under the axis), one bar per
    /// series in each slot.
    Bars { y_label: String, categories: Vec<String>, series: Vec<BarSeries> },
    /// A grid of cells, one row per `rows` entry and one column per `cols` entry, each showing
    /// its value (a ratio to its row's best, at least 1; `None` leaves the cell blank) as text
    /// and as a colour from dark green at 1 to near white at `3` and above (log scale).
    Heat { rows: Vec<String>, cols: Vec<String>, values: Vec<Vec<Option<f64>>> },
}

impl Panel {
    /// A panel of plain lines.
    pub fn lines(title: impl Into<String>, series: Vec<Series>, log_x: bool, log_y: bool) -> Panel {
        Panel {
            title: title.into(),
            kind: PanelKind::Lines { series, validated: Vec::new(), overlay: Vec::new(), log_x, log_y },
        }
    }
}

impl Figure {
    /// A figure of one panel titled `title` (the panel itself has no caption of its own).
    pub fn single(title: impl Into<String>, panel: PanelKind) -> Figure {
        Figure {
            title: title.into(),
            subtitle: Vec::new(),
            notes: Vec::new(),
            panels: vec![Panel { title: String::new(), kind: panel }],
            cols: 1,
        }
    }
}

/// One group of bars of a bar panel: a name (legend) and one value per category (`None` leaves
/// a gap).
pub struct BarSeries {
    /// Legend text.
    pub name: String,
    /// One value per category.
    pub values: Vec<Option<f64>>,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Draws `series` on one chart; `log_y` for curves that span decades (fig3's SMR curve, the PB
/// cliff).
pub fn line_chart(path: &Path, title: &str, series: &[Series], log_y: bool) -> Result<()> {
    let panel = PanelKind::Lines {
        series: series.to_vec(),
        validated: Vec::new(),
        overlay: Vec::new(),
        log_x: false,
        log_y,
    };
    draw(path, &Figure::single(title, panel))
}

/// How a legend entry is drawn.
enum Mark {
    Line(RGBColor, u32, bool),
    Cross(RGBColor),
    Square(RGBColor),
    Bar(RGBColor),
}

const PANEL_H: u32 = 470;
const LEGEND_W: u32 = 230;
/// Characters of a legend line before it wraps.
const LEGEND_CHARS: usize = 26;

/// Splits `text` into lines of at most `width` characters at spaces (a longer word stays
/// whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Draws `fig` and writes it as one PNG to `path`.
pub fn draw(path: &Path, fig: &Figure) -> Result<()> {
    register_font();
    if fig.panels.is_empty() {
        return Err(anyhow!("nothing to plot"));
    }
    png_output(path)?;
    let cols = fig.cols.clamp(1, fig.panels.len());
    let rows = fig.panels.len().div_ceil(cols);
    // A bar panel widens with its categories so their labels stay readable.
    let panel_w = fig
        .panels
        .iter()
        .map(|p| match &p.kind {
            PanelKind::Bars { categories, .. } => (categories.len() as u32 * 90).clamp(640, 2200),
            PanelKind::Lines { .. } => 640,
            PanelKind::Heat { cols, .. } => {
                (HEAT_LABEL_W + cols.len() as u32 * HEAT_CELL_W).saturating_sub(LEGEND_W)
            }
        })
        .max()
        .unwrap_or(640)
        + LEGEND_W;
    let w = panel_w * cols as u32;
    let chars = (w as usize / 11).max(40);
    let title_lines = wrap(&fig.title, chars);
    let sub_lines: Vec<String> = fig.subtitle.iter().flat_map(|s| wrap(s, w as usize / 9)).collect();
    let note_lines: Vec<String> = fig.notes.iter().flat_map(|s| wrap(s, w as usize / 8)).collect();
    let head = 14 + 26 * title_lines.len() as u32 + 20 * sub_lines.len() as u32 + 8;
    let foot = if note_lines.is_empty() { 0 } else { 10 + 19 * note_lines.len() as u32 };
    let h = head + PANEL_H * rows as u32 + foot;
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (top, rest) = root.split_vertically(head);
        let (body, bottom) = rest.split_vertically(PANEL_H * rows as u32);
        let centre = Pos::new(HPos::Center, VPos::Top);
        let mut y = 12;
        for l in &title_lines {
            top.draw(&Text::new(
                l.clone(),
                (w as i32 / 2, y),
                TextStyle::from(("sans-serif", 21).into_font()).pos(centre),
            ))
            .map_err(err)?;
            y += 26;
        }
        for l in &sub_lines {
            let style = ("sans-serif", 15).into_font().color(&RGBColor(60, 60, 60)).pos(centre);
            top.draw(&Text::new(l.clone(), (w as i32 / 2, y), style)).map_err(err)?;
            y += 20;
        }
        for (i, l) in note_lines.iter().enumerate() {
            let style = ("sans-serif", 14).into_font().color(&RGBColor(60, 60, 60));
            bottom.draw(&Text::new(l.clone(), (20, 6 + 19 * i as i32), style)).map_err(err)?;
        }
        let areas = body.split_evenly((rows, cols));
        for (panel, area) in fig.panels.iter().zip(&areas) {
            draw_panel(panel, area)?;
        }
        root.present().map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
    }
    save_png(path, &pixels, w, h)
}

/// Draws the legend `entries` into `area` (the column right of a panel's plot).
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(String, Mark)]) -> Result<()> {
    let mut y = 46;
    for (name, mark) in entries {
        let (x0, x1) = (4, 30);
        match *mark {
            Mark::Line(c, width, false) => {
                area.draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(width))).map_err(err)?
            }
            Mark::Line(c, width, true) => {
                for s in [x0, x0 + 10, x0 + 20] {
                    area.draw(&PathElement::new(vec![(s, y), (s + 6, y)], c.stroke_width(width)))
                        .map_err(err)?
                }
            }
            Mark::Cross(c) => area.draw(&Cross::new((x0 + 13, y), 6, c.stroke_width(2))).map_err(err)?,
            Mark::Square(c) => area
                .draw(&Rectangle::new([(x0 + 7, y - 6), (x0 + 19, y + 6)], c.stroke_width(2)))
                .map_err(err)?,
            Mark::Bar(c) => {
                area.draw(&Rectangle::new([(x0 + 6, y - 6), (x0 + 20, y + 6)], c.filled())).map_err(err)?
            }
        }
        for (i, l) in wrap(name, LEGEND_CHARS).iter().enumerate() {
            let style =
                TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
            area.draw(&Text::new(l.clone(), (x1 + 8, y + 17 * i as i32), style)).map_err(err)?;
            y += if i == 0 { 0 } else { 17 };
        }
        y += 22;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(panel: &Panel, area: &DrawingArea<DB, Shift>) -> Result<()> {
    let (pw, _) = area.dim_in_pixel();
    match &panel.kind {
        PanelKind::Lines { series, validated, overlay, log_x, log_y } => {
            let (plot, side) = area.split_horizontally(pw - LEGEND_W);
            let entries = lines(&plot, &panel.title, series, validated, overlay, *log_x, *log_y)?;
            legend(&side, &entries)
        }
        // One group of bars needs no legend: the plot takes the legend's column too.
        PanelKind::Bars { y_label, categories, series } if series.len() == 1 => {
            bars(area, &panel.title, y_label, categories, series).map(drop)
        }
        PanelKind::Bars { y_label, categories, series } => {
            let (plot, side) = area.split_horizontally(pw - LEGEND_W);
            let entries = bars(&plot, &panel.title, y_label, categories, series)?;
            legend(&side, &entries)
        }
        PanelKind::Heat { rows, cols, values } => heat(area, &panel.title, rows, cols, values),
    }
}

/// Width of a heat map's row labels, and of each of its columns (pixels).
const HEAT_LABEL_W: u32 = 330;
const HEAT_CELL_W: u32 = 118;

/// Draws a [`PanelKind::Heat`] grid into `area`: the caption, the column names over the
/// columns, the row names left of the rows.
fn heat<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
) -> Result<()> {
    if rows.is_empty() || cols.is_empty() {
        return Err(anyhow!("nothing to plot"));
    }
    let (_, ph) = area.dim_in_pixel();
    let top = 64i32;
    let row_h = ((ph as i32 - top - 8) / rows.len() as i32).clamp(10, 40);
    let (x0, cw) = (HEAT_LABEL_W as i32, HEAT_CELL_W as i32);
    let centre = Pos::new(HPos::Center, VPos::Center);
    area.draw(&Text::new(
        title.to_string(),
        (x0 + cw * cols.len() as i32 / 2, 12),
        TextStyle::from(("sans-serif", 17).into_font()).pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(err)?;
    for (j, c) in cols.iter().enumerate() {
        for (k, l) in wrap(c, 14).iter().take(2).enumerate() {
            let style = TextStyle::from(("sans-serif", 13).into_font()).pos(centre);
            area.draw(&Text::new(l.clone(), (x0 + cw * j as i32 + cw / 2, 38 + 15 * k as i32), style))
                .map_err(err)?;
        }
    }
    let font = (row_h - 4).clamp(9, 14);
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * i as i32;
        let style =
            TextStyle::from(("sans-serif", font).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        area.draw(&Text::new(r.clone(), (x0 - 8, y + row_h / 2), style)).map_err(err)?;
        for (j, v) in values.get(i).map(Vec::as_slice).unwrap_or(&[]).iter().enumerate().take(cols.len()) {
            let Some(v) = *v else { continue };
            // 0 at the row's best, 1 at three times it and beyond.
            let t = if v > 1.0 { (v.ln() / 3f64.ln()).clamp(0.0, 1.0) } else { 0.0 };
            let mix = |best: u8, worst: u8| (best as f64 + (worst as f64 - best as f64) * t).round() as u8;
            let fill = RGBColor(mix(0, 246), mix(110, 246), mix(40, 240));
            let (cx, cy) = (x0 + cw * j as i32, y);
            area.draw(&Rectangle::new([(cx + 1, cy + 1), (cx + cw - 1, cy + row_h - 1)], fill.filled()))
                .map_err(err)?;
            let ink = if t < 0.45 { WHITE } else { BLACK };
            let text = if v < 1.0005 { "best".to_string() } else { format!("x{v:.2}") };
            let style = TextStyle::from(("sans-serif", font).into_font()).color(&ink).pos(centre);
            area.draw(&Text::new(text, (cx + cw / 2, cy + row_h / 2), style)).map_err(err)?;
        }
    }
    Ok(())
}

/// The range drawn for values `lo..hi`: a margin on each side so markers at the ends (a
/// validated point at the largest size) are drawn whole; a linear axis of non-negative values
/// starts at 0 when `from_zero`, a logarithmic one pads by a factor.
fn span(lo: f64, hi: f64, log: bool, from_zero: bool) -> (f64, f64) {
    if log {
        let (lo, hi) = (lo.max(1e-9), hi.max(lo.max(1e-9) * 1.0001));
        let f = (hi / lo).powf(0.04).max(1.15);
        return (lo / f, hi * f);
    }
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - 0.5, hi + 0.5) };
    let pad = (hi - lo) * 0.04;
    let start = if from_zero && lo >= 0.0 { 0.0 } else { lo - pad };
    let start = if !from_zero && lo >= 0.0 { start.max(0.0).min(lo) } else { start };
    (start, hi + pad * if from_zero { 2.0 } else { 1.0 })
}

#[allow(clippy::too_many_arguments)]
fn lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    series: &[Series],
    validated: &[Vec<(f64, f64)>],
    overlay: &[bool],
    log_x: bool,
    log_y: bool,
) -> Result<Vec<(String, Mark)>> {
    let keep = |p: &(f64, f64)| (!log_x || p.0 > 0.0) && (!log_y || p.1 > 0.0);
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().chain(s.paper.iter()))
        .chain(validated.iter().flatten())
        .copied()
        .filter(keep)
        .collect();
    if pts.is_empty() {
        return Err(anyhow!(
            "nothing to plot{}",
            if title.is_empty() { String::new() } else { format!(" in {title}") }
        ));
    }
    let (mut x0, mut x1, mut y0, mut y1) =
        (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in &pts {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    let (xlo, xhi) = span(x0, x1, log_x, false);
    let (ylo, yhi) = span(y0, y1, log_y, true);
    let (x_label, y_label) = (series[0].x_label.clone(), series[0].y_label.clone());
    let mut entries = Vec::new();
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .label_style(("sans-serif", 14))
                .x_label_formatter(&|v| short(*v))
                .y_label_formatter(&|v| short(*v))
                .draw()
                .map_err(err)?;
            // Reference lines last, so they lie on top of a line they coincide with.
            let mut order: Vec<usize> = (0..series.len()).collect();
            order.sort_by_key(|&i| overlay.get(i).copied().unwrap_or(false));
            for i in order {
                let s = &series[i];
                let c = COLORS[i % COLORS.len()];
                let over = overlay.get(i).copied().unwrap_or(false);
                let line: Vec<(f64, f64)> = s.points.iter().copied().filter(keep).collect();
                if over {
                    // Black, thinner and dashed: visible on top of a coloured line it matches.
                    let c = RGBColor(20, 20, 20);
                    chart
                        .draw_series(DashedLineSeries::new(line.clone(), 8, 6, c.stroke_width(2)))
                        .map_err(err)?;
                    if line.len() <= 40 {
                        chart
                            .draw_series(line.iter().map(|&p| TriangleMarker::new(p, 6, c.stroke_width(1))))
                            .map_err(err)?;
                    }
                    entries.push((s.name.clone(), Mark::Line(c, 2, true)));
                } else {
                    chart.draw_series(LineSeries::new(line.clone(), c.stroke_width(3))).map_err(err)?;
                    if line.len() <= 40 {
                        chart
                            .draw_series(line.iter().map(|&p| Circle::new(p, 4, c.filled())))
                            .map_err(err)?;
                    }
                    entries.push((s.name.clone(), Mark::Line(c, 3, false)));
                }
                if !s.paper.is_empty() {
                    let paper: Vec<(f64, f64)> = s.paper.iter().copied().filter(keep).collect();
                    chart
                        .draw_series(paper.iter().map(|&p| Cross::new(p, 7, c.stroke_width(2))))
                        .map_err(err)?;
                    let what = if s.paper_fitted { "paper, fitted" } else { "paper" };
                    entries.push((format!("{} ({what})", s.name), Mark::Cross(c)));
                }
                if let Some(full) = validated.get(i).filter(|v| !v.is_empty()) {
                    let full: Vec<(f64, f64)> = full.iter().copied().filter(keep).collect();
                    let square = move |(x, y): (f64, f64)| {
                        EmptyElement::at((x, y)) + Rectangle::new([(-6, -6), (6, 6)], c.stroke_width(2))
                    };
                    chart.draw_series(full.iter().map(|&p| square(p))).map_err(err)?;
                    entries.push((format!("{} (full run)", s.name), Mark::Square(c)));
                }
            }
        }};
    }
    let mut builder = ChartBuilder::on(area);
    builder.caption(title, ("sans-serif", 17)).margin(12).x_label_area_size(45).y_label_area_size(70);
    match (log_x, log_y) {
        (false, true) => draw!(builder.build_cartesian_2d(xlo..xhi, (ylo..yhi).log_scale()).map_err(err)?),
        (false, false) => draw!(builder.build_cartesian_2d(xlo..xhi, ylo..yhi).map_err(err)?),
        (true, true) => {
            draw!(builder.build_cartesian_2d((xlo..xhi).log_scale(), (ylo..yhi).log_scale()).map_err(err)?)
        }
        (true, false) => draw!(builder.build_cartesian_2d((xlo..xhi).log_scale(), ylo..yhi).map_err(err)?),
    }
    Ok(entries)
}

fn bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[BarSeries],
) -> Result<Vec<(String, Mark)>> {
    let n = categories.len();
    if n == 0 || series.is_empty() {
        return Err(anyhow!("nothing to plot"));
    }
    let y1 = series.iter().flat_map(|s| s.values.iter().flatten()).fold(0.0f64, |a, &v| a.max(v));
    let hi = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..n as f64, 0.0..hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .y_label_formatter(&|v| short(*v))
        .draw()
        .map_err(err)?;
    let slot = 0.8 / series.len() as f64;
    let mut entries = Vec::new();
    for (si, s) in series.iter().enumerate() {
        let c = COLORS[si % COLORS.len()];
        let bars = s.values.iter().enumerate().filter_map(|(i, v)| {
            let x0 = i as f64 + 0.1 + si as f64 * slot;
            v.map(|v| Rectangle::new([(x0, 0.0), (x0 + slot * 0.95, v)], c.filled()))
        });
        chart.draw_series(bars).map_err(err)?;
        entries.push((s.name.clone(), Mark::Bar(c)));
    }
    // Category labels under the axis, centred on each slot (backend pixels, made relative to
    // this panel's area).
    let style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let (bx, by) = area.get_base_pixel();
    let (aw, _) = area.dim_in_pixel();
    let max_chars = ((aw as usize / n) / 7).max(4);
    for (i, cat) in categories.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let text: String = if cat.chars().count() > max_chars {
            cat.chars().take(max_chars - 1).chain(std::iter::once('…')).collect()
        } else {
            cat.clone()
        };
        area.draw(&Text::new(text, (x - bx, y - by + 8), style.clone())).map_err(err)?;
    }
    Ok(entries)
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

/// Prints the line every written chart or data file gets, on stderr as every command's
/// "wrote" lines: the path and what it holds.
pub fn wrote(path: &Path, what: &str) {
    if what.is_empty() {
        eprintln!("wrote {}", path.display());
    } else {
        eprintln!("wrote {} ({what})", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_words_and_width() {
        assert_eq!(wrap("a bb ccc dddd", 6), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("", 6), vec![""]);
        assert_eq!(wrap("averylongword x", 4), vec!["averylongword", "x"]);
    }

    #[test]
    fn spans_leave_room_for_end_markers() {
        let (lo, hi) = span(1.0, 10.0, false, false);
        assert!((0.0..1.0).contains(&lo) && hi > 10.0, "{lo} {hi}");
        let (lo, hi) = span(2.0, 5.0, false, true);
        assert_eq!(lo, 0.0);
        assert!(hi > 5.0);
        let (lo, hi) = span(1.0, 100.0, true, true);
        assert!(lo < 1.0 && hi > 100.0);
    }
}
