//! Pictures: fields as PNG with palettes, colour bars, axes, coastlines and marks drawn on a
//! canvas with the shipped font; line plots in `plot`.

pub mod plot;

use std::path::{Path, PathBuf};

use crate::field::GlobalField;
use crate::{Error, Result};

use crate::io::{field_npy, write_atomic};

/// The colours of a picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Palette {
    /// Viridis, for fields of one sign.
    Sequential,
    /// Blue to red through white at the middle of the range, for anomalies.
    Diverging,
}

impl Palette {
    /// The colour at `t` in `[0, 1]` (clamped; not a number draws the lowest colour):
    /// viridis, or ColorBrewer's RdBu reversed (blue below the middle, red above).
    fn colour(self, t: f32) -> [u8; 3] {
        let t = match t.is_finite() {
            true => f64::from(t.clamp(0.0, 1.0)),
            false => 0.0,
        };
        let colour = match self {
            Palette::Sequential => colorous::VIRIDIS.eval_continuous(t),
            Palette::Diverging => colorous::RED_BLUE.eval_continuous(1.0 - t),
        };
        colour.as_array()
    }
}

/// The colour of a point with no value (NaN) over water, such as a place the wave never
/// reached: a pale blue, unlike the greys of land.
const NO_DATA: [u8; 3] = [206, 222, 240];
/// The coastline between land and water.
const COAST: [u8; 3] = [40, 40, 40];

/// How a field is drawn: the values coloured over a range, and the land, if any, in grey.
#[derive(Clone, Debug)]
pub struct Picture {
    /// The values to colour (for example the surface height above sea level).
    pub values: GlobalField,
    /// What the colour bar shows, with units.
    pub label: String,
    pub palette: Palette,
    pub range: (f32, f32),
    /// Grey level (0 black to 1 white) of each point that is land, `None` on water.
    pub land: Option<Vec<Option<f32>>>,
    /// A line above the picture.
    pub title: Option<String>,
    /// Tick marks with their labels.
    pub axes: Option<Axes>,
    pub scale: Scale,
    /// Points drawn over the picture with their names (gauges).
    pub marks: Vec<Mark>,
}

/// Ticks of a picture's axes: positions as fractions of its width (from the left) and of its
/// height (from the bottom), with labels.
#[derive(Clone, Debug, Default)]
pub struct Axes {
    pub x: Vec<(f64, String)>,
    pub y: Vec<(f64, String)>,
}

impl Axes {
    /// Grid-point ticks of an `nx x ny` field: column and row numbers.
    pub fn grid(nx: u32, ny: u32) -> Self {
        let axis = |n: u32| {
            let last = n.saturating_sub(1) as f64;
            let steps = [
                1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
                10000.0,
            ];
            ticks(
                (0.0, last),
                |v| (v + 0.5) / n as f64,
                |v| v.to_string(),
                &steps,
            )
        };
        Self {
            x: axis(nx),
            y: axis(ny),
        }
    }
}

/// Ticks from `lo` to `hi` every step of `steps` that gives at most seven, at `at(value)` (a
/// fraction of the axis), labelled by `label(value)`.
pub fn ticks(
    (lo, hi): (f64, f64),
    at: impl Fn(f64) -> f64,
    label: impl Fn(f64) -> String,
    steps: &[f64],
) -> Vec<(f64, String)> {
    let step = steps
        .iter()
        .copied()
        .find(|s| (hi - lo) / s <= 7.0)
        .unwrap_or(hi - lo);
    let mut v = (lo / step).ceil() * step;
    let mut out = vec![];
    while v <= hi + 1e-9 && step > 0.0 {
        out.push((at(v), label(v)));
        v += step;
    }
    out
}

/// A number as a person writes it: `0`, `2`, `0.25`, `-1.5`, `1200`, and `1e-4` or `2.5e6` only
/// where plain digits would run long; at most `digits` significant digits.
pub fn plain_number(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let magnitude = v.abs().log10().floor() as i32;
    if !(-3..6).contains(&magnitude) {
        let text = format!("{:.*e}", digits.saturating_sub(1), v);
        let (mantissa, exponent) = text.split_once('e').expect("an exponent");
        let mantissa = trim_zeros(mantissa);
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    trim_zeros(&format!("{v:.decimals$}")).to_string()
}

/// `1.500` as `1.5`, `2.000` as `2`.
fn trim_zeros(text: &str) -> &str {
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.'),
        false => text,
    }
}

