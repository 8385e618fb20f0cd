"""The MCP server's cost per call: search, ask and verify_text through the protocol beside the same call in-process.

    python bench/mcp_latency.py [--calls 20]   (not bench/mcp.py: that name would hide the mcp package from this script)

Builds a copy of the sample workspace (workspace/) in a temporary folder, starts `llmwiki mcp` on it as a
subprocess (stdio, as desktop agents start it) and calls each tool with the SDK's client, then makes the same
calls in this process through the same tool functions. Prints the median and p95 of each, the ratio and the
protocol's overhead per call (median through MCP less median in-process). The first call of each kind is left
out of both (it loads models).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CALLS = {
    "search": {"query": "who discovered radioactivity", "limit": 5},
    "ask": {"question": "Who discovered radioactivity?"},
    "verify_text": {"text": "Becquerel discovered radioactivity in 1896. He shared the Nobel Prize with Pierre Curie and Marie Curie in 1950."},
}


def build(folder: Path):
    from llmwiki.publish.journal import open_workspace
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.workspace import Workspace

    root = folder / "ws"
    shutil.copytree(REPO / "workspace", root, ignore=shutil.ignore_patterns(".llmwiki", "wiki", ".git"))
    config = root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('folder = "../datasets"', f'folder = "{REPO / "datasets"}"'), encoding="utf-8")
    Workspace.init(root)
    ingest_paths(Workspace.open(root))
    return open_workspace(root)


def percentile(values, share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def through_mcp(workspace, calls: int) -> dict[str, list[float]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "llmwiki", "mcp", "-w", str(workspace.root)], env={**os.environ, "HF_HUB_OFFLINE": "1"})
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    async with Client(params, read_timeout_seconds=600) as client:
        for name, arguments in CALLS.items():
            for index in range(calls + 1):
                started = time.perf_counter()
                result = await client.call_tool(name, arguments)
                elapsed = time.perf_counter() - started
                if result.is_error:
                    raise SystemExit(f"{name} failed through MCP: {result.content[0].text}")
                if index:
                    times[name].append(elapsed)
    return times


def in_process(workspace, calls: int) -> dict[str, list[float]]:
    from llmwiki.mcp_server import tool_functions
    from llmwiki.services import Services

    functions = tool_functions(workspace, Services(workspace))
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    for name, arguments in CALLS.items():
        for index in range(calls + 1):
            started = time.perf_counter()
            functions[name](dict(arguments), lambda done, total, message: None)
            if index:
                times[name].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="timed calls of each tool (after one untimed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        workspace = build(Path(folder))
        served = asyncio.run(through_mcp(workspace, args.calls))
        local = in_process(workspace, args.calls)
    print(f"MCP over stdio (llmwiki mcp, a subprocess) beside the same tool call in-process, the sample workspace, {args.calls} calls each:")
    print(f"{'tool':<12} {'MCP p50 ms':>11} {'p95':>7} {'in-process p50':>15} {'p95':>7} {'ratio':>6} {'overhead ms':>12}")
    for name in CALLS:
        mcp_p50, local_p50 = statistics.median(served[name]) * 1000, statistics.median(local[name]) * 1000
        print(f"{name:<12} {mcp_p50:>11.1f} {percentile(served[name], 0.95) * 1000:>7.1f} {local_p50:>15.1f} {percentile(local[name], 0.95) * 1000:>7.1f}"
              f" {mcp_p50 / max(local_p50, 1e-9):>6.2f} {mcp_p50 - local_p50:>12.1f}")
    overhead = statistics.median(served["search"]) * 1000 - statistics.median(local["search"]) * 1000
    print(f"protocol overhead for search: {overhead:.1f} ms (target < 20 ms): {'met' if overhead < 20 else 'not met'}")


if __name__ == "__main__":
    main()
