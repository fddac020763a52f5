//! The summary's figures against a hand-worked run, the Parquet tables against the summary,
//! and byte-identical output for identical input.

use placesim_core::{Cluster, ClusterState, ResourceDefs};
use placesim_metrics::{
    JobSink, OccupancyConfig, RunMeta, RunSummary, Timing, jobs_frame, write_run,
};
use placesim_policy::Discipline;
use placesim_testkit::{Replay, hand_trace};
use placesim_workload::{SwfOptions, Trace, read_trace};
use std::path::Path;

/// Replays `workload` under FCFS on `cluster` into `sink`, with the kernel watching `sets`
/// and reporting settled instants when given. The hand trace (placesim-testkit's
/// `HAND_TRACE`, 4 processors, FCFS): J1 size 2 submit 0 start 0 end 10; J2 size 4 submit 0
/// start 10 end 15; J3 size 1 submit 1 start 15 end 18; J4 size 2 submit 2 start 15 end 19.
fn simulate_watched(
    workload: &placesim_core::Workload,
    cluster: Cluster,
    sets: Option<&placesim_core::SetPartition>,
    sink: &mut dyn placesim_core::MetricsSink,
) -> placesim_core::RunStats {
    let mut policy = Discipline::Fcfs.build();
    let mut replay = Replay::on(workload, cluster);
    if let Some(sets) = sets {
        replay = replay.set_watch(sets);
    }
    replay.run(policy.as_mut(), sink)
}

/// A trace of `jobs` (submit, run time and size, in seconds and processors; each estimated at
/// 10 s) on a machine of `max_procs`, numbered from 1 in the order given.
fn swf_trace(max_procs: u64, jobs: impl IntoIterator<Item = (u64, u64, u64)>) -> Trace {
    let mut text = format!("; MaxProcs: {max_procs}\n");
    for (i, (submit, run, size)) in jobs.into_iter().enumerate() {
        text.push_str(&format!(
            "{} {submit} -1 {run} {size} -1 -1 {size} 10 -1 1 1 1 -1 1 -1 -1 -1\n",
            i + 1
        ));
    }
    read_trace(
        text.as_bytes(),
        Path::new("jobs.swf"),
        &SwfOptions::default(),
        &ResourceDefs::default(),
    )
    .unwrap()
}

/// The ids of a run of the hand trace on `procs` processors.
fn hand_meta(procs: u64) -> RunMeta {
    RunMeta {
        scenario: "hand".into(),
        policy: "fcfs".into(),
        seed: 7,
        trace: "t.swf".into(),
        procs,
    }
}

fn run(trace: &Trace, timing: Option<Timing>) -> (JobSink, RunSummary) {
    let cluster = Cluster::homogeneous(trace.procs, 1).unwrap();
    let mut sink = JobSink::new(&trace.workload);
    let stats = simulate_watched(&trace.workload, cluster, None, &mut sink);
    let meta = hand_meta(trace.procs);
    let skipped = trace.skipped.iter().map(|(r, n)| (r.name(), n)).collect();
    let summary = RunSummary::compute(
        meta,
        &trace.workload,
        &sink,
        &stats,
        trace.records,
        skipped,
        timing,
    );
    (sink, summary)
}

#[test]
fn summary_matches_the_hand_worked_schedule() {
    let (_, s) = run(&hand_trace(), None);
    assert_eq!(s.jobs_run, 4);
    // Makespan: last end 19 − first submit 0.
    assert_eq!(s.makespan_s, 19);
    // Busy processor-seconds: 2×10 + 4×5 + 1×3 + 2×4 = 51, over 4 × 19.
    assert!((s.utilization - 51.0 / 76.0).abs() < 1e-12);
    // Waits 0, 10, 14, 13: mean 9.25, median 11.5, p95 (rank 4 of 4) 14.
    assert_eq!(
        (s.wait_mean_s, s.wait_median_s, s.wait_p95_s),
        (9.25, 11.5, 14.0)
    );
    // BSD: J1 10/10 = 1; J2 (10+5)/10 = 1.5; J3 (14+3)/10 = 1.7; J4 (13+4)/10 = 1.7.
    assert!((s.bsd_mean - (1.0 + 1.5 + 1.7 + 1.7) / 4.0).abs() < 1e-12);
    assert!((s.throughput_jobs_per_hour - 4.0 * 3600.0 / 19.0).abs() < 1e-9);
    assert_eq!(s.events, 8);
}

#[test]
fn jobs_table_rows_follow_submit_order_and_carry_the_run_ids() {
    let trace = hand_trace();
    let (sink, s) = run(&trace, None);
    let df = jobs_frame(&s.meta, &trace.workload, &sink).unwrap();
    assert_eq!(df.height(), 4);
    let starts: Vec<Option<u64>> = df
        .column("start_s")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(starts, vec![Some(0), Some(10), Some(15), Some(15)]);
    let waits: Vec<Option<u64>> = df.column("wait_s").unwrap().u64().unwrap().iter().collect();
    assert_eq!(waits, vec![Some(0), Some(10), Some(14), Some(13)]);
    let bsd = df.column("bounded_slowdown").unwrap().f64().unwrap();
    assert_eq!(bsd.get(1), Some(1.5));
    let seed = df
        .column("seed")
        .unwrap()
        .as_materialized_series()
        .u64()
        .unwrap()
        .get(3);
    assert_eq!(seed, Some(7));
    let policy = df
        .column("policy")
        .unwrap()
        .as_materialized_series()
        .str()
        .unwrap()
        .get(2)
        .map(str::to_owned);
    assert_eq!(policy.as_deref(), Some("fcfs"));
}

#[test]
fn identical_input_gives_byte_identical_parquet() {
    let trace = hand_trace();
    let dir = placesim_testkit::tempdir().unwrap();
    for name in ["a", "b"] {
        let (sink, s) = run(&trace, None);
        write_run(&dir.path().join(name), &trace.workload, &sink, &s).unwrap();
    }
    for file in ["jobs.parquet", "summary.parquet"] {
        let a = std::fs::read(dir.path().join("a").join(file)).unwrap();
        let b = std::fs::read(dir.path().join("b").join(file)).unwrap();
        assert!(!a.is_empty());
        assert!(a == b, "{file} differs between identical runs");
    }
    // With wall-clock timing recorded, only summary.parquet may differ; jobs.parquet may not.
    let (sink, s) = run(
        &trace,
        Some(Timing {
            wall_seconds: 0.123,
        }),
    );
    write_run(&dir.path().join("c"), &trace.workload, &sink, &s).unwrap();
    let a = std::fs::read(dir.path().join("a/jobs.parquet")).unwrap();
    let c = std::fs::read(dir.path().join("c/jobs.parquet")).unwrap();
    assert!(a == c);
}

/// More jobs than one row group holds: the table is written in batches, and reads back whole,
/// in submit order, identically on a second run.
#[test]
fn large_jobs_table_is_written_in_row_groups_and_reads_back_whole() {
    use polars::prelude::{ParquetReader, SerReader};
    let n = placesim_metrics::JOBS_PER_ROW_GROUP * 2 + 123;
    // Job i: submit i, size 1 + i % 8, run 1 + i % 5.
    let trace = swf_trace(8, (0..n as u64).map(|i| (i, 1 + i % 5, 1 + i % 8)));
    let dir = placesim_testkit::tempdir().unwrap();
    for name in ["a", "b"] {
        let (sink, s) = run(&trace, None);
        write_run(&dir.path().join(name), &trace.workload, &sink, &s).unwrap();
    }
    let a = std::fs::read(dir.path().join("a/jobs.parquet")).unwrap();
    let b = std::fs::read(dir.path().join("b/jobs.parquet")).unwrap();
    assert!(a == b);
    let file = std::fs::File::open(dir.path().join("a/jobs.parquet")).unwrap();
    let df = ParquetReader::new(file).finish().unwrap();
    assert_eq!(df.height(), n);
    let ids = df.column("job_id").unwrap().u64().unwrap();
    assert_eq!((ids.get(0), ids.get(n - 1)), (Some(1), Some(n as u64)));
    let submits = df.column("submit_s").unwrap().u64().unwrap();
    assert!(submits.iter().zip(0u64..).all(|(s, i)| s == Some(i)));
}

