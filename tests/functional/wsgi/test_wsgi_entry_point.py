"""zun.wsgi.api:application, the module path uwsgi or mod_wsgi load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, webob
from zun.wsgi.api import application
headers = {"OpenStack-API-Version": "container 1.40"}
resp = webob.Request.blank("/v1", headers=headers).get_response(application)
denied = webob.Request.blank("/v1/containers").get_response(application)
print(json.dumps({"status": resp.status_int, "version": resp.headers["OpenStack-API-Version"],
                  "denied": denied.status_int}))
"""


def test_application_loads_the_config_files_it_is_given(tmp_path: Path) -> None:
    db = tmp_path / "zun.sqlite"
    subprocess.run(
        [
            str(Path(sys.executable).parent / "zun-db-manage"),
            "--config-file",
            str(_write_conf(tmp_path, db)),
            "upgrade",
        ],
        check=True,
        timeout=120,
    )
    env = dict(os.environ, ZUN_CONFIG_FILES=str(tmp_path / "zun.conf"))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    assert answer == {"status": 200, "version": "container 1.40", "denied": 401}


def _write_conf(tmp_path: Path, db: Path) -> Path:
    conf = tmp_path / "zun.conf"
    conf.write_text(
        "[DEFAULT]\ntransport_url = fake://\n"
        f"[database]\nconnection = sqlite:///{db}\n"
        "[api]\nauth_strategy = keystone\n"
        "[keystone_authtoken]\nwww_authenticate_uri = http://127.0.0.1:9/v3\n"
    )
    return conf
