//! The `placesim` binary, end to end.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

/// The shared hand-worked trace: 4 processors, 4 jobs.
const TRACE: &str = placesim_testkit::HAND_TRACE;

fn placesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placesim"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// `placesim run --scenario SCENARIO [EXTRA...] --out OUT`.
fn run_scenario(scenario: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--scenario", scenario];
    args.extend_from_slice(extra);
    args.extend(["--out", out]);
    placesim(&args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write_trace(dir: &Path, body: &str) -> String {
    let path = dir.join("tiny.swf");
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

#[test]
fn run_writes_parquet_and_prints_the_summary_and_speed() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), TRACE);
    let out = dir.path().join("out");
    let o = placesim(&[
        "run",
        "--trace",
        &trace,
        "--policy",
        "easy",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(out.join("jobs.parquet").is_file() && out.join("summary.parquet").is_file());
    let stdout = text(&o.stdout);
    assert!(stdout.starts_with("policy"), "{stdout}");
    let row = stdout.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    // policy, jobs, skipped, utilization, ... (EASY backfills J3: waits 0, 10, 0, 13).
    assert_eq!(&cells[..3], ["easy", "4", "0"]);
    assert_eq!(cells[4], "5.8", "mean wait (0 + 10 + 0 + 13) / 4 = 5.75");
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("4 records: 4 jobs, 0 skipped (none); machine of 4 processors"),
        "{stderr}"
    );
    assert!(
        stderr.contains("jobs/s") && stderr.contains("events/s") && stderr.contains("peak memory"),
        "{stderr}"
    );
    // The summary row read back from Parquet.
    let row = placesim_analysis::read_summary(&out.join("summary.parquet")).unwrap();
    assert_eq!(
        (row.scenario.as_str(), row.policy.as_str(), row.jobs_run),
        ("tiny", "easy", 4)
    );
}

#[test]
fn bad_trace_fails_with_file_line_and_reason() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1\n",
    );
    let out = dir.path().join("out");
    let o = placesim(&[
        "run",
        "--trace",
        &trace,
        "--policy",
        "fcfs",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!("placesim: error: {trace}:2: expected 18 whitespace-separated fields, found 17\n")
    );
    assert!(!out.exists(), "nothing is written for a bad trace");
}

#[test]
fn skip_bad_lines_reports_what_was_skipped() {
    let dir = placesim_testkit::tempdir().unwrap();
    let body = format!("{TRACE}5 3 -1 x 1 -1 -1 1 5 -1 1 1 1 -1 1 -1 -1 -1\n");
    let trace = write_trace(dir.path(), &body);
    let out = dir.path().join("out");
    let o = placesim(&[
        "run",
        "--trace",
        &trace,
        "--policy",
        "fcfs",
        "--skip-bad-lines",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("5 records: 4 jobs, 1 skipped (bad_line: 1)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "skipped bad line: {trace}:6: field 4 (run time): expected a number, found `x`"
        )),
        "{stderr}"
    );
}

#[test]
fn no_timing_runs_are_byte_identical() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), TRACE);
    for name in ["a", "b"] {
        let out = dir.path().join(name);
        let o = placesim(&[
            "run",
            "--trace",
            &trace,
            "--policy",
            "easy",
            "--no-timing",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success());
        // No speed is claimed for an untimed run.
        let stderr = text(&o.stderr);
        assert!(
            stderr.contains("events simulated (not timed: --no-timing);")
                && !stderr.contains("jobs/s"),
            "{stderr}"
        );
    }
    for file in ["jobs.parquet", "summary.parquet"] {
        let a = std::fs::read(dir.path().join("a").join(file)).unwrap();
        let b = std::fs::read(dir.path().join("b").join(file)).unwrap();
        assert!(a == b, "{file}");
    }
}

