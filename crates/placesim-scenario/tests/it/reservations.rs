//! `[[reservation]]`: reservations confirmed on named vnodes or whole hosts, and every way one
//! can be wrong, with the message naming its line, column and key.

use crate::{error_of, load_text};
use placesim_core::{Sharing, SimTime, VnodeId};

/// Four vnodes of 4 ncpus on two hosts.
const BASE: &str = "[[class]]\nname = \"n\"\ncount = 4\nvnodes_per_host = 2\nncpus = 4\n";

#[test]
fn reservations_hold_named_vnodes_or_whole_hosts() {
    let text = format!(
        "{BASE}[[reservation]]\nname = \"R1\"\nstart = 3600\nduration = \"1:00:00\"\n\
         nodes = \"(n1:ncpus=2)+(n2:ncpus=4)\"\n\
         [[reservation]]\nname = \"M2\"\nstart = \"2:00:00\"\nend = \"3:00:00\"\n\
         hosts = [\"n-h2\"]\n"
    );
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = s.cluster.hosts().iter().map(String::as_str).collect();
    assert_eq!(names, ["n-h1", "n-h2"]);
    let [r1, m2] = &s.reservations[..] else {
        panic!("two reservations: {:?}", s.reservations)
    };
    assert_eq!(
        (&*r1.name, r1.start, r1.end),
        ("R1", SimTime(3600), SimTime(7200))
    );
    assert_eq!(r1.allocation.sharing, Sharing::Shared);
    let parts: Vec<(VnodeId, Vec<u64>)> = r1
        .allocation
        .parts(3)
        .map(|(v, a)| (v, a.to_vec()))
        .collect();
    assert_eq!(
        parts,
        [(VnodeId(0), vec![2, 0, 0]), (VnodeId(1), vec![4, 0, 0])]
    );
    assert_eq!((m2.start, m2.end), (SimTime(7200), SimTime(10800)));
    assert_eq!(m2.allocation.sharing, Sharing::Excl);
    let vnodes: Vec<u32> = m2.allocation.vnodes().map(|v| v.0).collect();
    assert_eq!(vnodes, [2, 3]);
}

#[test]
fn bad_reservations_name_their_key() {
    let one = |body: &str| error_of(&format!("{BASE}[[reservation]]\nname = \"R1\"\n{body}"));
    assert_eq!(
        one("start = 10\nend = 20\nnodes = \"(n9:ncpus=1)\"\n"),
        "test.toml:10:9: key `reservation.nodes`: `(n9:ncpus=1)`: unknown vnode `n9`"
    );
    assert_eq!(
        one("start = 10\nend = 10\nnodes = \"(n1:ncpus=1)\"\n"),
        "test.toml:9:7: key `reservation.end`: expected a time after `start` (10 s), found 10 s"
    );
    assert_eq!(
        one("start = 10\nend = 20\nduration = 5\nnodes = \"(n1:ncpus=1)\"\n"),
        "test.toml:9:7: key `reservation`: give `end` or `duration`, not both"
    );
    assert_eq!(
        one("start = 10\nnodes = \"(n1:ncpus=1)\"\n"),
        "test.toml:7:8: key `reservation`: expected `end` or `duration`: when the window closes"
    );
    assert_eq!(
        one("start = 10\nend = 20\n"),
        "test.toml:7:8: key `reservation`: expected `nodes` (its vnodes, as `exec_vnode` writes them) or `hosts`"
    );
    assert_eq!(
        one("start = 10\nend = 20\nhosts = [\"n2\"]\n"),
        "test.toml:10:9: key `reservation.hosts`: unknown host `n2`"
    );
    assert_eq!(
        one("start = 10\nend = 20\nhosts = [\"n1\"]\nexclusive = false\n"),
        "test.toml:10:9: key `reservation.exclusive`: a reservation of whole hosts is exclusive"
    );
    assert_eq!(
        one("start = -5\nend = 20\nnodes = \"(n1:ncpus=1)\"\n"),
        "test.toml:8:9: key `reservation.start`: expected a duration [[[DD:]HH:]MM:]SS or seconds, found integer"
    );
    assert_eq!(
        one("start = 10\nend = 20\nnodes = \"(n1:ncpus=5)\"\n"),
        "test.toml:10:9: key `reservation.nodes`: reservation `R1` needs 5 ncpus of vnode `n1` from 10 s, which has 4"
    );
}

