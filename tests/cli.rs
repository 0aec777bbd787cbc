//! The command line: bad input gets a one-line error naming the value, exit code 2, and no
//! output files; a good run writes its outputs.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

fn wafer_emu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
        .args(args)
        .output()
        .expect("runs")
}

/// Runs, expects success and returns stdout.
fn succeeds(args: &[&str]) -> String {
    let out = wafer_emu(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wafer-emu-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The names in folder `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs, expects exit code 2 and a stderr line containing every `needle`.
fn assert_rejected(args: &[&str], needles: &[&str]) {
    let out = wafer_emu(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    // Mesa's Vulkan driver may print its own "error: XDG_RUNTIME_DIR ..." line on headless machines.
    let line = stderr
        .lines()
        .find(|l| l.starts_with("error:") && !l.contains("XDG_RUNTIME_DIR"))
        .unwrap_or_else(|| panic!("{args:?}: no error line in {stderr}"));
    for needle in needles {
        assert!(line.contains(needle), "{args:?}: '{line}' lacks '{needle}'");
    }
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

/// A small heat run into `out`, with `extra` arguments.
fn heat_run<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let base = [
        "run", "heat5", "--pes", "2x2", "--n", "4", "--steps", "3", "--out", out,
    ];
    [&base[..], extra].concat()
}

#[test]
fn bad_input_is_rejected_with_exit_code_2() {
    let out = scratch("bad");
    let out = out.to_str().unwrap();
    let run = |extra: &[&'static str]| heat_run(out, extra);
    assert_rejected(&run(&["--n", "0"]), &["'0' for '--n <N>'", "1..=4096"]);
    assert_rejected(&run(&["--n", "-1"]), &["'-1' for '--n <N>'", "1..=4096"]);
    assert_rejected(
        &run(&["--range", "1,-1"]),
        &["'1,-1' for '--range", "LO < HI"],
    );
    assert_rejected(
        &run(&["--range", "0,inf"]),
        &["'0,inf' for '--range", "finite LO < HI"],
    );
    assert_rejected(
        &run(&["--n", "5000"]),
        &["'5000' for '--n <N>'", "1..=4096"],
    );
    assert_rejected(
        &run(&["--relief", "flat:4000"]),
        &["--relief is a flag of swe, swe-c: it does not apply to heat5"],
    );
    assert_rejected(
        &run(&["--resume", "somewhere", "--no-output"]),
        &["--resume", "cannot go with --no-output"],
    );
    let summary = format!("{out}/summary.txt");
    assert_rejected(
        &heat_run(out, &["--json", &summary]),
        &["summary.txt: inside the output folder", "NAME.json"],
    );
    assert_rejected(
        &run(&["--engine", "fused", "--time-block", "4"]),
        &["time-block = 4", "allowed 1, 3, 5, 7, 9, 15, 21"],
    );
    let swe = |extra: &[&'static str]| {
        [
            &[
                "run", "swe", "--pes", "9x5", "--n", "4", "--steps", "3", "--out", out,
            ],
            extra,
        ]
        .concat()
    };
    assert_rejected(
        &swe(&["--lat-range", "-95,70"]),
        &["cut latitudes -95..70", "-89 <= south < north <= 89"],
    );
    assert_rejected(&swe(&["--cfl", "1.5"]), &["CFL number 1.5", "0 < CFL <= 1"]);
    assert_rejected(
        &swe(&["--coef-d", "1e9"]),
        &["--coef-d is a flag of heat5, heat9: it does not apply to swe"],
    );
    assert_rejected(
        &swe(&["--relief", "etopo9"]),
        &["unknown relief 'etopo9'", "etopo1-1deg"],
    );
    assert_rejected(&swe(&["--init", "hump:1,2"]), &["hump:1,2", "allowed"]);
    assert_rejected(
        &swe(&["--walls", "open"]),
        &["unknown wall condition 'open'", "no-slip, prescribed"],
    );
    let relief = scratch("relief");
    std::fs::create_dir_all(&relief).unwrap();
    let descriptor = relief.join("grid.json");
    std::fs::write(
        &descriptor,
        r#"{"file": "grid.i16", "nx": 36, "ny": 18, "registration": "cell-centred"}"#,
    )
    .unwrap();
    std::fs::write(relief.join("grid.i16"), vec![0u8; 2 * 36 * 17]).unwrap();
    let descriptor = descriptor.to_str().unwrap();
    assert_rejected(
        &[swe(&[]), vec!["--relief", descriptor]].concat(),
        &["grid.i16", "1224 bytes, expected 1296 (2 x 36 x 18)"],
    );
    let missing = relief.join("missing.json");
    assert_rejected(
        &[swe(&[]), vec!["--relief", missing.to_str().unwrap()]].concat(),
        &["cannot read relief descriptor", "missing.json"],
    );
    std::fs::remove_dir_all(&relief).unwrap();
    let tsunami = |extra: &[&'static str]| {
        [
            &["tsunami", "--resolution", "2deg", "--n", "4", "--out", out][..],
            extra,
        ]
        .concat()
    };
    let tsunami_cases: [(&[&str], &[&str]); 17] = [
        (&["--n", "0"][..], &["n = 0: allowed auto or 1..=4096"][..]),
        (
            &["--lat", "45", "--lon", "-100"][..],
            &["impact at lat 45, lon -100 is on land"][..],
        ),
        (
            &["--lat", "80"][..],
            &["impact at lat 80 lies outside the grid's latitudes -70..70"][..],
        ),
        (&["--resolution", "7x"][..], &["resolution '7x'"][..]),
        (
            &["--resolution", "0.5min"][..],
            &["resolution 0.0083", "1 arc-minute"][..],
        ),
        (
            &["--n", "7"][..],
            &["180 columns, not a multiple of n = 7"][..],
        ),
        (&["--height", "-5"][..], &["hump height -5 m"][..]),
        (
            &["--duration", "0h"][..],
            &["'0h' for '--duration <TIME>'", "above 0s, at most 240h"][..],
        ),
        // The old spellings, refused with the new ones.
        (
            &["--hours", "2"][..],
            &["--hours 2: renamed, use --duration 2h"][..],
        ),
        (
            &["--frame-every", "60"][..],
            &["'--frame-every <TIME>'", "needs its unit: 60min"][..],
        ),
        (&["--sample-every", "60"][..], &["needs its unit: 60s"][..]),
        (
            &["--checkpoint-every", "30"][..],
            &["needs its unit: 30min"][..],
        ),
        (&["--range", "2"][..], &["'2' is not a range", "-2,2"][..]),
        (
            &["--range", "-1,2"][..],
            &["centred on sea level", "-2,2"][..],
        ),
        (&["--region", "10,5,0,1"][..], &["region '10,5,0,1'"][..]),
        (
            &["--wafers", "2x2"][..],
            &["2x2 wafers cannot share the 45x25 PEs"][..],
        ),
        (
            &["--gauges", "/nonexistent/g.csv"][..],
            &["cannot read gauges file"][..],
        ),
    ];
    for (extra, needles) in tsunami_cases {
        assert_rejected(&tsunami(extra), needles);
    }
    assert_rejected(&run(&["--pes", "0x3"]), &["PEs along x = 0"]);
    assert_rejected(
        &run(&["--pes", "8192x8192", "--n", "64"]),
        &["SRAM cells", "at most"],
    );
    assert_rejected(
        &run(&["--backend", "cuda"]),
        &["--backend: unknown backend 'cuda'", "vulkan"],
    );
    let from_env = Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
        .args(run(&[]))
        .env("WGPU_BACKEND", "cuda")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&from_env.stderr);
    assert_eq!(from_env.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("WGPU_BACKEND: unknown backend 'cuda'"),
        "{stderr}"
    );
    assert_rejected(&run(&["--dt", "0.4"]), &["dt = 0.4", "dt <= 0.25"]);
    assert_rejected(
        &run(&["--init", "square"]),
        &["unknown initial condition 'square'"],
    );
    assert_rejected(
        &run(&["--snapshot-every-steps", "0"]),
        &["snapshot-every-steps = 0"],
    );
    for old in ["--snapshot-every", "--checkpoint-every"] {
        let new = format!("{old} 5: renamed, use {old}-steps 5");
        assert_rejected(&run(&[old, "5"]), &[new.as_str()]);
    }
    assert_rejected(
        &run(&[
            "--coef-a", "0", "--coef-c", "0", "--coef-d", "1", "--dt", "1",
        ]),
        &["negative weight", "|D| <= 2A"],
    );
    assert_rejected(
        &run(&["--engine", "mesh"]),
        &["unknown engine 'mesh'", "wafer, fused, global"],
    );
    assert_rejected(
        &["run", "heat7", "--out", out],
        &["unknown kernel 'heat7'", "heat5, heat9"],
    );
    assert_rejected(
        &["bench", "--grid", "100", "--n", "8"],
        &["n = 8", "grid side 100"],
    );
    assert_rejected(&["bench", "--grid", "0"], &["grid = 0", "allowed 1..="]);
    assert_rejected(
        &["bench", "--grid", "1000000", "--n", "4"],
        &["n = 4 leaves 250000 PEs per side", "at most 16384"],
    );
    assert_rejected(
        &run(&["--wafers", "0x2"]),
        &["wafers along x = 0", "1..=16"],
    );
    assert_rejected(
        &run(&["--wafers", "2x2", "--devices", "5"]),
        &["devices = 5", "1..=4"],
    );
    assert_rejected(
        &run(&["--link-capacity", "70000"]),
        &["link capacity = 70000", "0..=65536"],
    );
    assert_rejected(
        &run(&["--link-delay", "5000"]),
        &["'5000' for '--link-delay <LINK_DELAY>'", "0..=1000"],
    );
    assert_rejected(
        &run(&["--link", "0,0,left:delay=1"]),
        &["link '0,0,left:delay=1'"],
    );
    assert_rejected(
        &run(&["--link", "3,0,up:delay=1"]),
        &["wafer (3,0)", "x < 1"],
    );
    assert_rejected(&run(&["--link-timeout", "0"]), &["link-timeout = 0"]);
    assert_rejected(&run(&["--pes", "1x1", "--n", "1"]), &["comm width", ">= 2"]);
    assert_rejected(
        &run(&["--json", "/proc/wafer-emu/stats.json"]),
        &["/proc/wafer-emu"],
    );
    assert!(
        !std::path::Path::new(out).exists(),
        "a rejected run left {out} behind"
    );
}

#[test]
fn an_explicit_gpu_backend_without_adapter_is_an_error() {
    // No Linux machine has a Metal adapter (and no macOS machine a DX12 one).
    let absent = if cfg!(target_os = "macos") {
        "dx12"
    } else {
        "metal"
    };
    let out = scratch("absent");
    assert_rejected(
        &[
            "run",
            "heat5",
            "--backend",
            absent,
            "--out",
            out.to_str().unwrap(),
        ],
        &["no GPU adapter found"],
    );
}

/// A small heat run with every Vulkan driver hidden, and with `hide_gl` every EGL vendor (the
/// GL backend) too; `extra` goes after it.
#[cfg(target_os = "linux")]
fn run_without_vulkan(hide_gl: bool, extra: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wafer-emu"));
    command
        .args([
            "run",
            "heat5",
            "--pes",
            "2x2",
            "--n",
            "4",
            "--steps",
            "5",
            "--no-output",
        ])
        .args(extra)
        .env("VK_ICD_FILENAMES", "/nonexistent")
        .env("VK_DRIVER_FILES", "/nonexistent")
        .env_remove("WGPU_BACKEND")
        .env_remove("WGPU_ADAPTER_NAME");
    if hide_gl {
        command.env("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent");
    }
    command.output().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn auto_passes_over_llvmpipe_gl_and_gl_refuses_several_devices() {
    if !succeeds(&["adapters"]).contains("| Gl | Cpu |") {
        common::say_skipped("no software GL adapter (llvmpipe) on this machine");
        return;
    }
    let out = run_without_vulkan(false, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("software GL adapter; running on the CPU backend"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("on the CPU"));
    let two = ["--wafers", "2x1", "--devices", "2", "--backend", "gl"];
    let out = run_without_vulkan(false, &two);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("devices = 2 on") && stderr.contains("allowed 1 on the GL backend"),
        "{stderr}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn without_any_adapter_auto_falls_back_to_the_cpu_with_a_warning() {
    let out = run_without_vulkan(true, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: no GPU adapter found") && stderr.contains("CPU backend"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("emulated wafer of") && stdout.contains("on the CPU"),
        "{stdout}"
    );
}

#[test]
fn an_unwritable_output_folder_is_rejected_before_any_work() {
    let dir = scratch("unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let out = file.join("out");
    assert_rejected(
        &[
            "run",
            "heat5",
            "--backend",
            "cpu",
            "--out",
            out.to_str().unwrap(),
        ],
        &["cannot write", "a-file"],
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "only the blocking file remains"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_wafer_too_large_for_the_adapter_is_refused() {
    let Some(ctx) = common::gpu() else { return };
    let max = ctx.adapter.max_binding_bytes();
    let prime = |k: &u64| {
        (2..*k)
            .take_while(|d| d * d <= *k)
            .all(|d| !k.is_multiple_of(d))
    };
    let backend = format!("{:?}", ctx.adapter.info.backend).to_lowercase();
    let out = scratch("large");
    let refused = |side: u64, engine: &str, needles: &[&str]| {
        let pes = format!("{side}x{side}");
        let at = out.to_str().unwrap();
        let args = [
            "run",
            "heat5",
            "--pes",
            &pes,
            "--n",
            "8",
            "--backend",
            &backend,
        ];
        let args = [&args[..], &["--engine", engine, "--out", at]].concat();
        assert_rejected(&args, needles);
        assert!(!out.exists(), "a refused run left {} behind", out.display());
    };
    // Enough PEs that one field exceeds a storage binding of this adapter, in Table 3's
    // blocks (100 cells per PE at n = 8) and in the direct reads' dense grid (64) alike, a
    // prime number of them along each side, so that no block of sub-wafers splits it.
    let dense = ((max / 4) as f64 / 64.0).sqrt() as u64;
    let side = (dense + 64..).find(prime).unwrap();
    refused(
        side,
        "auto",
        &["MiB per storage binding", "no block of", "fewer PEs"],
    );
    // Between the two, the explicit engine is refused and names the fused one.
    let side = (dense - 96..dense - 32).rev().find(prime).unwrap();
    assert!(
        side * side * 100 * 4 > max,
        "{side} PEs fit Table 3's blocks"
    );
    refused(side, "wafer", &["no block of", "--engine fused fits it"]);
}

#[test]
fn a_run_writes_fields_and_summary() {
    let out = scratch("good");
    let stdout = succeeds(&[
        "run",
        "heat9",
        "--pes",
        "3x2",
        "--n",
        "4",
        "--steps",
        "10",
        "--snapshot-every-steps",
        "5",
        "--backend",
        "cpu",
        "--check",
        "--out",
        out.to_str().unwrap(),
    ]);
    for needle in [
        "12 x 8 = 96 points",
        "17 FLOPs",
        "bit-identical",
        "updates/s",
        "FLOP/s",
    ] {
        assert!(
            stdout.contains(needle),
            "summary lacks '{needle}':\n{stdout}"
        );
    }
    let names = names_in(&out);
    let expected: Vec<String> = [0, 5, 10]
        .iter()
        .flat_map(|s| {
            [
                format!("heat9_u_step{s:08}.npy"),
                format!("heat9_u_step{s:08}.png"),
            ]
        })
        .chain(["summary.txt", ".wafer-emu.written"].map(String::from))
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(names, expected);
    let npy = std::fs::read(out.join("heat9_u_step00000010.npy")).unwrap();
    assert!(String::from_utf8_lossy(&npy[..128]).contains("'shape': (8, 12)"));
    assert_eq!(npy.len(), 128 + 96 * 4);
    std::fs::remove_dir_all(&out).unwrap();
}

/// The issue's command line: a 4x4 cluster with delayed, bounded links on two devices equals
/// the global kernel, prints its link statistics and writes them as JSON.
#[test]
fn a_shallow_water_run_writes_every_field_and_checks_bits() {
    let out = scratch("swe");
    let dir = out.to_str().unwrap();
    let stdout = succeeds(&[
        "run", "swe", "--pes", "9x5", "--n", "4", "--steps", "4", "--check", "--out", dir,
    ]);
    for needle in [
        "swe (155 FLOPs",
        "model time",
        "bit-identical",
        "range of eta",
    ] {
        assert!(
            stdout.contains(needle),
            "summary lacks '{needle}':\n{stdout}"
        );
    }
    for field in ["u", "v", "eta"] {
        for ext in ["npy", "png"] {
            let file = out.join(format!("swe_{field}_step00000004.{ext}"));
            assert!(file.exists(), "{} missing", file.display());
        }
    }
    // The surface with its latitudes and longitudes, as the tsunami writes it.
    let mut nc = netcdf3::FileReader::open(out.join("swe_step00000004.nc")).unwrap();
    let (ny, nx) = (20, 36);
    for (var, len) in [
        ("lat", ny),
        ("lon", nx),
        ("eta", nx * ny),
        ("u", nx * ny),
        ("v", nx * ny),
    ] {
        assert_eq!(nc.read_var(var).unwrap().len(), len, "{var}");
    }
    let npy = std::fs::read(out.join("swe_eta_step00000004.npy")).unwrap();
    let eta: Vec<f32> = npy[npy.len() - 4 * nx * ny..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let netcdf3::DataVector::F32(stored) = nc.read_var("eta").unwrap() else {
        panic!("eta is f32")
    };
    for (a, b) in stored.iter().zip(&eta) {
        assert!(a.is_nan() || a.to_bits() == b.to_bits(), "{a} vs {b}");
    }
    assert!(stored.iter().any(|v| v.is_nan()) && stored.iter().any(|v| v.is_finite()));
    std::fs::remove_dir_all(&out).unwrap();
}

/// A depression deeper than the ocean (negative depth, which the scheme cannot hold) blows
/// the run up: exit code 3, a message with the step, the place and the CFL number, and the
/// snapshots written before it stay; a blown-up state is never written as a checkpoint.
#[test]
fn a_shallow_water_blow_up_stops_with_its_own_exit_code() {
    let out = scratch("blowup");
    let dir = out.to_str().unwrap();
    let blow_up = |every: [&str; 2]| {
        let case = [
            "run",
            "swe",
            "--relief",
            "flat:4000",
            "--init",
            "hump:0,0,-6000,2000",
        ];
        let tail = ["--steps", "300", "--backend", "cpu", "--out", dir];
        let result = wafer_emu(&[&case[..], &every, &tail].concat());
        let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
        assert_eq!(result.status.code(), Some(3), "{stderr}");
        stderr
    };
    let step_of = |stderr: &str| -> u64 {
        let (_, rest) = stderr.split_once("blew up at step ").expect("the step");
        rest.split(':').next().unwrap().parse().unwrap()
    };
    // It blows up at step 45 (checked every step); checks every few steps catch it long
    // before the next snapshot, at step 100.
    let stderr = blow_up(["--snapshot-every-steps", "100"]);
    assert!(stderr.contains("lat") && stderr.contains("CFL"), "{stderr}");
    assert!((45..100).contains(&step_of(&stderr)), "{stderr}");
    assert!(out.join("swe_eta_step00000000.npy").exists(), "{stderr}");
    std::fs::remove_dir_all(&out).unwrap();
    // Checkpoints every 25 steps: the last sound one stays.
    let stderr = blow_up(["--checkpoint-every-steps", "25"]);
    let step = step_of(&stderr);
    assert!((45..100).contains(&step), "{stderr}");
    let meta = std::fs::read_to_string(out.join("checkpoint").join("meta.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(
        meta["step"].as_u64(),
        Some((step - 1) / 25 * 25),
        "{stderr}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_cluster_run_prints_and_writes_link_statistics() {
    let Some(_) = common::gpu() else { return };
    let json = scratch("cluster-json");
    std::fs::create_dir_all(&json).unwrap();
    let stats = json.join("stats.json");
    let stdout = succeeds(&[
        "run",
        "heat9",
        "--wafers",
        "4x4",
        "--pes",
        "8x8",
        "--n",
        "4",
        "--steps",
        "12",
        "--link-delay",
        "3",
        "--link-capacity",
        "4",
        "--devices",
        "2",
        "--check",
        "--no-output",
        "--json",
        stats.to_str().unwrap(),
    ]);
    for needle in [
        "4x4 wafers of 8x8 PEs",
        "on 2 devices",
        "bit-identical",
        "right link (3,0)->(0,0)",
        "up link (0,3)->(0,0)",
        "max occupancy",
    ] {
        assert!(stdout.contains(needle), "lacks '{needle}':\n{stdout}");
    }
    let text = std::fs::read_to_string(&stats).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let links = value["links"].as_array().unwrap();
    assert_eq!(links.len(), 32);
    for link in links {
        assert_eq!(link["packages"], 12, "{link}");
        assert_eq!(link["delay_rounds"], 3, "{link}");
        assert!(["right", "up"].contains(&link["direction"].as_str().unwrap()));
    }
    assert_eq!(value["check"]["differing_points"], 0);
    std::fs::remove_dir_all(&json).unwrap();
}

/// `--check` runs its reference engine through sub-wafers and bands of rows where one binding
/// does not hold it, and opens it before any work: one that does not fit even so is refused
/// with exit 2 and no output folder.
#[test]
fn a_check_that_does_not_fit_is_refused_before_any_file() {
    let Some(ctx) = common::gpu() else { return };
    let max = ctx.adapter.max_binding_bytes();
    if max >= 145 << 20 {
        common::say_skipped("this adapter's storage bindings hold the 2048x2048 wafer");
        return;
    }
    let out = scratch("check-split");
    let at = out.to_str().unwrap();
    fn run<'a>(at: &'a str, pes: &'a str, n: &'a str, engine: &'a str) -> Vec<&'a str> {
        let flags = ["--engine", engine, "--check", "--pes", pes, "--n", n];
        let args = [&["run", "heat5"], &flags[..], &["--steps", "1"]].concat();
        [&args[..], &["--out", at, "--force"]].concat()
    }
    // The explicit wafer (145 MiB at n = 1) runs as sub-wafers; the global grid (144 MiB at
    // n = 3) in bands of rows.
    let cases = [
        ("1", "global", "bit-identical to the emulated wafer"),
        (
            "3",
            "fused",
            "bit-identical to the global-grid kernel in 2 bands of rows",
        ),
    ];
    for (n, engine, verdict) in cases {
        let stdout = succeeds(&run(at, "2048x2048", n, engine));
        assert!(stdout.contains(verdict), "{stdout}");
    }
    std::fs::remove_dir_all(&out).unwrap();
    // A prime number of PEs along each side whose dense grid exceeds a binding (64 cells per
    // PE at n = 8): no block of sub-wafers splits the wafer that checks the global kernel, on
    // any engine.
    let prime = |k: &u64| {
        (2..*k)
            .take_while(|d| d * d <= *k)
            .all(|d| !k.is_multiple_of(d))
    };
    let side = (((max / 4) as f64 / 64.0).sqrt() as u64 + 8..)
        .find(prime)
        .unwrap();
    assert_rejected(
        &run(at, &format!("{side}x{side}"), "8", "global"),
        &[
            "--check: a wafer of",
            "no block of",
            "fewer PEs",
            "or drop --check",
        ],
    );
    assert!(!out.exists());
}

#[test]
fn a_cluster_that_cannot_progress_is_rejected_with_the_wafer_link_and_step() {
    let Some(_) = common::gpu() else { return };
    let out = scratch("deadlock");
    let out = out.to_str().unwrap();
    assert_rejected(
        &[
            "run",
            "heat5",
            "--wafers",
            "2x1",
            "--pes",
            "4x4",
            "--n",
            "2",
            "--devices",
            "2",
            "--link",
            "1,0,right:capacity=0",
            "--out",
            out,
        ],
        &[
            "wafer (1,0)",
            "right link (1,0)->(0,0)",
            "step-0",
            "capacity 0",
        ],
    );
    assert!(!std::path::Path::new(out).exists(), "left {out} behind");
    // The global engine runs first with --check: still refused before any file.
    let args = heat_run(
        out,
        &[
            "--wafers",
            "2x2",
            "--link-capacity",
            "0",
            "--engine",
            "global",
            "--check",
        ],
    );
    assert_rejected(&args, &["cannot send its step-0 package", "capacity 0"]);
    assert!(!std::path::Path::new(out).exists(), "left {out} behind");
}

/// A small heat run on 3x3 PEs of n = 3 without output, with `extra` arguments.
fn small_run<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let small = ["run", "heat5", "--pes", "3x3", "--n", "3", "--no-output"];
    [&small[..], extra].concat()
}

#[test]
fn the_global_engine_runs_and_checks_against_the_wafer() {
    let stdout = succeeds(&small_run(&[
        "--steps", "20", "--engine", "global", "--check",
    ]));
    assert!(
        stdout.contains("engine        global-grid")
            && stdout.contains("bit-identical to the emulated wafer"),
        "{stdout}"
    );
}

/// Flags that an engine cannot honour are named in a warning, and the run goes on.
#[test]
fn flags_an_engine_ignores_are_named() {
    for (extra, warning) in [
        (
            &["--backend", "cpu", "--engine", "fused"][..],
            "--engine fused runs its wafer",
        ),
        (
            &["--engine", "global", "--time-block", "3"],
            "--time-block is ignored",
        ),
    ] {
        let out = wafer_emu(&small_run(&[&["--steps", "3"][..], extra].concat()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.contains(warning),
            "{extra:?}: {stderr}"
        );
    }
}

/// `--engine auto` (the default) runs heat on the fused engine, bit for bit equal to the
/// global kernel: at small n with time blocks, on a CPU adapter in registers over the dense
/// grid, on a GPU in tiles; at large n with time blocks on a CPU adapter and direct reads on
/// a GPU (`auto_blocks_what_each_backend_can_block` checks the rule in between).
#[test]
fn the_default_engine_fuses_small_n() {
    let Some(ctx) = common::gpu() else { return };
    let run = |n: &'static str| {
        succeeds(&[
            "run",
            "heat5",
            "--pes",
            "16x12",
            "--n",
            n,
            "--steps",
            "23",
            "--check",
            "--no-output",
        ])
    };
    let direct = "reading the neighbours' cells and the links directly";
    let registers = "by vec4s of the owned points' dense grid; time blocks of";
    let (small, large) = match ctx.adapter.is_software() {
        true => (registers, registers),
        false => ("time blocks of 5 steps", direct),
    };
    for (n, engine) in [("2", small), ("64", large)] {
        let stdout = run(n);
        assert!(
            stdout.contains(engine) && stdout.contains("bit-identical"),
            "{stdout}"
        );
    }
}

/// On the CPU backend the default engine blocks every kernel's steps in time, shallow water's
/// two stages included, bit for bit against the global kernel.
#[test]
fn the_default_cpu_engine_blocks_shallow_water_in_time() {
    let args = "run swe --backend cpu --pes 16x12 --n 2 --relief flat:4000 --steps 23 --check";
    let stdout = succeeds(&[args.split(' ').collect(), vec!["--no-output"]].concat());
    assert!(
        stdout.contains("time blocks of 9 steps") && stdout.contains("bit-identical"),
        "{stdout}"
    );
}

/// `--time-block auto` (the default) is what the auto engine picks; `--time-block 1` keeps it
/// from blocking at all, and is as exact.
#[test]
fn time_block_one_keeps_auto_from_blocking() {
    let run = |block: &str| {
        let args = [
            "run",
            "heat5",
            "--backend",
            "cpu",
            "--pes",
            "8x8",
            "--steps",
            "20",
        ];
        let more = [
            "--check",
            "--no-output",
            "--time-block",
            block,
            "--json",
            "-",
        ];
        json_of(&[&args[..], &more].concat())
    };
    let (auto, none) = (run("auto"), run("1"));
    assert_eq!(auto["plan"]["time_block"], 15, "{auto}");
    assert_eq!(none["plan"]["time_block"], 1, "{none}");
    assert_eq!(none["check"]["differing_points"], 0, "{none}");
    assert_rejected(
        &["run", "heat5", "--time-block", "often"],
        &["'often' is not a time block", "auto"],
    );
}

#[test]
fn bench_reports_every_variant_with_ratios() {
    let stdout = succeeds(&[
        "bench", "heat9", "--grid", "48", "--n", "4,16", "--steps", "2", "--reps", "1",
    ]);
    for needle in [
        "CPU copy (memory ceiling)",
        "CPU emulated wafer 12x12 PEs, n = 4",
        "CPU emulated wafer 3x3 PEs, n = 16",
        // The CPU backend's own time blocks (`--time-block auto`, the default).
        "CPU emulated wafer 12x12 PEs, n = 4, time blocks of 15",
        "/ceiling",
    ] {
        assert!(
            stdout.contains(needle),
            "bench output lacks '{needle}':\n{stdout}"
        );
    }
}

#[test]
fn predict_rejects_bad_parameters() {
    assert_rejected(
        &["predict", "--pes", "cs4"],
        &["unknown node size 'cs4'", "744x1116"],
    );
    assert_rejected(
        &["predict", "--set", "link_latency_us=-1"],
        &["link_latency_us = -1", ">= 0"],
    );
    assert_rejected(
        &["predict", "--link-bandwidth-gbps", "0"],
        &["link_bandwidth_gbps = 0", "> 0"],
    );
    assert_rejected(&["predict", "--clock-ghz", "0"], &["clock_ghz = 0"]);
    assert_rejected(
        &["predict", "--set", "colour=red"],
        &["unknown timing parameter 'colour'"],
    );
    assert_rejected(&["predict", "--method", "mpi"], &["unknown method 'mpi'"]);
    // The cap on simulated PEs applies to what is simulated: one wafer, unless --full.
    let huge = [
        "predict",
        "--pes",
        "16x16",
        "--wafers",
        "1100x1100",
        "--n",
        "8",
    ];
    let stdout = succeeds(&[&huge[..], &["--device", "cpu"]].concat());
    assert!(stdout.contains("one wafer linked to itself"), "{stdout}");
    assert_rejected(
        &[&huge[..], &["--full"]].concat(),
        &[
            "309760000 PEs to simulate",
            "at most 268435456",
            "without --full",
        ],
    );
}

/// A run whose setup needs more memory than the process may take (here `ulimit -v`, as a
/// batch job's limit would) is refused before it allocates, with both figures.
#[test]
fn a_run_larger_than_the_memory_limit_is_refused_before_it_starts() {
    let exe = env!("CARGO_BIN_EXE_wafer-emu");
    for (case, needle) in [
        (
            "run swe --pes 2500x2500 --n 4 --steps 1 --no-output",
            "swe on a 10000x10000 grid needs 3815 MiB",
        ),
        (
            "tsunami --resolution 1min --duration 6min --out /nonexistent/t",
            "swe-c on a 21600x11936 grid",
        ),
        (
            "run heat5 --pes 7000x7000 --n 4 --backend cpu --no-output",
            "heat5 on a 28000x28000 grid",
        ),
        (
            "predict --pes 15000x15000 --wafers 1x1 --n 1 --device cpu",
            "the timing model of 225000000 PEs needs",
        ),
    ] {
        let out = Command::new("sh")
            .args(["-c", &format!("ulimit -v 2000000 && exec {exe} {case}")])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert!(stderr.contains(needle), "{case}: {stderr}");
        assert!(stderr.contains("MiB are available"), "{case}: {stderr}");
    }
}

#[test]
fn predict_writes_telemetry() {
    let dir = scratch("telemetry");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("clocks.npy");
    let stdout = succeeds(&[
        "predict",
        "heat9",
        "--wafers",
        "2x1",
        "--pes",
        "8x6",
        "--n",
        "4",
        "--full",
        "--max-steps",
        "64",
        "--telemetry",
        path.to_str().unwrap(),
        "--sample-every-steps",
        "16",
        "--sample-stride",
        "4",
    ]);
    assert!(
        stdout.contains("cycles/step") && stdout.contains("utilisation"),
        "{stdout}"
    );
    let npy = std::fs::read(&path).unwrap();
    let header = String::from_utf8_lossy(&npy[..128]).to_string();
    assert!(
        header.contains("'<f8'") && header.contains("'shape': (2, 1, 2, 2, 4)"),
        "{header}"
    );
    assert_eq!(npy.len(), 128 + 2 * 2 * 2 * 4 * 8);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reproduce_writes_tables_figures_and_report() {
    let dir = scratch("reproduce");
    succeeds(&[
        "reproduce",
        "--pes",
        "24x36,16x16",
        "--link-jitter",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    for name in [
        "table6.csv",
        "table2.csv",
        "figure3_10us.png",
        "figure7.png",
        "figure8.png",
        "figure9.png",
        "report.md",
    ] {
        let len = std::fs::metadata(dir.join(name))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 100, "{name}: {len} bytes");
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for needle in [
        "## Table 6",
        "## Figure 3",
        "## Figure 7",
        "## Figure 8",
        "## Figure 9",
        "## Table 2",
        "## Headline",
        "## Which node size each figure matches",
        "| Figure 8: compute/I-O crossover, points per core | 2.56e2 |",
        "**Reduced wafer size:** 24x36, 16x16",
        "exactly 100 %, by construction",
        "### Figure 7 with link jitter: simulated",
        "wafers of 3x5 PEs",
    ] {
        assert!(report.contains(needle), "report lacks {needle}");
    }
    let figure8 = std::fs::read_to_string(dir.join("figure8.csv")).unwrap();
    assert!(figure8.contains("\n24x36,") && figure8.contains("\n16x16,"));
    let table6 = std::fs::read_to_string(dir.join("table6.csv")).unwrap();
    assert!(table6.contains("heat5,64,27869.48"), "{table6}");
    assert_rejected(
        &["reproduce", "--pes", "0x3", "--out", dir.to_str().unwrap()],
        &["PEs along x = 0"],
    );
    assert_rejected(
        &[
            "reproduce",
            "--link-jitter",
            "-1",
            "--out",
            dir.to_str().unwrap(),
        ],
        &["link-jitter = -1 us", "allowed 0 to 1e6"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_command_has_help() {
    for cmd in [
        &["--help"][..],
        &["run", "--help"],
        &["bench", "--help"],
        &["adapters", "--help"],
        &["predict", "--help"],
        &["reproduce", "--help"],
        &["tsunami", "--help"],
    ] {
        let out = wafer_emu(cmd);
        assert!(out.status.success(), "{cmd:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage"),
            "{cmd:?}"
        );
    }
}

/// An output folder that holds results is refused unless `--force`; one another run is
/// writing (its lock) always, one whose lock a dead process left never; `--json` and `--telemetry` write only regular files. Each
/// refusal exits 2 and changes nothing.
#[test]
fn output_folders_are_never_mixed_and_only_regular_files_are_written() {
    let out = scratch("mixed");
    let dir = out.to_str().unwrap();
    let run = |extra: &[&'static str]| heat_run(dir, extra);
    succeeds(&run(&[]));
    let before = std::fs::read(out.join("summary.txt")).unwrap();
    assert_rejected(&run(&[]), &["already holds results", "--force"]);
    assert_eq!(std::fs::read(out.join("summary.txt")).unwrap(), before);
    succeeds(&run(&["--force"]));
    std::fs::write(out.join(".wafer-emu.lock"), b"1").unwrap();
    assert_rejected(&run(&["--force"]), &["another wafer-emu run is writing"]);
    // A lock whose run is gone (no such process) is taken over, and released at the end.
    std::fs::write(out.join(".wafer-emu.lock"), b"999999999").unwrap();
    succeeds(&run(&["--force"]));
    assert!(!out.join(".wafer-emu.lock").exists());
    let other = scratch("mixed-json");
    std::fs::create_dir_all(&other).unwrap();
    let target = other.join("target.json");
    std::fs::write(&target, b"keep").unwrap();
    let link = other.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    // A folder, a symbolic link and a device.
    for path in [other.to_str().unwrap(), link.to_str().unwrap(), "/dev/null"] {
        let args = heat_run(dir, &["--no-output", "--json", path]);
        assert_rejected(&args, &["--json", "not a regular file"]);
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    assert_rejected(
        &[
            "predict",
            "heat5",
            "--pes",
            "8x8",
            "--n",
            "4",
            "--telemetry",
            "/dev/null",
        ],
        &["--telemetry /dev/null", "not a regular file"],
    );
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

/// `--force` removes the files earlier runs wrote into the folder (those a resumed run added
/// too, and a checkpoint an interrupted swap left) before it writes its own, and keeps every
/// file they did not write.
#[test]
fn force_replaces_an_earlier_runs_files_and_keeps_the_others() {
    let out = scratch("force");
    let dir = out.to_str().unwrap();
    let base = ["run", "heat5", "--pes", "2x2", "--n", "4"];
    let every = [
        "--snapshot-every-steps",
        "1",
        "--checkpoint-every-steps",
        "2",
    ];
    succeeds(&[&base[..], &every, &["--steps", "4", "--out", dir]].concat());
    succeeds(&[&base[..], &every, &["--steps", "6", "--resume", dir]].concat());
    let visible = || {
        let names = names_in(&out).into_iter();
        names
            .filter(|name| !name.starts_with('.'))
            .collect::<Vec<_>>()
    };
    let snapshots = |steps: u32| {
        (0..=steps).flat_map(|s| ["npy", "png"].map(|ext| format!("heat5_u_step{s:08}.{ext}")))
    };
    let mut expected: Vec<String> = snapshots(6)
        .chain(["checkpoint", "summary.txt"].map(String::from))
        .collect();
    expected.sort();
    assert_eq!(visible(), expected);
    // What a run killed between the renames of a checkpoint swap leaves.
    let swapped = out.join(".checkpoint.old-1");
    std::fs::create_dir(&swapped).unwrap();
    std::fs::copy(out.join("checkpoint/meta.json"), swapped.join("meta.json")).unwrap();
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    std::fs::create_dir(out.join("mine")).unwrap();
    std::fs::write(out.join("mine").join("heat5_u_step00000003.npy"), b"mine").unwrap();
    succeeds(&[&base[..], &["--steps", "1", "--out", dir, "--force"]].concat());
    let mut expected: Vec<String> = snapshots(1)
        .skip(2)
        .chain(["mine", "notes.txt", "summary.txt"].map(String::from))
        .collect();
    expected.sort();
    assert_eq!(visible(), expected);
    assert!(!swapped.exists());
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
    let kept = out.join("mine").join("heat5_u_step00000003.npy");
    assert_eq!(std::fs::read(kept).unwrap(), b"mine");
}

/// Negative numbers are values (named in the error), not unknown flags; a cost model with no
/// cost, or cheaper than peak, is refused.
#[test]
fn negative_numbers_and_impossible_cost_models_are_named() {
    let out = wafer_emu(&["run", "heat5", "--n", "-1", "--no-output"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'-1'")
            && stderr.contains("--n")
            && !stderr.contains("unexpected argument"),
        "{stderr}"
    );
    assert_rejected(
        &[
            "predict", "heat5", "--set", "a0=0", "--set", "a1=0", "--set", "a2=0",
        ],
        &["a0 = 0, a1 = 0, a2 = 0", "one of them > 0"],
    );
    assert_rejected(
        &["predict", "heat5", "--set", "a2=1"],
        &["fewer than the FLOPs need at peak"],
    );
    // 744 x 1116 PEs sampled every step for 20000 steps: far beyond any machine's memory.
    let telemetry = std::env::temp_dir().join(format!("wafer-emu-{}-t.npy", std::process::id()));
    assert_rejected(
        &[
            "predict",
            "heat5",
            "--telemetry",
            telemetry.to_str().unwrap(),
            "--sample-every-steps",
            "1",
            "--sample-stride",
            "1",
        ],
        &[
            "the telemetry needs",
            "MiB of memory",
            "--sample-every-steps",
        ],
    );
    assert!(!telemetry.exists());
}

/// A reader that closes the pipe early (`predict ... | head -1`) ends the program quietly.
#[test]
fn a_closed_output_pipe_ends_quietly() {
    for args in [
        &["predict", "heat5", "--pes", "64x64", "--n", "4"][..],
        &["adapters"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Parses the JSON a command prints with `--json -`.
fn json_of(args: &[&str]) -> serde_json::Value {
    let stdout = succeeds(args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
}

/// A bench variant too large for the adapter is reported as skipped and the bench goes on (the
/// global kernel runs in bands of rows).
#[test]
fn bench_skips_variants_that_do_not_fit() {
    let Some(ctx) = common::gpu() else { return };
    let report = json_of(&[
        "bench", "heat5", "--grid", "8192", "--n", "64", "--steps", "1", "--reps", "1", "--no-cpu",
        "--json", "-",
    ]);
    let (rows, skipped) = (
        report["rows"].as_array().unwrap().len(),
        report["skipped"].as_array().unwrap(),
    );
    // Copy, global, wafer, fused, and fused with time blocks.
    assert_eq!(rows + skipped.len(), 5, "{report:#}");
    let reason = |k: usize| skipped[k]["reason"].as_str().unwrap().to_string();
    if ctx.describe().contains("llvmpipe") {
        // 256 MiB per field against lavapipe's 128 MiB binding: the global kernel runs in
        // bands of rows, the others are skipped.
        assert_eq!(skipped.len(), 4, "{report:#}");
        assert!(reason(0).contains("MiB per storage binding"));
        let global = report["rows"][0]["variant"].as_str().unwrap();
        assert!(global.contains("global kernel in 3 bands"), "{report:#}");
    }
}

/// `bench --profile` times every dispatch of each GPU variant: the explicit wafer's sendrecv
/// and compute once per step, the fused engine's receive tick and its tiled stage (or direct
/// reads: the points by the wafer's low edges, which tick, and the rest), time blocks once per
/// block; the kernels' time fits in the profiled run's wall time. The CPU backend is refused.
#[test]
fn bench_profile_times_each_kernel_of_each_gpu_variant() {
    let Some(ctx) = common::gpu() else { return };
    if let Err(e) = ctx.check_profile() {
        common::say_skipped(&e.to_string());
        return;
    }
    let report = json_of(&[
        "bench",
        "heat5",
        "--grid",
        "120",
        "--n",
        "3,40",
        "--steps",
        "10",
        "--reps",
        "1",
        "--time-block",
        "5",
        "--profile",
        "--json",
        "-",
    ]);
    let rows = report["rows"].as_array().unwrap();
    let profile = |variant: &str| {
        let row = rows
            .iter()
            .find(|r| r["variant"].as_str().unwrap().starts_with(variant))
            .unwrap_or_else(|| panic!("no row {variant}: {report:#}"));
        row["profile"].clone()
    };
    // Dispatches per step of each kernel, by variant.
    let fused: &[(&str, f64)] = match ctx.tuning.fused_direct {
        true => &[("heat5 edges", 1.0), ("heat5 direct", 1.0)],
        false => &[("tick", 1.0), ("heat5", 1.0)],
    };
    let expect: [(&str, &[(&str, f64)]); 5] = [
        ("GPU copy", &[("copy", 1.0)]),
        ("GPU global", &[("heat5", 1.0)]),
        (
            "GPU emulated wafer 40x40 PEs, n = 3",
            &[("sendrecv", 1.0), ("heat5", 1.0)],
        ),
        ("GPU fused wafer 40x40 PEs, n = 3", fused),
        (
            "GPU fused wafer 40x40 PEs, n = 3, time blocks",
            &[("time block", 0.2)],
        ),
    ];
    for (variant, kernels) in expect {
        let p = profile(variant);
        let found = p["kernels"]
            .as_array()
            .unwrap_or_else(|| panic!("{variant}: {p:#}"));
        let mut busy = 0.0;
        for k in found {
            let seconds = k["gpu_seconds"].as_f64().unwrap();
            assert!(seconds > 0.0, "{variant}: {k}");
            busy += seconds;
        }
        for &(label, per_step) in kernels {
            let k = found
                .iter()
                .find(|k| k["kernel"] == label)
                .unwrap_or_else(|| panic!("{variant}: no {label} in {p:#}"));
            assert_eq!(
                k["dispatches"].as_f64().unwrap(),
                per_step * 10.0,
                "{variant}: {k}"
            );
        }
        assert!(
            busy <= p["wall_seconds"].as_f64().unwrap(),
            "{variant}: {p:#}"
        );
    }
    assert!(profile("CPU").is_null(), "{report:#}");
    assert_rejected(
        &[
            "bench",
            "--grid",
            "64",
            "--n",
            "8",
            "--backend",
            "cpu",
            "--profile",
        ],
        &["--profile", "needs a GPU adapter"],
    );
}

/// A run file holds what a command line says; flags override it; unknown keys are named.
#[test]
fn run_files_hold_the_command_line_and_flags_override_them() {
    let dir = scratch("runfile");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("case.toml");
    std::fs::write(
        &file,
        "kernel = \"heat9\"\npes = \"4x4\"\nn = 4\nsteps = 7\nno_output = true\nbackend = \"cpu\"\nlink = [\"0,0,up:delay=1\"]\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let run = json_of(&["run", "--config", file, "--steps", "3", "--json", "-"]);
    assert_eq!(run["kernel"], "heat9");
    assert_eq!(run["steps"], 3);
    assert_eq!(run["pes_per_wafer"][0], 4);
    assert_eq!(run["plan"]["engine"], "cpu_wafer", "{run}");
    assert!(run["plan"]["time_block"].is_u64(), "{run}");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "kernel = \"heat5\"\nstepz = 3\n").unwrap();
    assert_rejected(
        &["run", "--config", bad.to_str().unwrap()],
        &["unknown key 'stepz'", "steps"],
    );
    for (command, text, needles) in [
        (
            "run",
            "steps = [3, 5]\n",
            &["'steps' takes one value, not a list"][..],
        ),
        (
            "run",
            "no_output = \"yes\"\n",
            &["'no_output' is a switch: allowed true or false"],
        ),
        (
            "run",
            "steps = true\n",
            &["'steps' is boolean: allowed a string or a number"],
        ),
        (
            "adapters",
            "kernel = \"heat5\"\n",
            &["unknown key 'kernel': allowed backend"],
        ),
    ] {
        std::fs::write(&bad, text).unwrap();
        assert_rejected(&[command, "--config", bad.to_str().unwrap()], needles);
    }
    assert_rejected(
        &["run", "--config", file, "--config", bad.to_str().unwrap()],
        &["--config given twice", "allowed one run file"],
    );
    assert_rejected(
        &["sweep", "merge", "sw", "--config", file],
        &["`wafer-emu sweep merge` takes no run file"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Values past what a count or a cost can hold are refused, naming the flag and the limit,
/// not wrapped round or printed as inf and NaN.
#[test]
fn overflowing_values_are_refused_by_name() {
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &[
                "predict",
                "--pes",
                "65536x65536",
                "--wafers",
                "65536x65536",
                "--full",
            ],
            &[
                "65536x65536 wafers of 65536x65536 PEs",
                "allowed at most 9.007e15",
            ],
        ),
        (
            &[
                "bench",
                "--time-block",
                "7",
                "--steps",
                "18446744073709551615",
            ],
            &["steps = 18446744073709551615: allowed 1..=1000000000"],
        ),
        (
            &["predict", "--link-latency-us", "1e12"],
            &["a link's latency (--link-latency-us"],
        ),
        (
            &["predict", "--clock-ghz", "1e12"],
            &["--clock-ghz", "allowed less than"],
        ),
        (
            &["predict", "--set", "hop_latency_ns=1e30"],
            &["a link's latency", "hop_latency_ns"],
        ),
    ];
    for (args, needles) in cases {
        assert_rejected(args, needles);
    }
}

/// A headless machine without `XDG_RUNTIME_DIR` hears nothing from Mesa's window-system code.
#[test]
fn a_headless_run_is_quiet() {
    let out = Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
        .args([
            "run",
            "heat5",
            "--pes",
            "4x4",
            "--steps",
            "2",
            "--no-output",
        ])
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
}

/// A standard error that cannot be written (full) loses the warnings and the error message,
/// not the exit status: success stays 0 and bad input 2, never a panic's 101.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stderr_keeps_the_exit_status() {
    let run = |args: &[&str]| {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
            .args(args)
            .stderr(full)
            .status()
            .expect("runs")
            .code()
    };
    let warned = [
        "run", "heat5", "--pes", "4x4", "--steps", "2", "--wafers", "2x1",
    ];
    assert_eq!(run(&[&warned[..], &["--no-output"]].concat()), Some(0));
    assert_eq!(
        run(&["run", "heat5", "--devices", "2", "--no-output"]),
        Some(2)
    );
}

/// A run refused after it claimed its output folder removes the folder it created (an empty
/// one), and keeps one that was there before.
#[test]
fn a_refused_run_leaves_no_folder_it_created() {
    let cases: [&[&str]; 2] = [
        &[
            "tsunami",
            "--resolution",
            "2deg",
            "--n",
            "4",
            "--region",
            "91,95,0,1",
        ],
        &["reproduce", "--pes", "100000x100000"],
    ];
    for (k, case) in cases.into_iter().enumerate() {
        let out = scratch(&format!("refused-{k}"));
        let args = [case, &["--out", out.to_str().unwrap()]].concat();
        let result = wafer_emu(&args);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{case:?}: {stderr}");
        assert!(!out.exists(), "{case:?} left {}", out.display());
        std::fs::create_dir_all(&out).unwrap();
        assert_eq!(wafer_emu(&args).status.code(), Some(2), "{case:?}");
        assert!(out.is_dir() && names_in(&out).is_empty(), "{case:?}");
        std::fs::remove_dir_all(&out).unwrap();
    }
}
