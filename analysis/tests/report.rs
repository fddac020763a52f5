//! The report's numbers against the Parquet files they come from: a small dataset of two
//! configurations × three replicates is written by the metrics crate, compared by
//! `placesim_analysis::compare`, and checked against an independent eager read of every
//! file.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

use placesim_analysis::{METRICS, MeanCi, compare, render_html, render_terminal};
use placesim_core::{Cluster, ResourceDefs};
use placesim_metrics::{JobSink, RunMeta, RunSummary, write_run};
use placesim_policy::Discipline;
use placesim_workload::{SwfOptions, read_trace};
use polars::prelude::*;
use std::path::Path;

/// Twelve jobs on 8 processors; replicate `k` stretches every runtime by 1 + k/4, so the
/// replicates differ and the intervals are not zero.
fn trace_text(k: u64) -> String {
    let mut text = String::new();
    for j in 0..12u64 {
        let size = [1, 2, 4, 8, 3, 1][j as usize % 6];
        let runtime = (10 + 7 * j) * (4 + k) / 4;
        text.push_str(&format!(
            "{} {} -1 {runtime} {size} -1 -1 {size} {} -1 1 1 1 -1 1 -1 -1 -1\n",
            j + 1,
            3 * j,
            runtime * 2
        ));
    }
    text
}

fn write_replicate(root: &Path, policy: Discipline, k: u64) {
    let opts = SwfOptions {
        procs: Some(8),
        skip_bad_lines: false,
        keep_field: None,
        keep_extended: false,
    };
    let trace = read_trace(
        trace_text(k).as_bytes(),
        Path::new("t.swf"),
        &opts,
        &ResourceDefs::default(),
    )
    .unwrap();
    let cluster = Cluster::homogeneous(8, 1).unwrap();
    let sets = placesim_core::SetPartition::whole(&cluster);
    let mut sink = JobSink::new(&trace.workload);
    let every = Some(placesim_core::SimDuration(5));
    sink.measure(
        &sets,
        &cluster,
        placesim_metrics::OccupancyConfig::whole_run(every),
    );
    let mut scheduler = policy.build();
    let stats = placesim_testkit::Replay::on(&trace.workload, cluster)
        .set_watch(&sets)
        .run(scheduler.as_mut(), &mut sink);
    let meta = RunMeta {
        scenario: "small".into(),
        policy: policy.to_string(),
        seed: k,
        trace: "t.swf".into(),
        procs: 8,
    };
    let summary = RunSummary::compute(
        meta,
        &trace.workload,
        &sink,
        &stats,
        trace.records,
        Vec::new(),
        None,
    )
    .with_groups(&trace.workload, &sink, &[]);
    let dir = root
        .join(format!("discipline={policy}"))
        .join(format!("replicate={k}"));
    write_run(&dir, &trace.workload, &sink, &summary).unwrap();
}

/// Column `name` of every row of a Parquet file, as f64.
fn column(path: &Path, name: &str) -> Vec<Option<f64>> {
    let df = ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap();
    let c = df.column(name).unwrap().cast(&DataType::Float64).unwrap();
    let ca = c.f64().unwrap();
    (0..ca.len()).map(|i| ca.get(i)).collect()
}

