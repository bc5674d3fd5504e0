# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# pylint: disable=invalid-name  # the file name is the role's, with dashes
"""Distributed-training smoke test for a GPU cluster: a real multi-node PyTorch DDP job.

What a pass proves
  1. Rendezvous works: every rank reached MASTER_ADDR:MASTER_PORT, and a sum all-reduce
     of (rank + 1) over all ranks gives world_size * (world_size + 1) / 2.
  2. Training works: a small 2-layer MLP, wrapped in DistributedDataParallel, learns a
     fixed random "teacher" function from synthetic data (no downloads, no files).  Each
     rank draws a different shard of the data stream (seed + 1 + rank); the mean of the
     last 5 global losses (the ranks' losses averaged by all-reduce) must be at most
     --max-loss-ratio (default 0.5) times the first one.
  3. Gradients really are synchronised: since every rank saw different data, the ranks
     only end with the same weights if DDP all-reduced every gradient.  After training
     the ranks' parameters are all-gathered as float64 and must be bit-identical
     (max_weight_diff is reported).
  4. The job spans what it should: world size and the set of hostnames as seen by rank 0
     (all-gathered as byte tensors, so numpy is not needed), checked against
     --expect-world-size / --expect-nodes when they are given.

Rendezvous is read from the environment, in this order:
  * torchrun / Kubeflow PyTorchJob: RANK, WORLD_SIZE, LOCAL_RANK (0 when unset),
    MASTER_ADDR, MASTER_PORT.  The launcher's values win; --master-addr/--master-port only
    fill in what is missing (MASTER_PORT defaults to 29500).
  * Slurm (srun): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID.  MASTER_ADDR is --master-addr,
    else $MASTER_ADDR, else the first host of the step's node list (SLURM_STEP_NODELIST,
    falling back to SLURM_JOB_NODELIST) expanded by `scontrol show hostnames`.
    MASTER_PORT is --master-port, else $MASTER_PORT, else 29500.
  When neither is present, or a variable is missing or malformed, the script writes one
  line on stderr naming it and exits 2.

Backend: --backend auto (nccl when torch.cuda.is_available(), else gloo), nccl or gloo.
With nccl each rank uses the GPU given by LOCAL_RANK / SLURM_LOCALID (or the only visible
GPU when Slurm gives each task one); a local rank with no GPU of its own (torchrun starting
more processes than the node has GPUs) is a usage error. With gloo the job runs on the CPU.

Output: rank 0 prints exactly one line on stdout,
  GPUCLUSTER-DDP-RESULT {"status": "pass"|"fail", "message": ..., ...}
(valid JSON, keys: status, message, backend, device, world_size, nodes, ranks_per_node,
steps, loss_first, loss_last, loss_tail_mean, losses, max_weight_diff, weights_identical,
duration_s, torch_version, launcher, master, max_loss_ratio); other ranks print nothing
on success.  Exit status: 0 pass, 1 fail (rank 0's verdict, broadcast so that every rank
exits alike), 2 usage or environment error.  A failed rendezvous or collective also exits
1: each rank that sees it writes one line on stderr, and rank 0 still prints its result
line.  The process group is always destroyed.

Examples (python3 is an interpreter with torch; only torch and the standard library are used):
  srun -N2 --ntasks-per-node=8 --gpus-per-node=8 python3 gpucluster-ddp-smoke.py --expect-nodes 2
  torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29400 \\
      gpucluster-ddp-smoke.py --expect-world-size 16
  # two CPU processes on one machine:
  RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 python3 gpucluster-ddp-smoke.py --backend gloo &
  RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 python3 gpucluster-ddp-smoke.py --backend gloo
On hosts with several networks, GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME pick the interface.
"""

import argparse
import datetime
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings
from typing import NamedTuple

# torch warns on import when numpy is absent; numpy is not needed here.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

try:
    import torch  # pylint: disable=wrong-import-position
    import torch.distributed as dist  # pylint: disable=wrong-import-position
    from torch import nn  # pylint: disable=wrong-import-position
    from torch.nn.parallel import DistributedDataParallel  # pylint: disable=wrong-import-position
except ImportError as _exc:  # depends on the node
    sys.stderr.write(f"gpucluster-ddp-smoke: error: cannot import torch ({_exc})\n")
    sys.exit(2)