#[test]
fn reservations_that_overlap_are_refused_where_they_do_not_fit() {
    let two = |first: &str, second: &str| {
        error_of(&format!(
            "{BASE}[[reservation]]\nname = \"R1\"\n{first}[[reservation]]\nname = \"R2\"\n{second}"
        ))
    };
    assert_eq!(
        two(
            "start = 0\nend = 100\nnodes = \"(n1:ncpus=3)\"\n",
            "start = 50\nend = 60\nnodes = \"(n1:ncpus=2)\"\n"
        ),
        "test.toml:15:9: key `reservation.nodes`: reservation `R2` needs 2 ncpus of vnode `n1` from 50 s, which has 4; reservation `R1` holds 3 then"
    );
    assert_eq!(
        two(
            "start = 0\nend = 100\nhosts = [\"n-h1\"]\n",
            "start = 50\nend = 60\nnodes = \"(n2:ncpus=1)\"\n"
        ),
        "test.toml:15:9: key `reservation.nodes`: reservation `R2` would share vnode `n2` with reservation `R1` from 50 s, and one of them holds it exclusively"
    );
    // Back to back on the same vnodes is fine: windows are half-open.
    let text = format!(
        "{BASE}[[reservation]]\nname = \"R1\"\nstart = 0\nend = 100\nhosts = [\"n-h1\"]\n\
         [[reservation]]\nname = \"R2\"\nstart = 100\nend = 160\nhosts = [\"n-h1\"]\n"
    );
    assert_eq!(load_text(&text).unwrap().reservations.len(), 2);
    // A job running at the start holds its vnodes until its end.
    let text = format!(
        "{BASE}[[running]]\nid = 7\nexec_vnode = \"(n1:ncpus=4)\"\nend = 100\n\
         [[reservation]]\nname = \"R1\"\nstart = 50\nend = 60\nnodes = \"(n1:ncpus=1)\"\n"
    );
    assert_eq!(
        error_of(&text),
        "test.toml:14:9: key `reservation.nodes`: reservation `R1` needs 1 ncpus of vnode `n1` from 50 s, which has 4; running job 7 holds 4 then"
    );
}

#[test]
fn what_reservations_do_not_go_with_is_refused_at_the_first() {
    let resv = "[[reservation]]\nname = \"R1\"\nstart = 10\nend = 20\nnodes = \"(n1:ncpus=1)\"\n";
    let conservative = format!("{BASE}[run]\ndiscipline = \"conservative\"\n{resv}");
    assert_eq!(load_text(&conservative).unwrap().reservations.len(), 1);
    assert_eq!(
        error_of(&format!("{BASE}[run]\nwalltime = \"overrun\"\n{resv}")),
        "test.toml:9:8: key `reservation`: reservations need jobs killed at their walltime (run.walltime = \"kill\"): a job running past it would overlap the reservations it was kept off"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[failures.outage]]\nvnode = \"n1\"\ndown = 5\nup = 15\n{resv}"
        )),
        "test.toml:14:9: key `reservation.nodes`: reservation `R1` holds vnode `n1` while it is down ([5 s, 15 s)): a degraded reservation is not modelled yet (reservations-and-partitions.md §1.7)"
    );
    // An outage of another vnode, or of the same after the window, is fine.
    for outage in [
        "vnode = \"n2\"\ndown = 5\nup = 15",
        "vnode = \"n1\"\ndown = 20\nup = 30",
    ] {
        let text = format!("{BASE}[[failures.outage]]\n{outage}\n{resv}");
        assert!(load_text(&text).is_ok(), "{text}");
    }
}

#[test]
fn a_queue_named_as_a_reservation_is_its_queue() {
    let text = format!(
        "{BASE}[[pbs.queue]]\nname = \"workq\"\n[[pbs.queue]]\nname = \"R1\"\n\
         [[reservation]]\nname = \"R1\"\nstart = 10\nend = 20\nnodes = \"(n1:ncpus=4)\"\n\
         [[reservation]]\nname = \"M2\"\nstart = 10\nend = 20\nhosts = [\"n-h2\"]\n"
    );
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    let queues: Vec<Option<u32>> = s.reservations.iter().map(|r| r.queue).collect();
    assert_eq!(queues, [Some(1), None]);
    // A job running at t = 0 in the reservation's queue runs inside it: the reservation must
    // be open then and hold what the job holds.
    let with_running = |start: u64, exec: &str| {
        format!(
            "{BASE}[[pbs.queue]]\nname = \"R1\"\n\
             [[running]]\nid = 3\nexec_vnode = \"{exec}\"\nend = 100\nqueue = \"R1\"\n\
             [[reservation]]\nname = \"R1\"\nstart = {start}\nend = 200\nnodes = \"(n1:ncpus=4)\"\n"
        )
    };
    assert!(load_text(&with_running(0, "(n1:ncpus=2)")).is_ok());
    assert_eq!(
        error_of(&with_running(10, "(n1:ncpus=2)")),
        "test.toml:15:9: key `reservation.start`: running job 3 is in the queue of reservation `R1`, which opens only at 10 s: a job running at t = 0 inside it needs it open then"
    );
    assert_eq!(
        error_of(&with_running(0, "(n2:ncpus=1)")),
        "test.toml:14:8: key `reservation`: running job 3 of reservation `R1`'s queue holds more of vnode `n2` than the reservation does (with the queue's other running jobs)"
    );
}

