//! A picture of a soak: the per-window figures of `query-soak` (latency, memory, lag) drawn as
//! one SVG with three panels against minutes, so a trend shows at a glance.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use serde_json::Value;

/// One line of a panel: its name, colour and the field of a window it reads.
struct Line {
    name: &'static str,
    colour: RGBColor,
    field: &'static str,
}

/// Draws `windows` (the `windows` array of `query-soak`'s summary: `window_s`, `search_p50_ms`,
/// `search_p99_ms`, `context_p50_ms`, `serve_rss_mib`, `run_rss_mib`, `run_lag_max`) to an SVG
/// at `path`: latency (log scale), resident memory, and the live run's consumer lag; a panel
/// whose fields are all missing (no live run) is left empty.
///
/// ```
/// let windows: Vec<serde_json::Value> = (0..4).map(|w| serde_json::json!({
///     "window_s": [w * 30, w * 30 + 30], "search_p50_ms": 40.0 + w as f64,
///     "search_p99_ms": 200.0, "context_p50_ms": 120.0, "serve_rss_mib": 480.0,
///     "run_rss_mib": 1100.0 + 10.0 * w as f64, "run_lag_max": 300.0,
/// })).collect();
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("soak.svg");
/// epigraph_benches::soak_plot::plot_windows(&windows, &path, "a soak").unwrap();
/// let svg = std::fs::read_to_string(&path).unwrap();
/// assert!(svg.starts_with("<svg") && svg.contains("search p50") && svg.contains("run RSS"));
/// ```
pub fn plot_windows(windows: &[Value], path: &Path, title: &str) -> Result<()> {
    let minute = |w: &Value| {
        let span = &w["window_s"];
        (span[0].as_f64().unwrap_or(0.0) + span[1].as_f64().unwrap_or(0.0)) / 2.0 / 60.0
    };
    let end = windows.iter().map(minute).fold(1.0_f64, f64::max) * 1.02;
    let root = SVGBackend::new(path, (960, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(draw)?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(draw)?;
    let panels = root.split_evenly((3, 1));
    let latency = [
        Line {
            name: "search p50 ms",
            colour: RGBColor(31, 119, 180),
            field: "search_p50_ms",
        },
        Line {
            name: "search p99 ms",
            colour: RGBColor(174, 199, 232),
            field: "search_p99_ms",
        },
        Line {
            name: "context p50 ms",
            colour: RGBColor(255, 127, 14),
            field: "context_p50_ms",
        },
    ];
    let memory = [
        Line {
            name: "serve RSS MiB",
            colour: RGBColor(44, 160, 44),
            field: "serve_rss_mib",
        },
        Line {
            name: "run RSS MiB",
            colour: RGBColor(214, 39, 40),
            field: "run_rss_mib",
        },
    ];
    let lag = [Line {
        name: "run lag (messages)",
        colour: RGBColor(148, 103, 189),
        field: "run_lag_max",
    }];
    for (area, (lines, log)) in panels.iter().zip([
        (&latency[..], true),
        (&memory[..], false),
        (&lag[..], false),
    ]) {
        let series: Vec<Vec<(f64, f64)>> = lines
            .iter()
            .map(|line| {
                windows
                    .iter()
                    .filter_map(|w| Some((minute(w), w[line.field].as_f64()?)))
                    .filter(|(_, y)| !log || *y > 0.0)
                    .collect()
            })
            .collect();
        let top = series
            .iter()
            .flatten()
            .map(|(_, y)| *y)
            .fold(1.0_f64, f64::max)
            * 1.1;
        let mut chart = ChartBuilder::on(area);
        chart.margin(12).x_label_area_size(32).y_label_area_size(64);
        let x_desc = "minutes into the load";
        if log {
            let bottom = series
                .iter()
                .flatten()
                .map(|(_, y)| *y)
                .fold(top, f64::min)
                .max(0.1)
                / 1.5;
            let chart = chart
                .build_cartesian_2d(0.0..end, (bottom..top).log_scale())
                .map_err(draw)?;
            draw_lines(chart, lines, series, x_desc)?;
        } else {
            let chart = chart.build_cartesian_2d(0.0..end, 0.0..top).map_err(draw)?;
            draw_lines(chart, lines, series, x_desc)?;
        }
    }
    root.present().map_err(draw)?;
    Ok(())
}

/// Draws a panel's mesh, its lines and their legend, on a linear or a log y axis.
fn draw_lines<'a, Y>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    lines: &[Line],
    series: Vec<Vec<(f64, f64)>>,
    x_desc: &str,
) -> Result<()>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .light_line_style(RGBColor(238, 238, 238))
        .x_desc(x_desc)
        .draw()
        .map_err(draw)?;
    for (line, points) in lines.iter().zip(series) {
        let colour = line.colour;
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))
            .map_err(draw)?
            .label(line.name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(draw)?;
    Ok(())
}

fn draw<E: std::fmt::Debug>(error: E) -> anyhow::Error {
    anyhow!("drawing the soak's plot: {error:?}")
}
