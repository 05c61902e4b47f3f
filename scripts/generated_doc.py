"""What the scripts that write generated tables into docs/ share: replacing the text between
`<!-- KEY:begin -->` and `<!-- KEY:end -->` markers, and `--check` (the file equals a fresh
run, lines starting with the generator's stamp aside) versus writing it."""

import re


def replace_block(text: str, key: str, body: str) -> str:
    """`text` with what lies between the markers of `key` replaced by `body`; KeyError unless
    the pair occurs exactly once."""
    begin, end = f"<!-- {key}:begin -->", f"<!-- {key}:end -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if len(pattern.findall(text)) != 1:
        raise KeyError(f"markers {begin} / {end} not found exactly once")
    return pattern.sub(lambda _: begin + "\n" + body + end, text)


def check_or_write(doc: str, old: str, new: str, check: bool, stamp: str) -> bool:
    """With `check`: whether `new` equals `old` but for lines starting with `stamp`. Without:
    writes `new` to `doc` and returns True."""
    if check:
        strip = lambda t: [l for l in t.splitlines() if not l.startswith(stamp)]
        return strip(new) == strip(old)
    with open(doc, "w") as f:
        f.write(new)
    return True
