//! A kernel's constant fields on the device: pages of at most one storage binding each, and
//! the WGSL that reads them (`consts_at`), composed into every Point stage. A grid whose
//! constants outgrow one binding (shallow water at 1 arc-minute: 4.1 GB) spreads them over
//! several.

use super::GpuContext;
use crate::{Error, Result};

/// Storage buffers a Point driver binds beside the constants (the fused engine's later
/// stages: `x`, `x0`, `y`, `clock`, `wafer_ids` and both link rings).
const DRIVER_STORAGE_BUFFERS: u32 = 7;

/// The constants `data` on `ctx` in pages of at most `max_bytes`: the pages and one buffer per
/// page, named as the composed WGSL declares them; an error when the adapter binds too few
/// storage buffers per shader stage for them.
pub fn upload(
    ctx: &GpuContext,
    data: &[f32],
    max_bytes: u64,
) -> Result<(Pages, Vec<(&'static str, wgpu::Buffer)>)> {
    let pages = Pages::new(data.len(), max_bytes)?;
    let most = ctx.adapter.limits.max_storage_buffers_per_shader_stage;
    if pages.count as u32 + DRIVER_STORAGE_BUFFERS > most {
        return Err(Error::TooLarge(format!(
            "the kernel's constant fields need {} storage bindings beside the engine's {DRIVER_STORAGE_BUFFERS}, but {} allows {most} per shader stage: use a coarser grid",
            pages.count, ctx.adapter.info.name
        )));
    }
    let buffers = pages
        .split(data)
        .into_iter()
        .zip(NAMES)
        .map(|(page, name)| Ok((name, ctx.storage_buffer(name, page)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok((pages, buffers))
}

/// Binding of the first page in group 0 (the drivers' own bindings stay below it).
const FIRST_BINDING: u32 = 16;
/// Most pages: bindings 16 to 23.
pub const MAX_PAGES: usize = 8;
/// The pages' binding names.
pub const NAMES: [&str; MAX_PAGES] = [
    "consts0", "consts1", "consts2", "consts3", "consts4", "consts5", "consts6", "consts7",
];

/// How the constants are cut: `count` pages of `2^bits` values (the last one shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pages {
    pub count: usize,
    pub bits: u32,
}

impl Pages {
    /// One page: the constants fit one binding.
    pub const ONE: Pages = Pages { count: 1, bits: 31 };

    /// Pages for `len` values with at most `max_bytes` per binding; an error naming the size
    /// when more than [`MAX_PAGES`] would be needed.
    pub fn new(len: usize, max_bytes: u64) -> Result<Self> {
        let most = (max_bytes / 4).max(1);
        if len as u64 <= most {
            return Ok(Self::ONE);
        }
        let bits = most.ilog2().min(31);
        let count = len.div_ceil(1 << bits);
        if count > MAX_PAGES {
            return Err(Error::TooLarge(format!(
                "the kernel's constant fields need {} MiB, {count} storage bindings of {} MiB: allowed at most {MAX_PAGES}; use a coarser grid",
                (len as u64 * 4).div_ceil(1 << 20),
                (4u64 << bits) >> 20
            )));
        }
        Ok(Self { count, bits })
    }

    /// The pages of `data`.
    pub fn split<'a>(&self, data: &'a [f32]) -> Vec<&'a [f32]> {
        match self.count {
            1 => vec![data],
            _ => data.chunks(1 << self.bits).collect(),
        }
    }

    /// The WGSL declarations of the pages and of `consts_at(i)`, the constant at index `i` of
    /// the kernel's layout.
    pub fn wgsl(&self) -> String {
        let mut out: String = (0..self.count)
            .map(|k| {
                format!(
                    "@group(0) @binding({}) var<storage, read> {}: array<f32>;\n",
                    FIRST_BINDING + k as u32,
                    NAMES[k]
                )
            })
            .collect();
        out += "fn consts_at(i: u32) -> f32 {\n";
        if self.count == 1 {
            out += "    return consts0[i];\n}\n";
            return out;
        }
        let mask = (1u64 << self.bits) - 1;
        out += &format!(
            "    let at = i & {mask}u;\n    switch i >> {}u {{\n",
            self.bits
        );
        for (k, name) in NAMES.iter().enumerate().take(self.count - 1) {
            out += &format!("        case {k}u: {{ return {name}[at]; }}\n");
        }
        out += &format!(
            "        default: {{ return {}[at]; }}\n    }}\n}}\n",
            NAMES[self.count - 1]
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_the_constants_in_power_of_two_pieces() {
        assert_eq!(Pages::new(1000, 4000).unwrap(), Pages::ONE);
        let pages = Pages::new(1000, 1024).unwrap();
        assert_eq!(pages, Pages { count: 4, bits: 8 });
        let data: Vec<f32> = (0..1000).map(|v| v as f32).collect();
        let split = pages.split(&data);
        assert_eq!(
            split.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [256, 256, 256, 232]
        );
        assert_eq!(split[3][0], 768.0);
        let err = Pages::new(1 << 20, 1024).unwrap_err().to_string();
        assert!(err.contains("4 MiB") && err.contains("at most 8"), "{err}");
    }
}
