//! A key per vnode that stays the same over stretches of consecutive vnodes: the set a vnode
//! is watched in, the signature of the sets it is tracked in, the stretch of its capacities.

/// A key per position, and where the stretch of consecutive positions with its key ends (the
/// first later position with another key, or the length).
///
/// The loops that apply an allocation ask both once per run or segment of it, at its first
/// vnode. Kept as lists of the cluster's length, each ask was likely a cache miss on a big
/// cluster (a list is 373 KB on CEA-Curie's 93,312 vnodes), while most clusters have a few
/// stretches (a machine replayed from SWF has one). So up to [`StretchKeys::FEW`] stretches
/// are kept as their ends and keys alone, a few words that stay in cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StretchKeys {
    /// Each stretch's end (ascending; the last is the length) and key.
    Few { ends: Box<[u32]>, keys: Box<[u32]> },
    /// Per position, the end of its stretch and its key.
    Many { ends: Box<[u32]>, keys: Box<[u32]> },
}

impl Default for StretchKeys {
    /// No positions.
    fn default() -> StretchKeys {
        StretchKeys::new(&[])
    }
}

impl StretchKeys {
    /// The most stretches kept as [`StretchKeys::Few`]: a binary search over this many ends
    /// reads at most one cache line.
    pub(crate) const FEW: usize = 16;

    /// The stretches of `keys`.
    pub(crate) fn new(keys: &[u32]) -> StretchKeys {
        let n = u32::try_from(keys.len()).unwrap_or(u32::MAX);
        let mut ends = Vec::new();
        let mut stretch_keys = Vec::new();
        for (i, pair) in keys.windows(2).enumerate() {
            if pair[0] != pair[1] {
                ends.push((i + 1) as u32);
                stretch_keys.push(pair[0]);
            }
        }
        if let Some(&last) = keys.last() {
            ends.push(n);
            stretch_keys.push(last);
        }
        if ends.len() <= Self::FEW {
            return StretchKeys::Few {
                ends: ends.into(),
                keys: stretch_keys.into(),
            };
        }
        let mut per_position = vec![n; keys.len()];
        let mut from = 0;
        for &end in &ends {
            per_position[from..end as usize].fill(end);
            from = end as usize;
        }
        StretchKeys::Many {
            ends: per_position.into(),
            keys: keys.into(),
        }
    }

    /// The stretches of equal `values`, each keyed by its place among them (0, 1, ...).
    pub(crate) fn of_values<T: PartialEq>(values: &[T]) -> StretchKeys {
        let mut stretch = 0u32;
        let keys: Vec<u32> = (0..values.len())
            .map(|i| {
                if i > 0 && values[i] != values[i - 1] {
                    stretch += 1;
                }
                stretch
            })
            .collect();
        StretchKeys::new(&keys)
    }

    /// The ends and keys, and where position `v`'s stretch sits in them: the one search both
    /// asks below make.
    #[inline]
    fn locate(&self, v: usize) -> (&[u32], &[u32], usize) {
        match self {
            StretchKeys::Few { ends, keys } => {
                (ends, keys, ends.partition_point(|&end| end as usize <= v))
            }
            StretchKeys::Many { ends, keys } => (ends, keys, v),
        }
    }

    /// Where the stretch that position `v` is in ends; `v + 1` past the length.
    #[inline]
    pub(crate) fn until(&self, v: usize) -> usize {
        let (ends, _, at) = self.locate(v);
        ends.get(at).map_or(v + 1, |&end| end as usize)
    }

    /// The key of position `v`; none past the length.
    #[inline]
    pub(crate) fn key(&self, v: usize) -> Option<u32> {
        let (_, keys, at) = self.locate(v);
        keys.get(at).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms give every position the key it was given and the end of its stretch, as
    /// found by walking the keys one by one.
    #[test]
    fn stretches_answer_each_position_as_the_plain_list() {
        let cases: Vec<Vec<u32>> = vec![
            vec![],
            vec![7],
            vec![3; 50],
            vec![0, 0, 1, 1, 1, 0, 2],
            (0..40).map(|i| (i / 3) % 5).collect(),
            (0..40).collect(),
            (0..(StretchKeys::FEW as u32)).collect(),
            (0..=(StretchKeys::FEW as u32)).collect(),
        ];
        for keys in cases {
            let stretches = StretchKeys::new(&keys);
            let few = keys.windows(2).filter(|p| p[0] != p[1]).count() < StretchKeys::FEW;
            assert_eq!(
                matches!(stretches, StretchKeys::Few { .. }),
                few,
                "form of {keys:?}"
            );
            for v in 0..keys.len() + 3 {
                let end = (v < keys.len()).then(|| {
                    (v + 1..keys.len())
                        .find(|&u| keys[u] != keys[v])
                        .unwrap_or(keys.len())
                });
                assert_eq!(
                    stretches.until(v),
                    end.unwrap_or(v + 1),
                    "end at {v} of {keys:?}"
                );
                assert_eq!(
                    stretches.key(v),
                    keys.get(v).copied(),
                    "key at {v} of {keys:?}"
                );
            }
        }
    }

    #[test]
    fn values_are_keyed_by_their_stretch() {
        let stretches = StretchKeys::of_values(&["a", "a", "b", "a"]);
        let keys: Vec<_> = (0..4).map(|v| stretches.key(v)).collect();
        assert_eq!(keys, [Some(0), Some(0), Some(1), Some(2)]);
        assert_eq!(stretches.until(0), 2);
        assert_eq!(stretches.until(2), 3);
        assert_eq!(stretches.until(3), 4);
    }
}
