//! Every command's JSON against its schema in `docs/schema/`, and `predict`'s JSON read back
//! through `--params` giving the same report.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wafer-emu-json-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs the program with `args` and `--json -`, and returns the JSON it printed.
fn json_of(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_wafer-emu"))
        .args(args)
        .args(["--json", "-"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Fails naming every place where `value` breaks `docs/schema/{name}.json`.
fn assert_fits(name: &str, value: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schema/{name}.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator =
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{value:#}");
    assert_eq!(value["schema"], 1, "{name}");
}

#[test]
fn every_command_writes_json_that_fits_its_schema() {
    let cpu = ["--backend", "cpu"];
    let heat = [
        "run", "heat9", "--pes", "8x8", "--n", "4", "--steps", "7", "--wafers", "2x1",
    ];
    let heat = json_of(&[&heat[..], &["--check", "--no-output"], &cpu].concat());
    assert_fits("run", &heat);
    assert_eq!(
        (heat["kernel"].as_str(), heat["steps"].as_u64()),
        (Some("heat9"), Some(7))
    );
    assert_eq!(heat["parameters"]["dt"], 0.2, "{heat:#}");
    assert_eq!(heat["check"]["differing_points"], 0);
    assert_fits("predict", &heat["emulated"]);
    assert!(heat["emulated"]["cycles_per_step"].as_f64() > Some(0.0));

    let swe = json_of(&[&["run", "swe-c", "--steps", "3", "--no-output"][..], &cpu].concat());
    assert_fits("run", &swe);
    assert_eq!(swe["parameters"]["coriolis"], true);
    assert!(swe["field_range"]["eta"][1].as_f64() > Some(0.0));
    assert!(swe["energy_drift"].is_number());

    let predict = json_of(&["predict", "swe", "--pes", "8x8", "--method", "static"]);
    assert_fits("predict", &predict);
    assert_eq!(predict["cluster"]["n"], 8, "the same default n as run's");
    assert_eq!(predict["parameters"]["method"], "static");
    assert!(predict["utilisation"].as_f64() < Some(1.0));

    let bench = [
        "bench", "heat5", "--grid", "32", "--n", "4,8", "--steps", "1", "--reps", "2",
    ];
    let bench = json_of(&[&bench[..], &cpu].concat());
    assert_fits("bench", &bench);
    let rows = bench["rows"].as_array().unwrap();
    let blocked = rows.iter().find(|r| r["time_block"].as_u64() > Some(1));
    let blocked = blocked.unwrap_or_else(|| panic!("no row in time blocks: {bench:#}"));
    assert_eq!(blocked["engine"]["engine"], "cpu_wafer");
    assert!(blocked["n"].is_number());
    let rate = |k: &str| blocked["updates_per_second"][k].as_f64().unwrap();
    assert!(rate("min") <= rate("median") && rate("median") <= rate("max"));

    assert_fits("adapters", &json_of(&["adapters"]));
    assert_fits("adapters", &json_of(&["adapters", "--backend", "cpu"]));

    let dir = scratch("reproduce");
    let reproduce = json_of(&[
        "reproduce",
        "--pes",
        "24x36",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_fits("reproduce", &reproduce);
    assert_eq!(reproduce["pes"][0][0], 24);
    assert!(reproduce["files"].as_array().unwrap().len() > 5);
    std::fs::remove_dir_all(&dir).unwrap();

    let dir = scratch("tsunami");
    let tsunami = [
        "tsunami",
        "--resolution",
        "4deg",
        "--n",
        "2",
        "--duration",
        "3600s",
    ];
    let out = ["--region", "none", "--out", dir.to_str().unwrap()];
    let tsunami = json_of(&[&tsunami[..], &out, &cpu].concat());
    assert_fits("tsunami", &tsunami);
    assert_eq!(tsunami["duration_s"], 3600.0);
    assert_eq!(tsunami["parameters"]["relief"], "etopo1-1deg");
    assert!(tsunami["gauges"].as_array().is_some_and(|g| !g.is_empty()));
    assert!(tsunami["summary"]["impact"]
        .as_str()
        .unwrap()
        .contains("200 m"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What `predict --json` writes, `--params` reads back: the same parameters give the same
/// report, to the bit (SI units both ways), the method included.
#[test]
fn predict_json_read_back_through_params_gives_the_same_report() {
    let dir = scratch("params");
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = ["predict", "heat9", "--pes", "12x16", "--wafers", "2x2"];
    let changed =
        "--method ghosts:2 --clock-ghz 1.1 --link-latency-us 3.3 --set hop_latency_ns=1.7";
    let changed: Vec<&str> = changed
        .split(' ')
        .chain(["--set", "node_power_kw=19.3"])
        .collect();
    let first = json_of(&[&cluster[..], &changed].concat());
    let saved = dir.join("p.json");
    std::fs::write(&saved, first.to_string()).unwrap();
    let again = json_of(&[&cluster[..], &["--params", saved.to_str().unwrap()]].concat());
    assert_eq!(again, first);
    assert_eq!(first["parameters"]["method"], "ghosts:2");
    let hop = first["parameters"]["hop_latency_s"].as_f64().unwrap();
    assert!((hop - 1.7e-9).abs() < 1e-20, "{hop}");
    std::fs::remove_dir_all(&dir).unwrap();
}
