#!/usr/bin/env python3
"""Write examples/jobs.sacct, the README tour's synthetic sacct trace.

Three days of a made-up team on the seed guide's cluster (examples/slurm.conf:
gpu[01-04], 8 x H100 each; partitions gpu-short, gpu-long, gpu-interactive),
printed the way `sacct -a -P --format=...` of Slurm 22.05 prints a job and its
steps (the header and field forms follow the real recording
conformance/records/mixed-load/run1/sacct.txt and the Hábrók sample in
../shared/traces). The start times come from a small EASY-backfill schedule
computed here, with a few seconds of scheduling latency; they are not
schedsim's, so `schedsim validate` on this file compares two different
schedulers. Deterministic: the same seed writes the same file.

    python3 scripts/make-example-sacct.py > examples/jobs.sacct
"""

import random
import sys
from datetime import datetime, timedelta

SEED = 20260601
EPOCH = datetime(2026, 6, 1, 8, 0, 0)  # a Monday, site-local time
DUMP = EPOCH + timedelta(days=3)  # when sacct ran
NODES = ["gpu01", "gpu02", "gpu03", "gpu04"]
GPUS, CPUS, MEM_G = 8, 112, 1953  # per node (RealMemory=2000000 MB)
# name: (nodes, max seconds, max nodes, priority tier)
PARTS = {
    "gpu-short": (NODES, 4 * 3600, 2, 300),
    "gpu-long": (NODES, 7 * 86400, 8, 100),
    "gpu-interactive": (["gpu01"], 2 * 3600, 1, 500),
}
USERS = [("aydin", "nlp", 1001), ("elif", "nlp", 1002), ("mert", "vision", 1003),
         ("zeynep", "vision", 1004), ("deniz", "infra", 1005), ("can", "nlp", 1006)]

rng = random.Random(SEED)