/// Writing jobs.parquet during the run gives the same bytes as writing it afterwards: for one
/// row group, for several, and for a run with a job that never starts; and so do
/// events.parquet and timeseries.parquet (here without samples: the schema alone). The same
/// holds whether the row groups are written by writer threads or on the run's own thread (a
/// sweep's), and the files are all that either leaves in its directory.
#[test]
fn streaming_jobs_and_events_writers_match_the_after_run_writers() {
    use placesim_metrics::{StreamingJobSink, write_events, write_jobs, write_timeseries};
    // Enough jobs for several row groups of jobs.parquet and of events.parquet (three events
    // a job).
    let n = placesim_metrics::EVENTS_PER_ROW_GROUP as u64 + 5;
    let big = swf_trace(8, (0..n).map(|i| (i, 1 + i % 7, 2)));
    let dir = placesim_testkit::tempdir().unwrap();
    for (name, trace) in [("small", hand_trace()), ("big", big)] {
        let meta = RunMeta {
            scenario: name.into(),
            policy: "fcfs".into(),
            seed: 1,
            trace: "t".into(),
            procs: trace.procs,
        };
        let cluster = Cluster::homogeneous(trace.procs, 1).unwrap();
        let streamed_dir = dir.path().join(format!("{name}-streamed"));
        let mut streaming =
            StreamingJobSink::new(&streamed_dir, meta.clone(), &trace.workload).unwrap();
        simulate_watched(&trace.workload, cluster.clone(), None, &mut streaming);
        streaming.finish().unwrap();
        let here_dir = dir.path().join(format!("{name}-here"));
        let mut here =
            StreamingJobSink::on_this_thread(&here_dir, meta.clone(), &trace.workload).unwrap();
        simulate_watched(&trace.workload, cluster.clone(), None, &mut here);
        here.finish().unwrap();
        // The streaming sink gives its event rows away as it writes them: the run is made
        // again for the writers after the run.
        let mut sink = JobSink::new(&trace.workload);
        simulate_watched(&trace.workload, cluster, None, &mut sink);
        let after_dir = dir.path().join(format!("{name}-after"));
        std::fs::create_dir_all(&after_dir).unwrap();
        write_jobs(&after_dir, &meta, &trace.workload, &sink).unwrap();
        write_events(&after_dir, &meta, &trace.workload, &sink).unwrap();
        write_timeseries(&after_dir, &meta, &sink).unwrap();
        let files = ["events.parquet", "jobs.parquet", "timeseries.parquet"];
        for written in [&streamed_dir, &here_dir] {
            for file in files {
                let a = std::fs::read(written.join(file)).unwrap();
                let b = std::fs::read(after_dir.join(file)).unwrap();
                assert!(a == b, "{name}: {file} in {}", written.display());
            }
            let left = file_names(written);
            assert_eq!(left, files, "{name}: what {} holds", written.display());
        }
    }
}

/// A run whose files are written on its own thread and that is given up before they are
/// finished (a run that fails) leaves nothing behind: the row groups written so far go with
/// their temporary files.
#[test]
fn files_written_on_the_run_s_thread_and_never_finished_are_removed() {
    use placesim_metrics::StreamingJobSink;
    let n = placesim_metrics::EVENTS_PER_ROW_GROUP as u64 + 5;
    let trace = swf_trace(8, (0..n).map(|i| (i, 1 + i % 7, 2)));
    let cluster = Cluster::homogeneous(trace.procs, 1).unwrap();
    let dir = placesim_testkit::tempdir().unwrap();
    let here_dir = dir.path().join("here");
    let mut here =
        StreamingJobSink::on_this_thread(&here_dir, hand_meta(8), &trace.workload).unwrap();
    simulate_watched(&trace.workload, cluster, None, &mut here);
    // Whole row groups of events and of jobs were written during the run.
    let during = file_names(&here_dir);
    assert!(
        during.iter().any(|f| f == "events.parquet.tmp"),
        "written during the run: {during:?}"
    );
    drop(here);
    let left = file_names(&here_dir);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The names of the files in `dir`, sorted.
fn file_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// timeseries.parquet written during the run, its samples handed over a row group at a time,
/// has the bytes of the file written afterwards: samples over three row groups (the last one
/// short), each with a row per set, and the samples leave the sink as they are handed over.
/// A run of one set keeps its samples and has the events writer write the file whole at the
/// end, with the same bytes. Both hold whether the files are written by writer threads or on
/// the run's own thread (a sweep's).
#[test]
fn streaming_timeseries_matches_the_after_run_writer() {
    use placesim_metrics::{StreamingJobSink, write_timeseries};
    // One job every 2 s for 2,600 jobs, one sample a second: about 5,200 samples, two row
    // groups of 2,048 and a shorter one.
    let trace = swf_trace(4, (0..2_600).map(|i| (2 * i, 1 + i % 3, 1 + i % 2)));
    let (cluster, switch) = two_switches(["A", "B"]);
    let every = Some(placesim_core::SimDuration(1));
    let meta = hand_meta(4);
    let dir = placesim_testkit::tempdir().unwrap();
    // Rows per sample: the cluster's, then one per set when there are several.
    for (name, sets, rows_per_sample) in [
        (
            "two",
            placesim_core::SetPartition::by_key(&cluster, switch),
            3,
        ),
        ("one", placesim_core::SetPartition::whole(&cluster), 1),
    ] {
        let streamed_dir = dir.path().join(format!("{name}-streamed"));
        let here_dir = dir.path().join(format!("{name}-here"));
        let mut lefts = Vec::new();
        for here in [false, true] {
            let written = if here { &here_dir } else { &streamed_dir };
            let mut streaming = if here {
                StreamingJobSink::on_this_thread(written, meta.clone(), &trace.workload)
            } else {
                StreamingJobSink::new(written, meta.clone(), &trace.workload)
            }
            .unwrap();
            streaming
                .sink_mut()
                .measure(&sets, &cluster, OccupancyConfig::whole_run(every));
            simulate_watched(
                &trace.workload,
                cluster.clone(),
                Some(&sets),
                &mut streaming,
            );
            lefts.push(streaming.finish().unwrap());
        }
        let mut sink = JobSink::new(&trace.workload);
        sink.measure(&sets, &cluster, OccupancyConfig::whole_run(every));
        simulate_watched(&trace.workload, cluster.clone(), Some(&sets), &mut sink);
        let after = placesim_metrics::timeseries_frame(&meta, &sink).unwrap();
        let samples = after.height() / rows_per_sample;
        assert!(
            samples > 2 * 2_048 && samples % 2_048 != 0,
            "{name}: {samples} samples"
        );
        // The streamed samples left the sink; the after-run sink kept them all, and so did
        // the sink of one set.
        for left in &lefts {
            let kept = placesim_metrics::timeseries_frame(&meta, left)
                .unwrap()
                .height();
            assert_eq!(
                kept,
                if rows_per_sample == 1 { samples } else { 0 },
                "{name}"
            );
        }
        let after_dir = dir.path().join(format!("{name}-after"));
        std::fs::create_dir_all(&after_dir).unwrap();
        write_timeseries(&after_dir, &meta, &sink).unwrap();
        let b = std::fs::read(after_dir.join("timeseries.parquet")).unwrap();
        for written in [&streamed_dir, &here_dir] {
            let a = std::fs::read(written.join("timeseries.parquet")).unwrap();
            assert!(
                a == b,
                "{name}: timeseries.parquet in {}",
                written.display()
            );
        }
    }
}

/// A job that never starts has a row with null times and the scheduler's comment, and does
/// not hold back the rows after it; a workload with no jobs still gets a jobs.parquet holding
/// the schema and no rows.
#[test]
fn jobs_that_never_start_get_a_row_with_their_comment() {
    use placesim_metrics::StreamingJobSink;
    use polars::prelude::{ParquetReader, SerReader};
    let trace = hand_trace();
    let dir = placesim_testkit::tempdir().unwrap();
    let meta = RunMeta {
        scenario: "s".into(),
        policy: "fcfs".into(),
        seed: 0,
        trace: "t".into(),
        procs: 2,
    };
    // Two processors: J2 (size 4) can never run; FCFS passes it over.
    let cluster = Cluster::homogeneous(2, 1).unwrap();
    let mut streaming = StreamingJobSink::new(dir.path(), meta, &trace.workload).unwrap();
    let stats = simulate_watched(&trace.workload, cluster, None, &mut streaming);
    assert_eq!(stats.never_started.len(), 1);
    streaming.finish().unwrap();
    let df = ParquetReader::new(std::fs::File::open(dir.path().join("jobs.parquet")).unwrap())
        .finish()
        .unwrap();
    let ids: Vec<Option<u64>> = df.column("job_id").unwrap().u64().unwrap().iter().collect();
    assert_eq!(ids, vec![Some(1), Some(2), Some(3), Some(4)]);
    let starts: Vec<Option<u64>> = df
        .column("start_s")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(starts[1], None);
    assert!(starts[0].is_some() && starts[2].is_some() && starts[3].is_some());
    let comments: Vec<Option<&str>> = df
        .column("comment")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(
        comments,
        vec![
            None,
            Some("Can Never Run: the request does not fit on the empty cluster"),
            None,
            // J3 waits for J1 at the head from 1; J4 behind it is told why.
            Some("Not Running: Job would break strict sorted order")
        ]
    );
    // An empty workload: the file holds the schema and no rows.
    let empty = placesim_core::Workload::new(Vec::new(), Vec::new()).unwrap();
    let edir = dir.path().join("empty");
    let meta = RunMeta {
        scenario: "e".into(),
        policy: "fcfs".into(),
        seed: 0,
        trace: "t".into(),
        procs: 1,
    };
    StreamingJobSink::new(&edir, meta, &empty)
        .unwrap()
        .finish()
        .unwrap();
    let df = ParquetReader::new(std::fs::File::open(edir.join("jobs.parquet")).unwrap())
        .finish()
        .unwrap();
    assert_eq!(df.height(), 0);
    assert!(df.column("bounded_slowdown").is_ok());
}

/// Under PBS placement sets, jobs.parquet says where each job ran (a set, or `spanned`) and
/// carries PBS's comments: the last one before a job started, and why a job never did.
#[test]
fn placement_sets_and_comments_reach_jobs_parquet() {
    use placesim_core::{Job, Request, RequestId, SimDuration, SimTime, Workload};
    use placesim_metrics::StreamingJobSink;
    use placesim_policy::placement::{PbsPsets, PsetSettings};
    use placesim_policy::queue::Fcfs;
    use polars::prelude::{ParquetReader, SerReader};
    // Four one-ncpu vnodes: v0, v1 on switch S1; v2, v3 on S2.
    let (cluster, switch) = two_switches(["S1", "S2"]);
    // J1 (2 procs) fits S1; J2 (3) waits for the whole pool, then spans; J3 (5) never runs.
    let job = |id: u64, size: u32| {
        Job::new(
            id,
            SimTime(0),
            SimDuration(10),
            SimDuration(10),
            size,
            RequestId(id as u32 - 1),
        )
    };
    let requests = [2, 3, 5].map(|n| Request::processors(n, 3)).to_vec();
    let workload = Workload::new(vec![job(1, 2), job(2, 3), job(3, 5)], requests).unwrap();
    let psets = PbsPsets::new(
        &cluster,
        PsetSettings {
            node_group_enable: true,
            server_key: vec![switch],
            vnode_queue: vec![None; 4],
            ..PsetSettings::default()
        },
    );
    let mut state = ClusterState::new(cluster);
    psets.track(&mut state);
    let dir = placesim_testkit::tempdir().unwrap();
    let meta = RunMeta {
        scenario: "s".into(),
        policy: "fcfs+pbs-psets".into(),
        seed: 0,
        trace: "t".into(),
        procs: 4,
    };
    let mut sink = StreamingJobSink::new(dir.path(), meta, &workload).unwrap();
    let mut fcfs = Fcfs::new(psets);
    Replay::from_state(&workload, state).run(&mut fcfs, &mut sink);
    sink.finish().unwrap();
    let df = ParquetReader::new(std::fs::File::open(dir.path().join("jobs.parquet")).unwrap())
        .finish()
        .unwrap();
    let strings = |name: &str| -> Vec<Option<String>> {
        df.column(name)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s.map(str::to_owned))
            .collect()
    };
    let starts: Vec<Option<u64>> = df
        .column("start_s")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(starts, vec![Some(0), Some(10), None]);
    assert_eq!(
        strings("placement_set"),
        vec![Some("switch=S1".into()), Some("spanned".into()), None]
    );
    assert_eq!(
        strings("comment"),
        vec![
            None,
            Some("Not Running: Insufficient amount of resource: ncpus (R: 3 A: 2 T: 4)".into()),
            Some("Can Never Run: Insufficient amount of resource: ncpus (R: 5 A: 4 T: 4)".into()),
        ]
    );
}

