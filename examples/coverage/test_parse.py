"""Tests of the date parser in the coverage example.

Each test cites the acceptance criterion it checks in its docstring; a citation anywhere else
(a comment, a plain string) is test data, not a citation. Run with:

    python -m pytest examples/coverage/test_parse.py -q -p no:cacheprovider --junitxml out/parse.xml
"""
import datetime

import pytest


def parse_day(line):
    """Returns the day a `YYYY-MM-DD` line names; refuses an empty line."""
    text = line.strip()
    if not text:
        raise ValueError("an empty line names no day")
    return datetime.date.fromisoformat(text)


@pytest.mark.parametrize("line", ["2024-02-29", " 2024-02-29\n"])
def test_iso_date(line):
    """A leap day parses, whatever whitespace surrounds it. [spec: parse/iso-date]"""
    assert parse_day(line) == datetime.date(2024, 2, 29)


class TestRefusals:
    def test_empty_line_is_refused(self):
        """[spec: parse/empty-input]"""
        with pytest.raises(ValueError, match="names no day"):
            parse_day("   ")
