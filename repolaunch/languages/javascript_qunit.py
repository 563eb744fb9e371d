"""QUnit under Node.js: the test script as its maintainers run it, with a hook that writes
one TAP line per finished test.

Suites of this kind (``"test": "node test/test.js"``, the file loads ``qunit`` or
``qunit-extras`` itself, or the ``qunit`` command line) print no per-test results a parser
can read (progress, a summary, failures only). Node preloads the hook in every process of
the script (``NODE_OPTIONS=--require``); it waits for a module whose exports look like
QUnit (``test``, ``module``, ``testDone``) and registers a ``testDone`` callback on it
once. Ids are ``module > test``, as a nested module's own name already reads in QUnit 2.
A QUnit ``todo`` test that fails as expected is ``not ok # TODO`` (an expected failure).
QUnit's filter matches ``module: test`` text, not ids: no per-test command.
"""

from __future__ import annotations

import shlex

HOOK = "/tmp/envfactory-qunit-tap.cjs"

# Writes "ok N - module > name" lines to $EF_QUNIT_REPORT (appending: a script may run
# several node processes, each with its own QUnit).
HOOK_JS = (
    "const M=require('module'),fs=require('fs'),out=process.env.EF_QUNIT_REPORT;"
    "const seen=new WeakSet();let n=0;const load=M._load;"
    "const esc=s=>String(s).replace(/\\\\/g,'\\\\\\\\').replace(/#/g,'\\\\#')"
    ".replace(/[\\r\\n]+/g,' ');"
    "function hook(q){if(!q||(typeof q!=='object'&&typeof q!=='function')||seen.has(q))return;"
    "if(typeof q.testDone!=='function'||typeof q.test!=='function'||"
    "typeof q.module!=='function')return;seen.add(q);"
    "q.testDone(d=>{const id=(d.module?d.module+' > ':'')+d.name;let l;"
    "if(d.skipped)l='ok '+(++n)+' - '+esc(id)+' # SKIP';"
    "else if(d.todo&&d.failed)l='not ok '+(++n)+' - '+esc(id)+' # TODO';"
    "else l=(d.failed||d.todo?'not ok ':'ok ')+(++n)+' - '+esc(id);"
    "try{fs.appendFileSync(out,l+'\\n')}catch(e){}})}"
    "M._load=function(){const r=load.apply(this,arguments);"
    "try{hook(r);hook(r&&r.QUnit)}catch(e){}return r};"
)


def commands(script: str, report: str) -> tuple[str, str]:
    """(test command, note): ``scripts.test`` (expanded) run by the shell with the hook."""
    run = script.strip() or "node test"
    write = f"printf %s {shlex.quote(HOOK_JS)} > {HOOK}"
    test = (f'{write} && : > {report} && PATH="$PWD/node_modules/.bin:$PATH" '
            f'NODE_OPTIONS="--require {HOOK}" EF_QUNIT_REPORT={report} sh -c {shlex.quote(run)}')
    return test, ("QUnit in Node.js: the test script as written, with a preloaded hook that "
                  "writes a TAP line per test")
