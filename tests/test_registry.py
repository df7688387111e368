"""The one registry shape (asr_audit.registry): register, get, names, lazy loading, entry points."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from asr_audit.errors import BackendError, ConfigError
from asr_audit.registry import Registry, declared_entry_points


def test_register_as_decorator_and_as_call_and_get() -> None:
    reg: Registry[object] = Registry("widget")
    assert reg.register("b", 2) == 2

    @reg.register("a")
    def make_a() -> int:
        return 1

    assert reg.get("a") is make_a and reg.get("b") == 2
    assert reg.names() == ["a", "b"]
    assert reg.items() == [("a", make_a), ("b", 2)]
    assert list(reg) == ["a", "b"] and len(reg) == 2
    assert "a" in reg and "z" not in reg and ["unhashable"] not in reg


def test_unknown_name_is_one_line_with_the_valid_names_and_the_fix() -> None:
    reg: Registry[int] = Registry("widget", fix="pass --widget with one of them")
    reg.register("zeta", 1)
    reg.register("alpha", 2)
    with pytest.raises(ConfigError) as info:
        reg.get("gamma")
    assert str(info.value) == (
        "unknown widget 'gamma'; available widgets: alpha, zeta; fix: pass --widget with one of them"
    )
    with pytest.raises(ConfigError, match=r"unknown widget \['x'\]"):
        reg.get(["x"])  # type: ignore[arg-type]
    empty: Registry[int] = Registry("gadget", plural="gadgetry", error=BackendError)
    with pytest.raises(
        BackendError, match="unknown gadget 'x'; available gadgetry: none; fix: use one of the available gadgetry"
    ):
        empty.get("x")


def test_listing_can_be_overridden() -> None:
    reg: Registry[int] = Registry("voice", listing=lambda: "a (all: a, b)")
    reg.register("a", 1)
    with pytest.raises(ConfigError, match=r"available voices: a \(all: a, b\);"):
        reg.get("c")


def test_a_taken_name_is_an_error_unless_the_same_entry_or_replace() -> None:
    reg: Registry[object] = Registry("widget")

    def first() -> None: ...

    reg.register("w", first)
    reg.register("w", first)  # the same entry again: a no-op
    reg.register("n", (1, 2))
    reg.register("n", (1, 2))  # an equal entry: a no-op

    def second() -> None: ...

    with pytest.raises(ConfigError) as info:
        reg.register("w", second)
    assert str(info.value) == (
        "widget 'w' is already registered, defined by "
        f"{__name__}.test_a_taken_name_is_an_error_unless_the_same_entry_or_replace.<locals>.first; "
        "fix: choose another name or pass replace=True"
    )
    with pytest.raises(ConfigError, match="already registered"):
        reg.register("w")(second)
    reg.register("w", second, replace=True)
    assert reg.get("w") is second
    with pytest.raises(ConfigError, match="name '' is empty"):
        reg.register("", 1)


def test_unregister_and_temporary() -> None:
    reg: Registry[int] = Registry("widget")
    reg.register("a", 1)
    with reg.temporary():
        reg.register("b", 2)
        reg.register("a", 3, replace=True)
        assert reg.names() == ["a", "b"]
    assert reg.items() == [("a", 1)]
    assert reg.unregister("a") == 1 and reg.names() == []
    with pytest.raises(ConfigError, match="unknown widget 'a'"):
        reg.unregister("a")


@pytest.fixture()
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path with a holder module (the registry) that plugin modules register into."""
    holder = types.ModuleType("asr_audit_test_holder")
    vars(holder)["REG"] = Registry(
        "widget", modules=("asr_audit_test_plugin_a",), entry_points="asr_audit_test.widgets"
    )
    monkeypatch.setitem(sys.modules, "asr_audit_test_holder", holder)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("asr_audit_test_plugin_a", "asr_audit_test_plugin_b", "asr_audit_test_plugin_broken"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    (tmp_path / "asr_audit_test_plugin_a.py").write_text(
        "from asr_audit_test_holder import REG\nREG.register('from-module', 1)\n"
    )
    (tmp_path / "asr_audit_test_plugin_b.py").write_text(
        "from asr_audit_test_holder import REG\nREG.register('from-entry-point', 2)\n"
    )
    return tmp_path


def _fake_distribution(where: Path, name: str, entry_points: str) -> None:
    info = where / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_modules_and_entry_points_load_lazily_on_first_use(plugin_dir: Path) -> None:
    _fake_distribution(
        plugin_dir,
        "fake_widgets",
        "[asr_audit_test.widgets]\nb = asr_audit_test_plugin_b\n[other.group]\nx = nothing_here\n",
    )
    reg = sys.modules["asr_audit_test_holder"].REG
    assert "asr_audit_test_plugin_a" not in sys.modules  # nothing imported before the first lookup
    assert reg.names() == ["from-entry-point", "from-module"]
    assert reg.get("from-entry-point") == 2
    assert "asr_audit_test_plugin_b" in sys.modules


def test_a_broken_plugin_names_its_distribution(plugin_dir: Path) -> None:
    _fake_distribution(plugin_dir, "broken_widgets", "[asr_audit_test.widgets]\nbad = asr_audit_test_plugin_broken\n")
    (plugin_dir / "asr_audit_test_plugin_broken.py").write_text("import no_such_module_xyz\n")
    reg = sys.modules["asr_audit_test_holder"].REG
    with pytest.raises(
        ConfigError,
        match=r"widget plugin 'bad' \(entry point 'asr_audit_test_plugin_broken' of "
        r"broken_widgets, group asr_audit_test.widgets\) failed to import: .*"
        r"no_such_module_xyz.*; fix: reinstall or uninstall broken_widgets",
    ):
        reg.names()


def test_entry_points_declared_in_the_source_pyproject(tmp_path: Path) -> None:
    ours = tmp_path / "pyproject.toml"
    ours.write_text(
        '[project]\nname = "asr-audit"\n[project.entry-points."asr_audit.backends"]\n'
        'zz = "pkg.zz"\norganism = "asr_audit.organism.backend"\n'
    )
    assert declared_entry_points("asr_audit.backends", ours) == [
        ("organism", "asr_audit.organism.backend"),
        ("zz", "pkg.zz"),
    ]
    assert declared_entry_points("asr_audit.probes", ours) == []
    other = tmp_path / "other.toml"
    other.write_text('[project]\nname = "not-us"\n[project.entry-points."asr_audit.backends"]\nx = "x"\n')
    assert declared_entry_points("asr_audit.backends", other) == []
    assert declared_entry_points("asr_audit.backends", tmp_path / "missing.toml") == []


def test_the_organism_backends_are_entry_points_not_named_by_models() -> None:
    """models sits below organism: the organism backends arrive through the entry-point group."""
    from asr_audit.models import base

    source = Path(base.__file__).read_text(encoding="utf-8")
    assert "asr_audit.organism" not in source
    assert ("organism", "asr_audit.organism.backend") in declared_entry_points(base.BACKEND_ENTRY_POINTS)
    assert {"organism-benchmark", "organism-control"} <= set(base.BACKENDS.names())
