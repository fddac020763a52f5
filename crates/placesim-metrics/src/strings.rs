//! Columns made straight from their values, for the tables written while a run goes on.
//!
//! polars' own string builder copies every string into the column: for `exec_vnode`, tens of
//! kilobytes a job, as long to copy as to make. Here each text is written once, into buffers
//! the column then owns. Number columns are made from their values and a validity mask, not
//! pushed one `Option` at a time.

use polars::prelude::{
    ArrowDataType, BooleanChunked, ChunkedArray, Column, CompatLevel, DataType, Float64Type,
    IntoColumn, PolarsNumericType, PolarsResult, StringChunked, UInt64Type, polars_bail,
};
use polars_arrow::array::{
    BooleanArray, MutableBinaryViewArray, PrimitiveArray, Utf8ViewArray, View,
};
use polars_arrow::bitmap::Bitmap;
use polars_buffer::Buffer;

/// The capacity of a text buffer; a buffer more than half full takes no more values. Buffers
/// this small are served, and used again, from the allocator's own memory: a buffer of a whole
/// row group's `exec_vnode`s, fresh from the system each time, cost a page fault per 4 KiB of
/// text. They are also far under the 4 GiB a view can address.
pub(crate) const BUFFER_BYTES: usize = 8 << 20;

/// Whether a text buffer holding `bytes` takes no more values ([`BUFFER_BYTES`]).
pub(crate) fn is_full(bytes: usize) -> bool {
    bytes > BUFFER_BYTES / 2
}

/// A string column, value by value.
pub(crate) struct StringColumn {
    views: Vec<View>,
    /// Per value, whether it is set (not null).
    valid: Vec<bool>,
    buffers: Vec<Buffer<u8>>,
    text: String,
}

impl StringColumn {
    /// A column for `n` values.
    pub(crate) fn with_capacity(n: usize) -> StringColumn {
        StringColumn {
            views: Vec::with_capacity(n),
            valid: Vec::with_capacity(n),
            buffers: Vec::new(),
            text: String::new(),
        }
    }

    /// Appends a null.
    pub(crate) fn push_null(&mut self) {
        self.views.push(View::default());
        self.valid.push(false);
    }

    /// Appends a value already written, by its view ([`StringColumn::write`]): a repeated
    /// value shares the text of its first.
    pub(crate) fn push_view(&mut self, view: View) {
        self.views.push(view);
        self.valid.push(true);
    }

    /// Writes a value's text into the buffer and returns its view, to be pushed once or more.
    pub(crate) fn write(&mut self, write: impl FnOnce(&mut String)) -> PolarsResult<View> {
        if is_full(self.text.len()) {
            let full = std::mem::replace(&mut self.text, String::with_capacity(BUFFER_BYTES));
            self.buffers.push(Buffer::from(full.into_bytes()));
        } else if self.text.capacity() == 0 {
            self.text.reserve(BUFFER_BYTES);
        }
        let start = self.text.len();
        write(&mut self.text);
        let value = &self.text.as_bytes()[start..];
        let (Ok(buffer), Ok(offset), Ok(_)) = (
            u32::try_from(self.buffers.len()),
            u32::try_from(start),
            u32::try_from(value.len()),
        ) else {
            polars_bail!(ComputeError: "a string value is over 4 GiB");
        };
        Ok(View::new_from_bytes(value, buffer, offset))
    }

    /// The column, named `name`; all nulls, as polars makes them, when no value is set.
    pub(crate) fn finish(self, name: &str) -> PolarsResult<Column> {
        let n = self.views.len();
        Ok(match self.into_array()? {
            Some(array) => StringChunked::with_chunk(name.into(), array).into_column(),
            None => Column::full_null(name.into(), n, &DataType::String),
        })
    }