PROG = "gpucluster-ddp-smoke"
RESULT_TAG = "GPUCLUSTER-DDP-RESULT"
DEFAULT_PORT = 29500
TAIL = 5  # the verdict compares the mean of the last TAIL losses with the first
MAX_POINTS = 50  # at most about this many points in "losses"
MIN_BATCH = 8  # below this a single step's loss is too noisy for the loss verdict
HOSTNAME_BYTES = 256  # Linux hostnames have at most 64 bytes, DNS names 253

# The synthetic problem: a student MLP learns y = tanh(x @ A) @ B for a fixed random A, B.
IN_DIM = 32
HIDDEN = 64
OUT_DIM = 8
TEACHER_HIDDEN = 16
TEACHER_SEED_OFFSET = 1000003


class UsageError(Exception):
    """A usage or environment problem: reported on one stderr line, exit status 2."""


class Rendezvous(NamedTuple):
    """Where this process sits in the job and how to reach rank 0."""

    launcher: str
    rank: int
    world_size: int
    local_rank: int
    addr: str
    port: int


def parse_args(argv):
    """Command line options (argparse exits 2 on bad usage)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=f"Multi-node PyTorch DDP smoke test: trains a tiny model on synthetic data and "
        f"prints one '{RESULT_TAG} {{json}}' line on rank 0.",
    )
    parser.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto",
                        help="process group backend; auto: nccl when CUDA is available, else gloo")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds for the rendezvous and each collective (default 120)")
    parser.add_argument("--steps", type=int, default=50, help=f"training steps (default 50, at least {TAIL + 1})")
    parser.add_argument("--batch-size", type=int, default=64,
                        help=f"samples per rank per step (default 64, at least {MIN_BATCH})")
    parser.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default 0.01)")
    parser.add_argument("--seed", type=int, default=1234, help="seed of the model, teacher and data (default 1234)")
    parser.add_argument("--max-loss-ratio", type=float, default=0.5,
                        help=f"pass only if mean(last {TAIL} losses) <= this x first loss (default 0.5)")
    parser.add_argument("--expect-world-size", type=int, default=None, help="fail unless the job has this many ranks")
    parser.add_argument("--expect-nodes", type=int, default=None, help="fail unless the ranks span this many hosts")
    parser.add_argument("--master-addr", default=None,
                        help="rank 0's address (Slurm: before $MASTER_ADDR and the node list; torchrun: only if unset)")
    parser.add_argument("--master-port", type=int, default=None,
                        help=f"rank 0's port (default $MASTER_PORT, else {DEFAULT_PORT})")
    args = parser.parse_args(argv)
    if args.steps < TAIL + 1:
        parser.error(f"--steps must be at least {TAIL + 1}")
    if args.batch_size < MIN_BATCH:
        parser.error(f"--batch-size must be at least {MIN_BATCH} (smaller batches make the loss too noisy to judge)")
    if not args.timeout > 0:
        parser.error("--timeout must be positive")
    if not args.lr > 0:
        parser.error("--lr must be positive")
    if not args.max_loss_ratio >= 0:
        parser.error("--max-loss-ratio must not be negative")
    for option in ("expect_world_size", "expect_nodes"):
        if getattr(args, option) is not None and getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1")
    return args


def _env(env, name):
    return env.get(name, "").strip()


def _env_int(env, name, default=None):
    raw = _env(env, name)
    if raw == "":
        if default is None:
            raise UsageError(f"{name} is not set")
        return default
    try:
        return int(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not an integer") from None


def _port(value, name):
    try:
        port = int(value)
    except ValueError:
        raise UsageError(f"{name}={value!r} is not a port number") from None
    if not 0 < port < 65536:
        raise UsageError(f"{name}={port} is not a port number")
    return port


def first_slurm_host(env):
    """The first host of the Slurm step's (else job's) node list, via scontrol."""
    nodelist = _env(env, "SLURM_STEP_NODELIST") or _env(env, "SLURM_JOB_NODELIST") or _env(env, "SLURM_NODELIST")
    if not nodelist:
        raise UsageError("SLURM_JOB_NODELIST is not set (and neither --master-addr nor MASTER_ADDR is given)")
    scontrol = shutil.which("scontrol")
    if scontrol is None:
        raise UsageError(f"scontrol is not on PATH to expand SLURM_JOB_NODELIST={nodelist}; "
                         "pass --master-addr or set MASTER_ADDR")
    try:
        proc = subprocess.run([scontrol, "show", "hostnames", nodelist], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"scontrol show hostnames {nodelist} failed: {exc}") from None
    hosts = proc.stdout.split()
    if proc.returncode != 0 or not hosts:
        detail = " ".join(proc.stderr.split()) or "no hosts"
        raise UsageError(f"scontrol show hostnames {nodelist} failed (rc {proc.returncode}): {detail}")
    return hosts[0]


def resolve_rendezvous(args, env):
    """torchrun / PyTorchJob variables first, then Slurm's; UsageError when neither is usable."""
    if _env(env, "RANK") or _env(env, "WORLD_SIZE"):
        launcher = "torchrun"
        rank = _env_int(env, "RANK")
        world_size = _env_int(env, "WORLD_SIZE")
        local_rank = _env_int(env, "LOCAL_RANK", 0)
        addr = _env(env, "MASTER_ADDR") or args.master_addr
        if not addr:
            raise UsageError("MASTER_ADDR is not set (torchrun/PyTorchJob rendezvous; or pass --master-addr)")
        if _env(env, "MASTER_PORT"):
            port = _port(_env(env, "MASTER_PORT"), "MASTER_PORT")
        else:
            port = _port(DEFAULT_PORT if args.master_port is None else args.master_port, "--master-port")
    elif _env(env, "SLURM_PROCID"):
        launcher = "slurm"
        rank = _env_int(env, "SLURM_PROCID")
        world_size = _env_int(env, "SLURM_NTASKS")
        local_rank = _env_int(env, "SLURM_LOCALID")
        addr = args.master_addr or _env(env, "MASTER_ADDR") or first_slurm_host(env)
        if args.master_port is not None:
            port = _port(args.master_port, "--master-port")
        elif _env(env, "MASTER_PORT"):
            port = _port(_env(env, "MASTER_PORT"), "MASTER_PORT")
        else:
            port = DEFAULT_PORT
    else:
        raise UsageError("no rendezvous in the environment: RANK (torchrun/PyTorchJob) or SLURM_PROCID (Slurm srun) "
                         "is not set")
    if world_size < 1:
        raise UsageError(f"world size {world_size} is not positive")
    if not 0 <= rank < world_size:
        raise UsageError(f"rank {rank} is not in [0, {world_size})")
    if local_rank < 0:
        raise UsageError(f"local rank {local_rank} is negative")
    return Rendezvous(launcher, rank, world_size, local_rank, addr, port)