#[test]
fn unknown_policy_is_a_usage_error() {
    let o = placesim(&["run", "--trace", "x.swf", "--policy", "sjf", "--out", "o"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("invalid value 'sjf' for '--policy <POLICY>'"));
}

#[test]
fn demo_answers_on_three_generations_and_writes_a_report() {
    let dir = placesim_testkit::tempdir().unwrap();
    let out = dir.path().join("demo");
    let o = placesim(&["demo", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    // The configurations, in the sweep's order, three replicates each, every KTH-SP2 job run.
    let comparison = placesim_analysis::compare(&out).unwrap();
    let names: Vec<(&str, usize)> = comparison
        .configs
        .iter()
        .map(|c| (c.config.as_str(), c.runs))
        .collect();
    assert_eq!(
        names,
        [
            ("config=none", 3),
            ("config=pbs-model", 3),
            ("config=moab-bestfit", 3),
            ("config=moab-minloss", 3),
            ("config=pbs-model-greedy", 3),
        ]
    );
    let baseline = placesim_analysis::read_runs(&out.join("config=none")).unwrap();
    assert_eq!(baseline.len(), 3);
    assert!(baseline.iter().all(|r| r.jobs_run == 27_992));
    // The short answer comes first, its figures those the Parquet files hold: work per hour
    // and mean wait against no grouping, and the share of jobs mixing generations.
    let metric = |name: &str| {
        placesim_analysis::METRICS
            .iter()
            .position(|m| m.column == name)
            .unwrap()
    };
    let (work, wait) = (
        metric("work_core_hours_per_hour"),
        metric("window_wait_mean_s"),
    );
    let base = &comparison.configs[0];
    let pbs = &comparison.configs[1];
    let change = |i: usize| 100.0 * (pbs.metrics[i].mean / base.metrics[i].mean - 1.0);
    let expected = format!(
        "  PBS placement sets on model                work per hour {} %, mean wait {} %, jobs mixing generations {:.0} % → {:.0} %",
        format!("{:+.1}", change(work)).replacen('-', "−", 1),
        format!("{:+.0}", change(wait)).replacen('-', "−", 1),
        100.0 * comparison.speeds_mixed[0],
        100.0 * comparison.speeds_mixed[1],
    );
    assert!(
        stdout.starts_with("Against no grouping (EASY, first fit), means of 3 replicates:\n"),
        "{stdout}"
    );
    assert!(stdout.contains(&expected), "{expected}\n{stdout}");
    // On this cluster, placement sets raise work per hour, cut the wait, and keep most jobs
    // within one generation.
    assert!(change(work) > 0.0 && change(wait) < 0.0, "{stdout}");
    assert!(comparison.speeds_mixed[1] < comparison.speeds_mixed[0] / 2.0);
    // Then the table and the report.
    let mean_wait = pbs.metrics[wait].format(0);
    assert!(stdout.contains(&mean_wait), "{stdout}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(&mean_wait) && html.contains("Utilization over time"));
    assert!(stdout.contains(&format!("Report: {}", out.join("report.html").display())));
    // The inputs, beside the results, run again as a sweep.
    assert!(out.join("inputs/scenarios/demo-sweep.toml").is_file());
    // A placement picture per configuration, over one window: each bar a job on one of its
    // exec_vnode's vnodes from its start to its end (clipped to the window), read back here
    // from the first run's jobs.parquet on its own.
    assert_eq!(comparison.pictures.len(), 5);
    assert!(html.contains("Where jobs ran") && html.contains("spanned: vnodes in several sets"));
    // The headline chart: work per hour and mean wait against no grouping.
    assert!(
        html.contains("<h2>Against config=none</h2>")
            && html.contains(&format!("config=pbs-model: {:+.1} %</title>", change(work)))
    );
    for (config, picture) in &comparison.pictures {
        assert_eq!(picture.window, comparison.pictures[0].1.window);
        let jobs =
            placesim_analysis::read_placements(&out.join(config).join("replicate=0/jobs.parquet"))
                .unwrap();
        let (w0, w1) = picture.window;
        let mut shown = 0;
        for job in &jobs {
            let (Some(start), Some(end), Some(exec)) = (job.start_s, job.end_s, &job.exec_vnode)
            else {
                continue;
            };
            let bars: Vec<_> = picture
                .bars
                .iter()
                .filter(|b| b.job_id == job.job_id)
                .collect();
            if end <= w0 || start >= w1 {
                assert!(bars.is_empty(), "job {} outside the window", job.job_id);
                continue;
            }
            shown += 1;
            let mut vnodes: Vec<&str> = bars
                .iter()
                .map(|b| picture.rows[b.row].0.as_str())
                .collect();
            let mut expected = placesim_analysis::picture::exec_vnodes(exec);
            vnodes.sort_unstable();
            expected.sort_unstable();
            assert_eq!(vnodes, expected, "{config}: job {}", job.job_id);
            assert!(
                bars.iter()
                    .all(|b| (b.from_s, b.to_s) == (start.max(w0), end.min(w1))),
                "{config}: job {} times",
                job.job_id
            );
        }
        assert!(shown > 10, "{config}: {shown} jobs in the window");
        // Rows are grouped by set.
        assert!(picture.rows.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}

fn repo_file(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

#[test]
fn check_prints_the_color_shape_sets() {
    let out = placesim(&["check", &repo_file("scenarios/color-shape.toml")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for line in [
        "    color=blue: 4 vnodes node[1-4]; 4 ncpus, 16gb mem",
        "    color=red: 4 vnodes node[5-8]; 4 ncpus, 16gb mem",
        "    shape=square: 4 vnodes node[1-2,5-6]; 4 ncpus, 16gb mem",
        "    shape=triangle: 4 vnodes node[3-4,7-8]; 4 ncpus, 16gb mem",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "missing `{line}`:\n{stdout}"
        );
    }
}

/// `placesim check` lists the timeline: a `qmgr` change (psets-timeline.toml), and `qdel`
/// entries and extra cycles.
#[test]
fn check_lists_the_timeline() {
    let out = placesim(&["check", &repo_file("scenarios/psets-timeline.toml")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = "timeline: from 5961600 s, node_group_enable True, node_group_key switch, do_not_span_psets False, only_explicit_psets False";
    assert!(
        text(&out.stdout).lines().any(|l| l == line),
        "missing `{line}`:\n{}",
        text(&out.stdout)
    );
    let dir = placesim_testkit::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    std::fs::write(
        &path,
        "[[class]]\nname = \"n\"\ncount = 2\n\
         [[event]]\nat = 60\ncycle = true\n[[event]]\nat = 50\nqdel = 7\n",
    )
    .unwrap();
    let out = placesim(&["check", &path.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for line in [
        "timeline: qdel job 7 at 50 s (line 9)",
        "timeline: one more scheduling cycle at 60 s",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "missing `{line}`:\n{stdout}"
        );
    }
}

#[test]
fn check_refuses_a_typo_with_its_line_and_key() {
    let dir = placesim_testkit::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "[[class]]\nname = \"n\"\ncount = 2\n\n[pbs]\nnode_group_kye = [\"x\"]\n",
    )
    .unwrap();
    let out = placesim(&["check", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "placesim: error: {}:6:1: key `node_group_kye`: unknown field `node_group_kye`, expected one of `node_group_enable`, `node_group_key`, `vnode_sharing`, `do_not_span_psets`, `only_explicit_psets`, `strict_ordering`, `scheduler_iteration`, `backfill_depth`, `opt_backfill_fuzzy`, `node_sort_key`, `job_sort_key`, `by_queue`, `round_robin`, `job_sort_formula`, `job_sort_formula_threshold`, `fair_share`, `resource_group`, `unknown_shares`, `fairshare_entity`, `fairshare_usage_res`, `fairshare_decay_time`, `fairshare_decay_factor`, `fairshare_enforce_no_shares`, `max_run`, `max_run_res`, `max_queued`, `max_queued_res`, `default_chunk`, `resources_default`, `queue`, `sched`\n",
            path.display()
        )
    );
}

#[test]
fn run_with_a_scenario_uses_its_cluster_rules_and_name() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), TRACE);
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"tiny-two-hosts\"\n[run]\ndiscipline = \"fcfs\"\n[[class]]\nname = \"n\"\ncount = 2\nncpus = 2\n[workload]\ntrace = \"{trace}\"\n[[workload.rule]]\nsize_min = 2\nrequest = \"select={{nodes}}:ncpus={{ppn}} place=scatter:excl\"\n"
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = run_scenario(
        &scenario.display().to_string(),
        &out_dir.display().to_string(),
        &[],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("machine of 4 processors"), "{stderr}");
    assert!(stderr.contains("by rule [3]"), "{stderr}");
    assert!(
        stderr.contains("tiny-two-hosts under fcfs: 4 jobs"),
        "{stderr}"
    );
    assert!(out_dir.join("jobs.parquet").exists());
}

#[test]
fn run_refuses_requests_first_fit_cannot_honour() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), TRACE);
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        format!(
            "[[resource]]\nname = \"switch\"\ntype = \"string\"\n[[class]]\nname = \"n\"\ncount = 4\n[workload]\ntrace = \"{trace}\"\n[[workload.rule]]\nrequest = \"select={{n}}:ncpus=1 place=group=switch\"\n"
        ),
    )
    .unwrap();
    let out = run_scenario(
        &scenario.display().to_string(),
        &dir.path().join("out").display().to_string(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).ends_with(&format!(
            "placesim: error: {}: job 1 asks for placement sets (place=group= or a per-chunk group=), which the first-fit placement cannot honour\n",
            scenario.display()
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_generated_file_replays_exactly_as_the_generator_scenario() {
    let dir = placesim_testkit::tempdir().unwrap();
    let cluster = "[run]\nseed = 4\n[[resource]]\nname = \"switch\"\ntype = \"string\"\n[cluster]\nswitches_of = 8\n[[cluster.generation]]\nname = \"a\"\ncount = 16\nncpus = 4\nspeed = 1.0\n[[cluster.generation]]\nname = \"b\"\ncount = 16\nncpus = 4\nspeed = 1.5\n";
    let rules = "[[workload.rule]]\nsize_min = 5\nfraction = 0.5\nrequest = \"select={n}:ncpus=1:model=b||{n}:ncpus=1\"\n";
    let generated = dir.path().join("gen.toml");
    std::fs::write(
        &generated,
        format!("name = \"g\"\n{cluster}[workload.generator]\njobs = 3000\n{rules}"),
    )
    .unwrap();
    let swf = dir.path().join("w.swf.gz");
    let out = placesim(&[
        "gen",
        "--scenario",
        &generated.display().to_string(),
        "--out",
        &swf.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("3000 jobs written to"),
        "{}",
        text(&out.stderr)
    );
    // The side file holds every job's request, in the requests-file format.
    let side = std::fs::read_to_string(dir.path().join("w.swf.gz.requests")).unwrap();
    assert_eq!(side.lines().count(), 3001);
    assert!(
        side.lines()
            .any(|l| l.ends_with(":model=b||") || l.contains(":ncpus=1:model=b||")),
        "{side}"
    );
    let replayed = dir.path().join("replay.toml");
    std::fs::write(
        &replayed,
        format!("name = \"g\"\n{cluster}[workload]\ntrace = \"w.swf.gz\"\n{rules}"),
    )
    .unwrap();
    for (scenario, out_dir) in [(&generated, "a"), (&replayed, "b")] {
        let out = run_scenario(
            &scenario.display().to_string(),
            &dir.path().join(out_dir).display().to_string(),
            &["--no-timing"],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let a = std::fs::read(dir.path().join("a/jobs.parquet")).unwrap();
    let b = std::fs::read(dir.path().join("b/jobs.parquet")).unwrap();
    assert!(
        a == b,
        "jobs.parquet differs between the generator and its file"
    );
}

/// A run's generated workload, made while the scenario loads, is the one of the run's seed,
/// given in the file or by `--seed` over another, and its generator's errors are said as
/// before.
#[test]
fn a_run_generates_for_its_seed_and_says_the_generators_errors() {
    let dir = placesim_testkit::tempdir().unwrap();
    let scenario = |name: &str, run: &str, workload: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!("{run}[[class]]\nname = \"n\"\ncount = 16\nncpus = 4\n[workload.generator]\njobs = 500\n{workload}"),
        )
        .unwrap();
        path.display().to_string()
    };
    let seven = scenario("seven.toml", "[run]\nseed = 7\n", "");
    let one = scenario("one.toml", "[run]\nseed = 1\n", "");
    let jobs_of = |scenario: &str, out: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        // One name for all: a run's name is in its rows.
        let mut args = vec!["--no-timing", "--name", "g"];
        args.extend_from_slice(extra);
        let run = run_scenario(scenario, &out.display().to_string(), &args);
        assert!(run.status.success(), "{}", text(&run.stderr));
        std::fs::read(out.join("jobs.parquet")).unwrap()
    };
    let from_file = jobs_of(&seven, "a", &[]);
    assert!(jobs_of(&one, "b", &["--seed", "7"]) == from_file);
    assert!(jobs_of(&one, "c", &[]) != from_file);
    let bad = scenario("bad.toml", "", "[workload.generator.batch]\nb1 = -1.0\n");
    let run = run_scenario(&bad, &dir.path().join("d").display().to_string(), &[]);
    assert!(!run.status.success());
    assert_eq!(
        text(&run.stderr).trim_end(),
        format!(
            "placesim: error: {bad}: [workload.generator]: Lublin model parameter a1/b1 = -1 is invalid: gamma shape and scale must be positive and finite"
        )
    );
}

#[test]
fn gen_from_flags_and_its_bad_input() {
    let dir = placesim_testkit::tempdir().unwrap();
    let swf = dir.path().join("w.swf");
    let out = placesim(&[
        "gen",
        "--jobs",
        "500",
        "--procs",
        "128",
        "--seed",
        "9",
        "--out",
        &swf.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&swf).unwrap();
    assert!(body.contains("; MaxProcs: 128\n"));
    assert_eq!(body.lines().filter(|l| !l.starts_with(';')).count(), 500);
    let out = placesim(&[
        "gen",
        "--jobs",
        "5",
        "--procs",
        "8",
        "--max-estimate",
        "10h",
        "--out",
        &swf.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "placesim: error: --max-estimate `10h`: expected [[[DD:]HH:]MM:]SS\n"
    );
}

/// Unsorted submits are sorted, and said so; an absurd value is refused at its field with
/// exit code 1, before anything is written.
#[test]
fn unsorted_submits_are_reported_and_absurd_values_refused() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "; MaxProcs: 4\n1 50 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n2 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n",
    );
    let out = dir.path().join("out");
    let args = |trace: &str| {
        placesim(&[
            "run",
            "--trace",
            trace,
            "--policy",
            "fcfs",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let o = args(&trace);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains(
            "placesim: submit times were out of order; jobs were sorted stably by submit time\n"
        ),
        "{}",
        text(&o.stderr)
    );
    let absurd = write_trace(
        dir.path(),
        "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 99999999999999 -1 1 1 1 -1 1 -1 -1 -1\n",
    );
    let o = args(&absurd);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "placesim: error: {absurd}:2: field 9 (requested time): expected at most 1099511627776, found 99999999999999\n"
        )
    );
}

/// `--backfill-depth` goes with `easy` only, and says so; with `easy` it names the depth in
/// the output rows.
#[test]
fn backfill_depth_goes_with_easy_and_labels_the_run() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = repo_file("workloads/hand-worked.swf");
    let trace = trace.as_str();
    let out = dir.path().join("c");
    let o = placesim(&[
        "run",
        "--trace",
        trace,
        "--policy",
        "conservative",
        "--backfill-depth",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "placesim: error: --backfill-depth 3: a backfill depth goes with discipline easy, not conservative\n"
    );
    let out = dir.path().join("e");
    let o = placesim(&[
        "run",
        "--trace",
        trace,
        "--policy",
        "easy",
        "--backfill-depth",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let row = placesim_analysis::read_summary(&out.join("summary.parquet")).unwrap();
    assert_eq!(row.policy, "easy-depth3");
    assert!(out.join("events.parquet").is_file());
}

/// `--exec-vnode` names each job's vnodes in jobs.parquet, read back as the report reads them;
/// without it the column is null. The hand trace under EASY on four one-ncpu vnodes: J1 on
/// node0–1, J2 on all four, J3 backfilled on node2, J4 on node0–1.
#[test]
fn exec_vnode_flag_names_each_jobs_vnodes() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), TRACE);
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "run",
            "--trace",
            &trace,
            "--policy",
            "easy",
            "--procs-per-node",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = placesim(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        placesim_analysis::read_placements(&out.join("jobs.parquet")).unwrap()
    };
    let with = run(&dir.path().join("with"), &["--exec-vnode"]);
    let job = |job_id: u64, start: u64, end: u64, exec: &str| placesim_analysis::JobPlacement {
        job_id,
        start_s: Some(start),
        end_s: Some(end),
        placement_set: None,
        exec_vnode: Some(exec.to_owned()),
        running_at_start: false,
    };
    assert_eq!(
        with,
        [
            job(1, 0, 10, "(node0:ncpus=1)+(node1:ncpus=1)"),
            job(
                2,
                10,
                15,
                "(node0:ncpus=1)+(node1:ncpus=1)+(node2:ncpus=1)+(node3:ncpus=1)"
            ),
            job(3, 1, 4, "(node2:ncpus=1)"),
            job(4, 15, 19, "(node0:ncpus=1)+(node1:ncpus=1)"),
        ]
    );
    let without = run(&dir.path().join("without"), &[]);
    assert!(without.iter().all(|p| p.exec_vnode.is_none()));
}

/// `placesim explain` on the hand-worked EASY schedule: J4 (2 processors, submitted at 2)
/// fits at 4 but would delay J2's reservation (at 20, J1's estimated end), becomes the top
/// job when J2 starts at 10, is reserved at J2's estimated end, 15, and runs then; and
/// `report --explain` shows the same text.
#[test]
fn explain_tells_why_a_job_waited() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), TRACE);
    let out = dir.path().join("out");
    let o = placesim(&[
        "run",
        "--trace",
        &trace,
        "--policy",
        "easy",
        "--procs-per-node",
        "1",
        "--exec-vnode",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = placesim(&["explain", out.to_str().unwrap(), "4"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let expected = "job 4 of tiny (easy, seed 0)
  request:    select=2:ncpus=1
  submitted:  2 s
  started:    15 s, after waiting 13 s
  ended:      19 s
  ran on:     (node0:ncpus=1)+(node1:ncpus=1)
  set:        (none)
what the scheduler said, and what happened to the site while it waited, in time order:
           2 s  submit
           4 s  comment: Not Running: Job would conflict with reservation or top job
          10 s  top-job estimate: start 15 s
          15 s  start
          19 s  end: finished
queue ahead of it when it first became a top job, at 10 s: none
";
    assert_eq!(text(&o.stdout), expected);
    // J3 was backfilled at once: never a top job.
    let o = placesim(&["explain", out.to_str().unwrap(), "3"]);
    assert!(text(&o.stdout).ends_with("it never became a top job\n"));
    let o = placesim(&["explain", out.to_str().unwrap(), "9"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "placesim: error: {}: no job 9\n",
            out.join("jobs.parquet").display()
        )
    );
    let o = placesim(&["report", out.to_str().unwrap(), "--explain", "4"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Why the job waited</h2>"));
    assert!(html.contains("10 s  top-job estimate: start 15 s\n          15 s  start"));
}

/// A PBS queue's own `backfill_depth` reaches the run: queue `strict` (SWF queue 1) has
/// depth 0. J1 (3 of 4 vnodes) runs until 10; J2 (queue 1, 2 vnodes) cannot start, and J3
/// (queue 1, 1 vnode, 5 s) would break the queue's strict order, so it waits for J2, until
/// 10. Without the queue's depth, J2 is the top job and J3, ending by 7, is backfilled at 2.
#[test]
fn a_queue_backfill_depth_of_zero_keeps_the_queue_in_order() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "1 0 -1 10 3 -1 -1 3 10 -1 1 -1 -1 -1 0 -1 -1 -1\n\
         2 1 -1 10 2 -1 -1 2 10 -1 1 -1 -1 -1 1 -1 -1 -1\n\
         3 2 -1 5 1 -1 -1 1 5 -1 1 -1 -1 -1 1 -1 -1 -1\n",
    );
    let explain_j3 = |queue_depth: &str| {
        let scenario = dir.path().join("q.toml");
        std::fs::write(
            &scenario,
            format!(
                "name = \"queues\"\n[[class]]\nname = \"n\"\ncount = 4\nncpus = 1\n\
                 [workload]\ntrace = \"{trace}\"\n\
                 [[pbs.queue]]\nname = \"strict\"\nswf_queues = [1]\n{queue_depth}"
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &[]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let o = placesim(&["explain", out.to_str().unwrap(), "3"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let strict = explain_j3("backfill_depth = 0\n");
    assert!(
        strict.contains(
            "  started:    10 s, after waiting 8 s\n\
             \x20 ended:      15 s\n"
        ),
        "{strict}"
    );
    assert!(
        strict.contains("2 s  comment: Not Running: Job would break strict sorted order\n"),
        "{strict}"
    );
    let shared = explain_j3("");
    assert!(
        shared.contains("  started:    2 s, after waiting 0 s\n"),
        "{shared}"
    );
}

/// `[pbs] job_sort_key` (and Moab's priority) reaches the run: J1 holds the 4 vnodes until
/// 10; J2 (1 vnode) and J3 (4 vnodes, 5 s) wait. Under FCFS in submission order J2 starts at
/// 10 and J3 at 20; sorted by ncpus HIGH, J3 goes first, at 10, and J2 at 15.
#[test]
fn job_sort_key_orders_the_queue() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "1 0 -1 10 4 -1 -1 4 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         2 1 -1 10 1 -1 -1 1 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         3 2 -1 5 4 -1 -1 4 5 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    );
    let starts = |pbs: &str| {
        let scenario = dir.path().join("o.toml");
        std::fs::write(
            &scenario,
            format!(
                "name = \"order\"\n[run]\ndiscipline = \"fcfs\"\n[[class]]\nname = \"n\"\ncount = 4\nncpus = 1\n\
                 [workload]\ntrace = \"{trace}\"\n{pbs}"
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &[]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let mut placements = placesim_analysis::read_placements(&out.join("jobs.parquet")).unwrap();
        placements.sort_by_key(|p| p.job_id);
        placements
            .iter()
            .map(|p| p.start_s.unwrap())
            .collect::<Vec<u64>>()
    };
    assert_eq!(starts(""), [0, 10, 20]);
    assert_eq!(
        starts("[pbs]\njob_sort_key = [\"ncpus HIGH\"]\n"),
        [0, 15, 10]
    );
    // Moab's priority with a PROC weight far above a minute queued: the same order.
    assert_eq!(starts("[moab.priority]\nprocweight = 100\n"), [0, 15, 10]);
}

/// Runs a scenario of 8 one-ncpu vnodes (`tail` appended) over `trace` (SWF lines), and
/// gives each job's start, in job order, and the output directory.
fn run_with_limits(dir: &Path, trace: &str, tail: &str) -> (Vec<u64>, std::path::PathBuf) {
    run_on_vnodes(dir, 8, trace, tail)
}

/// As [`run_with_limits`], on `vnodes` one-ncpu vnodes.
fn run_on_vnodes(
    dir: &Path,
    vnodes: u32,
    trace: &str,
    tail: &str,
) -> (Vec<u64>, std::path::PathBuf) {
    let class = format!("count = {vnodes}\nncpus = 1\n");
    run_on_class(dir, &class, trace, tail)
}

/// As [`run_with_limits`], on vnodes of one class whose keys (after its name) are `class`.
fn run_on_class(
    dir: &Path,
    class: &str,
    trace: &str,
    tail: &str,
) -> (Vec<u64>, std::path::PathBuf) {
    let trace = write_trace(dir, trace);
    let scenario = dir.join("limits.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"limits\"\n[[class]]\nname = \"n\"\n{class}\
             [workload]\ntrace = \"{trace}\"\n{tail}"
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut placements = placesim_analysis::read_placements(&out.join("jobs.parquet")).unwrap();
    placements.sort_by_key(|p| p.job_id);
    let starts = placements.iter().map(|p| p.start_s.unwrap()).collect();
    (starts, out)
}

/// Each job of the run in `out` with its start and `exec_vnode`, in job order.
fn placed(out: &Path) -> Vec<(u64, Option<u64>, String)> {
    let mut placed: Vec<(u64, Option<u64>, String)> =
        placesim_analysis::read_placements(&out.join("jobs.parquet"))
            .unwrap()
            .into_iter()
            .map(|p| (p.job_id, p.start_s, p.exec_vnode.unwrap_or_default()))
            .collect();
    placed.sort();
    placed
}

/// Runs `scenario` into `out` with `extra` and `--exec-vnode`, which must succeed, and returns
/// where each job was placed ([`placed`]).
fn run_placed(scenario: &Path, out: &Path, extra: &[&str]) -> Vec<(u64, Option<u64>, String)> {
    let mut args = extra.to_vec();
    args.push("--exec-vnode");
    let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    placed(out)
}

/// What `placesim explain` says of `job` in `out`.
fn explain(out: &Path, job: &str) -> String {
    let o = placesim(&["explain", out.to_str().unwrap(), job]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// Asserts that `placesim explain` of `job` in `out` says `line`.
fn assert_explains(out: &Path, job: &str, line: &str) {
    let said = explain(out, job);
    assert!(said.contains(line), "{said}");
}

/// User 7's jobs J1 (until 10) and J2 (until 20) start at 0; under `[u:PBS_GENERIC=2]` its
/// third, J3, submitted at 1, waits for J1's end, at 10, with PBS's comment, and is the top
/// job with that start. User 8's J4 is under no one's limit and starts at once. With
/// `[u:7=1]` as well, user 7's own limit wins over the generic one: J2 waits for J1 (10) and
/// J3 for J2 (30), with the comment naming the user.
#[test]
fn a_users_third_job_waits_for_one_of_the_first_two() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = "1 0 -1 10 1 -1 -1 1 10 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 2 0 -1 20 1 -1 -1 1 20 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 3 1 -1 5 1 -1 -1 1 5 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 4 2 -1 10 1 -1 -1 1 10 -1 1 8 1 -1 -1 -1 -1 -1\n";
    let (starts, out) = run_with_limits(
        dir.path(),
        trace,
        "[pbs]\nmax_run = \"[u:PBS_GENERIC=2]\"\n",
    );
    assert_eq!(starts, [0, 0, 10, 2]);
    assert_explains(
        &out,
        "3",
        "1 s  comment: Not Running: User has reached server running job limit.\n\
             \x20          1 s  top-job estimate: start 10 s\n",
    );
    let (starts, out) = run_with_limits(
        dir.path(),
        trace,
        "[pbs]\nmax_run = \"[u:PBS_GENERIC=2], [u:7=1]\"\n",
    );
    assert_eq!(starts, [0, 10, 30, 2]);
    assert_explains(
        &out,
        "2",
        "0 s  comment: Not Running: Server job limit reached for user 7\n",
    );
    // Without the limit, everything fits at once.
    let (starts, _) = run_with_limits(dir.path(), trace, "");
    assert_eq!(starts, [0, 0, 1, 2]);
}

/// A queue's overall limit: queue `short` (SWF queue 1) runs one job at a time, so J2 waits
/// for J1 (until 10); J3, in the default queue, starts at once.
#[test]
fn a_queue_limit_holds_the_queues_jobs_only() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = "1 0 -1 10 1 -1 -1 1 10 -1 1 7 1 -1 1 -1 -1 -1\n\
                 2 0 -1 10 1 -1 -1 1 10 -1 1 8 1 -1 1 -1 -1 -1\n\
                 3 1 -1 10 1 -1 -1 1 10 -1 1 9 1 -1 -1 -1 -1 -1\n";
    let (starts, out) = run_with_limits(
        dir.path(),
        trace,
        "[[pbs.queue]]\nname = \"short\"\nswf_queues = [1]\nmax_run = \"[o:PBS_ALL=1]\"\n",
    );
    assert_eq!(starts, [0, 10, 1]);
    assert_explains(
        &out,
        "2",
        "0 s  comment: Not Running: Queue short job limit has been reached.\n",
    );
}

/// A limit on a resource, held over time as vnodes are: user 7 may run 5 ncpus. J1 (3 ncpus,
/// until 10) runs; J2 (4 ncpus) would make 7, so it waits, with PBS's comment, and is
/// calendared at 10, when J1's ncpus come back. J3 (2 ncpus, 20 s) fits the limit now (3 + 2)
/// but would still run at 10, when J2 needs 4 of the 5: it waits too, and starts after J2, at
/// 20 (J2's end, 10 + 10). J4 (1 ncpu, 5 s), ending before 10, is backfilled at 3.
#[test]
fn a_resource_limit_is_calendared_like_the_vnodes() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = "1 0 -1 10 3 -1 -1 3 10 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 2 1 -1 10 4 -1 -1 4 10 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 3 2 -1 20 2 -1 -1 2 20 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 4 3 -1 5 1 -1 -1 1 5 -1 1 7 1 -1 -1 -1 -1 -1\n";
    let (starts, out) = run_with_limits(
        dir.path(),
        trace,
        "[pbs.max_run_res]\nncpus = \"[u:PBS_GENERIC=5]\"\n",
    );
    assert_eq!(starts, [0, 10, 20, 3]);
    assert_explains(
        &out,
        "2",
        "1 s  comment: Not Running: Server per-user limit reached on resource ncpus\n\
             \x20          1 s  top-job estimate: start 10 s\n",
    );
}

/// EASY's shadow time waits for the head's limit as well as for its ncpus. On 4 vnodes, user 7
/// may run one job: J1 (until 100) and J2 (user 8, until 10) run; J3 (user 7, 2 ncpus) fits
/// the free ncpus but not its limit, so it heads the queue and is calendared at 100, when J1
/// gives its room back, not at 10, when J2's end would first give it the ncpus. J4 (user 9,
/// 2 ncpus, 50 s) ends by 100 and is backfilled at once; against a shadow time of 10 it would
/// have taken the ncpus J3 needs then.
#[test]
fn a_head_held_by_its_limit_is_calendared_when_the_limit_has_room() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = "1 0 -1 100 1 -1 -1 1 100 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 2 0 -1 10 1 -1 -1 1 10 -1 1 8 1 -1 -1 -1 -1 -1\n\
                 3 1 -1 50 2 -1 -1 2 50 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 4 2 -1 50 2 -1 -1 2 50 -1 1 9 1 -1 -1 -1 -1 -1\n";
    let (starts, out) = run_on_vnodes(
        dir.path(),
        4,
        trace,
        "[pbs]\nmax_run = \"[u:PBS_GENERIC=1]\"\n",
    );
    assert_eq!(starts, [0, 0, 100, 2]);
    assert_explains(
        &out,
        "3",
        "1 s  comment: Not Running: User has reached server running job limit.\n\
             \x20          1 s  top-job estimate: start 100 s\n",
    );
}

/// A head turned away by the free ncpus gets no limit's comment meant for another job. On 4
/// vnodes, user 7 may run one job: J3 and J4 (user 7) wait for its limit while J2 runs, J3
/// with PBS's comment; J5 (user 8, 4 ncpus, the request J1 ran with) sorts before them
/// (`ncpus HIGH`) and waits for ncpus, which first fit does not explain. It must not be told
/// that its user reached the limit: the limits' placement remembers why it last refused J3,
/// but J5's placement was never asked, the free ncpus having turned it away first.
#[test]
fn a_head_waiting_for_ncpus_is_not_given_another_jobs_limit_comment() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = "1 0 -1 1 4 -1 -1 4 1 -1 1 8 1 -1 -1 -1 -1 -1\n\
                 2 1 -1 100 1 -1 -1 1 100 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 3 2 -1 10 1 -1 -1 1 10 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 4 3 -1 10 1 -1 -1 1 10 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 5 4 -1 10 4 -1 -1 4 10 -1 1 8 1 -1 -1 -1 -1 -1\n";
    let (starts, out) = run_on_vnodes(
        dir.path(),
        4,
        trace,
        "[pbs]\nmax_run = \"[u:PBS_GENERIC=1]\"\njob_sort_key = [\"ncpus HIGH\"]\n",
    );
    assert_eq!(starts, [0, 1, 111, 121, 101]);
    assert_explains(
        &out,
        "3",
        "2 s  comment: Not Running: User has reached server running job limit.\n",
    );
    let j5 = explain(&out, "5");
    assert!(!j5.contains("comment"), "{j5}");
}

/// A limit's value that does not read is refused at its column, with what was expected.
#[test]
fn a_bad_limit_is_refused_at_its_column() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "1 0 -1 10 1 -1 -1 1 10 -1 1 7 1 -1 -1 -1 -1 -1\n",
    );
    let scenario = dir.path().join("bad.toml");
    std::fs::write(
        &scenario,
        format!(
            "[[class]]\nname = \"n\"\ncount = 8\nncpus = 1\n[workload]\ntrace = \"{trace}\"\n\
             [pbs]\nmax_run = \"[u:PBS_GENERIC=2], [u:bob=two]\"\n"
        ),
    )
    .unwrap();
    let o = placesim(&["check", scenario.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "placesim: error: {}:8:32: key `pbs.max_run`: `two` is not a limit: expected a whole \
             number of jobs\n",
            scenario.display()
        )
    );
}

/// A project's limit: a request rule puts user 7's jobs in project `climate`, which may run
/// one job; J2 waits for J1 (until 10), with the comment naming the project, while user 8's
/// J3, in no project, starts at once.
#[test]
fn a_project_from_a_rule_is_under_its_projects_limit() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = "1 0 -1 10 1 -1 -1 1 10 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 2 0 -1 10 1 -1 -1 1 10 -1 1 7 1 -1 -1 -1 -1 -1\n\
                 3 1 -1 10 1 -1 -1 1 10 -1 1 8 1 -1 -1 -1 -1 -1\n";
    let (starts, out) = run_with_limits(
        dir.path(),
        trace,
        "[[workload.rule]]\nrequest = \"select={n}:ncpus=1\"\nusers = [7]\nproject = \"climate\"\n\
         [pbs]\nmax_run = \"[p:PBS_GENERIC=3], [p:climate=1]\"\n",
    );
    assert_eq!(starts, [0, 10, 1]);
    let j2 = explain(&out, "2");
    assert!(
        j2.contains("0 s  comment: Not Running: Server job limit reached for project climate\n"),
        "{j2}"
    );
}

/// An SWF line: job `id` of `user`, submitted at `submit`, running `run` s on one processor.
fn one_cpu_job(id: u32, submit: u64, run: u64, user: u32) -> String {
    format!("{id} {submit} -1 {run} 1 -1 -1 1 {run} -1 1 {user} 1 -1 -1 -1 -1 -1\n")
}

/// PBS fairshare on one vnode, users 7 and 8 with half the shares each, usage
/// `ncpus*walltime`: J1 (user 7) runs from 0 to 100 and accrues its usage at each cycle in
/// between (the submits at 1, 2 and 3: 3 s; PBS drops the time from the last cycle to the
/// job's end). At 100, user 8's J3 is more deserving than user 7's J2 and J4, submitted
/// before it: J3 starts at 100, J2 at 110 and J4 at 120. Without fairshare, in submission
/// order: J2 at 100, J3 at 110.
#[test]
fn fairshare_puts_the_less_used_user_first() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("resource_group"),
        "7 1 root 50\n8 2 root 50\n",
    )
    .unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 7),
        one_cpu_job(2, 1, 10, 7),
        one_cpu_job(3, 2, 10, 8),
        one_cpu_job(4, 3, 10, 7),
    ]
    .concat();
    let fair = "[run]\ndiscipline = \"greedy\"\n[pbs]\nfair_share = true\n\
                resource_group = \"resource_group\"\nfairshare_usage_res = \"ncpus*walltime\"\n";
    let (starts, _) = run_on_vnodes(dir.path(), 1, &trace, fair);
    assert_eq!(starts, [0, 110, 100, 120]);
    let (starts, _) = run_on_vnodes(dir.path(), 1, &trace, "[run]\ndiscipline = \"greedy\"\n");
    assert_eq!(starts, [0, 100, 110, 120]);
}

/// PBS's vnode `sharing` with each job's `place`: on two vnodes of 4 ncpus, J1 says nothing,
/// J2 `place=shared`, J3 `place=excl`, each of one ncpu, submitted at 0, 1 and 2, running
/// 100 s. `default_shared`: J1 and J2 share n1, J3 takes n2 whole. `default_excl`: J1 takes n1
/// whole, J2 shares n2, and J3 waits for n1. `ignore_excl`: all three share n1.
/// `force_excl`: J1 and J2 each take a vnode whole, J3 waits.
#[test]
fn vnode_sharing_decides_with_each_job_s_place() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("req.txt"),
        "1 select=1:ncpus=1\n2 select=1:ncpus=1 place=shared\n3 select=1:ncpus=1 place=excl\n",
    )
    .unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 7),
        one_cpu_job(2, 1, 100, 7),
        one_cpu_job(3, 2, 100, 7),
    ]
    .concat();
    let run = |sharing: &str| {
        let tail =
            format!("requests_file = \"req.txt\"\n[metrics]\nexec_vnode = true\n[pbs]\n{sharing}");
        let (_, out) = run_on_class(dir.path(), "count = 2\nncpus = 4\n", &trace, &tail);
        placed(&out)
    };
    let on = |n: &str, at: u64| (Some(at), format!("({n}:ncpus=1)"));
    let strip = |p: Vec<(u64, Option<u64>, String)>| -> Vec<(Option<u64>, String)> {
        p.into_iter().map(|(_, s, e)| (s, e)).collect()
    };
    assert_eq!(strip(run("")), [on("n1", 0), on("n1", 1), on("n2", 2)]);
    assert_eq!(
        strip(run("vnode_sharing = \"default_excl\"\n")),
        [on("n1", 0), on("n2", 1), on("n1", 100)]
    );
    assert_eq!(
        strip(run("vnode_sharing = \"ignore_excl\"\n")),
        [on("n1", 0), on("n1", 1), on("n1", 2)]
    );
    assert_eq!(
        strip(run("vnode_sharing = \"force_excl\"\n")),
        [on("n1", 0), on("n2", 1), on("n1", 100)]
    );
    // A job running at the start is held as the vnodes' sharing holds a job that says
    // nothing: exclusively under default_excl, so J1 takes n2 and J2 waits for n1 at 50.
    let running = "vnode_sharing = \"default_excl\"\n\
                   [[running]]\nid = 100\nexec_vnode = \"(n1:ncpus=1)\"\nend = 50\n";
    assert_eq!(
        strip(run(running)),
        [on("n2", 0), on("n1", 50), on("n2", 100), on("n1", 0)]
    );
}

