"""The request target (path and query) of a URL as the kit sends it, and signs it: one function, so the bytes signed
are the bytes on the request line (docs/authentication.md#hmac-headers-server-to-server, docs/clients.md#python)."""

from __future__ import annotations

import string
from typing import FrozenSet, Tuple

from .errors import SandboxTargetError

_PRINTABLE = frozenset(string.printable) - frozenset(string.whitespace)
# The percent-encode sets of the WHATWG URL standard, which fetch (the TypeScript kit) and the emulator's own
# delivery use: what the path and the query of a special (http, https) URL encode; every other character is UTF-8,
# percent-encoded. A "%" is kept, so a target already encoded is sent as given.
_PATH_KEEPS = _PRINTABLE - frozenset(' "#<>?`{}')
_QUERY_KEEPS = _PRINTABLE - frozenset(" \"#<>'")


def _encode(text: str, keeps: FrozenSet[str], url: str) -> str:
    out = []
    for char in text:
        if char in keeps:
            out.append(char)
            continue
        try:
            data = char.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no bytes stand for it
            raise SandboxTargetError(f"{url[:200]!r}: {char!r} cannot be sent in a URL (not a Unicode character)") from None
        out.append("".join(f"%{byte:02X}" for byte in data))
    return "".join(out)


def split_url(url: str) -> Tuple[str, str]:
    """(origin, target) of an absolute URL: ``http://host:port`` and the path and query as sent, non-ASCII and the
    characters a URL cannot carry percent-encoded, the fragment left out. An empty query (a trailing "?") is left out
    too, as fetch and Go's net/http send it. SandboxTargetError when the URL cannot be sent."""
    scheme, separator, rest = url.partition("://")
    if not separator or not scheme:
        raise SandboxTargetError(f"{url[:200]!r}: an absolute http:// or https:// URL")
    end = len(rest)
    for delimiter in "/?#":
        found = rest.find(delimiter)
        if found != -1:
            end = min(end, found)
    authority, rest = rest[:end], rest[end:]
    if not authority or not authority.isascii() or any(char in authority for char in " \t\r\n"):
        raise SandboxTargetError(f"{url[:200]!r}: the host must be ASCII with no spaces")
    rest = rest.split("#", 1)[0]
    path, _, query = rest.partition("?")
    target = _encode(path or "/", _PATH_KEEPS, url)
    if query:
        target += "?" + _encode(query, _QUERY_KEEPS, url)
    return f"{scheme}://{authority}", target


def request_target(url: str) -> str:
    """The path and query of ``url`` as the kit sends and signs them (see split_url)."""
    return split_url(url)[1]
