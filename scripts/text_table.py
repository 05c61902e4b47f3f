"""The plain-text table the benchmark scripts print: columns padded to their widest cell, the
first `left` columns left-aligned (names), the others right-aligned (figures)."""


def print_table(head, rows, left=2):
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
