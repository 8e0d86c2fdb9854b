"""Registry passwords at rest: zun-all's own key, private files, re-encryption, the status check.

A real zun-all process makes the state directory, the database and the key; the checks read the
files the way another local user would (modes) and the way an attacker with a copy would
(decrypting with the public default key).
"""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from e2e.support import ZunAll

from zun.common import crypt

BIN = Path(sys.executable).parent
ZUN_ALL, ZUN_STATUS, ZUN_DB_MANAGE = BIN / "zun-all", BIN / "zun-status", BIN / "zun-db-manage"

pytestmark = pytest.mark.docker


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _create_registry(server: ZunAll, password: str) -> str:
    body = json.dumps(
        {
            "registry": {
                "name": "reg",
                "domain": "registry.example.net:5000",
                "username": "u",
                "password": password,
            }
        }
    ).encode()
    req = urllib.request.Request(
        server.url + "/v1/registries",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "OpenStack-API-Version": "container 1.40"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        reply = json.loads(resp.read())
    return reply.get("uuid") or reply["registry"]["uuid"]


def _stored_tokens(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT uuid, password FROM registry").fetchall())


def _status(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ZUN_STATUS), "upgrade", "check", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def server(tmp_path: Path):
    zun = ZunAll(tmp_path)
    # An operator's state directory that existed before, open to everyone.
    zun.state_dir.mkdir(mode=0o755)
    zun.state_dir.chmod(0o755)
    zun.start()
    try:
        yield zun
    finally:
        zun.stop()


def test_zun_all_makes_a_private_key_and_private_files(server: ZunAll) -> None:
    state = server.state_dir
    key_file = state / "auth_encryption_key"
    assert _mode(state) == 0o700
    assert _mode(state / "zun.sqlite") == 0o600
    assert _mode(key_file) == 0o600
    key = key_file.read_text().strip()
    assert len(key) == 32 and key != crypt.DEFAULT_KEY

    uuid = _create_registry(server, "s3cret-pw")
    token = _stored_tokens(state / "zun.sqlite")[uuid]
    # Someone with a copy of the database and the public default key learns nothing...
    assert not crypt.opens_with(token, crypt.DEFAULT_KEY)
    # ...the key in the state directory opens it.
    assert crypt.decrypt(token, key) == "s3cret-pw"

    # The same key on the next start: the rows stay readable.
    server.stop()
    server.start()
    assert key_file.read_text().strip() == key
    assert _mode(state) == 0o700


def test_a_configured_key_wins_over_the_key_file(tmp_path: Path) -> None:
    zun = ZunAll(tmp_path)
    configured = "C" * 16 + "onfigured-key-16"
    zun.config.write_text(
        zun.config.read_text().replace(
            "[DEFAULT]\n", f"[DEFAULT]\nauth_encryption_key = {configured}\n", 1
        )
    )
    zun.start()
    try:
        uuid = _create_registry(zun, "pw-1")
    finally:
        zun.stop()
    token = _stored_tokens(zun.state_dir / "zun.sqlite")[uuid]
    assert crypt.decrypt(token, configured) == "pw-1"
    assert not (zun.state_dir / "auth_encryption_key").exists()


def test_rows_of_the_original_are_read_then_reencrypted(server: ZunAll) -> None:
    """A database the original Zun wrote (public default key) keeps working, and
    ``zun-db-manage reencrypt`` moves it to the state directory's key."""
    state = server.state_dir
    db = state / "zun.sqlite"
    uuid = _create_registry(server, "placeholder")
    server.stop()
    legacy = crypt.encrypt("legacy-pw", crypt.DEFAULT_KEY)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE registry SET password = ? WHERE uuid = ?", (legacy, uuid))

    status = _status("--state-dir", str(state))
    assert status.returncode == 1, status.stdout
    assert "still encrypted with the public default key" in status.stdout

    result = subprocess.run(
        [str(ZUN_DB_MANAGE), "reencrypt", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "1 registry password(s) re-encrypted" in result.stdout
    key = (state / "auth_encryption_key").read_text().strip()
    token = _stored_tokens(db)[uuid]
    assert not crypt.opens_with(token, crypt.DEFAULT_KEY)
    assert crypt.decrypt(token, key) == "legacy-pw"

    status = _status("--state-dir", str(state))
    assert status.returncode == 0, status.stdout
    assert "Registry password key: Success" in status.stdout


def test_rotation_to_a_new_key_with_the_old_key_file(server: ZunAll) -> None:
    state = server.state_dir
    uuid = _create_registry(server, "rotate-me")
    server.stop()
    key_file = state / "auth_encryption_key"
    old = state / "auth_encryption_key.old"
    key_file.rename(old)
    # Without the old key the row cannot be opened: reported, left as it was, exit 1.
    result = subprocess.run(
        [str(ZUN_DB_MANAGE), "reencrypt", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and uuid in result.stderr
    result = subprocess.run(
        [str(ZUN_DB_MANAGE), "reencrypt", "--state-dir", str(state), "--old-key-file", str(old)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    new_key = key_file.read_text().strip()
    assert new_key != old.read_text().strip()
    assert crypt.decrypt(_stored_tokens(state / "zun.sqlite")[uuid], new_key) == "rotate-me"


def test_status_warns_while_the_public_default_key_is_in_use(tmp_path: Path) -> None:
    for line in ("", f"auth_encryption_key = {crypt.DEFAULT_KEY}\n"):
        conf = tmp_path / "zun.conf"
        conf.write_text(
            f"[DEFAULT]\n{line}[database]\nconnection = sqlite:///{tmp_path / 'zun.sqlite'}\n"
        )
        subprocess.run(
            [str(ZUN_DB_MANAGE), "--config-file", str(conf), "upgrade"], check=True, timeout=120
        )
        result = _status("--config-file", str(conf))
        assert result.returncode == 1, result.stdout
        assert "Registry password key: Warning" in result.stdout
        assert "public default key" in result.stdout
