"""The Triton kernels as an H100 runs them, counted without a GPU (issue 32).

Each kernel of ``metrics_core/hashing/triton_engine.py`` is compiled for a GPU target
(compute capability 9.0 by default: H100) by Triton and the ptxas of its wheel, then its
machine code (SASS) is listed by the wheel's ``nvdisasm`` and its instructions counted by
kind. A program of the histogram kernel is unrolled (no loop), so its count is what each of
its threads executes for HIST_BQ queries x HIST_BN database items; the table also gives that
per (query, item) pair. A static count is not a timing: it says where a change moves the
work when no GPU is at hand, and a GPU measures the time (``bench/gpu_check.sh``).

    python bench/bench_hashing_kernels.py            # sm_90, with and without the popcount instruction
    python bench/bench_hashing_kernels.py --arch 80  # an A100

Needs the triton wheel (Linux x86-64); a CUDA device is not needed.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def sass_counts(cubin: bytes, nvdisasm: str) -> collections.Counter:
    """Instructions of a cubin by opcode (without its modifiers)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        listing = subprocess.run(
            [nvdisasm, "-c", path], capture_output=True, text=True, check=True
        ).stdout
    counts: collections.Counter = collections.Counter()
    for line in listing.splitlines():
        line = line.strip()
        if not line.startswith("/*") or "*/" not in line:
            continue
        body = line.split("*/", 1)[1].strip().rstrip(";").strip()
        if not body or body.startswith("/*"):
            continue
        words = body.split()
        op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
        counts[op.split(".")[0]] += 1
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", type=int, default=90, help="compute capability x 10 (90: H100)")
    args = ap.parse_args()
    import triton

    from metrics_core.hashing import triton_engine as te

    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    print(
        f"triton {triton.__version__}; sm_{args.arch}; histogram kernel: {te.HIST_BQ} queries x "
        f"{te.HIST_BN} items a program, {te.HIST_WARPS} warps; stable kernel: {te.STABLE_BQ} "
        f"queries a warp, a loop over a segment"
    )
    print(
        "| kernel | code bits, labels | popcount | SASS instructions | per (query, item) pair | most frequent |"
    )
    print("|---|---|---|---:|---:|---|")
    for kernel in ("histogram", "stable"):
        for multi in (False, True):
            for popcount in (True, False):
                done = te.compiled_for(kernel, arch=args.arch, popcount=popcount, multi=multi)
                counts = sass_counts(done.asm["cubin"], nvdisasm)
                total = sum(counts.values())
                if kernel == "histogram":
                    threads = te.HIST_WARPS * 32
                    per_pair = f"{total * threads / (te.HIST_BQ * te.HIST_BN):.1f}"
                else:
                    per_pair = "(a loop)"
                common = ", ".join(f"{op} {n}" for op, n in counts.most_common(6))
                print(
                    f"| {kernel} | {'128, 256 labels' if multi else '64, int64 class ids'} | "
                    f"{'instruction' if popcount else 'shift-and-mask'} | {total} | {per_pair} | "
                    f"{common} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
