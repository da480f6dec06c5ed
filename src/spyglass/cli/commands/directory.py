"""The directory of saved queries: list, search, tags, save, vote, tag, delete."""

from __future__ import annotations

import sys

from spyglass.cli import render
from spyglass.cli.common import Common, api_command, positive
from spyglass.present.values import plural


def show(result, args, page: int):
    from spyglass.present import directory

    if args.json:
        return result
    render.print_lines(directory.query_lines(result.matches))
    print(f"{plural(result.total, 'query', 'queries')} (page {page}, {len(result.matches)} shown)", file=sys.stderr)


async def list_queries(clients, args):
    return show(await clients.directory.queries(args.page, args.sort, args.order), args, args.page)


async def search(clients, args):
    return show(await clients.directory.search(" ".join(args.words), args.page), args, args.page)


async def tags(clients, args):
    from spyglass.present import directory

    result = await clients.directory.tags(args.size)
    return result if args.json else render.print_lines(directory.tag_lines(result))


def one(saved, args):
    from spyglass.present import directory

    return saved if args.json else render.print_lines(directory.query_lines([saved]))


async def save(clients, args):
    saved = await clients.directory.save(args.title, args.query, args.description, args.tags or ())
    return one(saved, args)


async def vote(clients, args):
    saved = await clients.directory.vote(args.id, -1 if args.down else 1)
    if not args.json:  # a second vote changed nothing and said nothing (a newcomer's minor)
        way = "down" if args.down else "up"
        print(f"your vote on #{args.id} is {way} (one an account: voting again replaces it)", file=sys.stderr)
    return one(saved, args)


async def tag(clients, args):
    return one(await clients.directory.add_tags(args.id, args.tags), args)


async def delete(clients, args):
    result = await clients.directory.delete(args.id)
    return result if args.json else print(f"deleted #{args.id}")


def register(sub, common: Common) -> None:
    top = sub.add_parser(
        "directory", help="the directory of saved search queries", description="Browse, search and save queries."
    )
    top.set_defaults(func=common.usage(top))
    actions = top.add_subparsers(dest="action", metavar="ACTION")
    p = actions.add_parser("list", parents=common.api, help="saved queries, 10 a page")
    p.add_argument("--page", type=positive, default=1)
    p.add_argument("--sort", choices=("votes", "timestamp"), default="votes")
    p.add_argument("--order", choices=("asc", "desc"), default="desc")
    p.set_defaults(func=api_command(list_queries))
    p = actions.add_parser("search", parents=common.api, help="saved queries holding every word (tag:NAME for a tag)")
    p.add_argument("words", nargs="+", metavar="WORD")
    p.add_argument("--page", type=positive, default=1)
    p.set_defaults(func=api_command(search))
    p = actions.add_parser("tags", parents=common.api, help="the most used tags")
    p.add_argument("--size", type=positive, default=10, help="how many (default 10)")
    p.set_defaults(func=api_command(tags))
    p = actions.add_parser("save", parents=common.api, help="save a search query (it must parse)")
    p.add_argument("title")
    p.add_argument("query")
    p.add_argument("--description", default="")
    p.add_argument("--tags", help="comma-separated, at most 10")
    p.set_defaults(func=api_command(save))
    p = actions.add_parser("vote", parents=common.api, help="vote a saved query up (or --down)")
    p.add_argument("id", type=positive)
    p.add_argument("--down", action="store_true")
    p.set_defaults(func=api_command(vote))
    p = actions.add_parser("tag", parents=common.api, help="add tags to a query you saved")
    p.add_argument("id", type=positive)
    p.add_argument("tags", help="comma-separated")
    p.set_defaults(func=api_command(tag))
    p = actions.add_parser("delete", parents=common.api, help="delete a query you saved")
    p.add_argument("id", type=positive)
    p.set_defaults(func=api_command(delete))
