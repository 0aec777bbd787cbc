//! The asteroid tsunami: a scaled-down scenario writes every output on the CPU backend and the
//! software adapter and its NetCDF file reads back; first arrivals agree with shortest travel
//! times over the same relief; energy is nearly conserved; a cluster equals one wafer.

mod common;

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::Path;

use clap::Parser;
use netcdf3::{DataVector, FileReader};
use wafer_emu::app::{Cli, Command};
use wafer_emu::commands::tsunami::{tsunami, TsunamiConfig, TsunamiReport};
use wafer_emu::kernels::swe::{distance, ShallowWater, GRAVITY};

fn config(args: &[&str]) -> TsunamiConfig {
    let line = [&["wafer-emu", "tsunami"], args].concat();
    match Cli::try_parse_from(line).unwrap().command {
        Command::Tsunami(args) => args.config().unwrap(),
        _ => unreachable!(),
    }
}

fn run(config: &TsunamiConfig) -> TsunamiReport {
    tsunami(config, &mut |w| eprintln!("{w}"), &mut |_, _| {}).unwrap()
}

/// Every field of the two runs' final states, bit for bit.
fn assert_same_state(a: &TsunamiReport, b: &TsunamiReport) {
    assert_eq!(a.state.len(), b.state.len());
    for (a, b) in a.state.iter().zip(&b.state) {
        assert!(a
            .data
            .iter()
            .zip(&b.data)
            .all(|(p, q)| p.to_bits() == q.to_bits()));
    }
}

fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("wafer-emu-tsunami-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.to_string_lossy().into_owned()
}

/// Two degrees, three model hours.
const SMALL: [&str; 10] = [
    "--resolution",
    "2deg",
    "--n",
    "4",
    "--duration",
    "3h",
    "--sample-every",
    "300s",
    "--relief",
    "etopo1-1deg",
];

fn text_attr(reader: &FileReader, var: &str, name: &str) -> String {
    let attr = reader.data_set().get_var_attr(var, name).unwrap();
    String::from_utf8(attr.get_u8().unwrap().to_vec()).unwrap()
}

fn f32s(reader: &mut FileReader, var: &str) -> Vec<f32> {
    match reader.read_var(var).unwrap() {
        DataVector::F32(v) => v,
        other => panic!("{var} is {:?}", other.data_type()),
    }
}

fn f64s(reader: &mut FileReader, var: &str) -> Vec<f64> {
    match reader.read_var(var).unwrap() {
        DataVector::F64(v) => v,
        other => panic!("{var} is {:?}", other.data_type()),
    }
}