def choose_device(requested, local_rank, launcher):
    """(backend, torch.device) for the --backend choice; UsageError when it cannot work here."""
    cuda = torch.cuda.is_available()
    backend = ("nccl" if cuda else "gloo") if requested == "auto" else requested
    if backend == "gloo":
        return backend, torch.device("cpu")
    if not cuda:
        raise UsageError(f"--backend nccl needs CUDA, but torch.cuda.is_available() is false "
                         f"(torch {torch.__version__})")
    if not dist.is_nccl_available():
        raise UsageError("--backend nccl: this torch build has no NCCL")
    count = torch.cuda.device_count()
    if local_rank < count:
        index = local_rank
    elif count == 1 and launcher == "slurm":
        index = 0  # Slurm gave this task one GPU of its own (CUDA_VISIBLE_DEVICES)
    else:
        # torchrun starting more processes than the node has GPUs: NCCL would only say
        # "Duplicate GPU detected" once every rank had started.
        raise UsageError(f"local rank {local_rank} has no GPU: {count} visible "
                         f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}); "
                         f"start at most {count} process(es) per node")
    torch.cuda.set_device(index)
    return backend, torch.device("cuda", index)


def device_label(device):
    """'cpu' or 'cuda:<name>'."""
    if device.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(device)}"
    return "cpu"


def _finite(value, digits=6):
    """A float for JSON, or None when it is not finite (the output must stay valid JSON)."""
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def sample_points(losses):
    """[{"step", "loss"}] for every k-th step (1-based) and the last one, at most ~MAX_POINTS."""
    steps = len(losses)
    every = max(1, math.ceil(steps / MAX_POINTS))
    picked = list(range(0, steps, every))
    if picked[-1] != steps - 1:
        picked.append(steps - 1)
    return [{"step": i + 1, "loss": _finite(losses[i])} for i in picked]


def make_teacher(seed):
    """The fixed random function to learn, the same on every rank: x -> tanh(x @ A) @ B."""
    gen = torch.Generator().manual_seed(seed + TEACHER_SEED_OFFSET)
    t_in = torch.randn(IN_DIM, TEACHER_HIDDEN, generator=gen) / math.sqrt(IN_DIM)
    t_out = torch.randn(TEACHER_HIDDEN, OUT_DIM, generator=gen) * (2.0 / math.sqrt(TEACHER_HIDDEN))
    return lambda inputs: torch.tanh(inputs @ t_in) @ t_out


