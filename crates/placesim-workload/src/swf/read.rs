//! Streaming SWF reader over plain or gzipped text.

use super::{FIELD_NAMES, SwfError, SwfErrorKind, SwfHeader, SwfRecord};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Opens a trace, transparently decompressing it if it starts with the gzip magic bytes.
/// Decompression runs on a helper thread, overlapping with parsing.
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
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            Pipelined::spawn(gz),
        )))
    } else {
        Ok(Box::new(reader))
    }
}

/// Reads `inner` on a helper thread in large blocks, handing them over through a bounded
/// channel, so that decompression and parsing use two cores. Errors arrive in order.
struct Pipelined {
    blocks: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
}

impl Pipelined {
    const BLOCK: usize = 1 << 18;

    fn spawn(mut inner: impl std::io::Read + Send + 'static) -> Self {
        Self::fed(move |tx| {
            loop {
                let mut block = vec![0u8; Self::BLOCK];
                let mut filled = 0;
                let result = loop {
                    match inner.read(&mut block[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            filled += n;
                            if filled == block.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                block.truncate(filled);
                let end = filled < Self::BLOCK;
                if filled > 0 && tx.send(Ok(block)).is_err() {
                    return;
                }
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                    return;
                }
                if end {
                    return;
                }
            }
        })
    }

    /// A reader of the blocks `feed` sends, run on a helper thread; it ends when `feed`
    /// returns (or, at its first failure to send, when the reader has been dropped). A
    /// `feed` that panics ends it with an error, not with what looks like the end of the text.
    fn fed(feed: impl FnOnce(Blocks) + Send + 'static) -> Self {
        let (tx, blocks) = std::sync::mpsc::sync_channel(4);
        std::thread::spawn(move || {
            let own = tx.clone();
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| feed(own))).is_err() {
                let _ = tx.send(Err(std::io::Error::other("the reading thread failed")));
            }
        });
        Pipelined {
            blocks,
            current: Vec::new(),
            pos: 0,
        }
    }
}

/// Where a helper thread sends the blocks a [`Pipelined`] reads.
type Blocks = std::sync::mpsc::SyncSender<std::io::Result<Vec<u8>>>;

/// The SWF text [`super::write_swf`] writes of `header` and `records`, written on a helper
/// thread while it is read, so that writing the text and reading it take two cores rather than
/// one after the other: the definition [`super::convert::read_written`] reads generated
/// records by, and the way it takes for records whose text it does not read the same.
pub fn written_swf(header: super::SwfHeader, records: Vec<super::SwfRecord>) -> impl BufRead {
    let text = Pipelined::fed(move |tx| {
        let mut out = BlockWriter {
            tx,
            block: Vec::with_capacity(Pipelined::BLOCK),
        };
        // Writing to memory cannot fail; a failure to send means the reader is gone.
        if super::write_swf(&mut out, &header, &records).is_ok() {
            let _ = out.send();
        }
    });
    BufReader::with_capacity(1 << 16, text)
}

/// Text written in blocks of [`Pipelined::BLOCK`], each sent as it fills.
struct BlockWriter {
    tx: Blocks,
    block: Vec<u8>,
}

impl BlockWriter {
    /// Sends the block so far, if any; fails once the reader is gone.
    fn send(&mut self) -> std::io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let block = std::mem::replace(&mut self.block, Vec::with_capacity(Pipelined::BLOCK));
        self.tx
            .send(Ok(block))
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }
}

