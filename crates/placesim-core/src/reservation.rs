//! Reservations a site made: PBS advance and maintenance reservations (and, later, standing
//! reservations' occurrences), confirmed on named vnodes for a window of time.
//!
//! These are not the top-job reservations a queue discipline plans afresh at every pass: a
//! site reservation is fixed before the run, on fixed vnodes, and every discipline must keep
//! other jobs off its vnodes for its window (PBS's calendar conflict check,
//! reservations-and-partitions.md §1.5). The kernel holds its vnodes from its start to its
//! end; policies see every reservation not yet ended in [`crate::SchedContext::reservations`].

use crate::state::Allocation;
use crate::time::SimTime;
use std::sync::Arc;

/// A reservation confirmed on named vnodes over `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteReservation {
    /// Its name as the site gives it (PBS's `R123`, `M4`), for outputs and errors.
    pub name: Arc<str>,
    /// When its window opens: the kernel takes its vnodes then.
    pub start: SimTime,
    /// When its window closes (after `start`): the kernel gives its vnodes back then.
    pub end: SimTime,
    /// The vnodes and amounts it holds (PBS's `resv_nodes`). Held exclusively
    /// (`place=excl`, a maintenance reservation's `exclhost`), no other job may share a vnode
    /// with it while their windows overlap; held shared, others may use what it leaves.
    /// Shared: a standing reservation's occurrences all hold the same vnodes, and an hourly
    /// one on 10,000 scattered hosts made 26,280 copies of them (8 GB) when each had its own.
    pub allocation: Arc<Allocation>,
    /// The PBS queue (by index) whose jobs run inside it, if any (PBS names a reservation's
    /// queue by its id: `qsub -q R123`): they wait until its window opens, run only on what
    /// it holds, are killed when it closes, and those still waiting then are deleted.
    pub queue: Option<u32>,
    /// Who may use it, and so whether the kernel holds it at all.
    pub access: ReservationAccess,
}

/// How a site reservation keeps jobs off its vnodes.
///
/// PBS and Moab differ at the root: a PBS reservation *holds* its vnodes (the kernel takes
/// them, and only its queue's jobs run on them, in its universe), while a Moab reservation
/// holds nothing: it *blocks* the jobs its ACL does not admit and lets those it admits use its
/// nodes like any others, mixing them with free ones (reservations-and-partitions.md §5.3:
/// "admission is not confinement").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ReservationAccess {
    /// PBS: held by the kernel over its window.
    #[default]
    Held,
    /// Moab (SRCFG standing or `mrsvctl` administrative): not held; each job is admitted or
    /// blocked by the ACL, and an admitted job sees its nodes with the entry's affinity.
    Acl {
        /// Its access control list; empty for a system reservation, which no job may use.
        acl: Arc<Acl>,
        /// When the scheduler first knows this occurrence: a standing reservation is created
        /// DEPTH periods ahead (§5.1), so a job planned further out does not see it yet.
        known_from: SimTime,
    },
}

/// A Moab reservation's access control list (reservations-and-partitions.md §5.3, §5.4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Acl {
    /// The entries, in ACL order (the last match gives the affinity).
    pub entries: Vec<AclEntry>,
    /// The ACL as the site wrote it, for outputs (`USER==12+,CLASS==batch-`).
    pub text: Arc<str>,
}

/// One ACL entry: a credential, with its modifier and affinity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclEntry {
    /// The credential it matches.
    pub credential: Credential,
    /// What a match does.
    pub modifier: AclModifier,
    /// The affinity a match gives (`+`, `=`, `-`).
    pub affinity: Affinity,
}

/// A job credential an ACL entry names, as the run numbers them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Credential {
    /// USERLIST / `USER==`: a user number.
    User(u32),
    /// GROUPLIST / `GROUP==`: a group number.
    Group(u32),
    /// ACCOUNTLIST / `ACCT==`: a project.
    Account(Arc<str>),
    /// CLASSLIST / `CLASS==`: a class, by its index in the scenario's classes.
    Class(u32),
}

/// What matching an ACL entry does (MACL.c's modifiers; `^` XOR is code-only and refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclModifier {
    /// An ordinary entry: matching one admits the job.
    Plain,
    /// `!`: a match excludes the job even if other entries match.
    Not,
    /// `*`: the job must match every required entry, and one ordinary entry.
    Required,
}

/// A job's standing toward a node under reservations, in Moab's allocation order (R11): nodes
/// are taken tier by tier, so reserved nodes the job is welcome on go first, unreserved ones
/// next, and nodes of a reservation that admits the job only as a last resort after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Affinity {
    /// `+` (an entry's default).
    Positive,
    /// `=`.
    Neutral,
    /// No reservation on the node over the job's window.
    Unreserved,
    /// `-`: "last resort".
    Negative,
}

/// A job's credentials, as an ACL matches them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Credentials<'a> {
    /// Its user number.
    pub user: Option<u32>,
    /// Its group number.
    pub group: Option<u32>,
    /// Its project (Moab's account).
    pub account: Option<&'a str>,
    /// Its class, by index.
    pub class: Option<u32>,
}

impl Credentials<'_> {
    fn matches(&self, entry: &AclEntry) -> bool {
        match &entry.credential {
            Credential::User(u) => self.user == Some(*u),
            Credential::Group(g) => self.group == Some(*g),
            Credential::Account(a) => self.account == Some(&**a),
            Credential::Class(c) => self.class == Some(*c),
        }
    }
}

