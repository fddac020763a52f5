//! Parquet files written row group by row group through polars' own Parquet writer, one level
//! below polars' `ParquetWriter`, so that a column can be handed over already encoded.
//!
//! Every column of a frame goes the way `ParquetWriter::batched` sends it (the same schema,
//! encodings, statistics and snappy compression), and comes out byte for byte as it would.
//! The one difference is for [`EncodedColumn`]s: jobs.parquet's vnode texts. polars would
//! hash every text to guess whether a dictionary pays, then hash them all again to build it,
//! copying each distinct one, all for values the simulation already knows to be equal (equal
//! allocations). An [`EncodedColumn`] comes with its dictionary made from the allocations, or
//! plain when most values differ (polars' own rule, on the exact count), and is compressed
//! with zstd: the texts are long runs of near-identical chunks, which zstd stores about thirty
//! times smaller than snappy, about as fast (psets-bench's jobs.parquet: 12 MB against 276 MB).

use polars::prelude::{CompatLevel, DataFrame, PolarsError, PolarsResult, Schema, SchemaExt};
use polars_arrow::array::Array;
use polars_arrow::datatypes::ArrowDataType;
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

/// zstd's own default level: as fast as snappy on vnode texts, far smaller.
const TEXT_ZSTD_LEVEL: i32 = 3;

/// A column of a row group given as an arrow array already in the form it is to be stored:
/// a dictionary array (dictionary-encoded) or a plain one (plain-encoded).
pub(crate) struct EncodedColumn {
    /// The frame's column it stands for: of the same type, as far as the file says.
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
        let RowGroupToWrite {
            mut frame,
            mut encoded,
        } = group;
        if !encoded.is_empty() {
            frame.rechunk_mut();
        }
        // An encoded column by its index in the frame.
        let mut by_index: Vec<Option<Box<dyn Array>>> = (0..frame.width()).map(|_| None).collect();
        for column in encoded.drain(..) {
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
                        let encoding = match encoded.dtype() {
                            ArrowDataType::Dictionary(..) => Encoding::RleDictionary,
                            _ => Encoding::Plain,
                        };
                        let zstd =
                            CompressionOptions::Zstd(Some(ZstdLevel::try_new(TEXT_ZSTD_LEVEL)?));
                        (encoded, vec![encoding], zstd)
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
