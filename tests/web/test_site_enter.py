"""How to enter, from a real ``abluxx serve --http-port``, over HTTP and in Chromium (issue 46, item 6): the
referee's gRPC address from its setting, the rules as a page whose tables are tables, the .proto files and the
starter kits to download, as they are in the repository."""

from __future__ import annotations

import io
import re
import tarfile
import urllib.request
from pathlib import Path

import pytest

from referee.web.markdown import ROOT

from .site import get, start_site

SLOW = 60_000
ADDRESS = "referee.example.org:50443"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site-enter")
    (root / "data").mkdir()
    s = start_site(root / "data", root, extra_settings=f'[http]\ngrpc_address = "{ADDRESS}"\n')
    yield s
    s.stop()


def _bytes(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {}, e.read()


def test_the_page_gives_the_address_rules_protos_and_kits(site) -> None:
    status, _, page = get(site.url + "/how-to-enter")
    assert status == 200 and f'<code class="grpc-address">{ADDRESS}</code>' in page
    assert 'href="/rules"' in page
    links = re.findall(r'href="(/download/[^"]+)"', page)
    assert sorted(x.rsplit("/", 1)[1] for x in links if x.endswith(".proto")) == sorted(
        p.name for p in (ROOT / "proto/abluxxen/v1").glob("*.proto")
    )
    kits = {f"/download/abluxxen-{k}.tar.gz" for k in ("python", "node", "cpp")}
    assert {x for x in links if x.endswith(".tar.gz")} == kits
    assert "LEAD" not in page  # the lead's marked place is a template comment, not shown
    dial_in = page.split('<section id="dial-in">', 1)[1].split("</section>", 1)[0]
    assert "--connect HOST:PORT --token" in dial_in and "abluxx_bot.connect(" in dial_in


def test_a_proto_downloads_as_it_is_in_the_repository(site) -> None:
    status, headers, body = _bytes(site.url + "/download/proto/abluxxen/v1/bot.proto")
    assert status == 200 and body == (ROOT / "proto/abluxxen/v1/bot.proto").read_bytes()
    assert headers["content-disposition"] == 'attachment; filename="bot.proto"'
    for bad in ("/download/proto/abluxxen/v1/nope.proto", "/download/proto/abluxxen/v1/..%2F..%2F..%2Fpyproject.toml",
                "/download/abluxxen-ruby.tar.gz", "/download/pyproject.toml"):  # fmt: skip
        assert _bytes(site.url + bad)[0] == 404, bad


def test_a_kit_unpacks_to_the_repository_s_files_with_its_protos_beside_it(site) -> None:
    status, _, body = _bytes(site.url + "/download/abluxxen-node.tar.gz")
    assert status == 200
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        names = tar.getnames()
        got = tar.extractfile("abluxxen-node/clients/node/bot.js")
        assert got is not None and got.read() == (ROOT / "clients/node/bot.js").read_bytes()
    assert "abluxxen-node/proto/abluxxen/v1/bot.proto" in names
    assert not any("node_modules" in n or "__pycache__" in n for n in names)
    assert _bytes(site.url + "/download/abluxxen-node.tar.gz")[2] == body  # the same bytes each time


def test_the_rules_and_the_guide_render_their_tables_as_tables_in_chromium(site, page_for) -> None:
    page = page_for(1280, 900)
    page.goto(site.url + "/rules", timeout=SLOW)
    rules = (ROOT / "docs/rules.md").read_text()
    assert page.locator("article.doc table").count() == rules.count("\n| ---") + rules.count("\n|---")
    assert page.locator("article.doc table").count() > 0
    assert "| ---" not in page.inner_text("main") and "| --- |" not in page.inner_text("main")
    page.goto(site.url + "/how-to-enter", timeout=SLOW)
    attribute = page.locator("article.doc table th", has_text="attribute")
    assert attribute.count() >= 1  # the guide's attribute table, once raw `| attribute |` text
    assert "| attribute |" not in page.inner_text("main")
    assert page.locator(".grpc-address").inner_text() == ADDRESS
    page.click("a[href='/rules']")
    page.wait_for_url("**/rules")
    with page.expect_download() as download:
        page.goto(site.url + "/how-to-enter", timeout=SLOW)
        page.click("a[href='/download/proto/abluxxen/v1/game.proto']")
    path = download.value.path()
    assert Path(path).read_bytes() == (ROOT / "proto/abluxxen/v1/game.proto").read_bytes()
    assert page.errors == []


@pytest.mark.parametrize("bad", ["referee.example.org", "http://referee.example.org:50050", "a b:1", 50050, "x:123456"])
def test_a_bad_grpc_address_setting_is_refused_naming_the_key(bad) -> None:
    from referee.service.settings import ConfigError, parse

    with pytest.raises(ConfigError, match=r"http\.grpc_address: must be HOST:PORT"):
        parse({"http": {"grpc_address": bad}}, "server.toml", env={})
    for good in ("referee.example.org:50050", "[2001:db8::1]:443", "10.0.0.2:1"):
        assert parse({"http": {"grpc_address": good}}, "s", env={}).http.grpc_address == good