    /// The values as an arrow array; none when no value is set.
    pub(crate) fn into_array(mut self) -> PolarsResult<Option<Utf8ViewArray>> {
        if !self.valid.contains(&true) {
            return Ok(None);
        }
        if !self.text.is_empty() {
            self.buffers.push(Buffer::from(self.text.into_bytes()));
        }
        // A column whose every text lies in its view (at most 12 bytes: names, kinds, most
        // sets) is pushed view by view rather than checked whole (`Utf8ViewArray::try_new`),
        // whose check reads every view's text again for valid UTF-8, a call a row (the checks
        // were 186 M instructions on nodesets-bench, most of them its million rows of set
        // names), where every text here was written from a `&str`. A column
        // with texts in buffers is checked as before: pushing those views one by one would
        // compare their whole buffer at each in a debug build.
        let inline = self
            .views
            .iter()
            .zip(&self.valid)
            .all(|(view, &valid)| !valid || view.length <= View::MAX_INLINE_SIZE);
        if !inline {
            return Utf8ViewArray::try_new(
                ArrowDataType::Utf8View,
                Buffer::from(self.views),
                Buffer::from(self.buffers),
                validity(self.valid),
            )
            .map(Some);
        }
        let mut array = MutableBinaryViewArray::<str>::with_capacity(self.views.len());
        for (view, valid) in self.views.into_iter().zip(self.valid) {
            if valid {
                array.push_view(view, &[]);
            } else {
                array.push_null();
            }
        }
        Ok(Some(array.freeze()))
    }

    /// The column whose values are this one's picked by `keys` (null where a key is none):
    /// repeated values share one text.
    pub(crate) fn picked(self, keys: &[Option<u32>]) -> StringColumn {
        let views = keys
            .iter()
            .map(|key| key.map_or(View::default(), |k| self.views[k as usize]))
            .collect();
        StringColumn {
            views,
            valid: keys.iter().map(Option::is_some).collect(),
            buffers: self.buffers,
            text: self.text,
        }
    }
}

/// A string column of `values`, each text written once however many rows hold it: rows whose
/// texts are the same in memory (a static name, a shared `Arc<str>`, a request's one text)
/// share its view. The column holds the same values as one pushed row by row, and polars
/// writes it the same; but its repeats are found by comparing views rather than texts when it
/// is written ([`crate::parquet`]), and no text is copied once per row.
pub(crate) fn shared_text_column<'a>(
    name: &str,
    values: impl ExactSizeIterator<Item = Option<&'a str>>,
) -> PolarsResult<Column> {
    let mut column = StringColumn::with_capacity(values.len());
    // By where the text lies and its length: the same text in memory, the same value.
    let mut written: Repeats<(usize, usize), View> = Repeats::default();
    for value in values {
        let Some(text) = value else {
            column.push_null();
            continue;
        };
        let at = (text.as_ptr() as usize, text.len());
        let view = match written.get(at) {
            Some(view) => view,
            None => {
                let view = column.write(|out| out.push_str(text))?;
                written.insert(at, view);
                view
            }
        };
        column.push_view(view);
    }
    column.finish(name)
}

/// What each key met so far stands for, the last one met kept apart: a column's rows most
/// often repeat the row before, and are then found without hashing.
pub(crate) struct Repeats<K, V> {
    last: Option<(K, V)>,
    all: foldhash::HashMap<K, V>,
}