#[test]
fn a_standing_reservation_is_its_occurrences() {
    let text = format!(
        "{BASE}[[reservation]]\nname = \"S42\"\nstart = \"09:00:00\"\nduration = \"02:00:00\"\n\
         nodes = \"(n1:ncpus=4)\"\nrecurrence = \"FREQ=DAILY;INTERVAL=2;COUNT=3\"\n"
    );
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    let windows: Vec<(u64, u64)> = s
        .reservations
        .iter()
        .map(|r| (r.start.as_secs(), r.end.as_secs()))
        .collect();
    assert_eq!(
        windows,
        [(32_400, 39_600), (205_200, 212_400), (378_000, 385_200)]
    );
    // Every occurrence holds the one allocation: an hourly reservation on 10,000 scattered
    // hosts took 8 GB when each had its own copy.
    assert!(
        s.reservations
            .iter()
            .all(|r| std::sync::Arc::ptr_eq(&r.allocation, &s.reservations[0].allocation))
    );
    // Only the occurrences that start within three years of t = 0, as PBS keeps.
    let text = format!(
        "{BASE}[[reservation]]\nname = \"S1\"\nstart = 0\nduration = 60\n\
         nodes = \"(n1:ncpus=4)\"\nrecurrence = \"FREQ=WEEKLY;COUNT=2000\"\n"
    );
    assert_eq!(load_text(&text).unwrap().reservations.len(), 157);
    let bad = |rule: &str| {
        error_of(&format!(
            "{BASE}[[reservation]]\nname = \"S1\"\nstart = 0\nduration = \"02:00:00\"\n\
             nodes = \"(n1:ncpus=4)\"\nrecurrence = \"{rule}\"\n"
        ))
    };
    assert_eq!(
        bad("FREQ=HOURLY;COUNT=3"),
        "test.toml:11:14: key `reservation.recurrence`: the duration (7200 s) exceeds the frequency's period (3600 s), which pbs_rsub refuses"
    );
    assert_eq!(
        bad("FREQ=MONTHLY;COUNT=3"),
        "test.toml:11:14: key `reservation.recurrence`: FREQ=MONTHLY: expected HOURLY, DAILY or WEEKLY (PBS's)"
    );
    assert_eq!(
        bad("FREQ=DAILY"),
        "test.toml:11:14: key `reservation.recurrence`: expected COUNT: how many occurrences"
    );
    assert_eq!(
        bad("FREQ=WEEKLY;BYDAY=MO;COUNT=10"),
        "test.toml:11:14: key `reservation.recurrence`: BYDAY: needs the calendar date and time zone of t = 0, which a scenario does not carry yet: give FREQ, COUNT and INTERVAL"
    );
    assert_eq!(
        bad("FREQ=DAILY;COUNT=0"),
        "test.toml:11:14: key `reservation.recurrence`: `COUNT=0`: expected a whole number above 0"
    );
    assert_eq!(
        bad("FREQ=DAILY;BYMINUTE=5;COUNT=2"),
        "test.toml:11:14: key `reservation.recurrence`: BYMINUTE: PBS refuses it"
    );
}

