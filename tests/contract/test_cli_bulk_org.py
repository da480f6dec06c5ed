"""data list|files|download, org and keys create --user/--email as a script uses them."""

from __future__ import annotations

import hashlib
import json

import pytest

from spyglass.cli import main
from spyglass.client.data import part_path
from spyglass.datagen import generate
from tests.conftest import backend_with
from tests.contract.test_data_api import settle


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("cli-data"), generate(600, seed=5)) as backend:
        settle(backend)
        yield backend


@pytest.fixture
def as_plan(loaded, monkeypatch):
    def use(plan: str = "enterprise") -> None:
        monkeypatch.setenv("SPYGLASS_URL", loaded.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", loaded.key(plan))

    return use


def test_data_list_and_files(as_plan, loaded, capsys):
    as_plan()
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in out] == [["daily", "daily"], ["monthly", "monthly"]]
    assert main(["data", "files", "monthly", "--json"]) == 0
    files = json.loads(capsys.readouterr().out)
    assert files and {"url", "timestamp", "sha1", "name", "size"} <= set(files[0])
    assert main(["data", "files", "monthly"]) == 0
    first = capsys.readouterr().out.splitlines()[0].split()
    assert first[0] == files[0]["name"] and first[-1] == files[0]["sha1"]


def test_data_download_checks_and_resumes(as_plan, loaded, capsys, tmp_path):
    as_plan()
    f = max(loaded.app.state.datasets.files("monthly"), key=lambda f: f.size)
    whole = loaded.app.state.datasets.path(f).read_bytes()
    assert main(["data", "download", "monthly", f.name, "-o", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    dest = tmp_path / f.name
    assert out.strip() == str(dest) and dest.read_bytes() == whole
    assert f"download {f.name}:" in err and "SHA-1 checked" in err

    again = tmp_path / "again.json.gz"
    part_path(again).write_bytes(whole[: len(whole) // 3])  # what an interrupted run left
    assert main(["data", "download", "monthly", f.name, "-o", str(again), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["sha1"] == hashlib.sha1(again.read_bytes()).hexdigest() == f.sha1
    assert "resumed at" in err and not part_path(again).exists()


def test_data_errors(as_plan, capsys, tmp_path):
    as_plan()
    assert main(["data", "download", "daily", "1999-01-01.json.gz", "-o", str(tmp_path)]) == 4
    assert "no file 1999-01-01.json.gz" in capsys.readouterr().err
    assert main(["data", "files", "hourly"]) == 4
    as_plan("member")
    assert main(["data", "list"]) == 3
    assert "enterprise" in capsys.readouterr().err


def test_keys_create_with_username_and_email(tmp_path, capsys):
    from spyglass.server.state.sqlite.accounts import Store

    assert main(["keys", "create", "--data", str(tmp_path), "--user", "ann", "--email", "ann@acme.test"]) == 0
    key = capsys.readouterr().out.strip()
    store = Store(tmp_path)
    account = store.account_for_key(key)
    assert (account.username, account.email, account.display_name) == ("ann", "ann@acme.test", "ann")
    assert main(["keys", "create", "--data", str(tmp_path), "--user", "bo", "--name", "Bo Berg"]) == 0
    assert store.account_for_key(capsys.readouterr().out.strip()).display_name == "Bo Berg"
    store.close()
    assert main(["keys", "create", "--data", str(tmp_path), "--name", "a\x1b[2J"]) == 2
    assert main(["keys", "create", "--data", str(tmp_path), "--user", "ann"]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["keys", "create", "--data", str(tmp_path), "--email", "not-an-address"]) == 2
    assert main(["keys", "create", "--data", str(tmp_path), "--user", "a b"]) == 2


def test_org_commands(as_plan, loaded, capsys):
    as_plan()
    _, kim = loaded.store.create_account("kim-cli", "free", email="kim@acme.test")
    assert main(["org", "add", "kim@acme.test"]) == 0
    assert capsys.readouterr().out.strip().startswith("invited kim@acme.test")
    with pytest.MonkeyPatch.context() as as_kim:
        as_kim.setenv("SPYGLASS_API_KEY", kim)
        assert main(["org", "invitations", "--json"]) == 0  # a list of models, printed as the API's JSON
        (pending,) = json.loads(capsys.readouterr().out)
        assert main(["org", "invitations"]) == 0
        org_id = capsys.readouterr().out.split()[0]
        assert pending["id"] == org_id
        assert main(["org", "accept", "--", org_id]) == 0  # "--": an id may start with "-"
        assert capsys.readouterr().out.strip() == f"joined {org_id}"
    assert main(["org"]) == 0
    out = capsys.readouterr().out
    assert "kim-cli" in out and "member" in out and "admin" in out
    assert main(["org", "--json"]) == 0
    assert [m["username"] for m in json.loads(capsys.readouterr().out)["members"]] == ["kim-cli"]
    assert main(["org", "remove", "kim-cli"]) == 0
    assert main(["org", "remove", "kim-cli"]) == 4
    assert "not a member" in capsys.readouterr().err
    assert main(["org", "add", "nobody-at-all"]) == 0  # the same answer: who exists is not told
    capsys.readouterr()
    for action in ("add", "remove"):  # checked before any call: bad input, exit 2
        assert main(["org", action, " "]) == 2
        assert f"org {action}: argument USER: a username or e-mail address is required" in capsys.readouterr().err
        assert main(["org", action, "../x"]) == 2  # (it was a 404 about paths)
        assert "'../x': no username or e-mail address holds a '/'" in capsys.readouterr().err