/// Every output exists; the long gauge table and the NetCDF file (read back with every
/// variable) hold the same samples, taken at exactly the requested times; the file's last
/// frame is the final state's surface and currents at the centres (NaN on land) and its maps
/// the tracker's.
fn check_outputs(out: &str, report: &TsunamiReport, swe: &dyn ShallowWater) {
    let out = Path::new(out);
    for name in [
        "eta_global_t00000min.png",
        "eta_global_t00060min.png",
        "eta_global_t00180min.png",
        "eta_sf-bay_t00120min.png",
        "max_eta.png",
        "arrival_time.png",
        "max_speed.png",
        "gauges.csv",
        "gauge_summary.csv",
        "tsunami.nc",
        "summary.txt",
    ] {
        assert!(out.join(name).exists(), "{name} missing");
    }
    let tracker = &report.tracker;
    let gauges = std::fs::read_to_string(out.join("gauge_summary.csv")).unwrap();
    assert_eq!(gauges.lines().count(), 1 + tracker.gauges.len());
    // The long table: one row per gauge and sample, every 300 s exactly.
    let mut table = csv::Reader::from_path(out.join("gauges.csv")).unwrap();
    let header: Vec<String> = table.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, ["gauge", "time_s", "eta_m", "u_m_s", "v_m_s"]);
    let rows: Vec<csv::StringRecord> = table.records().map(Result::unwrap).collect();
    let samples = 3 * 3600 / 300 + 1;
    assert_eq!(rows.len(), tracker.gauges.len() * samples);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(
            row[1].parse::<f64>().unwrap(),
            (k % samples * 300) as f64,
            "{row:?}"
        );
    }
    let mut reader = FileReader::open(out.join("tsunami.nc")).unwrap();
    let dims: Vec<(String, usize)> = reader
        .data_set()
        .get_dims()
        .iter()
        .map(|d| (d.name(), d.size()))
        .collect();
    let grid = swe.grid();
    let gauge_count = tracker.gauges.len();
    for dim in [
        ("time".to_string(), 4),
        ("lat".into(), grid.y as usize),
        ("lon".into(), grid.x as usize),
        ("gauge".into(), gauge_count),
        ("sample".into(), samples),
    ] {
        assert!(dims.contains(&dim), "{dim:?} not in {dims:?}");
    }
    for (var, units) in [
        ("eta", "m"),
        ("u", "m s-1"),
        ("v", "m s-1"),
        ("max_eta", "m"),
        ("max_speed", "m s-1"),
        ("arrival_time", "s"),
        ("depth", "m"),
        ("lat", "degrees_north"),
        ("lon", "degrees_east"),
        ("time", "seconds since 2000-01-01 00:00:00"),
        ("sample_time", "seconds since 2000-01-01 00:00:00"),
        ("gauge_eta", "m"),
    ] {
        assert_eq!(text_attr(&reader, var, "units"), units, "{var}");
    }
    let height = reader
        .data_set()
        .get_global_attr_f64("hump_height_m")
        .unwrap();
    assert_eq!(height, [200.0], "a number, not text");
    assert_eq!(f64s(&mut reader, "time"), [0.0, 3600.0, 7200.0, 10800.0]);
    let sample_times = f64s(&mut reader, "sample_time");
    assert!(sample_times
        .iter()
        .enumerate()
        .all(|(k, &t)| t == (k * 300) as f64));
    let points = (grid.x * grid.y) as usize;
    let [eta, u, v] = swe.at_centres(&report.state);
    for (name, field) in [("eta", &eta), ("u", &u), ("v", &v)] {
        let frames = f32s(&mut reader, name);
        assert_eq!(frames.len(), 4 * points, "{name}");
        for (k, (&stored, &value)) in frames[3 * points..].iter().zip(&field.data).enumerate() {
            let (x, y) = (k as u32 % grid.x, k as u32 / grid.x);
            match swe.sphere().is_wet(x, y) {
                true => assert_eq!(stored.to_bits(), value.to_bits(), "{name} at ({x}, {y})"),
                false => assert!(stored.is_nan(), "land at ({x}, {y}) is {stored}"),
            }
        }
    }
    for (name, map) in [
        ("max_eta", &tracker.max_eta),
        ("max_speed", &tracker.max_speed),
        ("arrival_time", &tracker.arrival),
    ] {
        let stored = f32s(&mut reader, name);
        let same = stored
            .iter()
            .zip(&map.data)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{name} differs from the tracker's");
    }
    assert!(f32s(&mut reader, "depth").iter().any(|d| d.is_finite()));
    // The file's gauge series are the table's rows.
    let series = f32s(&mut reader, "gauge_eta");
    for (k, row) in rows.iter().enumerate() {
        let (g, t) = (k / samples, k % samples);
        assert_eq!(
            series[g * samples + t],
            row[2].parse::<f32>().unwrap(),
            "{row:?}"
        );
    }
    let names = match reader.read_var("gauge_name").unwrap() {
        DataVector::U8(bytes) => bytes,
        _ => panic!("names are characters"),
    };
    let width = names.len() / gauge_count;
    let first = String::from_utf8_lossy(&names[..width])
        .trim_end_matches('\0')
        .to_string();
    assert_eq!(first, tracker.gauges[0].gauge.name);
    for coordinate in ["gauge_lat", "gauge_lon"] {
        assert_eq!(f64s(&mut reader, coordinate).len(), gauge_count);
    }
    assert_eq!(f32s(&mut reader, "gauge_depth").len(), gauge_count);
}

#[test]
fn a_small_tsunami_writes_every_output_on_the_cpu_and_the_adapter() {
    // The adapter by its backend's name: `auto` would give a software adapter's place to the
    // CPU backend for swe-c, which has no fast path there.
    let mut backends = vec!["cpu"];
    if let Some(ctx) = common::gpu() {
        backends.push(match ctx.adapter.info.backend {
            wgpu::Backend::Metal => "metal",
            wgpu::Backend::Dx12 => "dx12",
            wgpu::Backend::Gl => "gl",
            _ => "vulkan",
        });
    }
    for backend in backends {
        let out = scratch(backend);
        let config = config(&[&SMALL[..], &["--backend", backend, "--out", &out]].concat());
        let report = run(&config);
        check_outputs(&out, &report, config.swe.as_ref());
        std::fs::remove_dir_all(&out).unwrap();
    }
}

