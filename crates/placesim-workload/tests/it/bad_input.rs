//! Every kind of bad input gives one exact message naming the file and, where there is one,
//! the line.

use placesim_core::ResourceDefs;
use placesim_workload::{SwfOptions, load_trace};
use std::io::Write;
use std::path::{Path, PathBuf};

const GOOD: &str = "1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n";

fn kth_bytes() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads/KTH-SP2-1996-2.1-cln.swf.gz");
    std::fs::read(path).expect("shipped trace")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .expect("write");
    path
}

fn error_of(path: &Path, opts: SwfOptions) -> String {
    load_trace(path, &opts, &ResourceDefs::default())
        .expect_err("must fail")
        .to_string()
}

fn procs(n: u64) -> SwfOptions {
    SwfOptions {
        procs: Some(n),
        skip_bad_lines: false,
        keep_field: None,
        keep_extended: false,
    }
}

#[test]
fn truncated_gzip_names_the_last_line_read() {
    let dir = placesim_testkit::tempdir().unwrap();
    let bytes = kth_bytes();
    let path = write(dir.path(), "cut.swf.gz", &bytes[..bytes.len() / 2]);
    assert_eq!(
        error_of(&path, SwfOptions::default()),
        format!(
            "{}: reading failed after line 13750, the data is corrupt or truncated: incomplete deflate stream",
            path.display()
        )
    );
}

/// gzip checks its CRC only at the end of the stream, so corruption in the middle shows first
/// as the garbled line it produces: still an error naming the line, never silent.
#[test]
fn corrupt_gzip_is_an_error_naming_where_it_shows() {
    let dir = placesim_testkit::tempdir().unwrap();
    let mut bytes = kth_bytes();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0x5a;
    }
    let path = write(dir.path(), "bad.swf.gz", &bytes);
    assert_eq!(
        error_of(&path, SwfOptions::default()),
        format!(
            "{}:13751: expected 18 whitespace-separated fields, found 14",
            path.display()
        )
    );
    // A damaged checksum in the trailer is caught once all 28,016 lines are read.
    let mut bytes = kth_bytes();
    let crc = bytes.len() - 8;
    bytes[crc] ^= 0xff;
    let path = write(dir.path(), "crc.swf.gz", &bytes);
    let msg = error_of(&path, SwfOptions::default());
    assert_eq!(
        msg,
        format!(
            "{}: reading failed after line 28016, the data is corrupt or truncated: corrupt gzip stream does not have a matching checksum",
            path.display()
        )
    );
}

#[test]
fn line_with_17_fields() {
    let dir = placesim_testkit::tempdir().unwrap();
    let text = format!("; MaxProcs: 4\n{GOOD}1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1\n");
    let path = write(dir.path(), "short.swf", text.as_bytes());
    assert_eq!(
        error_of(&path, SwfOptions::default()),
        format!(
            "{}:3: expected 18 whitespace-separated fields, found 17",
            path.display()
        )
    );
}

#[test]
fn non_numeric_field() {
    let dir = placesim_testkit::tempdir().unwrap();
    let text = format!("{GOOD}2 5 -1 ten 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n");
    let path = write(dir.path(), "word.swf", text.as_bytes());
    assert_eq!(
        error_of(&path, procs(4)),
        format!(
            "{}:2: field 4 (run time): expected a number, found `ten`",
            path.display()
        )
    );
}

#[test]
fn empty_file_and_comments_only() {
    let dir = placesim_testkit::tempdir().unwrap();
    for (name, text) in [("empty.swf", ""), ("comments.swf", "; MaxProcs: 4\n;\n\n")] {
        let path = write(dir.path(), name, text.as_bytes());
        assert_eq!(
            error_of(&path, procs(4)),
            format!(
                "{}: no job records: the file is empty or holds only comments",
                path.display()
            )
        );
    }
}

#[test]
fn missing_file() {
    let msg = error_of(Path::new("/nonexistent/trace.swf"), procs(4));
    assert_eq!(
        msg,
        "/nonexistent/trace.swf: cannot open: No such file or directory (os error 2)"
    );
}

#[test]
fn no_machine_size() {
    let dir = placesim_testkit::tempdir().unwrap();
    let path = write(
        dir.path(),
        "nosize.swf",
        format!("; Note: none\n{GOOD}").as_bytes(),
    );
    assert_eq!(
        error_of(&path, SwfOptions::default()),
        format!(
            "{}:2: job record before any `MaxProcs:` or `MaxNodes:` header line; give the machine size with --procs",
            path.display()
        )
    );
}