def hms(s):
    d, s = divmod(int(s), 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


def ts(t):
    return (EPOCH + timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%S")


def arrival(day_rate):
    """Submit times over three days, denser in working hours."""
    out, t = [], 0.0
    while True:
        t += rng.expovariate(day_rate / 86400)
        if t >= 3 * 86400:
            return out
        hour = (8 + t / 3600) % 24
        if 9 <= hour < 19 or rng.random() < 0.3:
            out.append(int(t))


jobs = []


def add(kind, part, submit, nodes, gpus, limit, run, state="COMPLETED", user=None, name=None, array=None):
    u = user or rng.choice(USERS)
    jobs.append(dict(kind=kind, part=part, submit=submit, nodes=nodes, gpus=gpus, limit=limit, run=run,
                     state=state, user=u, name=name or kind, array=array))


for t in arrival(4):  # multi-node and long training
    n = rng.choice([1, 1, 2, 2, 4])
    limit = rng.choice([12, 24, 48]) * 3600
    run = int(limit * rng.uniform(0.2, 1.1))
    st = "TIMEOUT" if run >= limit else rng.choice(["COMPLETED"] * 6 + ["FAILED"])
    add("train", "gpu-long", t, n, n * GPUS, limit, run, st, name=rng.choice(["llama_finetune", "deepspeed_train", "vit_pretrain"]))
for t in arrival(22):  # short GPU jobs
    if rng.random() < 0.25:
        n, g = 2, 16
    else:
        n, g = 1, rng.choice([1, 1, 2, 4, 4, 8])
    limit = rng.choice([1, 2, 2, 4]) * 3600
    run = int(limit * rng.uniform(0.05, 1.05))
    st = "TIMEOUT" if run >= limit else rng.choice(["COMPLETED"] * 8 + ["FAILED", "OUT_OF_MEMORY"])
    add("short", "gpu-short", t, n, g, limit, run, st, name=rng.choice(["eval", "sft_small", "inference", "bench"]))
for t in arrival(7):  # interactive sessions
    limit = 2 * 3600
    run = int(rng.uniform(300, 8000))
    st = "TIMEOUT" if run >= limit else "CANCELLED"
    add("interactive", "gpu-interactive", t, 1, rng.choice([1, 1, 2]), limit, min(run, limit + 30), st, name="bash")
for d in range(3):  # one hyperparameter array a day, --array=1-12%4
    t0 = d * 86400 + 3600 * rng.uniform(2, 9)
    u = rng.choice(USERS)
    for i in range(1, 13):
        run = int(rng.uniform(1800, 6000))
        add("array", "gpu-short", int(t0), 1, 1, 2 * 3600, run, user=u, name="hparam_search", array=(d, i))
for _ in range(3):  # cancelled while pending
    add("short", "gpu-short", int(rng.uniform(0, 3 * 86400 - 7200)), 2, 16, 4 * 3600, 0, "PENDING_CANCEL")

jobs.sort(key=lambda j: (j["submit"], j["array"] or (0, 0)))
jobid = 41200
arrays = {}
for j in jobs:
    j["raw"] = jobid
    if j["array"]:
        d, i = j["array"]
        arrays.setdefault(d, jobid)
        j["id"] = f"{arrays[d]}_{i}"
    else:
        j["id"] = str(jobid)
    jobid += 1
    if j["state"] == "PENDING_CANCEL":
        j["cancel"] = j["submit"] + int(rng.uniform(600, 5400))

# EASY backfill on time limits: the first job in priority order that cannot
# start gets the earliest time enough GPUs free up; later jobs start now only
# if they end (by their limit) before it.
free = {n: GPUS for n in NODES}
running = []  # (end_by_limit, end_actual, job, alloc)
pending = []
events = sorted({j["submit"] for j in jobs} | {j.get("cancel", 0) for j in jobs})
now = 0


def fits(j, freeg):
    nodes = PARTS[j["part"]][0]
    if j["nodes"] == 1:
        for n in nodes:
            if freeg[n] >= j["gpus"]:
                return {n: j["gpus"]}
        return None
    whole = [n for n in nodes if freeg[n] == GPUS]
    if len(whole) >= j["nodes"]:
        return {n: GPUS for n in whole[:j["nodes"]]}
    return None


def array_running(j):
    return sum(1 for r in running if r[2]["array"] and r[2]["array"][0] == j["array"][0])


def schedule(t):
    pending.sort(key=lambda j: (-PARTS[j["part"]][3], j["submit"], j["raw"]))
    shadow = None
    for j in list(pending):
        if j["array"] and array_running(j) >= 4:
            continue
        if j["state"] == "PENDING_CANCEL":
            continue  # held (a dependency never satisfied) until cancelled
        a = fits(j, free)
        if a and (shadow is None or t + j["limit"] <= shadow):
            lat = rng.randint(0, 3) if t == j["submit"] else rng.randint(2, 30)
            j["start"] = t + lat
            end = j["start"] + (j["limit"] + rng.randint(5, 40) if j["state"] == "TIMEOUT" else j["run"])
            j["end"] = end
            for n, g in a.items():
                free[n] -= g
            j["alloc"] = a
            running.append((j["start"] + j["limit"], end, j, a))
            pending.remove(j)
        elif not a and shadow is None:
            f = dict(free)
            for lim_end, _, _, ra in sorted(running, key=lambda r: r[0]):
                for n, g in ra.items():
                    f[n] += g
                if fits(j, f):
                    shadow = lim_end
                    break


t = 0
while t < DUMP.timestamp() - EPOCH.timestamp():
    for j in jobs:
        if j["submit"] == t:
            pending.append(j)
        if j.get("cancel") == t and j in pending:
            pending.remove(j)
            j["end"] = t
    for r in [r for r in running if r[1] <= t]:
        running.remove(r)
        for n, g in r[3].items():
            free[n] += g
    schedule(t)
    nxt = [j["submit"] for j in jobs if j["submit"] > t] + [r[1] for r in running if r[1] > t]
    nxt += [j["cancel"] for j in jobs if j.get("cancel", -1) > t]
    if not nxt:
        break
    t = min(nxt)
dump = int(DUMP.timestamp() - EPOCH.timestamp())


def hostlist(nodes):
    nums = sorted(int(n[3:]) for n in nodes)
    if len(nums) == 1:
        return f"gpu{nums[0]:02d}"
    parts, i = [], 0
    while i < len(nums):
        k = i
        while k + 1 < len(nums) and nums[k + 1] == nums[k] + 1:
            k += 1
        parts.append(f"{nums[i]:02d}" if k == i else f"{nums[i]:02d}-{nums[k]:02d}")
        i = k + 1
    return "gpu[" + ",".join(parts) + "]"


def tres(cpu, mem, gpus, nodes, typed):
    g = (f"gres/gpu:h100={gpus}," if typed else "") + f"gres/gpu={gpus}," if gpus else ""
    return f"billing={cpu},cpu={cpu},{g}mem={mem}G,node={nodes}"


HEADER = ("JobID|JobIDRaw|JobName|User|Account|Partition|QOS|State|ExitCode|Submit|Eligible|Start|End|"
          "Elapsed|Timelimit|NNodes|NCPUS|ReqMem|ReqTRES|AllocTRES|NodeList")
print(HEADER)
for j in jobs:
    if j["submit"] >= dump:
        continue
    user, acct, uid = j["user"]
    cpu = j["gpus"] * (CPUS // GPUS)
    mem = j["gpus"] * (MEM_G // GPUS)
    req = tres(cpu, mem, j["gpus"], j["nodes"], False)
    limit = hms(j["limit"])
    common = [j["id"], str(j["raw"]), j["name"], user, acct, j["part"], "normal"]
    if "start" not in j or j["start"] >= dump:
        if j["state"] == "PENDING_CANCEL":
            print("|".join(common + [f"CANCELLED by {uid}", "0:0", ts(j["submit"]), ts(j["submit"]), "None",
                                     ts(j["end"]), "00:00:00", limit, str(j["nodes"]), "0", f"{mem}G", req, "",
                                     "None assigned"]))
        else:
            print("|".join(common + ["PENDING", "0:0", ts(j["submit"]), ts(j["submit"]), "Unknown", "Unknown",
                                     "00:00:00", limit, str(j["nodes"]), "0", f"{mem}G", req, "", "None assigned"]))
        continue
    nl = hostlist(j["alloc"])
    alloc = tres(cpu, mem, j["gpus"], j["nodes"], True)
    st, end = j["state"], j["end"]
    if end > dump:
        st, end_s, el = "RUNNING", "Unknown", dump - j["start"]
    else:
        end_s, el = ts(end), end - j["start"]
    code = {"COMPLETED": "0:0", "FAILED": "1:0", "OUT_OF_MEMORY": "0:125", "TIMEOUT": "0:0",
            "CANCELLED": "0:0", "RUNNING": "0:0"}[st]
    shown = f"CANCELLED by {uid}" if st == "CANCELLED" else st
    print("|".join(common + [shown, code, ts(j["submit"]), ts(j["submit"]), ts(j["start"]), end_s, hms(el), limit,
                             str(j["nodes"]), str(cpu), f"{mem}G", req, alloc, nl]))
    first = sorted(j["alloc"])[0]
    step_state = {"COMPLETED": "COMPLETED", "FAILED": "FAILED", "OUT_OF_MEMORY": "OUT_OF_MEMORY",
                  "TIMEOUT": "CANCELLED", "CANCELLED": "CANCELLED", "RUNNING": "RUNNING"}[st]
    step_code = {"COMPLETED": "0:0", "FAILED": "1:0", "OUT_OF_MEMORY": "0:125", "TIMEOUT": "0:15",
                 "CANCELLED": "0:15", "RUNNING": "0:0"}[st]
    steps = []
    if j["kind"] != "interactive":
        steps.append(("batch", "batch", step_state, step_code, 1, j["gpus"] if j["nodes"] == 1 else GPUS, first))
    steps.append(("extern", "extern", "RUNNING" if st == "RUNNING" else "COMPLETED", "0:0", j["nodes"],
                  j["gpus"], nl))
    if j["kind"] in ("train", "interactive"):
        steps.append(("0", "bash" if j["kind"] == "interactive" else "torchrun", step_state, step_code,
                      j["nodes"], j["gpus"], nl))
    for suffix, name, sst, scode, sn, sg, snl in steps:
        scpu = sg * (CPUS // GPUS)
        print("|".join([f"{j['id']}.{suffix}", f"{j['raw']}.{suffix}", name, "", acct, "", "", sst, scode,
                        ts(j["start"]), ts(j["start"]), ts(j["start"]), end_s, hms(el), "", str(sn), str(scpu), "",
                        "", tres(scpu, sg * (MEM_G // GPUS), sg, sn, True), snl]))
