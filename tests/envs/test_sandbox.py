"""The hardened sandbox against a real engine: isolation, limits, I/O, patches, snapshots."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from docker.errors import NotFound

from envs.models import Limits
from envs.sandbox import (
    LABEL,
    DiffError,
    Sandbox,
    SandboxDied,
    SandboxError,
    Snapshot,
    gc,
)

pytestmark = pytest.mark.docker

OWNER = f"{socket.gethostname()}:{os.getpid()}"
SMALL = Limits(memory="256m", pids=128, cpus=1.0, timeout=60, output_bytes=1 << 20)
GIT_ID = "git -c user.email=t@example.com -c user.name=t"
# No test here asserts on elapsed time. A test whose exec would wait for `sleep 1000` if the
# deadline or the death were missed has this guard (pytest-timeout), against the hang only.
HANG_S = 180


@pytest.fixture(scope="module", autouse=True)
def _no_leftovers(docker_engine):
    """Module-level check: every sandbox and snapshot these tests made is gone at the end."""
    yield
    api = docker_engine.api
    mine = {"label": [f"{LABEL}=1", f"envfactory.owner={OWNER}"]}
    containers = api.containers(all=True, filters=mine)
    snapshots = api.images(filters=mine)
    for c in containers:
        api.remove_container(c["Id"], force=True)
    for i in snapshots:
        api.remove_image(i["Id"], force=True)
    assert not containers, f"sandboxes left behind: {[c['Id'][:12] for c in containers]}"
    assert not snapshots, f"snapshot images left behind: {[i['Id'][:19] for i in snapshots]}"


@pytest.fixture(scope="module")
def image(base_image) -> str:
    return base_image


@pytest.fixture(scope="module")
def sb(image):
    """One shared sandbox for the tests that do not break it."""
    with Sandbox.start(image, limits=SMALL) as s:
        yield s


@pytest.fixture()
def fresh(image):
    """A sandbox of one's own, for tests that kill, bomb or replace it."""
    made: list[Sandbox] = []

    def make(**kw) -> Sandbox:
        kw.setdefault("limits", SMALL)
        s = Sandbox.start(image, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def _repo(sb: Sandbox, name: str, files: dict[str, str]) -> str:
    """A committed git repository in the sandbox."""
    path = f"/work/{name}"
    sb.put_files({f"{path}/{k}": v for k, v in files.items()})
    r = sb.exec(f"git init -q . && git add -A && {GIT_ID} commit -qm init", workdir=path)
    assert r.exit_code == 0, r.output
    return path


# ------------------------------------------------------------------ hardening


def test_hardened_config(sb, docker_engine):
    attrs = docker_engine.api.inspect_container(sb.id)
    hc = attrs["HostConfig"]
    assert hc["NetworkMode"] == "none"
    assert hc["CapDrop"] == ["ALL"]
    assert hc["SecurityOpt"] == ["no-new-privileges"]
    assert hc["Init"] is True
    assert hc["PidsLimit"] == 128
    assert hc["Memory"] == hc["MemorySwap"] == 256 * 1024 * 1024
    assert hc["NanoCpus"] == 10**9
    labels = attrs["Config"]["Labels"]
    assert labels[LABEL] == "1" and labels["envfactory.owner"] == OWNER
    assert abs(int(labels["envfactory.created"]) - time.time()) < 300
    assert attrs["Config"]["Cmd"] == ["sleep", "infinity"]


def test_missing_image_is_a_clear_error(docker_engine):
    with pytest.raises(SandboxError, match="not present locally"):
        Sandbox.start("envfactory-test/no-such-image:nope")


def test_caps_dropped_and_no_new_privileges(sb):
    r = sb.exec("grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status")
    fields = dict(line.split(":\t") for line in r.stdout.strip().splitlines())
    assert fields == {"CapEff": "0000000000000000", "CapBnd": "0000000000000000",
                      "NoNewPrivs": "1"}


def test_no_network(sb):
    tcp = sb.exec(["python3", "-c", "import socket; s = socket.socket(); s.settimeout(3); "
                   "s.connect(('1.1.1.1', 53))"], timeout=20)
    assert tcp.exit_code != 0 and "Network is unreachable" in tcp.stderr
    dns = sb.exec(["python3", "-c", "import socket; socket.getaddrinfo('deb.debian.org', 80)"],
                  timeout=20)
    assert dns.exit_code != 0 and "gaierror" in dns.stderr
    assert sb.exec("ls /sys/class/net").stdout.split() == ["lo"]


@pytest.mark.network
@pytest.mark.skip(reason="tests stay offline; network=True only attaches the default bridge")
def test_network_opt_in_resolves(fresh):
    s = fresh(network=True)
    assert s.exec(["python3", "-c", "import socket; socket.getaddrinfo('deb.debian.org', 80)"]).ok


@pytest.mark.timeout(HANG_S)
def test_fork_bomb_is_contained(fresh):
    s = fresh(limits=Limits(memory="256m", pids=64, cpus=1.0))
    r = s.exec(["bash", "-c", ":(){ :|:& };:"], timeout=10)  # it returns: the exec ends
    assert "Resource temporarily unavailable" in r.stderr  # the pids limit bit
    # Either the bomb's first shell was still retrying forks at the deadline (everything
    # of that exec was killed), or it returned and its orphans live on, as any background
    # process does, until kill_all.
    s.kill_all()
    assert s.exec("echo ok", timeout=10).stdout == "ok\n"
    assert s.alive()


def test_kill_all_keeps_the_sandbox(sb):
    assert sb.exec("sleep 300 & sleep 301 >/dev/null 2>&1 &").exit_code == 0
    assert sb.kill_all() >= 2
    assert sb.exec("pgrep -f 'sleep 30[01]'").stdout == ""
    assert sb.alive()


def test_kill_all_reaches_a_daemon_that_cleared_its_environment(sb):
    # `env -i` drops the marker every exec carries; setsid leaves the exec's session.
    sb.exec("setsid env -i sh -c 'sleep 302' >/dev/null 2>&1 < /dev/null &")
    assert sb.exec("pgrep -f 'sleep 30[2]'").stdout.strip()
    assert sb.kill_all() >= 1
    assert sb.exec("pgrep -f 'sleep 30[2]'").stdout == ""
    assert sb.exec("echo still here").stdout == "still here\n" and sb.alive()


def test_a_freeze_left_behind_is_thawed_before_the_next_exec(sb):
    # The engine can finish a pause after kill_all stopped waiting for it.
    sb._client.api.pause(sb.id)
    assert sb.exec("echo ok").stdout == "ok\n"
    assert not sb._client.api.inspect_container(sb.id)["State"]["Paused"]


def test_oom_is_reported(fresh):
    s = fresh(limits=Limits(memory="64m", pids=64, cpus=1.0))
    r = s.exec(["python3", "-c", "b = bytearray(200 * 1024 * 1024); print(len(b))"], timeout=30)
    assert r.exit_code == 137 and r.oom_killed and not r.timed_out
    assert s.alive()
    assert not s.exec("true").oom_killed  # the counter is tracked, not re-reported


# ------------------------------------------------------------------ exec


def test_exec_basics(sb):
    r = sb.exec("echo out; echo err >&2; exit 3")
    assert (r.exit_code, r.stdout, r.stderr, r.timed_out) == (3, "out\n", "err\n", False)
    r = sb.exec(["sh", "-c", 'echo "$FOO $(pwd) $(id -u)"'], env={"FOO": "bar"},
                workdir="/tmp", user="nobody")
    assert r.stdout == "bar /tmp 65534\n"


@pytest.mark.timeout(HANG_S)
def test_timeout_ends_the_exec(sb):
    r = sb.exec("sleep 1000", timeout=2)
    assert r.timed_out and not r.ok


def test_exit_124_is_not_a_timeout(sb):
    r = sb.exec("exit 124", timeout=30)
    assert r.exit_code == 124 and not r.timed_out


@pytest.mark.timeout(HANG_S)
def test_ignored_sigterm_still_times_out(sb):
    r = sb.exec("trap '' TERM; sleep 1000", timeout=1)
    assert r.timed_out


@pytest.mark.skipif(os.geteuid() != 0, reason="the host-side kill needs root")
@pytest.mark.timeout(HANG_S)
def test_escaped_process_is_killed_from_the_host(sb):
    r = sb.exec("setsid sleep 1001 & setsid sh -c 'exec sleep 1002' & wait", timeout=2)
    assert r.timed_out
    assert sb.exec("pgrep -f 'sleep 100[12]'").stdout == ""


def test_background_child_does_not_hold_exec(fresh):
    s = fresh()  # its own: the engine stalls the next exec after this one (module docstring)
    # The child outlives the exec's timeout: an exec that waited for it would time out.
    r = s.exec("sleep 1000 & echo started", timeout=60)
    assert r.stdout == "started\n" and r.exit_code == 0 and not r.timed_out


def test_waits_for_a_process_that_closed_its_output(sb):
    r = sb.exec("exec >&- 2>&-; sleep 1; exit 5", timeout=30)
    assert r.exit_code == 5 and r.duration >= 1


@pytest.mark.timeout(HANG_S)
def test_image_without_timeout_binary(fresh):
    s = fresh()
    assert s.exec("rm /usr/bin/timeout").exit_code == 0
    r = s.exec("sleep 1000", timeout=2)  # the host deadline alone enforces it
    assert r.timed_out
    assert s.exec("echo still").stdout == "still\n"


def test_output_is_capped_head_and_tail(sb):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = sb.exec("head -c 200000000 /dev/zero | tr '\\0' a; echo END", timeout=120)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    cap = SMALL.output_bytes
    assert r.exit_code == 0 and r.stdout_truncated and not r.stderr_truncated
    m = re.search(r"\n\[\.\.\. envfactory: (\d+) bytes truncated \.\.\.\]\n", r.stdout)
    assert m is not None
    assert int(m.group(1)) == 200_000_004 - cap
    assert len(r.stdout) <= cap + len(m.group(0))
    assert r.stdout.startswith("aaaa") and r.stdout.endswith("aaaaEND\n")
    assert grown_mb < 100, f"the reader grew by {grown_mb:.0f} MB"


def test_invalid_utf8_is_replaced(sb):
    r = sb.exec(r"printf '\377\376 abc'")
    assert r.stdout == "\ufffd\ufffd abc"


def test_exec_argv_is_not_reparsed(sb):
    r = sb.exec(["printf", "%s|", "a b", "$HOME", "-n"])
    assert r.stdout == "a b|$HOME|-n|"


# ------------------------------------------------------------------ death, close, gc


def test_killed_container_raises_sandbox_died(fresh, docker_engine):
    s = fresh()
    docker_engine.api.kill(s.id)
    with pytest.raises(SandboxDied, match="died"):
        s.exec("true")
    assert not s.alive()


@pytest.mark.timeout(HANG_S)
def test_container_killed_during_exec(fresh, docker_engine):
    s = fresh()
    threading.Timer(1.0, docker_engine.api.kill, args=(s.id,)).start()
    with pytest.raises(SandboxDied):  # at the death, not at the exec's far-off deadline
        s.exec("sleep 1000", timeout=900)


def test_close_is_idempotent(image, docker_engine):
    s = Sandbox.start(image, limits=SMALL)
    cid = s.id
    assert s.alive()
    s.close()
    s.close()
    assert not s.alive()
    with pytest.raises(NotFound):
        docker_engine.api.inspect_container(cid)
    with pytest.raises(SandboxError, match="closed"):
        s.exec("true")


def test_context_manager_closes(image, docker_engine):
    with Sandbox.start(image, limits=SMALL) as s:
        cid = s.id
    with pytest.raises(NotFound):
        docker_engine.api.inspect_container(cid)


def _in_child(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_gc_removes_leftovers_of_dead_owner(image, docker_engine):
    # A process that starts a sandbox, snapshots it and dies without any cleanup running.
    cid, snap = _in_child(f"""
        import os
        from envs.sandbox import Sandbox
        s = Sandbox.start({image!r})
        print(s.id, s.snapshot().ref, flush=True)
        os._exit(0)
    """)
    assert docker_engine.api.inspect_container(cid)["State"]["Running"]
    removed = gc()
    assert cid in removed and snap in removed
    with pytest.raises(NotFound):
        docker_engine.api.inspect_container(cid)
    with pytest.raises(NotFound):
        docker_engine.api.inspect_image(snap)


def test_exit_without_close_cleans_up(image, docker_engine):
    (cid,) = _in_child(f"""
        from envs.sandbox import Sandbox
        s = Sandbox.start({image!r})
        print(s.id, flush=True)
    """)
    with pytest.raises(NotFound):
        docker_engine.api.inspect_container(cid)


def test_gc_keeps_live_owners(sb):
    assert sb.id not in gc()
    assert sb.alive()


def test_gc_mine_takes_this_process_containers_even_unheld(image, sb, docker_engine):
    """An interrupt between the engine creating a container and a Sandbox holding it leaves
    a container nobody closes; an interrupted command sweeps its own on the way out, and
    only its own (another live process's sandbox stays)."""
    from envs.sandbox import KIND_LABEL, LABEL, OWNER_LABEL
    api = docker_engine.api
    other = api.create_container(image, command=["sleep", "60"], entrypoint=[""],
                                 labels={LABEL: "1", OWNER_LABEL: "elsewhere:1",
                                         KIND_LABEL: "container"})["Id"]
    try:
        held, stray, *removed = _in_child(f"""
            from envs import engine
            from envs.sandbox import KIND_LABEL, LABEL, OWNER_LABEL, Sandbox, _owner, gc
            held = Sandbox.start({image!r})
            stray = engine.client().api.create_container(
                {image!r}, command=["sleep", "60"], entrypoint=[""],
                labels={{LABEL: "1", OWNER_LABEL: _owner(), KIND_LABEL: "container"}})["Id"]
            print(held.id, stray, *gc(mine=True), flush=True)
        """)
        assert held in removed and stray in removed
        assert other not in removed and sb.id not in removed
        assert sb.alive()
        api.inspect_container(other)  # another owner's container is still there
    finally:
        with contextlib.suppress(NotFound):
            api.remove_container(other, force=True)


# ------------------------------------------------------------------ files


def test_put_get_round_trip(sb, tmp_path):
    blob = bytes(range(256)) * 64
    sb.put_file("/data/x/y/z.bin", blob, mode=0o755)
    assert sb.get_file("/data/x/y/z.bin") == blob
    assert sb.exec("stat -c %a /data/x/y/z.bin").stdout == "755\n"
    sb.put_file("rel.txt", "héllo")  # relative to the workdir, /
    assert sb.get_file("/rel.txt") == "héllo".encode()
    sb.put_files({"/data/m/a.txt": "A", "/data/m/b/c.txt": b"C"})
    assert sb.get_file("/data/m/b/c.txt") == b"C"
    assert sb.exec("stat -c %a /tmp").stdout == "1777\n"  # parents were not clobbered

    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "f.bin").write_bytes(b"\x00\xff" * 10)
    (tmp_path / "top.txt").write_text("top")
    sb.put_dir(tmp_path, "/data/tree")
    assert sb.get_file("/data/tree/d/e/f.bin") == b"\x00\xff" * 10
    assert sb.get_file("/data/tree/top.txt") == b"top"
    assert sb.exec("stat -c %u /data/tree/top.txt").stdout == "0\n"
    sb.exec("ln -sf /data/tree/top.txt /data/link")
    assert sb.get_file("/data/link") == b"top"


def test_get_file_errors(sb):
    with pytest.raises(FileNotFoundError, match="/nope/missing"):
        sb.get_file("/nope/missing")
    with pytest.raises(SandboxError, match="directory"):
        sb.get_file("/etc")
    sb.put_file("/data/big.txt", "x" * 1000)
    with pytest.raises(SandboxError, match="max_bytes"):
        sb.get_file("/data/big.txt", max_bytes=100)
    assert len(sb.get_file("/data/big.txt", max_bytes=1000)) == 1000


# ------------------------------------------------------------------ patches and diffs

SRC = "".join(f"line {i}\n" for i in range(1, 11))


def test_good_patch_applies_with_git(sb):
    wd = _repo(sb, "good", {"src/a.py": SRC})
    patch = ("diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n"
             "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n")
    res = sb.apply_patch(patch, workdir=wd)
    assert res.applied and res.method == "git apply", res
    assert b"line three\n" in sb.get_file(f"{wd}/src/a.py")


def test_fuzzy_patch_applies_with_patch(sb):
    wd = _repo(sb, "fuzzy", {"src/a.py": SRC.replace("line 2\n", "line 2 (edited)\n")})
    patch = ("--- a/src/a.py\n+++ b/src/a.py\n"
             "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n")
    res = sb.apply_patch(patch, workdir=wd)
    assert res.applied and res.method == "patch --fuzz", res
    assert sb.get_file(f"{wd}/src/a.py").decode().count("line three") == 1
    assert "orig" not in sb.exec("ls src", workdir=wd).stdout


def test_bad_patch_is_refused_and_leaves_nothing(sb):
    wd = _repo(sb, "bad", {"src/a.py": SRC})
    patch = ("--- a/src/a.py\n+++ b/src/a.py\n"
             "@@ -3,3 +3,3 @@\n nothing\n-like\n+this\n here\n")
    res = sb.apply_patch(patch, workdir=wd)
    assert not res.applied and res.method is None, res
    assert res.reason.startswith("patch does not apply:")
    assert "src/a.py" in res.reason and "git apply" in res.reason and "patch:" in res.reason
    assert sb.exec("git status --porcelain", workdir=wd).stdout == ""


def test_partial_patch_with_reject(sb):
    wd = _repo(sb, "partial", {"a.txt": SRC, "b.txt": SRC})
    patch = ("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-line 1\n+line one\n line 2\n"
             "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-no such\n+thing\n line 2\n")
    assert not sb.apply_patch(patch, workdir=wd).applied
    res = sb.apply_patch(patch, workdir=wd, partial=True)
    assert res.applied and res.method == "git apply --reject" and "rejected" in res.reason
    assert sb.get_file(f"{wd}/a.txt").startswith(b"line one\n")


def test_empty_patch_and_plain_directory(sb):
    assert sb.apply_patch("  \n").method == "empty"
    sb.put_file("/work/plain/f.txt", "one\ntwo\n")
    res = sb.apply_patch("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
                         workdir="/work/plain")
    assert res.applied and res.method == "git apply", res
    assert sb.get_file("/work/plain/f.txt") == b"one\n2\n"


def test_diff_includes_untracked_and_keeps_index(sb):
    wd = _repo(sb, "diffme", {"a.txt": "a\n", "keep.txt": "k\n"})
    sb.exec("echo b >> a.txt && echo new > new.txt && printf '\\0\\1' > bin.dat", workdir=wd)
    before = sb.exec("git status --porcelain && md5sum .git/index", workdir=wd).stdout
    d = sb.diff(workdir=wd)
    assert "diff --git a/a.txt b/a.txt" in d and "+b" in d
    assert "diff --git a/new.txt b/new.txt" in d and "+new" in d
    assert "GIT binary patch" in d
    assert "keep.txt" not in d
    assert sb.exec("git status --porcelain && md5sum .git/index", workdir=wd).stdout == before
    # The diff is a real patch: it re-applies on a clean checkout.
    sb.exec("git stash -u -q", workdir=wd)
    assert sb.apply_patch(d, workdir=wd).method == "git apply"
    assert sb.diff(workdir=wd) == d


def test_an_edit_in_the_same_second_as_the_index_is_in_the_diff(sb):
    """Git tells a same-size edit made in the second the index was written apart from no
    edit only by the index file's own mtime ("racy git"), which the diff's copy of the index
    must keep (it once did not, and a quick edit diffed empty about one time in two). The
    second is pinned here with touch; ctime, which touch cannot pin, is left out."""
    wd = "/work/racy"
    t = "@1700000000"
    sb.exec(f"mkdir -p {wd} && cd {wd} && git init -q && git config core.trustctime false && "
            f"echo x > code && touch -d {t} code && git add . && {GIT_ID} commit -qm c && "
            f"touch -d {t} .git/index && echo y > code && touch -d {t} code")
    assert "+y" in sb.diff(workdir=wd)


def test_a_clean_tree_diffs_empty_and_lost_output_is_never_an_empty_diff(sb, monkeypatch):
    wd = _repo(sb, "clean", {"a.txt": "a\n"})
    assert sb.diff(workdir=wd) == ""
    # Output that got lost on its way from the engine (it once did, under load, and an
    # agent's solved task graded as unchanged) is an infrastructure error.
    real = sb._sh

    def lossy(script, what, **kw):
        res = real(script, what, **kw)
        return res.model_copy(update={"stdout": ""})

    monkeypatch.setattr(sb, "_sh", lossy)
    with pytest.raises(SandboxError, match="incomplete") as err:
        sb.diff(workdir=wd)
    assert not isinstance(err.value, DiffError)  # not the agent's failure


def test_output_written_late_is_read_whole(sb):
    # The exec ends right after printing: its output must all arrive, however late the
    # engine's stream delivers it relative to the exit.
    for _ in range(5):
        res = sb.exec("sleep 0.7; head -c 300000 /dev/zero | tr '\\0' x; echo; echo END")
        assert res.exit_code == 0 and res.stdout.endswith("END\n")
        assert len(res.stdout) == 300005


def test_diff_errors_outside_git(sb):
    with pytest.raises(SandboxError, match="not a git repository"):
        sb.diff(workdir="/tmp")


# ------------------------------------------------------------------ snapshots


def test_fs_snapshot_restore(sb):
    sb.put_files({"/work/snap/a.txt": "a", "/work/snap/sub/b.txt": "b"})
    snap = sb.snapshot(["/work/snap", "/work/not-yet"])
    assert snap.kind == "fs" and snap.paths == ("/work/snap", "/work/not-yet")
    sb.exec("rm /work/snap/a.txt; echo x > /work/snap/sub/b.txt; echo n > /work/snap/new;"
            " mkdir -p /work/not-yet")
    sb.restore(snap)
    listing = sb.exec("cd /work/snap && find . | sort && cat sub/b.txt").stdout
    assert listing == ".\n./a.txt\n./sub\n./sub/b.txt\nb"
    assert sb.exec("test -e /work/not-yet").exit_code == 1
    with pytest.raises(SandboxError):
        sb.snapshot(["/"])


def test_image_snapshot_restore_and_cleanup(fresh, docker_engine):
    s = fresh(workdir="/work", env={"MARK": "1"})
    s.put_file("state.txt", "before")
    snap = s.snapshot()
    assert snap.kind == "image"
    labels = docker_engine.api.inspect_image(snap.ref)["Config"]["Labels"]
    assert labels[LABEL] == "1" and labels["envfactory.kind"] == "snapshot"
    s.put_file("state.txt", "after")
    old = s.id
    s.restore(snap)
    assert s.id != old
    with pytest.raises(NotFound):
        docker_engine.api.inspect_container(old)
    assert s.get_file("state.txt") == b"before"
    r = s.exec('echo "$MARK $(pwd)"; grep CapEff /proc/self/status')
    assert r.stdout == "1 /work\nCapEff:\t0000000000000000\n"
    hc = docker_engine.api.inspect_container(s.id)["HostConfig"]
    assert hc["NetworkMode"] == "none" and hc["Init"] is True
    s.restore(snap)  # restorable more than once
    assert s.get_file("state.txt") == b"before"
    s.close()
    with pytest.raises(NotFound):
        docker_engine.api.inspect_image(snap.ref)


def test_restore_rejects_unknown_kind(sb):
    with pytest.raises(SandboxError, match="kind"):
        sb.restore(Snapshot("zip", "x", ()))
