"""Network access for fetchers: a fast reachability probe and a checksummed download, both with timeouts."""

from __future__ import annotations

import hashlib
import http.client
import socket
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 60.0
DEFAULT_PORTS = {"http": 80, "https": 443, "git": 9418, "ssh": 22}


class Unavailable(Exception):
    """The server could not be reached, or did not serve the file (a mirror may still have it)."""

    def __init__(self, host: str, reason: str, cause: str = "") -> None:
        super().__init__(f"{host} {reason}" + (f" ({cause})" if cause else ""))
        self.host = host
        self.reason = reason
        self.cause = cause


def host_of(url: str) -> str:
    return urlsplit(url).hostname or url


def probe(url: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise Unavailable unless a TCP connection to *url*'s host opens within *timeout* (local URLs pass)."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS:
        return
    host = parts.hostname or ""
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except (OSError, ValueError) as exc:
        raise Unavailable(host or url, "unreachable", f"{exc.__class__.__name__}: {exc}") from None


def download(url: str, dest: Path, *, timeout: float = READ_TIMEOUT) -> str:
    """Stream *url* (http, https or file) into *dest*; return the sha256 of what was written."""
    probe(url)
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, dest.open("wb") as out:  # noqa: S310
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise Unavailable(host_of(url), f"answered HTTP {exc.code} for {url}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise Unavailable(host_of(url) or "local file", f"did not serve {url} ({reason})") from None
    # http.client's answers to a reply that is no HTTP (a bad status line, a cut chunk, too many headers) are not
    # OSErrors: the host served nothing usable, and the next mirror is tried
    except http.client.HTTPException as exc:
        raise Unavailable(host_of(url), f"did not serve {url} (a reply that is no HTTP: {exc!r})") from None
    return digest.hexdigest()
