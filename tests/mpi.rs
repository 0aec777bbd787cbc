//! Clusters over MPI ranks (`--features mpi`, run under Open MPI's `mpirun`): bit for bit the
//! one-process run for every rank count, even splits and uneven; checkpoints restart on another
//! rank count; a killed rank ends them all.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_wafer-emu");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wafer-emu-mpi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `mpirun -n ranks wafer-emu ARGS` (as root in CI, more ranks than cores here).
fn mpirun(ranks: usize) -> Command {
    let mut command = Command::new("mpirun");
    command.args(["--allow-run-as-root", "--oversubscribe", "-n"]);
    command.arg(ranks.to_string()).arg(BIN);
    command
}

fn succeeded(out: Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every `.npy` file of `dir`, by name.
fn fields(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "npy"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    found.sort();
    found
}

#[test]
fn clusters_over_ranks_equal_one_process_bit_for_bit() {
    let cases = [
        "heat5 --wafers 3x3 --pes 6x6 --n 2 --steps 40 --link 0,0,up:delay=3,capacity=1",
        "heat9 --wafers 4x2 --pes 8x8 --n 4 --steps 31 --link-delay 2 --link-capacity 3",
        "swe --wafers 3x2 --pes 15x10 --steps 17 --link-delay 1",
        "swe-c --wafers 2x2 --pes 45x20 --steps 11",
        // More ranks than wafers: the ranks that hold none only follow.
        "heat5 --wafers 2x1 --pes 8x8 --n 4 --steps 9",
    ];
    for case in cases {
        let args: Vec<&str> = ["run"].into_iter().chain(case.split(' ')).collect();
        let one = scratch("one");
        let at = one.to_str().unwrap();
        let alone = Command::new(BIN)
            .args(&args)
            .args(["--backend", "cpu", "--out", at])
            .output()
            .unwrap();
        succeeded(alone, case);
        let expected = fields(&one);
        assert!(!expected.is_empty(), "{case}");
        for ranks in [2, 3, 4] {
            let spread = scratch("spread");
            let at = spread.to_str().unwrap();
            let out = mpirun(ranks)
                .args(&args)
                .args(["--backend", "cpu", "--out", at, "--json", "-"])
                .output()
                .unwrap();
            let json: serde_json::Value =
                serde_json::from_str(&succeeded(out, case)).expect("JSON");
            assert_eq!(json["ranks"], ranks, "{case}");
            assert!(json["engine_summary"]
                .as_str()
                .unwrap()
                .contains("MPI ranks"));
            assert!(
                fields(&spread) == expected,
                "{case} on {ranks} ranks differs from one process"
            );
            std::fs::remove_dir_all(&spread).unwrap();
        }
        std::fs::remove_dir_all(&one).unwrap();
    }
}

/// The tsunami over 2 and 3 ranks writes the files of one process, byte for byte.
#[test]
fn a_tsunami_over_ranks_equals_one_process() {
    let case = "tsunami --resolution 2deg --n 4 --duration 3h --sample-every 300s --region none \
                --backend cpu --wafers 3x1 --link-delay 1";
    let case: Vec<&str> = case.split_whitespace().collect();
    let one = scratch("tsunami-one");
    let alone = Command::new(BIN)
        .args(&case)
        .args(["--out", one.to_str().unwrap()])
        .output()
        .unwrap();
    succeeded(alone, "one process");
    for ranks in [2, 3] {
        let spread = scratch("tsunami-spread");
        let at = spread.to_str().unwrap();
        let out = mpirun(ranks)
            .args(&case)
            .args(["--out", at, "--json", "-"])
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_str(&succeeded(out, "ranks")).unwrap();
        assert_eq!(json["ranks"], ranks);
        for file in [
            "gauges.csv",
            "max_eta.png",
            "eta_global_t00180min.png",
            "tsunami.nc",
        ] {
            let same =
                std::fs::read(one.join(file)).unwrap() == std::fs::read(spread.join(file)).unwrap();
            assert!(same, "{file} on {ranks} ranks differs from one process");
        }
        std::fs::remove_dir_all(&spread).unwrap();
    }
    std::fs::remove_dir_all(&one).unwrap();
}

/// A rank that hangs (stopped) ends every rank after --link-timeout, with an error naming the
/// link, the rank it waited for and the step.
#[test]
fn a_hung_rank_ends_every_rank_after_the_link_timeout() {
    let (mut child, ranks) = long_run(&["--no-output", "--link-timeout", "3"]);
    signal("-STOP", ranks[ranks.len() - 1]);
    let status = wait_bounded(&mut child, Instant::now());
    let stderr = stderr_of(&mut child);
    assert!(!status.success(), "{stderr}");
    for needle in ["link from wafer", "rank 1", "at step", "--link-timeout"] {
        assert!(stderr.contains(needle), "lacks '{needle}': {stderr}");
    }
    ranks.iter().for_each(|&pid| signal("-KILL", pid));
}

/// A long run over 2 ranks, once both have started, and their processes.
fn long_run(extra: &[&str]) -> (std::process::Child, Vec<u32>) {
    let long = "run heat5 --wafers 4x1 --pes 64x64 --n 8 --steps 1000000 --backend cpu";
    let child = mpirun(2)
        .args(long.split(' '))
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ranks = wait_for_ranks(child.id(), 2);
    std::thread::sleep(Duration::from_millis(500));
    (child, ranks)
}

fn signal(signal: &str, pid: u32) {
    let _ = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status();
}

fn stderr_of(child: &mut std::process::Child) -> String {
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    stderr
}

/// The exit status of `child`, which must end within a minute of `since`.
fn wait_bounded(child: &mut std::process::Child, since: Instant) -> std::process::ExitStatus {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            since.elapsed() < Duration::from_secs(60),
            "mpirun still runs a minute after a rank died or hung"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `bench` under mpirun times the cluster over the ranks beside the same cluster in one
/// process, in one run.
#[test]
fn bench_times_a_cluster_over_ranks_beside_one_process() {
    let bench = "bench heat5 --grid 256 --n 8 --wafers 4x1 --steps 10 --reps 2 --backend cpu";
    let out = mpirun(2)
        .args(bench.split(' '))
        .args(["--json", "-"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&succeeded(out, "bench")).unwrap();
    let rows = json["rows"].as_array().unwrap();
    let spread = rows
        .iter()
        .find(|r| r["ranks"] == 2)
        .expect("a row over 2 ranks");
    let alone = rows
        .iter()
        .find(|r| r["variant"] == spread["baseline"])
        .expect("its baseline");
    assert_eq!(
        (alone["ranks"].as_u64(), alone["wafers"][0].as_u64()),
        (Some(1), Some(4))
    );
    assert!(spread["updates_per_second"]["median"].as_f64() > Some(0.0));
    let refused = mpirun(2)
        .args(bench.split(' '))
        .arg("--no-cpu")
        .output()
        .unwrap();
    assert!(!refused.status.success());
}

/// A run checkpointed on 2 ranks goes on from its checkpoint on 3 (and on 1) to the same bits
/// as one run of the whole length.
#[test]
fn a_checkpoint_restarts_on_another_rank_count() {
    let case = "run heat9 --wafers 4x2 --pes 8x8 --n 4 --link-delay 1 --backend cpu";
    let case: Vec<&str> = case.split(' ').collect();
    let (whole, parts, alone) = (scratch("whole"), scratch("parts"), scratch("alone"));
    let run = |command: &mut Command, extra: &[&str]| {
        succeeded(command.args(&case).args(extra).output().unwrap(), "run");
    };
    run(
        &mut Command::new(BIN),
        &["--steps", "40", "--out", whole.to_str().unwrap()],
    );
    let first = ["--steps", "20", "--checkpoint-every-steps", "10"];
    for (dir, later) in [(&parts, 3), (&alone, 1)] {
        let at = dir.to_str().unwrap();
        run(&mut mpirun(2), &[&first[..], &["--out", at]].concat());
        match later {
            1 => run(&mut Command::new(BIN), &["--steps", "40", "--resume", at]),
            k => run(&mut mpirun(k), &["--steps", "40", "--resume", at]),
        }
        let name = "heat9_u_step00000040.npy";
        assert!(
            std::fs::read(dir.join(name)).unwrap() == std::fs::read(whole.join(name)).unwrap(),
            "resumed on {later} rank(s)"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
    std::fs::remove_dir_all(&whole).unwrap();
}

/// A rank killed mid-run ends every rank within seconds, with an error naming it, and leaves
/// no half-written file.
#[test]
fn a_killed_rank_ends_every_rank() {
    let out = scratch("killed");
    let (mut child, ranks) = long_run(&["--out", out.to_str().unwrap()]);
    signal("-KILL", ranks[ranks.len() - 1]);
    let status = wait_bounded(&mut child, Instant::now());
    let stderr = stderr_of(&mut child);
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("rank"), "{stderr}");
    for entry in std::fs::read_dir(&out).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".tmp-"), "{name} left behind");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The processes of `mpirun` (its children running the program), once `count` have started.
fn wait_for_ranks(mpirun: u32, count: usize) -> Vec<u32> {
    let started = Instant::now();
    loop {
        let children = Command::new("pgrep")
            .args(["-P", &mpirun.to_string(), "-f", BIN])
            .output()
            .unwrap();
        let pids: Vec<u32> = String::from_utf8_lossy(&children.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.len() >= count {
            return pids;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "ranks never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