#[test]
fn every_job_too_large() {
    let dir = placesim_testkit::tempdir().unwrap();
    let path = write(dir.path(), "big.swf", format!("{GOOD}{GOOD}").as_bytes());
    assert_eq!(
        error_of(&path, procs(1)),
        format!(
            "{}: all 2 job records were skipped (too_large: 2); nothing to simulate",
            path.display()
        )
    );
}

#[test]
fn skip_bad_lines_counts_and_reports_them() {
    let dir = placesim_testkit::tempdir().unwrap();
    let text = format!("{GOOD}2 5 -1 x 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n3 6\n{GOOD}");
    let path = write(dir.path(), "mixed.swf", text.as_bytes());
    let opts = SwfOptions {
        procs: Some(4),
        skip_bad_lines: true,
        keep_field: None,
        keep_extended: false,
    };
    let trace = load_trace(&path, &opts, &ResourceDefs::default()).unwrap();
    assert_eq!(trace.records, 4);
    assert_eq!(trace.workload.jobs().len(), 2);
    assert_eq!(trace.skipped.get(placesim_workload::SkipReason::BadLine), 2);
    assert_eq!(
        trace.bad_lines,
        vec![
            format!(
                "{}:2: field 4 (run time): expected a number, found `x`",
                path.display()
            ),
            format!(
                "{}:3: expected 18 whitespace-separated fields, found 2",
                path.display()
            ),
        ]
    );
}

/// Extended SWF: fields after the 18th are read, not refused, and the one `keep_field`
/// names is kept by job number; a line with 17 fields is still an error.
#[test]
fn lines_with_fields_after_the_18th_are_read() {
    let dir = placesim_testkit::tempdir().unwrap();
    let text = format!(
        "; MaxProcs: 4\n{GOOD}1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1 n1,n2 nodes=2:ppn=1\n"
    );
    let path = write(dir.path(), "long.swf", text.as_bytes());
    let opts = SwfOptions {
        keep_field: Some(20),
        keep_extended: false,
        ..SwfOptions::default()
    };
    let trace = placesim_workload::load_trace(&path, &opts, &ResourceDefs::default()).unwrap();
    assert_eq!(trace.workload.jobs().len(), 2);
    assert_eq!(trace.kept_field.len(), 1);
    assert_eq!(
        trace.kept_field.get(&1).map(|f| &**f),
        Some("nodes=2:ppn=1")
    );
    let short = format!("; MaxProcs: 4\n{GOOD}1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1\n");
    let path = write(dir.path(), "short.swf", short.as_bytes());
    assert_eq!(
        error_of(&path, SwfOptions::default()),
        format!(
            "{}:3: expected 18 whitespace-separated fields, found 17",
            path.display()
        )
    );
}

/// Values no real trace holds (a run time of 285 million years, 2^32 processors) are an
/// error at their field, not an overflow later; negative ones are skipped with their reason
/// and counted.
#[test]
fn absurd_values_are_refused_and_negative_ones_skipped() {
    let dir = placesim_testkit::tempdir().unwrap();
    let text = format!(
        "; MaxProcs: 4\n{GOOD}2 5 -1 9000000000000000 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n"
    );
    let path = write(dir.path(), "absurd.swf", text.as_bytes());
    assert_eq!(
        error_of(&path, SwfOptions::default()),
        format!(
            "{}:3: field 4 (run time): expected at most 1099511627776, found 9000000000000000",
            path.display()
        )
    );
    let text =
        format!("; MaxProcs: 4\n{GOOD}2 5 -1 10 4294967296 -1 -1 -1 20 -1 1 1 1 -1 1 -1 -1 -1\n");
    let path = write(dir.path(), "procs.swf", text.as_bytes());
    assert_eq!(
        error_of(&path, SwfOptions::default()),
        format!(
            "{}:3: field 5 (allocated processors): expected at most 2147483648, found 4294967296",
            path.display()
        )
    );
    let text = format!(
        "; MaxProcs: 4\n{GOOD}2 -5 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n3 5 -1 -10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n"
    );
    let path = write(dir.path(), "negative.swf", text.as_bytes());
    let trace = load_trace(&path, &SwfOptions::default(), &ResourceDefs::default()).unwrap();
    assert_eq!(trace.records, 3);
    assert_eq!(trace.workload.jobs().len(), 1);
    assert_eq!(
        trace.skipped.to_string(),
        "negative_runtime: 1, negative_submit: 1"
    );
}