/// Vnode failures reach both tables: the hand trace on 4 vnodes with vnode 0 down from 5 to
/// 100. J1 (size 2, on vnodes 0 and 1 from 0) is requeued at 5 with 2 × 5 core-seconds lost
/// and restarts at once on vnodes 1 and 2 (ends 15); J2 (size 4) waits for vnode 0 (100–105),
/// then J3 (105–108) and J4 (105–109). Streaming and after-run writers agree byte for byte.
#[test]
fn requeues_lost_work_and_availability_reach_the_tables() {
    use placesim_core::{NodeFailurePolicy, Outage, SimTime, VnodeId};
    use placesim_metrics::{StreamingJobSink, write_jobs, write_summary};
    use polars::prelude::{ParquetReader, SerReader};
    let trace = hand_trace();
    let dir = placesim_testkit::tempdir().unwrap();
    let meta = RunMeta {
        scenario: "fail".into(),
        policy: "fcfs".into(),
        seed: 0,
        trace: "t".into(),
        procs: 4,
    };
    let mut streaming = StreamingJobSink::new(dir.path(), meta.clone(), &trace.workload).unwrap();
    let mut policy = Discipline::Fcfs.build();
    let outage = Outage {
        vnode: VnodeId(0),
        down: SimTime(5),
        up: SimTime(100),
    };
    let stats = Replay::on(&trace.workload, Cluster::homogeneous(4, 1).unwrap())
        .outages(&[outage], NodeFailurePolicy::Requeue)
        .run(policy.as_mut(), &mut streaming);
    let sink = streaming.finish().unwrap();
    let summary = RunSummary::compute(
        meta.clone(),
        &trace.workload,
        &sink,
        &stats,
        4,
        Vec::new(),
        None,
    );
    write_summary(dir.path(), &summary).unwrap();
    let after = dir.path().join("after");
    std::fs::create_dir_all(&after).unwrap();
    write_jobs(&after, &meta, &trace.workload, &sink).unwrap();
    assert!(
        std::fs::read(dir.path().join("jobs.parquet")).unwrap()
            == std::fs::read(after.join("jobs.parquet")).unwrap()
    );
    let read = |name: &str| {
        ParquetReader::new(std::fs::File::open(dir.path().join(name)).unwrap())
            .finish()
            .unwrap()
    };
    let jobs = read("jobs.parquet");
    let u64s = |name: &str| -> Vec<Option<u64>> {
        jobs.column(name).unwrap().u64().unwrap().iter().collect()
    };
    assert_eq!(u64s("start_s"), [Some(5), Some(100), Some(105), Some(105)]);
    assert_eq!(u64s("lost_core_s"), [Some(10), Some(0), Some(0), Some(0)]);
    let requeues: Vec<Option<u32>> = jobs
        .column("requeues")
        .unwrap()
        .u32()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(requeues, [Some(1), Some(0), Some(0), Some(0)]);
    let failed = bools(&jobs, "failed");
    assert_eq!(failed, [Some(false); 4]);
    let s = read("summary.parquet");
    let get_u64 = |name: &str| s.column(name).unwrap().u64().unwrap().get(0);
    assert_eq!(get_u64("requeues"), Some(1));
    assert_eq!(get_u64("lost_core_s"), Some(10));
    assert_eq!(get_u64("jobs_failed"), Some(0));
    // Vnode 0 down 5–100 of 4 vnodes × 109 s.
    let availability = s.column("availability").unwrap().f64().unwrap().get(0);
    assert_eq!(availability, Some(1.0 - 95.0 / 436.0));
}

