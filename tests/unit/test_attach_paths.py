"""/attach's paths: split as a shell would, completed on Tab, a pasted path recognised."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import paths


def test_split_paths_takes_quotes_backslashes_and_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    argument = '\'my report.pdf\' notes\\ 2.txt "a \\"b\\".md" ~/x.log plain'
    assert paths.split_paths(argument) == [
        "my report.pdf",
        "notes 2.txt",
        'a "b".md',
        str(tmp_path / "x.log"),
        "plain",
    ]


def test_an_open_quote_is_one_sentence() -> None:
    with pytest.raises(ValueError, match="never closed"):
        paths.split_paths("'my report.pdf")


def test_escape_reads_back_whole() -> None:
    name = 'it\'s a "file" with\\spaces.txt'
    assert [t.value for t in paths.tokens(paths.escape(name))] == [name]


def test_tab_completes_a_file_then_a_folder_then_lists_choices(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my docs").mkdir()
    (tmp_path / "my docs" / "report one.pdf").write_bytes(b"%PDF")
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "note-2.txt").write_text("hi")
    (tmp_path / ".hidden").write_text("hi")

    assert paths.complete("my") == ("my\\ docs/", [])
    assert paths.complete("my\\ docs/re") == ("my\\ docs/report\\ one.pdf ", [])
    assert paths.complete("'my docs/re") == ("my\\ docs/report\\ one.pdf ", [])
    assert paths.complete("a.txt no") == ("a.txt note", ["note-2.txt", "notes.txt"])
    assert paths.complete("zzz") == ("zzz", [])
    assert ".hidden" not in paths.complete("")[1]


def test_tab_completes_from_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "only.txt").write_text("hi")
    assert paths.complete("~/on") == ("~/only.txt ", [])


def test_a_pasted_path_or_file_url_names_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    report = tmp_path / "my report.txt"
    report.write_text("hi")
    assert paths.pasted_path(str(report).replace(" ", "\\ ")) == report
    assert paths.pasted_path(f"'{report}'  ") == report
    assert paths.pasted_path("~/my\\ report.txt") == report
    assert paths.pasted_path(report.as_uri()) == report
    assert paths.pasted_path("file://elsewhere" + str(report)) is None
    assert paths.pasted_path(str(tmp_path)) is None  # a folder
    assert paths.pasted_path(f"read {report}") is None  # words around it
    assert paths.pasted_path("/new") is None
    assert paths.pasted_path(str(report) + "\nand more") is None
