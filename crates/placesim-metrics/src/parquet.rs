//! Parquet files written row group by row group through polars' own Parquet writer, one level
//! below polars' `ParquetWriter`, so that a column can be handed over in the form it is to be
//! stored.
//!
//! Every column of a frame goes the way `ParquetWriter::batched` sends it (the same schema,
//! encodings, statistics and snappy compression), and comes out byte for byte as it would.
//! The exception is an [`EncodedColumn`]: jobs.parquet's vnode texts, up to tens of kilobytes a
//! job. polars would hash every text to guess whether a dictionary pays, hash them all again
//! to build it, and write the dictionary as one page: in psets-bench a 64 MB page per row
//! group, whose encoding and compression buffers are fresh from the system every time (a page
//! fault per 4 KiB). An [`EncodedColumn`] is written plain instead, in pages of polars' default
//! size that the allocator reuses, and compressed with zstd: the texts are long runs of
//! near-identical chunks, which zstd stores about eight times smaller than snappy, about as
//! fast. Measured on psets-bench with `exec_vnode` (three runs each):
//!
//! | stored as | wall (s) | system (s) | peak (MB) | jobs.parquet (MB) |
//! |---|---:|---:|---:|---:|
//! | polars' choice (a dictionary), snappy | 6.2–6.7 | 2.5–3.1 | 560 | 276 |
//! | our dictionary, zstd | 2.8–3.3 | 1.5–1.6 | 395 | 13 |
//! | plain, zstd (this) | 2.4–3.3 | 0.2–0.3 | 238 | 32 |
//!
//! zstd's level 1 was no faster than its default, 3, and stored a third more.

use polars::prelude::{CompatLevel, DataFrame, PolarsError, PolarsResult, Schema, SchemaExt};
use polars_arrow::array::Array;
use polars_parquet::read::ParquetError;
use polars_parquet::write::{
    CompressionOptions, Compressor, DynIter, DynStreamingIterator, Encoding,
    FallibleStreamingIterator, FileWriter, StatisticsOptions, Version, WriteOptions, ZstdLevel,
    array_to_columns, get_dtype_encoding,
};
use std::io::Write;

/// What polars' `ParquetWriter` writes with, as placesim sets it (default statistics, pages
/// of the default size), with `compression`: snappy, as everywhere else, but for encoded
/// columns.
fn options(compression: CompressionOptions) -> WriteOptions {
    WriteOptions {
        statistics: StatisticsOptions::default(),
        compression,
        version: Version::V1,
        data_page_size: None,
    }
}

/// zstd's own default level.
const TEXT_ZSTD_LEVEL: i32 = 3;

/// A column of a row group given as an arrow array, to be stored plain and compressed with
/// zstd.
pub(crate) struct EncodedColumn {
    /// The frame's column it stands for. The file records the frame's type: a string column
    /// may be given as bytes, which are stored alike.
    pub(crate) name: &'static str,
    pub(crate) array: Box<dyn Array>,
}

/// A row group to write: a frame, some of whose columns are given as [`EncodedColumn`]s
/// instead (the frame holds nulls in their place).
pub(crate) struct RowGroupToWrite {
    pub(crate) frame: DataFrame,
    pub(crate) encoded: Vec<EncodedColumn>,
}

impl From<DataFrame> for RowGroupToWrite {
    fn from(frame: DataFrame) -> RowGroupToWrite {
        RowGroupToWrite {
            frame,
            encoded: Vec::new(),
        }
    }
}

/// A Parquet file being written, one row group after another.
pub(crate) struct ParquetFile<W: Write> {
    writer: FileWriter<W>,
    /// Per column, the encodings polars chooses for its type.
    encodings: Vec<Vec<Encoding>>,
}

impl<W: Write> ParquetFile<W> {
    /// A file of `schema`'s columns written to `out`.
    pub(crate) fn new(out: W, schema: &Schema) -> PolarsResult<ParquetFile<W>> {
        let schema = schema.to_arrow(CompatLevel::newest());
        let encodings = schema
            .iter_values()
            .map(|field| get_dtype_encoding(&field.dtype))
            .collect();
        Ok(ParquetFile {
            writer: FileWriter::try_new(out, schema, options(CompressionOptions::Snappy))?,
            encodings,
        })
    }

    /// Writes `group`: one row group per chunk of its frame, as polars does (one, if it has
    /// encoded columns).
    pub(crate) fn write(&mut self, group: RowGroupToWrite) -> PolarsResult<()> {
        let RowGroupToWrite { mut frame, encoded } = group;
        if !encoded.is_empty() {
            frame.rechunk_mut();
        }
        // An encoded column by its index in the frame.
        let mut by_index: Vec<Option<Box<dyn Array>>> = (0..frame.width()).map(|_| None).collect();
        for column in encoded {
            let index = frame.try_get_column_index(column.name)?;
            polars::prelude::polars_ensure!(
                column.array.len() == frame.height(),
                ShapeMismatch: "encoded column `{}` has {} values for {} rows",
                column.name, column.array.len(), frame.height()
            );
            by_index[index] = Some(column.array);
        }
        let fields = self.writer.parquet_schema().fields().to_vec();
        for batch in frame.iter_chunks(CompatLevel::newest(), false) {
            let rows = batch.len();
            if rows == 0 {
                continue;
            }
            let mut columns = Vec::with_capacity(fields.len());
            for (index, ((array, field), encodings)) in batch
                .into_arrays()
                .into_iter()
                .zip(&fields)
                .zip(&self.encodings)
                .enumerate()
            {
                let (array, encodings, compression) = match by_index[index].take() {
                    Some(encoded) => {
                        let zstd =
                            CompressionOptions::Zstd(Some(ZstdLevel::try_new(TEXT_ZSTD_LEVEL)?));
                        (encoded, vec![Encoding::Plain], zstd)
                    }
                    None => (array, encodings.clone(), CompressionOptions::Snappy),
                };
                let options = options(compression);
                for pages in array_to_columns(array, field.clone(), options, &encodings)? {
                    // As polars' own writer passes a page's failure on.
                    let pages = pages.map(|page| {
                        page.map_err(|e| {
                            ParquetError::FeatureNotSupported(format!("reraised in polars: {e}"))
                        })
                    });
                    let compressed = Compressor::new_from_vec(pages, compression, Vec::new())
                        .map_err(PolarsError::from);
                    columns.push(Ok(DynStreamingIterator::new(compressed)));
                }
            }
            self.writer
                .write(rows as u64, DynIter::new(columns.into_iter()))?;
        }
        Ok(())
    }

    /// Writes the footer, with the arrow schema in its metadata as polars writes it.
    pub(crate) fn finish(mut self) -> PolarsResult<()> {
        self.writer.end(None).map(|_| ())
    }
}