#[test]
fn report_figures_equal_what_the_parquet_files_hold() {
    let dir = placesim_testkit::tempdir().unwrap();
    let root = dir.path();
    for policy in [Discipline::Fcfs, Discipline::EASY] {
        for k in 0..3 {
            write_replicate(root, policy, k);
        }
    }
    let c = compare(root).unwrap();
    assert_eq!(c.runs, 6);
    assert_eq!(c.scenarios, ["small"]);
    let configs: Vec<&str> = c.configs.iter().map(|r| r.config.as_str()).collect();
    assert_eq!(configs, ["discipline=easy", "discipline=fcfs"]);
    for row in &c.configs {
        assert_eq!(row.runs, 3);
        let policy = row.config.trim_start_matches("discipline=");
        assert_eq!(row.policy, policy);
        for (m, got) in METRICS.iter().zip(&row.metrics) {
            let values: Vec<f64> = (0..3)
                .map(|k| {
                    let path = root
                        .join(&row.config)
                        .join(format!("replicate={k}"))
                        .join("summary.parquet");
                    column(&path, m.column)[0].unwrap()
                })
                .collect();
            let want = MeanCi::of(&values);
            assert!(
                (got.mean - want.mean).abs() <= 1e-9 * want.mean.abs().max(1.0),
                "{} {}: {} vs {}",
                row.config,
                m.column,
                got.mean,
                want.mean
            );
            match (got.half_width, want.half_width) {
                (Some(a), Some(b)) => assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0)),
                other => panic!("{} {}: {other:?}", row.config, m.column),
            }
        }
    }
    // The replicates differ, so the wait interval is not degenerate.
    let wait = &c.configs[1].metrics[1];
    assert!(wait.half_width.unwrap() > 0.0, "{wait:?}");
    // Wait by size class: each configuration's jobs of each class, over its three runs.
    for row in &c.size_classes {
        let mut waits = Vec::new();
        for k in 0..3 {
            let path = root
                .join(&row.config)
                .join(format!("replicate={k}"))
                .join("jobs.parquet");
            let sizes = column(&path, "size");
            let w = column(&path, "wait_s");
            for (s, w) in sizes.iter().zip(w) {
                let class = if *s == Some(1.0) {
                    "serial"
                } else {
                    "parallel"
                };
                if class == row.size_class {
                    waits.push(w.unwrap());
                }
            }
        }
        assert_eq!(row.wait.n, waits.len() as u64, "{row:?}");
        let mean = waits.iter().sum::<f64>() / waits.len() as f64;
        assert!((row.wait.mean - mean).abs() < 1e-9, "{row:?} vs {mean}");
        // polars' nearest quantile: the value at rank round((n − 1) q).
        waits.sort_by(f64::total_cmp);
        let nearest = |q: f64| waits[((waits.len() - 1) as f64 * q).round() as usize];
        assert_eq!(row.wait.q[2], nearest(0.5), "{row:?}");
        assert_eq!(row.wait.q[4], nearest(0.9), "{row:?}");
    }
    // One set: every job in it.
    assert!(c.sets_spanned.iter().all(|s| *s == [1.0, 0.0, 0.0, 0.0]));
    // Utilization over time: the samples of the three runs averaged at each time, then over
    // the first of at most 60 equal bins of time (one set: every row is the whole cluster).
    let mut by_time: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
    for k in 0..3 {
        let path = root
            .join("discipline=fcfs")
            .join(format!("replicate={k}"))
            .join("timeseries.parquet");
        for (t, u) in column(&path, "time_s")
            .iter()
            .zip(column(&path, "utilization"))
        {
            let entry = by_time.entry(t.unwrap() as u64).or_default();
            entry.0 += u.unwrap();
            entry.1 += 1.0;
        }
    }
    let first = *by_time.keys().next().unwrap() as f64;
    let last = *by_time.keys().next_back().unwrap() as f64;
    let bin = ((last - first) / 60.0).ceil().max(1.0);
    let in_first: Vec<f64> = by_time
        .iter()
        .filter(|(t, _)| (**t as f64) < first + bin)
        .map(|(_, (sum, n))| sum / n)
        .collect();
    let mean0 = in_first.iter().sum::<f64>() / in_first.len() as f64;
    assert_eq!(c.utilization[1][0].0, 0.0);
    assert!(
        (c.utilization[1][0].1 - mean0).abs() < 1e-12,
        "{} vs {mean0}",
        c.utilization[1][0].1
    );
    assert!(c.utilization[1].len() <= 61);
    // Waits by user and queue: every job is user 1's, in the default queue, so each group's
    // mean wait is the run's window mean, averaged over the replicates.
    for config in ["discipline=easy", "discipline=fcfs"] {
        let runs: Vec<f64> = (0..3)
            .map(|k| {
                let path = root
                    .join(config)
                    .join(format!("replicate={k}/summary.parquet"));
                column(&path, "window_wait_mean_s")[0].unwrap()
            })
            .collect();
        let want = runs.iter().sum::<f64>() / 3.0;
        let groups: Vec<(&str, &str, f64, f64)> = c
            .groups
            .iter()
            .filter(|g| g.config == config)
            .map(|g| (g.by.as_str(), g.key.as_str(), g.jobs, g.wait_mean_s))
            .collect();
        assert_eq!(groups.len(), 2, "{groups:?}");
        for (group, (by, key)) in groups.iter().zip([("user", "1"), ("queue", "default")]) {
            assert_eq!((group.0, group.1, group.2), (by, key, 12.0));
            assert!(
                (group.3 - want).abs() < 1e-9,
                "{config} {by}: {} vs {want}",
                group.3
            );
        }
    }
    // Both renderings carry the figures.
    let table = render_terminal(&c);
    let html = render_html(&c);
    assert!(html.contains("<h2>Waits by queue and by user</h2>"));
    let easy_user = c.groups.iter().find(|g| g.by == "user").unwrap();
    assert!(html.contains(&format!(
        "<tr><td>1</td><td>12</td><td>{:.2}</td>",
        easy_user.wait_mean_s / 3600.0
    )));
    let shown = c.configs[1].metrics[1].format(METRICS[1].decimals);
    assert!(table.contains(&shown), "{table}");
    assert!(html.contains(&shown));
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
    // Self-contained: no scripts, no links to other files.
    assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("href="));
}

#[test]
fn a_directory_without_runs_is_an_error_naming_it() {
    let dir = placesim_testkit::tempdir().unwrap();
    let err = compare(dir.path()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("{}: no */summary.parquet found", dir.path().display())
    );
}

#[test]
fn a_run_missing_a_table_is_an_error_naming_the_file() {
    let dir = placesim_testkit::tempdir().unwrap();
    write_replicate(dir.path(), Discipline::Fcfs, 0);
    let run = dir.path().join("discipline=fcfs").join("replicate=0");
    std::fs::remove_file(run.join("timeseries.parquet")).unwrap();
    let err = compare(dir.path()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}: missing beside summary.parquet (a run from before placesim wrote it, or an interrupted copy)",
            run.join("timeseries.parquet").display()
        )
    );
}