/// How values map to colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Logarithmic, for a range of positive values over decades (below it: the lowest colour).
    Log,
}

/// A named point drawn over a picture: its position as fractions of the picture's width
/// (from the left) and height (from the bottom).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub at: (f64, f64),
    pub label: String,
}

impl Picture {
    /// The field itself: viridis from its minimum to its maximum, or blue-white-red symmetric
    /// about zero when it has both signs.
    pub fn plain(field: &GlobalField, label: &str) -> Self {
        let (lo, hi) = field.range();
        let (palette, range) = match lo < 0.0 && hi > 0.0 {
            true => (Palette::Diverging, (-hi.max(-lo), hi.max(-lo))),
            false => (Palette::Sequential, (lo, hi)),
        };
        Self {
            values: field.clone(),
            label: label.into(),
            palette,
            range,
            land: None,
            title: None,
            axes: None,
            scale: Scale::Linear,
            marks: vec![],
        }
    }

    /// Whether point `(x, y)` is land.
    fn is_land(&self, x: u32, y: u32) -> bool {
        let land = self.land.as_ref();
        land.is_some_and(|l| l[(y * self.values.nx + x) as usize].is_some())
    }

    /// Where `v` falls in the range, 0 to 1 (unclamped).
    fn position(&self, v: f32) -> f32 {
        let (lo, hi) = self.range;
        match self.scale {
            Scale::Linear => (v - lo) / if hi > lo { hi - lo } else { 1.0 },
            Scale::Log => {
                let (lo, hi) = (
                    lo.max(f32::MIN_POSITIVE).ln(),
                    hi.max(f32::MIN_POSITIVE).ln(),
                );
                (v.max(f32::MIN_POSITIVE).ln() - lo) / if hi > lo { hi - lo } else { 1.0 }
            }
        }
    }

    /// The values at the bottom, middle and top of the colour bar.
    fn bar_values(&self) -> [f32; 3] {
        let (lo, hi) = self.range;
        let middle = match self.scale {
            Scale::Linear => (lo + hi) / 2.0,
            Scale::Log => (lo.max(f32::MIN_POSITIVE) * hi.max(f32::MIN_POSITIVE)).sqrt(),
        };
        [hi, middle, lo]
    }

    /// The colour of point `(x, y)`.
    fn colour(&self, x: u32, y: u32) -> [u8; 3] {
        let land = self
            .land
            .as_ref()
            .and_then(|l| l[(y * self.values.nx + x) as usize]);
        if let Some(grey) = land {
            return [(grey.clamp(0.0, 1.0) * 255.0).round() as u8; 3];
        }
        match self.values.at(x, y) {
            v if v.is_nan() => NO_DATA,
            v => self.palette.colour(self.position(v)),
        }
    }
}

/// The typeface of every picture and figure: DejaVu Sans, shipped in `assets/fonts` with its
/// licence.
static FONT: std::sync::LazyLock<ab_glyph::FontRef<'static>> = std::sync::LazyLock::new(|| {
    ab_glyph::FontRef::try_from_slice(include_bytes!("../../assets/fonts/DejaVuSans.ttf"))
        .expect("the shipped font parses")
});

/// Pixel height of the font at text scale `s`: capitals are about `5 s` pixels tall.
fn font_scale(s: usize) -> ab_glyph::PxScale {
    ab_glyph::PxScale::from(7.0 * s as f32)
}

/// An RGB canvas.
pub(crate) struct Canvas {
    pub width: usize,
    pub height: usize,
    rgb: Vec<u8>,
}

