"""JSON with ``//`` and ``/* */`` comments, as Gemini CLI reads its settings files (it
strips comments before parsing), and with trailing commas too, as opencode reads its
config (JSONC). Wardian reads such a file but never rewrites it: a rewrite would lose the
comments.
"""

from __future__ import annotations

__all__ = ["strip_comments", "strip_trailing_commas"]


def strip_comments(text: str) -> str:
    """`text` with every comment outside strings replaced by spaces (newlines kept, so
    line numbers in a parse error still match the file)."""
    out: list[str] = []
    index, length = 0, len(text)
    in_string = False
    while index < length:
        char = text[index]
        if in_string:
            out.append(char)
            if char == "\\" and index + 1 < length:
                out.append(text[index + 1])
                index += 2
                continue
            if char == '"':
                in_string = False
            index += 1
            continue
        if char == '"':
            in_string = True
            out.append(char)
            index += 1
            continue
        if text.startswith("//", index):
            end = text.find("\n", index)
            end = length if end == -1 else end
            out.append(" " * (end - index))
            index = end
            continue
        if text.startswith("/*", index):
            end = text.find("*/", index + 2)
            end = length if end == -1 else end + 2
            out.append("".join(c if c == "\n" else " " for c in text[index:end]))
            index = end
            continue
        out.append(char)
        index += 1
    return "".join(out)


def strip_trailing_commas(text: str) -> str:
    """`text` (without comments) with every comma outside strings that only whitespace
    separates from a closing ``}`` or ``]`` replaced by a space (offsets kept)."""
    out = list(text)
    index, length = 0, len(text)
    in_string = False
    while index < length:
        char = text[index]
        if in_string:
            if char == "\\":
                index += 2
                continue
            in_string = char != '"'
        elif char == '"':
            in_string = True
        elif char == ",":
            after = index + 1
            while after < length and text[after] in " \t\r\n":
                after += 1
            if after < length and text[after] in "}]":
                out[index] = " "
        index += 1
    return "".join(out)
