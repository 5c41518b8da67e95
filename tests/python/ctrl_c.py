"""Ctrl-C during a long kmini call, in a fresh interpreter: SIGINT 0.5 s in."""
import os
import subprocess
import sys

SCRIPT = """
import os, signal, threading, time
import numpy as np, kmini
{setup}
sent = []
def interrupt():
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)
threading.Timer(0.5, interrupt).start()
try:
    {call}
    print('finished')
except KeyboardInterrupt:
    print('KeyboardInterrupt after %.3f s' % (time.monotonic() - sent[0]))
"""


def seconds_to_interrupt(setup, call):
    """Seconds from SIGINT to the KeyboardInterrupt `call` raised (AssertionError if it finished)."""
    r = subprocess.run([sys.executable, "-c", SCRIPT.format(setup=setup, call=call)], capture_output=True,
                       text=True, timeout=120, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("KeyboardInterrupt after"), r.stdout + r.stderr
    return float(r.stdout.split()[2])
