//! What really happened to a replayed workload's jobs (`recorded.tsv`, written by
//! `placesim import pbs`): per job its number in the replay, its arrival, its first and last
//! starts, its end and the vnodes it ran on, in the replay's simulated seconds. A run of an
//! imported scenario is measured against it (how close the replay comes).

use std::path::{Path, PathBuf};

/// One job as it really ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedJob {
    /// Its number in the replay (SWF field 1, `job_id` in jobs.parquet).
    pub job_id: u64,
    /// Its arrival (`ctime`), simulated seconds; negative before time 0.
    pub ctime_s: i64,
    /// Its first start, simulated seconds; negative for a job running when the logs begin.
    pub first_start_s: i64,
    /// Its end, if the logs have it.
    pub end_s: Option<i64>,
    /// The vnodes of its `exec_vnode`, each once, in written order.
    pub vnodes: Vec<String>,
    /// Its `exec_vnode` as written (`-` when the record has none).
    pub exec_vnode: String,
}

/// A line of a recorded file that is not what the format says.
#[derive(Debug, thiserror::Error)]
pub enum RecordedError {
    /// The file could not be read, or is not UTF-8 text.
    #[error(transparent)]
    Text(#[from] crate::TextError),
    /// The first line is not the header: without it, the fields' order is unknown, and a
    /// first line of data would be taken for a header and lost.
    #[error(
        "{}:1: expected the header `{}` (the fields separated by tabs), found `{found}`",
        path.display(),
        RECORDED_FIELDS.join("\\t")
    )]
    Header {
        /// The file.
        path: PathBuf,
        /// The first line, as an error message quotes a field.
        found: String,
    },
    /// A line is malformed.
    #[error("{}:{line}: field {field} ({name}): {message}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based field.
        field: usize,
        /// The field's name.
        name: &'static str,
        /// What was expected.
        message: String,
    },
    /// A job has two lines: one of them would be measured against, and the other lost.
    #[error("{}:{line}: job {job} has a line already, line {first}", path.display())]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// 1-based line of the second.
        line: usize,
        /// The job's number.
        job: u64,
        /// 1-based line of the first.
        first: usize,
    },
}

/// The header `placesim import pbs` writes, the fields in order.
pub const RECORDED_FIELDS: [&str; 7] = [
    "job",
    "pbs_id",
    "ctime_s",
    "first_start_s",
    "start_s",
    "end_s",
    "exec_vnode",
];

/// The vnode names of an `exec_vnode` (`(n1:ncpus=2)+(n2:ncpus=2+n3:mem=1gb)`), each once, in
/// written order; `-` or empty for none.
pub fn exec_vnode_names(exec_vnode: &str) -> Vec<String> {
    // A set for the names seen: a big job names thousands of vnodes.
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for part in exec_vnode.split('+') {
        let part = part.trim().trim_start_matches('(').trim_end_matches(')');
        let name = part.split(':').next().unwrap_or(part).trim();
        if !name.is_empty() && name != "-" && seen.insert(name) {
            out.push(name.to_owned());
        }
    }
    out
}

/// A field as an error message quotes it (control characters escaped, cut short).
fn shown(field: &str) -> String {
    crate::swf::shown(field.as_bytes())
}

