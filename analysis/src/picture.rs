//! Where jobs ran: each vnode a row, grouped and labelled by its set, each job a bar on the
//! vnodes of its `exec_vnode` from its start to its end, in the colour of its set, or in the
//! colour of "spanned" when its vnodes lie in several. The picture a placement problem is
//! recognised by at a glance: jobs stretched across sets, idle holes no job fits, a set that
//! starves while another idles.

use crate::svg::{colour, escape};
use crate::{JobPlacement, ReportError, polars_err, read_columns};
use placesim_metrics::schema::vnodes;
use polars::prelude::*;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// One vnode of a run's cluster, as vnodes.parquet records it.
#[derive(Debug, Clone, PartialEq)]
pub struct VnodeInfo {
    /// Its name.
    pub name: String,
    /// Its set under the metrics' topology key (`""` without one).
    pub set: String,
    /// Its relative speed.
    pub speed: f64,
}

/// Reads a run's vnodes.parquet, in cluster order.
pub fn read_vnodes(path: &Path) -> Result<Vec<VnodeInfo>, ReportError> {
    let df = read_columns(
        path,
        &[vnodes::VNODE.name, vnodes::SET.name, vnodes::SPEED.name],
    )?;
    let read = || -> PolarsResult<Vec<VnodeInfo>> {
        let names = df.column(vnodes::VNODE.name)?.str()?.clone();
        let sets = df.column(vnodes::SET.name)?.str()?.clone();
        let speeds = df.column(vnodes::SPEED.name)?.f64()?.clone();
        Ok((0..df.height())
            .map(|i| VnodeInfo {
                name: names.get(i).unwrap_or("").to_owned(),
                set: sets.get(i).unwrap_or("").to_owned(),
                speed: speeds.get(i).unwrap_or(1.0),
            })
            .collect())
    };
    read().map_err(polars_err(path))
}

/// The vnodes an `exec_vnode` names, in its order: `(v1:ncpus=2)+(v2:ncpus=1)` gives v1, v2.
pub fn exec_vnodes(exec_vnode: &str) -> Vec<&str> {
    exec_vnode
        .split('+')
        .map(|chunk| {
            let chunk = chunk.trim().trim_start_matches('(').trim_end_matches(')');
            chunk.split(':').next().unwrap_or(chunk)
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// One bar of the picture: a job on one vnode over part of the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    /// The job's number in the trace.
    pub job_id: u64,
    /// The vnode's row, an index into [`Picture::rows`].
    pub row: usize,
    /// From, seconds (the job's start, or the window's if later).
    pub from_s: u64,
    /// To, seconds (its end, or the window's if earlier).
    pub to_s: u64,
    /// The set of all its vnodes, or `None` when they lie in several: spanned.
    pub set: Option<usize>,
}

/// A run's placement over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// The window, seconds: [start, end).
    pub window: (u64, u64),
    /// The sets, in order of first appearance in cluster order, each with its mean speed.
    pub sets: Vec<(String, f64)>,
    /// The rows: each vnode's name and set (an index into `sets`), grouped by set.
    pub rows: Vec<(String, usize)>,
    /// The bars.
    pub bars: Vec<Bar>,
    /// Jobs in the window that ran but whose vnodes the run did not keep (`exec_vnode` off).
    pub without_vnodes: usize,
}

/// The picture of `placements` on `cluster` over `window` [start, end).
pub fn picture(cluster: &[VnodeInfo], placements: &[JobPlacement], window: (u64, u64)) -> Picture {
    // Sets in order of first appearance, found by name in a map: a cluster may have as many
    // sets as vnodes.
    let mut sets: Vec<(String, f64, usize)> = Vec::new();
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    let set_of: Vec<usize> = cluster
        .iter()
        .map(|v| {
            let i = *index_of.entry(v.set.as_str()).or_insert_with(|| {
                sets.push((v.set.clone(), 0.0, 0));
                sets.len() - 1
            });
            sets[i].1 += v.speed;
            sets[i].2 += 1;
            i
        })
        .collect();
    // Rows grouped by set, in cluster order within each.
    let mut order: Vec<usize> = (0..cluster.len()).collect();
    order.sort_by_key(|&v| set_of[v]);
    let rows: Vec<(String, usize)> = order
        .iter()
        .map(|&v| (cluster[v].name.clone(), set_of[v]))
        .collect();
    let row_of: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(row, (name, _))| (name.as_str(), row))
        .collect();
    let (w0, w1) = window;
    let mut bars = Vec::new();
    let mut without_vnodes = 0;
    for job in placements {
        let (Some(start), Some(end)) = (job.start_s, job.end_s) else {
            continue;
        };
        if end <= w0 || start >= w1 {
            continue;
        }
        let Some(exec) = &job.exec_vnode else {
            without_vnodes += 1;
            continue;
        };
        let job_rows: Vec<usize> = exec_vnodes(exec)
            .iter()
            .filter_map(|name| row_of.get(name).copied())
            .collect();
        let first_set = job_rows.first().map(|&r| rows[r].1);
        let set = first_set.filter(|&s| job_rows.iter().all(|&r| rows[r].1 == s));
        for row in job_rows {
            bars.push(Bar {
                job_id: job.job_id,
                row,
                from_s: start.max(w0),
                to_s: end.min(w1),
                set,
            });
        }
    }
    Picture {
        window,
        sets: sets
            .into_iter()
            .map(|(name, speed, n)| (name, speed / n.max(1) as f64))
            .collect(),
        rows,
        bars,
        without_vnodes,
    }
}

