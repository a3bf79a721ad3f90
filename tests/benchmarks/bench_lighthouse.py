"""Lighthouse on the built site, served on loopback as GitHub Pages serves it.

Usage: python tests/benchmarks/bench_lighthouse.py [--runs 3] [--port 8106] [--site site] [PAGE ...]

Lighthouse (the npm package pinned in package-lock.json) audits Home and every chapter
with its default mobile preset (simulated slow 4G and a 4x slower CPU), RUNS times each,
and prints the median per page of its four category scores: performance, accessibility,
best practices and SEO, beside the targets (95, 100, 100, 100), and of its total blocking time.

Lighthouse's CPU slowdown is relative to the host: its default, 4x, takes a high-end desktop
(BenchmarkIndex 1500-2000) to a mid-tier phone, and Lighthouse's docs/throttling.md asks that
it be calibrated on a slower host. Each load is therefore gathered once and audited twice from
the same trace (``--gather-mode``, then ``--audit-mode``): with the preset's 4x, and with the
slowdown that takes the BenchmarkIndex measured in that load to the same phone
(:func:`calibrated_slowdown`). Both tables are printed; the targets are read on the first.

The site is served as Pages serves it, by ``serve_pages.mjs`` (Node's own HTTP/2 server):
HTTP/2 over TLS, text files gzipped, ``Cache-Control: max-age=600``, under the path prefix
of ``site_url``. The TLS certificate is made for the run by ``openssl`` (self-signed, for
127.0.0.1 only) and Chromium is told to accept it (``--ignore-certificate-errors``).
Lighthouse's simulated network models what the protocol does: over HTTP/2 a page's files
share one connection, as they do on Pages, instead of each opening its own.

Chromium is ``$CHROME_PATH`` (default /usr/bin/chromium), started by Lighthouse with the
same headless flags as the browser tests. A benchmark, not a test: it reports and exits 0
(exit 1 when Lighthouse itself fails, 2 on bad arguments).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from rnnmem.site.pdf import CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
TARGETS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
CHROME_FLAGS = [*CHROMIUM_ARGS, "--ignore-certificate-errors"]
SERVER = Path(__file__).resolve().with_name("serve_pages.mjs")


def site_prefix() -> str:
    match = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    path = urlsplit(match.group(1)).path if match else "/"
    return path if path.endswith("/") else path + "/"


def certificate(folder: Path) -> tuple[Path, Path]:
    """A throwaway self-signed key and certificate for 127.0.0.1, made by openssl in ``folder``."""
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return key, cert


def serve(site: Path, port: int, folder: Path) -> subprocess.Popen:
    """serve_pages.mjs serving ``site`` at https://127.0.0.1:PORT/PREFIX/, once it is listening."""
    key, cert = certificate(folder)
    server = subprocess.Popen(
        ["node", str(SERVER), str(site), str(port), site_prefix(), str(key), str(cert)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stderr is not None  # both are pipes
    if server.stdout.readline().strip() != "ready":
        server.kill()
        raise RuntimeError(f"serve_pages.mjs did not start on port {port}:\n{server.stderr.read()[-2000:]}")
    return server


def pages(site: Path) -> list[str]:
    """Home and every chapter, in the order of the site."""
    return ["", *sorted(p.parent.relative_to(site).as_posix() + "/" for p in (site / "chapters").glob("*/index.html"))]


#: The CPU of the phone Lighthouse's mobile preset stands for, as a BenchmarkIndex: its default 4x
#: slowdown takes a high-end desktop (BenchmarkIndex 1500-2000, midpoint 1750) to it
#: (Lighthouse's docs/throttling.md, "Calibrating the CPU slowdown").
TARGET_INDEX = 1750 / 4


def calibrated_slowdown(benchmark_index: float) -> float:
    """The CPU slowdown that takes this host to the preset's phone (at least 1):
    ``benchmark_index / TARGET_INDEX``, so 4 on a host of index 1750 and 2.3 on one of 1000.

    >>> calibrated_slowdown(1750), round(calibrated_slowdown(1000), 2), calibrated_slowdown(200)
    (4.0, 2.29, 1.0)
    """
    return max(1.0, benchmark_index / TARGET_INDEX)


def scores_of(report: dict) -> dict:
    scores: dict = {c: round(100 * report["categories"][c]["score"]) for c in CATEGORIES}
    scores["failing"] = [
        f"{a['id']} ({a['score']})"
        for a in report["audits"].values()
        if a.get("score") is not None
        and a["score"] < 1
        and a.get("scoreDisplayMode") in ("binary", "numeric")
        and any(
            ref["id"] == a["id"] and ref.get("weight", 0) > 0
            for c in CATEGORIES
            for ref in report["categories"][c]["auditRefs"]
        )
    ]
    scores["tbt"] = report["audits"]["total-blocking-time"]["numericValue"]
    return scores


def lighthouse(url: str, chrome: str, folder: Path) -> tuple[dict, dict, float, float]:
    """One load of ``url``, audited twice from the same trace: with the preset's 4x CPU slowdown,
    and with the slowdown calibrated to this host's BenchmarkIndex measured in that load.
    Returns (scores at 4x, calibrated scores, BenchmarkIndex, calibrated slowdown)."""
    common = [
        "--quiet",
        f"--only-categories={','.join(CATEGORIES)}",
        f"--chrome-flags={' '.join(CHROME_FLAGS)}",
    ]
    env = dict(os.environ, CHROME_PATH=chrome)
    artifacts = folder / "artifacts"

    def run(*extra: str) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [str(LIGHTHOUSE), url, *common, *extra], capture_output=True, text=True, timeout=300, env=env
        )
        if result.returncode != 0:
            raise RuntimeError(f"lighthouse failed on {url} (exit {result.returncode}):\n{result.stderr[-2000:]}")
        return result

    run(f"--gather-mode={artifacts}")
    preset = json.loads(run(f"--audit-mode={artifacts}", "--output=json", "--output-path=stdout").stdout)
    index = float(preset["environment"]["benchmarkIndex"])
    slowdown = calibrated_slowdown(index)
    # Lighthouse audits saved artifacts only under the settings they were gathered with. Under
    # simulated throttling the load itself runs unthrottled, and the slowdown is applied when the
    # trace is simulated, in the audit: so the saved settings take the calibrated slowdown too.
    saved = artifacts / "artifacts.json"
    data = json.loads(saved.read_text(encoding="utf-8"))
    if data["settings"]["throttlingMethod"] != "simulate":
        raise RuntimeError(f"lighthouse gathered {url} with {data['settings']['throttlingMethod']!r} throttling")
    data["settings"]["throttling"]["cpuSlowdownMultiplier"] = float(f"{slowdown:.2f}")
    saved.write_text(json.dumps(data), encoding="utf-8")
    calibrated = json.loads(
        run(
            f"--audit-mode={artifacts}",
            "--output=json",
            "--output-path=stdout",
            f"--throttling.cpuSlowdownMultiplier={slowdown:.2f}",
        ).stdout
    )
    return scores_of(preset), scores_of(calibrated), index, slowdown


def table(title: str, results: dict[str, list[dict]]) -> int:
    """Print medians (and ranges) per page; return how many medians miss their target."""
    print(f"\n{title}\n{'page':34} " + " ".join(f"{c:>14}" for c in CATEGORIES) + "   TBT ms")
    misses = 0
    for page, runs in results.items():
        medians = {c: statistics.median(r[c] for r in runs) for c in CATEGORIES}
        misses += sum(medians[c] < TARGETS[c] for c in CATEGORIES)
        cells = " ".join(
            f"{medians[c]:>7.0f} ({min(r[c] for r in runs):>3}-{max(r[c] for r in runs):>3})" for c in CATEGORIES
        )
        print(f"{page or '(home)':34} {cells} {statistics.median(r['tbt'] for r in runs):>8.0f}")
        failing = sorted({a for r in runs for a in r["failing"]})
        if failing:
            print(f"{'':34} audits below 1 in some run: {', '.join(failing)}")
    return misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="Lighthouse runs per page (default 3; the median is reported)"
    )
    parser.add_argument("--port", type=int, default=8106, help="loopback port for the HTTPS server (default 8106)")
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="the built site (default ./site)")
    parser.add_argument(
        "pages",
        nargs="*",
        help="pages relative to the site root, e.g. chapters/gates/ (default: Home and every chapter)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    if not (args.site / "index.html").is_file():
        parser.error(f"--site {args.site} holds no built site: run `make build` first")
    if not LIGHTHOUSE.is_file():
        parser.error(f"lighthouse not found at {LIGHTHOUSE}: run `make setup`")
    chrome = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
    targets = args.pages or pages(args.site)
    folder = tempfile.TemporaryDirectory()
    server = serve(args.site.resolve(), args.port, Path(folder.name))
    base = f"https://127.0.0.1:{args.port}{site_prefix()}"
    version = subprocess.run([str(LIGHTHOUSE), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"Lighthouse {version}, mobile preset, {args.runs} runs per page, {base} (HTTP/2, TLS, gzip)")
    preset: dict[str, list[dict]] = {page: [] for page in targets}
    calibrated: dict[str, list[dict]] = {page: [] for page in targets}
    indices: list[float] = []
    start = time.perf_counter()
    try:
        for run in range(args.runs):  # interleaved: each run visits every page once
            for page in targets:
                at4, cal, index, slowdown = lighthouse(base + page, chrome, Path(folder.name))
                preset[page].append(at4)
                calibrated[page].append(cal)
                indices.append(index)
                print(
                    f"run {run + 1}: {page or '(home)':32} "
                    + " ".join(f"{at4[c]:>4}" for c in CATEGORIES)
                    + f"   BenchmarkIndex {index:>5.0f}: at {slowdown:.1f}x "
                    + " ".join(f"{cal[c]:>4}" for c in CATEGORIES),
                    flush=True,
                )
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        server.kill()
        server.wait()
        folder.cleanup()
    misses = table("The preset (4x CPU slowdown), medians and ranges", preset)
    low, high = min(indices), max(indices)
    table(
        f"CPU slowdown calibrated to this host (BenchmarkIndex {statistics.median(indices):.0f}, "
        f"{low:.0f}-{high:.0f}; slowdown = index / {TARGET_INDEX:g}, Lighthouse's docs/throttling.md), "
        "medians and ranges",
        calibrated,
    )
    print(
        "\ntargets: "
        + ", ".join(f"{c} >= {TARGETS[c]}" for c in CATEGORIES)
        + f"; preset medians below target: {misses}; {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