/// PBS's `resources_default`: on one vnode of 4 ncpus, the server's walltime of 50 s and
/// place `excl`. J1 asks for no walltime (SWF field 9 is -1): its estimate is 50 s, and it is
/// killed then, holding the vnode exclusively by the default place; J2 (100 s asked, no
/// place) waits for it and takes the vnode exclusively at 50; J3 says `place=shared` and
/// waits for J2's end. Without the defaults all three share the vnode at once.
#[test]
fn resources_default_gives_walltime_and_place_to_jobs_without_them() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("req.txt"),
        "3 select=1:ncpus=1 place=shared\n",
    )
    .unwrap();
    let no_walltime = one_cpu_job(1, 0, 100, 7).replacen(" 1 100 -1 1 7", " 1 -1 -1 1 7", 1);
    let trace = [
        no_walltime,
        one_cpu_job(2, 1, 100, 7),
        one_cpu_job(3, 2, 100, 7),
    ]
    .concat();
    let run = |defaults: &str| {
        let tail = format!("requests_file = \"req.txt\"\n[pbs]\n{defaults}");
        run_on_class(dir.path(), "count = 1\nncpus = 4\n", &trace, &tail).0
    };
    assert_eq!(run(""), [0, 1, 2]);
    assert_eq!(
        run("resources_default = { walltime = 50, place = \"excl\" }\n"),
        [0, 50, 150]
    );
}

/// A job that only a vnode down can hold gets no top-job slot, as PBS finds it no start
/// time; the next blocked job takes the slot and the others backfill. n3 (4 ncpus) is down
/// until 1000; n1 and n2 have 2. J1 asks for 4 ncpus on one vnode and waits for n3; J2 and J3
/// take n1 and n2; J4 is the top job and starts on n1 when J2 ends at 101; J5 (1 ncpu) takes
/// n2 when J3 ends at 102. Before, EASY found J1 no reservation and let nothing start until
/// n3 came back (J2 at 1000). Depth 2 and conservative, which passed J1 over already, agree.
#[test]
fn a_job_only_a_down_vnode_can_hold_takes_no_top_job_slot() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("req.txt"),
        "1 select=1:ncpus=4\n2 select=1:ncpus=2\n3 select=1:ncpus=2\n4 select=1:ncpus=2\n5 select=1:ncpus=1\n",
    )
    .unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 7),
        one_cpu_job(2, 1, 100, 7),
        one_cpu_job(3, 2, 100, 7),
        one_cpu_job(4, 3, 50, 7),
        one_cpu_job(5, 4, 500, 7),
    ]
    .concat();
    let trace = write_trace(dir.path(), &trace);
    let scenario = dir.path().join("down.toml");
    let placed_under = |discipline: &str| {
        std::fs::write(
            &scenario,
            format!(
                "name = \"down\"\n\
                 [[vnode]]\nname = \"n1\"\nncpus = 2\n[[vnode]]\nname = \"n2\"\nncpus = 2\n\
                 [[vnode]]\nname = \"n3\"\nncpus = 4\n\
                 [workload]\ntrace = \"{trace}\"\nrequests_file = \"req.txt\"\n\
                 [run]\n{discipline}\n\
                 [[failures.outage]]\nvnode = \"n3\"\ndown = 0\nup = 1000\n"
            ),
        )
        .unwrap();
        run_placed(&scenario, &dir.path().join("out"), &[])
    };
    let expected = [
        (1, Some(1000), "(n3:ncpus=4)".to_owned()),
        (2, Some(1), "(n1:ncpus=2)".to_owned()),
        (3, Some(2), "(n2:ncpus=2)".to_owned()),
        (4, Some(101), "(n1:ncpus=2)".to_owned()),
        (5, Some(102), "(n2:ncpus=1)".to_owned()),
    ];
    for discipline in [
        "discipline = \"easy\"",
        "discipline = \"easy\"\nbackfill_depth = 2",
        "discipline = \"conservative\"",
    ] {
        assert_eq!(placed_under(discipline), expected, "{discipline}");
    }
}