#[test]
fn a_cluster_equals_one_wafer_bit_for_bit() {
    let out = scratch("cluster");
    let one = run(&config(
        &[&SMALL[..], &["--backend", "cpu", "--out", &out]].concat(),
    ));
    let args = [
        &SMALL[..],
        &[
            "--backend",
            "cpu",
            "--out",
            &out,
            "--force",
            "--wafers",
            "3x5",
            "--link-delay",
            "2",
        ],
    ]
    .concat();
    let cluster = run(&config(&args));
    assert_same_state(&one, &cluster);
    std::fs::remove_dir_all(&out).unwrap();
}

/// On the CPU backend `auto` advances the steps between two samples in time blocks (blocks of
/// 5 for samples every 10 of the 60 steps of 180 s: the time step divides the sampling
/// interval), writing the explicit wafer's gauges, NetCDF file and state bit for bit. Frames
/// every 50 minutes (steps 17, 33 and 50) cut the advances to steps 17 and 33, which lose a
/// block each and leave the samples on multiples of 10 steps: 50 steps run in blocks.
#[test]
fn auto_time_blocks_between_samples_equal_the_explicit_wafer() {
    let samples = ["--sample-every", "1800s", "--frame-every", "50min"];
    let small: Vec<&str> = SMALL
        .iter()
        .copied()
        .filter(|a| !["--sample-every", "300s"].contains(a))
        .collect();
    let runs = ["auto", "wafer"].map(|engine| {
        let out = scratch(&format!("engine-{engine}"));
        let args = [
            &small[..],
            &samples,
            &["--backend", "cpu", "--engine", engine, "--out", &out],
        ];
        (run(&config(&args.concat())), out)
    });
    let [(blocked, blocked_out), (plain, plain_out)] = &runs;
    let engine = |r: &TsunamiReport| {
        r.lines
            .iter()
            .find(|(k, _)| k == "engine")
            .unwrap()
            .1
            .clone()
    };
    assert!(
        engine(blocked).contains("time blocks of 5 steps")
            && engine(blocked).ends_with(", 50 of 60 steps in them"),
        "{}",
        engine(blocked)
    );
    assert!(!engine(plain).contains("time blocks"), "{}", engine(plain));
    for file in ["gauges.csv", "tsunami.nc", "max_eta.png"] {
        let read = |dir: &str| std::fs::read(Path::new(dir).join(file)).unwrap();
        assert!(read(blocked_out) == read(plain_out), "{file}");
    }
    assert_same_state(blocked, plain);
    // Frames every 50 minutes, and the last step's own at its time (180 min), not named
    // after the 200th minute.
    for stamp in ["00000min", "00050min", "00150min", "00180min"] {
        let frame = Path::new(blocked_out).join(format!("eta_global_t{stamp}.png"));
        assert!(frame.exists(), "{}", frame.display());
    }
    assert!(!Path::new(blocked_out)
        .join("eta_global_t00200min.png")
        .exists());
    for (_, out) in &runs {
        std::fs::remove_dir_all(out).unwrap();
    }
}

/// A point in the priority queue of travel times.
#[derive(PartialEq)]
struct Visit(f64, usize);

impl Eq for Visit {}

impl Ord for Visit {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0)
    }
}

