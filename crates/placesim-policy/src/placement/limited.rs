//! Run limits (PBS `max_run`, `max_run_res.<resource>`) on top of any placement.
//!
//! A limit is room in the cluster state ([`placesim_core::LimitDraw`]): a job counts against
//! it while it runs, as it holds its vnodes. So every discipline, and every calendar of
//! top jobs, sees a limit's room come back at a job's estimated end and taken at a top job's
//! start, which is what PBS's `check_limits` does when it takes the largest count over the
//! job's run from its calendar (openpbs `limits.cpp`, `check_limits` with a calendar).

use placesim_core::{
    Allocation, ConsumableIdx, PlacementPolicy, Request, RequestFeature, Scratch, SetConstraints,
    StateView,
};
use std::sync::Arc;

/// `inner`, refusing a request while a run limit it counts against has no room for it, and
/// marking what it places with the request's draws so that the kernel holds them.
#[derive(Debug)]
pub struct Limited<P> {
    inner: P,
    /// Per limit: the comment of a job it holds back, in PBS's words.
    texts: Vec<Arc<str>>,
    /// Why the last `place` failed, when a limit did it.
    held_by: Option<Arc<str>>,
}

impl<P: PlacementPolicy> Limited<P> {
    /// `inner` under limits whose comments are `texts` (per limit index, with their `Not
    /// Running: ` prefix).
    pub fn new(inner: P, texts: Vec<Arc<str>>) -> Self {
        Limited {
            inner,
            texts,
            held_by: None,
        }
    }

    /// The placement inside.
    pub fn inner(&self) -> &P {
        &self.inner
    }
}

/// Whether the view's free totals cover `request`'s: the part of PBS's whole-pool check
/// (`resresv_can_fit_nodepart`) that comes before its run limits, so that a job that does
/// not fit anyway gets the placement's reason rather than the limit's.
fn totals_free(request: &Request, view: &Scratch<'_>) -> bool {
    let n_cons = view.cluster().resources().n_consumables();
    (0..n_cons).all(|c| {
        let c = ConsumableIdx(c as u8);
        request.total(c) <= view.free_total(c)
    })
}

impl<P: PlacementPolicy> PlacementPolicy for Limited<P> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        self.held_by = None;
        let draws = request.limit_draws.as_deref().unwrap_or(&[]);
        if let Some(short) = view.short_limit(draws) {
            // The limit's comment, unless the request does not fit what is free anyway (its
            // first select's totals are not free and no alternative places), when the
            // placement's own reason comes first, as PBS's whole-pool check does.
            if totals_free(request, view) || self.inner.place(request, view).is_some() {
                self.held_by = self.texts.get(short.limit as usize).cloned();
            }
            return None;
        }
        let mut allocation = self.inner.place(request, view)?;
        allocation.limit_draws.clone_from(&request.limit_draws);
        Some(allocation)
    }

    fn supports(&self) -> &'static [RequestFeature] {
        self.inner.supports()
    }

    fn unsupported(&self, request: &Request) -> Option<&'static str> {
        self.inner.unsupported(request)
    }

    fn refusal(&self) -> Option<Arc<str>> {
        self.held_by.clone().or_else(|| self.inner.refusal())
    }

    /// As the placement inside: a limit's comment is given only to a job whose totals are
    /// free (PBS checks the whole pool first), which a discipline's cheap totals test does
    /// not pass over.
    fn explains_refusals(&self) -> bool {
        self.inner.explains_refusals()
    }

    /// For a request under no limit, or whose limits cannot hold back any waiting job in
    /// this pass (a limit's room is not among the totals, and need not be when it covers
    /// every waiting job's draw: [`placesim_core::ClusterState::limits_slack`]).
    fn fits_by_totals(&self, request: &Request, view: &Scratch<'_>) -> bool {
        request
            .limit_draws
            .as_deref()
            .is_none_or(|draws| view.limits_slack(draws))
            && self.inner.fits_by_totals(request, view)
    }

    /// Whenever the placement inside decides on totals: a limit refuses exactly the
    /// requests whose draws its room cannot cover, and a placed request takes its draws.
    fn totals_decide_request(&self, request: &Request) -> bool {
        self.inner.totals_decide_request(request)
    }

    fn totals_decide_view(&self, view: &Scratch<'_>) -> bool {
        self.inner.totals_decide_view(view)
    }

    fn depends_only_on_state(&self) -> bool {
        // A limit's room is part of the state.
        self.inner.depends_only_on_state()
    }

    fn check_within_label(&self, request: &Request, allocation: &Allocation) -> Result<(), String> {
        self.inner.check_within_label(request, allocation)
    }

    /// None: a constraint dropped or bound by the placement inside would be placed past the
    /// limits (a scenario refuses run limits beside Moab node sets, the only placement with
    /// such constraints).
    fn constraints(&mut self) -> Option<&mut dyn SetConstraints> {
        None
    }
}
