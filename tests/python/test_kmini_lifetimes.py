"""The process's life around kmini: the interpreter exiting while a daemon
thread is inside a kernel, a forked child's exit (and its own calls), calls
after kmini has shut down, atexit handlers on either side of kmini's. Each
case runs in a fresh interpreter: no crash (signal), no hang (timeout)."""
import os
import subprocess
import sys
import textwrap

import pytest


def run(code, timeout=60):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=os.environ)
    return r


def test_exit_with_a_daemon_thread_inside_a_kernel():
    r = run("""
        import threading, time
        import numpy as np, kmini
        F0 = np.ones(4096, complex); G0 = np.zeros(4096, complex)
        kmini.gram(np.ones((2, 2), bool))  # Kokkos started
        started = threading.Event()
        def long_call():
            started.set()
            kmini.rk4(F0, G0, steps=10**7, dt=1e-6, g=1e-4, method='stages')
        threading.Thread(target=long_call, daemon=True).start()
        started.wait(); time.sleep(0.3)
        print('exiting', flush=True)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "exiting" in r.stdout


@pytest.mark.parametrize("call", ["kmini.gram(np.ones((3, 3), bool))",
                                  "kmini.rk4(np.ones(4, complex), np.zeros(4, complex), steps=2)"])
def test_a_forked_child_exits_and_can_compute(call):
    """Serial kernels run in the child; threads (OpenMP) or a device do not
    survive a fork, so there each call is a RuntimeError naming the way out,
    and the child still exits normally."""
    r = run(f"""
        import os, sys
        import numpy as np, kmini
        {call}
        serial = kmini.info()['execution_space'] == 'Serial'
        pid = os.fork()
        if pid == 0:
            for f in (lambda: kmini.gram(np.eye(3, dtype=bool)).C.trace(),
                      lambda: kmini.discount(np.ones((2, 2)), np.ones((1, 2, 2)))[0, 0, 0]):
                try:
                    sys.stdout.write('child %s\\n' % f())
                except RuntimeError as e:
                    sys.stdout.write('refused %s\\n' % e)
            sys.stdout.flush()
            sys.exit(0)  # a normal exit: atexit handlers run
        _, status = os.waitpid(pid, 0)
        print('child status', status, 'serial', serial)
    """, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "child status 0" in r.stdout, r.stdout + r.stderr
    computed = [line for line in r.stdout.splitlines() if line.startswith("child ") and "status" not in line]
    if "serial True" in r.stdout:
        assert computed == ["child 3", "child 1.0"] and "refused" not in r.stdout, r.stdout
    else:
        assert r.stdout.count("refused") == 2 and "'spawn' or 'forkserver'" in r.stdout, r.stdout


def test_calls_after_shutdown_are_a_runtime_error():
    r = run("""
        import numpy as np, kmini
        kmini.gram(np.ones((2, 2), bool))
        kmini._finalize()
        for f in (lambda: kmini.gram(np.ones((2, 2), bool)),
                  lambda: kmini.rk4(np.ones(2, complex), np.zeros(2, complex), steps=1),
                  lambda: kmini.discount(np.ones((1, 1)), np.ones((1, 1, 1)))):
            try:
                f()
            except RuntimeError as e:
                print('RuntimeError', e)
        kmini._finalize()  # twice: nothing
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [l for l in r.stdout.splitlines() if l.startswith("RuntimeError")]
    assert len(lines) == 3 and all("kmini has shut down" in l for l in lines), r.stdout


@pytest.mark.parametrize("first", ["user", "kmini"])
def test_atexit_handlers_in_either_order(first):
    r = run(f"""
        import atexit
        import numpy as np
        def user_handler():
            import kmini
            try:
                print('gram at exit', kmini.gram(np.ones((2, 2), bool)).C.sum(), flush=True)
            except RuntimeError as e:
                print('RuntimeError at exit:', e, flush=True)
        if '{first}' == 'user':
            atexit.register(user_handler)  # runs after kmini's own handler
            import kmini
        else:
            import kmini
            atexit.register(user_handler)  # runs before kmini's handler
        kmini.rk4(np.ones(4, complex), np.zeros(4, complex), steps=2)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    if first == "user":
        assert "RuntimeError at exit: gram: kmini has shut down" in r.stdout, r.stdout + r.stderr
    else:
        assert "gram at exit 8" in r.stdout, r.stdout + r.stderr
