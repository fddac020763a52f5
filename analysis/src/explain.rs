//! Why a job waited, read from one run's files: its request, where it ran, everything the
//! scheduler said about it (events.parquet) in time order with the site's events while it
//! waited, and the queue ahead of it when it first became a top job. What `placesim explain` prints, and what `report --explain` shows.

use crate::{
    ReportError, f64_column as f64s, polars_err, read_columns as read, str_column as strs,
    u64_column as u64s,
};
use placesim_metrics::schema::{events, jobs};
use polars::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// One event about the job: time, kind, text, estimated start.
type Said = (u64, String, Option<String>, Option<u64>);

/// The explanation of job `job_id` of the run in `run_dir`, as plain text.
pub fn explain(run_dir: &Path, job_id: u64) -> Result<String, ReportError> {
    let jobs_path = run_dir.join("jobs.parquet");
    let df = read(
        &jobs_path,
        &[
            jobs::SCENARIO.name,
            jobs::POLICY.name,
            jobs::SEED.name,
            jobs::JOB_ID.name,
            jobs::SUBMIT_S.name,
            jobs::START_S.name,
            jobs::END_S.name,
            jobs::REQUEST.name,
            jobs::PLACEMENT_SET.name,
            jobs::EXEC_VNODE.name,
            jobs::PRIORITY_AT_SUBMIT.name,
            jobs::PRIORITY_AT_START.name,
        ],
    )?;
    let table = (|| -> PolarsResult<_> {
        Ok((
            strs(&df, jobs::SCENARIO.name)?,
            strs(&df, jobs::POLICY.name)?,
            u64s(&df, jobs::SEED.name)?,
            u64s(&df, jobs::JOB_ID.name)?,
            u64s(&df, jobs::SUBMIT_S.name)?,
            u64s(&df, jobs::START_S.name)?,
            u64s(&df, jobs::END_S.name)?,
            strs(&df, jobs::REQUEST.name)?,
            strs(&df, jobs::PLACEMENT_SET.name)?,
            strs(&df, jobs::EXEC_VNODE.name)?,
        ))
    })()
    .map_err(polars_err(&jobs_path))?;
    let priorities = (|| -> PolarsResult<_> {
        Ok((
            f64s(&df, jobs::PRIORITY_AT_SUBMIT.name)?,
            f64s(&df, jobs::PRIORITY_AT_START.name)?,
        ))
    })()
    .map_err(polars_err(&jobs_path))?;
    let (scenario, policy, seed, ids, submits, starts, ends, requests, sets, execs) = table;
    let Some(me) = ids.iter().position(|&id| id == Some(job_id)) else {
        return Err(ReportError::NoJob {
            path: jobs_path,
            job_id,
        });
    };
    let submit = submits[me].unwrap_or(0);
    let events_path = run_dir.join("events.parquet");
    let ev = read(
        &events_path,
        &[
            events::JOB_ID.name,
            events::TIME_S.name,
            events::KIND.name,
            events::TEXT.name,
            events::ESTIMATED_START_S.name,
        ],
    )?;
    let said = (|| -> PolarsResult<Vec<Said>> {
        let (ids, times, kinds, texts, estimates) = (
            u64s(&ev, events::JOB_ID.name)?,
            u64s(&ev, events::TIME_S.name)?,
            strs(&ev, events::KIND.name)?,
            strs(&ev, events::TEXT.name)?,
            u64s(&ev, events::ESTIMATED_START_S.name)?,
        );
        // The site's events while it waited (no job: reservation windows, vnodes going down
        // and up, a timeline's entries) are part of why.
        let waited = submit..starts[me].unwrap_or(u64::MAX);
        Ok((0..ev.height())
            .filter(|&i| {
                ids[i] == Some(job_id)
                    || (ids[i].is_none() && times[i].is_some_and(|t| waited.contains(&t)))
            })
            .map(|i| {
                (
                    times[i].unwrap_or(0),
                    kinds[i].clone().unwrap_or_default(),
                    texts[i].clone(),
                    estimates[i],
                )
            })
            .collect())
    })()
    .map_err(polars_err(&events_path))?;
    let none = || "(none)".to_owned();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "job {job_id} of {} ({}, seed {})",
        scenario[me].clone().unwrap_or_default(),
        policy[me].clone().unwrap_or_default(),
        seed[me].unwrap_or(0)
    );
    let _ = writeln!(
        out,
        "  request:    {}",
        requests[me].clone().unwrap_or_else(none)
    );
    let _ = writeln!(out, "  submitted:  {submit} s");
    match (starts[me], ends[me]) {
        (Some(start), end) => {
            let _ = writeln!(
                out,
                "  started:    {start} s, after waiting {} s",
                start.saturating_sub(submit)
            );
            if let Some(end) = end {
                let _ = writeln!(out, "  ended:      {end} s");
            }
        }
        (None, _) => {
            let _ = writeln!(out, "  started:    never");
        }
    }
    let _ = writeln!(
        out,
        "  ran on:     {}",
        execs[me].clone().unwrap_or_else(|| {
            if starts[me].is_some() {
                "(not kept: run with [metrics] exec_vnode = true or --exec-vnode)".to_owned()
            } else {
                none()
            }
        })
    );
    let _ = writeln!(
        out,
        "  set:        {}",
        sets[me].clone().unwrap_or_else(none)
    );
    if let Some(first) = priorities.0[me] {
        let at_start = priorities.1[me].map_or_else(String::new, |p| format!(", {p:.2} at start"));
        let _ = writeln!(out, "  priority:   {first:.2} at submit{at_start}");
    }
    let _ = writeln!(
        out,
        "what the scheduler said, and what happened to the site while it waited, in time order:"
    );
    for (time, kind, text, estimate) in &said {
        let detail = match (estimate, text) {
            (Some(start), _) => format!(": start {start} s"),
            (None, Some(text)) => format!(": {text}"),
            (None, None) => String::new(),
        };
        let _ = writeln!(out, "  {time:>10} s  {kind}{detail}");
    }
    match said
        .iter()
        .find(|(_, kind, _, _)| kind == "top-job estimate")
    {
        None => {
            let _ = writeln!(out, "it never became a top job");
        }
        Some((at, _, _, _)) => {
            // Waiting at `at` and ahead of it in submit order.
            let mut ahead: Vec<(u64, u64)> = (0..ids.len())
                .filter(|&i| i != me)
                .filter_map(|i| Some((submits[i]?, ids[i]?, starts[i])))
                .filter(|&(s, id, start)| {
                    s <= *at && start.is_none_or(|st| st > *at) && (s, id) < (submit, job_id)
                })
                .map(|(s, id, _)| (s, id))
                .collect();
            ahead.sort_unstable();
            let list: Vec<String> = ahead
                .iter()
                .map(|(s, id)| format!("{id} (submitted {s} s)"))
                .collect();
            let _ = writeln!(
                out,
                "queue ahead of it when it first became a top job, at {at} s: {}",
                if list.is_empty() {
                    "none".to_owned()
                } else {
                    list.join(", ")
                }
            );
        }
    }
    Ok(out)
}
