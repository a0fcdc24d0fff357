#!/usr/bin/env python3
"""Regenerates the seed corpora in fuzz/corpus/<target>/ from examples/ and tests/data.

Seeds are the project's own inputs, deduplicated by content and only files under 64 KiB
(libFuzzer mutates small inputs best). Specs get their paths prefixed with their folder's
name, because fuzz_spec runs them from a sandbox holding one link per folder of examples/ and
tests/data/kernels/. fuzz_views reads its input as choices, so its seeds are a few fixed
pseudo-random byte strings.
Usage: fuzz/make_corpus.py   (rewrites fuzz/corpus/)
"""
import hashlib
import json
import random
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
MAX_BYTES = 64 * 1024


def seed_name(path: Path) -> str:
    return "-".join(path.relative_to(ROOT).parts)


def write_unique(target: str, items):
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    seen = set()
    for name, data in sorted(items):
        digest = hashlib.sha1(data).hexdigest()
        if len(data) >= MAX_BYTES or digest in seen:
            continue
        seen.add(digest)
        (out / name).write_bytes(data)
    return len(seen)


def files(*patterns):
    for pattern in patterns:
        yield from sorted(ROOT.glob(pattern))


def prefixed_spec(path: Path) -> bytes:
    folder = path.parent.name
    spec = json.loads(path.read_text())
    for buffer in spec.get("buffers", {}).values():
        init = buffer.get("init")
        if isinstance(init, dict) and "npy" in init:
            init["npy"] = f"{folder}/{init['npy']}"
    for launch in spec.get("launches", []):
        for key in ("kernel", "native", "metadata"):
            if key in launch:
                launch[key] = f"{folder}/{launch[key]}"
    return (json.dumps(spec, indent=1) + "\n").encode()


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)
    counts = {}
    counts["ttir"] = write_unique("ttir", [
        (seed_name(p), p.read_bytes())
        for p in files("examples/*/*.ttir", "tests/data/ttir/*/*.ttir", "tests/data/kernels/*/*.ttir")])
    counts["spec"] = write_unique("spec", [
        (seed_name(p), prefixed_spec(p))
        for p in files("examples/*/spec*.json", "tests/data/kernels/*/spec*.json")])
    counts["npy"] = write_unique("npy", [
        (seed_name(p), p.read_bytes())
        for p in files("tests/data/npy/*.npy", "examples/*/inputs/*.npy",
                       "tests/data/kernels/*/inputs/*.npy")])
    rng = random.Random(14)
    counts["views"] = write_unique("views", [
        (f"choices-{i:02d}", bytes(rng.randrange(256) for _ in range(16 + 8 * i))) for i in range(12)])
    for target, count in counts.items():
        print(f"{target}: {count} seeds")


if __name__ == "__main__":
    main()