/// Decay across a period boundary (`fairshare_decay_time` 100 s, factor 0.5) turns the order
/// around. On one vnode, user 8's J1 runs from 0 to 100 and accrues 60 by the cycles at 50 and
/// 60 (usage 61); user 7's J3 runs from 100 to 140 and accrues 10 by the cycle at 110, where
/// the tree decays once (the first cycle more than 100 s after the first): user 8 to 30.5,
/// user 7 to 5.5; then 27 more by the cycles up to 137: 32.5. At 140 user 8's J8 goes first
/// (30.5 < 32.5), then user 7's J9, then user 9's jobs, whose entity has no share (under
/// `unknown`, 0 shares) and goes last, in submission order. Without decay user 8 has 61 and
/// user 7 38: J9 first.
#[test]
fn fairshare_decay_across_a_period_changes_the_order() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("resource_group"),
        "7 1 root 50\n8 2 root 50\n",
    )
    .unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 8),
        one_cpu_job(2, 50, 1, 9),
        one_cpu_job(3, 60, 40, 7),
        one_cpu_job(4, 110, 1, 9),
        one_cpu_job(5, 120, 1, 9),
        one_cpu_job(6, 130, 1, 9),
        one_cpu_job(7, 135, 1, 9),
        one_cpu_job(8, 136, 10, 8),
        one_cpu_job(9, 137, 10, 7),
    ]
    .concat();
    let fair = |decay: &str| {
        format!(
            "[run]\ndiscipline = \"greedy\"\n[pbs]\nfair_share = true\n\
             resource_group = \"resource_group\"\nfairshare_usage_res = \"ncpus*walltime\"\n\
             fairshare_decay_time = {decay}\n"
        )
    };
    let (starts, _) = run_on_vnodes(dir.path(), 1, &trace, &fair("100"));
    assert_eq!(starts, [0, 160, 100, 161, 162, 163, 164, 140, 150]);
    let (starts, _) = run_on_vnodes(dir.path(), 1, &trace, &fair("100000"));
    assert_eq!(starts, [0, 160, 100, 161, 162, 163, 164, 150, 140]);
}

/// A fairshare tree that does not read is refused at its file's line.
#[test]
fn a_bad_resource_group_is_refused_at_its_line() {
    let dir = placesim_testkit::tempdir().unwrap();
    let tree = dir.path().join("resource_group");
    std::fs::write(&tree, "g1 10 root 40\nu1 11 g9 50\n").unwrap();
    let trace = write_trace(dir.path(), &one_cpu_job(1, 0, 10, 7));
    let scenario = dir.path().join("fs.toml");
    std::fs::write(
        &scenario,
        format!(
            "[[class]]\nname = \"n\"\ncount = 1\nncpus = 1\n[workload]\ntrace = \"{trace}\"\n\
             [pbs]\nfair_share = true\nresource_group = \"resource_group\"\n"
        ),
    )
    .unwrap();
    let o = placesim(&["check", scenario.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "placesim: error: {}:2:1: key `pbs.resource_group`: the parent `g9` of `u1` is not \
             defined above it\n",
            tree.display()
        )
    );
}

/// Within one cycle, a start counts at once: at 100, when user 9's two-vnode J1 ends, users 7
/// and 8 tie (no usage yet), so user 7's J2, submitted first, starts; its requested usage (1
/// ncpu for 50 s) then goes to user 7's temporary usage, the jobs not yet looked at are
/// sorted again, and user 8's J4 takes the other vnode before user 7's J3, which waits until
/// 150. Sorted once per cycle, J2 and J3 would both start at 100.
#[test]
fn fairshare_counts_a_start_within_the_cycle() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("resource_group"),
        "7 1 root 50\n8 2 root 50\n",
    )
    .unwrap();
    let trace = [
        "1 0 -1 100 2 -1 -1 2 100 -1 1 9 1 -1 -1 -1 -1 -1\n".to_owned(),
        one_cpu_job(2, 1, 50, 7),
        one_cpu_job(3, 2, 50, 7),
        one_cpu_job(4, 3, 50, 8),
    ]
    .concat();
    let fair = "[run]\ndiscipline = \"greedy\"\n[pbs]\nfair_share = true\n\
                resource_group = \"resource_group\"\nfairshare_usage_res = \"ncpus*walltime\"\n";
    let (starts, _) = run_on_vnodes(dir.path(), 2, &trace, fair);
    assert_eq!(starts, [0, 100, 150, 100]);
    // Under EASY the same: the blocked J3 is the top job, calendared at 150.
    let easy = fair.replace("greedy", "easy");
    let (starts, out) = run_on_vnodes(dir.path(), 2, &trace, &easy);
    assert_eq!(starts, [0, 100, 150, 100]);
    assert!(explain(&out, "3").contains("100 s  top-job estimate: start 150 s\n"));
}

/// A pass run again on a new order (fairshare's re-sorting after a start) says again what the
/// dropped run said. Under strict order on two vnodes with fairshare, at 100 (user 9's J1
/// ends) user 7's J2 starts, and the first run finds user 7's J3 (two ncpus) blocked, with
/// user 8's J4 and user 7's J6 (submitted at 100) behind it; J2's usage puts J4 first, so the
/// pass is run again: J4 starts too, J3 is blocked, and J6 is told the strict order, at 100.
#[test]
fn a_pass_run_again_says_again_what_the_dropped_run_said() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("resource_group"),
        "7 1 root 50\n8 2 root 50\n",
    )
    .unwrap();
    let trace = [
        "1 0 -1 100 2 -1 -1 2 100 -1 1 9 1 -1 -1 -1 -1 -1\n".to_owned(),
        one_cpu_job(2, 1, 50, 7),
        "3 2 -1 50 2 -1 -1 2 50 -1 1 7 1 -1 -1 -1 -1 -1\n".to_owned(),
        one_cpu_job(4, 3, 50, 8),
        one_cpu_job(6, 100, 50, 7),
    ]
    .concat();
    let fair = "[run]\ndiscipline = \"fcfs\"\n[pbs]\nfair_share = true\n\
                resource_group = \"resource_group\"\nfairshare_usage_res = \"ncpus*walltime\"\n";
    let (starts, out) = run_on_vnodes(dir.path(), 2, &trace, fair);
    assert_eq!(starts, [0, 100, 150, 100, 200]);
    assert_explains(
        &out,
        "6",
        "100 s  comment: Not Running: Job would break strict sorted order\n",
    );
}

/// Moab's NODEACCESSPOLICY SINGLEJOB: a vnode runs one job at a time. On two vnodes of 2
/// ncpus, J1 (1 ncpu, until 10) takes n1; under SHARED (the default) J2 joins it there at 1
/// and J3 at 2 goes to n2, while under SINGLEJOB J2 takes n2 and J3 waits for J1's end, 10,
/// on n1.
#[test]
fn single_job_node_access_keeps_each_vnode_to_one_job() {
    let dir = placesim_testkit::tempdir().unwrap();
    let run = |tail: &str| three_jobs_on_two_vnodes(dir.path(), tail);
    let on = |start: u64, vnode: &str| (start, format!("({vnode}:ncpus=1)"));
    assert_eq!(run(""), [on(0, "n1"), on(1, "n1"), on(2, "n2")]);
    assert_eq!(
        run("[moab]\nnode_access_policy = \"SINGLEJOB\"\n"),
        [on(0, "n1"), on(1, "n2"), on(10, "n1")]
    );
}

/// PBS's `node_sort_key` on what is free now, sorted again at each placement: on two vnodes
/// of 2 ncpus with three one-ncpu jobs at 0, 1 and 2, `ncpus HIGH unused` spreads them (J1 on
/// n1, ties going to cluster order; J2 on n2, which has more free; J3 on n1 again, a tie),
/// and `ncpus LOW unused` packs them (n1, n1, then n2 once n1 is full). A fixed order of
/// totals keeps them in cluster order.
#[test]
fn node_sort_key_on_unused_ncpus_sorts_at_each_placement() {
    let dir = placesim_testkit::tempdir().unwrap();
    let run = |key: &str| {
        three_jobs_on_two_vnodes(dir.path(), &format!("[pbs]\nnode_sort_key = [\"{key}\"]\n"))
    };
    let on = |start: u64, vnode: &str| (start, format!("({vnode}:ncpus=1)"));
    assert_eq!(
        run("ncpus HIGH unused"),
        [on(0, "n1"), on(1, "n2"), on(2, "n1")]
    );
    assert_eq!(
        run("ncpus LOW unused"),
        [on(0, "n1"), on(1, "n1"), on(2, "n2")]
    );
    assert_eq!(
        run("ncpus HIGH assigned"),
        [on(0, "n1"), on(1, "n1"), on(2, "n2")]
    );
    assert_eq!(run("ncpus HIGH"), [on(0, "n1"), on(1, "n1"), on(2, "n2")]);
}

/// Three one-ncpu jobs of 10 s submitted at 0, 1 and 2 on two vnodes (n1, n2) of 2 ncpus,
/// with `tail` in the scenario: each job's start and vnodes, in job order.
fn three_jobs_on_two_vnodes(dir: &Path, tail: &str) -> Vec<(u64, String)> {
    let trace = write_trace(
        dir,
        &[
            one_cpu_job(1, 0, 10, 7),
            one_cpu_job(2, 1, 10, 7),
            one_cpu_job(3, 2, 10, 7),
        ]
        .concat(),
    );
    let scenario = dir.join("access.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"access\"\n[[class]]\nname = \"n\"\ncount = 2\nncpus = 2\n\
             [workload]\ntrace = \"{trace}\"\n[metrics]\nexec_vnode = true\n{tail}"
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut placements = placesim_analysis::read_placements(&out.join("jobs.parquet")).unwrap();
    placements.sort_by_key(|p| p.job_id);
    placements
        .into_iter()
        .map(|p| (p.start_s.unwrap(), p.exec_vnode.unwrap()))
        .collect()
}

/// `job_sort_formula` over the fairshare tree, without `fair_share` (PBS keeps the tree for a
/// formula too). On one vnode, user 9's J1 runs from 0 to 100; user 8's J2 (submitted at
/// 10) and user 7's J3 (at 20) wait. By `fairshare_perc`, user 7 (70 shares) goes before
/// user 8 (30): J3 at 100, J2 at 110; with the shares the other way, J2 first. By
/// `fairshare_factor` (2^(−usage factor ÷ share)) with 50 shares each, the usage decides:
/// user 8's J4 (0 to 50, on a second vnode) accrues usage at the cycles at 10 and 20, so at
/// 50 user 7's J3 goes first.
#[test]
fn a_formula_reads_the_fairshare_tree() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 9),
        one_cpu_job(2, 10, 10, 8),
        one_cpu_job(3, 20, 10, 7),
    ]
    .concat();
    let formula = |tree: &str, formula: &str| {
        std::fs::write(dir.path().join("resource_group"), tree).unwrap();
        format!(
            "[run]\ndiscipline = \"greedy\"\n[pbs]\nresource_group = \"resource_group\"\n\
             fairshare_usage_res = \"ncpus*walltime\"\njob_sort_formula = \"{formula}\"\n"
        )
    };
    let (starts, _) = run_on_vnodes(
        dir.path(),
        1,
        &trace,
        &formula("7 1 root 70\n8 2 root 30\n9 3 root 1\n", "fairshare_perc"),
    );
    assert_eq!(starts, [0, 110, 100]);
    let (starts, _) = run_on_vnodes(
        dir.path(),
        1,
        &trace,
        &formula("7 1 root 30\n8 2 root 70\n9 3 root 1\n", "fairshare_perc"),
    );
    assert_eq!(starts, [0, 100, 110]);
    let trace_used = [
        one_cpu_job(1, 0, 100, 9),
        one_cpu_job(4, 0, 50, 8),
        one_cpu_job(2, 10, 10, 8),
        one_cpu_job(3, 20, 10, 7),
    ]
    .concat();
    let tree = "7 1 root 50\n8 2 root 50\n9 3 root 1\n";
    let (starts, _) = run_on_vnodes(
        dir.path(),
        2,
        &trace_used,
        &formula(tree, "fairshare_factor"),
    );
    // Jobs in id order: J1 and J4 at 0; J2 (user 8) and J3 (user 7) wait for J4's vnode,
    // free at 50: J3 first.
    assert_eq!(starts, [0, 60, 50, 0]);
    // A formula that ties them (equal walltimes) keeps submission order.
    let ties = "[run]\ndiscipline = \"greedy\"\n[pbs]\njob_sort_formula = \"walltime\"\n";
    let (starts, _) = run_on_vnodes(dir.path(), 2, &trace_used, ties);
    assert_eq!(starts, [0, 50, 60, 0]);
}

/// Moab fairshare in the priority (`FSUSERWEIGHT 100`, DEDICATEDPS, users 7 and 8 with
/// targets of 50 %): on one vnode user 8's J1 runs from 0 to 100, and its dedicated
/// processor-seconds accrue at each iteration (10, 20, 100): user 8 has used all 100 the
/// machine delivered. At 100, user 8's J2 (queued 90 s) has 1.5 + 100 × (50 − 100), clipped
/// to Moab's floor of 1, and user 7's J3 (queued 80 s) 80/60 + 100 × 50 = 5001.33 (5000 at its
/// submission, when user 7 had used none of the 20 delivered): J3 starts at 100, J2 at 110
/// (still 1: user 8 has 100 of 110). Without the fairshare weight, queue time alone: J2
/// first. With user 8's target a floor (`50+`), its factor never goes below 0: J2's priority
/// is its queue time.
#[test]
fn moab_fairshare_raises_the_user_below_its_target() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 8),
        one_cpu_job(2, 10, 10, 8),
        one_cpu_job(3, 20, 10, 7),
    ]
    .concat();
    let fair = "[moab.priority]\nfsuserweight = 100\n\
                [moab.fairshare]\npolicy = \"DEDICATEDPS\"\nuser = { \"7\" = \"50\", \"8\" = \"50\" }\n";
    let (starts, out) = run_on_vnodes(dir.path(), 1, &trace, fair);
    assert_eq!(starts, [0, 110, 100]);
    let j3 = explain(&out, "3");
    assert!(
        j3.contains("  priority:   5000.00 at submit, 5001.33 at start\n"),
        "{j3}"
    );
    let j2 = explain(&out, "2");
    assert!(
        j2.contains("  priority:   1.00 at submit, 1.00 at start\n"),
        "{j2}"
    );
    let (starts, _) = run_on_vnodes(dir.path(), 1, &trace, "[moab.priority]\n");
    assert_eq!(starts, [0, 100, 110]);
    let floor = fair.replace("\"8\" = \"50\"", "\"8\" = \"50+\"");
    let (_, out) = run_on_vnodes(dir.path(), 1, &trace, &floor);
    assert!(
        explain(&out, "2").contains("  priority:   1.00 at submit, 1.67 at start\n"),
        "{}",
        explain(&out, "2")
    );
}