def train(args, rdv, device):
    """Train the DDP model; returns (global losses per step, flat float64 parameters)."""
    # Same seed on every rank, before building the model: identical starting weights
    # (DDP broadcasts rank 0's weights as well).
    torch.manual_seed(args.seed)
    model = nn.Sequential(nn.Linear(IN_DIM, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, OUT_DIM)).to(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    teacher = make_teacher(args.seed)
    data_gen = torch.Generator().manual_seed(args.seed + 1 + rdv.rank)  # this rank's shard of the stream

    local = torch.zeros(args.steps, dtype=torch.float64, device=device)
    ddp.train()
    for step in range(args.steps):
        inputs = torch.randn(args.batch_size, IN_DIM, generator=data_gen)  # on the CPU: same on any device
        targets = teacher(inputs)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(ddp(inputs.to(device)), targets.to(device))
        loss.backward()  # DDP all-reduces (averages) the gradients here
        optimizer.step()
        local[step] = loss.detach()

    # One all-reduce for all the per-step losses: the global (mean over ranks) loss per step.
    dist.all_reduce(local, op=dist.ReduceOp.SUM)
    global_losses = (local / rdv.world_size).cpu().tolist()
    flat = torch.cat([p.detach().reshape(-1).to(torch.float64) for p in model.parameters()])
    return global_losses, flat


def gather_hostnames(world_size, device):
    """Every rank's hostname, in rank order.

    Like dist.all_gather_object, but with a fixed-width uint8 tensor: all_gather_object
    needs numpy in current torch releases, and numpy is not a dependency of torch.
    """
    name = socket.gethostname().encode("utf-8")[:HOSTNAME_BYTES]
    mine = torch.zeros(HOSTNAME_BYTES, dtype=torch.uint8)
    if name:
        mine[:len(name)] = torch.tensor(list(name), dtype=torch.uint8)
    mine = mine.to(device)
    gathered = [torch.empty_like(mine) for _peer in range(world_size)]
    dist.all_gather(gathered, mine)
    return [bytes(t.cpu().tolist()).rstrip(b"\0").decode("utf-8", "replace") for t in gathered]


def summarise(result, hosts, losses, weights):
    """Rank 0: fill the result's node, loss and weight fields from what was gathered."""
    per_node = {}
    for host in hosts:
        per_node[host] = per_node.get(host, 0) + 1
    reference = weights[0]
    diffs = [float((other - reference).abs().max().item()) for other in weights]
    result.update({
        "nodes": sorted(per_node),
        "ranks_per_node": {host: per_node[host] for host in sorted(per_node)},
        "loss_first": _finite(losses[0]),
        "loss_last": _finite(losses[-1]),
        "loss_tail_mean": _finite(sum(losses[-TAIL:]) / TAIL),
        "losses": sample_points(losses),
        "max_weight_diff": _finite(max(diffs), 17) if all(math.isfinite(d) for d in diffs) else None,
        "weights_identical": all(torch.equal(other, reference) for other in weights),
    })


def judge(args, rdv, result, probe, losses):
    """Rank 0: fill status and message; returns the exit status (0 pass, 1 fail)."""
    failures = []
    want = rdv.world_size * (rdv.world_size + 1) // 2
    if probe != want:
        failures.append(f"the all-reduce of (rank + 1) over {rdv.world_size} ranks gave {probe} instead of {want}")
    if args.expect_world_size is not None and rdv.world_size != args.expect_world_size:
        failures.append(f"world size is {rdv.world_size}, expected {args.expect_world_size}")
    nodes = len(result["nodes"])
    if args.expect_nodes is not None and nodes != args.expect_nodes:
        failures.append(f"the ranks span {nodes} node(s) ({', '.join(result['nodes'])}), expected {args.expect_nodes}")
    first, tail = losses[0], sum(losses[-TAIL:]) / TAIL
    ratio = tail / first if math.isfinite(first) and math.isfinite(tail) and first > 0 else float("nan")
    if not math.isfinite(ratio):
        failures.append(f"the loss is not finite or not positive (first {first!r}, mean of the last {TAIL} {tail!r})")
    elif ratio > args.max_loss_ratio:
        failures.append(f"the loss did not go down enough: the mean of the last {TAIL} losses {tail:.4g} is "
                        f"{ratio:.3g} x the first {first:.4g} (limit {args.max_loss_ratio:.3g} x)")
    if not result["weights_identical"]:
        failures.append(f"the ranks' weights differ after training (max abs difference {result['max_weight_diff']!r}): "
                        "gradients were not synchronised")
    if failures:
        result["status"] = "fail"
        result["message"] = f"The DDP smoke test failed: {'; '.join(failures)}."
        return 1
    result["status"] = "pass"
    result["message"] = (f"{rdv.world_size} rank(s) on {nodes} node(s) trained {args.steps} steps with "
                         f"{result['backend']}: the mean of the last {TAIL} losses is {ratio:.3g} x the first "
                         f"(limit {args.max_loss_ratio:.3g} x) and every rank holds identical weights.")
    return 0


def run_job(args, rdv, device, result):
    """Everything inside the process group; returns the exit status rank 0 decided."""
    # (1) a collective with a known answer
    probe = torch.tensor([rdv.rank + 1], dtype=torch.int64, device=device)
    dist.all_reduce(probe, op=dist.ReduceOp.SUM)
    # (4) who is in the job
    hosts = gather_hostnames(rdv.world_size, device)
    # (2) training
    losses, flat = train(args, rdv, device)
    # (3) the weights of every rank
    weights = [torch.empty_like(flat) for _peer in range(rdv.world_size)]
    dist.all_gather(weights, flat)

    code = 1
    if rdv.rank == 0:
        summarise(result, hosts, losses, weights)
        code = judge(args, rdv, result, int(probe.item()), losses)
    # Every rank leaves with rank 0's verdict.
    verdict = torch.tensor([code], dtype=torch.int64, device=device)
    dist.broadcast(verdict, src=0)
    return int(verdict.item())


def emit(result, started):
    """Rank 0's single stdout line."""
    result["duration_s"] = round(time.monotonic() - started, 3)
    sys.stdout.write(f"{RESULT_TAG} {json.dumps(result, allow_nan=False)}\n")
    sys.stdout.flush()


def _one_line(exc):
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:500]}"