impl<K, V> Default for Repeats<K, V> {
    fn default() -> Self {
        Repeats {
            last: None,
            all: foldhash::HashMap::default(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Copy, V: Copy> Repeats<K, V> {
    /// What `key` stands for, if it was met.
    pub(crate) fn get(&mut self, key: K) -> Option<V> {
        if let Some((last, value)) = self.last
            && last == key
        {
            return Some(value);
        }
        let value = *self.all.get(&key)?;
        self.last = Some((key, value));
        Some(value)
    }

    /// Records what `key`, not met before, stands for.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        self.all.insert(key, value);
        self.last = Some((key, value));
    }

    /// How many keys were met.
    pub(crate) fn len(&self) -> usize {
        self.all.len()
    }
}

/// A number column (u64, f64, ...) from its values, with `valid` saying which are not null
/// (none if every one is set).
pub(crate) fn number_column<T>(name: &str, values: Vec<T::Native>, valid: Vec<bool>) -> Column
where
    T: PolarsNumericType,
{
    let dtype = T::get_static_dtype().to_arrow(CompatLevel::newest());
    let array = PrimitiveArray::new(dtype, Buffer::from(values), validity(valid));
    ChunkedArray::<T>::with_chunk(name.into(), array).into_column()
}

/// A u64 column from its values, with `valid` saying which are not null.
pub(crate) fn u64_column(name: &str, values: Vec<u64>, valid: Vec<bool>) -> Column {
    number_column::<UInt64Type>(name, values, valid)
}

/// An f64 column from its values, with `valid` saying which are not null.
pub(crate) fn f64_column(name: &str, values: Vec<f64>, valid: Vec<bool>) -> Column {
    number_column::<Float64Type>(name, values, valid)
}

/// A boolean column from its values, with `valid` saying which are not null.
pub(crate) fn bool_column(name: &str, values: Vec<bool>, valid: Vec<bool>) -> Column {
    let array = BooleanArray::new(
        ArrowDataType::Boolean,
        Bitmap::from(values),
        validity(valid),
    );
    BooleanChunked::with_chunk(name.into(), array).into_column()
}

/// A validity bitmap, or none when every value is set.
fn validity(valid: Vec<bool>) -> Option<Bitmap> {
    valid.contains(&false).then(|| Bitmap::from(valid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_over_several_buffers_read_back_in_order_with_their_nulls() {
        // Values long enough that the column starts a new buffer every few of them, and short
        // ones that a view holds inline.
        let long = |i: usize| format!("{i}:").repeat(BUFFER_BYTES / 6);
        let values: Vec<String> = (0..6)
            .map(|i| if i % 3 == 0 { format!("v{i}") } else { long(i) })
            .collect();
        let mut distinct = StringColumn::with_capacity(values.len());
        for text in &values {
            let view = distinct.write(|out| out.push_str(text)).unwrap();
            distinct.push_view(view);
        }
        // Buffers filled and set aside, besides the one being filled.
        assert!(!distinct.buffers.is_empty(), "the test must span buffers");
        // Every value, nulls among them, and values picked again, as repeated allocations
        // are: long ones in a buffer set aside and in the last, and an inline one.
        let keys = [
            None,
            Some(0),
            Some(1),
            Some(2),
            None,
            Some(3),
            Some(4),
            Some(5),
        ]
        .into_iter()
        .chain([Some(1), Some(0), Some(5), None])
        .collect::<Vec<Option<u32>>>();
        let expected: Vec<Option<String>> = keys
            .iter()
            .map(|k| k.map(|k| values[k as usize].clone()))
            .collect();
        let column = distinct.picked(&keys).finish("c").unwrap();
        let read: Vec<Option<String>> = column
            .str()
            .unwrap()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect();
        assert_eq!(read, expected);
    }

    #[test]
    fn a_column_of_only_nulls_is_polars_own_null_column() {
        let column = StringColumn::with_capacity(0)
            .picked(&[None, None, None])
            .finish("c")
            .unwrap();
        assert_eq!(column.null_count(), 3);
        assert_eq!(column.dtype(), &DataType::String);
    }

    #[test]
    fn numbers_keep_their_values_and_nulls() {
        let column = u64_column("n", vec![4, 0, 7], vec![true, false, true]);
        let read: Vec<Option<u64>> = column.u64().unwrap().iter().collect();
        assert_eq!(read, [Some(4), None, Some(7)]);
        let column = u64_column("n", vec![1, 2], Vec::new());
        assert_eq!(column.null_count(), 0);
        assert_eq!(column.len(), 2);
    }

    /// A shared-text column holds the values of the column polars makes row by row, nulls
    /// included; rows whose texts are one in memory share a view, and equal texts stored
    /// apart do not (they are still equal values).
    #[test]
    fn shared_texts_are_the_rows_values_with_one_view_per_text_in_memory() {
        let long = String::from("Not Running: Insufficient amount of resource: ncpus");
        let apart = long.clone();
        let values: Vec<Option<&str>> = vec![
            Some(&long),
            None,
            Some("short"),
            Some(&long),
            Some(&apart),
            Some("short"),
            Some(&long),
        ];
        let column = shared_text_column("c", values.iter().copied()).unwrap();
        let plain = Column::new("c".into(), values.clone());
        assert!(column.equals_missing(&plain));
        let chunks = column.str().unwrap().downcast_iter().collect::<Vec<_>>();
        assert_eq!(chunks.len(), 1);
        let views = chunks[0].views();
        assert_eq!(views[0], views[3]);
        assert_eq!(views[0], views[6]);
        assert_ne!(views[0], views[4]);
        assert_eq!(views[2], views[5]);
        // Texts that all lie in their views, with nulls.
        let short = [
            Some("switch1"),
            None,
            Some("switch64"),
            Some("switch1"),
            Some(""),
        ];
        let column = shared_text_column("c", short.into_iter()).unwrap();
        assert!(column.equals_missing(&Column::new("c".into(), short.to_vec())));
        let nulls = shared_text_column("c", [None, None].into_iter()).unwrap();
        assert_eq!(nulls.null_count(), 2);
        assert_eq!(nulls.dtype(), &DataType::String);
    }
}
