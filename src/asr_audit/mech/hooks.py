"""Interventions as context managers that always remove their hooks (in ``finally``).

>>> import torch
>>> lin = torch.nn.Linear(2, 2)
>>> with forward_pre_hooks([lin], lambda m, args, kwargs: None):
...     n_inside = len(lin._forward_pre_hooks)
>>> n_inside, len(lin._forward_pre_hooks)
(1, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


@contextmanager
def forward_pre_hooks(
    modules: Sequence[Any], hook: Callable[..., Any], with_kwargs: bool = True
) -> Iterator[list[Any]]:
    """Register ``hook`` as a forward pre-hook on every module; all are removed on exit, even on error.

    With ``with_kwargs`` the hook is ``hook(module, args, kwargs) -> None | (args, kwargs)``.
    """
    handles: list[Any] = []
    try:
        for m in modules:
            handles.append(m.register_forward_pre_hook(hook, with_kwargs=with_kwargs))
        yield handles
    finally:
        for h in handles:
            h.remove()


@contextmanager
def forward_hooks(modules: Sequence[Any], hook: Callable[..., Any]) -> Iterator[list[Any]]:
    """Register ``hook(module, args, output)`` as a forward hook on every module; removed on exit."""
    handles: list[Any] = []
    try:
        for m in modules:
            handles.append(m.register_forward_hook(hook))
        yield handles
    finally:
        for h in handles:
            h.remove()
