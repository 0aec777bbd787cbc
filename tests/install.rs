//! An installed binary needs no checkout: the relief grids and the font are compiled in, and the
//! packaged crate fits the 10 MiB crates.io accepts.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wafer-emu-install-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `bin` in `dir` with no variable that could lead it to the checkout.
fn run_in(bin: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("WGPU_BACKEND")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_installed_binary_runs_from_an_empty_folder() {
    let root = scratch("empty");
    let bin = root.join("bin").join("wafer-emu");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_wafer-emu"), &bin).unwrap();
    let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");
    let image = std::fs::read(&bin).unwrap();
    assert!(
        !image.windows(assets.len()).any(|w| w == assets.as_bytes()),
        "the binary names the checkout's {assets}"
    );
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let summary = run_in(
        &bin,
        &work,
        &[
            "tsunami",
            "--backend",
            "cpu",
            "--resolution",
            "30min",
            "--relief",
            "etopo1-6min",
            "--duration",
            "30min",
            "--out",
            "t",
        ],
    );
    assert!(summary.contains("etopo1-6min"), "{summary}");
    for name in [
        "max_eta.png",
        "eta_global_t00030min.png",
        "tsunami.nc",
        "summary.txt",
    ] {
        let len = std::fs::metadata(work.join("t").join(name)).unwrap().len();
        assert!(len > 1000, "{name}: {len} bytes");
    }
    run_in(
        &bin,
        &work,
        &[
            "run",
            "heat5",
            "--backend",
            "cpu",
            "--steps",
            "2",
            "--out",
            "r",
        ],
    );
    assert!(work.join("r").join("heat5_u_step00000002.png").is_file());
    std::fs::remove_dir_all(&root).unwrap();
}

/// The files `cargo package` would ship, as it lists them.
fn packaged_files() -> Vec<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| Path::new(env!("CARGO_MANIFEST_DIR")).join(l))
        .filter(|p| p.is_file())
        .collect()
}

#[test]
fn the_packaged_crate_fits_crates_io() {
    use std::io::Write;
    let files = packaged_files();
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    for needed in [
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "DejaVuSans-LICENSE.txt",
        ".i16.zlib",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(needed)),
            "{needed} is not packaged"
        );
    }
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for file in &files {
        gzip.write_all(&std::fs::read(file).unwrap()).unwrap();
    }
    let size = gzip.finish().unwrap().len();
    let limit = 10 * 1024 * 1024;
    assert!(
        size < limit * 9 / 10,
        "the packaged files gzip to {size} bytes: crates.io takes at most {limit}"
    );
}
