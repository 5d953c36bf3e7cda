"""Which transmission policy wins where: a sweep of send policy x ACK policy x
delayed-ACK time x message size over the five source-document workloads in
scenarios/, plotted as a heatmap of transactions/s and a Pareto plot of
completion time against segments sent.

    python examples/python/policy_sweep.py --out sweep-out            # local cores
    python examples/python/policy_sweep.py --scheduler tcp://host:8786 # a Dask cluster
    python examples/python/policy_sweep.py --quick                     # a small grid, seconds

Writes results.csv, heatmap.png and pareto.png into --out.
"""

import argparse
import pathlib

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import tinygram

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = ["cheshire-cliff", "davids-traces", "doupnik-web", "fox-satellite", "westfield-ftp"]
BULK = ("fox-satellite", "westfield-ftp")


GRID_POLICIES = ["nagle", "minshall", "doupnik", "nodelay"]


def grid_for(name: str, quick: bool) -> dict:
    """The sweep of one workload: the sender's policy, the receiver's ACK
    policy and delayed-ACK time, and the application's message size (the
    request for request-response, the write size for a bulk transfer)."""
    send = list(GRID_POLICIES)
    ack = ["delayed", "immediate", "quickack"]
    delack = ["40ms", "200ms"]
    bulk = name in BULK
    sizes = [512, 1448, 16384] if bulk else [[100], [1449], [99913]]
    if quick:
        send, ack, sizes = send[::3], ack[:2], sizes[1:2]
    return {
        "client.send_policy": send,
        "server.ack_policy": ack,
        "server.delack": delack,
        ("workload.write_size" if bulk else "workload.request"): sizes,
    }


def run_all(quick: bool, client=None) -> pd.DataFrame:
    frames = []
    for name in SCENARIOS:
        grid = grid_for(name, quick)
        df = tinygram.sweep(REPO / "scenarios" / f"{name}.toml", grid,
                            seeds=range(1, 2 if quick else 3), client=client)
        size_key = next(k for k in grid if k.startswith("workload."))
        df["message_size"] = df[size_key].map(lambda v: v[0] if isinstance(v, list) else v)
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    segments = sum(df[f"{h}.{c}"] for h in ("client", "server")
                   for c in ("data_segments", "pure_acks"))
    bulk = df["name"].isin(BULK)
    # Request-response runs loop until the time cap, so they are compared per
    # transaction: its median completion and the segments it cost. A bulk
    # transfer is one long transaction.
    df["segments_sent"] = np.where(bulk, segments, segments / df["transactions"].clip(lower=1))
    df["completion_ms"] = np.where(bulk, df["sim_time_s"] * 1000.0, df["completion_ms.p50"])
    return df


def heatmap(df: pd.DataFrame, path: pathlib.Path) -> None:
    rr = df[~df["name"].isin(BULK)]
    names = [n for n in SCENARIOS if n in set(rr["name"])]
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 6), squeeze=False)
    for ax, name in zip(axes[0], names):
        t = rr[rr["name"] == name].pivot_table(
            index=["client.send_policy", "message_size"],
            columns=["server.ack_policy", "server.delack"],
            values="transactions_per_s", aggfunc="mean")
        im = ax.imshow(t.values, aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(t.columns)), [f"{a}\n{d}" for a, d in t.columns], fontsize=7)
        ax.set_yticks(range(len(t.index)), [f"{p} {s}B" for p, s in t.index], fontsize=7)
        ax.set_title(f"{name}: transactions/s")
        ax.set_xlabel("server ACK policy, delayed-ACK time")
        fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def pareto_front(points: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both axes (lower is better)."""
    order = np.lexsort((points[:, 1], points[:, 0]))
    front, best = [], np.inf
    for i in order:
        if points[i, 1] < best:
            front.append(i)
            best = points[i, 1]
    return np.array(front, dtype=int)


def pareto(df: pd.DataFrame, path: pathlib.Path) -> None:
    fig, axes = plt.subplots(1, len(SCENARIOS), figsize=(5 * len(SCENARIOS), 4.5), squeeze=False)
    for ax, name in zip(axes[0], SCENARIOS):
        d = df[df["name"] == name].dropna(subset=["completion_ms"])
        markers = dict(zip(sorted(d["message_size"].unique()), "o^sD"))
        for (policy, size), g in d.groupby(["client.send_policy", "message_size"]):
            ax.scatter(g["segments_sent"], g["completion_ms"], s=14, alpha=0.7,
                       marker=markers[size], color=f"C{sorted(GRID_POLICIES).index(policy)}",
                       label=f"{policy}, {size} B")
        pts = d[["segments_sent", "completion_ms"]].to_numpy(dtype=float)
        f = pareto_front(pts)
        ax.plot(pts[f, 0], pts[f, 1], "k--", lw=1, label="Pareto front")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(name)
        bulk = name in BULK
        ax.set_xlabel("segments sent (data + pure ACKs)" + ("" if bulk else " per transaction"))
        ax.set_ylabel("transfer time (ms)" if bulk else "median completion time (ms)")
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="policy-sweep", type=pathlib.Path)
    ap.add_argument("--quick", action="store_true", help="a small grid that runs in seconds")
    ap.add_argument("--scheduler", help="a Dask scheduler address (default: local processes)")
    args = ap.parse_args()
    client = None
    if args.scheduler:
        from dask.distributed import Client

        client = Client(args.scheduler)
    df = run_all(args.quick, client)
    args.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out / "results.csv", index=False)
    heatmap(df, args.out / "heatmap.png")
    pareto(df, args.out / "pareto.png")
    print(f"{len(df)} runs; wrote {args.out}/results.csv, heatmap.png and pareto.png")


if __name__ == "__main__":
    main()
