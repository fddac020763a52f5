//! A fixed-size bitset with fast iteration over set bits.
//!
//! Placement searches walk vnodes in first-fit order but skip busy ones a word at a time,
//! which keeps a search cheap on clusters with tens of thousands of mostly busy vnodes.

/// A fixed-size set of small integers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bitset {
    words: Vec<u64>,
    len: usize,
}

impl Bitset {
    /// A set able to hold `0..len`, all clear.
    pub fn new(len: usize) -> Self {
        Bitset {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// The capacity given to [`Bitset::new`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the capacity is zero.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `i` is in the set.
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Puts `i` in the set, or takes it out.
    #[inline]
    pub fn set(&mut self, i: usize, on: bool) {
        let bit = 1u64 << (i % 64);
        if on {
            self.words[i / 64] |= bit;
        } else {
            self.words[i / 64] &= !bit;
        }
    }

    /// Calls `f(i, member)` for every `i` of `range` in order and makes `i` a member exactly
    /// when it returns true. Each word is read and written once, not once per member: a loop
    /// that sets the bit it has just read would otherwise wait on its own store at every step.
    #[inline]
    pub fn update_range(
        &mut self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, bool) -> bool,
    ) {
        let mut i = range.start;
        while i < range.end {
            let w = i / 64;
            let stop = range.end.min((w + 1) * 64);
            let mut word = self.words[w];
            for j in i..stop {
                let bit = 1u64 << (j % 64);
                if f(j, word & bit != 0) {
                    word |= bit;
                } else {
                    word &= !bit;
                }
            }
            self.words[w] = word;
            i = stop;
        }
    }

    /// Puts every `i` of `range` in the set, or takes each out, a word at a time.
    ///
    /// The words strictly between the first and the last are filled whole: a whole stretch
    /// of thousands of vnodes sets several bitsets at once.
    pub fn set_range(&mut self, range: std::ops::Range<usize>, on: bool) {
        if range.start >= range.end {
            return;
        }
        let (first, last, head, tail) = edges(&range);
        let put = |word: &mut u64, mask: u64| {
            if on {
                *word |= mask;
            } else {
                *word &= !mask;
            }
        };
        if first == last {
            put(&mut self.words[first], head & tail);
            return;
        }
        put(&mut self.words[first], head);
        self.words[first + 1..last].fill(if on { u64::MAX } else { 0 });
        put(&mut self.words[last], tail);
    }

    /// [`Bitset::set_range`] over several sets of the same size at once, each to its own
    /// `on`: the masks are computed once and each word of the range is visited once for all
    /// the sets (a vnode's marks, six sets, change together at every whole stretch applied:
    /// set one set after another, they were a twentieth of CEA-Curie's instructions).
    pub fn set_ranges<const N: usize>(
        sets: [&mut Bitset; N],
        on: [bool; N],
        range: std::ops::Range<usize>,
    ) {
        if range.start >= range.end {
            return;
        }
        let (first, last, head, tail) = edges(&range);
        let (head, tail) = if first == last {
            (head & tail, 0)
        } else {
            (head, tail)
        };
        for (set, on) in sets.into_iter().zip(on) {
            debug_assert!(range.end <= set.len);
            let words = &mut set.words[first..=last];
            let fill = if on { u64::MAX } else { 0 };
            let put = |word: &mut u64, mask: u64| *word = (*word & !mask) | (fill & mask);
            let Some((start, rest)) = words.split_first_mut() else {
                continue;
            };
            put(start, head);
            if let Some((end, middle)) = rest.split_last_mut() {
                put(end, tail);
                for word in middle {
                    *word = fill;
                }
            }
        }
    }

    /// Whether every `i` of `range` is in the set, a word at a time: the first and last
    /// words under masks, the words between whole. Most ranges asked are a run of an
    /// allocation, within a word or two, asked several times per run applied, so this is
    /// kept apart from the search for where the range stops being in the set.
    #[inline]
    pub fn contains_range(&self, range: std::ops::Range<usize>) -> bool {
        if range.start >= range.end {
            return true;
        }
        let (first, last, head, tail) = edges(&range);
        if first == last {
            let mask = head & tail;
            return self.words[first] & mask == mask;
        }
        self.words[first] & head == head
            && self.words[last] & tail == tail
            && self.words[first + 1..last]
                .iter()
                .all(|&word| word == u64::MAX)
    }

    /// Whether no `i` of `range` is in the set, a word at a time.
    pub fn none_in_range(&self, range: std::ops::Range<usize>) -> bool {
        let mut i = range.start;
        while i < range.end {
            let w = i / 64;
            let stop = range.end.min((w + 1) * 64);
            if self.words[w] & span_mask(i, stop) != 0 {
                return false;
            }
            i = stop;
        }
        true
    }

    /// The first `i` of `range` not in the set, if any, a word at a time.
    pub fn first_absent(&self, range: std::ops::Range<usize>) -> Option<usize> {
        self.first_with(range, false)
    }

    /// The first `i` of `range` in the set, if any, a word at a time.
    pub fn first_present(&self, range: std::ops::Range<usize>) -> Option<usize> {
        self.first_with(range, true)
    }

    /// The first `i` of `range` whose membership is `present`, a word at a time: the first
    /// word here (most searches end in it), the rest in [`Bitset::first_with_after`].
    #[inline]
    fn first_with(&self, range: std::ops::Range<usize>, present: bool) -> Option<usize> {
        let skip = if present { 0 } else { u64::MAX };
        if range.start >= range.end {
            return None;
        }
        let w = range.start / 64;
        let stop = range.end.min((w + 1) * 64);
        // Which bits of [start, stop), within word w, have that membership.
        let found = (self.words[w] ^ skip) & span_mask(range.start, stop);
        if found != 0 {
            return Some(w * 64 + found.trailing_zeros() as usize);
        }
        if stop == range.end {
            return None;
        }
        self.first_with_after(stop..range.end, skip)
    }

    /// [`Bitset::first_with`] over `range`, which starts at a word's first bit, where the
    /// bits looked for are those that differ from `skip`: the whole words with none are
    /// passed over eight at a time ([`Bitset::first_word_not`]).
    fn first_with_after(&self, range: std::ops::Range<usize>, skip: u64) -> Option<usize> {
        let mut i = range.start;
        while i < range.end {
            // The words wholly inside the range that hold no such bit.
            i = self.first_word_not(i / 64, range.end / 64, skip) * 64;
            if i >= range.end {
                break;
            }
            let w = i / 64;
            let stop = range.end.min((w + 1) * 64);
            let found = (self.words[w] ^ skip) & span_mask(i, stop);
            if found != 0 {
                return Some(w * 64 + found.trailing_zeros() as usize);
            }
            i = stop;
        }
        None
    }

    /// The first word from `from` on, and before `stop`, that is not `skip` (no member, or
    /// every bit a member), or `stop`: eight words at a time while they all are. First fit
    /// scans the eligible vnodes from the front at every placement, past the busy front of a
    /// big cluster: on CEA-Curie under EASY, 361 words of none before its first eligible
    /// vnode on average, and 511 in all.
    #[inline]
    fn first_word_not(&self, from: usize, stop: usize, skip: u64) -> usize {
        let mut w = from;
        while w + 8 <= stop {
            let differs = self.words[w..w + 8]
                .iter()
                .fold(0, |acc, &word| acc | (word ^ skip));
            if differs != 0 {
                break;
            }
            w += 8;
        }
        while w < stop && self.words[w] == skip {
            w += 1;
        }
        w
    }

    /// Makes `self` equal to `other` without reallocating when the sizes match.
    pub fn copy_from(&mut self, other: &Bitset) {
        self.words.clone_from(&other.words);
        self.len = other.len;
    }

    /// Copies `other`'s words `words` (indices of 64-bit words, as [`Bitset::words_of`]
    /// gives them) into the same words of this set of the same size: a copy brought up to
    /// date only where it is known to differ.
    pub fn copy_words_from(&mut self, other: &Bitset, words: std::ops::Range<usize>) {
        debug_assert_eq!(self.len, other.len);
        self.words[words.clone()].copy_from_slice(&other.words[words]);
    }

    /// The indices of the 64-bit words that hold the members of `range`.
    #[inline]
    pub fn words_of(range: std::ops::Range<usize>) -> std::ops::Range<usize> {
        range.start / 64..range.end.div_ceil(64)
    }

    /// The members, ascending.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.iter_from(0)
    }

