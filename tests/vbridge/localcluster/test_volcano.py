"""Finding what tools/build-volcano.sh built, and reading Volcano's CRDs from it."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from bridge import errors
from vbridge.localcluster import volcano


def test_find_without_a_build_says_how_to_build(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VBRIDGE_BIN_CACHE", str(tmp_path))  # an empty cache: nothing built there
    with pytest.raises(errors.BinaryMissingError, match=r"run tools/build-volcano\.sh"):
        volcano.find()
    assert not list(tmp_path.iterdir())  # VBRIDGE_NO_BUILD: it built nothing


def test_crds_reads_every_document_of_the_build(tmp_path: pathlib.Path) -> None:
    (tmp_path / "crds").mkdir()
    docs = [{"kind": "CustomResourceDefinition", "metadata": {"name": f"{n}.scheduling.volcano.sh"}} for n in "ab"]
    (tmp_path / "crds" / "one.yaml").write_text(yaml.safe_dump_all([docs[0], None]))
    (tmp_path / "crds" / "two.yaml").write_text(yaml.safe_dump(docs[1]))
    (tmp_path / "crds" / "notes.txt").write_text("not a CRD")
    assert volcano.crds(tmp_path) == docs
