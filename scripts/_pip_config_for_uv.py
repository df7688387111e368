"""pip's configuration as uv options, for scripts/install.sh: reads `pip config list` on stdin,
writes NUL-terminated arguments on stdout.

uv reads neither pip.conf nor PIP_* variables, so a mirror, find-links folder or constraint
configured for pip would silently not hold for uv. Each pip key is taken from its highest-priority
source, as pip does (environment over the install section over global); list values are
whitespace-separated. Output items: uv flags and their values; ``index:``-prefixed items for the
configured index-url (dropped by the script where the PyTorch CPU index replaces it); ``env:NAME=VALUE``
items to export (the certificate bundle, the HTTP timeout). Runs on any Python >= 3.10, standard
library only.
"""

from __future__ import annotations

import ast
import sys

RANK = {":env:": 3, "install": 2, "global": 1}
LIST_FLAGS = (
    ("extra-index-url", "--extra-index-url"),
    ("find-links", "--find-links"),
    ("constraint", "--constraint"),
    ("trusted-host", "--allow-insecure-host"),
)


def pip_values(lines: list[str]) -> dict[str, str]:
    """``key -> value`` from `pip config list` lines (``section.key='value'``), highest priority wins.

    >>> pip_values(["global.find-links='/a'", ":env:.find-links='/b'", "freeze.all='1'"])
    {'find-links': '/b'}
    """
    ranked: dict[str, tuple[int, str]] = {}
    for line in lines:
        name, sep, raw = line.strip().partition("=")
        section, _, key = name.rpartition(".")
        rank = RANK.get(section)
        if not sep or rank is None:
            continue
        try:
            value = str(ast.literal_eval(raw))
        except (ValueError, SyntaxError):
            value = raw
        if key not in ranked or ranked[key][0] < rank:
            ranked[key] = (rank, value)
    return {k: v for k, (_, v) in ranked.items()}


def uv_args(values: dict[str, str]) -> list[str]:
    """The uv arguments (and ``index:``/``env:`` items) of pip's configuration values.

    >>> uv_args({"extra-index-url": "file:///a file:///b", "cert": "/ca.crt", "default-timeout": "180"})
    ['--extra-index-url', 'file:///a', '--extra-index-url', 'file:///b', 'env:SSL_CERT_FILE=/ca.crt', 'env:UV_HTTP_TIMEOUT=180']
    """
    out: list[str] = []
    for key, flag in LIST_FLAGS:
        for item in values.get(key, "").split():
            out += [flag, item]
    if values.get("index-url"):
        out += ["index:--index-url", "index:" + values["index-url"]]
    if values.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        out.append("--no-index")
    if values.get("cert"):
        out.append("env:SSL_CERT_FILE=" + values["cert"])
    for key in ("timeout", "default-timeout"):
        if values.get(key):
            out.append("env:UV_HTTP_TIMEOUT=" + values[key].split(".")[0])
    return out


if __name__ == "__main__":
    sys.stdout.write("".join(a + "\0" for a in uv_args(pip_values(sys.stdin.readlines()))))
