//! The comparison as a terminal table and as one self-contained HTML file (inline CSS and
//! SVG, no scripts, no external resources).

use crate::compare::{Comparison, FIDELITY, METRICS, distinct};
use crate::svg::{self, Quantiles, Series, escape};
use std::fmt::Write as _;

/// The terminal table: one row per configuration, the metrics marked for the terminal, each
/// as mean ± 95 % CI half-width over its runs.
pub fn render_terminal(c: &Comparison) -> String {
    let shown: Vec<usize> = (0..METRICS.len())
        .filter(|&i| METRICS[i].terminal)
        .collect();
    let mut header = vec!["configuration".to_owned(), "runs".to_owned()];
    header.extend(shown.iter().map(|&i| METRICS[i].heading.to_owned()));
    let mut rows = vec![header];
    for r in &c.configs {
        let mut row = vec![r.config.clone(), r.runs.to_string()];
        row.extend(
            shown
                .iter()
                .map(|&i| r.metrics[i].format(METRICS[i].decimals)),
        );
        rows.push(row);
    }
    let mut widths = vec![0; rows[0].len()];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 {
                let _ = write!(out, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(out, "  {}{cell}", " ".repeat(pad));
            }
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Means over runs ± 95 % confidence half-widths (Student's t); the window's jobs and \
         integrals, see docs/output-schema.md."
    );
    for (config, figures) in &c.fidelity {
        let shown: Vec<String> = FIDELITY
            .iter()
            .zip(figures)
            .filter(|(m, _)| m.terminal)
            .map(|(m, v)| format!("{} {}", m.heading, v.format(m.decimals)))
            .collect();
        let _ = writeln!(out, "Against the record, {config}: {}", shown.join("; "));
    }
    for (config, keys) in &c.agreement {
        let shown: Vec<String> = keys
            .iter()
            .map(|(key, v)| format!("{key} {}", v.format(3)))
            .collect();
        let _ = writeln!(out, "Same set by key, {config}: {}", shown.join("; "));
    }
    out
}

/// How close each measured configuration came to what really happened.
fn fidelity_table(out: &mut String, c: &Comparison) {
    if c.fidelity.is_empty() {
        return;
    }
    out.push_str(
        "<h2>How close the replay comes</h2><p class=\"note\">Each run measured against what \
         really happened (the import's recorded.tsv): start error = simulated − recorded start; \
         the wait MAPE compares two-week moving averages; same vnodes and same set are shares \
         of the compared jobs (docs/import.md).</p><div class=\"scroll\"><table><tr>\
         <th>configuration</th>",
    );
    for m in &FIDELITY {
        let _ = write!(out, "<th>{}</th>", escape(m.heading));
    }
    out.push_str("</tr>");
    for (config, figures) in &c.fidelity {
        let _ = write!(out, "<tr><td>{}</td>", escape(config));
        for (m, v) in FIDELITY.iter().zip(figures) {
            let _ = write!(out, "<td>{}</td>", escape(&v.format(m.decimals)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    agreement_table(out, c);
}

/// Each measured configuration's share of jobs placed in the set they really ran in, under
/// every key that forms sets (agreement.parquet).
fn agreement_table(out: &mut String, c: &Comparison) {
    let mut keys: Vec<&str> = Vec::new();
    for (_, per_key) in &c.agreement {
        for (key, _) in per_key {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
    }
    if keys.is_empty() {
        return;
    }
    out.push_str(
        "<p class=\"note\">Same set by key: of the compared jobs that really ran inside one set \
         of a key, the share the run placed inside that same set (agreement.parquet).</p>\
         <div class=\"scroll\"><table><tr><th>configuration</th>",
    );
    for key in &keys {
        let _ = write!(out, "<th>{}</th>", escape(key));
    }
    out.push_str("</tr>");
    for (config, per_key) in &c.agreement {
        let _ = write!(out, "<tr><td>{}</td>", escape(config));
        for key in &keys {
            let cell = per_key
                .iter()
                .find(|(k, _)| k == key)
                .map_or_else(|| "-".to_owned(), |(_, v)| v.format(3));
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;\
color:#222;line-height:1.4}h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.8em;\
border-bottom:1px solid #ddd}table{border-collapse:collapse;font-size:12px}\
td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}\
th{background:#f4f4f4;position:sticky;top:0}td:first-child,th:first-child{text-align:left}\
.scroll{overflow-x:auto}.note{color:#555;font-size:13px}figure{margin:1em 0}";

/// Work per hour and mean wait of each configuration against the first, with 95 % intervals.
fn headline_charts(out: &mut String, c: &Comparison) {
    let Some(first) = c.configs.first() else {
        return;
    };
    if c.configs.len() < 2 {
        return;
    }
    let _ = write!(
        out,
        "<h2>Against {}</h2><p class=\"note\">Each configuration's mean against the first's, in \
         percent; the whiskers are its 95 % interval, in percent of the first's mean.</p>",
        escape(&first.config)
    );
    for (column, title) in [
        (
            placesim_metrics::schema::summary::WORK_CORE_HOURS_PER_HOUR
                .def
                .name,
            "Work per hour (core-hours per hour of the window)",
        ),
        (
            placesim_metrics::schema::summary::WINDOW_WAIT_MEAN_S
                .def
                .name,
            "Mean wait",
        ),
    ] {
        out.push_str("<figure>");
        out.push_str(&svg::change_bars(title, &c.changes_against_first(column)));
        out.push_str("</figure>");
    }
}

/// One placement picture per configuration, over the same window, or a note saying how to get
/// them.
fn placement_pictures(out: &mut String, c: &Comparison) {
    out.push_str("<h2>Where jobs ran</h2>");
    let Some((_, first)) = c.pictures.first() else {
        out.push_str(
            "<p class=\"note\">The runs did not keep their vnodes: set <code>[metrics] \
             exec_vnode = true</code> (or <code>placesim run --exec-vnode</code>) to see \
             where jobs ran.</p>",
        );
        return;
    };
    let (w0, w1) = first.window;
    let _ = write!(
        out,
        "<p class=\"note\">Each configuration's first run, from {w0} s to {w1} s of \
         simulated time (by default the busiest day of the first configuration; \
         <code>placesim report --window START..END</code> picks another). Each row is a \
         vnode, grouped by set (with its mean speed); each job is a bar on its vnodes \
         (<code>exec_vnode</code>) from its start to its end, in its set's colour, or red \
         when its vnodes lie in several sets.</p>"
    );
    for (config, picture) in &c.pictures {
        out.push_str("<figure>");
        out.push_str(&crate::picture::render(config, picture));
        out.push_str("</figure>");
    }
}

/// The self-contained HTML report.
pub fn render_html(c: &Comparison) -> String {
    let mut out = String::new();
    let title = format!("placesim report: {}", c.scenarios.join(", "));
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body><h1>{}</h1>",
        escape(&title),
        escape(&title)
    );
    let _ = write!(
        out,
        "<p class=\"note\">{} runs in {} configurations, read from <code>{}</code>. Each \
         figure is the mean over a configuration's runs (its replicates, each with its own \
         seed) ± the half-width of a 95 % confidence interval (Student's t); job statistics \
         cover the jobs submitted in each run's measurement window, system metrics are \
         integrals over it. Formulas: docs/output-schema.md.</p>",
        c.runs,
        c.configs.len(),
        escape(&c.root.display().to_string())
    );
    headline_charts(&mut out, c);
    out.push_str("<h2>Runs compared</h2><div class=\"scroll\"><table><tr><th>configuration</th><th>policy</th><th>runs</th>");
    for m in &METRICS {
        let _ = write!(out, "<th>{}</th>", escape(m.heading));
    }
    out.push_str("</tr>");
    for r in &c.configs {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            escape(&r.config),
            escape(&r.policy),
            r.runs
        );
        for (m, v) in METRICS.iter().zip(&r.metrics) {
            let _ = write!(out, "<td>{}</td>", escape(&v.format(m.decimals)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    fidelity_table(&mut out, c);
    placement_pictures(&mut out, c);
    for (i, (config, text)) in c.explained.iter().enumerate() {
        if i == 0 {
            out.push_str("<h2>Why the job waited</h2>");
        }
        let _ = write!(
            out,
            "<h3>{}</h3><pre>{}</pre>",
            escape(config),
            escape(text)
        );
    }
    let names: Vec<String> = c.configs.iter().map(|r| r.config.clone()).collect();
    let (panels, rests, colours) = split(&names);
    // One chart per panel (a sweep's first axis), one line per configuration in it.
    let charts = |title: &str, y_label: &str, lines: &[Vec<(f64, f64)>]| -> String {
        let mut html = String::new();
        for panel in distinct(&panels) {
            let series: Vec<Series> = (0..names.len())
                .filter(|&i| panels[i] == *panel)
                .map(|i| Series {
                    name: rests[i].clone(),
                    colour: colours[i],
                    points: lines[i].clone(),
                })
                .collect();
            let title = if panel.is_empty() {
                title.to_owned()
            } else {
                format!("{title}: {panel}")
            };
            html.push_str("<figure>");
            html.push_str(&svg::line_chart(
                &title,
                "days since the window start",
                y_label,
                &series,
                (0.0, 1.0),
            ));
            html.push_str("</figure>");
        }
        html
    };
    out.push_str("<h2>Utilization over time</h2>");
    out.push_str(&charts(
        "Share of ncpus held by jobs",
        "utilization",
        &c.utilization,
    ));
    out.push_str(
        "<p class=\"note\">Mean over a configuration's runs at each sample, then over \
         equal bins of time (at most 60 points a line, so that the lines read apart).</p>",
    );
    out.push_str("<h2>Fragmentation over time</h2>");
    out.push_str(&charts(
        "Φ = 1 − Σ f_k² / F² over the topology sets",
        "Φ",
        &c.fragmentation,
    ));
    out.push_str(
        "<p class=\"note\">Φ is undefined while no ncpu is free; such samples are left \
         out of the bins. Φ is 0 when every free ncpu lies in one set and grows as free \
         ncpus scatter over sets.</p>",
    );
    let classes = distinct(c.size_classes.iter().map(|r| r.size_class.clone()));
    for (label, pick, unit) in [
        ("Wait by job size class", 0, "wait (s) + 1, log scale"),
        (
            "Bounded slowdown by job size class",
            1,
            "bounded slowdown + 1, log scale",
        ),
    ] {
        let boxes: Vec<(String, Vec<Option<Quantiles>>)> = classes
            .iter()
            .map(|class| {
                let boxes = names
                    .iter()
                    .map(|config| {
                        c.size_classes
                            .iter()
                            .find(|r| &r.config == config && &r.size_class == class)
                            .map(|r| if pick == 0 { r.wait } else { r.bsd })
                    })
                    .collect();
                (class.clone(), boxes)
            })
            .collect();
        let _ = write!(out, "<h2>{label}</h2><figure>");
        out.push_str(&svg::box_panels(
            "Whiskers p10–p90, box p25–p75, bar median, dot mean (all jobs of all runs)",
            unit,
            &boxes,
            &names,
            &colours,
        ));
        out.push_str("</figure>");
    }
    group_waits(&mut out, c, &names);
    out.push_str("<h2>Sets spanned</h2><figure>");
    let parts = ["1 set", "2 sets", "3 sets", "4+ sets"].map(str::to_owned);
    let shares: Vec<(String, Vec<f64>)> = names
        .iter()
        .zip(&c.sets_spanned)
        .map(|(n, s)| (n.clone(), s.to_vec()))
        .collect();
    out.push_str(&svg::share_bars(
        "Share of jobs by the number of topology sets their vnodes span",
        &parts,
        &shares,
    ));
    out.push_str("</figure></body></html>\n");
    out
}

/// How many users the waits table shows: those with the most jobs in the first
/// configuration.
const USERS_SHOWN: usize = 12;

/// Mean wait by queue and by user (the users with the most jobs), one column per
/// configuration: a fairness effect beside the placement effects above.
fn group_waits(out: &mut String, c: &Comparison, names: &[String]) {
    if c.groups.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Waits by queue and by user</h2><p class=\"note\">Mean wait in hours of the jobs \
         the measurement window counts, averaged over runs; users with the most jobs in the \
         first configuration.</p>",
    );
    for by in ["queue", "user"] {
        let first = names.first().map_or("", String::as_str);
        let mut keys: Vec<(&str, f64)> = c
            .groups
            .iter()
            .filter(|g| g.by == by && g.config == first)
            .map(|g| (g.key.as_str(), g.jobs))
            .collect();
        if by == "user" {
            keys.sort_by(|a, b| b.1.total_cmp(&a.1));
            keys.truncate(USERS_SHOWN);
        }
        let _ = write!(
            out,
            "<div class=\"scroll\"><table><tr><th>{by}</th><th>jobs per run</th>"
        );
        for name in names {
            let _ = write!(out, "<th>{}</th>", escape(name));
        }
        out.push_str("</tr>");
        for (key, jobs) in keys {
            let _ = write!(out, "<tr><td>{}</td><td>{jobs:.0}</td>", escape(key));
            for name in names {
                let cell = c
                    .groups
                    .iter()
                    .find(|g| g.by == by && g.key == key && &g.config == name)
                    .map_or_else(String::new, |g| format!("{:.2}", g.wait_mean_s / 3600.0));
                let _ = write!(out, "<td>{cell}</td>");
            }
            out.push_str("</tr>");
        }
        out.push_str("</table></div>");
    }
}

/// Splits configuration names into a panel and the rest: when every name has two partitions
/// or more and the first takes several values (a sweep's first axis), the first partition is
/// the panel; otherwise there is one panel, `""`. Each rest gets a colour, the same in every
/// panel.
fn split(names: &[String]) -> (Vec<String>, Vec<String>, Vec<usize>) {
    let parts: Vec<Option<(&str, &str)>> = names.iter().map(|n| n.split_once(' ')).collect();
    let firsts: Vec<&str> = parts.iter().flatten().map(|p| p.0).collect();
    let several = firsts.iter().any(|f| *f != firsts[0]);
    let (panels, rests): (Vec<String>, Vec<String>) =
        if several && parts.iter().all(Option::is_some) {
            parts
                .iter()
                .flatten()
                .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                .unzip()
        } else {
            (vec![String::new(); names.len()], names.to_vec())
        };
    let mut distinct: Vec<&str> = Vec::new();
    let colours = rests
        .iter()
        .map(|r| match distinct.iter().position(|d| d == r) {
            Some(i) => i,
            None => {
                distinct.push(r);
                distinct.len() - 1
            }
        })
        .collect();
    (panels, rests, colours)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn the_first_axis_becomes_panels_and_the_rest_keeps_its_colour() {
        let names: Vec<String> = ["l=a p=x", "l=a p=y", "l=b p=x", "l=b p=y"]
            .map(String::from)
            .to_vec();
        let (panels, rests, colours) = split(&names);
        assert_eq!(panels, ["l=a", "l=a", "l=b", "l=b"]);
        assert_eq!(rests, ["p=x", "p=y", "p=x", "p=y"]);
        assert_eq!(colours, [0, 1, 0, 1]);
        let single: Vec<String> = ["easy", "fcfs"].map(String::from).to_vec();
        assert_eq!(split(&single).0, ["", ""]);
    }
}