    /// The members that are `>= start`, ascending.
    #[inline]
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let first_word = start / 64;
        let mut word_idx = first_word;
        let mut current = match self.words.get(first_word) {
            Some(w) => w & (u64::MAX << (start % 64)),
            None => 0,
        };
        std::iter::from_fn(move || {
            loop {
                if current != 0 {
                    let bit = current.trailing_zeros() as usize;
                    current &= current - 1;
                    return Some(word_idx * 64 + bit);
                }
                word_idx = self.first_word_not(word_idx + 1, self.words.len(), 0);
                current = *self.words.get(word_idx)?;
            }
        })
    }

    /// The members as maximal ranges of consecutive ones, ascending, found a word at a time.
    pub fn runs(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.runs_in(0..self.len)
    }

    /// The members within `range` as maximal ranges of consecutive ones (cut at the range's
    /// ends), ascending, found a word at a time.
    pub fn runs_in(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let end = range.end.min(self.len);
        let mut from = range.start;
        std::iter::from_fn(move || {
            let start = self.first_present(from..end)?;
            let stop = self.first_absent(start..end).unwrap_or(end);
            from = stop;
            Some(start..stop)
        })
    }

    /// How many members there are.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// The first and last words a non-empty `range` covers, and the masks of its bits in each
/// (when both are the same word, its bits there are `head & tail`).
#[inline]
fn edges(range: &std::ops::Range<usize>) -> (usize, usize, u64, u64) {
    let (first, last) = (range.start / 64, (range.end - 1) / 64);
    let head = u64::MAX << (range.start % 64);
    let tail = u64::MAX >> (63 - (range.end - 1) % 64);
    (first, last, head, tail)
}