#[test]
fn a_reservation_may_be_requested_of_the_scheduler() {
    let text = format!(
        "{BASE}[[pbs.queue]]\nname = \"R7\"\n[[reservation]]\nname = \"R7\"\nsubmit = 600\n\
         start = 3600\nduration = 3600\nrequest = \"select=2:ncpus=4 place=scatter\"\n"
    );
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    assert!(s.reservations.is_empty());
    let [r] = &s.reservation_requests[..] else {
        panic!("one request: {:?}", s.reservation_requests)
    };
    assert_eq!(
        (&*r.name, r.submit, r.start, r.end, r.queue),
        ("R7", SimTime(600), SimTime(3600), SimTime(7200), Some(0))
    );
    assert_eq!(r.request.total(placesim_core::ConsumableIdx::NCPUS), 8);
    let bad = |body: &str| {
        error_of(&format!(
            "{BASE}[[reservation]]\nname = \"R7\"\nstart = 100\nend = 200\n{body}"
        ))
    };
    assert_eq!(
        bad("request = \"select=1:ncpus=4\"\nsubmit = 150\n"),
        "test.toml:11:10: key `reservation.submit`: expected a time no later than `start` (100 s), found 150 s"
    );
    assert_eq!(
        bad("request = \"select=1:ncpus=4\"\nnodes = \"(n1:ncpus=1)\"\n"),
        "test.toml:11:9: key `reservation.nodes`: the scheduler chooses a requested reservation's vnodes: give `request` or `nodes`/`hosts`, not both"
    );
    assert_eq!(
        bad("request = \"select=1:ncpus=x\"\n"),
        "test.toml:10:11: key `reservation.request`: `select=1:ncpus=x`: column 16: resource `ncpus` needs an integer, found `x`"
    );
    assert_eq!(
        bad("nodes = \"(n1:ncpus=1)\"\nsubmit = 50\n"),
        "test.toml:11:10: key `reservation.submit`: a reservation given on its vnodes is confirmed from the start; `submit` goes with `request`"
    );
}

#[test]
fn a_timeline_deletes_jobs_takes_vnodes_offline_and_runs_cycles() {
    let text = format!(
        "{BASE}[[event]]\nat = 100\noffline = \"n2\"\n[[event]]\nat = \"00:05:00\"\nonline = \"n2\"\n\
         [[event]]\nat = 50\nqdel = 7\n[[event]]\nat = 400\noffline = \"n3\"\n\
         [[event]]\nat = 60\ncycle = true\n"
    );
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    let outages = outages_of(&s);
    assert_eq!(outages, [(1, 100, 300), (2, 400, u64::MAX)]);
    assert_eq!(s.timeline.deletions, [(SimTime(50), 7, 14)]);
    assert_eq!(s.timeline.cycles, [SimTime(60)]);
    let with_r1 = format!(
        "{BASE}[[reservation]]\nname = \"R1\"\nstart = 100\nduration = 50\nnodes = \"(n1:ncpus=1)\"\n\
         [[event]]\nat = 120\nrdel = \"R1\"\n"
    );
    let s = load_text(&with_r1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.timeline.reservation_deletions,
        [(SimTime(120), std::sync::Arc::from("R1"))]
    );
    assert_eq!(
        error_of(&format!("{BASE}[[event]]\nat = 10\nrdel = \"R9\"\n")),
        "test.toml:8:8: key `event.rdel`: pbs_rdel: Unknown Reservation Id: no [[reservation]] or [[moab.reservation]] is named `R9`"
    );
    let bad = |body: &str| error_of(&format!("{BASE}[[event]]\n{body}"));
    assert_eq!(
        bad("at = 10\nset = \"node_group_key\"\n"),
        "test.toml:8:1: key `set`: unknown field `set`, expected one of `at`, `qdel`, `offline`, `online`, `add`, `cycle`, `qmgr`, `rdel`"
    );
    assert_eq!(
        bad("at = 10\noffline = \"n9\"\n"),
        "test.toml:8:11: key `event.offline`: unknown vnode `n9`"
    );
    assert_eq!(
        bad("at = -10\ncycle = true\n"),
        "test.toml:7:6: key `event.at`: expected a duration [[[DD:]HH:]MM:]SS or seconds, found integer"
    );
    assert_eq!(
        bad("at = 10\nonline = \"n1\"\n"),
        "test.toml:8:10: key `event.online`: vnode `n1` is not offline at 10 s"
    );
    assert_eq!(
        bad("at = 10\nqdel = 3\ncycle = true\n"),
        "test.toml:7:6: key `event`: expected exactly one of `qdel`, `offline`, `online`, `cycle`, `qmgr`, `rdel` and `add`"
    );
}

