"""Load on one curator process: queries per second sustained with 20 concurrent modelers, and
the latency of a query (p50, p99), on this machine.

It writes a synthetic private table (``--rows`` x 3), starts ``frontierbo curator serve`` (one
uvicorn process) on a free port with a fresh database, registers ``--clients`` modelers, and
runs each modeler in its own thread of this process (httpx, one keep-alive connection each),
every one sending ``--queries`` ``POST /query`` requests with random rows and its own request
ids. Every query is a full transaction: authentication, budget, answer, audit line. The client
threads share this process's cores with the server, as they would on a 2-core machine.

Run: ``python benchmarks/service_load.py [--clients 20] [--queries 100] [--rows 2000]``
(needs ``pip install 'frontierbo[service]'``).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    import httpx

    from frontierbo.po.service.store import CuratorStore

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--queries", type=int, default=100, help="per client (100)")
    ap.add_argument("--rows", type=int, default=2000)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="curator-load-"))
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(args.rows, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    table = np.column_stack([X, y])
    (folder / "private.csv").write_text(
        "a,b,c,y\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in table) + "\n"
    )
    store = CuratorStore(folder / "curator.db")
    tokens = [store.add_modeler(f"m{k}", args.queries) for k in range(args.clients)]
    store.close()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "frontierbo.cli", "curator", "serve", "--data",
         str(folder / "private.csv"), "--target", "y", "--epsilon", "1", "--delta", "1e-5",
         "--db", str(folder / "curator.db"), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(300):
            try:
                headers = {"Authorization": f"Bearer {tokens[0]}"}
                if httpx.get(f"{url}/health", headers=headers, timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        latencies: list[float] = []
        lock = threading.Lock()
        errors = []

        def client(k: int) -> None:
            local = []
            rows = np.random.default_rng(k).integers(args.rows, size=args.queries)
            headers = {"Authorization": f"Bearer {tokens[k]}"}
            with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
                for j, row in enumerate(rows.tolist()):
                    start = time.perf_counter()
                    r = http.post("/query", json={"row": row, "request_id": f"{k}-{j}"})
                    local.append(time.perf_counter() - start)
                    if r.status_code != 200:
                        errors.append(r.status_code)
            with lock:
                latencies.extend(local)

        threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
        began = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - began
    finally:
        server.terminate()
        server.wait()
    lat = np.array(latencies) * 1000
    total = args.clients * args.queries
    print(f"{args.clients} clients x {args.queries} queries = {total} in {wall:.2f} s; "
          f"{len(errors)} errors")  # fmt: skip
    print("| clients | queries | queries / s | p50 ms | p99 ms | max ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.clients} | {total} | {total / wall:.0f} | {np.percentile(lat, 50):.1f} | "
          f"{np.percentile(lat, 99):.1f} | {lat.max():.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
