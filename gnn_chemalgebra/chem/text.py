"""Text rules shared by the molecule and bag parsers."""

from __future__ import annotations

import re
import unicodedata

WHITESPACE = re.compile(r"\s")  # what str.isspace() calls whitespace, any character (tabs, NBSP, ...)


def foreign_char(text: str, allowed: str = "") -> str | None:
    """The first character of ``text`` outside ASCII and ``allowed``, named with its 1-based column and code point
    (``character 'С' (U+0421 CYRILLIC CAPITAL LETTER ES) at column 4``), else ``None``. SMILES and formulas are
    ASCII (a formula's notation adds its subscripts and hydrate dots): RDKit drops a look-alike letter silently
    and reads another molecule."""
    for i, ch in enumerate(text):
        if ord(ch) > 127 and ch not in allowed:
            name = unicodedata.name(ch, "")
            code = f"U+{ord(ch):04X}" + (f" {name}" if name else "")
            return f"character {ch!r} ({code}) at column {i + 1}"
    return None
