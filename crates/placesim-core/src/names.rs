//! Lists chosen by name: disciplines, placements, input formats. Each list's type has `ALL`
//! and `name`; [`named_list!`](crate::named_list) gives it `Display` and `FromStr`, so the
//! command line, scenario files and error messages all read the one list.

/// A name that none of a list's entries has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`: expected one of {expected}")]
pub struct UnknownName {
    /// What was looked for: `discipline`, `placement`, `format`.
    pub what: &'static str,
    /// The name given.
    pub name: String,
    /// The names there are, comma-separated.
    pub expected: String,
}

/// The entry of `all` whose `name` is `given` (ASCII case ignored, as scenario files always
/// matched).
pub fn by_name<T: Copy, const N: usize>(
    all: &[T; N],
    given: &str,
    name: fn(T) -> &'static str,
    what: &'static str,
) -> Result<T, UnknownName> {
    all.iter()
        .copied()
        .find(|&t| name(t).eq_ignore_ascii_case(given))
        .ok_or_else(|| UnknownName {
            what,
            name: given.to_owned(),
            expected: all.map(name).join(", "),
        })
}

/// `Display` (the name) and `FromStr` (by name, failing with [`UnknownName`]) for a list type
/// with `ALL` and `name`; `$what` names the list in messages.
#[macro_export]
macro_rules! named_list {
    ($list:ty, $what:literal) => {
        impl std::fmt::Display for $list {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $list {
            type Err = $crate::names::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $crate::names::by_name(&Self::ALL, s, Self::name, $what)
            }
        }
    };
}
