//! Streaming SWF reader over plain or gzipped text.

use super::{FIELD_NAMES, SwfError, SwfErrorKind, SwfHeader, SwfRecord};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Opens a trace, transparently decompressing it if it starts with the gzip magic bytes.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>, SwfError> {
    let err = |kind| SwfError {
        path: path.to_owned(),
        line: None,
        kind,
    };
    let file = File::open(path).map_err(|e| err(SwfErrorKind::Open(e)))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let magic = reader.fill_buf().map_err(|e| err(SwfErrorKind::Open(e)))?;
    if magic.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::bufread::MultiGzDecoder::new(reader);
        Ok(Box::new(BufReader::with_capacity(1 << 16, gz)))
    } else {
        Ok(Box::new(reader))
    }
}

/// A decompressing reader over gzipped bytes held in memory (an embedded trace).
pub fn gunzip(bytes: &[u8]) -> impl std::io::Read + '_ {
    flate2::read::MultiGzDecoder::new(bytes)
}

/// Reads SWF job records one line at a time, collecting the header comments as it goes.
///
/// Yields `(line number, record)` for each job line, in file order. A malformed line yields an
/// error naming its line, and reading continues with the next line; a failure to read (corrupt
/// or truncated gzip data) yields one error and ends the iteration.
#[derive(Debug)]
pub struct SwfReader<R> {
    inner: R,
    path: PathBuf,
    line: u64,
    buf: Vec<u8>,
    header: SwfHeader,
    done: bool,
}

impl<R: BufRead> SwfReader<R> {
    /// A reader over `inner`; `path` names the source in errors.
    pub fn new(inner: R, path: impl Into<PathBuf>) -> Self {
        SwfReader {
            inner,
            path: path.into(),
            line: 0,
            buf: Vec::with_capacity(256),
            header: SwfHeader::default(),
            done: false,
        }
    }

    /// The header comments seen so far.
    pub fn header(&self) -> &SwfHeader {
        &self.header
    }

    /// The number of the last line read.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The path given at construction.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, kind: SwfErrorKind) -> SwfError {
        SwfError {
            path: self.path.clone(),
            line: Some(self.line),
            kind,
        }
    }

    fn header_line(&mut self, text: &str) {
        let text = text.trim();
        if let Some((key, value)) = text.split_once(':') {
            let leading: String = value
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let number = leading.parse::<u64>().ok();
            match key.trim() {
                "MaxProcs" if self.header.max_procs.is_none() => self.header.max_procs = number,
                "MaxNodes" if self.header.max_nodes.is_none() => self.header.max_nodes = number,
                _ => {}
            }
        }
        self.header.comments.push(text.to_owned());
    }
}

impl<R: BufRead> Iterator for SwfReader<R> {
    type Item = Result<(u64, SwfRecord), SwfError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            match self.inner.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => {}
                Err(source) => {
                    self.done = true;
                    let kind = SwfErrorKind::Read {
                        after_line: self.line,
                        source,
                    };
                    return Some(Err(SwfError {
                        path: self.path.clone(),
                        line: None,
                        kind,
                    }));
                }
            }
            self.line += 1;
            let Ok(text) = std::str::from_utf8(&self.buf) else {
                return Some(Err(self.error(SwfErrorKind::NotText)));
            };
            let trimmed = text.trim_start();
            if let Some(comment) = trimmed.strip_prefix(';') {
                let comment = comment.to_owned();
                self.header_line(&comment);
                continue;
            }
            if trimmed.trim_end().is_empty() {
                continue;
            }
            return Some(
                parse_record(trimmed)
                    .map(|r| (self.line, r))
                    .map_err(|k| self.error(k)),
            );
        }
        None
    }
}

/// Parses one job line of exactly 18 fields.
pub(crate) fn parse_record(text: &str) -> Result<SwfRecord, SwfErrorKind> {
    let mut ints = [0i64; 18];
    let mut floats = [0f64; 2];
    let mut n = 0;
    for token in text.split_ascii_whitespace() {
        if n < 18 {
            let field = n + 1;
            let name = FIELD_NAMES[n];
            // Fields 6 and 7 are per-processor averages and may be fractional.
            if field == 6 || field == 7 {
                floats[n - 5] = token
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| SwfErrorKind::NotANumber {
                        field,
                        name,
                        text: token.to_owned(),
                    })?;
            } else {
                ints[n] = parse_whole(token).map_err(|fraction| {
                    let text = token.to_owned();
                    if fraction {
                        SwfErrorKind::NotAnInteger { field, name, text }
                    } else {
                        SwfErrorKind::NotANumber { field, name, text }
                    }
                })?;
            }
        }
        n += 1;
    }
    if n != 18 {
        return Err(SwfErrorKind::FieldCount(n));
    }
    Ok(SwfRecord {
        job_number: ints[0],
        submit_time: ints[1],
        wait_time: ints[2],
        run_time: ints[3],
        allocated_procs: ints[4],
        avg_cpu_time: floats[0],
        used_memory_kib: floats[1],
        requested_procs: ints[7],
        requested_time: ints[8],
        requested_memory_kib: ints[9],
        status: ints[10],
        user_id: ints[11],
        group_id: ints[12],
        executable: ints[13],
        queue: ints[14],
        partition: ints[15],
        preceding_job: ints[16],
        think_time: ints[17],
    })
}

/// A whole number, accepting a zero fraction (`12.00`). `Err(true)` means a real fraction,
/// `Err(false)` not a number at all (or beyond 64 bits).
fn parse_whole(token: &str) -> Result<i64, bool> {
    if let Ok(v) = token.parse::<i64>() {
        return Ok(v);
    }
    match token.parse::<f64>() {
        Ok(x) if x.is_finite() && x.fract() != 0.0 => Err(true),
        Ok(x) if x.is_finite() && x.abs() < 9.0e18 && token.contains('.') => Ok(x as i64),
        _ => Err(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "1 0 5 100 4 142.00 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1";

    #[test]
    fn parses_all_fields_with_fractional_average() {
        let r = parse_record(LINE).unwrap();
        assert_eq!(r.job_number, 1);
        assert_eq!(r.run_time, 100);
        assert_eq!(r.avg_cpu_time, 142.0);
        assert_eq!(r.requested_time, 200);
        assert_eq!(r.user_id, 3);
        assert_eq!(r.think_time, -1);
    }

    #[test]
    fn rejects_fraction_in_whole_field() {
        let line = LINE.replacen("100", "100.5", 1);
        let err = parse_record(&line).unwrap_err();
        assert_eq!(
            err.to_string(),
            "field 4 (run time): expected a whole number, found `100.5`"
        );
    }

    #[test]
    fn reads_header_and_counts_lines() {
        let text =
            format!("; MaxNodes: 338 (batch partition; 512 total)\n;MaxProcs: 338\n\n  {LINE}\n");
        let mut reader = SwfReader::new(text.as_bytes(), "t.swf");
        let (line, _) = reader.next().unwrap().unwrap();
        assert_eq!(line, 4);
        assert_eq!(reader.header().max_nodes, Some(338));
        assert_eq!(reader.header().max_procs, Some(338));
        assert!(reader.next().is_none());
    }
}
