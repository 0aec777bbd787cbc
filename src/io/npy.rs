//! NumPy `.npy` files: fields written as f32 `(ny, nx)` arrays, row `y` upward, and read back.

use std::path::Path;

use crate::field::GlobalField;
use crate::Result;

use super::files::read_bytes;

/// Reads a 2-D little-endian f32 `.npy` file as written by [`field_npy`].
pub fn read_field_npy(path: &Path) -> Result<GlobalField> {
    let bytes = read_bytes(path)?;
    let bad = |why: &str| crate::invalid!("{}: {why}", path.display());
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file"));
    }
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(
        bytes
            .get(10..10 + header_len)
            .ok_or_else(|| bad("short header"))?,
    )
    .map_err(|_| bad("header is not text"))?;
    if !header.contains("'<f4'") || header.contains("'fortran_order': True") {
        return Err(bad("not a C-order little-endian f32 array"));
    }
    let shape = header
        .split("'shape': (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let dims: Vec<u32> = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().map_err(|_| bad("bad shape")))
        .collect::<Result<_>>()?;
    let [ny, nx] = dims[..] else {
        return Err(bad("not 2-D"));
    };
    let data: Vec<f32> = bytes[10 + header_len..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if data.len() != nx as usize * ny as usize {
        return Err(bad("data does not fill the shape"));
    }
    Ok(GlobalField { nx, ny, data })
}

/// A NumPy `.npy` file (version 1.0, C order) of little-endian values of type `descr`
/// (`<f4`, `<f8`) with the given shape.
pub fn npy_bytes(descr: &str, shape: &[usize], payload: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let dims = if dims.len() == 1 {
        format!("{},", dims[0])
    } else {
        dims.join(", ")
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}");
    // Magic (6) + version (2) + header length (2) + dict + newline, padded to 64 bytes.
    let header_len = (10 + dict.len() + 1).div_ceil(64) * 64 - 10;
    let mut bytes = Vec::with_capacity(10 + header_len + payload.len());
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header_len as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.resize(10 + header_len - 1, b' ');
    bytes.push(b'\n');
    bytes.extend_from_slice(payload);
    bytes
}

/// A field as `.npy`: f32, shape `(ny, nx)`, row `y` upward.
pub fn field_npy(field: &GlobalField) -> Vec<u8> {
    let payload: Vec<u8> = field.data.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes("<f4", &[field.ny as usize, field.nx as usize], &payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned_and_data_follows() {
        let field = GlobalField::from_fn(3, 2, |x, y| (x + 10 * y) as f32);
        let bytes = field_npy(&field);
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes[10 + header_len - 1], b'\n');
        assert!(String::from_utf8_lossy(&bytes[10..10 + header_len]).contains("'shape': (2, 3)"));
        let last = &bytes[bytes.len() - 4..];
        assert_eq!(f32::from_le_bytes(last.try_into().unwrap()), 12.0);
    }
}
