//! PBS's vnode `sharing` attribute, and how it and a job's `place=` sharing decide whether the
//! job holds its vnodes exclusively (pbs-placement-sets.md §3.2: `is_excl`, and the
//! exclhost test of `eval_placement`).

use crate::ast::PlaceSharing;
use placesim_core::Sharing;

/// A vnode's `sharing` (pbs_node_attributes(7B)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VnodeSharing {
    /// `default_shared`: the job's `place` decides; shared when it says nothing.
    #[default]
    DefaultShared,
    /// `default_excl`: exclusive unless the job says `shared`.
    DefaultExcl,
    /// `default_exclhost`: the whole host, unless the job says `shared` or `excl`.
    DefaultExclHost,
    /// `ignore_excl`: never exclusive, whatever the job says.
    IgnoreExcl,
    /// `force_excl`: always exclusive (the whole host when the job says `exclhost`).
    ForceExcl,
    /// `force_exclhost`: always the whole host.
    ForceExclHost,
}

impl VnodeSharing {
    /// Every value, by its name in PBS.
    pub const NAMES: [(&'static str, VnodeSharing); 6] = [
        ("default_shared", VnodeSharing::DefaultShared),
        ("default_excl", VnodeSharing::DefaultExcl),
        ("default_exclhost", VnodeSharing::DefaultExclHost),
        ("ignore_excl", VnodeSharing::IgnoreExcl),
        ("force_excl", VnodeSharing::ForceExcl),
        ("force_exclhost", VnodeSharing::ForceExclHost),
    ];

    /// Its name in PBS.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("", |(n, _)| n)
    }

    /// Every name, joined by `, `: what a value that is none of them should have been.
    pub fn names() -> String {
        Self::NAMES.map(|(n, _)| n).join(", ")
    }

    /// The value PBS names `name`.
    pub fn from_name(name: &str) -> Option<VnodeSharing> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, s)| s)
    }

    /// How a job whose `place` says `place` (none: nothing) holds vnodes of this sharing, as
    /// PBS decides it: `force_exclhost`, a `default_exclhost` vnode with a job that says
    /// nothing, or a job that says `exclhost` take the host (but not on `ignore_excl`, which
    /// is never exclusive); otherwise `force_excl`, or a job that says `excl`, or one that
    /// says nothing on a `default_excl` vnode, is exclusive.
    pub fn effective(self, place: Option<PlaceSharing>) -> Sharing {
        use VnodeSharing as V;
        if self == V::IgnoreExcl {
            return Sharing::Shared;
        }
        let exclhost = self == V::ForceExclHost
            || (self == V::DefaultExclHost && place.is_none())
            || place == Some(PlaceSharing::ExclHost);
        let excl = matches!(self, V::ForceExcl | V::ForceExclHost)
            || place == Some(PlaceSharing::Excl)
            || (place.is_none() && matches!(self, V::DefaultExcl | V::DefaultExclHost));
        if exclhost {
            Sharing::ExclHost
        } else if excl {
            Sharing::Excl
        } else {
            Sharing::Shared
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PBS's table: each vnode sharing against each job place sharing.
    #[test]
    fn vnode_sharing_and_place_decide_exclusivity() {
        use PlaceSharing as P;
        use Sharing as S;
        let places = [None, Some(P::Shared), Some(P::Excl), Some(P::ExclHost)];
        let table = [
            (
                "default_shared",
                [S::Shared, S::Shared, S::Excl, S::ExclHost],
            ),
            ("default_excl", [S::Excl, S::Shared, S::Excl, S::ExclHost]),
            (
                "default_exclhost",
                [S::ExclHost, S::Shared, S::Excl, S::ExclHost],
            ),
            ("ignore_excl", [S::Shared, S::Shared, S::Shared, S::Shared]),
            ("force_excl", [S::Excl, S::Excl, S::Excl, S::ExclHost]),
            (
                "force_exclhost",
                [S::ExclHost, S::ExclHost, S::ExclHost, S::ExclHost],
            ),
        ];
        for (name, expected) in table {
            let vnode = VnodeSharing::from_name(name).unwrap();
            let got: Vec<Sharing> = places.iter().map(|&p| vnode.effective(p)).collect();
            assert_eq!(got, expected, "{name}");
        }
        assert_eq!(VnodeSharing::from_name("force_shared"), None);
    }
}