/// The window metrics of the hand-worked FCFS schedule (4 processors, one set):
/// [0,10) J1 holds 2, J2 (4) heads the queue, J3 (1) and J4 (2) join at 1 and 2;
/// [10,15) J2 holds 4; [15,18) J3 and J4; [18,19) J4.
#[test]
fn window_metrics_match_the_hand_worked_schedule() {
    let trace = hand_trace();
    let cluster = Cluster::homogeneous(trace.procs, 1).unwrap();
    let sets = placesim_core::SetPartition::whole(&cluster);
    let mut sink = JobSink::new(&trace.workload);
    let every = Some(placesim_core::SimDuration(5));
    sink.measure(&sets, &cluster, OccupancyConfig::whole_run(every));
    let stats = simulate_watched(&trace.workload, cluster, Some(&sets), &mut sink);
    let meta = hand_meta(4);
    let s = RunSummary::compute(meta, &trace.workload, &sink, &stats, 4, Vec::new(), None);
    let w = &s.window;
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} != {b}");
    assert_eq!((w.start_s, w.end_s, w.jobs), (0, 19, 4));
    // 2·10 + 4·5 + 1·3 + 2·4 ncpu-seconds over 4 × 19.
    close(w.utilization_allocated, 51.0 / 76.0);
    // No runtime model: useful work is the allocated work.
    close(w.utilization_useful, 51.0 / 76.0);
    close(w.efficiency, 1.0);
    // Two idle processors while jobs wait, [0,10).
    // The time-integral metrics, as summary.parquet declares and computes them.
    use placesim_metrics::schema::{Cell, SummaryColumn, summary};
    let f = |c: SummaryColumn| match (c.value)(&s) {
        Cell::F64(x) => x,
        other => panic!("`{}` is {other:?}", c.name),
    };
    let nullable = |c: SummaryColumn| match (c.value)(&s) {
        Cell::NullableF64(x) => x,
        other => panic!("`{}` is {other:?}", c.name),
    };
    close(f(summary::LOSS_OF_CAPACITY), 20.0 / 76.0);
    // ... of which [1,10) with J3 (1 processor) waiting, small enough to fit.
    close(f(summary::LOSS_OF_CAPACITY_FRAG), 18.0 / 76.0);
    // The head J2 blocked over 2 free processors, [0,10); J3 over none, [10,15).
    close(f(summary::HEAD_BLOCKED_IDLE), 20.0 / 76.0);
    // One set: never set-fragmented, Φ = 0 and L = 1 whenever something is free.
    close(f(summary::SET_FRAGMENTATION_TIME), 0.0);
    assert_eq!(nullable(summary::FRAGMENTATION_MEAN), Some(0.0));
    assert_eq!(nullable(summary::LARGEST_FREE_SHARE_MEAN), Some(1.0));
    // Queue lengths 1, 2, 3 and 2 over [0,1), [1,2), [2,10), [10,15).
    close(f(summary::QUEUE_LENGTH_MEAN), 37.0 / 19.0);
    close(w.throughput_jobs_per_hour, 4.0 * 3600.0 / 19.0);
    close(w.wait_mean_s, (0.0 + 10.0 + 14.0 + 13.0) / 4.0);
    // Samples at 0, 5, 10, 15 (the run ends at 19).
    let frame = placesim_metrics::timeseries_frame(&s.meta, &sink).unwrap();
    let column = |name: &str| -> Vec<Option<u64>> {
        let ca = frame.column(name).unwrap().u64().unwrap().clone();
        (0..ca.len()).map(|i| ca.get(i)).collect()
    };
    assert_eq!(column("time_s"), [Some(0), Some(5), Some(10), Some(15)]);
    assert_eq!(column("queue_length"), [Some(1), Some(3), Some(2), Some(0)]);
    assert_eq!(column("free_ncpus"), [Some(2), Some(2), Some(0), Some(1)]);
}

/// With two sets, each sample is a row for the cluster and one per set: the hand-worked FCFS
/// schedule on v0, v1 (switch A) and v2, v3 (switch B), first fit.
#[test]
fn timeseries_has_a_row_per_set_after_each_cluster_row() {
    let trace = hand_trace();
    let (cluster, switch) = two_switches(["A", "B"]);
    let sets = placesim_core::SetPartition::by_key(&cluster, switch);
    let mut sink = JobSink::new(&trace.workload);
    let every = Some(placesim_core::SimDuration(5));
    sink.measure(&sets, &cluster, OccupancyConfig::whole_run(every));
    assert_eq!(sets.names, ["A", "B"]);
    let stats = simulate_watched(&trace.workload, cluster, Some(&sets), &mut sink);
    let meta = hand_meta(4);
    let frame = placesim_metrics::timeseries_frame(&meta, &sink).unwrap();
    assert_eq!(frame.height(), 4 * 3);
    let set = frame.column("set").unwrap().str().unwrap().clone();
    let sets: Vec<Option<&str>> = (0..set.len()).map(|i| set.get(i)).collect();
    assert_eq!(&sets[..3], [None, Some("A"), Some("B")]);
    let free = frame.column("free_ncpus").unwrap().u64().unwrap().clone();
    let free: Vec<u64> = (0..free.len()).map(|i| free.get(i).unwrap()).collect();
    // 0 and 5: J1 on v0, v1; 10: J2 everywhere; 15: J3 on v0, J4 on v1 and v2.
    assert_eq!(free, [2, 0, 2, 2, 0, 2, 0, 0, 0, 1, 0, 1]);
    // Φ = 0 while everything free lies in B.
    let phi = frame
        .column("fragmentation")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    assert_eq!(
        (phi.get(0), phi.get(1), phi.get(6)),
        (Some(0.0), None, None)
    );
    // And jobs.parquet's size classes follow the largest set (2 ncpus).
    let s = RunSummary::compute(meta, &trace.workload, &sink, &stats, 4, Vec::new(), None);
    let jobs = jobs_frame(&s.meta, &trace.workload, &sink).unwrap();
    let class = jobs.column("size_class").unwrap().str().unwrap().clone();
    let classes: Vec<Option<&str>> = (0..class.len()).map(|i| class.get(i)).collect();
    assert_eq!(
        classes,
        [
            Some("one set"),
            Some("multi-set"),
            Some("serial"),
            Some("one set")
        ]
    );
    let spans = jobs.column("sets_spanned").unwrap();
    // No runtime model here: S stays 1 (the runtime model's groups make S).
    assert_eq!(spans.u32().unwrap().get(3), Some(1));
}

/// Four one-ncpu vnodes v0..v3 on hosts of their names: v0, v1 on switch `names[0]`, v2, v3
/// on `names[1]`; and the `switch` resource.
fn two_switches(names: [&str; 2]) -> (Cluster, placesim_core::ResourceId) {
    use placesim_core::{AttrValue, ClusterBuilder, ResourceKind};
    let mut defs = ResourceDefs::default();
    let switch = defs.define("switch", ResourceKind::String, false).unwrap();
    let mut b = ClusterBuilder::new(defs);
    for i in 0..4 {
        let h = b.add_host(format!("v{i}"));
        let value = AttrValue::Str(names[i / 2].into());
        b.add_vnode(format!("v{i}"), h, 1.0, &[1, 0, 0], vec![(switch, value)])
            .unwrap();
    }
    (b.build().unwrap(), switch)
}

/// The booleans of column `name` of `df`.
fn bools(df: &polars::prelude::DataFrame, name: &str) -> Vec<Option<bool>> {
    df.column(name)
        .unwrap()
        .as_materialized_series()
        .bool()
        .unwrap()
        .iter()
        .collect()
}

/// The strings of column `name` of `df`.
fn strings(df: &polars::prelude::DataFrame, name: &str) -> Vec<Option<String>> {
    df.column(name)
        .unwrap()
        .as_materialized_series()
        .str()
        .unwrap()
        .iter()
        .map(|s| s.map(str::to_owned))
        .collect()
}