/// A timeline's `qmgr` commands change the placement-set settings from their time on, and
/// each entry at one time folds into one change; a bad command is named at its word.
#[test]
fn a_timeline_sets_placement_set_attributes_with_qmgr() {
    let base = "[run]\nplacement = \"pbs\"\n\
        [[resource]]\nname = \"switch\"\ntype = \"string\"\n\
        [[class]]\nname = \"n\"\ncount = 4\nncpus = 4\nresources = { switch = \"s1\" }\n\
        [[pbs.queue]]\nname = \"workq\"\n";
    let text = format!(
        "{base}[[event]]\nat = 200\nqmgr = \"unset server node_group_key\"\n\
         [[event]]\nat = 100\nqmgr = \"set server node_group_key = switch\"\n\
         [[event]]\nat = 100\nqmgr = \"set server node_group_enable=True\"\n\
         [[event]]\nat = 300\nqmgr = \"set queue workq node_group_key = switch,vnode\"\n\
         [[event]]\nat = 300\nqmgr = \"set sched do_not_span_psets = true\"\n"
    );
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    assert!(!s.pbs.psets.node_group_enable);
    let defs = s.cluster.resources();
    let (switch, vnode) = (
        defs.lookup("switch").unwrap(),
        defs.lookup("vnode").unwrap(),
    );
    let changes: Vec<(u64, bool, Vec<_>, Vec<_>, bool)> = s
        .timeline
        .pset_changes
        .iter()
        .map(|(at, p)| {
            (
                at.as_secs(),
                p.node_group_enable,
                p.server_key.clone(),
                p.queue_keys[0].clone(),
                p.do_not_span,
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            (100, true, vec![switch], vec![], false),
            (200, true, vec![], vec![], false),
            (300, true, vec![], vec![switch, vnode], true),
        ]
    );
    // Each command is a note the outputs list at its time: in time order, file order at one.
    let notes: Vec<(u64, &str)> = s
        .timeline
        .notes
        .iter()
        .map(|(at, kind, text)| {
            assert_eq!(*kind, placesim_core::SiteEvent::Setting);
            (at.as_secs(), &**text)
        })
        .collect();
    assert_eq!(
        notes,
        [
            (100, "set server node_group_key = switch"),
            (100, "set server node_group_enable=True"),
            (200, "unset server node_group_key"),
            (300, "set queue workq node_group_key = switch,vnode"),
            (300, "set sched do_not_span_psets = true"),
        ]
    );
    let bad =
        |command: &str| error_of(&format!("{base}[[event]]\nat = 10\nqmgr = \"{command}\"\n"));
    assert_eq!(
        bad("set server node_group_keys = switch"),
        "test.toml:15:20: key `event.qmgr`: unknown attribute `node_group_keys`: a timeline sets the server's node_group_enable and node_group_key"
    );
    assert_eq!(
        bad("set sched backfill_depth = 3"),
        "test.toml:15:19: key `event.qmgr`: unknown attribute `backfill_depth`: a timeline sets the scheduler's do_not_span_psets and only_explicit_psets"
    );
    assert_eq!(
        bad("set queue q9 node_group_key = switch"),
        "test.toml:15:19: key `event.qmgr`: unknown queue `q9`: define it under [[pbs.queue]]"
    );
    assert_eq!(
        bad("set server node_group_key = colour"),
        "test.toml:15:37: key `event.qmgr`: unknown resource `colour`: define it under [[resource]]"
    );
    assert_eq!(
        bad("set server node_group_enable = maybe"),
        "test.toml:15:40: key `event.qmgr`: expected True or False, found `maybe`"
    );
    assert_eq!(
        bad("create node n9"),
        "test.toml:15:9: key `event.qmgr`: expected `set` or `unset`, found `create`"
    );
    assert_eq!(
        bad("set server node_group_key switch"),
        "test.toml:15:35: key `event.qmgr`: expected `=` after `node_group_key`"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[event]]\nat = 10\nqmgr = \"set server node_group_enable = true\"\n"
        )),
        "test.toml:8:8: key `event.qmgr`: a `qmgr` event changes PBS placement-set settings: it needs `placement = \"pbs\"` in [run]"
    );
}

/// Four single-vnode hosts under Moab's placement, with a class `batch`.
const MOAB: &str =
    "[run]\nplacement = \"moab\"\n[[class]]\nname = \"n\"\ncount = 4\nncpus = 4\n[moab]\n";
const BATCH: &str = "[[moab.class]]\nname = \"batch\"\n";