/// A limit on a size is in the size's unit: user 7 may hold 2gb of `mem`; its jobs ask 1gb
/// each (a rule), so its third waits for the first's end, at 10.
#[test]
fn a_memory_limit_counts_in_its_unit() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        one_cpu_job(1, 0, 10, 7),
        one_cpu_job(2, 0, 20, 7),
        one_cpu_job(3, 1, 5, 7),
    ]
    .concat();
    let (starts, out) = run_on_class(
        dir.path(),
        "count = 8\nncpus = 1\nmem = \"4gb\"\n",
        &trace,
        "[[workload.rule]]\nrequest = \"select={n}:ncpus=1:mem=1gb\"\n\
         [pbs.max_run_res]\nmem = \"[u:PBS_GENERIC=2gb]\"\n",
    );
    assert_eq!(starts, [0, 0, 10]);
    assert_explains(
        &out,
        "3",
        "comment: Not Running: Server per-user limit reached on resource mem\n",
    );
}

/// `eligible_time` stops while a job is over a user limit (PBS's `accrue_type`), not while it
/// waits for resources. On three vnodes, user 7 may run one job: its J1 runs from 0 to 100,
/// so its J2 (1 ncpu, submitted at 10) is over the limit with room for it on the cluster, and
/// accrues nothing; user 8's J3 (3 ncpus, at 20) waits for vnodes and accrues from 20. At
/// 100, J3 (80 s eligible) goes before J2 (0 s): J3 at 100, J2 at 110. Counted from
/// submission instead, J2 (90 s) would go first and J3 wait for it.
#[test]
fn eligible_time_stops_over_a_user_limit() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 7),
        one_cpu_job(2, 10, 10, 7),
        "3 20 -1 10 3 -1 -1 3 10 -1 1 8 1 -1 -1 -1 -1 -1\n".to_owned(),
    ]
    .concat();
    let tail = |limit: &str| {
        format!(
            "[run]\ndiscipline = \"greedy\"\n[pbs]\njob_sort_formula = \"eligible_time\"\n{limit}"
        )
    };
    let (starts, _) = run_on_vnodes(
        dir.path(),
        3,
        &trace,
        &tail("max_run = \"[u:PBS_GENERIC=1]\"\n"),
    );
    assert_eq!(starts, [0, 110, 100]);
    // An overall limit of 2 holds J2 back nowhere: it runs from 10 to 20, and J3 waits for
    // J1's vnode, to 100.
    let (starts, _) = run_on_vnodes(
        dir.path(),
        3,
        &trace,
        &tail("max_run = \"[o:PBS_ALL=2]\"\n"),
    );
    assert_eq!(starts, [0, 10, 100]);
}

/// PBS's `max_queued`: the server refuses a job at submission when its user's jobs queued or
/// running would go over the limit. On one vnode, user 7 may have two jobs in the system: J1
/// runs (0 to 10) and J2 waits, so J3 (at 1) is refused with the server's reply, and counted;
/// J4 (at 12, after J1 ended) is accepted and runs after J2. User 8's J5 is under no one's
/// limit.
#[test]
fn max_queued_refuses_a_job_at_submission() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        one_cpu_job(1, 0, 10, 7),
        one_cpu_job(2, 0, 10, 7),
        one_cpu_job(3, 1, 10, 7),
        one_cpu_job(4, 12, 10, 7),
        one_cpu_job(5, 13, 10, 8),
    ]
    .concat();
    let trace_path = write_trace(dir.path(), &trace);
    let scenario = dir.path().join("q.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"queued\"\n[[class]]\nname = \"n\"\ncount = 1\nncpus = 1\n\
             [workload]\ntrace = \"{trace_path}\"\n[pbs]\nmax_queued = \"[u:PBS_GENERIC=2]\"\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(
            "placesim: 1 jobs refused at submission by max_queued limits (their comment says which)\n"
        ),
        "{}",
        text(&o.stderr)
    );
    let mut placements = placesim_analysis::read_placements(&out.join("jobs.parquet")).unwrap();
    placements.sort_by_key(|p| p.job_id);
    let starts: Vec<Option<u64>> = placements.iter().map(|p| p.start_s).collect();
    assert_eq!(starts, [Some(0), Some(10), None, Some(20), Some(30)]);
    let j3 = explain(&out, "3");
    assert!(
        j3.contains("1 s  comment: qsub: would exceed complex's per-user limit\n"),
        "{j3}"
    );
}

/// Moab's credential priorities (`USERCFG[7] PRIORITY=1000`, USERWEIGHT 1): on one vnode
/// user 8's J1 runs from 0 to 100; user 8's J2 (submitted at 10) and user 7's J3 (at 20)
/// wait. At 100, J3 has 80/60 + 1000 and J2 90/60: J3 starts first, at 100, and J2 at 110.
/// With a `DEFAULT` of 2000 for every other user, J2 goes first again.
#[test]
fn moab_credential_priorities_raise_a_users_jobs() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        one_cpu_job(1, 0, 100, 8),
        one_cpu_job(2, 10, 10, 8),
        one_cpu_job(3, 20, 10, 7),
    ]
    .concat();
    let priority = "[moab.priority]\nuserweight = 1\nuser_priority = { \"7\" = 1000 }\n";
    let (starts, out) = run_on_vnodes(dir.path(), 1, &trace, priority);
    assert_eq!(starts, [0, 110, 100]);
    let j3 = explain(&out, "3");
    assert!(
        j3.contains("  priority:   1000.00 at submit, 1001.33 at start\n"),
        "{j3}"
    );
    let others = "[moab.priority]\nuserweight = 1\n\
                  user_priority = { \"7\" = 1000, DEFAULT = 2000 }\n";
    let (starts, _) = run_on_vnodes(dir.path(), 1, &trace, others);
    assert_eq!(starts, [0, 100, 110]);
}

/// A job with `ncpus` processors, submitted at `submit`, running and estimated for `run`
/// seconds, of `user`.
fn job_of(id: u32, submit: u64, run: u64, ncpus: u32, user: u32) -> String {
    format!("{id} {submit} -1 {run} {ncpus} -1 -1 {ncpus} {run} -1 1 {user} 1 -1 -1 -1 -1 -1\n")
}

/// Moab's soft and hard MAXJOB on two vnodes. User 7's J1 runs from 0 to 100; at 1, user 7's
/// J2 and user 8's J3 both want the last vnode, J2 first in order. Under `MAXJOB=1,2` J2 is
/// over its soft limit, so it is scheduled only after every job within its soft limits: J3
/// starts at 1, and J2 at 51, when J3 ends, within its hard limit. Under `MAXJOB=2` (soft =
/// hard) J2 keeps its turn; under `MAXJOB=1` it waits for J1's end.
#[test]
fn moab_soft_limits_yield_to_jobs_within_theirs() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        job_of(1, 0, 100, 1, 7),
        job_of(2, 1, 50, 1, 7),
        job_of(3, 1, 50, 1, 8),
    ]
    .concat();
    let limits = |value: &str| format!("[moab.limits]\nuser = {{ DEFAULT = \"{value}\" }}\n");
    let (starts, out) = run_on_vnodes(dir.path(), 2, &trace, &limits("MAXJOB=1,2"));
    assert_eq!(starts, [0, 51, 1]);
    assert_explains(
        &out,
        "2",
        "1 s  comment: job 2 violates active SOFT MAXJOB limit of 1 for user 7  (R: 1, U: 1)\n",
    );
    let (starts, _) = run_on_vnodes(dir.path(), 2, &trace, &limits("MAXJOB=2"));
    assert_eq!(starts, [0, 1, 51]);
    let (starts, out) = run_on_vnodes(dir.path(), 2, &trace, &limits("MAXJOB=1"));
    assert_eq!(starts, [0, 100, 1]);
    assert_explains(
        &out,
        "2",
        "1 s  comment: job 2 violates active HARD MAXJOB limit of 1 for user 7  (R: 1, U: 1)\n",
    );
    // A user's own limit wins over DEFAULT's: user 7 may run 2.
    let own = "[moab.limits]\nuser = { DEFAULT = \"MAXJOB=1\", \"7\" = \"MAXJOB=2\" }\n";
    let (starts, _) = run_on_vnodes(dir.path(), 2, &trace, own);
    assert_eq!(starts, [0, 1, 51]);
}

/// Jobs started in the same iteration count against the limits of the jobs after them: on
/// eight vnodes, user 7's J1, J2 and J3 and user 8's J4 arrive at 0. Under `MAXJOB=1,2`, J1
/// starts within the soft limit, J4 too, then J2 within the hard one; J3 would be user 7's
/// third and waits for J1's end at 10.
#[test]
fn moab_limits_count_the_starts_of_the_same_iteration() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        job_of(1, 0, 10, 1, 7),
        job_of(2, 0, 20, 1, 7),
        job_of(3, 0, 20, 1, 7),
        job_of(4, 0, 20, 1, 8),
    ]
    .concat();
    let tail = "[moab.limits]\nuser = { DEFAULT = \"MAXJOB=1,2\" }\n";
    let (starts, out) = run_on_vnodes(dir.path(), 8, &trace, tail);
    assert_eq!(starts, [0, 0, 10, 0]);
    assert_explains(
        &out,
        "3",
        "0 s  comment: job 3 violates active HARD MAXJOB limit of 2 for user 7  (R: 1, U: 2)\n",
    );
}

/// MAXPROC counts ncpus and MAXPS outstanding processor-seconds, which shrink as jobs run.
/// User 7 may hold 1000 processor-seconds: J1 (2 ncpus for 400 s) holds 800 at 0, so J2 (1
/// ncpu for 300 s) waits; at 40 (user 8's J3 arrives) J1 holds 720, still too much; at 50
/// (J4) it holds 700, and J2 starts. Under `MAXPROC=2`, J2 waits for J1's end instead.
#[test]
fn moab_maxps_shrinks_as_jobs_run_and_maxproc_counts_ncpus() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        job_of(1, 0, 400, 2, 7),
        job_of(2, 0, 300, 1, 7),
        job_of(3, 40, 10, 1, 8),
        job_of(4, 50, 10, 1, 8),
    ]
    .concat();
    let (starts, out) = run_on_vnodes(
        dir.path(),
        8,
        &trace,
        "[moab.limits]\nuser = { \"7\" = \"MAXPS=1000\" }\n",
    );
    assert_eq!(starts, [0, 50, 40, 50]);
    assert_explains(
        &out,
        "2",
        "40 s  comment: job 2 violates active HARD MAXPS limit of 1000 for user 7  (R: 300, U: 720)\n",
    );
    let (starts, _) = run_on_vnodes(
        dir.path(),
        8,
        &trace,
        "[moab.limits]\nuser = { \"7\" = \"MAXPROC=2\" }\n",
    );
    assert_eq!(starts, [0, 400, 40, 50]);
}

/// The discipline leaves out a comment that repeats its own last one on a job, but not once a
/// limit has been said about the job since. Under strict order on two vnodes, user 7's J1
/// runs from 0 to 1000; user 8's J2 (two ncpus) heads the queue from 1 until then; user 7's
/// J3, behind it from 2, is over its soft MAXPS limit, whose outstanding amount shrinks at
/// every pass (J4 and J5 arrive at 3 and 4): each pass says the limit anew, and the strict
/// order after it, the job's last word in each pass.
#[test]
fn a_strict_order_comment_is_said_again_after_a_limits() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        job_of(1, 0, 1000, 1, 7),
        job_of(2, 1, 10, 2, 8),
        job_of(3, 2, 10, 1, 7),
        job_of(4, 3, 10, 2, 9),
        job_of(5, 4, 10, 2, 9),
    ]
    .concat();
    let tail = "[run]\ndiscipline = \"fcfs\"\n\
                [moab.limits]\nuser = { DEFAULT = \"MAXPS=100,100000\" }\n";
    let (starts, out) = run_on_vnodes(dir.path(), 2, &trace, tail);
    assert_eq!(starts, [0, 1000, 1010, 1020, 1030]);
    let strict = "comment: Not Running: Job would break strict sorted order";
    let soft = |at: u64, used: u64| {
        format!(
            "{at} s  comment: job 3 violates active SOFT MAXPS limit of 100 for user 7  \
             (R: 10, U: {used})"
        )
    };
    let said = explain(&out, "3");
    let lines: Vec<&str> = said.lines().map(str::trim).collect();
    for (at, used) in [(2, 998), (3, 997), (4, 996)] {
        let limit = lines.iter().position(|l| *l == soft(at, used));
        let limit = limit.unwrap_or_else(|| panic!("no limit comment at {at} s in\n{said}"));
        assert_eq!(
            lines.get(limit + 1),
            Some(&format!("{at} s  {strict}").as_str()),
            "{said}"
        );
    }
}

/// A throttling limit placesim does not check, or a bad value, is refused at its entry.
#[test]
fn a_bad_moab_limit_is_refused_at_its_entry() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), &job_of(1, 0, 10, 1, 7));
    for (limit, message) in [
        (
            "MAXNODE=4",
            "`MAXNODE=4`: MAXNODE is not a limit placesim checks: expected MAXJOB, MAXPROC or MAXPS",
        ),
        (
            "MAXJOB=two",
            "`MAXJOB=two`: expected [<soft>,]<hard>, whole numbers, as MAXJOB=2,4",
        ),
    ] {
        let scenario = dir.path().join("bad.toml");
        std::fs::write(
            &scenario,
            format!(
                "name = \"bad\"\n[[class]]\nname = \"n\"\ncount = 2\nncpus = 1\n\
                 [workload]\ntrace = \"{trace}\"\n[moab.limits]\nuser = {{ DEFAULT = \"{limit}\" }}\n"
            ),
        )
        .unwrap();
        let o = placesim(&["check", scenario.to_str().unwrap()]);
        assert!(!o.status.success());
        let expected = format!(
            "{}:9:20: key `moab.limits.user`: {message}",
            scenario.display()
        );
        assert!(text(&o.stderr).contains(&expected), "{}", text(&o.stderr));
    }
}

