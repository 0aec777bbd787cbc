//! Sweeps: a sweep stopped by SIGTERM half-way and resumed produces the same results table as
//! an uninterrupted one, leaving no temporary file; two shards merged equal the whole.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wafer-emu-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Six predict cases of about half a second each (deterministic figures).
const SWEEP: &str = "command = \"predict\"\n[base]\nkernel = \"heat5\"\npes = \"360x360\"\nwafers = \"1x1\"\n[vary]\nn = [2, 4, 16]\nlink_latency_us = [1, 10]\n";

/// `wafer-emu sweep FILE --out OUT`.
fn sweep_command(file: &Path, out: &Path) -> std::process::Command {
    let mut command = bin();
    command.args([
        "sweep",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    command
}

fn sweep(file: &Path, out: &Path, extra: &[&str]) {
    let status = sweep_command(file, out).args(extra).status().unwrap();
    assert!(status.success(), "{extra:?}");
}

fn table(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("results.jsonl")).unwrap()
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(temp_files(&path));
        } else if path.to_string_lossy().contains(".tmp") {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_stopped_sweep_resumes_to_the_same_table_and_shards_merge_to_the_whole() {
    let dir = scratch("resume");
    let file = dir.join("sweep.toml");
    std::fs::write(&file, SWEEP).unwrap();
    let whole = dir.join("whole");
    sweep(&file, &whole, &[]);
    assert_eq!(table(&whole).lines().count(), 6);
    // Rows in the natural order of their cases, every parameter (the base's too) typed.
    let rows: Vec<serde_json::Value> = table(&whole)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Cases `link_latency_us=1,n=2` ...: n = 16 after n = 4, not before n = 2 as text sorts.
    let column =
        |key: &str| -> Vec<u64> { rows.iter().map(|r| r[key].as_u64().unwrap()).collect() };
    assert_eq!(column("n"), [2, 4, 16, 2, 4, 16]);
    assert_eq!(column("link_latency_us"), [1, 1, 1, 10, 10, 10]);
    assert!(
        rows.iter()
            .all(|r| r["pes"] == "360x360" && r["link_latency_us"].is_u64()),
        "{rows:?}"
    );

    let stopped = dir.join("stopped");
    let mut child = bin()
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            stopped.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !stopped.join("results.jsonl").exists() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    let done = std::fs::read_to_string(stopped.join("results.jsonl"))
        .unwrap()
        .lines()
        .count();
    eprintln!("stopped after {done} of 6 cases ({status})");
    assert!(done < 6, "the sweep was not stopped half-way");
    assert!(
        temp_files(&stopped).is_empty(),
        "{:?}",
        temp_files(&stopped)
    );
    sweep(&file, &stopped, &[]);
    assert_eq!(table(&stopped), table(&whole));

    let sharded = dir.join("sharded");
    sweep(&file, &sharded, &["--shard", "0/2"]);
    // The second shard as a task of a Slurm job array finds it (docs/examples/sweep.sbatch).
    let task = sweep_command(&file, &sharded)
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "2")
        .status()
        .unwrap();
    assert!(task.success());
    let merge = bin()
        .args(["sweep", "merge", sharded.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(merge.success());
    assert_eq!(table(&sharded), table(&whole));

    let plot = |args: &[&str]| {
        bin()
            .args(["sweep", "plot", whole.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };
    let drawn = plot(&[
        "--x",
        "n",
        "--y",
        "steps_per_second",
        "--by",
        "link_latency_us",
    ]);
    assert!(
        drawn.status.success(),
        "{}",
        String::from_utf8_lossy(&drawn.stderr)
    );
    let png = std::fs::read(whole.join("steps_per_second_vs_n.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let bad = plot(&["--x", "n", "--y", "speed"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("column 'speed'"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `sweep ARGS` and returns its exit code and standard error.
fn sweep_outcome(args: &[&str]) -> (Option<i32>, String) {
    let out = bin().arg("sweep").args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn changed_files_shared_folders_failed_cases_and_missing_shards_are_named() {
    let dir = scratch("named");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    let quick = "command = \"predict\"\n[base]\nwafers = \"1x1\"\nn = 4\n";
    write(
        "a.toml",
        &format!("{quick}pes = \"16x16\"\n[vary]\nlink_latency_us = [1, 2]\n"),
    );
    write(
        "b.toml",
        &format!("{quick}pes = \"32x32\"\n[vary]\nlink_latency_us = [1, 2]\n"),
    );
    sweep(&dir.join("a.toml"), &dir.join("out"), &[]);
    // The folder holds sweep a's cases: sweep b may not pass them off as its own.
    let (code, stderr) = sweep_outcome(&[&path("b.toml"), "--out", &path("out")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("holds case 'link_latency_us=1' run as `predict --link-latency-us 1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--pes 16x16") && stderr.contains("--pes 32x32"),
        "{stderr}"
    );

    // A sweep of shallow-water runs: each row carries the case's diagnostics.
    write(
        "swe.toml",
        "command = \"run\"\n[base]\nkernel = \"swe-c\"\npes = \"8x8\"\nn = 4\nbackend = \"cpu\"\nno_output = true\n[vary]\nsteps = [5, 10]\n",
    );
    sweep(&dir.join("swe.toml"), &dir.join("swe"), &[]);
    for line in table(&dir.join("swe")).lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for column in [
            "energy_drift",
            "volume_drift_m3",
            "eta_min",
            "eta_max",
            "emulated_steps_per_second",
            "emulated_utilisation",
        ] {
            assert!(row[column].is_number(), "{column}: {row}");
        }
    }

    // A case that blows up fails the sweep, with its step in a column of its own.
    write(
        "blowup.toml",
        "command = \"run\"\n[base]\nkernel = \"swe\"\nrelief = \"flat:4000\"\ninit = \"hump:0,0,-6000,2000\"\nsteps = 300\nbackend = \"cpu\"\nno_output = true\n",
    );
    let (code, stderr) = sweep_outcome(&[&path("blowup.toml"), "--out", &path("blowup")]);
    assert_eq!(code, Some(1), "{stderr}");
    let row: serde_json::Value = serde_json::from_str(table(&dir.join("blowup")).trim()).unwrap();
    let step = row["blew_up_at_step"]
        .as_u64()
        .unwrap_or_else(|| panic!("{row}"));
    assert!(step > 0 && step < 300, "{row}");
    assert!(
        row["error"].as_str().unwrap().contains("blew up at step"),
        "{row}"
    );

    // A folder holding a run is not a sweep's.
    let run = "run heat5 --pes 2x2 --n 4 --steps 1 --backend cpu".split(' ');
    let ran = bin()
        .args(run)
        .args(["--out", &path("ran")])
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let (code, stderr) = sweep_outcome(&[&path("a.toml"), "--out", &path("ran")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("holds another command's results (.wafer-emu.written)"),
        "{stderr}"
    );

    write(
        "twins.toml",
        &format!("{quick}pes = \"16x16\"\n[vary]\nparams = [\"p/a.txt\", \"p_a.txt\"]\n"),
    );
    let (code, stderr) = sweep_outcome(&[&path("twins.toml"), "--out", &path("twins")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("share the folder 'params=p_a.txt'"),
        "{stderr}"
    );

    write("fails.toml", &format!("{quick}pes = \"16x16\"\n[[case]]\nlink_latency_us = 1\n[[case]]\nlink_latency_us = 1\nclock_ghz = 0\n"));
    let (code, stderr) = sweep_outcome(&[&path("fails.toml"), "--out", &path("fails")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("1 case(s) failed"), "{stderr}");
    let table = std::fs::read_to_string(dir.join("fails/results.csv")).unwrap();
    assert!(table.contains("clock_ghz = 0"), "{table}");

    // A log axis cannot show 0: refused, not dropped in silence.
    std::fs::create_dir_all(dir.join("zero")).unwrap();
    let rows = "{\"case\":\"a\",\"status\":\"ok\",\"n\":0,\"rate\":1}\n{\"case\":\"b\",\"status\":\"ok\",\"n\":2,\"rate\":3}\n";
    write("zero/results.jsonl", rows);
    let (code, stderr) =
        sweep_outcome(&["plot", &path("zero"), "--x", "n", "--y", "rate", "--log-x"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--log-x: 1 value(s) of 'n' are 0 or less"),
        "{stderr}"
    );
    sweep(&dir.join("a.toml"), &dir.join("half"), &["--shard", "0/2"]);
    let (code, stderr) = sweep_outcome(&["merge", &path("half")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("lacks the table of shard(s) 1/2"),
        "{stderr}"
    );
    // The other half from another sweep file: the merge refuses to join them.
    sweep(&dir.join("b.toml"), &dir.join("half"), &["--shard", "1/2"]);
    let (code, stderr) = sweep_outcome(&["merge", &path("half")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("come from different sweeps"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
