//! `placesim sweep` end to end: the same results on 1 and 2 threads, a sweep killed with
//! SIGKILL and resumed equal to an uninterrupted one, shards that add up to the whole, and a
//! bad entry refused before any run.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary, outside any job array (those variables would pick a shard).
fn placesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placesim"))
        .args(args)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("PBS_ARRAY_INDEX")
        .output()
        .expect("binary runs")
}

/// Jobs of KTH-SP2 the sweeps here replay: enough for FCFS and EASY, and placement sets on and
/// off, to give different schedules, few enough that the several sweeps a test makes take
/// seconds in a debug build (the whole trace took half a minute a test).
const SWEEP_JOBS: usize = 4_000;

/// The shipped sweep (`scenarios/two-switch-sweep.toml`, with its scenario) written into `dir`
/// over the first [`SWEEP_JOBS`] jobs of KTH-SP2: the same grid, cluster and requests.
fn sweep_file(dir: &Path) -> String {
    use std::io::BufRead;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let gz = std::fs::File::open(root.join("workloads/KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
    let mut jobs = 0;
    let mut trace = String::new();
    for line in std::io::BufReader::new(flate2::read::GzDecoder::new(gz)).lines() {
        let line = line.unwrap();
        if !line.starts_with(';') {
            jobs += 1;
            if jobs > SWEEP_JOBS {
                break;
            }
        }
        trace.push_str(&line);
        trace.push('\n');
    }
    std::fs::write(dir.join("kth.swf"), trace).unwrap();
    let scenario = std::fs::read_to_string(root.join("scenarios/two-switch.toml")).unwrap();
    let shipped = "trace = \"../workloads/KTH-SP2-1996-2.1-cln.swf.gz\"";
    assert!(
        scenario.contains(shipped),
        "two-switch.toml names its trace"
    );
    let scenario = scenario.replace(shipped, "trace = \"kth.swf\"");
    std::fs::write(dir.join("two-switch.toml"), scenario).unwrap();
    let sweep = dir.join("two-switch-sweep.toml");
    std::fs::copy(root.join("scenarios/two-switch-sweep.toml"), &sweep).unwrap();
    sweep.display().to_string()
}

/// Every file under `dir`, by relative path, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// Runs the sweep at `sweep` (from [`sweep_file`]) into `out`; it must succeed.
fn sweep(sweep: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep", sweep, "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = placesim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn one_and_two_threads_give_byte_identical_results_and_shards_add_up() {
    let dir = placesim_testkit::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let file = sweep_file(dir.path());
    let table = sweep(&file, &a, &["--threads", "1"]).stdout;
    // On these jobs every point of the grid waits differently (the mean wait per line).
    let mut waits: Vec<&str> = std::str::from_utf8(&table)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("discipline="))
        .map(|l| l.split_whitespace().nth(4).unwrap())
        .collect();
    waits.sort_unstable();
    waits.dedup();
    assert_eq!(waits.len(), 4, "{}", String::from_utf8_lossy(&table));
    sweep(&file, &b, &["--threads", "2"]);
    let one = files(&a);
    // 2 disciplines × 2 placements × 1 noise × 2 replicates, 7 files each (jobs, events,
    // summary, waits, timeseries, vnodes, run.toml), and the grid's order.
    assert_eq!(one.len(), 8 * 7 + 1);
    assert_eq!(
        std::str::from_utf8(&one[Path::new("configs.txt")]).unwrap(),
        "discipline=fcfs sets=none noise=0.1\ndiscipline=fcfs sets=pbs noise=0.1\n\
         discipline=easy sets=none noise=0.1\ndiscipline=easy sets=pbs noise=0.1\n"
    );
    assert!(one.contains_key(Path::new(
        "discipline=easy/sets=pbs/noise=0.1/replicate=1/summary.parquet"
    )));
    assert!(one == files(&b), "1 and 2 threads differ");
    sweep(&file, &c, &["--shard", "0/3"]);
    assert_eq!(files(&c).len(), 3 * 7 + 1, "runs 0, 3, 6");
    sweep(&file, &c, &["--shard", "1/3"]);
    sweep(&file, &c, &["--shard", "2/3"]);
    assert!(one == files(&c), "the shards together are the whole sweep");
}

#[test]
fn a_sweep_killed_mid_run_and_resumed_equals_an_uninterrupted_one() {
    let dir = placesim_testkit::tempdir().unwrap();
    let (whole, killed) = (dir.path().join("whole"), dir.path().join("killed"));
    let sweep_path = sweep_file(dir.path());
    sweep(&sweep_path, &whole, &["--threads", "1"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_placesim"))
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("PBS_ARRAY_INDEX")
        .args([
            "sweep",
            &sweep_path,
            "--threads",
            "1",
            "--out",
            killed.to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL) once the first run has finished and before the last.
    // Names only, read while the sweep renames its files: an entry may vanish meanwhile.
    let finished = |d: &Path| {
        let mut n = 0;
        let mut stack = vec![d.to_owned()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.ends_with("run.toml") {
                    n += 1;
                }
            }
        }
        n
    };
    let waiting = std::time::Instant::now();
    loop {
        if killed.exists() && finished(&killed) >= 1 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it could be killed"
        );
        assert!(
            waiting.elapsed().as_secs() < 300,
            "no run finished in 300 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = finished(&killed);
    assert!((1..8).contains(&done), "killed after {done} of 8 runs");
    let o = sweep(&sweep_path, &killed, &["--threads", "2", "--resume"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!("{} to do (--resume)", 8 - done)),
        "{stderr}"
    );
    let resumed: BTreeMap<_, _> = files(&killed)
        .into_iter()
        .filter(|(p, _)| !p.to_string_lossy().ends_with(".tmp"))
        .collect();
    let whole = files(&whole);
    let differing: Vec<_> = whole
        .keys()
        .chain(resumed.keys())
        .filter(|p| whole.get(*p) != resumed.get(*p))
        .collect();
    assert!(
        differing.is_empty(),
        "resumed differs from uninterrupted: {differing:?}"
    );
}

#[test]
fn a_bad_entry_fails_before_any_run() {
    let dir = placesim_testkit::tempdir().unwrap();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/two-switch.toml");
    std::fs::copy(&base, dir.path().join("two-switch.toml")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/KTH-SP2-1996-2.1-cln.swf.gz"),
        dir.path().join("kth.swf.gz"),
    )
    .unwrap();
    let text = "scenario = \"two-switch.toml\"\n\
        [[axis]]\nname = \"sets\"\n\
        [[axis.value]]\nlabel = \"pbs\"\nset = { run = { placement = \"pbs\" } }\n\
        [[axis.value]]\nlabel = \"typo\"\nset = { run = { placement = \"psb\" } }\n";
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, text).unwrap();
    let out = dir.path().join("out");
    let o = placesim(&[
        "sweep",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with(&format!(
            "placesim: error: {}: the run sets=typo: ",
            path.display()
        )) && stderr.contains("key `run.placement`: unknown value `psb`"),
        "{stderr}"
    );
    assert!(!out.exists(), "no run started");
}

/// A Slurm or PBS job array picks the shard from its environment.
#[test]
fn job_array_variables_pick_the_shard() {
    let dir = placesim_testkit::tempdir().unwrap();
    let out = dir.path().join("out");
    let sweep = sweep_file(dir.path());
    let run = |vars: &[(&str, &str)]| {
        let o = Command::new(env!("CARGO_BIN_EXE_placesim"))
            .args(["sweep", &sweep, "--out", out.to_str().unwrap()])
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("PBS_ARRAY_INDEX")
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let slurm = run(&[
        ("SLURM_ARRAY_TASK_ID", "3"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
    ]);
    assert!(
        slurm.contains("8 runs, this shard (2 of 3) 2, 2 to do"),
        "{slurm}"
    );
    // `--array=0-10:2`: six tasks, 0 to 10 by 2; task 4 is the third shard.
    let stepped = |id: &str| {
        run(&[
            ("SLURM_ARRAY_TASK_ID", id),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "6"),
        ])
    };
    let third = stepped("4");
    assert!(
        third.contains("8 runs, this shard (2 of 6) 1, 1 to do"),
        "{third}"
    );
    let off_step = stepped("5");
    assert!(
        off_step.contains(
            "placesim: error: SLURM_ARRAY_TASK_ID 5 is not a task of an array from \
             SLURM_ARRAY_TASK_MIN 0 by SLURM_ARRAY_TASK_STEP 2"
        ),
        "{off_step}"
    );
    let pbs = run(&[("PBS_ARRAY_INDEX", "0"), ("PLACESIM_SHARDS", "2")]);
    assert!(
        pbs.contains("8 runs, this shard (0 of 2) 4, 4 to do"),
        "{pbs}"
    );
    let bad = run(&[("PBS_ARRAY_INDEX", "2"), ("PLACESIM_SHARDS", "2")]);
    assert!(
        bad.contains("placesim: error: shard 2 of 2: expected 0 <= K < N"),
        "{bad}"
    );
}

/// A run that fails during a sweep leaves nothing of its own behind, and the other runs' results
/// whole: the sweep ends with the failure's message, exit status 1, and `--resume` re-runs only
/// the failed run.
#[test]
fn a_failed_run_leaves_no_parquet_and_the_others_whole() {
    let dir = placesim_testkit::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("tiny.swf"), placesim_testkit::HAND_TRACE).unwrap();
    // Two jobs 10¹² s apart: more hourly samples than a run may take.
    std::fs::write(
        d.join("span.swf"),
        "1 0 -1 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         2 1000000000000 -1 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    std::fs::write(
        d.join("base.toml"),
        "[[class]]\nname = \"n\"\ncount = 4\nncpus = 1\n[workload]\ntrace = \"tiny.swf\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("s.toml"),
        "scenario = \"base.toml\"\n\
         [[axis]]\nname = \"trace\"\n\
         [[axis.value]]\nlabel = \"tiny\"\nset = {}\n\
         [[axis.value]]\nlabel = \"span\"\nset = { workload = { trace = \"span.swf\" } }\n",
    )
    .unwrap();
    let out = d.join("out");
    let file = d.join("s.toml").display().to_string();
    let out_dir = out.display().to_string();
    let sweep = |extra: &[&str]| {
        let mut args = vec!["sweep", file.as_str(), "--out", out_dir.as_str()];
        args.extend_from_slice(extra);
        placesim(&args)
    };
    let o = sweep(&[]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "placesim: error: run trace=span, replicate=0: simulating {}: timeseries.parquet would hold more than 1000000 samples",
            d.join("span.swf").display()
        )),
        "{stderr}"
    );
    let good = files(&out.join("trace=tiny/replicate=0"));
    assert_eq!(
        good.keys()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>(),
        [
            "events.parquet",
            "jobs.parquet",
            "run.toml",
            "summary.parquet",
            "timeseries.parquet",
            "vnodes.parquet",
            "waits.parquet"
        ]
    );
    assert!(
        files(&out.join("trace=span/replicate=0")).is_empty(),
        "the failed run left files"
    );
    // Resumed: the finished run is kept as it was, the failed one is tried again.
    let o = sweep(&["--resume"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(files(&out.join("trace=tiny/replicate=0")) == good);
}
