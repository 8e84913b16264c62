"""`identical_prefix` against the obvious loop, on sequences sharing objects in any pattern."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextchef._sequences import Lineage, identical_prefix

POOL = [{"n": i} for i in range(4)]  # equal dicts are not the same object: only `is` counts


def _naive(a: list[object], b: list[object]) -> int:
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x is not y:
            break
        shared += 1
    return shared


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=30),
    st.lists(st.integers(0, 3), max_size=30),
    st.integers(0, 30),
)
def test_identical_prefix_is_the_length_of_the_shared_run(
    left: list[int], right: list[int], common: int
) -> None:
    head = [POOL[i] for i in left][:common]
    a = head + [POOL[i] for i in left[common:]]
    b = head + [{"n": i} for i in right]  # fresh objects after the common head
    b_same = head + [POOL[i] for i in right]  # the pool's objects: some equal, some the same
    for x, y in ((a, b), (b, a), (a, b_same), (b_same, a), (a, list(a)), (a, a[:-1])):
        assert identical_prefix(x, y) == _naive(x, y)


def test_a_changed_tail_longer_than_the_look_back() -> None:
    shared = [object() for _ in range(50)]
    a = [*shared, *(object() for _ in range(20))]
    b = [*shared, *(object() for _ in range(25))]
    assert identical_prefix(a, b) == 50
    c = list(a)
    c[3] = object()
    assert identical_prefix(a, c) == 3
    assert identical_prefix([], a) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=30),
    st.lists(st.integers(0, 3), max_size=30),
    st.integers(0, 30),
    st.integers(0, 30),
)
def test_a_lineage_skips_what_it_vouches_for_and_nothing_more(
    left: list[int], right: list[int], common: int, vouched: int
) -> None:
    head = [POOL[i] for i in left][:common]
    a = (*head, *(POOL[i] for i in left[common:]))
    b = (*head, *(POOL[i] for i in right))
    truth = _naive(list(a), list(b))
    known = Lineage(a, b, min(vouched, truth))  # a maker vouches for at most the truth
    assert identical_prefix(a, b, known) == truth
    assert identical_prefix(b, a, known) == truth
    # a lineage of other sequences (an equal copy is another object) says nothing here
    assert identical_prefix(a, b, Lineage(list(a), b, len(b))) == truth
    assert identical_prefix(a, b, Lineage(b, a, 0)) == truth