/// `job_sort_key = ["fair_share_perc HIGH"]` orders by the tree's shares, which change as
/// entities join the `unknown` group. Users 7 and 8 have 5 and 85 shares, `unknown` 10 (of
/// 100). On one vnode user 8's J1 runs from 0 to 100; user 7's J2 (5 %) and unknown user 9's
/// J3 (alone in `unknown`: 10 %) wait: J3 goes first at 100. When users 10 and 11 also join
/// `unknown` (J4, J5), each of them has 3.3 %: J2 goes first. LOW reverses the first order.
/// Entities count from the first pass that sees their jobs, as PBS adds them.
#[test]
fn fair_share_perc_sort_key_follows_the_shares_as_entities_join() {
    let dir = placesim_testkit::tempdir().unwrap();
    std::fs::write(
        dir.path().join("resource_group"),
        "7 1 root 5\n8 2 root 85\n",
    )
    .unwrap();
    let jobs = [
        one_cpu_job(1, 0, 100, 8),
        one_cpu_job(2, 1, 10, 7),
        one_cpu_job(3, 2, 10, 9),
        one_cpu_job(4, 3, 10, 10),
        one_cpu_job(5, 4, 10, 11),
    ];
    let key = |direction: &str| {
        format!(
            "[pbs]\njob_sort_key = [\"fair_share_perc {direction}\"]\n\
             resource_group = \"resource_group\"\nunknown_shares = 10\n"
        )
    };
    let (starts, _) = run_on_vnodes(dir.path(), 1, &jobs[..3].concat(), &key("HIGH"));
    assert_eq!(starts, [0, 110, 100]);
    let (starts, _) = run_on_vnodes(dir.path(), 1, &jobs[..3].concat(), &key("LOW"));
    assert_eq!(starts, [0, 100, 110]);
    let (starts, _) = run_on_vnodes(dir.path(), 1, &jobs.concat(), &key("HIGH"));
    assert_eq!(starts, [0, 100, 110, 120, 130]);
    // Users 10 and 11 arriving only after 100 do not count at 100: J3 still goes first, and
    // at 110 J2 goes before them.
    let late = [
        jobs[..3].concat(),
        one_cpu_job(4, 105, 10, 10),
        one_cpu_job(5, 106, 10, 11),
    ]
    .concat();
    let (starts, _) = run_on_vnodes(dir.path(), 1, &late, &key("HIGH"));
    assert_eq!(starts, [0, 110, 100, 120, 130]);
    // Not with fair_share, at the key's line and column.
    let trace = write_trace(dir.path(), &jobs[0]);
    let scenario = dir.path().join("both.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"both\"\n[[class]]\nname = \"n\"\ncount = 1\nncpus = 1\n\
             [workload]\ntrace = \"{trace}\"\n[pbs]\nfair_share = true\n\
             resource_group = \"resource_group\"\njob_sort_key = [\"fair_share_perc HIGH\"]\n"
        ),
    )
    .unwrap();
    let o = placesim(&["check", scenario.to_str().unwrap()]);
    assert!(!o.status.success());
    let expected = format!(
        "{}:11:17: key `pbs.job_sort_key`: `fair_share_perc HIGH`: not with fair_share = true, \
         which already orders by the tree (PBS advises against both)",
        scenario.display()
    );
    assert!(text(&o.stderr).contains(&expected), "{}", text(&o.stderr));
}

/// A rule names the Moab class of user 7's jobs (`queue = "amd"`, no SWF queue needed), and
/// the class's MAXJOB holds its second job until the first ends at 10; user 8's job, in no
/// class, starts at once.
#[test]
fn a_class_named_by_a_rule_is_under_the_class_limit() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        job_of(1, 0, 10, 1, 7),
        job_of(2, 0, 10, 1, 7),
        job_of(3, 0, 10, 1, 8),
    ]
    .concat();
    let tail = "[[workload.rule]]\nrequest = \"select={n}:ncpus=1\"\nusers = [7]\nqueue = \"amd\"\n\
                [[moab.class]]\nname = \"amd\"\n\
                [moab.limits]\nclass = { amd = \"MAXJOB=1\" }\n";
    let (starts, out) = run_on_vnodes(dir.path(), 8, &trace, tail);
    assert_eq!(starts, [0, 10, 0]);
    assert_explains(
        &out,
        "2",
        "0 s  comment: job 2 violates active HARD MAXJOB limit of 1 for class amd  (R: 1, U: 1)\n",
    );
}

/// A machine already running at t = 0: job 9001 holds n1's 2 ncpus until 100. J1 (4 ncpus)
/// needs both vnodes and is the top job, estimated to start at 100; J2 (2 ncpus, 50 s) backfills
/// on n2 at 1; J3 (2 ncpus, 200 s) would delay J1 and waits for it. Job 9001 is in
/// jobs.parquet, started at 0 on n1 and ended at 100.
#[test]
fn jobs_running_at_the_start_hold_their_vnodes() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [
        job_of(1, 0, 10, 4, 7),
        job_of(2, 1, 50, 2, 7),
        job_of(3, 2, 200, 2, 7),
    ]
    .concat();
    let running = "[metrics]\nexec_vnode = true\n\
                   [[running]]\nid = 9001\nexec_vnode = \"(n1:ncpus=2)\"\nend = 100\nuser = 8\n";
    let (starts, out) = run_on_class(dir.path(), "count = 2\nncpus = 2\n", &trace, running);
    assert_eq!(starts, [100, 1, 110, 0]);
    let placements = placesim_analysis::read_placements(&out.join("jobs.parquet")).unwrap();
    let exec = |id: u64| {
        placements
            .iter()
            .find(|p| p.job_id == id)
            .and_then(|p| p.exec_vnode.clone())
            .unwrap()
    };
    assert_eq!(exec(9001), "(n1:ncpus=2)");
    let at_start: Vec<u64> = placements
        .iter()
        .filter(|p| p.running_at_start)
        .map(|p| p.job_id)
        .collect();
    assert_eq!(at_start, [9001]);
    assert_eq!(exec(2), "(n2:ncpus=2)");
    assert_eq!(exec(1), "(n1:ncpus=2)+(n2:ncpus=2)");
    assert!(
        explain(&out, "1").contains("top-job estimate: start 100 s"),
        "{}",
        explain(&out, "1")
    );
    // Without it, J1 starts at once.
    let (starts, _) = run_on_class(dir.path(), "count = 2\nncpus = 2\n", &trace, "");
    assert_eq!(starts, [0, 10, 10]);
}

/// Jobs running at the start that do not fit, or name what does not exist, are refused at
/// their entry.
#[test]
fn bad_jobs_running_at_the_start_are_refused_at_their_entry() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), &job_of(1, 0, 10, 1, 7));
    for (entry, message) in [
        (
            "id = 9\nexec_vnode = \"(n3:ncpus=1)\"\nend = 10",
            "12:14: key `running.exec_vnode`: `(n3:ncpus=1)`: unknown vnode `n3`",
        ),
        (
            "id = 9\nexec_vnode = \"(n1:ncpus=2)+(n1:ncpus=1)\"\nend = 10",
            "12:14: key `running.exec_vnode`: `(n1:ncpus=2)+(n1:ncpus=1)`: vnode `n1` has 2 ncpus; the jobs running at the start would hold 3",
        ),
        (
            "id = 9\nexec_vnode = \"(n1:ncpus=x)\"\nend = 10",
            "12:14: key `running.exec_vnode`: `(n1:ncpus=x)`: column 11: resource `ncpus` needs an integer, found `x`",
        ),
        (
            "id = 9\nexec_vnode = \"(n1:ncpus=1)\"\nend = 10\nestimated_end = 5",
            "14:17: key `running.estimated_end`: 5 s is before the job's end (10 s): PBS would have killed it at its walltime",
        ),
        (
            "id = 1\nexec_vnode = \"(n1:ncpus=1)\"\nend = 10",
            "11:1: key `running.id`: job 1 is also a trace job's number",
        ),
    ] {
        let scenario = dir.path().join("bad.toml");
        std::fs::write(
            &scenario,
            format!(
                "name = \"bad\"\n[[class]]\nname = \"n\"\ncount = 2\nncpus = 2\n\
                 [workload]\ntrace = \"{trace}\"\n\n\n[[running]]\n{entry}\n"
            ),
        )
        .unwrap();
        let o = run_scenario(
            scenario.to_str().unwrap(),
            dir.path().join("o").to_str().unwrap(),
            &[],
        );
        assert!(!o.status.success());
        let expected = format!("{}:{message}", scenario.display());
        assert!(text(&o.stderr).contains(&expected), "{}", text(&o.stderr));
    }
}

/// `node_sort_key = ["ncpus HIGH unused"]` inside PBS placement sets: two switches, n1–n2 and
/// m1–m3, 4 ncpus each. J1 (1 ncpu) goes to the smaller set, on n1 (a tie, set order). J2 goes
/// to that set too, and within it to the vnode with the most unused ncpus, n2; with the
/// default order (sort_priority) it would take n1 again.
#[test]
fn node_sort_key_on_unused_ncpus_sorts_inside_placement_sets() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = [job_of(1, 0, 100, 1, 7), job_of(2, 1, 100, 1, 7)].concat();
    let class = "count = 2\nncpus = 4\nresources = { switch = \"s1\" }\n";
    let tail = |sort: &str| {
        format!(
            "[[class]]\nname = \"m\"\ncount = 3\nncpus = 4\nresources = {{ switch = \"s2\" }}\n\
             [[resource]]\nname = \"switch\"\ntype = \"string\"\n[run]\nplacement = \"pbs\"\n\
             [pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n{sort}\
             [metrics]\nexec_vnode = true\n"
        )
    };
    let execs = |sort: &str| -> Vec<String> {
        let (_, out) = run_on_class(dir.path(), class, &trace, &tail(sort));
        let mut placements = placesim_analysis::read_placements(&out.join("jobs.parquet")).unwrap();
        placements.sort_by_key(|p| p.job_id);
        placements
            .into_iter()
            .map(|p| p.exec_vnode.unwrap())
            .collect()
    };
    assert_eq!(
        execs("node_sort_key = [\"ncpus HIGH unused\"]\n"),
        ["(n1:ncpus=1)", "(n2:ncpus=1)"]
    );
    assert_eq!(execs(""), ["(n1:ncpus=1)", "(n1:ncpus=1)"]);
}

