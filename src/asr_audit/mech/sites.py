"""Hook-site names: one grammar for every model family.

``encoder.layers.{L}.{part}`` / ``decoder.layers.{L}.{part}`` with ``part`` one of
``self_attn``, ``cross_attn`` (decoder only), ``mlp``, ``out``; plus the sites of a whole stack,
``{stack}.{part}`` with ``part`` one of ``in`` (the input projection into the first layer),
``embed_tokens`` (token embeddings), ``out`` (after the last layer) and ``head`` (the projection
to vocabulary logits). Backends with hooks (``.sites()``, ``.site_module(name)``) use only these
names: the PyTorch Whisper table is :func:`asr_audit.models.whisper_torch.whisper_site_modules`
(``encoder.out``, ``decoder.embed_tokens``, ``decoder.out``, layers), the CTC table
:func:`asr_audit.models.hf_ctc.ctc_site_modules` (``encoder.in``, encoder layers,
``encoder.head``). A backend's site list is checked against this grammar by its tests
(``models`` sits below ``mech`` and so cannot import it).

>>> site_name("decoder", 3, "cross_attn")
'decoder.layers.3.cross_attn'
>>> parse_site("encoder.layers.0.out")
('encoder', 0, 'out')
>>> parse_site("decoder.out")
('decoder', None, 'out')
>>> parse_site("encoder.head")
('encoder', None, 'head')
>>> parse_site("encoder.layers.0.cross_attn")
Traceback (most recent call last):
...
asr_audit.errors.ConfigError: 'encoder.layers.0.cross_attn' is not a hook-site name; fix: e.g. decoder.layers.0.cross_attn, encoder.out
"""

from __future__ import annotations

import re
from typing import Any

from asr_audit.errors import ConfigError

STACKS = ("encoder", "decoder")
PARTS = ("self_attn", "cross_attn", "mlp", "out")  # of one layer
STACK_PARTS = ("in", "embed_tokens", "out", "head")  # of a whole stack
_SITE = re.compile(
    r"^(encoder|decoder)(?:\.layers\.(\d+)\.(self_attn|cross_attn|mlp|out)|\.(in|embed_tokens|out|head))$"
)


def site_name(stack: str, layer: int | None, part: str) -> str:
    """The site name for ``part`` of ``layer`` in ``stack`` (``layer=None``: the stack's own site)."""
    if stack not in STACKS:
        raise ConfigError(f"unknown stack {stack!r}; valid: {', '.join(STACKS)}")
    if layer is None:
        if part not in STACK_PARTS:
            raise ConfigError(f"unknown site part {part!r} for the whole {stack}; valid: {', '.join(STACK_PARTS)}")
        return f"{stack}.{part}"
    if part not in PARTS or (part == "cross_attn" and stack == "encoder"):
        raise ConfigError(f"unknown site part {part!r} for {stack}; valid: {', '.join(PARTS)}")
    return f"{stack}.layers.{int(layer)}.{part}"


def parse_site(name: str) -> tuple[str, int | None, str]:
    """``(stack, layer or None, part)`` of a site name; :class:`ConfigError` when it is not one."""
    m = _SITE.match(name.strip())
    if not m or (m.group(1) == "encoder" and m.group(3) == "cross_attn"):
        raise ConfigError(f"{name!r} is not a hook-site name; fix: e.g. decoder.layers.0.cross_attn, encoder.out")
    if m.group(2) is None:
        return m.group(1), None, m.group(4)
    return m.group(1), int(m.group(2)), m.group(3)


def layer_sites(backend: Any, stack: str, part: str) -> list[str]:
    """Every ``{stack}.layers.{L}.{part}`` site of ``backend``, in layer order."""
    if not hasattr(backend, "sites"):
        raise ConfigError(
            f"backend {getattr(backend, 'spec', backend)!r} exposes no hook sites; "
            "fix: use a PyTorch backend (e.g. whisper-tiny.en-pt)"
        )
    out = []
    for s in backend.sites():
        st, layer, p = parse_site(s)
        if st == stack and layer is not None and p == part:
            out.append(s)
    return out
