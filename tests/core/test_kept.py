"""``Kept``: a list bounded where entries arrive, that says how many it let go."""

from __future__ import annotations

import pytest

from mcp_notebook.core.kept import Kept


def test_a_kept_list_keeps_its_newest_entries_and_counts_the_others() -> None:
    kept: Kept[int] = Kept(3)
    assert kept == [] and kept.marker("rounds") is None and kept.seen == 0
    for n in range(5):
        kept.append(n)
    assert kept == [2, 3, 4] and kept.dropped == 2 and kept.seen == 5  # still a list: compared, sliced, indexed
    assert kept[-1] == 4 and kept[1:] == [3, 4]
    kept.extend([5, 6])
    kept += [7]
    assert kept == [5, 6, 7] and kept.dropped == 5 and isinstance(kept, Kept)
    kept.insert(0, 99)  # in front of the oldest: it is the one that goes
    assert kept == [5, 6, 7] and kept.dropped == 6
    assert kept.marker("rounds") == "6 earlier rounds dropped (the last 3 kept)"
    assert Kept(2, "abc") == ["b", "c"] and Kept(2, "abc").dropped == 1


def test_a_kept_list_keeps_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one entry"):
        Kept(0)


def test_a_kept_list_pickles_and_copies_with_its_bound_and_count() -> None:
    import copy
    import pickle

    kept: Kept[int] = Kept(3, [1, 2, 3, 4, 5])
    for back in (pickle.loads(pickle.dumps(kept)), copy.deepcopy(kept), copy.copy(kept)):
        assert isinstance(back, Kept) and back == [3, 4, 5] and (back.limit, back.dropped) == (3, 2)
        back.append(6)
        assert back == [4, 5, 6] and back.dropped == 3
