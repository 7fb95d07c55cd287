#!/usr/bin/env python3
"""machine.py - the machine a benchmark ran on, for the head of every results file.

    python3 bench/machine.py            # the lines below as Markdown, load average now
    python3 bench/machine.py --json     # the same as one JSON object
    python3 bench/machine.py --end      # one line: the load average now, for a file's end

Read from /proc/cpuinfo ("model name", "cpu family" and "model", "flags", cores), /sys/devices/system/cpu/cpu0/cache
(L1d / L1i / L2 / L3 sizes and how many CPUs share each) and /proc/loadavg.  Only the flags that
decide which kernels a CPU can run are listed (AVX2, FMA, the AVX-512 families, AVX512_BF16,
AVX512_FP16, AMX); a flag missing from the list is missing from the CPU (or hidden by its
hypervisor).  Needs nothing but the standard library."""
import json
import os
import sys
import time

FEATURES = ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
            "avx_vnni", "amx_tile", "amx_bf16", "amx_int8"]


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def load_average():
    """the 1-minute load average (how many runnable processes, on average, over the last minute)"""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def info():
    """dict: cpu (model name), features (the listed flags it has), caches ([(name, size, shared by
    N CPUs)]), cpus (logical CPUs), cores (physical cores per socket, from "cpu cores"), sockets,
    load (1-minute load average now)."""
    model, flags, cores, sockets, fam = "unknown CPU", set(), 0, set(), {}
    for line in _read("/proc/cpuinfo").splitlines():
        key, _, val = line.partition(":")
        key, val = key.strip(), val.strip()
        if key == "model name" and model == "unknown CPU":
            model = val
        elif key in ("cpu family", "model") and key not in fam:
            fam[key] = val
        elif key == "flags" and not flags:
            flags = set(val.split())
        elif key == "cpu cores" and not cores:
            cores = int(val) if val.isdigit() else 0
        elif key == "physical id":
            sockets.add(val)
    if "cpu family" in fam and "model" in fam:   # under a hypervisor the name may not tell the CPU apart
        model += " (family %s model %s)" % (fam["cpu family"], fam["model"])
    caches = []
    base = "/sys/devices/system/cpu/cpu0/cache"
    for i in range(8):
        d = "%s/index%d" % (base, i)
        if not os.path.isdir(d):
            break
        level, kind, size = _read(d + "/level"), _read(d + "/type"), _read(d + "/size")
        shared = _read(d + "/shared_cpu_list")
        n = 0
        for part in shared.split(","):   # "0-1,4-5" -> 4 CPUs
            if "-" in part:
                a, b = part.split("-")
                n += int(b) - int(a) + 1
            elif part:
                n += 1
        name = "L%s%s" % (level, {"Data": "d", "Instruction": "i"}.get(kind, ""))
        caches.append((name, size, n))
    return {"cpu": model, "features": [f for f in FEATURES if f in flags], "caches": caches,
            "cpus": os.cpu_count() or 0, "cores": cores, "sockets": max(1, len(sockets)), "load": load_average()}


def markdown(load_start=None, load_end=None, m=None):
    """Markdown lines naming the machine; the load averages at start / end when given (else now)."""
    m = m or info()
    caches = ", ".join("%s %s%s" % (n, s, " (shared by %d CPUs)" % k if k > 1 else "") for n, s, k in m["caches"])
    lines = ["CPU: %s; %d logical CPUs (%d cores per socket, %d socket%s)." % (
                 m["cpu"], m["cpus"], m["cores"], m["sockets"], "s" if m["sockets"] > 1 else ""),
             "Features: %s (of %s)." % (" ".join(m["features"]) or "none", " ".join(FEATURES)),
             "Caches (of CPU 0): %s." % (caches or "unknown")]
    if load_start is None:
        lines.append("Load average (1 min): %.2f at %s." % (m["load"], time.strftime("%Y-%m-%d %H:%M")))
    else:
        lines.append("Load average (1 min) at start / end: %.2f / %.2f (above ~0.5 another process shares the "
                     "cores and every time here is longer and noisier)." % (
                         load_start, load_end if load_end is not None else load_average()))
    return lines


if __name__ == "__main__":
    if "--json" in sys.argv[1:]:
        print(json.dumps(info()))
    elif "--end" in sys.argv[1:]:
        print("Load average (1 min) at the end: %.2f at %s." % (load_average(), time.strftime("%Y-%m-%d %H:%M")))
    else:
        print("\n".join(markdown()))
