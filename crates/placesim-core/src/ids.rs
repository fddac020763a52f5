//! Newtype identifiers, so that a job index can never be passed where a vnode index is meant.

use std::fmt;

macro_rules! index_id {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $inner);

        impl $name {
            /// The position of this id in its dense table.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The id at position `idx` of its dense table.
            ///
            /// # Panics
            /// If `idx` does not fit the id's integer type, which would mean a table
            /// far larger than any this simulator builds.
            #[inline]
            pub fn from_index(idx: usize) -> Self {
                Self(<$inner>::try_from(idx).expect(concat!(stringify!($name), " overflow")))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

index_id!(
    /// A job's position in the workload's job table (dense, from 0, in submit order).
    JobId(u32)
);
index_id!(
    /// A vnode's position in the cluster's vnode table; also its first-fit order.
    VnodeId(u32)
);
index_id!(
    /// A host's position in the cluster's host table. A host owns one or more vnodes.
    HostId(u32)
);
index_id!(
    /// A resource's position in the cluster's resource definitions.
    ResourceId(u16)
);
index_id!(
    /// An interned request's position in the workload's request table.
    RequestId(u32)
);