impl std::io::Write for BlockWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.block.extend_from_slice(bytes);
        if self.block.len() >= Pipelined::BLOCK {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Read for Pipelined {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.current.len() {
            match self.blocks.recv() {
                Ok(Ok(block)) => {
                    self.current = block;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len() - self.pos);
        out[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A decompressing reader over gzipped bytes held in memory (an embedded trace), decompressing
/// on a helper thread.
pub fn gunzip(bytes: &'static [u8]) -> impl std::io::Read {
    Pipelined::spawn(flate2::read::MultiGzDecoder::new(bytes))
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
    /// Where the last job line's fields after the 18th begin in `buf`, if it has any.
    extra: Option<usize>,
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
            extra: None,
        }
    }

    /// The fields after the 18th of the job line just read (extended SWF: the nodes a job
    /// used, its queue's name, its original node spec), as text; `None` without any, or if
    /// they are not UTF-8.
    pub fn extra_fields(&self) -> Option<&str> {
        let from = self.extra?;
        std::str::from_utf8(self.buf.get(from..)?)
            .ok()
            .map(str::trim_end)
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
}

impl super::SwfHeader {
    /// Takes in a header comment as the reader reads it (the text after `;`): trimmed, and
    /// the machine's size from `MaxProcs:` or `MaxNodes:`, the first of each.
    pub(crate) fn note_comment(&mut self, text: &str) {
        let text = text.trim();
        if let Some((key, value)) = text.split_once(':') {
            let leading: String = value
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let number = leading.parse::<u64>().ok();
            match key.trim() {
                "MaxProcs" if self.max_procs.is_none() => self.max_procs = number,
                "MaxNodes" if self.max_nodes.is_none() => self.max_nodes = number,
                _ => {}
            }
        }
        self.comments.push(text.to_owned());
    }
}

/// The ranges [`parse_extended`] holds a line's fields to, asked of a record already in
/// memory.
pub(crate) fn check_record_ranges(r: &SwfRecord) -> Result<(), SwfErrorKind> {
    check_ranges(&r.fields().map(|field| match field {
        super::Field::Int(v) => v,
        super::Field::Float(_) => 0,
    }))
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
            let start = self
                .buf
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(self.buf.len());
            let line = &self.buf[start..];
            if line.is_empty() {
                continue;
            }
            if line[0] == b';' {
                let Ok(comment) = std::str::from_utf8(&line[1..]) else {
                    return Some(Err(self.error(SwfErrorKind::NotText)));
                };
                let comment = comment.to_owned();
                self.header.note_comment(&comment);
                continue;
            }
            let offset = start;
            return Some(
                parse_extended(line)
                    .map(|(r, extra)| {
                        self.extra = extra.map(|e| offset + e);
                        (self.line, r)
                    })
                    .map_err(|k| self.error(k)),
            );
        }
        None
    }
}

/// Parses one job line of at least 18 whitespace-separated fields (see [`parse_extended`]).
#[cfg(test)]
pub(crate) fn parse_record(line: &[u8]) -> Result<SwfRecord, SwfErrorKind> {
    parse_extended(line).map(|(record, _)| record)
}

/// Parses one job line: 18 whitespace-separated fields, then any number of fields archives
/// and simulators add (the nodes a job used, its queue's name, its original node spec),
/// which are not read here: their byte offset in the line comes back beside the record.
///
/// Each field is scanned once ([`scan_field`]): plain integers (nearly every SWF field) are
/// read eight digits at a time while scanning; anything else (a fraction, an error) takes the
/// general path on the token. The three runs of fields (integers, the two per-processor
/// averages, integers) are separate loops, so that no field asks which kind it is. Parsing
/// was most of reading a plain-text trace (2,200 instructions a line of psets-bench's). The
/// tests hold it to its plain definition, a byte-by-byte scan, on lines of every shape.
pub(crate) fn parse_extended(line: &[u8]) -> Result<(SwfRecord, Option<usize>), SwfErrorKind> {
    let mut ints = [0i64; 18];
    let mut floats = [0f64; 2];
    let mut rest = line;
    for (n, slot) in ints.iter_mut().enumerate().take(5) {
        let (value, token) = scan_field(&mut rest).ok_or(SwfErrorKind::FieldCount(n))?;
        *slot = match value {
            Some(v) => v,
            None => parse_whole_field(n, token)?,
        };
    }
    // Fields 6 and 7 are per-processor averages and may be fractional.
    for (k, slot) in floats.iter_mut().enumerate() {
        let n = 5 + k;
        let (value, token) = scan_field(&mut rest).ok_or(SwfErrorKind::FieldCount(n))?;
        *slot = match value {
            Some(v) => v as f64,
            None => parse_decimal(token).ok_or_else(|| not_a_number(n, token))?,
        };
    }
    for (n, slot) in ints.iter_mut().enumerate().skip(7) {
        let (value, token) = scan_field(&mut rest).ok_or(SwfErrorKind::FieldCount(n))?;
        *slot = match value {
            Some(v) => v,
            None => parse_whole_field(n, token)?,
        };
    }
    let blanks = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let extra_from = (blanks < rest.len()).then(|| line.len() - rest.len() + blanks);
    check_ranges(&ints)?;
    Ok((record_of(&ints, &floats), extra_from))
}

/// Times and sizes the simulator adds and multiplies must leave room: no real trace comes
/// near these.
fn check_ranges(ints: &[i64; 18]) -> Result<(), SwfErrorKind> {
    for (n, max) in [
        (1, MAX_SECONDS),
        (3, MAX_SECONDS),
        (8, MAX_SECONDS),
        (4, MAX_PROCS),
        (7, MAX_PROCS),
    ] {
        if ints[n] > max {
            return Err(SwfErrorKind::OutOfRange {
                field: n + 1,
                name: FIELD_NAMES[n],
                value: ints[n],
                max,
            });
        }
    }
    Ok(())
}

/// The record of a line's 18 fields.
fn record_of(ints: &[i64; 18], floats: &[f64; 2]) -> SwfRecord {
    SwfRecord {
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
    }
}

/// The next whitespace-separated token of `rest`, which moves past it; `None` at the end of
/// the line. With the token comes its value when it is plain: an optional `-` and 1 to 18
/// digits (more could overflow, and go the general way).
#[inline(always)]
fn scan_field<'a>(rest: &mut &'a [u8]) -> Option<(Option<i64>, &'a [u8])> {
    let blanks = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let token_start = &rest[blanks..];
    let first = *token_start.first()?;
    let negative = first == b'-';
    let unsigned = &token_start[usize::from(negative)..];
    let (value, digits) = leading_digits(unsigned);
    let after = &unsigned[digits..];
    let plain = digits > 0 && after.first().is_none_or(|b| b.is_ascii_whitespace());
    let end = if plain {
        token_start.len() - after.len()
    } else {
        token_start
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(token_start.len())
    };
    *rest = &token_start[end..];
    let value = plain.then_some(if negative { -value } else { value });
    Some((value, &token_start[..end]))
}

/// The value of the run of ASCII digits that `bytes` starts with, up to 18 of them, and how
/// many there are. Eight bytes are read at once where the line has them: the digits among
/// them are found and combined by arithmetic on one 64-bit word.
#[inline(always)]
fn leading_digits(bytes: &[u8]) -> (i64, usize) {
    let mut value: u64 = 0;
    let mut digits = 0;
    // Two words cover 16 of the 18 digits; the rest, and a line's last bytes, one by one.
    for _ in 0..2 {
        let Some(word) = bytes[digits..].first_chunk::<8>() else {
            break;
        };
        let (chunk, count) = eight_digits(u64::from_le_bytes(*word));
        value = value * POWERS_OF_TEN[count] + chunk;
        digits += count;
        if count < 8 {
            return (value as i64, digits);
        }
    }
    for &b in &bytes[digits..] {
        let d = b.wrapping_sub(b'0');
        if d >= 10 || digits == MAX_PLAIN_DIGITS {
            break;
        }
        value = value * 10 + u64::from(d);
        digits += 1;
    }
    (value as i64, digits)
}

/// The most digits a plain field has: more could overflow.
const MAX_PLAIN_DIGITS: usize = 18;

/// 10 to the power of a chunk's digit count, 0 to 8.
const POWERS_OF_TEN: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Of eight bytes (the first in the lowest byte of `word`): the value of the digits they start
/// with, and how many those are (0 to 8).
#[inline(always)]
fn eight_digits(word: u64) -> (u64, usize) {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    // Each byte less '0'. A byte below '0' wraps (its high bit set) and borrows from the byte
    // after it, one above '9' is 10 or more: adding 0x76 sets the high bit of every byte from
    // 10 to 0x7f. Borrows and carries only reach bytes after the first that is not a digit,
    // and only the digits before it are read.
    let values = word.wrapping_sub(ZEROS);
    let not_digit = (values | values.wrapping_add(0x7676_7676_7676_7676)) & HIGH_BITS;
    let count = (not_digit.trailing_zeros() / 8) as usize;
    if count == 0 {
        return (0, 0);
    }
    // The digits moved to the high bytes, zeros below them as leading digits, then summed
    // pairwise: two digits per 16 bits, four per 32, eight in all.
    let mut v = (values & 0x0f0f_0f0f_0f0f_0f0f) << (8 * (8 - count));
    v = (v.wrapping_mul(10 << 8 | 1) >> 8) & 0x00ff_00ff_00ff_00ff;
    v = (v.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_ffff_0000_ffff;
    v = v.wrapping_mul(10_000 << 32 | 1) >> 32;
    (v, count)
}

/// [`parse_extended`]'s plain definition, which the tests hold it to: each token scanned byte
/// by byte, in one loop over all the fields.
#[cfg(test)]
fn parse_extended_reference(line: &[u8]) -> Result<(SwfRecord, Option<usize>), SwfErrorKind> {
    let mut extra_from = None;
    let mut ints = [0i64; 18];
    let mut floats = [0f64; 2];
    let mut n = 0;
    let mut rest = line;
    loop {
        // Skip blanks; slice patterns keep the loops free of bounds checks.
        while let [b, tail @ ..] = rest {
            if !b.is_ascii_whitespace() {
                break;
            }
            rest = tail;
        }
        if rest.is_empty() {
            break;
        }
        let token_start = rest;
        if n == 18 {
            extra_from = Some(line.len() - rest.len());
        }
        let negative = rest[0] == b'-';
        if negative {
            rest = &rest[1..];
        }
        let mut value: i64 = 0;
        let mut digits = 0usize;
        while let [b, tail @ ..] = rest {
            let d = b.wrapping_sub(b'0');
            if d >= 10 || digits == 18 {
                break;
            }
            value = value * 10 + i64::from(d);
            digits += 1;
            rest = tail;
        }
        let plain = digits > 0 && rest.first().is_none_or(|b| b.is_ascii_whitespace());
        if !plain {
            while let [b, tail @ ..] = rest {
                if b.is_ascii_whitespace() {
                    break;
                }
                rest = tail;
            }
        }
        if n < 18 {
            let value = if negative { -value } else { value };
            let token = &token_start[..token_start.len() - rest.len()];
            if n == 5 || n == 6 {
                // Fields 6 and 7 are per-processor averages and may be fractional.
                floats[n - 5] = if plain {
                    value as f64
                } else {
                    parse_decimal(token).ok_or_else(|| not_a_number(n, token))?
                };
            } else {
                ints[n] = if plain {
                    value
                } else {
                    parse_whole_field(n, token)?
                };
            }
        }
        n += 1;
    }
    if n < 18 {
        return Err(SwfErrorKind::FieldCount(n));
    }
    // Times and sizes the simulator adds and multiplies must leave room: no real trace comes
    // near these.
    for (n, max) in [
        (1, MAX_SECONDS),
        (3, MAX_SECONDS),
        (8, MAX_SECONDS),
        (4, MAX_PROCS),
        (7, MAX_PROCS),
    ] {
        if ints[n] > max {
            return Err(SwfErrorKind::OutOfRange {
                field: n + 1,
                name: FIELD_NAMES[n],
                value: ints[n],
                max,
            });
        }
    }
    let record = SwfRecord {
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
    };
    Ok((record, extra_from))
}

/// The largest submit, run or requested time accepted: 2^40 s, about 34,800 years.
pub const MAX_SECONDS: i64 = 1 << 40;
/// The largest processor count accepted.
pub const MAX_PROCS: i64 = 1 << 31;

/// Field `n` (0-based) through the general path: a whole number, possibly written `12.00`.
#[cold]
fn parse_whole_field(n: usize, token: &[u8]) -> Result<i64, SwfErrorKind> {
    parse_whole(token).map_err(|fraction| {
        if fraction {
            SwfErrorKind::NotAnInteger {
                field: n + 1,
                name: FIELD_NAMES[n],
                text: shown(token),
            }
        } else {
            not_a_number(n, token)
        }
    })
}

fn not_a_number(n: usize, token: &[u8]) -> SwfErrorKind {
    SwfErrorKind::NotANumber {
        field: n + 1,
        name: FIELD_NAMES[n],
        text: shown(token),
    }
}

/// A field as an error message quotes it: control characters escaped (`\0`, `\u{1}`),
/// bytes that are not UTF-8 as `\xNN`, and at most [`SHOWN_CHARS`] characters, so that a
/// binary file gives a readable message of one line.
pub(crate) fn shown(token: &[u8]) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for chunk in token.utf8_chunks() {
        for c in chunk.valid().chars() {
            if chars == SHOWN_CHARS {
                out.push('…');
                return out;
            }
            if c.is_control() {
                out.extend(c.escape_debug());
            } else {
                out.push(c);
            }
            chars += 1;
        }
        for byte in chunk.invalid() {
            if chars == SHOWN_CHARS {
                out.push('…');
                return out;
            }
            out.push_str(&format!("\\x{byte:02x}"));
            chars += 1;
        }
    }
    out
}

/// The most characters of a field an error message quotes.
const SHOWN_CHARS: usize = 40;

/// An optionally negative run of at most 18 digits: the form of nearly every SWF field.
#[inline]
fn parse_plain_integer(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, token),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(d - b'0');
    }
    Some(if negative { -value } else { value })
}