/// A day the cluster was busiest: of the 24-hour days (counted from the day of the first
/// start) on which some job started, the one holding the most vnode-seconds of jobs. Time is
/// swept once over the starts and ends, so a job of 10¹² s costs no more than one of a minute.
pub fn busiest_day(placements: &[JobPlacement]) -> (u64, u64) {
    const DAY: u64 = 86_400;
    let ran: Vec<(u64, u64, i128)> = placements
        .iter()
        .filter_map(|j| {
            let (start, end) = j.start_s.zip(j.end_s)?;
            let width = j
                .exec_vnode
                .as_deref()
                .map_or(1, |e| exec_vnodes(e).len().max(1)) as i128;
            Some((start, end.max(start), width))
        })
        .collect();
    let Some(first) = ran.iter().map(|r| r.0).min() else {
        return (0, DAY);
    };
    let origin = first / DAY * DAY;
    // The busy width changes at each start and end; `integral` holds ∫ width dt up to each.
    let mut changes: Vec<(u64, i128)> = ran
        .iter()
        .flat_map(|&(start, end, width)| [(start, width), (end, -width)])
        .collect();
    changes.sort_unstable();
    let mut integral: Vec<(u64, i128, i128)> = Vec::with_capacity(changes.len());
    let (mut at, mut width, mut total) = (0u64, 0i128, 0i128);
    for (t, delta) in changes {
        total += width * i128::from(t - at);
        width += delta;
        at = t;
        integral.push((t, total, width));
    }
    // ∫ width dt from 0 to t.
    let busy_until = |t: u64| -> i128 {
        let k = integral.partition_point(|&(time, _, _)| time <= t);
        match k.checked_sub(1).map(|k| integral[k]) {
            Some((time, total, width)) => total + width * i128::from(t - time),
            None => 0,
        }
    };
    let mut days: Vec<u64> = ran.iter().map(|r| (r.0 - origin) / DAY).collect();
    days.sort_unstable();
    days.dedup();
    let best = days
        .iter()
        .map(|&d| {
            let (d0, d1) = (origin + d * DAY, origin + (d + 1) * DAY);
            (busy_until(d1) - busy_until(d0), d)
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map_or(0, |(_, d)| d);
    (origin + best * DAY, origin + (best + 1) * DAY)
}

/// The colour of "spanned": a red that none of the sets' colours is.
pub const SPANNED: &str = "#C00000";

/// The picture as a self-contained `<svg>`: rows grouped and labelled by set (with its mean
/// speed), hours of the window across.
pub fn render(title: &str, p: &Picture) -> String {
    const WIDTH: f64 = 960.0;
    const LEFT: f64 = 120.0;
    const RIGHT: f64 = 16.0;
    const TOP: f64 = 28.0;
    const PLOT_HEIGHT: f64 = 300.0;
    let rows = p.rows.len().max(1) as f64;
    let row_h = PLOT_HEIGHT / rows;
    let height = TOP + PLOT_HEIGHT + 44.0;
    let (w0, w1) = p.window;
    let span = (w1.saturating_sub(w0)).max(1) as f64;
    let x = |t: u64| LEFT + (t.saturating_sub(w0)) as f64 / span * (WIDTH - LEFT - RIGHT);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{t}" font-family="system-ui, sans-serif" font-size="11"><text x="{LEFT}" y="18" font-size="14" font-weight="600">{t}</text>"#,
        t = escape(title)
    );
    // Set bands and labels.
    let mut first_row = 0;
    while first_row < p.rows.len() {
        let set = p.rows[first_row].1;
        let last = (first_row..p.rows.len())
            .take_while(|&r| p.rows[r].1 == set)
            .last()
            .unwrap_or(first_row);
        let y0 = TOP + first_row as f64 * row_h;
        let h = (last + 1 - first_row) as f64 * row_h;
        let (name, speed) = &p.sets[set];
        let label = if name.is_empty() { "(no set)" } else { name };
        let _ = write!(
            out,
            r##"<rect x="{LEFT}" y="{y0:.2}" width="{w:.2}" height="{h:.2}" fill="{c}" fill-opacity="0.07" stroke="#999" stroke-width="0.5"/><text x="{lx}" y="{ly:.2}" text-anchor="end" fill="{c}">{label} ×{speed:.2}</text>"##,
            w = WIDTH - LEFT - RIGHT,
            c = colour(set),
            lx = LEFT - 6.0,
            ly = y0 + h / 2.0 + 4.0,
            label = escape(label),
        );
        first_row = last + 1;
    }
    for bar in &p.bars {
        let fill = bar.set.map_or(SPANNED, colour);
        let _ = write!(
            out,
            r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{fill}" fill-opacity="0.85"><title>job {}</title></rect>"#,
            x(bar.from_s),
            TOP + bar.row as f64 * row_h + row_h * 0.1,
            (x(bar.to_s) - x(bar.from_s)).max(0.5),
            row_h * 0.8,
            bar.job_id
        );
    }
    // Hours across.
    let hours = (span / 3600.0).ceil() as u64;
    let step = (hours / 12).max(1);
    for h in (0..=hours).step_by(step as usize) {
        let t = w0 + h * 3600;
        if t > w1 {
            break;
        }
        let _ = write!(
            out,
            r##"<text x="{:.2}" y="{:.2}" text-anchor="middle" fill="#555">{h} h</text>"##,
            x(t),
            TOP + PLOT_HEIGHT + 16.0
        );
    }
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{ly:.2}" width="10" height="10" fill="{SPANNED}"/><text x="{tx}" y="{ty:.2}">spanned: vnodes in several sets</text><text x="{rx}" y="{ty:.2}" text-anchor="end" fill="#555">from {w0} s (simulated), {rows} vnodes</text></svg>"##,
        ly = TOP + PLOT_HEIGHT + 26.0,
        tx = LEFT + 14.0,
        ty = TOP + PLOT_HEIGHT + 35.0,
        rx = WIDTH - RIGHT,
        rows = p.rows.len(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, start: u64, end: u64, exec: &str) -> JobPlacement {
        JobPlacement {
            job_id: id,
            start_s: Some(start),
            end_s: Some(end),
            placement_set: None,
            exec_vnode: Some(exec.to_owned()),
            running_at_start: false,
        }
    }

    #[test]
    fn the_busiest_day_holds_the_most_vnode_seconds_and_long_jobs_cost_nothing() {
        const DAY: u64 = 86_400;
        let a = job(1, 0, 3_600, "(n1:ncpus=1)");
        let b = job(
            2,
            2 * DAY + 100,
            2 * DAY + 7_300,
            "(n1:ncpus=1)+(n2:ncpus=1)",
        );
        // 14,400 vnode-seconds on day 2 against 3,600 on day 0.
        assert_eq!(busiest_day(&[a.clone(), b.clone()]), (2 * DAY, 3 * DAY));
        // A job of 10¹² s from day 5 fills day 5.
        let c = job(3, 5 * DAY, 1_000_000_000_000, "(n3:ncpus=1)");
        assert_eq!(busiest_day(&[a, b, c]), (5 * DAY, 6 * DAY));
        assert_eq!(busiest_day(&[]), (0, DAY));
        assert_eq!(
            exec_vnodes("(n1:ncpus=2:mem=4gb)+(n2:ncpus=1)"),
            ["n1", "n2"]
        );
    }
}
