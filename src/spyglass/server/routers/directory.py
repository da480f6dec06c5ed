"""The directory of saved queries: ``/{ns}/query...``. Browse, search and the tag counts as the
seed writes them; saving, voting and tagging one's own queries beyond it."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query

from spyglass.models import QueryTags, SavedQuery, SavedQueryList, Success, TagCount
from spyglass.query import QuerySyntaxError, parse_strict
from spyglass.query.filters import MAX_VALUE_CHARS
from spyglass.safetext import CONTROL_CLASS, NO_CONTROL_PATTERN, NOT_BLANK_PATTERN, has_control
from spyglass.server.auth import too_many
from spyglass.server.deps import SavedQueries, Who
from spyglass.server.errors import ApiError, bad_request, not_found, responses
from spyglass.server.state.directory import (
    MAX_SEARCH_TERMS,
    MAX_TAGS,
    MAX_WORD_LENGTH,
    NotYours,
    OverQuota,
    Quota,
    Saved,
    check_search,
    check_tags,
)

router = APIRouter()
# What the document says each parameter takes (documented, not enforced: the routes' own checks
# give clearer messages), so that whatever it calls valid is taken: a plan may allow fewer words.
_TAG = r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}"
_TAGS = rf"^\s*{_TAG}\s*(,\s*{_TAG}\s*){{0,{MAX_TAGS - 1}}}$"
_TAGS_OR_NONE = rf"^\s*$|{_TAGS}"  # a blank value is no tags, as the server reads it
_WORD = rf"\S{{1,{MAX_WORD_LENGTH}}}"
_WORDS = rf"^\s*{_WORD}(\s+{_WORD}){{0,{MAX_SEARCH_TERMS - 1}}}\s*$"
# A query to save: each run of non-blanks (a word, a filter) at most MAX_VALUE_CHARS, no controls.
_RUN = f"[^\\s{CONTROL_CLASS}]{{1,{MAX_VALUE_CHARS}}}"
_SPACE = f"[^\\S{CONTROL_CLASS}]"
_QUERY = f"^{_SPACE}*{_RUN}(?:{_SPACE}+{_RUN})*{_SPACE}*$"
MAX_TITLE = 100
MAX_DESCRIPTION = 1000
MAX_QUERY = 1000
MAX_PAGE = 1_000_000
MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id names no query


def api(saved: Saved) -> SavedQuery:
    return SavedQuery(
        id=saved.id,
        votes=saved.votes,
        description=saved.description,
        tags=saved.tags,
        timestamp=saved.timestamp,
        title=saved.title,
        query=saved.query,
    )


def page_of(found: tuple[list[Saved], int]) -> SavedQueryList:
    matches, total = found
    return SavedQueryList(matches=[api(s) for s in matches], total=total)


def tag_list(text: str | None) -> list[str]:
    try:
        return check_tags((text or "").split(","))
    except ValueError as exc:
        raise bad_request(f"Invalid request: tags: {exc}") from None


@router.get("/query", response_model=SavedQueryList, response_model_exclude_unset=True, summary="Saved queries")
def list_queries(
    directory: SavedQueries,
    who: Who,
    page: int = Query(1, ge=1, le=MAX_PAGE, description="10 a page"),
    sort: Literal["votes", "timestamp"] = "votes",
    order: Literal["asc", "desc"] = "desc",
) -> SavedQueryList:
    return page_of(directory.listing(page, sort, order))


@router.get(
    "/query/search", response_model=SavedQueryList, response_model_exclude_unset=True, summary="Search saved queries"
)
def search_queries(
    directory: SavedQueries,
    who: Who,
    query: str = Query(
        ...,
        description="words in the title, description, query or tags; tag:NAME for a tag (the plan's "
        "directory_words and directory_word_length bound them)",
        json_schema_extra={"pattern": _WORDS},
    ),
    page: int = Query(1, ge=1, le=MAX_PAGE, description="10 a page"),
) -> SavedQueryList:
    words, tags = [], []
    for word in query.split():
        if word.lower().startswith("tag:") and len(word) > 4:
            tags.append(word[4:])
        else:
            words.append(word)
    if not words and not tags:
        raise bad_request("Invalid request: query: give a word or tag:NAME")
    plan = who.account.plan
    try:  # each word is a pass over every saved query's text: the plan bounds how many and how long
        check_search(words, tags, plan.directory_words, plan.directory_word_length, f"the {plan.name} plan")
        return page_of(directory.search(words, tags, page))
    except ValueError as exc:
        raise bad_request(f"Invalid request: query: {exc}") from None


@router.get("/query/tags", response_model=QueryTags, summary="The most used tags of saved queries")
def popular_tags(directory: SavedQueries, who: Who, size: int = Query(10, ge=1, le=1000)) -> QueryTags:
    counts, total = directory.tags(size)
    return QueryTags(matches=[TagCount(value=t, count=n) for t, n in counts], total=total)


@router.post(
    "/query",
    response_model=SavedQuery,
    response_model_exclude_unset=True,
    summary="Save a search query in the directory",
    responses=responses(403, 429),
)
def save_query(
    directory: SavedQueries,
    who: Who,
    title: str = Query(
        ...,
        description=f"at most {MAX_TITLE} characters",
        json_schema_extra={"pattern": NOT_BLANK_PATTERN, "minLength": 1, "maxLength": MAX_TITLE},
    ),
    query: str = Query(
        ...,
        description=f"a search query that parses; a word, value or phrase: {MAX_VALUE_CHARS} characters at most",
        json_schema_extra={"pattern": _QUERY, "minLength": 1, "maxLength": MAX_QUERY},
    ),
    description: str = Query(
        "",
        description=f"at most {MAX_DESCRIPTION} characters",
        json_schema_extra={"pattern": NO_CONTROL_PATTERN, "maxLength": MAX_DESCRIPTION},
    ),
    tags: str | None = Query(
        None, description="comma-separated tags, at most 10", json_schema_extra={"pattern": _TAGS_OR_NONE}
    ),
) -> SavedQuery:
    title, query, description = title.strip(), query.strip(), description.strip()
    if not title or len(title) > MAX_TITLE:
        raise bad_request(f"Invalid request: title: 1 to {MAX_TITLE} characters")
    for field, text in (("title", title), ("description", description), ("query", query)):
        if has_control(text):
            raise bad_request(
                f"Invalid request: {field}: control characters (line breaks, tabs, NUL...) are not allowed"
            )
    if len(description) > MAX_DESCRIPTION:
        raise bad_request(f"Invalid request: description: at most {MAX_DESCRIPTION} characters")
    if not query or len(query) > MAX_QUERY:
        raise bad_request(f"Invalid request: query: 1 to {MAX_QUERY} characters")
    try:
        parse_strict(query)
    except QuerySyntaxError as exc:
        raise bad_request(f"Invalid search query: {exc}") from None
    plan = who.account.plan
    try:
        saved = directory.save(
            who.account.id,
            title,
            query,
            description,
            tag_list(tags),
            Quota(plan.saved_queries, plan.saved_queries_hour),
        )
    except OverQuota as exc:  # the directory is shared: one account must not own its listings
        if exc.hourly:
            cap = f"the {plan.name} plan allows {plan.saved_queries_hour} saved queries an hour"
            raise too_many(exc.wait, f"Too many queries saved in the last hour: {cap}") from None
        cap = f"the {plan.name} plan allows {plan.saved_queries} saved queries"
        raise ApiError(403, f"Too many saved queries: {cap}; delete some to save more") from None
    return api(saved)


@router.post(
    "/query/{query_id:int}/vote",
    response_model=SavedQuery,
    response_model_exclude_unset=True,
    summary="Vote a saved query up (1) or down (-1); voting again replaces the vote",
    responses=responses(404),
)
def vote(
    directory: SavedQueries,
    who: Who,
    query_id: int,
    value: int = Query(1, description="1 up, -1 down", json_schema_extra={"enum": [1, -1]}),
) -> SavedQuery:
    if value not in (1, -1):
        raise bad_request(f"Invalid request: value: 1 (up) or -1 (down), not {value}")
    saved = directory.vote(query_id, who.account.id, value) if query_id <= MAX_ID else None
    if saved is None:
        raise not_found(f"No saved query {query_id}")
    return api(saved)


@router.post(
    "/query/{query_id:int}/tags",
    response_model=SavedQuery,
    response_model_exclude_unset=True,
    summary="Add tags to a query you saved",
    responses=responses(403, 404, 409),
)
def add_tags(
    directory: SavedQueries,
    who: Who,
    query_id: int,
    tags: str = Query(
        ..., description="comma-separated tags; a query has at most 10", json_schema_extra={"pattern": _TAGS}
    ),
) -> SavedQuery:
    wanted = tag_list(tags)
    if not wanted:
        raise bad_request("Invalid request: tags: give at least one")
    try:
        saved = directory.add_tags(query_id, who.account.id, wanted) if query_id <= MAX_ID else None
    except NotYours:
        raise ApiError(403, "Only the account that saved a query may tag it") from None
    except ValueError as exc:  # a valid request, past the cap with the tags the query holds: a conflict
        raise ApiError(409, f"tags: {exc}, with the query's own") from None
    if saved is None:
        raise not_found(f"No saved query {query_id}")
    return api(saved)


@router.delete(
    "/query/{query_id:int}",
    response_model=Success,
    summary="Delete a query you saved",
    responses=responses(403, 404),
)
def delete_query(query_id: int, directory: SavedQueries, who: Who) -> Success:
    try:
        found = query_id <= MAX_ID and directory.delete(query_id, who.account.id)
    except NotYours:
        raise ApiError(403, "Only the account that saved a query may delete it") from None
    if not found:
        raise not_found(f"No saved query {query_id}")
    return Success(success=True)
