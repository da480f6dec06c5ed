"""The directory of saved queries: the seeded set runs on demo data; browse, search, tags, and
saving, voting and tagging one's own, through the client and the CLI against the backend."""

from __future__ import annotations

import json
import sqlite3

import httpx
import pytest

from spyglass.cli import main
from spyglass.client import BadRequest, Clients, Forbidden, NotFound
from spyglass.client.errors import APIError
from spyglass.datagen import generate
from spyglass.models import QueryTags, SavedQueryList
from spyglass.server.runner import DEMO_BANNERS
from spyglass.server.state.directoryseed import SEED
from spyglass.server.state.sqlite.database import schema_version
from spyglass.server.state.sqlite.directory import MIGRATIONS
from tests.conftest import ORIGINAL, backend_with, start_backend


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The backend as `serve --demo` fills it."""
    with backend_with(tmp_path_factory.mktemp("directory-demo"), generate(DEMO_BANNERS, seed=1)) as backend:
        yield backend


@pytest.fixture
def fresh(tmp_path):
    server, backend = start_backend(tmp_path)
    with server:
        yield backend
    backend.store.close()


async def client_of(backend, plan: str = "member") -> Clients:
    return Clients.from_profile(backend.profile(backend.key(plan)))


async def all_seeded(clients: Clients) -> list:
    found = []
    page = 1
    while batch := (await clients.directory.queries(page=page)).matches:
        found += batch
        page += 1
    return found


async def test_every_seeded_query_parses_and_matches_demo_data(demo):
    assert len(SEED) >= 30
    async with await client_of(demo, "enterprise") as c:
        seeded = await all_seeded(c)
        assert len(seeded) == len(SEED)
        for saved in seeded:
            result = await c.search.search(saved.query)  # the real search: parse, then match
            assert result.total > 0, f"{saved.title!r}: {saved.query!r} matches nothing on demo data"


async def test_listing_pages_of_10_sorted(fresh):
    async with await client_of(fresh) as c:
        first = await c.directory.queries()
        assert len(first.matches) == 10 and first.total == len(SEED)
        votes = [q.votes for q in first.matches]
        assert votes == sorted(votes, reverse=True) and votes[0] == max(s[4] for s in SEED)
        oldest = await c.directory.queries(sort="timestamp", order="asc")
        assert oldest.matches[0].timestamp == min(s[5] for s in SEED)
        last = await c.directory.queries(page=4)
        assert len(last.matches) == len(SEED) - 30
        assert (await c.directory.queries(page=99)).matches == []
        with pytest.raises(BadRequest, match="sort"):
            await c.directory.queries(sort="title")


async def test_search_words_and_tags(fresh):
    async with await client_of(fresh) as c:
        mongo = await c.directory.search("mongodb")
        assert mongo.total == 2 and all("mongodb" in q.tags for q in mongo.matches)
        ics = await c.directory.search("tag:SCADA plc")
        assert [q.title for q in ics.matches] == ["Siemens S7 PLCs"]
        assert (await c.directory.search("100%_")).total == 0  # LIKE wildcards are literal
        # At a word's start: "US" does not find "Industrial control systems" (it did), "mongo" finds "mongodb".
        assert "Industrial control systems" not in [q.title for q in (await c.directory.search("US")).matches]
        assert (await c.directory.search("industrial")).total >= 1
        assert (await c.directory.search("ndustrial")).total == 0
        assert (await c.directory.search("mongo")).total == mongo.total
        with pytest.raises(BadRequest):
            await c.directory.search("  ")
        assert (await c.directory.search(" ".join(["plc"] * 15) + " tag:scada")).total == 1
        with pytest.raises(BadRequest, match="1,200 words and tags; the member plan allows 16 in one search"):
            await c.directory.search(" ".join(f"w{i}" for i in range(1200)))  # was a 500


@pytest.mark.parametrize(
    "plan, words, message",
    [
        ("free", " ".join(["plc"] * 9), "9 words and tags; the free plan allows 8 in one search"),
        ("free", "a" * 65, "a word of 65 characters; the free plan allows 64 characters a word"),
        ("enterprise", " ".join(["a" * 2000] * 32), "a word of 2,000 characters; the enterprise plan allows 100"),
    ],
    ids=["9 words", "65 letters", "2000 letters"],
)
async def test_search_words_past_the_plan_are_400_naming_the_cap(fresh, plan, words, message):
    async with await client_of(fresh, plan) as c:
        with pytest.raises(BadRequest, match=message):
            await c.directory.search(words)
        assert (await c.directory.search(" ".join(["plc"] * 7) + " tag:scada")).total == 1


async def test_tags_have_the_shape_of_the_fixture(fresh):
    async with await client_of(fresh) as c:
        tags = await c.directory.tags(size=3)
    assert len(tags.matches) == 3 and tags.matches[0].value == "web"
    counts = [t.count for t in tags.matches]
    assert counts == sorted(counts, reverse=True)
    assert tags.total == len({t for s in SEED for t in s[3].split(",")})
    assert set(QueryTags.model_validate_json((ORIGINAL / "query_tags.json").read_text()).to_api()) == set(tags.to_api())


async def test_save_vote_tag_delete_ones_own(fresh):
    async with await client_of(fresh) as alice, await client_of(fresh) as bob:
        saved = await alice.directory.save("My nginx", "nginx country:DE", "Saved by alice", "web, Nginx")
        assert saved.id and saved.tags == ["web", "nginx"] and saved.votes == 0
        assert (await alice.directory.search("alice")).matches[0].id == saved.id
        assert (await alice.directory.vote(saved.id)).votes == 1
        assert (await alice.directory.vote(saved.id)).votes == 1  # one vote an account
        assert (await bob.directory.vote(saved.id, -1)).votes == 0
        assert (await alice.directory.vote(saved.id, -1)).votes == -2  # a vote again replaces it
        assert (await alice.directory.add_tags(saved.id, "germany")).tags == ["web", "nginx", "germany"]
        with pytest.raises(APIError, match="at most 10 tags, not 11") as refused:  # 8 more are valid alone
            await alice.directory.add_tags(saved.id, ",".join(f"t{i}" for i in range(8)))
        assert refused.value.status == 409  # the query's own tags make it too many: not a bad request
        with pytest.raises(Forbidden, match="Only the account that saved"):
            await bob.directory.add_tags(saved.id, "spam")
        with pytest.raises(Forbidden):
            await bob.directory.delete(saved.id)
        with pytest.raises(Forbidden):  # the starting set belongs to nobody
            await alice.directory.add_tags(1, "mine")
        assert (await alice.directory.delete(saved.id)).success
        with pytest.raises(NotFound):
            await alice.directory.vote(saved.id)


@pytest.mark.parametrize(
    "title, query, tags, message",
    [
        ("", "nginx", None, "title"),
        ("x" * 101, "nginx", None, "title"),
        ("bad", "port:notanumber", None, "Invalid search query"),
        ("bad", "nginx", "ok,no spaces", "tags"),
        ("bad", "nginx", ",".join(f"t{i}" for i in range(11)), "at most 10 tags"),
    ],
)
async def test_save_checks_what_it_is_given(fresh, title, query, tags, message):
    async with await client_of(fresh) as c:
        with pytest.raises(BadRequest, match=message):
            await c.directory.save(title, query, tags=tags or ())
        assert (await c.directory.queries()).total == len(SEED)


async def test_saved_queries_survive_a_restart(tmp_path):
    server, backend = start_backend(tmp_path)
    with server:
        key = backend.key("member")
        async with Clients.from_profile(backend.profile(key)) as c:
            await c.directory.save("kept", "ssh")
    backend.store.close()
    server, backend = start_backend(tmp_path)
    with server:
        async with Clients.from_profile(backend.profile(key)) as c:
            assert (await c.directory.search("kept")).total == 1
            assert (await c.directory.queries()).total == len(SEED) + 1  # seeded once
    backend.store.close()
    db = sqlite3.connect(tmp_path / "directory.db")
    assert schema_version(db) == len(MIGRATIONS)
    db.close()


async def test_the_openapi_document_declares_the_new_methods_and_errors(fresh):
    async with httpx.AsyncClient() as http:
        paths = (await http.get(f"{fresh.url}/openapi.json")).json()["paths"]
    assert {"400", "401"} <= set(paths["/intel/query"]["post"]["responses"])
    assert {"400", "401", "404"} <= set(paths["/intel/query/{query_id}/vote"]["post"]["responses"])
    assert {"403", "404"} <= set(paths["/intel/query/{query_id}/tags"]["post"]["responses"])
    assert {"403", "404"} <= set(paths["/intel/query/{query_id}"]["delete"]["responses"])


def test_the_fixture_parses():
    result = SavedQueryList.model_validate_json((ORIGINAL / "query_search_results.json").read_text())
    assert result.total == 2 and result.matches[0].tags == ["apache"] and result.matches[0].id is None


def test_cli(fresh, capsys, monkeypatch):
    monkeypatch.setenv("SPYGLASS_URL", fresh.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", fresh.key("member"))
    assert main(["directory", "list"]) == 0
    captured = capsys.readouterr()
    assert "Industrial control systems" in captured.out and f"{len(SEED)} queries (page 1" in captured.err
    assert main(["directory", "save", "Mine", "port:22 ssh", "--tags", "ssh"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    query_id = int(line.split("#")[1].split()[0])
    assert main(["directory", "vote", str(query_id), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["votes"] == 1
    assert main(["directory", "vote", str(query_id)]) == 0  # again: replaced, and said so
    said = capsys.readouterr()
    assert f"your vote on #{query_id} is up (one an account: voting again replaces it)" in said.err
    assert said.out.split()[0] == "1"
    assert main(["directory", "search", "tag:ssh", "Mine"]) == 0
    assert "port:22 ssh" in capsys.readouterr().out
    assert main(["directory", "tags", "--size", "2"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert main(["directory", "save", "Bad", "port:x"]) == 2
    assert "Invalid search query" in capsys.readouterr().err


async def test_a_method_a_path_lacks_is_a_405_naming_every_method_of_the_path(fresh):
    async with httpx.AsyncClient() as http:
        answer = await http.put(f"{fresh.url}/intel/query", params={"key": fresh.key()})
    assert answer.status_code == 405 and answer.headers["allow"] == "GET, POST"
    assert answer.json() == {"error": "Method Not Allowed"}


def test_hostile_titles_stay_inert_in_the_cli(fresh, capsys, monkeypatch):
    monkeypatch.setenv("SPYGLASS_URL", fresh.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", fresh.key("member"))
    title = "evil\x1b[2J\x1b]52;c;cGF5bG9hZA==\x07 \u202eroot\x9b31m"
    assert main(["directory", "save", title, "ssh"]) == 2  # refused: control characters
    # stored by an older backend, or another server: whatever a directory holds is shown inert
    from spyglass.server.state.sqlite.directory import Directory

    directory = Directory(fresh.data_dir)
    directory.save(1, title, "ssh", "line1\nline2\x1b[31m", [])
    directory.close()
    assert main(["directory", "search", "evil"]) == 0
    out = capsys.readouterr().out
    assert "evil" in out
    assert not any(c in out for c in ("\x1b", "\x07", "\u202e", "\x9b"))


async def test_control_characters_in_a_title_or_description_are_refused(fresh):
    async with await client_of(fresh) as c:
        for title, description, field in (("a\x00b", "", "title"), ("ok", "two\nlines", "description")):
            with pytest.raises(BadRequest, match=f"{field}: control characters"):
                await c.directory.save(title, "port:22", description)
