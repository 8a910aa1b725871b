"""All-reduce bandwidth through PyTorch + NCCL, one process per GPU, reported as nccl-tests does
(algbw = bytes / time, busbw = algbw * 2 (n - 1) / n): the reference for gpukit-multi's
`cargo run --release -p gpukit-multi --example allreduce_bw -- MiB iters warmup`, run in the
same device call.

    python3 benches/allreduce_torch.py [MiB=1024] [iters=20] [warmup=5]

NVLink multicast stays off (NCCL_NVLS_ENABLE=0, as the device machines require).
"""
import os
import socket
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
if os.environ["NCCL_NVLS_ENABLE"] != "0":
    sys.exit("NCCL_NVLS_ENABLE must be 0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, port, mib, iters, warmup, out):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    check = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(check)
    assert bool((check == world).all()), "all-reduce check failed"
    a = torch.full((mib * (1 << 20) // 4,), 1.0 / world, dtype=torch.float32, device="cuda")
    for _ in range(warmup):
        dist.all_reduce(a)
    torch.cuda.synchronize()
    dist.barrier()
    t = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(a)
    torch.cuda.synchronize()
    out[rank] = (time.perf_counter() - t) / iters
    # the whole result: every element is (1/n)·n^rounds after `rounds` sums of n copies
    expected = float(world) ** (warmup + iters - 1)
    lo, hi = a.min().item(), a.max().item()
    assert lo == hi and abs(lo - expected) <= 1e-5 * expected, f"all-reduce result in [{lo}, {hi}], expected {expected}"
    dist.destroy_process_group()


def main():
    args = [int(a) for a in sys.argv[1:]]
    mib, iters, warmup = (args + [1024, 20, 5][len(args):])[:3]
    world = torch.cuda.device_count()
    if world < 1:
        sys.exit("no GPU")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = mp.Manager().dict()
    mp.spawn(worker, args=(world, port, mib, iters, warmup, out), nprocs=world, join=True)
    t = max(out.values())
    algbw = mib * (1 << 20) / t / 1e9
    busbw = algbw * 2 * (world - 1) / world
    print(f"pytorch allreduce f32 {mib} MiB on {world} GPU(s) [NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}]: "
          f"{t * 1e3:.3f} ms, algbw {algbw:.1f} GB/s, busbw {busbw:.1f} GB/s [result checked: every element]")


if __name__ == "__main__":
    main()