/// The hand trace under EASY (4 one-ncpu vnodes): J1 runs 0–10 on node0–1, J3 is backfilled
/// at 1 on node2 (J2, the head, is reserved at J1's estimated end, 20), J2 runs 10–15 on all
/// four, and J4, the head from 10, is reserved at J2's estimated end, 15, and runs then.
#[test]
fn exec_vnode_estimates_and_events_of_the_hand_worked_schedule() {
    let trace = hand_trace();
    let cluster = Cluster::homogeneous(4, 1).unwrap();
    let mut sink = JobSink::new(&trace.workload);
    sink.keep_exec_vnodes(&cluster);
    let mut easy = Discipline::EASY.build();
    Replay::on(&trace.workload, cluster).run(easy.as_mut(), &mut sink);
    let meta = RunMeta {
        policy: "easy".into(),
        ..hand_meta(4)
    };
    let df = jobs_frame(&meta, &trace.workload, &sink).unwrap();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        strings(&df, "exec_vnode"),
        vec![
            some("(node0:ncpus=1)+(node1:ncpus=1)"),
            some("(node0:ncpus=1)+(node1:ncpus=1)+(node2:ncpus=1)+(node3:ncpus=1)"),
            some("(node2:ncpus=1)"),
            some("(node0:ncpus=1)+(node1:ncpus=1)"),
        ]
    );
    let estimated: Vec<Option<u64>> = df
        .column("estimated_start_s")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(estimated, vec![None, Some(20), None, Some(15)]);
    // On totals the reservation names no vnodes.
    assert_eq!(strings(&df, "estimated_exec_vnode"), vec![None; 4]);

    let events = placesim_metrics::events_frame(&meta, &trace.workload, &sink).unwrap();
    /// time_s, job_id, kind, text, estimated_start_s.
    type EventRow = (u64, u64, String, Option<String>, Option<u64>);
    let rows: Vec<EventRow> = (0..events.height())
        .map(|i| {
            let get = |name: &str| events.column(name).unwrap().get(i).unwrap();
            let text = match get("text") {
                polars::prelude::AnyValue::String(s) => Some(s.to_owned()),
                _ => None,
            };
            let kind = get("kind").get_str().unwrap().to_owned();
            let time = get("time_s").try_extract::<u64>().unwrap();
            let job = get("job_id").try_extract::<u64>().unwrap();
            let estimated = get("estimated_start_s").try_extract::<u64>().ok();
            (time, job, kind, text, estimated)
        })
        .collect();
    let row = |t, j, k: &str, x: Option<&str>| (t, j, k.to_owned(), x.map(str::to_owned), None);
    let estimate = |t, j, at| (t, j, "top-job estimate".to_owned(), None, Some(at));
    assert_eq!(
        rows,
        vec![
            row(0, 1, "submit", None),
            row(0, 2, "submit", None),
            estimate(0, 2, 20),
            row(0, 1, "start", None),
            row(1, 3, "submit", None),
            row(1, 3, "start", None),
            row(2, 4, "submit", None),
            row(4, 3, "end", Some("finished")),
            // J4 fits on node2–3 now, but would hold them past J2's reservation at 20.
            row(
                4,
                4,
                "comment",
                Some("Not Running: Job would conflict with reservation or top job"),
            ),
            row(10, 1, "end", Some("finished")),
            estimate(10, 4, 15),
            row(10, 2, "start", None),
            row(15, 2, "end", Some("finished")),
            row(15, 4, "start", None),
            row(19, 4, "end", Some("finished")),
        ]
    );
}

/// KTH-SP2 on 25 vnodes of 4 ncpus under depth-4 backfilling and under conservative: every
/// job's `exec_vnode`, read back from jobs.parquet and parsed, holds no vnode beyond its 4
/// ncpus at any instant, and names exactly the job's size in ncpus. Checked here, outside
/// the kernel, from the file alone.
#[test]
fn exec_vnode_read_back_never_oversubscribes_a_vnode() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/KTH-SP2-1996-2.1-cln.swf.gz");
    let trace =
        placesim_workload::load_trace(&path, &SwfOptions::default(), &ResourceDefs::default())
            .unwrap();
    for discipline in [
        Discipline::EASY.with_backfill_depth(4).unwrap(),
        Discipline::Conservative,
    ] {
        let cluster = Cluster::homogeneous(trace.procs, 4).unwrap();
        let mut sink = JobSink::new(&trace.workload);
        sink.keep_exec_vnodes(&cluster);
        let mut policy = discipline.build();
        Replay::on(&trace.workload, cluster).run(policy.as_mut(), &mut sink);
        let meta = RunMeta {
            policy: discipline.label(),
            ..hand_meta(trace.procs)
        };
        let dir = placesim_testkit::tempdir().unwrap();
        placesim_metrics::write_jobs(dir.path(), &meta, &trace.workload, &sink).unwrap();
        let file = std::fs::File::open(dir.path().join("jobs.parquet")).unwrap();
        use polars::prelude::SerReader as _;
        let df = polars::prelude::ParquetReader::new(file).finish().unwrap();
        let column = |name: &str| -> Vec<u64> {
            df.column(name)
                .unwrap()
                .u64()
                .unwrap()
                .iter()
                .map(Option::unwrap)
                .collect()
        };
        let sizes: Vec<u32> = df
            .column("size")
            .unwrap()
            .u32()
            .unwrap()
            .iter()
            .map(Option::unwrap)
            .collect();
        let (starts, ends) = (column("start_s"), column("end_s"));
        // (time, +ncpus or −ncpus, vnode), ends before starts at one instant.
        let mut changes: Vec<(u64, i64, String)> = Vec::new();
        for (i, exec) in strings(&df, "exec_vnode").into_iter().enumerate() {
            let exec = exec.expect("every job started");
            let mut total = 0;
            for chunk in exec.split('+') {
                let inner = chunk
                    .strip_prefix('(')
                    .and_then(|c| c.strip_suffix(')'))
                    .unwrap();
                let mut parts = inner.split(':');
                let vnode = parts.next().unwrap().to_owned();
                let ncpus: i64 = parts
                    .find_map(|p| p.strip_prefix("ncpus="))
                    .unwrap()
                    .parse()
                    .unwrap();
                total += ncpus;
                changes.push((starts[i], ncpus, vnode.clone()));
                changes.push((ends[i], -ncpus, vnode));
            }
            assert_eq!(total, i64::from(sizes[i]), "job index {i}");
        }
        changes.sort_by_key(|c| (c.0, c.1));
        let mut held: std::collections::HashMap<String, i64> = Default::default();
        for (time, delta, vnode) in changes {
            let h = held.entry(vnode.clone()).or_default();
            *h += delta;
            assert!(
                (0..=4).contains(h),
                "{}: {vnode} holds {h} ncpus at {time}",
                discipline.label()
            );
        }
    }
}