/// `[[moab.reservation]]`: an administrative window, or a standing one's occurrences from
/// t = 0 (a midnight of weekday `day0`) up to the horizon, each known DEPTH − 1 periods ahead;
/// the ACL in file order, and the hosts whole.
#[test]
fn moab_reservations_are_windows_with_an_acl() {
    use placesim_core::{AclModifier, Affinity, Credential, ReservationAccess};
    let text = format!(
        "{MOAB}day0 = \"FRI\"\n{BATCH}\
         [[moab.reservation]]\nname = \"weekdays\"\nhostlist = [\"n[1-2]\"]\nperiod = \"DAY\"\n\
         days = [\"MON\", \"fri\"]\nstarttime = \"8:00:00\"\nendtime = \"18:00:00\"\n\
         classlist = [\"batch-\"]\nuserlist = [\"12\", \"13!\"]\n\
         [[moab.reservation]]\nname = \"weekly\"\nhostlist = [\"n3\"]\nperiod = \"WEEK\"\n\
         starttime = \"0:12:00:00\"\nendtime = \"6:00:00:00\"\ndepth = 1\n\
         [[moab.reservation]]\nname = \"maint\"\nhostlist = [\"n4\"]\nstart = 100\nduration = 50\n"
    );
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    let windows = |name: &str| -> Vec<(u64, u64, u64)> {
        s.reservations
            .iter()
            .filter(|r| &*r.name == name)
            .take(3)
            .map(|r| match &r.access {
                ReservationAccess::Acl { known_from, .. } => {
                    (r.start.as_secs(), r.end.as_secs(), known_from.as_secs())
                }
                ReservationAccess::Held => panic!("{name} is Moab's"),
            })
            .collect()
    };
    const DAY: u64 = 86_400;
    // t = 0 is a Friday: Friday (day 0) and Monday (day 3), each known from the day before.
    assert_eq!(
        windows("weekdays"),
        [
            (8 * 3600, 18 * 3600, 0),
            (3 * DAY + 8 * 3600, 3 * DAY + 18 * 3600, 2 * DAY),
            (7 * DAY + 8 * 3600, 7 * DAY + 18 * 3600, 6 * DAY),
        ]
    );
    // Weeks from Sunday 00:00, five days before t = 0: this week's window is cut at t = 0.
    assert_eq!(
        windows("weekly"),
        [
            (0, DAY, 0),
            (2 * DAY + 12 * 3600, 8 * DAY, 2 * DAY),
            (9 * DAY + 12 * 3600, 15 * DAY, 9 * DAY),
        ]
    );
    assert_eq!(windows("maint"), [(100, 150, 0)]);
    // A standing reservation's windows all hold its one allocation.
    let weekdays: Vec<_> = s
        .reservations
        .iter()
        .filter(|r| &*r.name == "weekdays")
        .collect();
    assert!(weekdays.len() > 100);
    assert!(
        weekdays
            .iter()
            .all(|r| std::sync::Arc::ptr_eq(&r.allocation, &weekdays[0].allocation))
    );
    // t = 0 at 10:00 on that Friday (an imported site's first record): today's window is cut
    // at t = 0, and each later one is known from the midnight a day before it.
    let at_ten =
        load_text(&text.replace("day0 = \"FRI\"\n", "day0 = \"FRI\"\ntime0 = \"10:00:00\"\n"))
            .unwrap_or_else(|e| panic!("{e}"));
    let first: Vec<(u64, u64, u64)> = at_ten
        .reservations
        .iter()
        .filter(|r| &*r.name == "weekdays")
        .take(2)
        .map(|r| match &r.access {
            ReservationAccess::Acl { known_from, .. } => {
                (r.start.as_secs(), r.end.as_secs(), known_from.as_secs())
            }
            ReservationAccess::Held => panic!("Moab's"),
        })
        .collect();
    assert_eq!(
        first,
        [
            (0, 8 * 3600, 0),
            (3 * DAY - 2 * 3600, 3 * DAY + 8 * 3600, 2 * DAY - 10 * 3600),
        ]
    );
    let r = s
        .reservations
        .iter()
        .find(|r| &*r.name == "weekdays")
        .unwrap();
    let vnodes: Vec<u32> = r.allocation.vnodes().map(|v| v.0).collect();
    assert_eq!(vnodes, [0, 1]);
    let ReservationAccess::Acl { acl, .. } = &r.access else {
        panic!("Moab's")
    };
    assert_eq!(&*acl.text, "CLASS==batch-,USER==12,USER==13!");
    let entries: Vec<(Credential, AclModifier, Affinity)> = acl
        .entries
        .iter()
        .map(|e| (e.credential.clone(), e.modifier, e.affinity))
        .collect();
    assert_eq!(
        entries,
        [
            (Credential::Class(0), AclModifier::Plain, Affinity::Negative),
            (Credential::User(12), AclModifier::Plain, Affinity::Positive),
            (Credential::User(13), AclModifier::Not, Affinity::Positive),
        ]
    );
    // Nothing admits anyone into a system reservation.
    let maint = s.reservations.iter().find(|r| &*r.name == "maint").unwrap();
    assert!(matches!(&maint.access, ReservationAccess::Acl { acl, .. } if acl.entries.is_empty()));
}