impl PartialOrd for Visit {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Shortest travel times (s) from the wet centres within `radius` of `centre` (radians) over
/// wet centres, moving at `sqrt(g s)`: Dijkstra on the grid with the 32 neighbours up to three
/// cells away in directions of co-prime steps (their metrication error is under 1 %), a step's
/// time its great-circle length over the mean slowness of its ends, and steps that cross land
/// refused.
fn travel_times(swe: &dyn ShallowWater, centre: (f64, f64), radius: f64) -> Vec<f64> {
    let sphere = swe.sphere();
    let grid = swe.grid();
    let (nx, ny) = (grid.x as i64, grid.y as i64);
    let index = |x: i64, y: i64| (y * nx + x.rem_euclid(nx)) as usize;
    let rad = |x: i64, y: i64| {
        let (lat, lon) = sphere.lat_lon(x.rem_euclid(nx) as u32, y as u32);
        (lat.to_radians(), lon.to_radians())
    };
    let wet = |x: i64, y: i64| y >= 0 && y < ny && sphere.is_wet(x.rem_euclid(nx) as u32, y as u32);
    let slowness = |x: i64, y: i64| {
        let depth = sphere.depth(x.rem_euclid(nx) as u32, y as u32);
        1.0 / (GRAVITY * depth).sqrt()
    };
    let mut steps = vec![];
    for (a, b) in [(1, 0), (1, 1), (2, 1), (3, 1), (3, 2)] {
        for (dx, dy) in [(a, b), (b, a)] {
            for (sx, sy) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
                steps.push((sx * dx, sy * dy));
            }
        }
    }
    steps.sort();
    steps.dedup();
    let mut time = vec![f64::INFINITY; (nx * ny) as usize];
    let mut queue = BinaryHeap::new();
    for y in 0..ny {
        for x in 0..nx {
            if wet(x, y) && distance(centre, rad(x, y)) <= radius {
                time[index(x, y)] = 0.0;
                queue.push(Visit(0.0, index(x, y)));
            }
        }
    }
    while let Some(Visit(t, k)) = queue.pop() {
        if t > time[k] {
            continue;
        }
        let (x, y) = ((k as i64) % nx, (k as i64) / nx);
        for &(dx, dy) in &steps {
            let (tx, ty) = (x + dx, y + dy);
            let n = dx.abs().max(dy.abs());
            let clear = (1..=n).all(|s| {
                let (px, py) = (x + (dx * s + n / 2) / n, y + (dy * s + n / 2) / n);
                wet(px, py)
            });
            if !clear || !wet(tx, ty) {
                continue;
            }
            let cost = distance(rad(x, y), rad(tx, ty)) * 0.5 * (slowness(x, y) + slowness(tx, ty));
            let j = index(tx, ty);
            if t + cost < time[j] {
                time[j] = t + cost;
                queue.push(Visit(t + cost, j));
            }
        }
    }
    time
}

