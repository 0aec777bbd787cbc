//! Checkpoints: a run or a tsunami stopped (by its step count, or by SIGTERM) and resumed from
//! its checkpoint ends bit for bit where an uninterrupted one ends, for heat on one wafer and
//! on a 2x2 cluster with link delays on 2 devices, for shallow water and for the tsunami (its
//! maps, gauges and frames too); a checkpoint of another problem is refused.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn wafer_emu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) {
    let out = wafer_emu(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wafer-emu-ckpt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `args` into `out` and sends SIGTERM once its first checkpoint exists; whether it then
/// failed (stopped before its end) and its standard error.
fn stop_by_sigterm(args: &[&str], out: &Path) -> (bool, String) {
    sigterm_once(args, out, &out.join("checkpoint/meta.json"), Duration::ZERO)
}

/// Runs `args` into `out` and sends SIGTERM `after` the file `sign` appears; whether the run
/// then failed and its standard error.
fn sigterm_once(args: &[&str], out: &Path, sign: &Path, after: Duration) -> (bool, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
        .args(args)
        .args(["--out", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !sign.exists() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(after);
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (!output.status.success(), stderr)
}

fn backend() -> &'static str {
    match common::gpu() {
        Some(_) => "auto",
        None => "cpu",
    }
}

/// Runs `case` to `total` steps in one go and in two (to `half`, then resumed), and compares
/// every field's final `.npy` byte for byte.
fn assert_resumes(name: &str, case: &[&str], (half, total): (u64, u64), fields: &[&str]) {
    let (whole, parts) = (
        scratch(&format!("{name}-whole")),
        scratch(&format!("{name}-parts")),
    );
    let (half, total) = (half.to_string(), total.to_string());
    let run = |dir: &Path, extra: &[&str]| {
        let dir = dir.to_str().unwrap().to_string();
        let mut args: Vec<&str> = case.to_vec();
        args.extend(["--backend", backend(), "--checkpoint-every-steps", "5"]);
        args.extend(extra);
        match extra.contains(&"--resume") {
            true => args.push(""),
            false => args.extend(["--out", &dir]),
        }
        args.retain(|a| !a.is_empty());
        ok(&args);
    };
    run(&whole, &["--steps", &total]);
    run(&parts, &["--steps", &half]);
    run(
        &parts,
        &["--steps", &total, "--resume", parts.to_str().unwrap()],
    );
    for field in fields {
        let file = format!(
            "{}_{field}_step{:08}.npy",
            case[1],
            total.parse::<u64>().unwrap()
        );
        let (a, b) = (
            std::fs::read(whole.join(&file)).unwrap(),
            std::fs::read(parts.join(&file)).unwrap(),
        );
        assert!(a == b, "{name}: {file} differs after resuming");
    }
    std::fs::remove_dir_all(&whole).unwrap();
    std::fs::remove_dir_all(&parts).unwrap();
}

#[test]
fn heat_on_one_wafer_resumes_bit_for_bit() {
    assert_resumes(
        "heat1",
        &[
            "run", "heat9", "--pes", "6x5", "--n", "4", "--init", "random:3",
        ],
        (10, 23),
        &["u"],
    );
}

#[test]
fn heat_on_a_cluster_with_link_delays_on_two_devices_resumes_bit_for_bit() {
    let case = [
        "run",
        "heat5",
        "--wafers",
        "2x2",
        "--pes",
        "3x4",
        "--n",
        "3",
        "--devices",
        "2",
        "--link-delay",
        "2",
        "--link",
        "1,0,up:delay=5,capacity=3",
        "--init",
        "random:5",
    ];
    assert_resumes("cluster", &case, (15, 31), &["u"]);
}

#[test]
fn shallow_water_resumes_bit_for_bit() {
    for kernel in ["swe", "swe-c"] {
        shallow_water_resumes(kernel);
    }
}

fn shallow_water_resumes(kernel: &'static str) {
    let case = [
        "run",
        kernel,
        "--pes",
        "18x8",
        "--n",
        "4",
        "--init",
        "random:9",
        "--wafers",
        "1x2",
        "--link-delay",
        "1",
    ];
    assert_resumes(kernel, &case, (10, 25), &["u", "v", "eta"]);
}

/// SIGTERM: the run writes a checkpoint, says how to resume, exits with an error and leaves
/// no temporary file; resumed, it ends where an uninterrupted run ends.
#[test]
fn a_run_stopped_by_sigterm_resumes_bit_for_bit() {
    let (whole, stopped) = (scratch("term-whole"), scratch("term-stopped"));
    let case = [
        "run",
        "heat5",
        "--pes",
        "64x64",
        "--n",
        "8",
        "--steps",
        "1500",
        "--backend",
        "cpu",
        "--checkpoint-every-steps",
        "100",
    ];
    ok(&[&case[..], &["--out", whole.to_str().unwrap()]].concat());
    let (stopped_early, stderr) = stop_by_sigterm(&case, &stopped);
    assert!(
        stopped_early && stderr.contains("stopped by a signal at step"),
        "{stderr}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&stopped)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp") || n.contains(".old") || n.ends_with(".lock"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    ok(&[&case[..], &["--resume", stopped.to_str().unwrap()]].concat());
    let file = "heat5_u_step00001500.npy";
    assert!(std::fs::read(whole.join(file)).unwrap() == std::fs::read(stopped.join(file)).unwrap());
    std::fs::remove_dir_all(&whole).unwrap();
    std::fs::remove_dir_all(&stopped).unwrap();
}

#[test]
fn a_checkpoint_of_another_problem_is_refused() {
    let dir = scratch("other");
    let d = dir.to_str().unwrap();
    let small = [
        "run",
        "heat5",
        "--pes",
        "4x4",
        "--n",
        "4",
        "--backend",
        "cpu",
    ];
    ok(&[
        &small[..],
        &["--steps", "5", "--checkpoint-every-steps", "5", "--out", d],
    ]
    .concat());
    let out = wafer_emu(
        &[
            &small[..],
            &["--steps", "9", "--coef-a", "0.5", "--resume", d],
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("belongs to another problem"), "{stderr}");
    // A NaN in the checkpoint's field: damaged, named with its point.
    let field = dir.join("checkpoint").join("u.npy");
    let sound = std::fs::read(&field).unwrap();
    let mut bytes = sound.clone();
    let at = bytes.len() - 4 * 16 + 4 * 5;
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&field, bytes).unwrap();
    let resume = || wafer_emu(&[&small[..], &["--steps", "9", "--resume", d]].concat());
    let out = resume();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("NaN at point (5, 15): the checkpoint is damaged"),
        "{stderr}"
    );
    // Four values overwritten with finite ones: the checksum says so.
    let mut bytes = sound.clone();
    let at = bytes.len() - 4 * 16;
    bytes[at..at + 16].copy_from_slice(bytemuck::cast_slice(&[0.25f32; 4]));
    std::fs::write(&field, bytes).unwrap();
    let out = resume();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("u.npy: its checksum differs") && stderr.contains("damaged"),
        "{stderr}"
    );
    // Restored, it resumes.
    std::fs::write(&field, sound).unwrap();
    let out = resume();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A tsunami stopped after one model hour (by its --duration, and by SIGTERM) and resumed to
/// three writes the same gauges, summary table, NetCDF file and last frame, byte for byte, as
/// one that ran three hours in one go; its maps and gauges' records travel in the checkpoint.
/// One stopped between two frames keeps its last step's own frame and draws the later ones.
#[test]
fn a_tsunami_resumes_bit_for_bit() {
    let (whole, parts, stopped, between) = (
        scratch("tsunami-whole"),
        scratch("tsunami-parts"),
        scratch("tsunami-stopped"),
        scratch("tsunami-between"),
    );
    let case = |hours: &'static str| {
        [
            "tsunami",
            "--resolution",
            "2deg",
            "--n",
            "4",
            "--duration",
            hours,
            "--sample-every",
            "300s",
            "--frame-every",
            "60min",
            "--relief",
            "etopo1-1deg",
            "--region",
            "none",
            "--backend",
            "cpu",
            "--checkpoint-every",
            "30min",
        ]
    };
    let at = |dir: &Path| dir.to_str().unwrap().to_string();
    ok(&[&case("3h")[..], &["--out", &at(&whole)]].concat());
    ok(&[&case("1h")[..], &["--out", &at(&parts)]].concat());
    ok(&[&case("3h")[..], &["--resume", &at(&parts)]].concat());
    // The same continued from wherever a SIGTERM stopped it.
    let (stopped_early, stderr) = stop_by_sigterm(&case("3h"), &stopped);
    assert!(
        !stopped_early || stderr.contains("stopped by a signal at step"),
        "{stderr}"
    );
    ok(&[&case("3h")[..], &["--resume", &at(&stopped)]].concat());
    ok(&[&case("1.5h")[..], &["--out", &at(&between)]].concat());
    ok(&[&case("3h")[..], &["--resume", &at(&between)]].concat());
    assert!(between.join("eta_global_t00090min.png").exists());
    for file in [
        "gauges.csv",
        "gauge_summary.csv",
        "tsunami.nc",
        "eta_global_t00120min.png",
        "eta_global_t00180min.png",
        "max_eta.png",
        "arrival_time.png",
    ] {
        let expected = std::fs::read(whole.join(file)).unwrap();
        let between = (file != "tsunami.nc").then_some(&between);
        for dir in [Some(&parts), Some(&stopped), between]
            .into_iter()
            .flatten()
        {
            assert!(
                std::fs::read(dir.join(file)).unwrap() == expected,
                "{file} differs after resuming in {}",
                dir.display()
            );
        }
    }
    // The resumed run stepped only what was left.
    let stepped = |dir: &Path| -> u64 {
        let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
        let (_, rest) = summary.split_once("s stepping ").unwrap();
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    let (all, rest) = (stepped(&whole), stepped(&parts));
    assert!(rest < all && 3 * rest + 3 >= 2 * all, "{rest} of {all}");
    // A damaged checkpoint is refused before any output is written.
    let frames = parts.join("checkpoint").join("frames.json");
    std::fs::write(&frames, &std::fs::read(&frames).unwrap()[..10]).unwrap();
    let before = std::fs::metadata(parts.join("tsunami.nc"))
        .unwrap()
        .modified()
        .unwrap();
    let out = wafer_emu(&[&case("4h")[..], &["--resume", &at(&parts)]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("frames.json"), "{stderr}");
    let after = std::fs::metadata(parts.join("tsunami.nc"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
    for dir in [whole, parts, stopped, between] {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// SIGTERM without `--checkpoint-every-steps`: the run stops at its next chunk of steps, says it
/// cannot be resumed and leaves its folder unlocked; the temporary file of a killed run is
/// removed by the next run that claims the folder.
#[test]
fn a_run_without_checkpoints_stops_cleanly_on_sigterm() {
    let out = scratch("term-unsaved");
    let case = [
        "run", "heat5", "--pes", "64x64", "--n", "8", "--steps", "200000",
    ];
    let case = [&case[..], &["--backend", "cpu"]].concat();
    let lock = out.join(".wafer-emu.lock");
    let (failed, stderr) = sigterm_once(&case, &out, &lock, Duration::from_millis(300));
    assert!(failed, "{stderr}");
    assert!(
        stderr.contains("stopped by a signal at step") && stderr.contains("cannot be resumed"),
        "{stderr}"
    );
    assert!(!out.join(".wafer-emu.lock").exists(), "{stderr}");
    // A killed run's temporary file (its process gone) goes with the next claim. (The run
    // above wrote nothing, so its folder went with it.)
    std::fs::create_dir_all(&out).unwrap();
    let stale = out.join(".heat5_u_step00000009.npy.tmp-4194303");
    std::fs::write(&stale, b"half").unwrap();
    let small = ["run", "heat5", "--pes", "2x2", "--n", "4", "--steps", "9"];
    let tail = [
        "--backend",
        "cpu",
        "--force",
        "--out",
        out.to_str().unwrap(),
    ];
    ok(&[&small[..], &tail].concat());
    assert!(!stale.exists());
    std::fs::remove_dir_all(&out).unwrap();
}

/// `wafer-emu resume DIR` replays the command line the checkpoint keeps, with a new length:
/// the same field as a run that went there in one go; a flag that would change the problem
/// is refused by name.
#[test]
fn a_run_resumes_from_its_folder_alone() {
    let (whole, parts) = (scratch("folder-whole"), scratch("folder-parts"));
    let case: Vec<&str> = "run heat5 --pes 4x4 --n 4 --backend cpu"
        .split(' ')
        .collect();
    let at = |dir: &Path| dir.to_str().unwrap().to_owned();
    ok(&[&case[..], &["--steps", "20", "--out", &at(&whole)]].concat());
    let first = [
        "--steps",
        "10",
        "--checkpoint-every-steps",
        "5",
        "--out",
        &at(&parts),
    ];
    ok(&[&case[..], &first].concat());
    ok(&["resume", &at(&parts), "--steps", "20"]);
    let file = "heat5_u_step00000020.npy";
    assert!(std::fs::read(whole.join(file)).unwrap() == std::fs::read(parts.join(file)).unwrap());
    let refused = wafer_emu(&["resume", &at(&parts), "--pes", "8x8"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--pes cannot change on resume") && stderr.contains("allowed --steps"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&whole).unwrap();
    std::fs::remove_dir_all(&parts).unwrap();
}