impl Acl {
    /// Whether the ACL admits a job with `who`'s credentials, and with which affinity
    /// (MACL.c as the spec reads it): no `!` entry may match, every `*` entry must, and at
    /// least one ordinary entry must; the affinity is the last matching entry's. `None` when
    /// the job is blocked, as it always is by an empty ACL (a system reservation).
    pub fn admits(&self, who: &Credentials<'_>) -> Option<Affinity> {
        let mut admitted = false;
        let mut affinity = Affinity::Positive;
        for entry in &self.entries {
            match (entry.modifier, who.matches(entry)) {
                (AclModifier::Not, true) | (AclModifier::Required, false) => return None,
                (AclModifier::Plain, true) => {
                    admitted = true;
                    affinity = entry.affinity;
                }
                (AclModifier::Required, true) => affinity = entry.affinity,
                (AclModifier::Not | AclModifier::Plain, false) => {}
            }
        }
        admitted.then_some(affinity)
    }
}

/// A reservation requested of the scheduler (`pbs_rsub -R start -E end -l select=...`): at
/// its submission it is unconfirmed, and the scheduler's next pass confirms it on vnodes that
/// can hold its request over its whole window, or denies it
/// (reservations-and-partitions.md §1.3).
#[derive(Debug, Clone, PartialEq)]
pub struct ReservationRequest {
    /// Its name (PBS's id).
    pub name: Arc<str>,
    /// When it is submitted.
    pub submit: SimTime,
    /// When its window opens.
    pub start: SimTime,
    /// When it closes.
    pub end: SimTime,
    /// What it asks for (its select and place), lowered.
    pub request: crate::Request,
    /// Its queue, as [`SiteReservation::queue`].
    pub queue: Option<u32>,
}

/// A reservation with a queue of its own, as the run goes: its window, and while it is open
/// the cluster as its jobs see it.
#[derive(Debug, Clone)]
pub struct ReservationQueue {
    /// The reservation's name.
    pub name: Arc<str>,
    /// Its queue, by index.
    pub queue: u32,
    /// When its window opens.
    pub start: SimTime,
    /// When it closes.
    pub end: SimTime,
    /// While the window is open: a state in which only what the reservation holds is free
    /// ([`crate::ClusterState::universe`]), less what its running jobs hold. `None` before
    /// and after.
    pub universe: Option<crate::ClusterState>,
}

impl SiteReservation {
    /// Whether the kernel holds its vnodes over its window (a PBS reservation).
    pub fn is_held(&self) -> bool {
        self.access == ReservationAccess::Held
    }

    /// Whether its window is still to come or open at `now` (it has not ended).
    pub fn open_at(&self, now: SimTime) -> bool {
        self.end > now
    }

    /// Whether its window overlaps `[from, until)`: both are half-open, so a job ending at
    /// the reservation's start, or starting at its end, does not overlap it.
    pub fn overlaps(&self, from: SimTime, until: SimTime) -> bool {
        self.start < until && from < self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(credential: Credential, modifier: AclModifier, affinity: Affinity) -> AclEntry {
        AclEntry {
            credential,
            modifier,
            affinity,
        }
    }

    /// MACL.c's rules: one ordinary match admits, a `!` match excludes, every `*` entry must
    /// match, and the last matching entry gives the affinity; an empty ACL admits nobody.
    #[test]
    fn acl_admission_and_affinity() {
        use AclModifier::{Not, Plain, Required};
        let acl = Acl {
            entries: vec![
                entry(Credential::Class(0), Plain, Affinity::Negative),
                entry(Credential::User(7), Plain, Affinity::Positive),
                entry(Credential::User(9), Not, Affinity::Positive),
            ],
            text: Arc::from(""),
        };
        let who = |user, class| Credentials {
            user: Some(user),
            class,
            ..Credentials::default()
        };
        assert_eq!(acl.admits(&who(1, Some(0))), Some(Affinity::Negative));
        // Both ordinary entries match: the later one's affinity.
        assert_eq!(acl.admits(&who(7, Some(0))), Some(Affinity::Positive));
        assert_eq!(acl.admits(&who(7, None)), Some(Affinity::Positive));
        assert_eq!(acl.admits(&who(1, Some(1))), None);
        // `!` wins over a matching class.
        assert_eq!(acl.admits(&who(9, Some(0))), None);
        let required = Acl {
            entries: vec![
                entry(
                    Credential::Account(Arc::from("p1")),
                    Required,
                    Affinity::Neutral,
                ),
                entry(Credential::Group(3), Plain, Affinity::Positive),
            ],
            text: Arc::from(""),
        };
        let member = |account: Option<&'static str>, group| Credentials {
            group: Some(group),
            account,
            ..Credentials::default()
        };
        assert_eq!(
            required.admits(&member(Some("p1"), 3)),
            Some(Affinity::Positive)
        );
        // The required entry alone does not admit; without it the ordinary one does not.
        assert_eq!(required.admits(&member(Some("p1"), 4)), None);
        assert_eq!(required.admits(&member(Some("p2"), 3)), None);
        assert_eq!(Acl::default().admits(&member(Some("p1"), 3)), None);
    }
}
