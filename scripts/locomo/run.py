#!/usr/bin/env python3
"""LoCoMo, the public benchmark of long conversations (Maharana et al., 2024,
github.com/snap-research/locomo, CC BY-NC 4.0), asked of trae-mem as a user
asks it: each conversation is imported as a project, one trae-mem session per
conversation session, the first speaker's turns as prompts (`user`) and the
other's as answers (`response`); `trae-mem embed` gives them vectors; each
question (categories 1-4; category 5 has no answer) is searched with
`trae-mem search --json --project`. Beside it, in the same run, textbook BM25
over the same turns: SQLite FTS5 with the Porter stemmer, the question's words
ORed, ordered by bm25().

Printed, for the questions whose evidence the first speaker said (the user)
and those the other side said:
- first hit right: the first hit is one of the question's evidence turns;
- session NDCG@5: sessions ranked by their first hit, a session relevant when
  it holds an evidence turn.

The data is not in this repository (its licence is non-commercial). Fetch it
and unpack data/locomo10.zip, then:

    python3 scripts/locomo/run.py --bin target/<tuple>/release/trae-mem DIR

where DIR holds the conversations' JSON files (multimodal_dialog/locomo10_v2).
Standard library only.
"""

import argparse
import glob
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime

NAMESPACE = uuid.UUID("6d1d3c1e-6f1b-4c59-9a38-0c1b6f0e4a11")


def when(text):
    """LoCoMo's "1:47 pm on 18 May, 2023" in Unix milliseconds."""
    return int(datetime.strptime(text, "%I:%M %p on %d %B, %Y").timestamp() * 1000)


def conversations(folder):
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        yield os.path.splitext(os.path.basename(path))[0], json.load(open(path))


def turns(conv):
    """Each turn: (session number, dia_id, speaker, text), in order."""
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k])
    for n in numbers:
        for turn in conv[f"session_{n}"]:
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            yield n, turn["dia_id"], turn["speaker"], text


def export(folder):
    """The export trae-mem imports, each row's (conversation, dia_id, said by
    the first speaker, session number), and each session's number."""
    lines, rows, sessions, next_id = [], {}, {}, 1
    for name, conv in conversations(folder):
        project = f"/locomo/{name}"
        by_session = {}
        for n, dia, speaker, text in turns(conv):
            by_session.setdefault(n, []).append((dia, speaker, text))
        for n, said in by_session.items():
            sid = str(uuid.uuid5(NAMESPACE, f"{name}/{n}"))
            sessions[sid] = n
            start = when(conv[f"session_{n}_date_time"])
            lines.append({"type": "session", "session": {"id": sid, "project": project, "started_at": start,
                                                          "ended_at": start + len(said) * 60_000, "meta": {},
                                                          "observations": len(said)}})
            for i, (dia, speaker, text) in enumerate(said):
                kind = "user" if speaker == conv["speaker_a"] else "response"
                lines.append({"type": "observation", "id": next_id, "session_id": sid, "ts": start + i * 60_000,
                              "kind": kind, "tool": None, "content": f"{speaker}: {text}", "private": False,
                              "tags": []})
                rows[next_id] = (name, dia, speaker == conv["speaker_a"], n)
                next_id += 1
    return lines, rows, sessions


def questions(folder):
    for name, conv in conversations(folder):
        first = conv["speaker_a"]
        said_by = {dia: speaker for _, dia, speaker, _ in turns(conv)}
        for qa in conv["qa"]:
            evidence = [e for e in qa.get("evidence", []) if e in said_by]
            if qa.get("category") == 5 or not evidence:
                continue
            user = sum(said_by[e] == first for e in evidence) * 2 >= len(evidence)
            yield name, qa["question"], set(evidence), user


def session_of(dia):
    return int(dia[1:].split(":")[0])


def ndcg5(ranked_sessions, relevant):
    gains = [1.0 if s in relevant else 0.0 for s in ranked_sessions[:5]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(5, len(relevant))))
    return dcg / ideal if ideal else 0.0


def sessions_in_order(hits):
    seen = []
    for _, s in hits:
        if s not in seen:
            seen.append(s)
    return seen


class Bm25:
    def __init__(self, lines, rows):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(content, conv UNINDEXED, dia UNINDEXED, tokenize='porter')")
        for line in lines:
            if line["type"] == "observation":
                name, dia, _, _ = rows[line["id"]]
                self.db.execute("INSERT INTO t VALUES (?, ?, ?)", (line["content"], name, dia))

    def search(self, name, question, limit=10):
        words = re.findall(r"[A-Za-z0-9]+", question)
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        return [(r[0], session_of(r[0])) for r in self.db.execute(
            "SELECT dia FROM t WHERE t MATCH ? AND conv = ? ORDER BY bm25(t) LIMIT ?", (match, name, limit))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--bin", required=True, help="the trae-mem binary")
    args = parser.parse_args()
    lines, rows, sessions = export(args.folder)
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TRAE_MEM_HOME=home)
        dump = os.path.join(home, "locomo.jsonl")
        with open(dump, "w") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        subprocess.run([args.bin, "import", dump], env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run([args.bin, "embed"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bm25 = Bm25(lines, rows)
        tally = {}
        for name, question, evidence, user in questions(args.folder):
            out = subprocess.run([args.bin, "search", "--json", "--limit", "10", "--project", f"/locomo/{name}",
                                  "--", question], env=env, check=True, capture_output=True, text=True)
            # A session's summary (trae-mem writes one for an imported
            # session) is no turn: a miss as the first hit, its session's
            # place among the sessions.
            hits = [(None, sessions[h["session_id"]]) if h["kind"] == "summary"
                    else (rows[h["id"]][1], rows[h["id"]][3]) for h in json.loads(out.stdout)["hits"]]
            relevant = {session_of(e) for e in evidence}
            for system, ranked in (("trae-mem", hits), ("BM25", bm25.search(name, question))):
                t = tally.setdefault((system, user), [0, 0, 0.0])
                t[0] += 1
                t[1] += bool(ranked) and ranked[0][0] in evidence
                t[2] += ndcg5(sessions_in_order(ranked), relevant)
    print(f"LoCoMo: {len(rows)} turns in {len({r[0] for r in rows.values()})} conversations")
    print(f"{'said by':10} {'system':9} {'questions':>9} {'first hit right':>16} {'session NDCG@5':>15}")
    for user in (True, False):
        for system in ("trae-mem", "BM25"):
            n, first, ndcg = tally[(system, user)]
            print(f"{'the user' if user else 'the other':10} {system:9} {n:9} {first / n:16.2f} {ndcg / n:15.2f}")


if __name__ == "__main__":
    sys.exit(main())