/// The bits of `[from, stop)` within their word: both in the same word, `from < stop`.
#[inline]
fn span_mask(from: usize, stop: usize) -> u64 {
    let span = stop - from;
    if span == 64 {
        u64::MAX
    } else {
        ((1u64 << span) - 1) << (from % 64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterates_members_in_order_across_words() {
        let mut b = Bitset::new(200);
        for i in [0, 63, 64, 130, 199] {
            b.set(i, true);
        }
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![0, 63, 64, 130, 199]);
        assert_eq!(b.iter_from(64).collect::<Vec<_>>(), vec![64, 130, 199]);
        assert_eq!(b.iter_from(65).collect::<Vec<_>>(), vec![130, 199]);
        b.set(63, false);
        assert!(!b.contains(63));
        assert_eq!(b.count(), 4);
    }

    /// The searches that pass over whole words eight at a time find what a bit-by-bit walk
    /// finds, on a set with long stretches of no members and of all members (more than eight
    /// words each), from and to anywhere.
    #[test]
    fn searches_over_long_stretches_match_bit_by_bit() {
        let n = 3_000;
        let mut b = Bitset::new(n);
        // None up to 700, all from 700 to 1,400, a few until 2,200, then none but 2,999.
        for i in (700..1_400).chain((1_400..2_200).filter(|i| i % 97 == 0)) {
            b.set(i, true);
        }
        b.set(2_999, true);
        let members: Vec<usize> = (0..n).filter(|&i| b.contains(i)).collect();
        for start in (0..n).step_by(37) {
            let from_start: Vec<usize> = members.iter().copied().filter(|&i| i >= start).collect();
            assert_eq!(
                b.iter_from(start).collect::<Vec<_>>(),
                from_start,
                "from {start}"
            );
            for end in (start..=n).step_by(91) {
                let absent = (start..end).find(|&i| !b.contains(i));
                assert_eq!(b.first_absent(start..end), absent, "{start}..{end}");
                let present = (start..end).find(|&i| b.contains(i));
                assert_eq!(b.first_present(start..end), present, "{start}..{end}");
                assert_eq!(
                    b.contains_range(start..end),
                    absent.is_none(),
                    "{start}..{end}"
                );
                assert_eq!(
                    b.none_in_range(start..end),
                    present.is_none(),
                    "{start}..{end}"
                );
            }
        }
        let runs: Vec<_> = b.runs().collect();
        let mut expected: Vec<std::ops::Range<usize>> = std::iter::once(700..1_400).collect();
        expected.extend((1_455..2_200).step_by(97).map(|i| i..i + 1));
        expected.push(2_999..3_000);
        assert_eq!(runs, expected);
        let mut empty = Bitset::new(n);
        assert_eq!(empty.iter().next(), None);
        assert_eq!(empty.first_present(0..n), None);
        empty.set_range(0..n, true);
        assert_eq!(empty.first_absent(0..n), None);
        assert_eq!(empty.runs().collect::<Vec<_>>(), vec![0..n]);
    }

    /// `first_absent`, `first_present` and `update_range` agree with their one-bit-at-a-time definitions on
    /// ranges that start, end and cross words anywhere.
    #[test]
    fn word_at_a_time_range_operations_match_bit_by_bit() {
        let mut b = Bitset::new(300);
        for i in (0..300).filter(|i| i % 7 != 3 && i % 64 != 5) {
            b.set(i, true);
        }
        for start in (0..300).step_by(13) {
            for end in (start..=300).step_by(29) {
                let naive = (start..end).find(|&i| !b.contains(i));
                assert_eq!(b.first_absent(start..end), naive, "{start}..{end}");
                let present = (start..end).find(|&i| b.contains(i));
                assert_eq!(b.first_present(start..end), present, "{start}..{end}");
                // Flip every bit of the range, seeing each old value in order.
                let mut flipped = b.clone();
                let mut seen = Vec::new();
                flipped.update_range(start..end, |i, was| {
                    seen.push((i, was));
                    !was
                });
                let expected: Vec<(usize, bool)> =
                    (start..end).map(|i| (i, b.contains(i))).collect();
                assert_eq!(seen, expected);
                for i in 0..300 {
                    assert_eq!(
                        flipped.contains(i),
                        b.contains(i) != (start..end).contains(&i)
                    );
                }
                assert_eq!(b.contains_range(start..end), naive.is_none());
                let runs: Vec<usize> = b.runs().flatten().collect();
                assert_eq!(runs, b.iter().collect::<Vec<_>>());
                assert!(b.runs().all(|r| r.end == 300 || !b.contains(r.end)));
                // Within the range: its members, in maximal runs cut only at its ends.
                let within: Vec<_> = b.runs_in(start..end).collect();
                let members: Vec<usize> = within.iter().cloned().flatten().collect();
                assert_eq!(
                    members,
                    (start..end).filter(|&i| b.contains(i)).collect::<Vec<_>>()
                );
                assert!(within.iter().all(|r| !r.is_empty()
                    && (r.start == start || !b.contains(r.start - 1))
                    && (r.end == end || !b.contains(r.end))));
                let none = (start..end).all(|i| !b.contains(i));
                assert_eq!(b.none_in_range(start..end), none, "{start}..{end}");
                for on in [false, true] {
                    let mut set = b.clone();
                    set.set_range(start..end, on);
                    for i in 0..300 {
                        let expected = if (start..end).contains(&i) {
                            on
                        } else {
                            b.contains(i)
                        };
                        assert_eq!(set.contains(i), expected, "{start}..{end} {on}: {i}");
                    }
                }
                // Several sets at once, each to its own value, as each alone.
                let mut other = Bitset::new(300);
                for i in (0..300).filter(|i| i % 5 == 1) {
                    other.set(i, true);
                }
                for on in [[false, true], [true, false], [true, true], [false, false]] {
                    let (mut x, mut y) = (b.clone(), other.clone());
                    Bitset::set_ranges([&mut x, &mut y], on, start..end);
                    let (mut x1, mut y1) = (b.clone(), other.clone());
                    x1.set_range(start..end, on[0]);
                    y1.set_range(start..end, on[1]);
                    assert_eq!((x, y), (x1, y1), "{start}..{end} {on:?}");
                }
            }
        }
    }
}
