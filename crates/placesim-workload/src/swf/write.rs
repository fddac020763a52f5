//! Writing SWF, so that generated workloads can be read by any other simulator.

use super::{SwfHeader, SwfRecord};
use std::io::{self, Write};

/// Writes the header comments (each as `; line`) and then one line per record.
pub fn write_swf<'a>(
    out: &mut impl Write,
    header: &SwfHeader,
    records: impl IntoIterator<Item = &'a SwfRecord>,
) -> io::Result<()> {
    for comment in &header.comments {
        writeln!(out, "; {comment}")?;
    }
    for record in records {
        writeln!(out, "{record}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swf::SwfReader;

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