/// A linear wave (10 m over a 250 km radius, 4.5 cells) on the half-degree relief for eight
/// hours with `swe-c`: the first arrival (|eta| > 1 cm, sampled every minute) at every
/// deep-water gauge three or more hours away lies within 3 % of the shortest travel time from
/// the hump's edge (measured -1.3 % to +1.7 %). Nearer gauges arrive up to 5 % early at this
/// resolution: the grid leads the exact front by a few cells (docs/design.md's convergence
/// table), which weighs more the nearer the gauge.
#[test]
fn first_arrivals_agree_with_shortest_travel_times() {
    let out = scratch("arrivals");
    let area = (std::f64::consts::PI * 250.0f64.powi(2)).to_string();
    let gauges = format!("{out}-gauges.csv");
    std::fs::write(
        &gauges,
        "name,lat,lon\nnorth Pacific,45,170\ncentral Pacific,10,-170\nsouth-east Pacific,-10,-120\nGulf of Alaska,55,-145\n",
    )
    .unwrap();
    let config = config(&[
        "--resolution",
        "30min",
        "--n",
        "4",
        "--duration",
        "8h",
        "--height",
        "10",
        "--area",
        &area,
        "--lat-range",
        "-60,60",
        "--backend",
        "cpu",
        "--frame-every",
        "600min",
        "--region",
        "none",
        "--no-netcdf-frames",
        "--gauges",
        &gauges,
        "--out",
        &out,
    ]);
    let report = run(&config);
    let i = config.impact;
    let times = travel_times(
        config.swe.as_ref(),
        (i.lat.to_radians(), i.lon.to_radians()),
        i.radius(),
    );
    let mut checked = 0;
    for record in &report.tracker.gauges {
        let Some(arrival) = record.arrival(report.tracker.threshold) else {
            continue;
        };
        let expected = times[(record.cell.y * config.swe.grid().x + record.cell.x) as usize];
        let error = (arrival - expected) / expected;
        eprintln!(
            "{}: arrival {:.0} s, shortest travel time {:.0} s ({:+.2} %)",
            record.gauge.name,
            arrival,
            expected,
            100.0 * error
        );
        if expected >= 3.0 * 3600.0 {
            assert!(
                error.abs() < 0.03,
                "{}: {arrival} s vs {expected} s",
                record.gauge.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} far gauges were reached");
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_file(&gauges).unwrap();
}

/// A gauge that falls on land at the resolution moves to the nearest water within
/// `--gauge-radius` (the report says how far); one with no water within it is refused by
/// name.
#[test]
fn a_gauge_on_land_moves_to_the_nearest_water_or_is_refused_by_name() {
    let out = scratch("land-gauges");
    let gauges = format!("{out}-gauges.csv");
    // San Jose lies 40 km inland from the Pacific; Denver a thousand kilometres.
    std::fs::write(&gauges, "San Jose,37.34,-121.89\n").unwrap();
    let args = |extra: &[&str]| {
        let base = [
            &SMALL[..],
            &[
                "--backend",
                "cpu",
                "--duration",
                "30min",
                "--out",
                &out,
                "--gauges",
                &gauges,
            ],
        ];
        config(&[&base.concat()[..], extra].concat())
    };
    let mut notes = vec![];
    let report = tsunami(
        &args(&["--gauge-radius", "300"]),
        &mut |w| notes.push(w.to_string()),
        &mut |_, _| {},
    )
    .unwrap();
    let moved = report
        .tracker
        .gauges
        .iter()
        .find(|g| g.gauge.name == "San Jose")
        .unwrap();
    eprintln!("{notes:?}");
    assert!(moved.moved > 0.0 && moved.moved <= 300e3, "{}", moved.moved);
    assert!(notes
        .iter()
        .any(|n| n.contains("gauge 'San Jose'") && n.contains("moved")));
    std::fs::write(&gauges, "Denver,39.74,-104.99\n").unwrap();
    let refused = tsunami(&args(&["--force"]), &mut |_| {}, &mut |_, _| {}).unwrap_err();
    assert!(refused.to_string().contains("gauge 'Denver'"), "{refused}");
    assert!(refused.to_string().contains("--gauge-radius"), "{refused}");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::remove_file(&gauges).unwrap();
}

/// On the CPU backend `auto` takes 6 arc-minutes on PEs of 16 points, and the minute between
/// samples in 9 steps of 6.7 s, whole blocks of 3, where 8 would be stable: the default that
/// arrives within 3 % of GeoClaw an hour or more from the impact (docs/design.md).
#[test]
fn the_cpu_default_is_six_arc_minutes_in_whole_time_blocks() {
    let config = config(&["--backend", "cpu", "--out", &scratch("cpu-default")]);
    assert_eq!(config.resolution, 0.1);
    assert_eq!(config.swe.sphere().grid().x, 3600);
    assert_eq!(config.problem.cluster.wafer.n, 16);
    // The f32 the kernel steps with.
    assert_eq!(config.swe.dt(), f64::from((60.0f64 / 9.0) as f32));
}

/// On the CPU backend `auto` rounds the steps per sample up to a time-block length, so that
/// every step runs in a block: samples every 720 s would take 4 steps of 180 s, of which
/// blocks of 3 cover half; 5 steps of 144 s all run in blocks of 5. An engine named on the
/// command line keeps the fewest steps.
#[test]
fn auto_rounds_the_steps_per_sample_up_to_whole_time_blocks() {
    let out = scratch("whole-blocks");
    let base: Vec<&str> = SMALL
        .iter()
        .copied()
        .filter(|a| !["--sample-every", "300s"].contains(a))
        .collect();
    let line = |engine: &'static str| {
        let extra = [
            "--sample-every",
            "720s",
            "--backend",
            "cpu",
            "--engine",
            engine,
        ];
        let tail = ["--region", "none", "--out", &out];
        [&base[..], &extra, &tail].concat()
    };
    assert_eq!(config(&line("wafer")).swe.dt(), 180.0);
    let auto = config(&line("auto"));
    assert_eq!(auto.swe.dt(), 144.0);
    let report = run(&auto);
    let engine = &report.lines.iter().find(|(k, _)| k == "engine").unwrap().1;
    assert!(
        engine.contains("time blocks of 5 steps") && engine.ends_with(", 75 of 75 steps in them"),
        "{engine}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}