impl Canvas {
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            rgb: vec![255; width * height * 3],
        }
    }

    pub fn put(&mut self, x: usize, y: usize, c: [u8; 3]) {
        if x < self.width && y < self.height {
            let k = (y * self.width + x) * 3;
            self.rgb[k..k + 3].copy_from_slice(&c);
        }
    }

    pub fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.put(xx, yy, c);
            }
        }
    }

    /// The canvas as PNG bytes.
    pub fn png(&self) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let png_error = |e: png::EncodingError| Error::Encode(format!("the PNG picture: {e}"));
        let mut writer = encoder.write_header().map_err(png_error)?;
        writer.write_image_data(&self.rgb).map_err(png_error)?;
        writer.finish().map_err(png_error)?;
        Ok(bytes)
    }

    /// Blends `c` over the pixel at `(x, y)` with opacity `alpha`.
    fn blend(&mut self, x: usize, y: usize, c: [u8; 3], alpha: f32) {
        if x < self.width && y < self.height {
            let k = (y * self.width + x) * 3;
            for (old, new) in self.rgb[k..k + 3].iter_mut().zip(c) {
                *old = (*old as f32 * (1.0 - alpha) + new as f32 * alpha).round() as u8;
            }
        }
    }

    /// Width in pixels of `text` at scale `s`.
    pub fn text_width(s: usize, text: &str) -> usize {
        use ab_glyph::{Font, ScaleFont};
        let font = FONT.as_scaled(font_scale(s));
        let ids: Vec<_> = text.chars().map(|c| font.glyph_id(c)).collect();
        let advance: f32 = ids.iter().map(|&id| font.h_advance(id)).sum();
        let kerning: f32 = ids.windows(2).map(|p| font.kern(p[0], p[1])).sum();
        (advance + kerning).ceil() as usize
    }

    /// Anti-aliased text at scale `s` (capitals about `5 s` pixels tall), top of the capitals
    /// at `(x, y)`.
    pub fn text(&mut self, x: usize, y: usize, s: usize, text: &str) {
        use ab_glyph::{Font, ScaleFont};
        let scale = font_scale(s);
        let font = FONT.as_scaled(scale);
        let mut caret = ab_glyph::point(x as f32, (y + 5 * s) as f32);
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(previous) = previous {
                caret.x += font.kern(previous, id);
            }
            previous = Some(id);
            if let Some(outline) = FONT.outline_glyph(id.with_scale_and_position(scale, caret)) {
                let origin = outline.px_bounds().min;
                outline.draw(|gx, gy, alpha| {
                    let (px, py) = (origin.x as i64 + gx as i64, origin.y as i64 + gy as i64);
                    if px >= 0 && py >= 0 {
                        self.blend(px as usize, py as usize, [0, 0, 0], alpha);
                    }
                });
            }
            caret.x += font.h_advance(id);
        }
    }
}

/// Longest side of the field part of a picture; larger fields are subsampled.
const MAX_PICTURE: usize = 2048;
/// Longest side small fields are scaled up to (a region of a few dozen cells stays legible).
const MIN_PICTURE: usize = 512;