/// Reads a recorded file: the header line, then one tab-separated line per job.
pub fn read_recorded(path: &Path) -> Result<Vec<RecordedJob>, RecordedError> {
    let text = crate::read_text(path)?;
    let mut lines = text.lines().enumerate();
    let header = lines.next().map_or("", |(_, line)| line);
    if header.split('\t').ne(RECORDED_FIELDS) {
        return Err(RecordedError::Header {
            path: path.to_owned(),
            found: shown(header),
        });
    }
    let mut out = Vec::new();
    // Each job's line, for a job given twice.
    let mut line_of: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let err = |field: usize, message: String| RecordedError::Field {
            path: path.to_owned(),
            line: i + 1,
            field: field + 1,
            name: RECORDED_FIELDS[field.min(RECORDED_FIELDS.len() - 1)],
            message,
        };
        if fields.len() != RECORDED_FIELDS.len() {
            return Err(err(
                fields.len().min(RECORDED_FIELDS.len() - 1),
                format!(
                    "expected {} tab-separated fields ({}), found {}",
                    RECORDED_FIELDS.len(),
                    RECORDED_FIELDS.join(", "),
                    fields.len()
                ),
            ));
        }
        let int = |k: usize| -> Result<i64, RecordedError> {
            fields[k].parse().map_err(|_| {
                err(
                    k,
                    format!("expected whole seconds, found `{}`", shown(fields[k])),
                )
            })
        };
        let job_id = fields[0].parse().map_err(|_| {
            err(
                0,
                format!("expected a job number, found `{}`", shown(fields[0])),
            )
        })?;
        if let Some(&first) = line_of.get(&job_id) {
            return Err(RecordedError::Duplicate {
                path: path.to_owned(),
                line: i + 1,
                job: job_id,
                first,
            });
        }
        line_of.insert(job_id, i + 1);
        out.push(RecordedJob {
            job_id,
            ctime_s: int(2)?,
            first_start_s: int(3)?,
            end_s: if fields[5] == "-" {
                None
            } else {
                Some(int(5)?)
            },
            vnodes: exec_vnode_names(fields[6]),
            exec_vnode: fields[6].to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_import_s_lines_and_names_a_bad_field() {
        let dir = placesim_testkit::tempdir().expect("a temporary directory");
        let path = dir.path().join("recorded.tsv");
        std::fs::write(
            &path,
            "job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n\
             1\t100.pbs\t-15600\t-5600\t-5600\t3600\t(n3:ncpus=2)\n\
             7\t106.pbs\t3000\t3100\t3100\t-\t(n1:ncpus=1)+(n1:ncpus=1+n2)\n",
        )
        .expect("the file");
        let jobs = read_recorded(&path).expect("read");
        assert_eq!(
            jobs[1],
            RecordedJob {
                job_id: 7,
                ctime_s: 3000,
                first_start_s: 3100,
                end_s: None,
                vnodes: vec!["n1".to_owned(), "n2".to_owned()],
                exec_vnode: "(n1:ncpus=1)+(n1:ncpus=1+n2)".to_owned(),
            }
        );
        let header = "job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n";
        std::fs::write(&path, format!("{header}1\tx\t0\tsoon\t0\t-\t-\n")).expect("the file");
        let e = read_recorded(&path).expect_err("a bad start");
        assert_eq!(
            e.to_string(),
            format!(
                "{}:2: field 4 (first_start_s): expected whole seconds, found `soon`",
                path.display()
            )
        );
    }

    /// A file that does not start with the header, a job given twice and a byte that is not
    /// UTF-8 are each refused where they are, rather than a line lost or taken twice.
    #[test]
    fn a_missing_header_a_job_twice_and_bytes_not_text_are_named() {
        let dir = placesim_testkit::tempdir().expect("a temporary directory");
        let path = dir.path().join("recorded.tsv");
        let header = "job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n";
        let line = |job: u32| format!("{job}\t{job}.pbs\t0\t10\t10\t20\t(n1:ncpus=1)\n");
        let refused = |bytes: &[u8]| {
            std::fs::write(&path, bytes).expect("the file");
            read_recorded(&path).expect_err("refused").to_string()
        };
        assert_eq!(
            refused(format!("{}{}", line(1), line(2)).as_bytes()),
            format!(
                "{}:1: expected the header `job\\tpbs_id\\tctime_s\\tfirst_start_s\\tstart_s\\tend_s\\texec_vnode` \
                 (the fields separated by tabs), found `1\\t1.pbs\\t0\\t10\\t10\\t20\\t(n1:ncpus=1)`",
                path.display()
            )
        );
        assert_eq!(
            refused(b""),
            format!(
                "{}:1: expected the header `job\\tpbs_id\\tctime_s\\tfirst_start_s\\tstart_s\\tend_s\\texec_vnode` \
                 (the fields separated by tabs), found ``",
                path.display()
            )
        );
        assert_eq!(
            refused(format!("{header}{}{}{}", line(1), line(2), line(1)).as_bytes()),
            format!("{}:4: job 1 has a line already, line 2", path.display())
        );
        let mut not_text = format!("{header}{}", line(1)).into_bytes();
        not_text.extend_from_slice(b"2\t2.pbs\t0\t\xff");
        assert_eq!(
            refused(&not_text),
            format!(
                "{}:3:11: expected UTF-8 text, found the byte 0xff",
                path.display()
            )
        );
        // With the header, the same lines read, each once.
        std::fs::write(
            &path,
            format!("{header}{}\r\n{}", line(1).trim_end(), line(2)),
        )
        .expect("the file");
        let jobs = read_recorded(&path).expect("read");
        assert_eq!(jobs.iter().map(|j| j.job_id).collect::<Vec<_>>(), [1, 2]);
    }
}