def main(argv=None):
    """Entry point; returns the exit status."""
    started = time.monotonic()
    args = parse_args(argv)
    try:
        rdv = resolve_rendezvous(args, os.environ)
        backend, device = choose_device(args.backend, rdv.local_rank, rdv.launcher)
    except UsageError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2

    if device.type == "cpu" and not os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(1)  # a tiny model; avoid oversubscribing cores with many ranks per node

    result = {
        "status": "fail",
        "message": "",
        "backend": backend,
        "device": device_label(device),
        "world_size": rdv.world_size,
        "nodes": [],
        "ranks_per_node": {},
        "steps": args.steps,
        "loss_first": None,
        "loss_last": None,
        "loss_tail_mean": None,
        "losses": [],
        "max_weight_diff": None,
        "weights_identical": False,
        "duration_s": None,
        "torch_version": torch.__version__,
        "launcher": rdv.launcher,
        "master": f"{rdv.addr}:{rdv.port}",
        "max_loss_ratio": args.max_loss_ratio,
    }

    # env:// also honours torchrun's agent store (TORCHELASTIC_USE_AGENT_STORE).
    os.environ["MASTER_ADDR"] = rdv.addr
    os.environ["MASTER_PORT"] = str(rdv.port)
    stage = f"rendezvous at {rdv.addr}:{rdv.port}"
    try:
        dist.init_process_group(backend=backend, init_method="env://", rank=rdv.rank,
                                world_size=rdv.world_size, timeout=datetime.timedelta(seconds=args.timeout))
        stage = "the DDP job"
        code = run_job(args, rdv, device, result)
        if rdv.rank == 0:
            emit(result, started)
    except Exception as exc:  # pylint: disable=broad-exception-caught
        # A failed rendezvous or collective is a failed smoke test, not a usage error.
        code = 1
        why = f"{stage} failed on rank {rdv.rank} ({socket.gethostname()}): {_one_line(exc)}".rstrip(".")
        sys.stderr.write(f"{PROG}: {why}\n")
        if rdv.rank == 0:
            result["status"] = "fail"
            result["message"] = f"The DDP smoke test failed: {why}."
            emit(result, started)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    return code


if __name__ == "__main__":
    CODE = main()
    # The result is out; leave without the interpreter's own teardown, where a thread of torch's
    # gloo backend still joinable at exit aborts the process ("terminate called without an active
    # exception", exit 134) now and then, failing a job that passed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(CODE)  # pylint: disable=protected-access
