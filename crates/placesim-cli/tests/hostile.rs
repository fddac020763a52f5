//! The hostile-input corpus: every input path given what a hostile or careless user would give
//! it (nothing, one byte, binary garbage, a truncated gzip, a directory, nesting past every
//! limit, counts past every limit), and every input that once crashed or exhausted memory.
//! Each case asserts the exact message, exit status 1, and that a run left no Parquet behind.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

/// Runs the binary in `dir` and returns its exit status and last line of standard error.
fn placesim(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_placesim"))
        .args(args)
        .current_dir(dir)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("PBS_ARRAY_INDEX")
        .output()
        .expect("binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let last = stderr.lines().last().unwrap_or("").to_owned();
    (out.status.code(), last)
}

/// Every file under `dir` that is Parquet or a half-written one.
fn parquet_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains(".parquet") {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// The files of the corpus, made in a fresh directory.
fn corpus() -> placesim_testkit::TempDir {
    let dir = placesim_testkit::tempdir().unwrap();
    let d = dir.path();
    let write = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
    write("empty", b"");
    write("one", b"x");
    // Every byte value, four times: control characters, then bytes that are not UTF-8.
    let garbage: Vec<u8> = (0..=255u8).cycle().take(1024).collect();
    write("garbage", &garbage);
    std::fs::create_dir(d.join("adir")).unwrap();
    let kth =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/KTH-SP2-1996-2.1-cln.swf.gz");
    write("truncated.swf.gz", &std::fs::read(kth).unwrap()[..200]);
    write("tiny.swf", placesim_testkit::HAND_TRACE.as_bytes());
    // Two jobs 10^12 s apart: hourly samples would take all the memory there is.
    write(
        "span.swf",
        b"1 0 -1 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
          2 1000000000000 -1 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    );
    let nested = format!(
        "1 select=1:ncpus=1 node_filter=\"{}ncpus>=1{}\"\n",
        "(".repeat(200_000),
        ")".repeat(200_000)
    );
    write("parens.req", nested.as_bytes());
    let nots = format!(
        "1 select=1:ncpus=1 node_filter=\"{}ncpus>=1\"\n",
        "not ".repeat(100_000)
    );
    write("nots.req", nots.as_bytes());
    let cluster = "[[class]]\nname = \"n\"\ncount = 4\nncpus = 1\n";
    for (name, body) in [
        ("requests_empty", "empty"),
        ("requests_one", "one"),
        ("requests_garbage", "garbage"),
        ("requests_adir", "adir"),
        ("requests_parens", "parens.req"),
        ("requests_nots", "nots.req"),
    ] {
        write(
            &format!("{name}.toml"),
            format!("{cluster}[workload]\ntrace = \"tiny.swf\"\nrequests_file = \"{body}\"\n")
                .as_bytes(),
        );
    }
    // A fairshare tree that chains every group under the one before: it held 24 GB at
    // 100,000 groups before trees were bounded in depth.
    let chain: String = (0..100_000)
        .map(|i| match i {
            0 => "g0 0 root 1\n".to_owned(),
            _ => format!("g{i} {i} g{} 1\n", i - 1),
        })
        .collect();
    write("chain.resource_group", chain.as_bytes());
    for (name, body) in [
        ("resource_group_garbage", "garbage"),
        ("resource_group_chain", "chain.resource_group"),
    ] {
        write(
            &format!("{name}.toml"),
            format!(
                "{cluster}[workload]\ntrace = \"tiny.swf\"\n[pbs]\nfair_share = true\n\
                 resource_group = \"{body}\"\n"
            )
            .as_bytes(),
        );
    }
    write(
        "recorded_garbage.toml",
        format!("{cluster}[workload]\ntrace = \"tiny.swf\"\nrecorded = \"garbage\"\n").as_bytes(),
    );
    write(
        "trace_truncated.toml",
        format!("{cluster}[workload]\ntrace = \"truncated.swf.gz\"\n").as_bytes(),
    );
    write(
        "huge_class.toml",
        b"[[class]]\nname = \"n\"\ncount = 1000000000\nncpus = 4\n[workload]\ntrace = \"tiny.swf\"\n",
    );
    write(
        "huge_generation.toml",
        b"[cluster]\nnodes = 2000000\n[[cluster.generation]]\nname = \"g\"\ncount = 2000000\nncpus = 1\n[workload]\ntrace = \"tiny.swf\"\n",
    );
    write(
        "huge_jobs.toml",
        format!("{cluster}[workload.generator]\njobs = 1000000000000\n").as_bytes(),
    );
    write(
        "outages.toml",
        format!(
            "{cluster}[workload]\ntrace = \"span.swf\"\n[[failures.model]]\nclass = \"n\"\nmtbf = 1\nmttr = 1\n"
        )
        .as_bytes(),
    );
    write(
        "base.toml",
        format!("{cluster}[workload]\ntrace = \"tiny.swf\"\n").as_bytes(),
    );
    // Nesting past the TOML parser's own limit, in arrays and in inline tables.
    let deep = format!("a = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    write("deep.toml", deep.as_bytes());
    let deep_tables = format!("x = {}1{}\n", "{a = ".repeat(50_000), "}".repeat(50_000));
    write("deep_tables.toml", deep_tables.as_bytes());
    write(
        "replicates.sweep.toml",
        b"scenario = \"base.toml\"\nreplicates = 4294967295\n",
    );
    // 400 × 400 runs: past the limit of one sweep.
    let mut grid = String::from("scenario = \"base.toml\"\n");
    for axis in ["a", "b"] {
        grid += &format!("[[axis]]\nname = \"{axis}\"\n");
        for i in 0..400 {
            grid += &format!("[[axis.value]]\nlabel = \"v{i}\"\nset = {{}}\n");
        }
    }
    write("grid.sweep.toml", grid.as_bytes());
    dir
}

#[test]
fn every_hostile_input_gets_its_message_and_exit_status_1() {
    let dir = corpus();
    let d = dir.path();
    fn run_trace(file: &str) -> Vec<&str> {
        vec!["run", "--trace", file, "--policy", "easy", "--out", "out"]
    }
    fn run_scenario(file: &str) -> Vec<&str> {
        vec!["run", "--scenario", file, "--out", "out"]
    }
    fn sweep(file: &str) -> Vec<&str> {
        vec!["sweep", file, "--out", "out"]
    }
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // SWF traces.
        (
            run_trace("empty"),
            "placesim: error: empty: no job records: the file is empty or holds only comments",
        ),
        (
            run_trace("one"),
            "placesim: error: one:1: field 1 (job number): expected a number, found `x`",
        ),
        (
            run_trace("garbage"),
            "placesim: error: garbage:1: field 1 (job number): expected a number, found `\\0\\u{1}\\u{2}\\u{3}\\u{4}\\u{5}\\u{6}\\u{7}\\u{8}`",
        ),
        (
            run_trace("adir"),
            "placesim: error: adir: cannot open: Is a directory (os error 21)",
        ),
        (
            run_trace("truncated.swf.gz"),
            "placesim: error: truncated.swf.gz: reading failed after line 2, the data is corrupt or truncated: incomplete deflate stream",
        ),
        (
            vec![
                "run", "--trace", "span.swf", "--policy", "easy", "--procs", "8", "--out", "out",
            ],
            "placesim: error: simulating span.swf: timeseries.parquet would hold more than 1000000 samples: at one every 3600 s the run reached its limit at simulated time 3600000000 s; set a larger Δt ([metrics] sample_every, or --sample-every), or 0 for no samples",
        ),
        (
            vec![
                "run",
                "--trace",
                "tiny.swf",
                "--policy",
                "easy",
                "--procs",
                "100000000000",
                "--procs-per-node",
                "1",
                "--out",
                "out",
            ],
            "placesim: error: building the machine: 100000000000 vnodes is more than placesim's limit of 1000000 vnodes in a cluster",
        ),
        // Scenario files.
        (
            run_scenario("empty"),
            "placesim: error: empty:1:1: key `class`: a cluster needs at least one vnode: give at least one [[class]] or [[vnode]]",
        ),
        (
            run_scenario("one"),
            "placesim: error: one:1:2: key `x`: key with no value, expected `=`",
        ),
        (
            run_scenario("garbage"),
            "placesim: error: garbage:2:118: expected UTF-8 text, found the byte 0x80",
        ),
        (
            run_scenario("adir"),
            "placesim: error: adir: Is a directory (os error 21)",
        ),
        (
            run_scenario("deep.toml"),
            "placesim: error: deep.toml:1:85: key `a`: cannot recurse further; max recursion depth met",
        ),
        (
            run_scenario("deep_tables.toml"),
            "placesim: error: deep_tables.toml:1:405: key `x`: cannot recurse further; max recursion depth met",
        ),
        (
            run_scenario("huge_class.toml"),
            "placesim: error: huge_class.toml:3:9: key `class.count`: 1000000000 vnodes is more than placesim's limit of 1000000 vnodes in a cluster",
        ),
        (
            run_scenario("huge_generation.toml"),
            "placesim: error: huge_generation.toml:5:9: key `cluster.generation.count`: 2000000 vnodes is more than placesim's limit of 1000000 vnodes in a cluster",
        ),
        (
            run_scenario("huge_jobs.toml"),
            "placesim: error: huge_jobs.toml:6:8: key `workload.generator.jobs`: 1000000000000 jobs is more than placesim's limit of 50000000 generated jobs",
        ),
        (
            run_scenario("outages.toml"),
            "placesim: error: outages.toml: [[failures.model]] for class `n` takes the run past 10000000 outages before the horizon of 1000000000200 s; give a longer mtbf",
        ),
        (
            run_scenario("trace_truncated.toml"),
            "placesim: error: truncated.swf.gz: reading failed after line 2, the data is corrupt or truncated: incomplete deflate stream",
        ),
        // Requests files.
        (
            run_scenario("requests_one.toml"),
            "placesim: error: one:1: expected a job id, a space, and a request",
        ),
        (
            run_scenario("requests_garbage.toml"),
            "placesim: error: garbage:2:118: expected UTF-8 text, found the byte 0x80",
        ),
        (
            run_scenario("requests_adir.toml"),
            "placesim: error: adir: Is a directory (os error 21)",
        ),
        (
            run_scenario("requests_parens.toml"),
            "placesim: error: parens.req:1: column 133: node_filter nests `(` and `not` more than 100 levels deep",
        ),
        (
            run_scenario("requests_nots.toml"),
            "placesim: error: nots.req:1: column 433: node_filter nests `(` and `not` more than 100 levels deep",
        ),
        // Fairshare trees.
        (
            run_scenario("resource_group_garbage.toml"),
            "placesim: error: garbage:2:118: key `pbs.resource_group`: expected UTF-8 text, found the byte 0x80",
        ),
        (
            run_scenario("resource_group_chain.toml"),
            "placesim: error: chain.resource_group:65:1: key `pbs.resource_group`: `g64` would be 65 levels below the root, more than placesim's limit of 64",
        ),
        // Records of what really happened.
        (
            run_scenario("recorded_garbage.toml"),
            "placesim: error: garbage:2:118: expected UTF-8 text, found the byte 0x80",
        ),
        // Sweep files.
        (
            sweep("empty"),
            "placesim: error: empty:1:1: missing field `scenario`",
        ),
        (
            sweep("one"),
            "placesim: error: one:1:2: key `x`: key with no value, expected `=`",
        ),
        (
            sweep("garbage"),
            "placesim: error: garbage:2:118: expected UTF-8 text, found the byte 0x80",
        ),
        (
            sweep("adir"),
            "placesim: error: adir: Is a directory (os error 21)",
        ),
        (
            sweep("grid.sweep.toml"),
            "placesim: error: grid.sweep.toml: the axes' values times the replicates make more than 100000 runs, placesim's limit for one sweep",
        ),
        // The report's window.
        (
            vec!["report", "adir", "--window", "5..3"],
            "placesim: error: --window `5..3`: expected START..END, each seconds or [[[DD:]HH:]MM:]SS, START before END",
        ),
        // The generator's flags.
        (
            vec![
                "gen",
                "--jobs",
                "100000000000",
                "--procs",
                "4",
                "--out",
                "g.swf",
            ],
            "placesim: error: --jobs 100000000000 is more than placesim's limit of 50000000 generated jobs",
        ),
        (
            vec![
                "gen",
                "--jobs",
                "10",
                "--procs",
                "18446744073709551615",
                "--out",
                "g.swf",
            ],
            "placesim: error: --procs 18446744073709551615: expected from 1 to 2147483648, the most an SWF trace may name",
        ),
    ];
    let mut wrong = Vec::new();
    for (args, expected) in &cases {
        let (status, last) = placesim(d, args);
        if status != Some(1) || last != *expected {
            wrong.push(format!(
                "{}\n  exit {status:?}\n  got      {last}\n  expected {expected}",
                args.join(" ")
            ));
        }
        assert!(
            parquet_under(d).is_empty(),
            "{} left {:?}",
            args.join(" "),
            parquet_under(d)
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // An empty requests file asks for nothing: every job keeps its default request.
    let (status, last) = placesim(d, &run_scenario("requests_empty.toml"));
    assert_eq!(status, Some(0), "{last}");
}