#[test]
fn bad_moab_reservations_name_their_key() {
    let one = |body: &str| {
        error_of(&format!(
            "{MOAB}{BATCH}[[moab.reservation]]\nname = \"r\"\nhostlist = [\"n1\"]\n{body}"
        ))
    };
    let cases = [
        (
            "",
            "test.toml:11:8: key `moab.reservation`: expected `start` (an administrative reservation) or `period` (a standing one)",
        ),
        (
            "start = 5\nperiod = \"DAY\"\n",
            "test.toml:13:9: key `moab.reservation`: `start`, `end` and `duration` make an administrative reservation; a standing one (`period`) takes `starttime` and `endtime`",
        ),
        (
            "start = 5\nend = 9\ndays = [\"MON\"]\n",
            "test.toml:15:8: key `moab.reservation`: `days`, `starttime`, `endtime` and `depth` go with `period`",
        ),
        (
            "start = 5\n",
            "test.toml:11:8: key `moab.reservation`: expected `end` or `duration`: when the window closes",
        ),
        (
            "period = \"MONTH\"\n",
            "test.toml:13:10: key `moab.reservation.period`: PERIOD=MONTH: expected DAY, WEEK or INFINITY",
        ),
        (
            "period = \"DAY\"\nstarttime = \"25:00:00\"\n",
            "test.toml:14:13: key `moab.reservation.starttime`: `25:00:00`: expected an offset in the period, HH:MM:SS (at most 86400 s)",
        ),
        (
            "period = \"DAY\"\nstarttime = \"9:00:00\"\nendtime = \"8:00:00\"\n",
            "test.toml:15:11: key `moab.reservation.endtime`: expected ENDTIME after STARTTIME (32400 s into the period), found 28800 s",
        ),
        (
            "period = \"DAY\"\ndays = [\"MON\", \"Funday\"]\n",
            "test.toml:14:8: key `moab.reservation.days`: expected a weekday, SUN, MON, TUE, WED, THU, FRI or SAT, found `Funday`",
        ),
        (
            "period = \"WEEK\"\ndays = [\"MON\"]\n",
            "test.toml:14:8: key `moab.reservation.days`: DAYS goes with PERIOD=DAY",
        ),
        (
            "period = \"INFINITY\"\nendtime = \"1:00:00\"\n",
            "test.toml:14:11: key `moab.reservation`: PERIOD=INFINITY reserves from t = 0 on: `days`, `starttime`, `endtime` and `depth` do not go with it",
        ),
        (
            "period = \"DAY\"\ndepth = 0\n",
            "test.toml:14:9: key `moab.reservation.depth`: expected DEPTH of 1 or more periods",
        ),
        (
            "start = 5\nend = 9\nuserlist = [\"alice\"]\n",
            "test.toml:15:13: key `moab.reservation.userlist`: `alice`: expected a user number, as the workload numbers them",
        ),
        (
            "start = 5\nend = 9\nclasslist = [\"debug+\"]\n",
            "test.toml:15:14: key `moab.reservation.classlist`: `debug+`: unknown class `debug`: expected a [[moab.class]] name",
        ),
        (
            "start = 5\nend = 9\ngrouplist = [\"3^\"]\n",
            "test.toml:15:14: key `moab.reservation.grouplist`: `3^`: the XOR modifier `^` is in Moab's code only, not its documentation: not modelled",
        ),
        (
            "start = 5\nend = 9\naccountlist = [\"-\"]\n",
            "test.toml:15:16: key `moab.reservation.accountlist`: `-`: expected a name before the modifier",
        ),
    ];
    for (body, message) in cases {
        assert_eq!(one(body), message, "{body}");
    }
    let with_hosts = |hosts: &str| {
        error_of(&format!(
            "{MOAB}{BATCH}[[moab.reservation]]\nname = \"r\"\nhostlist = {hosts}\nstart = 5\nend = 9\n"
        ))
    };
    assert_eq!(
        with_hosts("[]"),
        "test.toml:12:12: key `moab.reservation.hostlist`: expected at least one host"
    );
    assert_eq!(
        with_hosts("[\"n9\"]"),
        "test.toml:12:12: key `moab.reservation.hostlist`: unknown host `n9`"
    );
    assert_eq!(
        with_hosts("[\"n[1-2]\", \"n2\"]"),
        "test.toml:12:12: key `moab.reservation.hostlist`: host `n2` is given twice"
    );
    assert_eq!(
        with_hosts("[\"n[2-1]\"]"),
        "test.toml:12:12: key `moab.reservation.hostlist`: `n[2-1]`: expected a range of numbers `first-last`, found `2-1`"
    );
    assert_eq!(
        with_hosts("[\"n[1-2\"]"),
        "test.toml:12:12: key `moab.reservation.hostlist`: `n[1-2`: expected `]` after the range"
    );
    // Names are unique across PBS's and Moab's reservations; Moab's need Moab's placement.
    assert_eq!(
        error_of(&format!("{MOAB}day0 = \"Someday\"\n")),
        "test.toml:8:8: key `moab.day0`: expected a weekday, SUN, MON, TUE, WED, THU, FRI or SAT, found `Someday`"
    );
    assert_eq!(
        error_of(&format!("{MOAB}time0 = \"24:00:00\"\n")),
        "test.toml:8:9: key `moab.time0`: `24:00:00`: expected the local time of day at t = 0, HH:MM:SS before 24:00:00"
    );
    assert_eq!(
        error_of(&format!(
            "[[reservation]]\nname = \"r\"\nstart = 5\nend = 9\nhosts = [\"n1\"]\n\
             {MOAB}{BATCH}[[moab.reservation]]\nname = \"r\"\nhostlist = [\"n1\"]\nstart = 5\n\
             end = 9\n"
        )),
        "test.toml:16:8: key `moab.reservation.name`: reservation `r` is given twice"
    );
    let pbs = "[[class]]\nname = \"n\"\ncount = 4\nncpus = 4\n\
               [[moab.reservation]]\nname = \"r\"\nhostlist = [\"n1\"]\nstart = 5\nend = 9\n";
    assert_eq!(
        error_of(pbs),
        "test.toml:6:8: key `moab.reservation`: Moab's reservations go with Moab's placement (run.placement = \"moab\"); PBS's are [[reservation]]"
    );
    assert_eq!(
        error_of(&format!(
            "{MOAB}nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"RESERVATION\"\nnodeset_list = [\"r9\"]\n"
        )),
        "test.toml:10:17: key `moab.nodeset_list`: unknown reservation `r9`: expected a [[moab.reservation]] name"
    );
}

