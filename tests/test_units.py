import pytest

from numascope.errors import UserError
from numascope.units import format_bytes, parse_size


def test_binary_and_decimal_suffixes_mean_what_they_say():
    assert parse_size("64K") == 64 << 10 and parse_size("64KiB") == 64 << 10
    assert parse_size("2G") == 2 << 30 and parse_size("2GB") == 2 * 10**9
    assert parse_size("1.5M") == 3 << 19


@pytest.mark.parametrize("bad", ["", "lots", "-1K", "0", "12Q"])
def test_bad_sizes_are_user_errors(bad):
    with pytest.raises(UserError):
        parse_size(bad)


def test_format_bytes():
    assert format_bytes(64 << 10) == "64 KiB"
    assert format_bytes(1.875 * (1 << 30)) == "1.88 GiB"
    assert format_bytes(100) == "100 B"
