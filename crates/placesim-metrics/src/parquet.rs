//! Parquet files written row group by row group through polars' own Parquet writer, one level
//! below polars' `ParquetWriter`, so that a column can be handed over in the form it is to be
//! stored.
//!
//! Every column of a frame goes the way `ParquetWriter::batched` sends it (the same schema,
//! encodings, statistics and snappy compression), and comes out byte for byte as it would. A
//! text column of few distinct values skips polars' two hashings of every value on the way
//! ([`dictionary_of_few`]: the dictionary polars would make, found by comparing views), and
//! comes out the same.
//! The exception is an [`EncodedColumn`]: jobs.parquet's vnode texts, up to tens of kilobytes a
//! job. polars would hash every text to guess whether a dictionary pays, hash them all again
//! to build it, and write the dictionary as one page: in psets-bench a 64 MB page per row
//! group, whose encoding and compression buffers are fresh from the system every time (a page
//! fault per 4 KiB). An [`EncodedColumn`] comes with its dictionary made already
//! ([`Dictionary`]: its distinct values, written straight into buffers the allocator reuses,
//! and each row's index), and its pages are compressed with zstd, a frame per buffer, by one
//! context kept for the file. The texts are long runs of near-identical chunks: zstd stores
//! them eighteen times smaller than snappy did, and the faster the more of them it sees at
//! once. Measured on psets-bench with `exec_vnode` (three runs each, but the last row: ten):
//!
//! | stored as | wall (s) | system (s) | peak (MB) | jobs.parquet (MB) |
//! |---|---:|---:|---:|---:|
//! | polars' choice (a dictionary), snappy | 6.2–6.7 | 2.5–3.1 | 560 | 276 |
//! | our dictionary through polars' pages, zstd | 2.8–3.3 | 1.5–1.6 | 395 | 13 |
//! | plain in polars' pages of 1 MiB, zstd | 2.2–3.3 | 0.2–0.3 | 238 | 32 |
//! | plain in pages of 8 MiB, zstd | 2.1–2.3 | 0.4 | 330 | 18 |
//! | our dictionary page in one buffer, zstd | 2.1–2.6 | 0.7–0.9 | 215 | 13 |
//! | the same in 8 MiB buffers, one zstd frame | 2.0–2.3 | 0.3 | 215 | 13 |
//! | the same, a frame per buffer (this) | 1.5–1.8 | 0.2–0.3 | 200–215 | 15 |
//!
//! As one frame, zstd copies each buffer into its window before compressing it; a frame of a
//! whole buffer, with room for all of it, is compressed where it lies. zstd's level 1 was no
//! faster than its default, 3, and stored a third more.

use crate::strings::{self, Repeats};
use polars::prelude::{
    ArrowDataType, CompatLevel, DataFrame, PolarsError, PolarsResult, Schema, SchemaExt,
    polars_bail, polars_err,
};
use polars_arrow::array::{
    Array, BinaryViewArray, BinaryViewArrayGeneric, DictionaryArray, MutableBinaryViewArray,
    PrimitiveArray, Utf8ViewArray, View, ViewType,
};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::datatypes::IntegerType;
use polars_buffer::Buffer;
use polars_parquet::parquet::CowBuffer;
use polars_parquet::parquet::compression::Compression;
use polars_parquet::parquet::encoding::hybrid_rle;
use polars_parquet::parquet::metadata::Descriptor;
use polars_parquet::parquet::page::{CompressedDictPage, DataPageHeader, DataPageHeaderV1};
use polars_parquet::parquet::schema::Repetition;
use polars_parquet::parquet::schema::types::ParquetType;
use polars_parquet::parquet::statistics::ParquetStatistics;
use polars_parquet::read::ParquetError;
use polars_parquet::write::{
    CompressedDataPage, CompressedPage, CompressionOptions, Compressor, DynIter,
    DynStreamingIterator, Encoding, FallibleStreamingIterator, FileWriter, Page, StatisticsOptions,
    Version, WriteOptions, ZstdLevel, array_to_columns, get_dtype_encoding, write_def_levels,
};
use std::io::Write;
use zstd::zstd_safe::zstd_sys::ZSTD_EndDirective;
use zstd::zstd_safe::{CCtx, CParameter, InBuffer, OutBuffer, ResetDirective};

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