/// `placesim import pbs` on the import crate's fixture snapshot, then `placesim run` on what
/// it wrote: the site's jobs replayed under its own settings (placement sets on `switch`,
/// strict ordering, n2 first by its priority, n4 offline), each on the vnodes asserted.
#[test]
fn an_imported_pbs_site_runs_as_written() {
    let dir = placesim_testkit::tempdir().unwrap();
    let snap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../placesim-import/tests/data/snap");
    let out = dir.path().join("site");
    let o = placesim(&[
        "import",
        "pbs",
        snap.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        format!(
            "placesim: imported 4 vnodes, 7 jobs to replay and 1 running at the start (2 not replayed, 0 bad lines skipped) into {0}/scenario.toml\n\
             Run it: placesim run --scenario {0}/scenario.toml; the import report: {0}/import-report.md\n\
             What really happened, as a run to compare with: placesim run --scenario {0}/scenario.toml --as-recorded\n",
            out.display()
        )
    );
    let results = dir.path().join("results");
    let scenario = out.join("scenario.toml");
    let o = run_scenario(scenario.to_str().unwrap(), results.to_str().unwrap(), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Against recorded.tsv: start errors (simulated − recorded) −60, −600, +200, −1, +99,
    // −100, −100; nearest ranks ceil(q·7): −600, −60, 200; mean |error| 1160 / 7. Waits
    // 400 / 7 s simulated against 962 / 7 recorded (one window, under two weeks): 58.4 %.
    // Jobs 2 and 7 really ran on n1 (s1), here on n3 (s2): 5 of 7 on the same vnodes and set.
    // By key (agreement.parquet): six jobs really ran on one host, four of them on the same
    // host here; every vnode has the same arch.
    assert!(
        text(&o.stderr).contains(
            "placesim: against the record: 7 jobs compared (0 not); start error median -60 s (10th to 90th percentile -600 to 200 s), mean |error| 166 s; 2-week moving-average wait error 58.4 %; same vnodes 71.4 %, same set 71.4 % (0 recorded spanning); same set by key: host 66.7 % of 6, switch 71.4 % of 7, arch 100.0 % of 7\n"
        ),
        "{}",
        text(&o.stderr)
    );
    assert!(results.join("agreement.parquet").is_file());
    // The report shows the same figures, from summary.parquet.
    let report = placesim(&["report", results.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert!(
        text(&report.stdout).contains(
            "Against the record, run: jobs compared 7; median start error (s) -60; mean |start error| (s) 166; 2-week wait MAPE (%) 58.4; same vnodes 0.714; same set 0.714\n"
        ),
        "{}",
        text(&report.stdout)
    );
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(html.contains("<h2>How close the replay comes</h2>"));
    let placed = placed(&results);
    // Job 1 (100.pbs) runs from 0 on its recorded vnode. Job 2 fits the smaller set, s2 (n4
    // is out of service). Job 3 (scatter:excl) takes s1, n2 first by its priority, and holds
    // it to 1,300, so jobs 4 to 6 wait for n3; job 8 finds s2 one ncpu short and takes n2.
    assert_eq!(
        placed,
        [
            (1, Some(0), "(n3:ncpus=2)".to_owned()),
            (2, Some(0), "(n3:ncpus=2)".to_owned()),
            (3, Some(100), "(n2:ncpus=4)+(n1:ncpus=4)".to_owned()),
            (4, Some(600), "(n3:ncpus=1)".to_owned()),
            (5, Some(1000), "(n3:ncpus=1)".to_owned()),
            (6, Some(1100), "(n3:ncpus=1)".to_owned()),
            (7, Some(3000), "(n3:ncpus=1)".to_owned()),
            (8, Some(3300), "(n2:ncpus=2)".to_owned()),
        ]
    ); // The record itself as a run: every job at its recorded start on its recorded vnodes.
    // Beside the simulated run in one results directory, the report compares the two,
    // utilization over time included.
    let compare = dir.path().join("compare");
    for (partition, extra) in [
        ("run=recorded", Some("--as-recorded")),
        ("run=simulated", None),
    ] {
        let out = compare.join(partition);
        let o = run_scenario(
            scenario.to_str().unwrap(),
            out.to_str().unwrap(),
            extra.as_slice(),
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        if extra.is_some() {
            assert!(
                text(&o.stderr).contains(
                    "placesim: against the record: 7 jobs compared (0 not); start error median 0 s (10th to 90th percentile 0 to 0 s), mean |error| 0 s; 2-week moving-average wait error 0.0 %; same vnodes 100.0 %, same set 100.0 % (0 recorded spanning); same set by key: host 100.0 % of 6, switch 100.0 % of 7, arch 100.0 % of 7\n"
                ),
                "{}",
                text(&o.stderr)
            );
            assert!(
                text(&o.stdout).contains("recorded+pbs-psets"),
                "{}",
                text(&o.stdout)
            );
        }
    }
    let report = placesim(&["report", compare.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    let said = text(&report.stdout);
    assert!(
        said.contains("Against the record, run=recorded: jobs compared 7; median start error (s) 0; mean |start error| (s) 0; 2-week wait MAPE (%) 0.0; same vnodes 1.000; same set 1.000\n")
            && said.contains("Against the record, run=simulated: jobs compared 7; median start error (s) -60;")
            && said.contains("Same set by key, run=simulated: host 0.667; switch 0.714; arch 1.000\n"),
        "{said}"
    );
    let html = std::fs::read_to_string(compare.join("report.html")).unwrap();
    assert!(html.contains("<h2>Utilization over time</h2>"));
    // Without a record there is nothing to replay.
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/demo.toml");
    let o = run_scenario(
        plain.to_str().unwrap(),
        dir.path().join("none").to_str().unwrap(),
        &["--as-recorded"],
    );
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).ends_with(
            "placesim: error: --as-recorded replays what really happened, and this scenario has no `[workload] recorded` file (an imported site's has one)\n"
        ),
        "{}",
        text(&o.stderr)
    );
}

/// PBS's `default_chunk`: queue workq's chunks get `Qlist=workq` and express's
/// `Qlist=express` (keeping each queue on its vnodes without shutting the other out), and
/// every chunk the server's `mem=1gb`. Queues go in file order (`by_queue`), so workq's J1,
/// J2 and J4 come before express's J3. J1 takes n1; J2 cannot use n3, whose 512 MB are
/// short of the server's default, and waits for n1 until 100; J4 names its own Qlist,
/// express, which the default does not override, and takes n2 at once; J3 (express) waits
/// for n2 until 100.
#[test]
fn default_chunks_keep_each_queue_on_its_vnodes() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         3 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 2 -1 -1 -1\n\
         4 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n",
    );
    std::fs::write(
        dir.path().join("requests.txt"),
        "4 select=1:ncpus=1:Qlist=express\n",
    )
    .unwrap();
    let vnode = |name: &str, mem: &str, qlist: &str| {
        format!(
            "[[vnode]]\nname = \"{name}\"\nncpus = 1\nmem = \"{mem}\"\nresources = {{ Qlist = \"{qlist}\" }}\n"
        )
    };
    let scenario_with = |server_default: &str| {
        let scenario = dir.path().join("s.toml");
        std::fs::write(
            &scenario,
            format!(
                "name = \"d\"\n[[resource]]\nname = \"Qlist\"\ntype = \"string\"\n{}{}{}\
                 [workload]\ntrace = \"{trace}\"\nrequests_file = \"requests.txt\"\n\
                 [pbs]\n{server_default}\n\
                 [[pbs.queue]]\nname = \"workq\"\nswf_queues = [1]\ndefault_chunk = {{ Qlist = \"workq\" }}\n\
                 [[pbs.queue]]\nname = \"express\"\nswf_queues = [2]\ndefault_chunk = {{ Qlist = \"express\" }}\n",
                vnode("n1", "2gb", "workq"),
                vnode("n2", "2gb", "express"),
                vnode("n3", "512mb", "workq"),
            ),
        )
        .unwrap();
        scenario
    };
    let scenario = scenario_with("default_chunk = { mem = \"1gb\" }");
    let placed = run_placed(&scenario, &dir.path().join("out"), &[]);
    assert_eq!(
        placed,
        [
            (1, Some(0), "(n1:ncpus=1:mem=1gb)".to_owned()),
            (2, Some(100), "(n1:ncpus=1:mem=1gb)".to_owned()),
            (3, Some(100), "(n2:ncpus=1:mem=1gb)".to_owned()),
            (4, Some(0), "(n2:ncpus=1:mem=1gb)".to_owned()),
        ]
    );
    // A default that is not a chunk resource, and nchunk, are refused at their key.
    for (server_default, message) in [
        (
            "default_chunk = { colour = \"red\" }",
            "key `pbs.default_chunk.colour`: `colour=red`: column 1: unknown resource `colour`",
        ),
        (
            "default_chunk = { nchunk = 2 }",
            "key `pbs.default_chunk.nchunk`: default_chunk.nchunk is not modelled: every request here gives its chunks' count",
        ),
    ] {
        let scenario = scenario_with(server_default);
        let o = placesim(&["check", scenario.to_str().unwrap()]);
        assert!(!o.status.success());
        assert!(text(&o.stderr).contains(message), "{}", text(&o.stderr));
    }
}

/// The header of `recorded.tsv`, as the import writes it.
const RECORDED_HEADER: &str = "job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n";

/// A scenario in `dir` of two one-ncpu vnodes, n1 and n2, replaying `jobs` jobs (numbered
/// from 1, submitted at 0, one ncpu for 100 s each) and measured against `recorded.tsv`
/// beside it, which the test writes; returns the scenario's path.
fn two_vnodes_with_record(dir: &Path, jobs: u32) -> std::path::PathBuf {
    let lines: String = (1..=jobs)
        .map(|j| format!("{j} 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n"))
        .collect();
    let trace = write_trace(dir, &lines);
    let scenario = dir.join("s.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"r\"\n[[vnode]]\nname = \"n1\"\nncpus = 1\n[[vnode]]\nname = \"n2\"\nncpus = 1\n\
             [workload]\ntrace = \"{trace}\"\nrecorded = \"recorded.tsv\"\n"
        ),
    )
    .unwrap();
    scenario
}

/// The record replayed on two one-ncpu vnodes: J1 really ran on n2 from 10; J2's record
/// puts it on n2 at 50, while J1 still holds it (as a requeued job replayed from its first
/// start can), so it waits for n2 until J1 ends at 110; J3 has no vnodes in the record and is
/// placed by first fit at its recorded start, 20, on n1.
#[test]
fn as_recorded_starts_each_job_where_its_record_says_or_when_that_is_free() {
    let dir = placesim_testkit::tempdir().unwrap();
    let scenario = two_vnodes_with_record(dir.path(), 3);
    std::fs::write(
        dir.path().join("recorded.tsv"),
        format!(
            "{RECORDED_HEADER}\
             1\t1.s\t0\t10\t10\t110\t(n2:ncpus=1)\n\
             2\t2.s\t0\t50\t50\t150\t(n2:ncpus=1)\n\
             3\t3.s\t0\t20\t20\t120\t-\n"
        ),
    )
    .unwrap();
    let placed = run_placed(&scenario, &dir.path().join("out"), &["--as-recorded"]);
    assert_eq!(
        placed,
        [
            (1, Some(10), "(n2:ncpus=1)".to_owned()),
            (2, Some(110), "(n2:ncpus=1)".to_owned()),
            (3, Some(20), "(n1:ncpus=1)".to_owned()),
        ]
    );
}

/// A record that cannot be replayed as it stands is refused before the run, naming the file
/// and the job, where a job used to wait for ever for vnodes it could not have (reported only
/// as never started) or the kernel stopped the run as a policy's error: an allocation over a
/// vnode's capacity (a vnode named twice counts twice), one of other ncpus than the request,
/// a workload job without a line, and a first start before time 0 of a job the scenario does
/// not run from the start. The same records still measure a scheduled run.
#[test]
fn a_record_that_cannot_be_replayed_is_named_before_the_run() {
    let dir = placesim_testkit::tempdir().unwrap();
    let scenario = two_vnodes_with_record(dir.path(), 2);
    let recorded = dir.path().join("recorded.tsv");
    let job_2 = "2\t2.s\t0\t20\t20\t120\t(n1:ncpus=1)\n";
    for (job_1, message) in [
        (
            "1\t1.s\t0\t10\t10\t110\t(n2:ncpus=3)\n",
            "job 1: vnode `n2` has ncpus=1, and the record gives the job ncpus=3",
        ),
        (
            "1\t1.s\t0\t10\t10\t110\t(n2:ncpus=1)+(n2:ncpus=1)\n",
            "job 1: vnode `n2` has ncpus=1, and the record gives the job ncpus=2",
        ),
        (
            "1\t1.s\t0\t10\t10\t110\t(n2:mem=1gb)\n",
            "job 1: vnode `n2` has mem=0kb, and the record gives the job mem=1gb",
        ),
        (
            "1\t1.s\t0\t10\t10\t110\t(n1:ncpus=1)+(n2:ncpus=1)\n",
            "job 1: the record gives the job 2 ncpus, and its request asks for 1 (a job starts \
             only on the ncpus it asks for)",
        ),
        (
            "1\t1.s\t0\t-5\t-5\t110\t(n2:ncpus=1)\n",
            "job 1: its first start, -5 s, is before time 0, and the scenario does not run it \
             from the start (`[[running]]`)",
        ),
        (
            "3\t3.s\t0\t10\t10\t110\t(n2:ncpus=1)\n",
            "job 1: no line, and --as-recorded starts each job of the workload when and where \
             its line says",
        ),
    ] {
        std::fs::write(&recorded, format!("{RECORDED_HEADER}{job_1}{job_2}")).unwrap();
        let (scenario, out) = (scenario.to_str().unwrap(), dir.path().join("out"));
        let o = run_scenario(scenario, out.to_str().unwrap(), &["--as-recorded"]);
        assert_eq!(o.status.code(), Some(1), "{job_1}");
        let said = text(&o.stderr);
        assert_eq!(
            said.lines().last().unwrap_or(""),
            format!("placesim: error: {}: {message}", recorded.display()),
            "{said}"
        );
        // A scheduled run is only measured against the record: it runs.
        let o = run_scenario(scenario, out.to_str().unwrap(), &[]);
        assert!(o.status.success(), "{job_1}: {}", text(&o.stderr));
    }
}

/// `export pbs-accounting --epoch` stops at the last second of the year 9999 (PBS's stamps
/// have four-digit years): the largest u64 overflowed where a job's times were added to it.
#[test]
fn an_export_epoch_past_the_year_9999_is_refused() {
    let dir = placesim_testkit::tempdir().unwrap();
    let out = dir.path().join("acct");
    let o = placesim(&[
        "export",
        "pbs-accounting",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--epoch",
        "18446744073709551615",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).lines().next().unwrap_or(""),
        "error: invalid value '18446744073709551615' for '--epoch <EPOCH>': \
         18446744073709551615 is not in 0..=253402300799"
    );
    assert!(!out.exists());
}

/// `placesim import torque-moab` on the import crate's Torque fixture, then `placesim run`:
/// Moab's ONEOF node sets over the `ib` and `bigmem` features with BESTFIT. Job 1 (two ib
/// nodes) runs where it really ran; job 2 (class `long`, bigmem) on n05 as recorded. Job 3
/// (three ncpus) has its own node set (`Resource_List.nodeset=ONEOF:FEATURE:ib:fast`),
/// which keeps it to the ib nodes: n01 (both sets hold the same nodes; BESTFIT ties go to
/// list order), where Torque had put it on n03: two of three on the same vnodes.
#[test]
fn an_imported_torque_moab_site_runs_as_written() {
    let dir = placesim_testkit::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../placesim-import/tests/data/torque");
    let out = dir.path().join("site");
    let arg = |name: &str| data.join(name).to_str().unwrap().to_owned();
    let o = placesim(&[
        "import",
        "torque-moab",
        "--nodes",
        &arg("nodes"),
        "--accounting",
        &arg("accounting"),
        "--moab-cfg",
        &arg("moab.cfg"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with(
            "placesim: imported 6 vnodes, 3 jobs to replay and 0 running at the start (1 not replayed, 0 bad lines skipped)"
        ),
        "{}",
        text(&o.stdout)
    );
    let results = dir.path().join("results");
    let scenario = out.join("scenario.toml");
    let o = run_scenario(scenario.to_str().unwrap(), results.to_str().unwrap(), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("3 jobs compared (0 not)")
            && text(&o.stderr).contains("same vnodes 66.7 %"),
        "{}",
        text(&o.stderr)
    );
    let placed = placed(&results);
    assert_eq!(
        placed,
        [
            (1, Some(0), "(n01:ncpus=4)+(n02:ncpus=4)".to_owned()),
            (2, Some(55), "(n05:ncpus=8)".to_owned()),
            (3, Some(2395), "(n01:ncpus=3)".to_owned()),
        ]
    );
}

/// A PBS site with a second scheduler, given file by file: the imported scenario runs, and
/// every job of workq (P1's queue) runs on n3, P1's only vnode, scheduled by sc1.
#[test]
fn an_imported_multi_scheduler_site_keeps_each_queue_in_its_partition() {
    let dir = placesim_testkit::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../placesim-import/tests/data");
    let arg = |name: &str| data.join(name).to_str().unwrap().to_owned();
    let out = dir.path().join("site");
    let o = placesim(&[
        "import",
        "pbs",
        "--nodes",
        &arg("multisched/node/pbsnodes_va.out"),
        "--server",
        &arg("multisched/server/qmgr_ps.out"),
        "--resources",
        &arg("snap/server_priv/resourcedef"),
        "--sched",
        &arg("multisched/scheduler/qmgr_lsched.out"),
        "--sched-config",
        &arg("multisched/sched_priv/sched_config"),
        "--accounting",
        &arg("snap/server_priv/accounting"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let results = dir.path().join("results");
    let placed = run_placed(&out.join("scenario.toml"), &results, &[]);
    // workq's jobs share n3 (4 ncpus); job 3 asks for two exclusive vnodes, more than P1
    // has, so it can never run, as PBS's sc1 would say.
    assert_eq!(
        placed,
        [
            (1, Some(0), "(n3:ncpus=2)".to_owned()),
            (2, Some(0), "(n3:ncpus=2)".to_owned()),
            (3, None, String::new()),
            (4, Some(600), "(n3:ncpus=1)".to_owned()),
            (5, Some(1000), "(n3:ncpus=1)".to_owned()),
            (6, Some(1100), "(n3:ncpus=1)".to_owned()),
            (7, Some(3000), "(n3:ncpus=1)".to_owned()),
            (8, Some(3600), "(n3:ncpus=2)".to_owned()),
        ]
    );
    assert!(
        explain(&results, "3")
            .contains("100 s  comment: Can Never Run: Not enough total nodes available\n"),
        "{}",
        explain(&results, "3")
    );
}

/// placesim's own run, exported as PBS accounting logs, imported with a node list and
/// settings that say what the scenario said, and replayed: the same schedule, every job at
/// the same start (less the first submission, the import's time 0) on the same vnodes.
#[test]
fn a_run_exported_as_accounting_logs_and_imported_replays_itself() {
    let dir = placesim_testkit::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    // Four switches of four 4-ncpu vnodes, placement sets on the switch, EASY, 1,500
    // generated jobs, half the small ones packed; no runtime stretching on either side.
    let mut scenario = String::from(
        "[run]\nplacement = \"pbs\"\nseed = 3\n[[resource]]\nname = \"switch\"\ntype = \"string\"\n",
    );
    for s in ["a", "b", "c", "d"] {
        scenario.push_str(&format!(
            "[[class]]\nname = \"{s}\"\ncount = 4\nncpus = 4\nresources = {{ switch = \"s{s}\" }}\n"
        ));
    }
    scenario.push_str(
        "[pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\nstrict_ordering = true\nbackfill_depth = 1\n\
         [runtime]\n[[runtime.class]]\nbeta = 0.0\n\
         [workload.generator]\njobs = 1500\nload = 0.9\n\
         [[workload.rule]]\nrequest = \"select={n}:ncpus=1 place=pack\"\nsize_max = 4\nfraction = 0.5\n\
         [metrics]\nexec_vnode = true\n",
    );
    std::fs::write(path("original.toml"), scenario).unwrap();
    let ok = |o: Output| assert!(o.status.success(), "{}", text(&o.stderr));
    ok(run_scenario(&path("original.toml"), &path("a"), &[]));
    ok(placesim(&[
        "export",
        "pbs-accounting",
        &path("a"),
        "--out",
        &path("acct"),
    ]));
    // The same cluster and settings in PBS's own files.
    let mut nodes = String::new();
    for s in ["a", "b", "c", "d"] {
        for i in 1..=4 {
            nodes.push_str(&format!(
                "{s}{i}\n     state = free\n     resources_available.ncpus = 4\n     resources_available.switch = s{s}\n\n"
            ));
        }
    }
    std::fs::write(path("nodes"), nodes).unwrap();
    std::fs::write(path("resourcedef"), "switch type=string flag=h\n").unwrap();
    std::fs::write(
        path("qmgr"),
        "create queue workq\nset queue workq queue_type = Execution\nset server node_group_enable = True\nset server node_group_key = switch\n",
    )
    .unwrap();
    std::fs::write(path("sched_config"), "strict_ordering: True ALL\n").unwrap();
    ok(placesim(&[
        "import",
        "pbs",
        "--nodes",
        &path("nodes"),
        "--resources",
        &path("resourcedef"),
        "--server",
        &path("qmgr"),
        "--sched-config",
        &path("sched_config"),
        "--accounting",
        &path("acct"),
        "--out",
        &path("site"),
    ]));
    let replay = run_scenario(&path("site/scenario.toml"), &path("b"), &[]);
    assert!(
        text(&replay.stderr).contains(
            "against the record: 1500 jobs compared (0 not); start error median 0 s (10th to 90th percentile 0 to 0 s), mean |error| 0 s; 2-week moving-average wait error 0.0 %; same vnodes 100.0 %, same set 100.0 % ("
        ),
        "{}",
        text(&replay.stderr)
    );
    let read = |run: &str| {
        placesim_analysis::read_placements(&dir.path().join(run).join("jobs.parquet")).unwrap()
    };
    let (a, b) = (read("a"), read("b"));
    assert_eq!(a.len(), 1500);
    assert_eq!(b.len(), 1500);
    // recorded.tsv: the replay's job number, then `N.placesim` for the original job N.
    let recorded = std::fs::read_to_string(path("site/recorded.tsv")).unwrap();
    let original_of: std::collections::HashMap<u64, u64> = recorded
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].parse().unwrap(),
                f[1].trim_end_matches(".placesim").parse().unwrap(),
            )
        })
        .collect();
    let by_id: std::collections::HashMap<u64, &placesim_analysis::JobPlacement> =
        a.iter().map(|p| (p.job_id, p)).collect();
    // The import's time 0 is the first submission (the exporter's epoch is 1767225600).
    let first_submit: u64 = {
        let jobs = std::fs::read_to_string(path("site/workload.swf")).unwrap();
        let epoch = jobs.split("time 0 is epoch ").nth(1).unwrap();
        epoch[..epoch.find('.').unwrap()].parse::<u64>().unwrap() - 1_767_225_600
    };
    assert_eq!(first_submit, 8);
    let mut same_vnodes = 0;
    for p in &b {
        let original = by_id[&original_of[&p.job_id]];
        assert_eq!(
            p.start_s.map(|s| s + first_submit),
            original.start_s,
            "job {} (original {})",
            p.job_id,
            original.job_id
        );
        assert!(p.exec_vnode.is_some(), "job {} ran somewhere", p.job_id);
        assert_eq!(p.exec_vnode, original.exec_vnode, "job {}", p.job_id);
        same_vnodes += 1;
    }
    assert_eq!(same_vnodes, 1500);
}

/// The timeline end to end: J1 (2 ncpus) runs on n1 from 0; J2 (4 ncpus) waits for the whole
/// machine and is deleted at 50; J1 is deleted at 60 while it runs; a `qdel` of a job the trace
/// does not have, or before the job is there, is refused at its line.
#[test]
fn a_timeline_deletes_jobs_and_bad_entries_are_named() {
    let dir = placesim_testkit::tempdir().unwrap();
    let path = write_trace(
        dir.path(),
        &[job_of(1, 0, 100, 2, 7), job_of(2, 1, 10, 4, 7)].concat(),
    );
    let scenario = dir.path().join("timeline.toml");
    let run = |events: &str| {
        std::fs::write(
            &scenario,
            format!(
                "[[class]]\nname = \"n\"\ncount = 2\nncpus = 2\n[workload]\ntrace = \"{path}\"\n{events}"
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &[]);
        (o, out)
    };
    let (o, out) = run("[[event]]\nat = 50\nqdel = 2\n[[event]]\nat = 60\nqdel = 1\n");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("placesim: 1 jobs deleted while waiting"),
        "{}",
        text(&o.stderr)
    );
    let ran = explain(&out, "1");
    assert!(
        ran.contains("60 s  kill: deleted while it ran (qdel)"),
        "{ran}"
    );
    let deleted = explain(&out, "2");
    assert!(
        deleted.contains("50 s  comment: Job deleted by qdel"),
        "{deleted}"
    );
    for (event, message) in [
        ("qdel = 9", "job 9 is not in the workload"),
        (
            "qdel = 2",
            "job 2 is submitted at 1 s: a qdel at 1 s comes before it is there",
        ),
    ] {
        let (o, _) = run(&format!("[[event]]\nat = 1\n{event}\n"));
        assert!(!o.status.success());
        let expected = format!("{}:9: key `event.qdel`: {message}", scenario.display());
        assert!(text(&o.stderr).contains(&expected), "{}", text(&o.stderr));
    }
}

/// Two PBS schedulers side by side (`[[pbs.sched]]`): the default one under strict ordering
/// (EASY) with d1-d2 and workq, and s1, greedy, with partition P1's p1-p2 and fastq. The same
/// pattern in each queue (a one-vnode job until 100, a two-vnode job, then a long one-vnode
/// job) ends differently: EASY keeps the long job off its top job's vnodes, greedy starts it
/// at once on p2 and the two-vnode job waits for it. A job too big for P1 never runs, though
/// the cluster has room for it: a scheduler sees only its partition.
#[test]
fn two_schedulers_with_different_settings_side_by_side() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 1 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n\
         3 2 -1 200 1 -1 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1\n\
         4 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 2 -1 -1 -1\n\
         5 1 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 2 -1 -1 -1\n\
         6 2 -1 200 1 -1 -1 1 200 -1 1 1 1 -1 2 -1 -1 -1\n\
         7 3 -1 5 3 -1 -1 3 5 -1 1 1 1 -1 2 -1 -1 -1\n",
    );
    let scenario = dir.path().join("s.toml");
    let write = |extra: &str| {
        std::fs::write(
            &scenario,
            format!(
                "name = \"two-scheds\"\n[run]\nplacement = \"pbs\"\n\
                 [[vnode]]\nname = \"d1\"\n[[vnode]]\nname = \"d2\"\n\
                 [[vnode]]\nname = \"p1\"\npartition = \"P1\"\n\
                 [[vnode]]\nname = \"p2\"\npartition = \"P1\"\n\
                 [workload]\ntrace = \"{trace}\"\n\
                 [pbs]\nstrict_ordering = true\n\
                 [[pbs.queue]]\nname = \"workq\"\nswf_queues = [1]\n\
                 [[pbs.queue]]\nname = \"fastq\"\nswf_queues = [2]\npartition = \"P1\"\n\
                 [[pbs.sched]]\nname = \"s1\"\npartition = \"P1\"\n{extra}"
            ),
        )
        .unwrap();
    };
    write("");
    let o = placesim(&["check", scenario.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let line = "scheduler s1: partition P1, 2 vnodes p[1-2], queues fastq, greedy";
    assert!(
        text(&o.stdout).lines().any(|l| l == line),
        "missing `{line}`:\n{}",
        text(&o.stdout)
    );
    let on = |job: u64, start: Option<u64>, vnodes: &str| (job, start, vnodes.to_owned());
    assert_eq!(
        run_placed(&scenario, &dir.path().join("out"), &[]),
        [
            on(1, Some(0), "(d1:ncpus=1)"),
            on(2, Some(100), "(d1:ncpus=1)+(d2:ncpus=1)"),
            on(3, Some(110), "(d1:ncpus=1)"),
            on(4, Some(0), "(p1:ncpus=1)"),
            on(5, Some(202), "(p1:ncpus=1)+(p2:ncpus=1)"),
            on(6, Some(2), "(p2:ncpus=1)"),
            on(7, None, ""),
        ]
    );
    // s1 under strict ordering too: the same schedule in both partitions (J7 never runs).
    write("strict_ordering = true\n");
    let placed = run_placed(&scenario, &dir.path().join("out2"), &[]);
    assert_eq!(
        placed[3..6],
        [
            on(4, Some(0), "(p1:ncpus=1)"),
            on(5, Some(100), "(p1:ncpus=1)+(p2:ncpus=1)"),
            on(6, Some(110), "(p1:ncpus=1)"),
        ]
    );
    // PBS's rules on partitions, with its texts where it has them.
    for (extra, message) in [
        (
            "[[pbs.sched]]\nname = \"s2\"\npartition = \"P1\"\n",
            ":30:13: key `pbs.sched.partition`: Partition is already associated with other scheduler",
        ),
        (
            "[[pbs.sched]]\nname = \"s2\"\npartition = \"pbs-default\"\n",
            ":30:13: key `pbs.sched.partition`: Default partition name is not allowed",
        ),
        (
            "[[reservation]]\nname = \"R1\"\nstart = 10\nduration = 10\nnodes = \"(d1:ncpus=1)\"\n",
            ":26:8: key `pbs.sched`: scheduler partitions go with PBS's placement and job order; not yet with reservations",
        ),
        (
            "[[vnode]]\nname = \"x1\"\nqueue = \"fastq\"\n",
            ":30:9: key `vnode.queue`: its queue `fastq` is in partition `P1`, and a queue's vnodes are in its partition: give the vnode partition `P1`",
        ),
    ] {
        write(extra);
        let o = placesim(&["check", scenario.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        assert!(text(&o.stderr).contains(message), "{}", text(&o.stderr));
    }
    std::fs::write(&scenario, "[[vnode]]\nname = \"d1\"\npartition = \"P9\"\n").unwrap();
    let o = placesim(&["check", scenario.to_str().unwrap()]);
    assert_eq!(
        text(&o.stderr),
        format!(
            "placesim: error: {}:3:13: key `vnode.partition`: no [[pbs.sched]] serves partition `P9`: a job there would never be scheduled\n",
            scenario.display()
        )
    );
}

/// `placesim explain` lists what happened to the site while the job waited: on the
/// hand-worked trace under EASY with an outage of the idle n4 over [5, 6), job 4 (waiting
/// from 2 to 15) sees it go down and come back; job 1, which never waited, sees nothing.
#[test]
fn explain_shows_the_site_events_a_job_waited_through() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(dir.path(), TRACE);
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        format!(
            "[run]\ndiscipline = \"easy\"\n[[class]]\nname = \"n\"\ncount = 4\n\
             [workload]\ntrace = \"{trace}\"\n\
             [[failures.outage]]\nvnode = \"n4\"\ndown = 5\nup = 6\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = run_scenario(scenario.to_str().unwrap(), out.to_str().unwrap(), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = explain(&out, "4");
    for line in [
        "           5 s  vnode down: n4",
        "           6 s  vnode up: n4",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "missing `{line}`:\n{stdout}"
        );
    }
    let never_waited = explain(&out, "1");
    assert!(!never_waited.contains("vnode down"), "{never_waited}");
}

/// Each scheduler sorts vnodes by its own `node_sort_key`, PBS's default (`sort_priority
/// HIGH`) when it gives none: the default scheduler takes d2 (priority 5) first, s1 with
/// `sort_priority LOW` takes p1 (priority 1) first, and s1 without a key of its own p2, even
/// when the server's key (the default scheduler's) is LOW.
#[test]
fn each_scheduler_sorts_vnodes_by_its_own_node_sort_key() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 2 -1 -1 -1\n",
    );
    let scenario = dir.path().join("s.toml");
    let write = |server: &str, extra: &str| {
        std::fs::write(
            &scenario,
            format!(
                "[run]\nplacement = \"pbs\"\n\
                 [[vnode]]\nname = \"d1\"\nsort_priority = 1\n\
                 [[vnode]]\nname = \"d2\"\nsort_priority = 5\n\
                 [[vnode]]\nname = \"p1\"\npartition = \"P1\"\nsort_priority = 1\n\
                 [[vnode]]\nname = \"p2\"\npartition = \"P1\"\nsort_priority = 5\n\
                 [workload]\ntrace = \"{trace}\"\n{server}\
                 [[pbs.queue]]\nname = \"workq\"\nswf_queues = [1]\n\
                 [[pbs.queue]]\nname = \"fastq\"\nswf_queues = [2]\npartition = \"P1\"\n\
                 [[pbs.sched]]\nname = \"s1\"\npartition = \"P1\"\n{extra}"
            ),
        )
        .unwrap();
    };
    let on = |job: u64, vnodes: &str| (job, Some(0), vnodes.to_owned());
    let low = "node_sort_key = [\"sort_priority LOW\"]\n";
    write("", low);
    assert_eq!(
        run_placed(&scenario, &dir.path().join("low"), &[]),
        [on(1, "(d2:ncpus=1)"), on(2, "(p1:ncpus=1)")]
    );
    // The server's (the default scheduler's) key is not s1's.
    write(&format!("[pbs]\n{low}"), "");
    assert_eq!(
        run_placed(&scenario, &dir.path().join("default"), &[]),
        [on(1, "(d1:ncpus=1)"), on(2, "(p2:ncpus=1)")]
    );
    write("", "node_sort_key = [\"sort_priority SIDEWAYS\"]\n");
    let o = placesim(&["check", scenario.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "placesim: error: {}:29:18: key `pbs.sched.node_sort_key`: `sort_priority SIDEWAYS`: unknown direction `SIDEWAYS`: expected HIGH or LOW\n",
            scenario.display()
        )
    );
}

/// Each scheduler walks its jobs by its own `job_sort_key`: in P1, J1 holds both vnodes until
/// 100; J2 (1 vnode) and J3 (2 vnodes) wait. In submission order J2 starts at 100 and J3
/// after it; with s1's `ncpus HIGH`, J3 first.
#[test]
fn each_scheduler_orders_its_jobs_by_its_own_job_sort_key() {
    let dir = placesim_testkit::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 2 -1 -1 -1\n\
         2 1 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 2 -1 -1 -1\n\
         3 2 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 2 -1 -1 -1\n",
    );
    let scenario = dir.path().join("s.toml");
    let write = |extra: &str| {
        std::fs::write(
            &scenario,
            format!(
                "[[vnode]]\nname = \"d1\"\n\
                 [[vnode]]\nname = \"p1\"\npartition = \"P1\"\n\
                 [[vnode]]\nname = \"p2\"\npartition = \"P1\"\n\
                 [workload]\ntrace = \"{trace}\"\n\
                 [[pbs.queue]]\nname = \"workq\"\nswf_queues = [1]\n\
                 [[pbs.queue]]\nname = \"fastq\"\nswf_queues = [2]\npartition = \"P1\"\n\
                 [[pbs.sched]]\nname = \"s1\"\npartition = \"P1\"\n{extra}"
            ),
        )
        .unwrap();
    };
    let starts = |out: &str| -> Vec<(u64, Option<u64>)> {
        run_placed(&scenario, &dir.path().join(out), &[])
            .into_iter()
            .map(|(job, start, _)| (job, start))
            .collect()
    };
    write("");
    assert_eq!(
        starts("fifo"),
        [(1, Some(0)), (2, Some(100)), (3, Some(110))]
    );
    write("job_sort_key = [\"ncpus HIGH\"]\n");
    assert_eq!(
        starts("big"),
        [(1, Some(0)), (2, Some(110)), (3, Some(100))]
    );
    write("job_sort_key = [\"ncpus SIDEWAYS\"]\n");
    let o = placesim(&["check", scenario.to_str().unwrap()]);
    assert_eq!(
        text(&o.stderr),
        format!(
            "placesim: error: {}:21:17: key `pbs.sched.job_sort_key`: `ncpus SIDEWAYS`: unknown direction `SIDEWAYS`: expected HIGH or LOW\n",
            scenario.display()
        )
    );
}
