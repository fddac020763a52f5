#!/usr/bin/env python3
"""A naive count-based FCFS / EASY replay of an SWF trace: the reference scripts/bench.sh
times placesim against (issue 20).

Processors are one count, as in the textbook EASY (Mu'alem & Feitelson 2001): no vnodes, no
placement. It reads the trace with placesim's conventions (README, "SWF conventions"): size
is field 8 if > 0 else field 5; estimate is field 9 if > 0 else the run time; a job is killed
at its estimate; records with no size, a negative run time or submit, a size above the
machine, or status 2-4 are skipped; jobs are ordered by (submit, line). At each instant every
end is processed before every submit, then one pass runs: heads start in order while they
fit; under EASY the first head that does not fit gets the shadow time (the first estimated
end at which enough processors are free, all ends at that instant counted) and the surplus
then, and later jobs start if they fit now and end by the shadow time or fit in the surplus.

It prints the jobs replayed and their mean wait, which equal what placesim prints for the same
trace on one-ncpu vnodes (checked by scripts/bench.sh), and, with --starts FILE, each job's
start, one per line in (submit, line) order.

Usage: count_easy.py TRACE(.swf|.swf.gz) [--policy fcfs|easy] [--procs N] [--starts FILE]
"""

import argparse
import gzip
import heapq
import sys


def read_trace(path, procs):
    """The jobs of `path` as (submit, size, run, estimate), in (submit, line) order, and the
    machine's processors."""
    opener = gzip.open if path.endswith(".gz") else open
    jobs = []
    header_procs = None
    with opener(path, "rt") as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.startswith(";"):
                key, _, value = s[1:].partition(":")
                key = key.strip()
                value = value.strip().split()
                if value and key == "MaxProcs":
                    header_procs = int(float(value[0]))
                elif value and key == "MaxNodes" and header_procs is None:
                    header_procs = int(float(value[0]))
                continue
            fields = s.split()
            submit = int(float(fields[1]))
            run = int(float(fields[3]))
            size = int(float(fields[7])) if int(float(fields[7])) > 0 else int(float(fields[4]))
            requested_time = int(float(fields[8]))
            status = int(float(fields[10]))
            jobs.append((submit, len(jobs), size, run, requested_time, status))
    procs = procs or header_procs
    kept = []
    for submit, _, size, run, requested_time, status in sorted(jobs, key=lambda j: (j[0], j[1])):
        if size <= 0 or run < 0 or size > procs or submit < 0 or status in (2, 3, 4):
            continue
        estimate = requested_time if requested_time > 0 else run
        kept.append((submit, size, min(run, estimate), estimate))
    return kept, procs


def replay(jobs, procs, easy):
    """Each job's start under FCFS or EASY on `procs` processors."""
    start = [None] * len(jobs)
    free = procs
    ends = []  # (end, job)
    running = set()
    queue = []
    following = 0
    while following < len(jobs) or ends:
        now = min(ends[0][0] if ends else float("inf"),
                  jobs[following][0] if following < len(jobs) else float("inf"))
        while ends and ends[0][0] == now:
            _, j = heapq.heappop(ends)
            free += jobs[j][1]
            running.discard(j)
        while following < len(jobs) and jobs[following][0] == now:
            queue.append(following)
            following += 1

        def launch(j):
            nonlocal free
            start[j] = now
            free -= jobs[j][1]
            running.add(j)
            heapq.heappush(ends, (now + jobs[j][2], j))

        i = 0
        while i < len(queue) and jobs[queue[i]][1] <= free:
            launch(queue[i])
            i += 1
        if not easy or i >= len(queue):
            queue = queue[i:]
            continue
        head = queue[i]
        need = jobs[head][1]
        by_end = sorted((start[r] + jobs[r][3], r) for r in running)
        avail, shadow, k = free, None, 0
        while k < len(by_end):
            t = by_end[k][0]
            while k < len(by_end) and by_end[k][0] == t:
                avail += jobs[by_end[k][1]][1]
                k += 1
            if avail >= need:
                shadow = max(t, now)
                break
        extra = avail - need
        keep = [head]
        for n, j in enumerate(queue[i + 1:], start=i + 1):
            if free == 0:
                keep.extend(queue[n:])
                break
            size = jobs[j][1]
            by_shadow = now + jobs[j][3] <= shadow
            if size <= free and (by_shadow or size <= extra):
                if not by_shadow:
                    extra -= size
                launch(j)
            else:
                keep.append(j)
        queue = keep
    return start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--policy", choices=["fcfs", "easy"], default="easy")
    parser.add_argument("--procs", type=int, default=None)
    parser.add_argument("--starts", default=None)
    args = parser.parse_args()
    jobs, procs = read_trace(args.trace, args.procs)
    start = replay(jobs, procs, args.policy == "easy")
    wait = sum(s - j[0] for s, j in zip(start, jobs))
    print(f"{len(jobs)} jobs on {procs} processors under {args.policy}: "
          f"mean wait {wait / len(jobs):.1f} s")
    if args.starts:
        with open(args.starts, "w") as out:
            out.writelines(f"{s}\n" for s in start)


if __name__ == "__main__":
    sys.exit(main())
