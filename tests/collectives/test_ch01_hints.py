"""Chapter 1's all-to-all self-check: its hints fire for every variant's own numbers."""

import pytest

from commlib.check import check, expected
from commlib.questions import ch01


@pytest.mark.parametrize("n, count", [(8, None), (4, 500), (16, 2000), (32, 4096)])
def test_alltoall_hints_follow_the_variant(n, count):
    kw = {} if count is None else {"n": n, "count": count}
    right = expected("ch01.alltoall_recv_kb", **kw)
    assert check("ch01.alltoall_recv_kb", right, **kw).correct
    assert "one block" in check("ch01.alltoall_recv_kb", right / n, **kw).message
    assert "own block" in check("ch01.alltoall_recv_kb", right * (n - 1) / n, **kw).message
    assert "KiB" in check("ch01.alltoall_recv_kb", right * 1000 / 1024, **kw).message
    assert n in ch01.ALLTOALL_NS