/// The picture as a PNG: `y` upward, a colour bar with the lowest, middle and highest values
/// of the range to the right and the label above it.
pub fn png_bytes(picture: &Picture) -> Result<Vec<u8>> {
    let field = &picture.values;
    let (nx, ny) = (field.nx as usize, field.ny as usize);
    let longest = nx.max(ny);
    let (up, down) = if longest >= MIN_PICTURE {
        (1, longest.div_ceil(MAX_PICTURE))
    } else {
        (MIN_PICTURE.div_ceil(longest), 1)
    };
    let (fw, fh) = (nx.div_ceil(down) * up, ny.div_ceil(down) * up);
    let labels = picture.bar_values().map(|v| plain_number(v as f64, 3));
    let text_w = labels
        .iter()
        .map(|l| Canvas::text_width(2, l))
        .max()
        .unwrap_or(0);
    let (margin, bar_w, line_h) = (10, 20, 16);
    let axes = picture.axes.clone().unwrap_or_default();
    let y_label_w = axes.y.iter().map(|(_, l)| Canvas::text_width(2, l)).max();
    let left = margin + y_label_w.map_or(0, |w| w + 8);
    let top = margin + line_h * (1 + picture.title.is_some() as usize);
    let bottom = margin + if axes.x.is_empty() { 0 } else { line_h + 4 };
    let height = fh.max(60) + top + bottom;
    let title_w = picture
        .title
        .as_deref()
        .map_or(0, |t| Canvas::text_width(2, t));
    let width = (left + fw + margin + bar_w + 6 + text_w + margin)
        .max(left + fw + Canvas::text_width(2, &picture.label) + margin)
        .max(left + title_w + margin);
    let mut canvas = Canvas::new(width, height);
    // The field point under pixel (px, py) of the field part.
    let point =
        |px: usize, py: usize| ((px / up * down) as u32, ((fh - 1 - py) / up * down) as u32);
    for py in 0..fh {
        for px in 0..fw {
            let (x, y) = point(px, py);
            canvas.put(left + px, top + py, picture.colour(x, y));
        }
    }
    // Coastlines: land pixels next to a water pixel.
    if picture.land.is_some() {
        for py in 0..fh {
            for px in 0..fw {
                let (x, y) = point(px, py);
                let beside = [
                    (px + 1, py),
                    (px.wrapping_sub(1), py),
                    (px, py + 1),
                    (px, py.wrapping_sub(1)),
                ];
                let water_beside = beside.iter().any(|&(qx, qy)| {
                    qx < fw && qy < fh && {
                        let (u, v) = point(qx, qy);
                        !picture.is_land(u, v)
                    }
                });
                if picture.is_land(x, y) && water_beside {
                    canvas.put(left + px, top + py, COAST);
                }
            }
        }
    }
    for mark in &picture.marks {
        let (mx, my) = (
            left as f64 + mark.at.0 * fw as f64,
            top as f64 + (1.0 - mark.at.1) * fh as f64,
        );
        if !(mx >= left as f64
            && mx < (left + fw) as f64
            && my >= top as f64
            && my < (top + fh) as f64)
        {
            continue;
        }
        let (mx, my) = (mx as usize, my as usize);
        canvas.rect(mx.saturating_sub(3), my.saturating_sub(3), 7, 7, [0, 0, 0]);
        canvas.rect(
            mx.saturating_sub(2),
            my.saturating_sub(2),
            5,
            5,
            [255, 255, 255],
        );
        canvas.text(
            (mx + 6).min(left + fw),
            my.saturating_sub(5),
            2,
            &mark.label,
        );
    }
    for (at, label) in &axes.x {
        let x = left + (at * fw as f64).round().min(fw as f64 - 1.0) as usize;
        canvas.rect(x, top + fh, 1, 4, [0, 0, 0]);
        let w = Canvas::text_width(2, label);
        canvas.text(x.saturating_sub(w / 2).max(1), top + fh + 6, 2, label);
    }
    for (at, label) in &axes.y {
        let y = top + fh - 1 - (at * fh as f64).round().min(fh as f64 - 1.0) as usize;
        canvas.rect(left - 4, y, 4, 1, [0, 0, 0]);
        let w = Canvas::text_width(2, label);
        canvas.text(left - 6 - w, y.saturating_sub(5), 2, label);
    }
    if let Some(title) = &picture.title {
        canvas.text(left, margin - 4, 2, title);
    }
    let bar_x = left + fw + margin;
    let bar_h = height - top - bottom;
    for k in 0..bar_h {
        let t = 1.0 - k as f32 / (bar_h - 1) as f32;
        canvas.rect(bar_x, top + k, bar_w, 1, picture.palette.colour(t));
    }
    for (k, label) in labels.iter().enumerate() {
        let y = top + k * (bar_h - 10) / 2;
        canvas.text(bar_x + bar_w + 6, y, 2, label);
    }
    let label_w = Canvas::text_width(2, &picture.label);
    canvas.text(
        bar_x.min(width - label_w),
        top - line_h + 2,
        2,
        &picture.label,
    );
    canvas.png()
}

/// Writes `stem.npy` and `stem.png` of the field into `dir`; returns the paths.
/// The PNG shows `picture`.
pub fn write_field(
    dir: &Path,
    stem: &str,
    field: &GlobalField,
    picture: &Picture,
) -> Result<Vec<PathBuf>> {
    let npy = dir.join(format!("{stem}.npy"));
    let png = dir.join(format!("{stem}.png"));
    write_atomic(&npy, &field_npy(field))?;
    write_atomic(&png, &png_bytes(picture)?)?;
    Ok(vec![npy, png])
}
