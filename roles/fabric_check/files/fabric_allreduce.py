"""One rank of the fabric check: a timed all-reduce across the cluster's nodes.

Runs inside the pinned vLLM image with the node's launch environment, using what the
image already has: torch.distributed with NCCL on NVIDIA (RCCL on ROCm, which torch
also calls "nccl") or gloo on the CPU. NCCL_DEBUG=INFO makes the library print the
transport it picks; this script prints one INFEROPS_FABRIC JSON line with the
measured bandwidth, or the reason it could not form the group, and always exits 0
so that the caller reads its output.
"""
import datetime
import json
import os
import sys
import time

MARKER = "INFEROPS_FABRIC "


def report(**fields):
    print(MARKER + json.dumps(fields), flush=True)


def main():
    rank = int(os.environ["INFEROPS_FABRIC_RANK"])
    world = int(os.environ["INFEROPS_FABRIC_WORLD_SIZE"])
    address = os.environ["INFEROPS_FABRIC_ADDRESS"]
    port = int(os.environ["INFEROPS_FABRIC_PORT"])
    backend = os.environ.get("INFEROPS_FABRIC_BACKEND", "nccl")
    size = int(os.environ.get("INFEROPS_FABRIC_BYTES", str(256 << 20)))
    iterations = int(os.environ.get("INFEROPS_FABRIC_ITERATIONS", "20"))
    timeout = int(os.environ.get("INFEROPS_FABRIC_TIMEOUT", "300"))
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        report(rank=rank, error="the image has no torch.distributed (%s); the check needs the vLLM image" % exc)
        return
    started = time.monotonic()
    try:
        dist.init_process_group(backend, init_method="tcp://%s:%d" % (address, port), rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=timeout))
        device = torch.device("cuda", 0) if backend == "nccl" else torch.device("cpu")
        tensor = torch.ones(size // 4, dtype=torch.float32, device=device)
        dist.all_reduce(tensor)  # warm-up: NCCL connects its channels here and logs them

        def sync():
            if device.type == "cuda":
                torch.cuda.synchronize()

        sync()
        dist.barrier()
        begin = time.perf_counter()
        for _i in range(iterations):
            dist.all_reduce(tensor)
        sync()
        seconds = (time.perf_counter() - begin) / iterations
        dist.destroy_process_group()
    except Exception as exc:  # pylint: disable=broad-exception-caught
        waited = time.monotonic() - started
        report(rank=rank, error="rank %d of %d did not complete the all-reduce with the rendezvous at %s:%d after %.0f s: "
               "%s: %s; likely cause: a node never joined (its check did not start, or it was given another "
               "address or port), or the port is blocked between nodes"
               % (rank, world, address, port, waited, type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""))
        return
    algbw = size / seconds / 1e9
    report(rank=rank, world_size=world, backend=backend, bytes=size, iterations=iterations,
           seconds_per_iteration=seconds, algbw_gbps=round(algbw, 3),
           busbw_gbps=round(algbw * 2 * (world - 1) / world, 3))


if __name__ == "__main__":
    main()
    sys.exit(0)
