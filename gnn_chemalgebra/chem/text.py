"""Text rules shared by the molecule and bag parsers."""

from __future__ import annotations

import re

WHITESPACE = re.compile(r"\s")  # what str.isspace() calls whitespace, any character (tabs, NBSP, ...)
