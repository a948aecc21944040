"""Input sources: files, http(s) URLs (a real server on loopback) and cm:// references."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from aicr import sources
from aicr.errors import ClusterError, FileFormatError
from aicr.limits import Kind
from aicr.recipe.load import load_recipe

RECIPE = b"kind: RecipeResult\nvalidation: {conformance: {checks: [platform-health]}}\n"


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/recipe.yaml":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(RECIPE)
        else:
            self.send_response(404)
            self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_recipe_from_a_url(server: str) -> None:
    recipe = load_recipe(f"{server}/recipe.yaml")
    assert recipe.component_refs == [] and recipe.validation is not None


def test_http_errors_name_the_url(server: str) -> None:
    with pytest.raises(FileFormatError) as exc:
        load_recipe(f"{server}/missing.yaml")
    assert str(exc.value) == f"{server}/missing.yaml: cannot fetch: HTTP 404"


def test_unreachable_url_is_an_input_error() -> None:
    with pytest.raises(FileFormatError, match="cannot fetch"):
        sources.read("http://127.0.0.1:9/recipe.yaml", kind=Kind.RECIPE)


@pytest.mark.parametrize(
    ("ref", "parsed"),
    [("cm://ns/name", ("ns", "name", None)), ("cm://ns/name/recipe.yaml",
                                              ("ns", "name", "recipe.yaml"))],
)
def test_configmap_refs(ref: str, parsed: tuple[str, str, str | None]) -> None:
    assert sources.parse_configmap_ref(ref) == parsed


@pytest.mark.parametrize("ref", ["cm://ns", "cm://ns/", "cm://a/b/c/d", "cm:///name"])
def test_bad_configmap_refs(ref: str) -> None:
    with pytest.raises(FileFormatError, match="expected cm://namespace/name"):
        sources.parse_configmap_ref(ref)


def test_configmap_without_cluster_access_says_so() -> None:
    with pytest.raises(ClusterError, match="reading a ConfigMap needs cluster access"):
        sources.read("cm://ns/name", kind=Kind.RECIPE)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="is a directory"):
        sources.read(str(tmp_path), kind=Kind.RECIPE)