/// Kill at the walltime under reservation depth 2, by hand. Four processors, one vnode each:
/// J1 (4, estimate 50, runs 100) is killed at 50; J2 (2, estimate 20, runs 10) and J3
/// (4, estimate 10) wait. Depth 2 calendars both at once: J2 at 50 (J1's estimated end, which
/// the kill makes its real one) and J3 at 70 (J2's estimated end); depth 1 calendars only J2
/// until J3 is the head. At 50 J2 starts, and J4 (2, estimate 5, submitted at 3) backfills
/// beside it, ending at 55, before J3's reservation. J2 ends early, at 60, and the re-planned
/// pass starts J3 then.
#[test]
fn kill_at_walltime_under_depth_two_by_hand() {
    let text = "; MaxProcs: 4\n\
        1 0 -1 100 4 -1 -1 4 50 -1 1 1 1 -1 1 -1 -1 -1\n\
        2 1 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n\
        3 2 -1 10 4 -1 -1 4 10 -1 1 1 1 -1 1 -1 -1 -1\n\
        4 3 -1 5 2 -1 -1 2 5 -1 1 1 1 -1 1 -1 -1 -1\n";
    let trace = placesim_testkit::trace(text, 4);
    for (depth, j3_estimate) in [(2u32, Some(70u64)), (1, Some(70))] {
        let cluster = Cluster::homogeneous(4, 1).unwrap();
        let mut sink = JobSink::new(&trace.workload);
        sink.keep_exec_vnodes(&cluster);
        let mut policy = Discipline::EASY.with_backfill_depth(depth).unwrap().build();
        Replay::on(&trace.workload, cluster).run(policy.as_mut(), &mut sink);
        let df = jobs_frame(&hand_meta(4), &trace.workload, &sink).unwrap();
        let u64s = |name: &str| -> Vec<Option<u64>> {
            df.column(name).unwrap().u64().unwrap().iter().collect()
        };
        assert_eq!(
            u64s("start_s"),
            [Some(0), Some(50), Some(60), Some(50)],
            "depth {depth}"
        );
        assert_eq!(
            u64s("end_s"),
            [Some(50), Some(60), Some(70), Some(55)],
            "depth {depth}"
        );
        let killed = bools(&df, "killed");
        assert_eq!(killed, [Some(true), Some(false), Some(false), Some(false)]);
        // J2's reservation at J1's estimated end; J3's at J2's estimated end, the last one
        // calendared (under depth 1 from 50, when J3 became the head).
        assert_eq!(
            u64s("estimated_start_s"),
            [None, Some(50), j3_estimate, None],
            "depth {depth}"
        );
        let all = "(node0:ncpus=1)+(node1:ncpus=1)+(node2:ncpus=1)+(node3:ncpus=1)";
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            strings(&df, "exec_vnode"),
            [
                some(all),
                some("(node0:ncpus=1)+(node1:ncpus=1)"),
                some(all),
                some("(node2:ncpus=1)+(node3:ncpus=1)"),
            ]
        );
        // The events show when depth 2 calendared J3: at its submit, against depth 1's 50.
        let events = placesim_metrics::events_frame(&hand_meta(4), &trace.workload, &sink).unwrap();
        let first_j3_estimate = (0..events.height()).find_map(|i| {
            let get = |name: &str| events.column(name).unwrap().get(i).unwrap();
            let is_j3 = get("job_id") == polars::prelude::AnyValue::UInt64(3);
            let kind = get("kind");
            let is_estimate = kind == polars::prelude::AnyValue::String("top-job estimate");
            (is_j3 && is_estimate).then(|| match get("time_s") {
                polars::prelude::AnyValue::UInt64(t) => t,
                _ => u64::MAX,
            })
        });
        assert_eq!(
            first_j3_estimate,
            Some(if depth == 2 { 2 } else { 50 }),
            "depth {depth}"
        );
    }
}

/// The job's user and group (SWF fields 12 and 13), its project (J2's, here), and the
/// priority a `job_sort_formula`
/// ordered it by, at its first pass and at its start: the hand trace under FCFS ordered by
/// `eligible_time` (oldest first, so the schedule is FCFS's). Each job's first pass is at its
/// submission (value 0); at its start the value is its wait: 0, 10, 14, 13. Without a
/// formula both are null.
#[test]
fn user_group_and_priorities_reach_jobs_parquet() {
    use placesim_policy::queue::{Formula, JobOrder, Ordered, Term};
    let trace = hand_trace();
    let terms = |name: &str| match name {
        "eligible_time" => Ok(Term::EligibleTime),
        other => Err(format!("unknown term `{other}`")),
    };
    let order = JobOrder {
        formula: Some(std::sync::Arc::new(
            Formula::parse("eligible_time", &terms).unwrap(),
        )),
        ..JobOrder::default()
    };
    let mut jobs = trace.workload.jobs().to_vec();
    jobs[1].set_project(Some("climate".into()));
    let workload = placesim_core::Workload::new(jobs, trace.workload.requests().to_vec()).unwrap();
    let mut policy = Ordered::new(Discipline::Fcfs.build(), order);
    let mut sink = JobSink::new(&workload);
    Replay::on(&workload, Cluster::homogeneous(4, 1).unwrap()).run(&mut policy, &mut sink);
    let df = jobs_frame(&hand_meta(4), &workload, &sink).unwrap();
    let column = |name: &str| -> Vec<Option<f64>> {
        df.column(name).unwrap().f64().unwrap().iter().collect()
    };
    assert_eq!(column("priority_at_submit"), [Some(0.0); 4]);
    assert_eq!(
        column("priority_at_start"),
        [Some(0.0), Some(10.0), Some(14.0), Some(13.0)]
    );
    let ids = |name: &str| -> Vec<Option<u32>> {
        df.column(name).unwrap().u32().unwrap().iter().collect()
    };
    assert_eq!(ids("user"), [Some(1); 4]);
    assert_eq!(ids("group"), [Some(1); 4]);
    let projects: Vec<Option<&str>> = df
        .column("project")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(projects, [None, Some("climate"), None, None]);
    let (sink, s) = run(&trace, None);
    let df = jobs_frame(&s.meta, &trace.workload, &sink).unwrap();
    assert_eq!(df.column("priority_at_start").unwrap().null_count(), 4);
}