/// The statistics polars writes for a column of `dictionary`'s values: those it writes for a
/// column of only their least and their greatest, which are the same (the least and the
/// greatest, truncated as polars truncates them), less the null count.
fn least_and_greatest_statistics(
    dictionary: &Dictionary,
    field: &ParquetType,
) -> PolarsResult<Option<ParquetStatistics>> {
    let mut values = dictionary.values();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    let (least, greatest) = values.fold((first, first), |(least, greatest), value| {
        (least.min(value), greatest.max(value))
    });
    let array = BinaryViewArray::from_slice_values([least, greatest]).boxed();
    let options = options(CompressionOptions::Uncompressed);
    for mut pages in array_to_columns(array, field.clone(), options, &[Encoding::Plain])? {
        if let Some(Page::Data(page)) = pages.next().transpose()? {
            if let DataPageHeader::V1(header) = page.header() {
                return Ok(header.statistics.clone());
            }
        }
    }
    Ok(None)
}

/// zstd's own default level.
const TEXT_ZSTD_LEVEL: i32 = 3;

/// A column of a row group handed over as a dictionary made already, compressed with zstd:
/// stored as a dictionary page and one page of indices, or plain when its distinct values are
/// more than a page holds.
pub(crate) struct EncodedColumn {
    /// The frame's column it stands for. The file records the frame's type: a string column
    /// is stored as bytes.
    pub(crate) name: &'static str,
    pub(crate) values: Dictionary,
}

/// The values of a dictionary-encoded column.
pub(crate) struct Dictionary {
    /// The distinct values as a dictionary page holds them (PLAIN: each a 4-byte little-endian
    /// length, then its bytes), in buffers of [`strings::BUFFER_BYTES`] that the allocator
    /// serves from its own memory, and reuses: one buffer of a whole page, fresh from the
    /// system, costs a page fault per 4 KiB. A value lies whole in one buffer; the page is
    /// their concatenation.
    pub(crate) page: Vec<Vec<u8>>,
    /// Per row, the index of its value in `page`; none for a null.
    pub(crate) keys: Vec<Option<u32>>,
}

impl Dictionary {
    /// The most bytes of values a dictionary page holds: a page's size is an `i32` in its
    /// header. A row group whose distinct values come to more is stored plain.
    const MAX_PAGE_BYTES: usize = i32::MAX as usize;

