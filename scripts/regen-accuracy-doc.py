#!/usr/bin/env python3
"""Regenerate the measured sections of docs/accuracy.md from the accuracy tests' own output.

Usage (from the repository root, after building test_sizing, test_e2e and gpuplan):
  (./build/tests/test_e2e --gtest_filter='ThroughputPublishedE2E*' && \
   ./build/tests/test_sizing --gtest_filter='ThroughputGroundTruth*:GroundTruth*') > /tmp/accuracy.txt 2>&1
  python3 scripts/regen-accuracy-doc.py /tmp/accuracy.txt docs/accuracy.md

Each numbered section of docs/accuracy.md between its heading and the next heading holds a block
copied verbatim from the test output (section 1: the markdown table of ThroughputPublishedE2E, the published runs timed by the built
`gpuplan estimate`;
2 and 3: ThroughputGroundTruth; 4: the four GroundTruth memory tables). Prose outside those
blocks is kept as written. Nothing is computed here: every number comes from the tests.
"""
import re
import sys


def test_block(lines, test_name):
    """Lines printed between '[ RUN      ] <test_name>' and its '[       OK ]' / '[  FAILED  ]'."""
    out, inside = [], False
    for line in lines:
        if line.startswith("[ RUN      ] " + test_name):
            inside = True
            continue
        if inside and (line.startswith("[       OK ]") or line.startswith("[  FAILED  ]")):
            return out
        if inside:
            out.append(line)
    raise SystemExit(f"test {test_name} not found in the output")


def main():
    out_path, doc_path = sys.argv[1], sys.argv[2]
    lines = open(out_path, encoding="utf-8").read().splitlines()
    table1 = [l for l in test_block(lines, "ThroughputPublishedE2E.FrameworkTablesThroughTheBinary")
              if l.startswith("|") or l.startswith("within") or l.startswith("memory:") or l.startswith("issue 8")]
    runs = [l for l in test_block(lines, "ThroughputGroundTruth.EveryPublishedCaseWithinToleranceOrAllowListed")
            if l.strip()]
    h200 = [l for l in test_block(lines, "ThroughputGroundTruth.H200DecodeRoofline") if l.strip()] + [""] + \
           [l for l in test_block(lines, "ThroughputGroundTruth.H200SingleGpuStepTimes") if l.strip()]
    memory = []
    for t in ("GroundTruth.PublishedMemoryCasesWithinBar", "GroundTruth.OwnPublishedCasesWithinBar",
              "GroundTruth.H200MeasurementsWithinBar", "GroundTruth.TorchtitanMemoryOutOfSample"):
        memory += [l for l in test_block(lines, t) if l.strip()]
    blocks = {
        "## 1.": "\n".join(table1),
        "## 2.": "```\n" + "\n".join(runs) + "\n```",
        "## 3.": "```\n" + "\n".join(h200) + "\n```",
        "## 4.": "```\n" + "\n".join(memory) + "\n```",
    }
    doc = open(doc_path, encoding="utf-8").read()
    for head, body in blocks.items():
        # Replace the generated block of the section: a markdown table (lines starting with "|"
        # plus its two summary lines) or a fenced block, right after the heading line.
        m = re.search(r"^" + re.escape(head) + r"[^\n]*\n\n", doc, re.M)
        if not m:
            raise SystemExit(f"section {head} missing in {doc_path}")
        start = m.end()
        if doc.startswith("```", start):
            end = doc.index("```\n", start + 3) + 4
        else:
            end = start
            for line in doc[start:].splitlines(keepends=True):
                if line.startswith("|") or line.startswith("within") or line.startswith("issue 8") \
                        or line.startswith("memory:") \
                        or line.startswith("known gap, not evaluated"):
                    end += len(line)
                else:
                    break
        doc = doc[:start] + body + "\n" + doc[end:]
    open(doc_path, "w", encoding="utf-8").write(doc)


if __name__ == "__main__":
    main()