/// waits.parquet: the hand trace under FCFS (waits 0, 10, 14 and 13) with users 1, 2, 1 and
/// none, and J2 in PBS queue `short`: user 1's jobs wait 0 and 14 (mean and median 7, 95th
/// percentile 14), user 2's 10, the unknown user's 13; queue `short` has J2's 10, the default
/// queue the others. The table has a row per group, in that order.
#[test]
fn waits_by_user_and_queue() {
    let trace = hand_trace();
    let mut jobs = trace.workload.jobs().to_vec();
    let mut requests = trace.workload.requests().to_vec();
    for (job, user) in jobs.iter_mut().zip([Some(1), Some(2), Some(1), None]) {
        job.set_user(user);
    }
    let mut in_short = requests[jobs[1].request.index()].clone();
    in_short.queue = Some(0);
    requests.push(in_short);
    jobs[1].request = placesim_core::RequestId::from_index(requests.len() - 1);
    let workload = placesim_core::Workload::new(jobs, requests).unwrap();
    let cluster = Cluster::homogeneous(trace.procs, 1).unwrap();
    let mut sink = JobSink::new(&workload);
    let stats = simulate_watched(&workload, cluster, None, &mut sink);
    let s = RunSummary::compute(hand_meta(4), &workload, &sink, &stats, 4, Vec::new(), None)
        .with_groups(&workload, &sink, &["short".to_owned()]);
    let rows: Vec<(&str, &str, u64, f64, f64, f64)> = s
        .groups
        .iter()
        .map(|g| {
            (
                g.by,
                g.key.as_str(),
                g.jobs,
                g.wait_mean_s,
                g.wait_median_s,
                g.wait_p95_s,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("user", "1", 2, 7.0, 7.0, 14.0),
            ("user", "2", 1, 10.0, 10.0, 10.0),
            ("user", "unknown", 1, 13.0, 13.0, 13.0),
            ("queue", "short", 1, 10.0, 10.0, 10.0),
            ("queue", "default", 3, 9.0, 13.0, 14.0),
        ]
    );
    let df = placesim_metrics::waits_frame(&s).unwrap();
    assert_eq!(df.height(), 5);
    assert_eq!(
        df.column("key").unwrap().str().unwrap().get(2),
        Some("unknown")
    );
}

/// Every job in one group (user 5, queue `short`), over the whole run and over a window from
/// t = 1, which leaves J1 and J2 out: each group is the window's jobs, with the window's
/// statistics (J3 and J4 waited 14 and 13 s: mean and median 13.5, 95th percentile 14,
/// slowdowns (14 + 3) / 10 and (13 + 4) / 10), while the run's own figures stay those of all
/// four jobs (waits 0, 10, 14 and 13).
#[test]
fn waits_of_one_group_are_the_windows() {
    let trace = hand_trace();
    let mut jobs = trace.workload.jobs().to_vec();
    let mut requests = trace.workload.requests().to_vec();
    for job in &mut jobs {
        job.set_user(Some(5));
    }
    for request in &mut requests {
        request.queue = Some(0);
    }
    let workload = placesim_core::Workload::new(jobs, requests).unwrap();
    let rows = |window_start: Option<u64>| {
        let cluster = Cluster::homogeneous(trace.procs, 1).unwrap();
        let sets = placesim_core::SetPartition::whole(&cluster);
        let mut sink = JobSink::new(&workload);
        let config = OccupancyConfig {
            window_start: window_start.map(placesim_core::SimTime),
            window_end: None,
            sample_every: None,
        };
        sink.measure(&sets, &cluster, config);
        let stats = simulate_watched(&workload, cluster, Some(&sets), &mut sink);
        let s = RunSummary::compute(hand_meta(4), &workload, &sink, &stats, 4, Vec::new(), None)
            .with_groups(&workload, &sink, &["short".to_owned()]);
        let run = (
            s.jobs_run,
            s.wait_mean_s,
            s.wait_median_s,
            s.wait_p95_s,
            s.bsd_mean,
        );
        let groups: Vec<(&str, String, u64, f64, f64, f64, f64)> = s
            .groups
            .iter()
            .map(|g| {
                (
                    g.by,
                    g.key.clone(),
                    g.jobs,
                    g.wait_mean_s,
                    g.wait_median_s,
                    g.wait_p95_s,
                    g.bsd_mean,
                )
            })
            .collect();
        (run, groups)
    };
    let whole = (4, 9.25, 11.5, 14.0, (1.0 + 1.5 + 1.7 + 1.7) / 4.0);
    let (run, groups) = rows(None);
    assert_eq!(run, whole);
    assert_eq!(
        groups,
        [
            ("user", "5".to_owned(), 4, 9.25, 11.5, 14.0, whole.4),
            ("queue", "short".to_owned(), 4, 9.25, 11.5, 14.0, whole.4),
        ]
    );
    let (run, groups) = rows(Some(1));
    assert_eq!(run, whole);
    let bsd = (1.7 + 1.7) / 2.0;
    assert_eq!(
        groups,
        [
            ("user", "5".to_owned(), 2, 13.5, 13.5, 14.0, bsd),
            ("queue", "short".to_owned(), 2, 13.5, 13.5, 14.0, bsd),
        ]
    );
}

/// A reservation with a queue of its own, on the hand trace's 4 one-ncpu vnodes: R1 holds
/// vnodes 2 and 3 over [0, 12) and J1 (size 2, 10 s) runs inside it from 0; reservations.parquet
/// lists both reservations in order of start with their vnodes and the jobs inside, the kill
/// at the reservation's end reaches events.parquet, and the deleted job summary.parquet; M2,
/// deleted before it opens, reads `deleted`.
#[test]
fn reservations_reach_their_table_and_the_summary() {
    use placesim_core::{Allocation, SimTime, SiteReservation, VnodeId};
    use placesim_metrics::{write_events, write_reservations, write_summary};
    use polars::prelude::{ParquetReader, SerReader};
    let trace = hand_trace();
    // J1 and J3 in R1's queue: J1 (2 ncpus, 10 s) inside from 0; J3 (1 ncpu, 3 s) too.
    let mut requests = trace.workload.requests().to_vec();
    let jobs = trace.workload.jobs().to_vec();
    let mut moved = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let mut request = requests[job.request.index()].clone();
        request.queue = [0, 2].contains(&i).then_some(0);
        moved.push(request);
    }
    requests.clear();
    let jobs: Vec<_> = jobs
        .into_iter()
        .enumerate()
        .map(|(i, mut j)| {
            j.request = placesim_core::RequestId(i as u32);
            j
        })
        .collect();
    let workload = placesim_core::Workload::new(jobs, moved).unwrap();
    let cluster = Cluster::homogeneous(4, 1).unwrap();
    let held = |vnodes: &[u32], sharing| {
        let mut a = Allocation::new(sharing);
        for &v in vnodes {
            a.push(VnodeId(v), &[1, 0, 0]);
        }
        std::sync::Arc::new(a)
    };
    let reservations = [
        SiteReservation {
            name: "M2".into(),
            start: SimTime(40),
            end: SimTime(50),
            allocation: held(&[0], placesim_core::Sharing::Excl),
            queue: None,
            access: Default::default(),
        },
        SiteReservation {
            name: "R1".into(),
            start: SimTime(0),
            end: SimTime(12),
            allocation: held(&[2, 3], placesim_core::Sharing::Shared),
            queue: Some(0),
            access: Default::default(),
        },
    ];
    let mut sink = JobSink::new(&workload);
    sink.keep_reservations(&cluster, &reservations);
    let mut policy = placesim_policy::queue::InReservations::new(
        Discipline::Fcfs.build(),
        placesim_policy::placement::FirstFit::default(),
    );
    let stats = Replay::on(&workload, cluster)
        .reservations(&reservations)
        .reservation_deletions(&[(SimTime(5), "M2".into())])
        .run(&mut policy, &mut sink);
    let meta = hand_meta(4);
    let summary = RunSummary::compute(meta.clone(), &workload, &sink, &stats, 4, Vec::new(), None);
    let dir = placesim_testkit::tempdir().unwrap();
    write_reservations(dir.path(), &meta, &workload, &sink).unwrap();
    write_events(dir.path(), &meta, &workload, &sink).unwrap();
    write_summary(dir.path(), &summary).unwrap();
    let read = |name: &str| {
        ParquetReader::new(std::fs::File::open(dir.path().join(name)).unwrap())
            .finish()
            .unwrap()
    };
    let table = read("reservations.parquet");
    let strings = |name: &str| -> Vec<String> {
        table
            .column(name)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s.unwrap_or("").to_owned())
            .collect()
    };
    assert_eq!(strings("reservation"), ["R1", "M2"]);
    // M2 was deleted (the timeline's `rdel` at 5) before its window.
    assert_eq!(strings("state"), ["confirmed", "deleted"]);
    assert_eq!(
        strings("vnodes"),
        ["(node2:ncpus=1)+(node3:ncpus=1)", "(node0:ncpus=1)"]
    );
    // J1 (2 ncpus) fills R1 until 10; J3 (submitted at 1) starts then and is killed at 12.
    assert_eq!(strings("jobs"), ["1,3", ""]);
    let exclusive = bools(&table, "exclusive");
    assert_eq!(exclusive, [Some(false), Some(true)]);
    let events = read("events.parquet");
    let texts: Vec<Option<&str>> = events
        .column("text")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert!(
        texts.contains(&Some("killed at the end of its reservation")),
        "{texts:?}"
    );
    assert_eq!(summary.jobs_deleted, 0);
    // The site's events, without a job: R1's window, and M2's deletion (its window, deleted
    // before it opened, is not reported).
    let site = site_rows(&events);
    assert_eq!(
        site,
        [
            (0, "reservation start".to_owned(), "R1".to_owned()),
            (5, "reservation deleted".to_owned(), "M2".to_owned()),
            (12, "reservation end".to_owned(), "R1".to_owned()),
        ]
    );
}

/// A Moab reservation on the hand trace's vnodes 2 and 3 over [0, 20) for user 1: it holds
/// nothing, so its row is not exclusive and carries its ACL; user 1's jobs take its vnodes
/// first (positive affinity) and are listed inside it, while user 2's J3 is kept off them.
#[test]
fn moab_reservations_list_the_jobs_their_acl_let_in() {
    use placesim_core::{
        Acl, AclEntry, AclModifier, Affinity, Allocation, Credential, ReservationAccess, SimTime,
        SiteReservation, VnodeId,
    };
    use placesim_metrics::write_reservations;
    use polars::prelude::{ParquetReader, SerReader};
    let trace = hand_trace();
    let mut jobs = trace.workload.jobs().to_vec();
    jobs[2].set_user(Some(2));
    let workload = placesim_core::Workload::new(jobs, trace.workload.requests().to_vec()).unwrap();
    let cluster = Cluster::homogeneous(4, 1).unwrap();
    let mut allocation = Allocation::new(placesim_core::Sharing::Shared);
    for v in [2, 3] {
        allocation.push(VnodeId(v), &[1, 0, 0]);
    }
    let reservations = [SiteReservation {
        name: "daytime".into(),
        start: SimTime(0),
        end: SimTime(20),
        allocation: std::sync::Arc::new(allocation),
        queue: None,
        access: ReservationAccess::Acl {
            acl: std::sync::Arc::new(Acl {
                entries: vec![AclEntry {
                    credential: Credential::User(1),
                    modifier: AclModifier::Plain,
                    affinity: Affinity::Positive,
                }],
                text: "USER==1".into(),
            }),
            known_from: SimTime(0),
        },
    }];
    let mut sink = JobSink::new(&workload);
    sink.keep_reservations(&cluster, &reservations);
    sink.keep_exec_vnodes(&cluster);
    let mut fcfs = Discipline::Fcfs.build();
    Replay::on(&workload, cluster)
        .reservations(&reservations)
        .run(fcfs.as_mut(), &mut sink);
    let dir = placesim_testkit::tempdir().unwrap();
    let meta = hand_meta(4);
    write_reservations(dir.path(), &meta, &workload, &sink).unwrap();
    let table =
        ParquetReader::new(std::fs::File::open(dir.path().join("reservations.parquet")).unwrap())
            .finish()
            .unwrap();
    assert_eq!(strings(&table, "acl"), [Some("USER==1".to_owned())]);
    let exclusive = bools(&table, "exclusive");
    assert_eq!(exclusive, [Some(false)]);
    assert_eq!(strings(&table, "jobs"), [Some("1,2,4".to_owned())]);
    let jobs_run: Vec<Option<u64>> = table
        .column("jobs_run")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(jobs_run, [Some(3)]);
    // Where each job ran: user 1's on the reserved vnodes first; J3 (user 2) kept off them.
    let df = jobs_frame(&meta, &workload, &sink).unwrap();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        strings(&df, "exec_vnode"),
        vec![
            some("(node2:ncpus=1)+(node3:ncpus=1)"),
            some("(node2:ncpus=1)+(node3:ncpus=1)+(node0:ncpus=1)+(node1:ncpus=1)"),
            some("(node0:ncpus=1)"),
            some("(node2:ncpus=1)+(node3:ncpus=1)"),
        ]
    );
}