    /// An empty dictionary.
    pub(crate) fn new() -> Dictionary {
        Dictionary {
            page: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// How many bytes the page holds.
    pub(crate) fn page_bytes(&self) -> usize {
        self.page.iter().map(Vec::len).sum()
    }

    /// Appends a value to the page, written by `write`; false, and the page as it was, if it
    /// is over 4 GiB.
    pub(crate) fn push_value(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        let buffer = match self.page.last_mut() {
            Some(buffer) if !strings::is_full(buffer.len()) => buffer,
            _ => {
                self.page.push(Vec::with_capacity(strings::BUFFER_BYTES));
                self.page.last_mut().expect("a buffer was just pushed")
            }
        };
        let start = buffer.len();
        buffer.extend_from_slice(&[0; 4]);
        write(buffer);
        match u32::try_from(buffer.len() - start - 4) {
            Ok(length) => {
                buffer[start..start + 4].copy_from_slice(&length.to_le_bytes());
                true
            }
            Err(_) => {
                buffer.truncate(start);
                false
            }
        }
    }

    /// The distinct values, in order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &[u8]> {
        self.located().map(|(_, _, value)| value)
    }

    /// The distinct values, in order, each with the index of its buffer and where in it the
    /// value starts.
    fn located(&self) -> impl Iterator<Item = (usize, usize, &[u8])> {
        self.page.iter().enumerate().flat_map(|(index, buffer)| {
            let mut at = 0;
            std::iter::from_fn(move || {
                let (length, after) = buffer.get(at..)?.split_first_chunk::<4>()?;
                let value = after.get(..u32::from_le_bytes(*length) as usize)?;
                let start = at + 4;
                at = start + value.len();
                Some((index, start, value))
            })
        })
    }

    /// Every row's value, as an arrow array over the page's buffers (taken over, not copied).
    fn into_plain(self) -> PolarsResult<BinaryViewArray> {
        let mut distinct = Vec::new();
        for (index, start, value) in self.located() {
            // A buffer is a `Vec` that took values while under half of 8 MiB, each under 4
            // GiB ([`Dictionary::push_value`]), so its offsets fit a view's.
            let (Ok(index), Ok(start)) = (u32::try_from(index), u32::try_from(start)) else {
                polars_bail!(ComputeError: "a dictionary buffer is over 4 GiB");
            };
            distinct.push(View::new_from_bytes(value, index, start));
        }
        let views: Vec<View> = self
            .keys
            .iter()
            .map(|key| key.map_or(View::default(), |k| distinct[k as usize]))
            .collect();
        let validity = self
            .keys
            .contains(&None)
            .then(|| self.keys.iter().map(Option::is_some).collect::<Bitmap>());
        let buffers: Vec<Buffer<u8>> = self.page.into_iter().map(Buffer::from).collect();
        BinaryViewArray::try_new(
            ArrowDataType::BinaryView,
            Buffer::from(views),
            Buffer::from(buffers),
            validity,
        )
    }
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

/// Pages compressed already, handed to the writer one after another.
struct Compressed<const N: usize> {
    pages: std::array::IntoIter<CompressedPage, N>,
    current: Option<CompressedPage>,
}

impl<const N: usize> FallibleStreamingIterator for Compressed<N> {
    type Item = CompressedPage;
    type Error = PolarsError;

    fn advance(&mut self) -> PolarsResult<()> {
        self.current = self.pages.next();
        Ok(())
    }

    fn get(&self) -> Option<&CompressedPage> {
        self.current.as_ref()
    }
}

/// A Parquet file being written, one row group after another.
pub(crate) struct ParquetFile<W: Write> {
    writer: FileWriter<W>,
    /// Per column, the encodings polars chooses for its type.
    encodings: Vec<Vec<Encoding>>,
    /// The zstd context of dictionary-encoded columns, kept from page to page: polars makes
    /// one per page, and zero-fills an output buffer as large as the page.
    zstd: CCtx<'static>,
    /// The most bytes of values an encoded column's dictionary page may hold
    /// ([`Dictionary::MAX_PAGE_BYTES`]; a test lowers it).
    max_dictionary_page_bytes: usize,
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
            zstd: text_zstd()?,
            max_dictionary_page_bytes: Dictionary::MAX_PAGE_BYTES,
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
        let mut by_index: Vec<Option<Dictionary>> = (0..frame.width()).map(|_| None).collect();
        for column in encoded {
            let index = frame.try_get_column_index(column.name)?;
            let rows = column.values.keys.len();
            polars::prelude::polars_ensure!(
                rows == frame.height(),
                ShapeMismatch: "encoded column `{}` has {} values for {} rows",
                column.name, rows, frame.height()
            );
            by_index[index] = Some(column.values);
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
                    Some(dictionary)
                        if dictionary.page_bytes() <= self.max_dictionary_page_bytes =>
                    {
                        let pages = dictionary_pages(&mut self.zstd, dictionary, field)?;
                        let pages = Compressed {
                            pages: pages.into_iter(),
                            current: None,
                        };
                        columns.push(Ok(DynStreamingIterator::new(pages)));
                        continue;
                    }
                    Some(dictionary) => {
                        let zstd =
                            CompressionOptions::Zstd(Some(ZstdLevel::try_new(TEXT_ZSTD_LEVEL)?));
                        let plain = dictionary.into_plain()?.boxed();
                        (plain, vec![Encoding::Plain], zstd)
                    }
                    None => {
                        let array = match encodings[..] {
                            [Encoding::RleDictionary] => {
                                dictionary_of_few(array.as_ref()).unwrap_or(array)
                            }
                            _ => array,
                        };
                        (array, encodings.clone(), CompressionOptions::Snappy)
                    }
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

    /// Writes the footer, with the arrow schema in its metadata as polars writes it, and
    /// gives back the output, for its owner to flush.
    pub(crate) fn finish(mut self) -> PolarsResult<W> {
        self.writer.end(None)?;
        Ok(self.writer.into_inner())
    }
}

/// The most distinct views of a text column [`dictionary_of_few`] keeps before it leaves the
/// column to polars: the texts placesim repeats (names, policies, sets, comments) are far fewer.
const FEW_VIEWS: usize = 1024;

/// A text column of few distinct values as the dictionary polars would make of it, when polars
/// would make one; `None` for any other column, which polars then encodes itself.
///
/// polars decides whether a column pays as a dictionary by estimating its distinct values
/// (a HyperLogLog of a hash of every value), then builds the dictionary by hashing every value
/// again into a table that compares equal texts byte by byte. Most of placesim's text columns
/// repeat a few values, each stored once and referred to by every row that has it (a constant
/// column, such as the scenario's name, is one view repeated): here a row costs one comparison
/// of its 16-byte view with the last row's. The result is polars' to the byte:
/// - the values in the order of their first row, a null row a null key, as polars' cast to a
///   dictionary makes them;
/// - polars' own estimate, made of the distinct values (with the empty text for a null,
///   which polars hashes in its place) by [`estimate_of_few`]: a HyperLogLog's registers keep
///   the highest rank each hash reached, so repeating a value changes nothing;
/// - the same decision from it (plain when over 128 rows and the estimate is over three
///   quarters of them);
/// - then the same writer of dictionary arrays, which polars reaches after its cast.
fn dictionary_of_few(array: &dyn Array) -> Option<Box<dyn Array>> {
    match array.dtype() {
        ArrowDataType::Utf8View => {
            dictionary_of_views(array.as_any().downcast_ref::<Utf8ViewArray>()?)
        }
        ArrowDataType::BinaryView => {
            dictionary_of_views(array.as_any().downcast_ref::<BinaryViewArray>()?)
        }
        _ => None,
    }
}

/// The registers of polars' HyperLogLog (`polars_compute::hyperloglogplus`): 2^14 of them,
/// each keeping the highest rank of the hashes that fall in it.
const HLL_P: u32 = 14;
const HLL_Q: u32 = 64 - HLL_P;
const HLL_REGISTERS: usize = 1 << HLL_P;

/// polars' estimate of how many distinct values there are among `values`
/// (`polars_compute::cardinality::estimate_cardinality` of a view array of them), made from the
/// registers the values set alone. polars fills and reads all 16,384 registers at each
/// estimate, and [`dictionary_of_few`] asks one of every text column of every row group: with
/// at most [`FEW_VIEWS`] values, the others stay at rank 0 and are counted as such. The same
/// hash (foldhash's quality hasher with seed 0, of the value's bytes), the same ranks and the
/// same floating-point steps as polars' `count`, so the same estimate.
fn estimate_of_few<'v>(values: impl Iterator<Item = &'v [u8]>) -> usize {
    use std::hash::BuildHasher;
    let seed = foldhash::quality::FixedState::with_seed(0);
    // The registers that are not at rank 0, by index.
    let mut ranks: foldhash::HashMap<u64, u8> = foldhash::HashMap::default();
    for value in values {
        let hash = seed.hash_one(value);
        let index = hash & (HLL_REGISTERS as u64 - 1);
        let rank = ((hash >> HLL_P) | (1 << HLL_Q)).trailing_zeros() as u8 + 1;
        let highest = ranks.entry(index).or_insert(0);
        *highest = (*highest).max(rank);
    }
    let mut histogram = [0u32; HLL_Q as usize + 2];
    histogram[0] = (HLL_REGISTERS - ranks.len()) as u32;
    for &rank in ranks.values() {
        histogram[usize::from(rank)] += 1;
    }
    let m = HLL_REGISTERS as f64;
    let mut z = m * hll_tau((m - f64::from(histogram[HLL_Q as usize + 1])) / m);
    for &count in histogram[1..=HLL_Q as usize].iter().rev() {
        z += f64::from(count);
        z *= 0.5;
    }
    z += m * hll_sigma(f64::from(histogram[0]) / m);
    (0.5 / 2_f64.ln() * m * m / z).round() as usize
}

/// polars' `hll_sigma` (Ertl's estimator), step for step.
fn hll_sigma(x: f64) -> f64 {
    if x == 1. {
        return f64::INFINITY;
    }
    let (mut x, mut y, mut z) = (x, 1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

/// polars' `hll_tau` (Ertl's estimator), step for step.
fn hll_tau(x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut x, mut y, mut z) = (x, 1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if before == z {
            return z / 3.0;
        }
    }
}

/// [`dictionary_of_few`] for a view array of texts or bytes.
fn dictionary_of_views<T: ViewType + ?Sized>(
    array: &BinaryViewArrayGeneric<T>,
) -> Option<Box<dyn Array>> {
    let rows = array.len();
    // polars counts an empty or all-null column apart from the estimate: left to it.
    if rows == 0 || array.null_count() == rows {
        return None;
    }
    let views = array.views();
    let validity = array.validity();
    // Per distinct view, its value's key; per distinct value, its first row.
    let mut key_of_view: Repeats<u128, u32> = Repeats::default();
    let mut key_of_value: foldhash::HashMap<&[u8], u32> = foldhash::HashMap::default();
    let mut first_rows: Vec<usize> = Vec::new();
    let mut keys: Vec<u32> = Vec::with_capacity(rows);
    for (row, view) in views.iter().enumerate() {
        if validity.is_some_and(|v| !v.get_bit(row)) {
            keys.push(0);
            continue;
        }
        let view = view.as_u128();
        let key = match key_of_view.get(view) {
            Some(key) => key,
            None => {
                if key_of_view.len() == FEW_VIEWS {
                    return None;
                }
                let value = array.value(row).to_bytes();
                let next = first_rows.len() as u32;
                let key = *key_of_value.entry(value).or_insert(next);
                if key == next {
                    first_rows.push(row);
                }
                key_of_view.insert(view, key);
                key
            }
        };
        keys.push(key);
    }
    let null_text = (array.null_count() > 0).then_some(b"".as_slice());
    let distinct = first_rows
        .iter()
        .map(|&row| array.value(row).to_bytes())
        .chain(null_text);
    if rows > 128 && estimate_of_few(distinct) as f64 / rows as f64 > 0.75 {
        return None;
    }
    let mut values: MutableBinaryViewArray<T> =
        MutableBinaryViewArray::with_capacity(first_rows.len());
    for &row in &first_rows {
        values.push_value(array.value(row));
    }
    let values: BinaryViewArrayGeneric<T> = values.into();
    let keys = PrimitiveArray::<u32>::new(ArrowDataType::UInt32, keys.into(), validity.cloned());
    let dtype =
        ArrowDataType::Dictionary(IntegerType::UInt32, Box::new(array.dtype().clone()), false);
    DictionaryArray::try_new(dtype, keys, values.boxed())
        .ok()
        .map(|a| a.boxed())
}

/// `dictionary`'s pages as column `field` stores them, compressed with zstd: the dictionary
/// page, and one page of every row's index (a row group's indices take a few kilobytes). The
/// caller has checked that the page holds the values.
fn dictionary_pages(
    zstd: &mut CCtx<'static>,
    dictionary: Dictionary,
    field: &ParquetType,
) -> PolarsResult<[CompressedPage; 2]> {
    let ParquetType::PrimitiveType(primitive) = field else {
        polars_bail!(ComputeError: "a dictionary for nested column `{}`", field.name());
    };
    let rows = dictionary.keys.len();
    let nulls = dictionary.keys.iter().filter(|key| key.is_none()).count();
    let page_bytes = dictionary.page_bytes();
    let Ok(rows_i32) = i32::try_from(rows) else {
        polars_bail!(ComputeError: "a row group of {rows} rows is too big for a page");
    };
    // Definition levels (which rows are set), then the indices of the set rows in the
    // fewest bits that hold the greatest, run-length or bit-packed.
    let mut indices = Vec::new();
    let validity: Option<Bitmap> =
        (nulls > 0).then(|| dictionary.keys.iter().map(Option::is_some).collect());
    let is_optional = primitive.field_info.repetition == Repetition::Optional;
    write_def_levels(
        &mut indices,
        is_optional,
        validity.as_ref(),
        rows,
        Version::V1,
    )?;
    let greatest = dictionary.keys.iter().flatten().max().copied().unwrap_or(0);
    let bits = u32::BITS - greatest.leading_zeros();
    indices.push(bits as u8);
    hybrid_rle::encode::<u32, _, _>(
        &mut indices,
        dictionary.keys.iter().flatten().copied(),
        bits,
    )?;
    let mut statistics = least_and_greatest_statistics(&dictionary, field)?;
    if let Some(statistics) = &mut statistics {
        statistics.null_count = Some(nulls as i64);
    }
    let header = DataPageHeader::V1(DataPageHeaderV1 {
        num_values: rows_i32,
        encoding: Encoding::RleDictionary.into(),
        definition_level_encoding: Encoding::Rle.into(),
        repetition_level_encoding: Encoding::Rle.into(),
        statistics,
    });
    let descriptor = Descriptor {
        primitive_type: primitive.clone(),
        max_def_level: 0,
        max_rep_level: 0,
    };
    let distinct = dictionary.values().count();
    Ok([
        CompressedPage::Dict(CompressedDictPage::new(
            CowBuffer::Owned(compress(zstd, &dictionary.page)?),
            Compression::Zstd,
            page_bytes,
            distinct,
            false,
        )),
        CompressedPage::Data(CompressedDataPage::new(
            header,
            CowBuffer::Owned(compress(zstd, std::slice::from_ref(&indices))?),
            Compression::Zstd,
            indices.len(),
            descriptor,
            rows,
        )),
    ])
}

/// The concatenation of `buffers` compressed with zstd, a frame per buffer (zstd's data is one
/// frame or more), into a buffer that the pages it does not fill never touch.
///
/// Compressed as one frame, the buffers would each be copied into zstd's window first (one
/// frame per page of 8 MiB is also about the fastest zstd is on psets-bench's texts: twice as
/// fast as in pages of 1 MiB).
fn compress(zstd: &mut CCtx<'static>, buffers: &[Vec<u8>]) -> PolarsResult<Vec<u8>> {
    // No bytes are still a frame.
    let no_bytes = [Vec::new()];
    let buffers = if buffers.is_empty() {
        &no_bytes
    } else {
        buffers
    };
    let bound = |buffer: &Vec<u8>| zstd::zstd_safe::compress_bound(buffer.len());
    let mut out = Vec::with_capacity(buffers.iter().map(bound).sum());
    for buffer in buffers {
        zstd.reset(ResetDirective::SessionOnly)
            .map_err(zstd_error)?;
        zstd.set_pledged_src_size(Some(buffer.len() as u64))
            .map_err(zstd_error)?;
        let mut input = InBuffer::around(buffer);
        // With room for the whole frame, zstd compresses the buffer in one pass, where it is.
        out.reserve(bound(buffer));
        loop {
            let filled = out.len();
            let left = zstd
                .compress_stream2(
                    &mut OutBuffer::around_pos(&mut out, filled),
                    &mut input,
                    ZSTD_EndDirective::ZSTD_e_end,
                )
                .map_err(zstd_error)?;
            if left == 0 {
                break;
            }
            out.reserve(left);
        }
    }
    out.shrink_to_fit();
    Ok(out)
}

/// A zstd context at [`TEXT_ZSTD_LEVEL`].
fn text_zstd() -> PolarsResult<CCtx<'static>> {
    let mut zstd = CCtx::try_create()
        .ok_or_else(|| polars_err!(ComputeError: "zstd: no memory for a context"))?;
    zstd.set_parameter(CParameter::CompressionLevel(TEXT_ZSTD_LEVEL))
        .map_err(zstd_error)?;
    Ok(zstd)
}

/// zstd's error `code` as polars reports a failure.
fn zstd_error(code: usize) -> PolarsError {
    polars_err!(ComputeError: "zstd: {}", zstd::zstd_safe::get_error_name(code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::{Column, DataType, ParquetReader, SerReader};

    /// A frame of two columns, `id` and `text`, the texts all null (as the jobs table holds
    /// them until they are written).
    fn frame(rows: usize) -> DataFrame {
        let ids: Vec<u64> = (0..rows as u64).collect();
        DataFrame::new(
            rows,
            vec![
                Column::new("id".into(), ids),
                Column::full_null("text".into(), rows, &DataType::String),
            ],
        )
        .unwrap()
    }

    /// The frames written as row groups, each with its `text` given as `values`, to a file
    /// whose dictionary pages hold at most `max_page_bytes`; the file read back, and per row
    /// group whether its `text` has a dictionary page.
    fn written(groups: Vec<(usize, Dictionary)>, max_page_bytes: usize) -> (DataFrame, Vec<bool>) {
        let mut out = Vec::new();
        let mut file = ParquetFile::new(&mut out, frame(0).schema()).unwrap();
        file.max_dictionary_page_bytes = max_page_bytes;
        for (rows, values) in groups {
            file.write(RowGroupToWrite {
                frame: frame(rows),
                encoded: vec![EncodedColumn {
                    name: "text",
                    values,
                }],
            })
            .unwrap();
        }
        file.finish().unwrap();
        let metadata =
            polars_parquet::read::_read_metadata(&mut std::io::Cursor::new(&out)).unwrap();
        let has_dictionary = metadata
            .row_groups
            .iter()
            .map(|group| {
                let text = group
                    .columns_under_root_iter("text")
                    .unwrap()
                    .next()
                    .unwrap();
                text.dictionary_page_offset().is_some()
            })
            .collect();
        let read = ParquetReader::new(std::io::Cursor::new(out))
            .finish()
            .unwrap();
        (read, has_dictionary)
    }

    fn texts(read: &DataFrame) -> Vec<Option<String>> {
        let column = read.column("text").unwrap().str().unwrap();
        column.iter().map(|v| v.map(str::to_owned)).collect()
    }

    /// A frame of text columns that polars stores as a dictionary and as plain text: one
    /// value repeated (as a scalar column holds it), a few values with nulls whose equal texts
    /// are stored apart (as a column made row by row holds them), the empty text beside nulls,
    /// more distinct texts than [`FEW_VIEWS`], and texts mostly distinct over more than 128
    /// rows; and one column of bytes.
    fn texts_frame(rows: usize) -> DataFrame {
        use polars::prelude::{AnyValue, Scalar};
        let long = ["a switch of the east wing", "a switch of the west wing"];
        let few: Vec<Option<&str>> = (0..rows)
            .map(|r| (r % 5 != 0).then_some(long[r % 3 % 2]))
            .collect();
        let empty: Vec<Option<&str>> = (0..rows).map(|r| (r % 4 != 0).then_some("")).collect();
        let many: Vec<String> = (0..rows).map(|r| format!("job {r} of many")).collect();
        // Nine in ten distinct, each short enough to lie in its view.
        let mostly: Vec<String> = (0..rows).map(|r| (r - r % 10 / 9).to_string()).collect();
        let bytes: Vec<&[u8]> = (0..rows).map(|r| [b"x".as_slice(), b"yz"][r % 2]).collect();
        let constant = Scalar::new(DataType::String, AnyValue::StringOwned("nodesets".into()));
        DataFrame::new(
            rows,
            vec![
                Column::new_scalar("constant".into(), constant, rows),
                Column::new("few".into(), few),
                Column::new("empty".into(), empty),
                Column::new("many".into(), many),
                Column::new("mostly".into(), mostly),
                Column::new("bytes".into(), bytes),
            ],
        )
        .unwrap()
    }

    /// The estimate made from the registers few values set is polars' own, to the unit, for
    /// sets of 1 to 1,100 distinct values (texts that lie in their views and longer ones, the
    /// empty text among them) and for values repeated.
    #[test]
    fn estimate_of_few_values_is_polars_estimate() {
        use polars_compute::cardinality::estimate_cardinality;
        let mut rng = placesim_testkit::Lcg(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        for n in (1..=40).chain((41..=1_100).step_by(53)) {
            let values: Vec<Vec<u8>> = (0..n)
                .map(|i| {
                    let len = rng.below(30) as usize;
                    let mut text = format!("{i}:").into_bytes();
                    text.extend((0..len).map(|_| b'a' + rng.below(26) as u8));
                    if i == 0 { Vec::new() } else { text }
                })
                .collect();
            // Each value twice: repeats set no register higher.
            let twice = values.iter().chain(&values).map(Vec::as_slice);
            let mut array: MutableBinaryViewArray<[u8]> = MutableBinaryViewArray::new();
            for v in twice.clone() {
                array.push_value(v);
            }
            let array: BinaryViewArray = array.into();
            assert_eq!(
                estimate_of_few(twice),
                estimate_cardinality(&array),
                "{n} distinct values"
            );
            checked += 1;
        }
        assert_eq!(checked, 60);
    }

    /// Text columns of few distinct values, handed to polars' writer as the dictionaries it
    /// would make of them, come out byte for byte as polars' own `ParquetWriter` writes
    /// them, whatever polars decides for each (a dictionary or plain); and the shortcut is
    /// taken where it should be.
    #[test]
    fn few_distinct_texts_are_written_as_polars_writes_them() {
        for rows in [1, 100, 200, 3_000] {
            let frame = texts_frame(rows);
            let mut ours = Vec::new();
            let mut file = ParquetFile::new(&mut ours, frame.schema()).unwrap();
            file.write(RowGroupToWrite::from(frame.clone())).unwrap();
            file.finish().unwrap();
            let mut polars = Vec::new();
            let mut own = frame.clone();
            polars::prelude::ParquetWriter::new(&mut polars)
                .with_compression(polars::prelude::ParquetCompression::Snappy)
                .set_parallel(false)
                .finish(&mut own)
                .unwrap();
            assert!(ours == polars, "{rows} rows: the files differ");
            let taken: Vec<bool> = frame
                .iter_chunks(CompatLevel::newest(), false)
                .next()
                .unwrap()
                .into_arrays()
                .iter()
                .map(|array| dictionary_of_few(array.as_ref()).is_some())
                .collect();
            // Left to polars: a column of one null row (polars counts it apart); `few` once
            // its texts, each stored apart, are more than FEW_VIEWS views; and the distinct
            // texts over 128 rows, which polars stores plain (or, past FEW_VIEWS, the
            // shortcut no longer tries).
            let few_views = (0..rows).filter(|r| r % 5 != 0).count();
            let few = few_views > 0 && few_views <= FEW_VIEWS;
            let expected = [true, few, rows > 1, rows <= 128, rows <= 128, true];
            assert_eq!(taken, expected, "{rows} rows");
        }
    }

    /// A dictionary of `values`, whose third (if any) starts a second buffer when the second
    /// is long, with `keys`.
    fn dictionary(values: [&str; 3], keys: Vec<Option<u32>>) -> Dictionary {
        let mut dictionary = Dictionary::new();
        for value in values {
            assert!(dictionary.push_value(|out| out.extend_from_slice(value.as_bytes())));
        }
        dictionary.keys = keys;
        dictionary
    }

    /// A group whose page holds exactly the most a page may is stored as a dictionary; one a
    /// byte over, plain. Both read back as their values, nulls and repeats included, values
    /// in a second buffer too.
    #[test]
    fn dictionary_and_plain_groups_read_back_as_their_values() {
        let long = "(n1:ncpus=1)+".repeat(400_000);
        let first = dictionary(
            ["a", &long, "b"],
            vec![Some(2), None, Some(0), Some(1), Some(2)],
        );
        // Over the first buffer's half: the third value starts a second buffer.
        assert_eq!(first.page.len(), 2);
        let limit = first.page_bytes();
        let second = dictionary(["c", &long, "de"], vec![Some(2), None, Some(1), Some(0)]);
        assert_eq!(second.page_bytes(), limit + 1);
        let (read, has_dictionary) = written(vec![(5, first), (4, second)], limit);
        assert_eq!(has_dictionary, [true, false]);
        let text = |s: &str| Some(s.to_owned());
        assert_eq!(
            texts(&read),
            [
                text("b"),
                None,
                text("a"),
                Some(long.clone()),
                text("b"),
                text("de"),
                None,
                Some(long.clone()),
                text("c"),
            ]
        );
        let ids: Vec<Option<u64>> = read.column("id").unwrap().u64().unwrap().iter().collect();
        assert_eq!(ids, [0, 1, 2, 3, 4, 0, 1, 2, 3].map(Some));
    }
}
