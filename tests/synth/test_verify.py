"""Stage 3 for real: every family passes all gates; planted bad tasks fail the right one."""

from __future__ import annotations

import pytest

from envs.models import TerminalTask
from synth.families import all_families
from synth.families._kit import CHECK_PREAMBLE
from synth.implement import RUNNER
from synth.spec import Gate
from synth.verify import DedupIndex, generic_mutants, hermetic_problems, verify

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("name", list(all_families()))
def test_every_family_passes_all_gates(verified_families, name):
    task, outcome = verified_families[name]
    assert outcome.failed_gate is None, f"{name}: {outcome.detail}"
    gates = [r.gate for r in task.verification]
    assert gates[:4] == ["duplicate", "hermetic", "build", "isolation"] or \
        gates[:3] == ["hermetic", "build", "isolation"]
    assert "nop" in gates
    assert sum(g.startswith("oracle#") for g in gates) >= 3
    assert sum(g.startswith("mutant:") for g in gates) >= 2
    assert all(r.passed for r in task.verification)
    assert task.image and task.image.startswith("envfactory/synth-")


def _bad(task: TerminalTask, **update) -> TerminalTask:
    return task.model_copy(update={"task_id": task.task_id + "-bad", **update})


def test_tests_that_pass_without_work_fail_the_nop_gate(small_task):
    check = CHECK_PREAMBLE + "def test_anything():\n    assert Path('/app').is_dir()\n" + RUNNER
    bad = _bad(small_task, tests={**small_task.tests, "test_outputs.py": check})
    _, o = verify(bad)
    assert o.failed_gate == Gate.NOP, o.detail


def test_an_oracle_that_fails_fails_the_oracle_gate(small_task):
    _, o = verify(_bad(small_task, solution="#!/bin/bash\necho 'wrong' > /dev/null\n"))
    assert o.failed_gate == Gate.ORACLE, o.detail


def test_a_test_that_installs_from_the_network_fails_the_hermetic_gate(small_task):
    test_sh = "#!/bin/bash\npip install pytest\ncurl -sf https://example.com\n" + \
        small_task.tests["test.sh"]
    bad = _bad(small_task, tests={**small_task.tests, "test.sh": test_sh})
    assert hermetic_problems(bad)
    _, o = verify(bad)
    assert o.failed_gate == Gate.HERMETIC and not any(r.gate == "build" for r in o.runs)


def test_a_test_that_reaches_the_network_at_run_time_fails_the_hermetic_gate(small_task):
    # Nothing static gives it away; the offline run shows the resolver error.
    probe = ("def test_online():\n    import socket\n"
             "    socket.getaddrinfo('example.invalid.envfactory.test', 80)\n\n\n")
    src = small_task.tests["test_outputs.py"]
    head, tail = src.split("\n\nif __name__", 1)
    bad = _bad(small_task, tests={**small_task.tests,
                                  "test_outputs.py": head + "\n\n" + probe + "if __name__" + tail})
    assert not hermetic_problems(bad)
    _, o = verify(bad)
    assert o.failed_gate == Gate.HERMETIC, o.detail


def test_tests_that_accept_a_mutant_fail_the_mutants_gate(small_task):
    # A mutant that writes the right answer another way is not broken: the tests accept it.
    bad = _bad(small_task, mutants={**small_task.mutants, "same-answer": small_task.solution
                                    + "\ntrue\n"})
    _, o = verify(bad)
    assert o.failed_gate == Gate.MUTANTS and "same-answer" in o.detail, o.detail


def test_tests_baked_into_the_image_fail_the_isolation_gate(small_task):
    df = small_task.dockerfile.replace("WORKDIR /app", "RUN mkdir -p /tests && echo x > "
                                       "/tests/leak\nWORKDIR /app")
    _, o = verify(_bad(small_task, dockerfile=df))
    assert o.failed_gate == Gate.ISOLATION, o.detail


def test_a_dockerfile_that_does_not_build_fails_the_build_gate(small_task):
    df = small_task.dockerfile.replace("WORKDIR /app", "RUN exit 3\nWORKDIR /app")
    _, o = verify(_bad(small_task, dockerfile=df))
    assert o.failed_gate == Gate.BUILD, o.detail


def test_near_duplicates_are_dropped(small_task):
    index = DedupIndex()
    assert index.claim(small_task) is None
    same_params = _bad(small_task)
    _, o = verify(same_params, dedup=index)
    assert o.failed_gate == Gate.DUPLICATE and small_task.task_id in o.detail
    reworded = _bad(small_task, fingerprint="", task_id="other",
                    instruction="  " + small_task.instruction.upper().replace(" ", "  ") + " !!")
    assert index.claim(reworded) == small_task.task_id
    assert index.claim(small_task) is None  # re-verifying the same task is no duplicate


def test_generic_mutants_drop_steps():
    sol = "#!/bin/bash\nset -e\n# --- step 1 ---\necho a\n# --- step 2 ---\necho b\n"
    assert generic_mutants(sol) == {"drop-last-step": "#!/bin/bash\necho a\n"}
