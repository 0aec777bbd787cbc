//! Line plots as PNG: labelled axes (linear or logarithmic), several series with a legend,
//! and vertical markers, for the `reproduce` report and `sweep plot`.

use crate::render::Canvas;
use crate::Result;

/// One curve.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Draw markers at the points (else only the line).
    pub markers: bool,
}

/// A plot.
#[derive(Clone, Debug, Default)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
    /// Vertical lines at `x` with a label.
    pub markers: Vec<(f64, String)>,
}

const COLOURS: [[u8; 3]; 8] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [23, 190, 207],
];
const WIDTH: usize = 1000;
const HEIGHT: usize = 620;
/// Margins around the plot area; the legend sits in the right one.
const LEFT: usize = 110;
const RIGHT: usize = 300;
const TOP: usize = 50;
const BOTTOM: usize = 70;
const TEXT: usize = 2;
const GREY: [u8; 3] = [210, 210, 210];
const BLACK: [u8; 3] = [0, 0, 0];

/// An axis: data range and scale.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Self {
        let (mut lo, mut hi) = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if !lo.is_finite() {
            (lo, hi) = (1.0, 10.0);
        }
        if log {
            (lo, hi) = (
                10f64.powf(lo.log10().floor()),
                10f64.powf(hi.log10().ceil()),
            );
        } else {
            let pad = if hi > lo { 0.05 * (hi - lo) } else { 1.0 };
            (lo, hi) = (if lo >= 0.0 { 0.0 } else { lo - pad }, hi + pad);
        }
        if hi <= lo {
            hi = lo * 10.0 + 1.0;
        }
        Self { lo, hi, log }
    }

    /// Position in [0, 1].
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            // At most about ten labelled decades: every k-th over a wide range.
            let every = ((b - a) / 10 + 1) as usize;
            (a..=b).step_by(every).map(|e| 10f64.powi(e)).collect()
        } else {
            let raw = (self.hi - self.lo) / 5.0;
            let step = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * step)
                .find(|s| *s >= raw)
                .unwrap_or(raw);
            let first = (self.lo / step).ceil() as i64;
            (first..)
                .map(|k| k as f64 * step)
                .take_while(|v| *v <= self.hi + 1e-9 * step)
                .collect()
        }
    }
}

fn label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if (0.01..100_000.0).contains(&v.abs()) {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.0e}")
    }
}

fn line(canvas: &mut Canvas, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: [u8; 3]) {
    let steps = ((x1 - x0).abs().max((y1 - y0).abs()).ceil() as usize).max(1);
    for k in 0..=steps {
        let t = k as f64 / steps as f64;
        let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
        canvas.rect(x.round() as usize, y.round() as usize, 2, 2, c);
    }
}

/// The plot's axes on the canvas: its area of `w` by `h` pixels right of `LEFT` and below
/// `TOP`.
struct Frame {
    x: Axis,
    y: Axis,
    w: f64,
    h: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        LEFT as f64 + self.x.frac(x) * self.w
    }

    fn py(&self, y: f64) -> f64 {
        TOP as f64 + (1.0 - self.y.frac(y)) * self.h
    }

    /// The grid lines and labels of both axes' ticks, and the axes.
    fn draw_axes(&self, canvas: &mut Canvas) {
        let (w, h) = (self.w as usize, self.h as usize);
        for t in self.x.ticks() {
            let x = self.px(t).round() as usize;
            canvas.rect(x, TOP, 1, h, GREY);
            let text = label(t);
            let left = x.saturating_sub(Canvas::text_width(TEXT, &text) / 2);
            canvas.text(left, HEIGHT - BOTTOM + 8, TEXT, &text);
        }
        for t in self.y.ticks() {
            let y = self.py(t).round() as usize;
            canvas.rect(LEFT, y, w, 1, GREY);
            let text = label(t);
            let left = LEFT.saturating_sub(Canvas::text_width(TEXT, &text) + 6);
            canvas.text(left, y.saturating_sub(5), TEXT, &text);
        }
        canvas.rect(LEFT, TOP, 2, h, BLACK);
        canvas.rect(LEFT, TOP + h, w, 2, BLACK);
    }

    /// A dashed vertical line at `x`, labelled `text`.
    fn draw_marker(&self, canvas: &mut Canvas, x: f64, text: &str) {
        let xp = self.px(x).round() as usize;
        for y in (TOP..TOP + self.h as usize).step_by(6) {
            canvas.rect(xp, y, 2, 3, BLACK);
        }
        canvas.text(xp + 4, TOP + 4, TEXT, text);
    }

    /// Series `k`'s line through its points that the axes can show, its markers, and its
    /// legend entry.
    fn draw_series(&self, canvas: &mut Canvas, k: usize, series: &Series) {
        let c = COLOURS[k % COLOURS.len()];
        let shown = |&&(x, y): &&(f64, f64)| {
            x.is_finite() && y.is_finite() && (!self.x.log || x > 0.0) && (!self.y.log || y > 0.0)
        };
        let visible: Vec<(f64, f64)> = series
            .points
            .iter()
            .filter(shown)
            .map(|&(x, y)| (self.px(x), self.py(y)))
            .collect();
        for pair in visible.windows(2) {
            line(canvas, pair[0], pair[1], c);
        }
        if series.markers {
            for &(x, y) in &visible {
                let (x, y) = (
                    (x as usize).saturating_sub(3),
                    (y as usize).saturating_sub(3),
                );
                canvas.rect(x, y, 7, 7, c);
            }
        }
        let ly = TOP + 10 + k * 22;
        canvas.rect(WIDTH - RIGHT + 20, ly + 3, 24, 4, c);
        canvas.text(WIDTH - RIGHT + 50, ly, TEXT, &series.name);
    }
}

impl Plot {
    /// The plot as PNG bytes.
    pub fn png(&self) -> Result<Vec<u8>> {
        let mut canvas = Canvas::new(WIDTH, HEIGHT);
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let xs = points()
            .map(|p| p.0)
            .chain(self.markers.iter().map(|m| m.0));
        let frame = Frame {
            x: Axis::new(xs, self.log_x),
            y: Axis::new(points().map(|p| p.1), self.log_y),
            w: (WIDTH - LEFT - RIGHT) as f64,
            h: (HEIGHT - TOP - BOTTOM) as f64,
        };
        frame.draw_axes(&mut canvas);
        for (x, text) in &self.markers {
            frame.draw_marker(&mut canvas, *x, text);
        }
        // The first series are drawn last, on top: the model above its bounds.
        for (k, series) in self.series.iter().enumerate().rev() {
            frame.draw_series(&mut canvas, k, series);
        }
        canvas.text(LEFT, 14, 3, &self.title);
        let xl = &self.x_label;
        let left = LEFT + (frame.w as usize).saturating_sub(Canvas::text_width(TEXT, xl)) / 2;
        canvas.text(left, HEIGHT - 28, TEXT, xl);
        canvas.text(8, TOP - 22, TEXT, &self.y_label);
        canvas.png()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_label_about_ten_decades_at_most() {
        for (lo, hi, most) in [(1.0, 1e3, 4), (1e-300, 1e300, 11), (2.0, 5e9, 11)] {
            let ticks = Axis::new([lo, hi].into_iter(), true).ticks();
            assert!(
                ticks.len() <= most && ticks.len() >= 2,
                "{lo}..{hi}: {ticks:?}"
            );
        }
        let decades: Vec<f64> = Axis::new([1.0, 1e3].into_iter(), true).ticks();
        assert_eq!(decades, [1.0, 10.0, 100.0, 1000.0]);
    }
}
