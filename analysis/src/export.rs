//! A run written back as PBS accounting logs (site-inputs.md §3), so that a simulated
//! schedule can be read by the tools a site already has, and so that `placesim import pbs`
//! can be checked against placesim itself: a run exported, imported and replayed under the
//! same settings gives the same schedule.

use crate::{ReportError, polars_err, read_columns};
use placesim_metrics::schema::jobs;
use polars::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// `MM/DD/YYYY hh:mm:ss` of an epoch second, in UTC: the stamp PBS writes in local time;
/// readers take times from the epoch fields, never from it.
fn stamp(epoch_s: u64) -> String {
    let days = (epoch_s / 86_400) as i64;
    let secs = epoch_s % 86_400;
    // Civil date from days since 1970-01-01 (Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{month:02}/{day:02}/{year:04} {}", hms(secs))
}

/// PBS's `hh:mm:ss` duration.
fn hms(seconds: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3_600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// The accounting records of the run in `run_dir` (its jobs.parquet): per job a `Q` at its
/// submission, an `S` at its start and an `E` at its end, times as `epoch_s` + simulated
/// seconds, in time order (at one second: ends, then submissions, then starts, each in job
/// order, as the simulation applies them). Jobs are `N.placesim` for job number N, users
/// `uU` and groups `gG` for the run's numbers, every job in `queue`; a job's select and place
/// are its request's, its walltime its estimate. A job killed at its walltime ends with
/// `Exit_status=-29` (PBS's walltime kill), one ended by a failed vnode with `-11`.
pub fn pbs_accounting(run_dir: &Path, epoch_s: u64, queue: &str) -> Result<String, ReportError> {
    let path = run_dir.join("jobs.parquet");
    let df = read_columns(
        &path,
        &[
            jobs::JOB_ID.name,
            jobs::SUBMIT_S.name,
            jobs::START_S.name,
            jobs::END_S.name,
            jobs::ESTIMATE_S.name,
            jobs::KILLED.name,
            jobs::FAILED.name,
            jobs::REQUEST.name,
            jobs::EXEC_VNODE.name,
            jobs::USER.name,
            jobs::GROUP.name,
            jobs::PROJECT.name,
        ],
    )?;
    let mut records = (|| -> PolarsResult<Vec<(u64, u8, u64, String)>> {
        let u64s = |name: &str| crate::u64_column(&df, name);
        let strs = |name: &str| crate::str_column(&df, name);
        let u32s = |name: &str| -> PolarsResult<Vec<Option<u32>>> {
            Ok(df.column(name)?.u32()?.iter().collect())
        };
        let bools = |name: &str| crate::bool_column(&df, name);
        let (ids, submits, starts, ends, estimates) = (
            u64s(jobs::JOB_ID.name)?,
            u64s(jobs::SUBMIT_S.name)?,
            u64s(jobs::START_S.name)?,
            u64s(jobs::END_S.name)?,
            u64s(jobs::ESTIMATE_S.name)?,
        );
        let (killed, failed) = (bools(jobs::KILLED.name)?, bools(jobs::FAILED.name)?);
        let (requests, execs, projects) = (
            strs(jobs::REQUEST.name)?,
            strs(jobs::EXEC_VNODE.name)?,
            strs(jobs::PROJECT.name)?,
        );
        let (users, groups) = (u32s(jobs::USER.name)?, u32s(jobs::GROUP.name)?);
        let mut out = Vec::with_capacity(3 * df.height());
        for i in 0..df.height() {
            let (Some(id), Some(submit)) = (ids[i], submits[i]) else {
                continue;
            };
            let name = |n: Option<u32>, prefix: &str| {
                n.map_or_else(|| "unknown".to_owned(), |n| format!("{prefix}{n}"))
            };
            let mut text = format!(
                "user={} group={}",
                name(users[i], "u"),
                name(groups[i], "g")
            );
            if let Some(p) = &projects[i] {
                let _ = write!(text, " project={p}");
            }
            let _ = write!(
                text,
                " jobname=job{id} queue={queue} ctime={0} qtime={0} etime={0}",
                epoch_s.saturating_add(submit)
            );
            let mut resources = String::new();
            for item in requests[i].as_deref().unwrap_or("").split_whitespace() {
                for key in ["select", "place"] {
                    if let Some(value) = item.strip_prefix(key).and_then(|v| v.strip_prefix('=')) {
                        let _ = write!(resources, " Resource_List.{key}={value}");
                    }
                }
            }
            if let Some(e) = estimates[i] {
                let _ = write!(resources, " Resource_List.walltime={}", hms(e));
            }
            out.push((submit, 1, id, format!("Q;{id}.placesim;{text}{resources}")));
            let Some(start) = starts[i] else { continue };
            let exec = execs[i].as_deref().unwrap_or("");
            let run = format!(
                "{text} start={} exec_vnode={exec}{resources}",
                epoch_s.saturating_add(start)
            );
            out.push((start, 2, id, format!("S;{id}.placesim;{run}")));
            if let Some(end) = ends[i] {
                let status = if killed[i] {
                    -29
                } else if failed[i] {
                    -11
                } else {
                    0
                };
                out.push((
                    end,
                    0,
                    id,
                    format!(
                        "E;{id}.placesim;{run} session=0 end={} Exit_status={status} run_count=1",
                        epoch_s.saturating_add(end)
                    ),
                ));
            }
        }
        Ok(out)
    })()
    .map_err(polars_err(&path))?;
    records.sort_by_key(|(t, kind, id, _)| (*t, *kind, *id));
    let mut text = String::with_capacity(records.iter().map(|r| r.3.len() + 21).sum());
    for (t, _, _, record) in records {
        let _ = writeln!(text, "{};{record}", stamp(epoch_s.saturating_add(t)));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_the_utc_calendar() {
        assert_eq!(stamp(0), "01/01/1970 00:00:00");
        assert_eq!(stamp(1_453_766_437), "01/26/2016 00:00:37");
        assert_eq!(stamp(1_709_164_800 + 3_661), "02/29/2024 01:01:01");
        assert_eq!(hms(3_661), "01:01:01");
        assert_eq!(hms(100 * 3_600), "100:00:00");
    }
}
