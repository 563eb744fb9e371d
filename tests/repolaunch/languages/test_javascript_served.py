"""A version a lock file pins and the registry does not serve: read from every client's
404, pinned to the nearest served version through the package manager's override field,
and the committed package.json and lock files put back after the install."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
from pathlib import Path

import pytest

from envs.models import Language
from repolaunch.diagnose import diagnose
from repolaunch.languages import Plan
from repolaunch.languages import javascript_served as served

YARN_BERRY = (
    "➤ YN0035: │ babel-plugin-polyfill-es-shims@npm:0.9.0: The remote server failed to "
    "provide the requested resource\n"
    "➤ YN0035: │   Response Code: 404 (Not Found)\n"
    "➤ YN0035: │   Request Method: GET\n"
    "➤ YN0035: │   Request URL: https://registry.npmjs.org/babel-plugin-polyfill-es-shims/-/"
    "babel-plugin-polyfill-es-shims-0.9.0.tgz\n"
    "➤ YN0000: Failed with errors in 43s 181ms\n")
NPM = "npm ERR! 404 Not Found - GET https://registry.npmjs.org/@babel/core/-/core-7.0.1.tgz\n"
YARN_1 = ('error An unexpected error occurred: "https://registry.yarnpkg.com/left-pad/-/'
          'left-pad-1.1.0.tgz: Request failed \\"404 Not Found\\"".\n')
PNPM = (" ERR_PNPM_FETCH_404  GET https://registry.npmjs.org/is-odd/-/is-odd-3.0.0.tgz: "
        "Not Found - 404\n")
INSTALL = "node .yarn/releases/yarn-3.5.0.cjs install"


def _plan(language: Language = Language.JAVASCRIPT) -> Plan:
    return Plan(language=language, image_family="node", build_system="yarn",
                test_framework="jest", setup_steps=(INSTALL,),
                test_command="npm test", report_format="jest")


def test_every_clients_404_names_the_package_and_version():
    assert served.unserved(YARN_BERRY + NPM + YARN_1 + PNPM) == [
        ("https://registry.npmjs.org", "babel-plugin-polyfill-es-shims", "0.9.0"),
        ("https://registry.npmjs.org", "@babel/core", "7.0.1"),
        ("https://registry.yarnpkg.com", "left-pad", "1.1.0"),
        ("https://registry.npmjs.org", "is-odd", "3.0.0"),
    ]
    assert served.unserved("npm ERR! 404 Not Found - GET https://registry.npmjs.org/x") == []


def test_the_install_step_is_rerun_pinned_and_the_committed_files_put_back():
    (action,) = diagnose(YARN_BERRY, plan=_plan(), phase="setup", step=INSTALL)
    assert action.kind == "replace" and "babel-plugin-polyfill-es-shims 0.9.0" in action.reason
    assert f"\n{INSTALL}\n)\nrc=$?;" in action.value
    assert "git checkout -q -- package.json" in action.value
    assert "git checkout -q -- yarn.lock" in action.value
    # a second 404 in the pinned step keeps the first pin and adds the new one
    (again,) = diagnose(NPM, plan=_plan(), phase="setup", step=action.value)
    assert "babel-plugin-polyfill-es-shims" in again.value and "@babel/core" in again.value
    assert again.value.count(INSTALL) == 1
    assert diagnose(YARN_BERRY, plan=_plan(), phase="setup", step=action.value) == []
    # not a JavaScript project: not this rule's business
    assert diagnose(YARN_BERRY, plan=_plan(Language.PYTHON), phase="setup", step=INSTALL) == []


@pytest.fixture()
def registry():
    """A registry on localhost that serves two packages' version lists."""
    shims = ["0.7.0", "0.7.1", "0.10.0", "0.10.5", "1.0.0", "0.11.0-rc.1"]
    docs = {"/babel-plugin-polyfill-es-shims": {"versions": {v: {} for v in shims}},
            "/@babel/core": {"versions": {v: {} for v in ["6.26.3", "7.0.0", "7.1.0"]}}}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            doc = docs.get(self.path.replace("%2f", "/").replace("%2F", "/"))
            body = json.dumps(doc).encode() if doc else b"{}"
            self.send_response(200 if doc else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("lock,field", [("yarn.lock", ("resolutions",)),
                                        ("package-lock.json", ("overrides",)),
                                        ("pnpm-lock.yaml", ("pnpm", "overrides"))])
def test_the_nearest_served_version_goes_into_the_managers_override_field(
        tmp_path: Path, registry: str, lock: str, field: tuple[str, ...], monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    (tmp_path / "package.json").write_text('{"name": "app", "version": "1.0.0"}\n')
    (tmp_path / lock).write_text("# locked\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "app"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    missing = [(registry, "babel-plugin-polyfill-es-shims", "0.9.0"),
               (registry, "@babel/core", "7.0.1")]
    # the "install" copies what it was given, then fails: the files still go back
    step = "cp package.json seen.json; exit 7"
    run = subprocess.run(["bash", "-c", served.pin_and_install(step, missing)], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 7, run.stderr
    assert "babel-plugin-polyfill-es-shims 0.9.0 is not served; pinned to 0.10.0" in run.stdout
    seen = json.loads((tmp_path / "seen.json").read_text())
    for part in field:
        seen = seen[part]
    # the lowest above in the same major (0.10.0, not 1.0.0, never a prerelease); for
    # @babel/core 7.0.1 the lowest above is 7.1.0
    assert seen == {"babel-plugin-polyfill-es-shims": "0.10.0", "@babel/core": "7.1.0"}
    assert (tmp_path / "package.json").read_text() == '{"name": "app", "version": "1.0.0"}\n'
    assert "pnpm" not in (tmp_path / "package.json").read_text()
