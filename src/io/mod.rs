//! What the program writes and reads: files written whole or not at all, output folders and
//! their locks, `.npy` fields.

mod files;
mod npy;
mod output_dir;

pub use files::{
    check_writable, create_dir, read_bytes, rename_into_place, temp_path, write_atomic,
};
pub use npy::{field_npy, npy_bytes, read_field_npy};
pub use output_dir::{
    check_file_target, check_output_dir, claim_dir, list_written, Earlier, JsonTarget, OutputDir,
    WRITTEN,
};
