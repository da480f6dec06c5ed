"""What the directory's routes ask of its state, on SQLite and on PostgreSQL alike: the starting
set, listing, search at a word's start, tags, and saving, voting, tagging, deleting one's own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from spyglass.server.state.directory import PAGE_SIZE, DirectoryState, NotYours, OverQuota, Quota
from spyglass.server.state.directoryseed import SEED
from tests.store.test_clickhouse import HOSTILE


def _sqlite(request: pytest.FixtureRequest, folder: Path) -> DirectoryState:
    from spyglass.server.state.sqlite.directory import Directory

    return Directory(folder)


def _postgres(request: pytest.FixtureRequest, folder: Path) -> DirectoryState:
    from spyglass.server.state.postgres.directory import PostgresDirectory

    return PostgresDirectory(request.getfixturevalue("postgres_url"))


STATES: dict[str, Callable[[pytest.FixtureRequest, Path], DirectoryState]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
}


@pytest.fixture(params=sorted(STATES))
def directory(request, tmp_path) -> DirectoryState:
    state = STATES[request.param](request, tmp_path)
    yield state
    state.close()


def titles(found: tuple[list, int]) -> list[str]:
    return [s.title for s in found[0]]


def test_the_starting_set_pages_and_sorts(directory):
    first, total = directory.listing(1, "votes", "desc")
    assert total == len(SEED) and len(first) == PAGE_SIZE
    votes = [s.votes for s in first]
    assert votes == sorted(votes, reverse=True) and first[0].owner is None
    oldest = directory.listing(1, "timestamp", "asc")[0][0]
    assert oldest.timestamp == min(s[5] for s in SEED)
    assert directory.get(first[0].id) == first[0] and directory.get(10**12) is None
    by_seed = {s[0]: s[3].split(",") for s in SEED}
    assert all(s.tags == by_seed[s.title] for s in first)  # the tags in the order given


def test_search_is_at_a_word_start_in_any_case(directory):
    mongo = directory.search(["mongodb"], [], 1)
    assert mongo[1] == 2 and directory.search(["MONGO"], [], 1)[1] == 2
    assert titles(directory.search(["plc"], ["scada"], 1)) == ["Siemens S7 PLCs"]
    assert "Industrial control systems" not in titles(directory.search(["US"], [], 1))
    assert directory.search(["industrial"], [], 1)[1] >= 1 and directory.search(["ndustrial"], [], 1)[1] == 0
    assert directory.search(["(path"], [], 1)[1] >= 1  # punctuation is a character like any other
    for literal in ("100%_", ".*z", "(q", "[z", "\\q", "a\x00b", "ßx", "q$"):
        assert directory.search([literal], [], 1)[1] == 0  # no pattern, wildcard or driver error
    with pytest.raises(ValueError, match="at most 32"):
        directory.search([f"w{i}" for i in range(40)], [], 1)


def test_long_words_are_refused_and_words_are_found_without_patterns(directory):
    """32 words of 2,000 characters were 15 s of regular expressions inside PostgreSQL: a word is
    now at most MAX_WORD_LENGTH characters, found as a plain substring of the kept ``words``."""
    with pytest.raises(ValueError, match="a word of 2,000 characters; at most 100 characters a word"):
        directory.search(["a" * 2000] * 32, [], 1)
    with pytest.raises(ValueError, match="a word of 101 characters"):
        directory.search([], ["t" * 101], 1)
    saved = directory.save(7, "Mine (zork)", "x_y 北京 Straße", "nginx", ["web"])
    assert titles(directory.search(["(zork"], [], 1)) == ["Mine (zork)"]  # punctuation starts a word here
    assert directory.search(["北京", "strasse"], [], 1)[1] == 0 and directory.search(["_y", "mine"], [], 1)[1] == 0
    assert titles(directory.search(["STRAßE", "x_y", "北", "ZORK"], [], 1)) == ["Mine (zork)"]
    assert directory.search(["zork", "germ"], [], 1)[1] == 0
    directory.add_tags(saved.id, 7, ["germany"])  # what a search looks in follows the tags
    assert titles(directory.search(["germ", "zork"], [], 1)) == ["Mine (zork)"]
    assert directory.search(["zork)x_y"], [], 1)[1] == 0 and directory.search(["web\nzork"], [], 1)[1] == 0


def test_an_accounts_quota_holds_under_concurrent_saves(request, tmp_path, directory):
    """A free key saved 6,057 public queries in 20 s and every listing was then its spam: a count
    and a number an hour per account, counted in the saving transaction. 24 saves at once through
    three connections (three backends) leave exactly the quota."""
    name = request.node.callspec.params["directory"]
    backends = [directory] + [STATES[name](request, tmp_path) for _ in range(2)]
    hourly = Quota(total=100, per_hour=5)

    def save(n: int) -> bool:
        try:
            backends[n % 3].save(7, f"spam {n}", "nginx", "", [], hourly)
        except OverQuota as exc:
            assert exc.hourly and 3500 < exc.wait <= 3600
            return False
        return True

    with ThreadPoolExecutor(24) as pool:
        assert list(pool.map(save, range(24))).count(True) == 5
    assert directory.search(["spam"], [], 1)[1] == 5
    directory.save(8, "another account", "nginx", "", [], hourly)  # a quota of its own
    with pytest.raises(OverQuota) as over:
        directory.save(7, "one more", "nginx", "", [], Quota(total=5, per_hour=100))
    assert not over.value.hourly
    for other in backends[1:]:
        other.close()


def test_tags_are_counted(directory):
    tags, total = directory.tags(3)
    assert tags[0][0] == "web" and [n for _, n in tags] == sorted((n for _, n in tags), reverse=True)
    assert total == len({t for s in SEED for t in s[3].split(",")})


def test_save_vote_tag_delete_ones_own(directory):
    saved = directory.save(7, "My nginx", "nginx country:DE", "Saved by alice", ["web", "nginx"])
    assert (saved.owner, saved.tags, saved.votes) == (7, ["web", "nginx"], 0)
    assert titles(directory.search(["alice"], [], 1)) == ["My nginx"]
    assert directory.vote(saved.id, 7, 1).votes == 1 and directory.vote(saved.id, 7, 1).votes == 1
    assert directory.vote(saved.id, 8, -1).votes == 0 and directory.vote(saved.id, 7, -1).votes == -2
    assert directory.vote(10**12, 7, 1) is None
    assert directory.add_tags(saved.id, 7, ["germany", "web"]).tags == ["web", "nginx", "germany"]
    with pytest.raises(NotYours):
        directory.add_tags(saved.id, 8, ["spam"])
    with pytest.raises(NotYours):
        directory.delete(saved.id, 8)
    with pytest.raises(ValueError):
        directory.add_tags(saved.id, 7, [f"t{i}" for i in range(10)])  # past MAX_TAGS in all
    assert directory.delete(saved.id, 7) and not directory.delete(saved.id, 7)
    assert directory.get(saved.id) is None and directory.listing(1, "votes", "desc")[1] == len(SEED)


def test_hostile_text_is_kept_as_given(directory):
    for text in HOSTILE:
        text = text.replace("\x00", "")  # no text of PostgreSQL's holds NUL; the routes refuse controls
        saved = directory.save(1, text[:100] or "x", "nginx", text, ["hostile"])
        assert (directory.get(saved.id).title, directory.get(saved.id).description) == (text[:100] or "x", text)
    assert directory.search([], ["hostile"], 1)[1] == len(HOSTILE)