/// The site's other events reach events.parquet without a job, in time order among the jobs'
/// rows: a vnode going down and coming back (an outage of node3 over [3, 8)), and a
/// timeline's setting and cycle, each at its time; a note after the run's last instant is
/// not replayed.
#[test]
fn vnode_outages_and_timeline_notes_are_site_events() {
    use placesim_core::{Outage, SimTime, SiteEvent, VnodeId};
    use placesim_metrics::write_events;
    use polars::prelude::{ParquetReader, SerReader};
    let trace = hand_trace();
    let cluster = Cluster::homogeneous(4, 1).unwrap();
    let mut sink = JobSink::new(&trace.workload);
    let mut fcfs = Discipline::Fcfs.build();
    Replay::on(&trace.workload, cluster)
        .outages(
            &[Outage {
                vnode: VnodeId(3),
                down: SimTime(3),
                up: SimTime(8),
            }],
            placesim_core::NodeFailurePolicy::Requeue,
        )
        .site_notes(&[
            (
                SimTime(4),
                SiteEvent::Setting,
                "set server node_group_key = switch".into(),
            ),
            (SimTime(10), SiteEvent::Cycle, "cycle".into()),
            (SimTime(1000), SiteEvent::Cycle, "cycle".into()),
        ])
        .run(fcfs.as_mut(), &mut sink);
    let dir = placesim_testkit::tempdir().unwrap();
    write_events(dir.path(), &hand_meta(4), &trace.workload, &sink).unwrap();
    let events =
        ParquetReader::new(std::fs::File::open(dir.path().join("events.parquet")).unwrap())
            .finish()
            .unwrap();
    let site = site_rows(&events);
    assert_eq!(
        site,
        [
            (3, "vnode down", "node3"),
            (4, "setting", "set server node_group_key = switch"),
            (8, "vnode up", "node3"),
            (10, "cycle", "cycle"),
        ]
        .map(|(t, k, x)| (t, k.to_owned(), x.to_owned()))
    );
    let times: Vec<Option<u64>> = events
        .column("time_s")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .collect();
    assert!(times.is_sorted(), "{times:?}");
}

/// The rows of events.parquet about the site (no job): time, kind and text.
fn site_rows(events: &polars::prelude::DataFrame) -> Vec<(u64, String, String)> {
    let column = |name: &str| events.column(name).unwrap().clone();
    let (jobs, times, kinds, texts) = (
        column("job_id"),
        column("time_s"),
        column("kind"),
        column("text"),
    );
    let (jobs, times) = (jobs.u64().unwrap(), times.u64().unwrap());
    let (kinds, texts) = (kinds.str().unwrap(), texts.str().unwrap());
    (0..events.height())
        .filter(|&i| jobs.get(i).is_none())
        .map(|i| {
            (
                times.get(i).unwrap_or_default(),
                kinds.get(i).unwrap_or_default().to_owned(),
                texts.get(i).unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// jobs.parquet's `exec_vnode`, whose text the writer makes once per distinct allocation and
/// stores in a dictionary compressed with zstd, reads back as the table's own column, nulls
/// included, and the rest of the file (snappy) as the table.
/// - KTH-SP2 on 25 vnodes of 4 ncpus, where allocations repeat, over several row groups.
/// - 200 jobs of 200 sizes at once on one-ncpu vnodes: all differ.
/// - 149 jobs of 2 ncpus one after another on 8 vnodes, the same two vnodes each time, and
///   three jobs too big to ever start: nulls among repeats.
/// - 30 jobs of 20,000 vnodes or more, one after another: 10 MB of texts, which the
///   dictionary holds in several buffers, each compressed as a zstd frame of its own.
#[test]
fn exec_vnode_stored_as_a_zstd_dictionary_reads_back_as_the_table() {
    use polars::prelude::SerReader as _;
    let swf = |jobs: &[(u64, u64)]| {
        swf_trace(
            20_100,
            jobs.iter().map(|&(submit, size)| (submit, 10, size)),
        )
    };
    let kth = placesim_workload::load_trace(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/KTH-SP2-1996-2.1-cln.swf.gz"),
        &SwfOptions::default(),
        &ResourceDefs::default(),
    )
    .unwrap();
    let all_sizes = swf(&(1..=200).map(|size| (0, size)).collect::<Vec<_>>());
    let one_allocation = swf(&(0..152)
        .map(|i| (i * 100, if i % 50 == 7 { 9 } else { 2 }))
        .collect::<Vec<_>>());
    let big = swf(&(0..30).map(|i| (i * 100, 20_000 + i)).collect::<Vec<_>>());
    let cases = [
        (&kth, Cluster::homogeneous(kth.procs, 4).unwrap(), false),
        (&all_sizes, Cluster::homogeneous(20_100, 1).unwrap(), false),
        (&one_allocation, Cluster::homogeneous(8, 1).unwrap(), true),
        (&big, Cluster::homogeneous(20_100, 1).unwrap(), false),
    ];
    let mut stored_as = Vec::new();
    for (case, (trace, cluster, with_nulls)) in cases.into_iter().enumerate() {
        let mut sink = JobSink::new(&trace.workload);
        sink.keep_exec_vnodes(&cluster);
        let mut policy = Discipline::EASY.build();
        Replay::on(&trace.workload, cluster).run(policy.as_mut(), &mut sink);
        let meta = hand_meta(trace.procs);
        let dir = placesim_testkit::tempdir().unwrap();
        placesim_metrics::write_jobs(dir.path(), &meta, &trace.workload, &sink).unwrap();
        let path = dir.path().join("jobs.parquet");
        let read = polars::prelude::ParquetReader::new(std::fs::File::open(&path).unwrap())
            .finish()
            .unwrap();
        let table = jobs_frame(&meta, &trace.workload, &sink).unwrap();
        assert!(read.equals_missing(&table), "case {case}");
        let nulls = strings(&read, "exec_vnode")
            .iter()
            .filter(|e| e.is_none())
            .count();
        assert_eq!(nulls, if with_nulls { 3 } else { 0 }, "case {case}");
        let metadata =
            polars_parquet::read::_read_metadata(&mut std::fs::File::open(&path).unwrap()).unwrap();
        let mut groups = std::collections::BTreeSet::new();
        for group in &metadata.row_groups {
            let column = |name: &str| group.columns_under_root_iter(name).unwrap().next().unwrap();
            let exec = column("exec_vnode");
            groups.insert((
                format!("{:?}", exec.compression()),
                exec.dictionary_page_offset().is_some(),
            ));
            assert_eq!(format!("{:?}", column("submit_s").compression()), "Snappy");
        }
        stored_as.push(groups.into_iter().collect::<Vec<_>>());
    }
    let dictionary_zstd = vec![("Zstd".to_owned(), true)];
    assert_eq!(stored_as, vec![dictionary_zstd; 4]);
}