/// `add = "NAME"`: a vnode defined with the others joins the cluster at its time, out of
/// service until then (an outage from 0); it must be the vnode's first entry, and no job runs
/// on it at t = 0.
#[test]
fn a_timeline_adds_vnodes() {
    let text =
        format!("{BASE}[[event]]\nat = 100\nadd = \"n4\"\n[[event]]\nat = 200\noffline = \"n4\"\n");
    let s = load_text(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.timeline.added, [(VnodeId(3), SimTime(100))]);
    let outages = outages_of(&s);
    assert_eq!(outages, [(3, 0, 100), (3, 200, u64::MAX)]);
    assert_eq!(
        error_of(&format!("{BASE}[[event]]\nat = 10\nadd = \"n9\"\n")),
        "test.toml:8:7: key `event.add`: unknown vnode `n9`"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[event]]\nat = 10\noffline = \"n4\"\n[[event]]\nat = 20\nadd = \"n4\"\n"
        )),
        "test.toml:11:7: key `event.add`: vnode `n4` is in service before 20 s (an earlier entry names it): a vnode is added once, before any `offline` or `online` of it"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[event]]\nat = 10\nadd = \"n4\"\nqdel = 3\n"
        )),
        "test.toml:7:6: key `event`: expected exactly one of `qdel`, `offline`, `online`, `cycle`, `qmgr`, `rdel` and `add`"
    );
    assert_eq!(
        error_of(&format!(
            "{BASE}[[running]]\nid = 900\nexec_vnode = \"(n4:ncpus=1)\"\nend = 50\n\
             [[event]]\nat = 10\nadd = \"n4\"\n"
        )),
        "test.toml:8:14: key `running.exec_vnode`: vnode `n4` is added only at 10 s (its [[event]]): no job runs on it at t = 0"
    );
}

/// A scenario's outages: (vnode, down, up).
fn outages_of(s: &placesim_scenario::Scenario) -> Vec<(u32, u64, u64)> {
    s.failures
        .outages
        .iter()
        .map(|o| (o.vnode.0, o.down.as_secs(), o.up.as_secs()))
        .collect()
}