/// A finite decimal number.
fn parse_decimal(token: &[u8]) -> Option<f64> {
    if let Some(v) = parse_plain_integer(token) {
        return Some(v as f64);
    }
    std::str::from_utf8(token)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

/// A whole number, accepting a zero fraction (`12.00`). `Err(true)` means a real fraction,
/// `Err(false)` not a number at all (or beyond 64 bits).
fn parse_whole(token: &[u8]) -> Result<i64, bool> {
    if let Some(v) = parse_plain_integer(token) {
        return Ok(v);
    }
    let text = std::str::from_utf8(token).map_err(|_| false)?;
    if let Ok(v) = text.parse::<i64>() {
        return Ok(v);
    }
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x.fract() != 0.0 => Err(true),
        Ok(x) if x.is_finite() && x.abs() < 9.0e18 && text.contains('.') => Ok(x as i64),
        _ => Err(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "1 0 5 100 4 142.00 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1";

    /// The word-at-a-time parser gives what the byte-by-byte definition gives, errors
    /// included (compared as printed), on 200,000 seeded lines of 0 to 22 fields drawn from
    /// plain numbers of every length from 1 to 20 digits (18 is the most read as plain),
    /// negative ones, fractions, exponents, signs alone, letters, bytes that are not UTF-8
    /// and values past the accepted ranges, between blanks of every kind, with and without
    /// the line's end.
    #[test]
    fn parse_extended_equals_its_plain_definition() {
        let digits = |n: usize, seed: u64| -> String {
            (0..n)
                .map(|i| char::from(b'0' + ((seed >> (i % 60)) % 10) as u8))
                .collect()
        };
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let blanks = [" ", " ", " ", "  ", "\t", "\r", "\x0c", " \t "];
        for _ in 0..200_000 {
            let fields = (next() % 23) as usize;
            let mut line = Vec::new();
            if next() % 4 == 0 {
                line.extend_from_slice(blanks[(next() % 8) as usize].as_bytes());
            }
            for f in 0..fields {
                if f > 0 {
                    line.extend_from_slice(blanks[(next() % 8) as usize].as_bytes());
                }
                let r = next();
                let token: Vec<u8> = match r % 16 {
                    0..=5 => digits(1 + (r >> 8) as usize % 20, r >> 16).into_bytes(),
                    6 | 7 => {
                        format!("-{}", digits(1 + (r >> 8) as usize % 20, r >> 16)).into_bytes()
                    }
                    8 => b"-1".to_vec(),
                    9 => format!(
                        "{}.{}",
                        digits(1 + (r >> 8) as usize % 6, r),
                        digits(2, r >> 20)
                    )
                    .into_bytes(),
                    10 => b"12.00".to_vec(),
                    11 => b"1e5".to_vec(),
                    12 => b"-".to_vec(),
                    13 => format!("{}x", digits(1 + (r >> 8) as usize % 12, r >> 16)).into_bytes(),
                    14 => vec![0xff, b'7'],
                    _ => format!("{}", (1u64 << 40) + (r >> 40)).into_bytes(),
                };
                line.extend_from_slice(&token);
            }
            match next() % 3 {
                0 => line.push(b'\n'),
                1 => line.extend_from_slice(b" \n"),
                _ => {}
            }
            assert_eq!(
                format!("{:?}", parse_extended(&line)),
                format!("{:?}", parse_extended_reference(&line)),
                "{:?}",
                String::from_utf8_lossy(&line)
            );
        }
    }

    /// The text read through [`written_swf`] is the text [`super::super::write_swf`] writes,
    /// over several blocks and a short last one.
    #[test]
    fn written_swf_reads_as_the_text_write_swf_writes() {
        use std::io::Read;
        let header = SwfHeader {
            comments: vec!["MaxProcs: 64".to_owned(), "a comment".to_owned()],
            ..SwfHeader::default()
        };
        let records: Vec<SwfRecord> = (0..30_000)
            .map(|i| SwfRecord {
                job_number: i + 1,
                submit_time: 3 * i,
                run_time: 1 + i % 977,
                allocated_procs: 1 + i % 64,
                avg_cpu_time: if i % 3 == 0 { -1.0 } else { i as f64 / 7.0 },
                ..SwfRecord::default()
            })
            .collect();
        let mut expected = Vec::new();
        super::super::write_swf(&mut expected, &header, &records).unwrap();
        assert!(expected.len() > 3 * Pipelined::BLOCK);
        let mut read = Vec::new();
        written_swf(header, records).read_to_end(&mut read).unwrap();
        assert!(
            read == expected,
            "{} bytes read, {} written",
            read.len(),
            expected.len()
        );
    }

    /// A helper thread that fails after a block ends the text with an error, not with what
    /// would read as a shorter text.
    #[test]
    fn a_feeding_thread_that_fails_is_an_error_to_the_reader() {
        use std::io::Read;
        let mut text = Pipelined::fed(|tx| {
            tx.send(Ok(b"1 0".to_vec())).unwrap();
            panic!("the feeding thread fails");
        });
        let mut read = Vec::new();
        let err = text.read_to_end(&mut read).unwrap_err();
        assert_eq!(read, b"1 0");
        assert_eq!(err.to_string(), "the reading thread failed");
    }

    #[test]
    fn parses_all_fields_with_fractional_average() {
        let r = parse_record(LINE.as_bytes()).unwrap();
        assert_eq!(r.job_number, 1);
        assert_eq!(r.run_time, 100);
        assert_eq!(r.avg_cpu_time, 142.0);
        assert_eq!(r.requested_time, 200);
        assert_eq!(r.user_id, 3);
        assert_eq!(r.think_time, -1);
    }

    #[test]
    fn general_path_handles_fractions_long_numbers_and_junk() {
        let with = |field: usize, text: &str| {
            let mut tokens: Vec<&str> = LINE.split(' ').collect();
            tokens[field - 1] = text;
            parse_record(tokens.join(" ").as_bytes())
        };
        assert_eq!(with(4, "100.00").unwrap().run_time, 100);
        assert_eq!(with(6, "-1.5e2").unwrap().avg_cpu_time, -150.0);
        assert_eq!(
            with(2, "123456789012").unwrap().submit_time,
            123_456_789_012
        );
        assert_eq!(
            with(2, "1234567890123456789").unwrap_err().to_string(),
            "field 2 (submit time): expected at most 1099511627776, found 1234567890123456789"
        );
        assert_eq!(
            with(9, "1099511627777").unwrap_err().to_string(),
            "field 9 (requested time): expected at most 1099511627776, found 1099511627777"
        );
        assert_eq!(
            with(5, "4294967296").unwrap_err().to_string(),
            "field 5 (allocated processors): expected at most 2147483648, found 4294967296"
        );
        assert_eq!(with(4, "1099511627776").unwrap().run_time, 1 << 40);
        assert_eq!(
            with(2, "99999999999999999999").unwrap_err().to_string(),
            "field 2 (submit time): expected a number, found `99999999999999999999`"
        );
        assert_eq!(
            with(3, "-").unwrap_err().to_string(),
            "field 3 (wait time): expected a number, found `-`"
        );
        assert_eq!(
            with(5, "4x").unwrap_err().to_string(),
            "field 5 (allocated processors): expected a number, found `4x`"
        );
        assert_eq!(
            with(7, "é").unwrap_err().to_string(),
            "field 7 (used memory): expected a number, found `é`"
        );
        assert_eq!(
            parse_record(b"1 2 3\t4").unwrap_err().to_string(),
            "expected 18 whitespace-separated fields, found 4"
        );
    }

    #[test]
    fn rejects_fraction_in_whole_field() {
        let line = LINE.replacen("100", "100.5", 1);
        let err = parse_record(line.as_bytes()).unwrap_err();
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
