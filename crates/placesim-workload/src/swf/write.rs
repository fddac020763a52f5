//! Writing SWF, so that generated workloads can be read by any other simulator.

use super::{SwfHeader, SwfRecord};
use std::borrow::Borrow;
use std::io::{self, Write};

/// Writes the header comments (each as `; line`) and then one line per record. The records
/// may be borrowed from a list or made as they are written
/// ([`crate::generate::GeneratedJobs::records`]).
pub fn write_swf(
    out: &mut impl Write,
    header: &SwfHeader,
    records: impl IntoIterator<Item = impl Borrow<SwfRecord>>,
) -> io::Result<()> {
    for comment in &header.comments {
        writeln!(out, "; {comment}")?;
    }
    let mut line = String::new();
    for record in records {
        line.clear();
        record.borrow().push_line(&mut line);
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swf::SwfReader;

    /// A line is the 18 fields as `format!` writes them, floats included: fractions,
    /// integral values on both sides of 2^53, negative zero, NaN and the extremes.
    #[test]
    fn a_line_is_the_fields_as_format_writes_them() {
        let floats = [
            0.0,
            -0.0,
            -1.0,
            1.5,
            -2.25,
            8_999_999_999_999_999.0,
            9_007_199_254_740_993.0,
            1e21,
            -1e300,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
        ];
        let ints = [0, -1, 7, 10, -10, 99, i64::MAX, i64::MIN];
        for (k, &f) in floats.iter().enumerate() {
            let int = ints[k % ints.len()];
            let r = SwfRecord {
                job_number: int,
                submit_time: int / 3,
                avg_cpu_time: f,
                used_memory_kib: -f,
                think_time: ints[(k + 3) % ints.len()],
                ..Default::default()
            };
            let fields: Vec<String> = [
                r.job_number,
                r.submit_time,
                r.wait_time,
                r.run_time,
                r.allocated_procs,
            ]
            .iter()
            .map(i64::to_string)
            .chain(
                [r.avg_cpu_time, r.used_memory_kib]
                    .iter()
                    .map(f64::to_string),
            )
            .chain(
                [
                    r.requested_procs,
                    r.requested_time,
                    r.requested_memory_kib,
                    r.status,
                    r.user_id,
                    r.group_id,
                    r.executable,
                    r.queue,
                    r.partition,
                    r.preceding_job,
                    r.think_time,
                ]
                .iter()
                .map(i64::to_string),
            )
            .collect();
            let mut line = String::new();
            r.push_line(&mut line);
            assert_eq!(line, fields.join(" "), "{r:?}");
            assert_eq!(r.to_string(), line);
        }
    }

    #[test]
    fn written_records_read_back_identically() {
        let records = vec![
            SwfRecord {
                job_number: 1,
                submit_time: 0,
                run_time: 50,
                requested_procs: 4,
                requested_time: 60,
                status: 1,
                ..Default::default()
            },
            SwfRecord {
                job_number: 2,
                submit_time: 7,
                run_time: 5,
                avg_cpu_time: 1.5,
                allocated_procs: 2,
                requested_procs: -1,
                requested_time: -1,
                ..Default::default()
            },
        ];
        let header = SwfHeader {
            max_procs: Some(8),
            max_nodes: None,
            comments: vec!["MaxProcs: 8".into()],
        };
        let mut out = Vec::new();
        write_swf(&mut out, &header, &records).unwrap();
        let mut reader = SwfReader::new(&out[..], "mem.swf");
        let back: Vec<SwfRecord> = reader.by_ref().map(|r| r.unwrap().1).collect();
        assert_eq!(back, records);
        assert_eq!(reader.header(), &header);
    }
}
