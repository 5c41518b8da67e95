"""The keyword arguments that are deck keys mean what the deck's keys mean:
their names map to the kernel's declaration, their defaults are the declared
defaults (as the signature shows them and as the call uses them), choices
offer exactly the declared options, and the docstrings carry the declared
help; checked against `kmini describe --json` (the CLI's own reading)."""
import inspect
import json
import os
import subprocess

import numpy as np
import pytest

import kmini
from kmini import _kmini

FUNCTIONS = {"rk4": kmini.rk4, "gram": kmini.gram, "discount": kmini.discount}
# Python's own default where the deck's cannot apply: precision follows F0's dtype.
OWN_DEFAULTS = {("rk4", "precision"): None}
# Arguments that are not deck keys: the arrays, the communicator, outputs, input forms.
NOT_DECK_KEYS = {"rk4": {"comm"}, "gram": {"cols", "dense", "write", "comm"}, "discount": {"out"}}


def declared(kernel):
    return getattr(_kmini, f"_{kernel}_arguments")()


@pytest.fixture(scope="module")
def describe():
    binary = os.environ.get("KMINI_BINARY")
    if not binary:
        pytest.skip("KMINI_BINARY (the CLI) not set")
    out = subprocess.run([binary, "describe", "--json"], capture_output=True, text=True, timeout=60, check=True)
    doc = json.loads(out.stdout)
    return {k["key"]: k for kernel in doc["kernels"] for k in kernel["keys"]}


def python_value(entry):
    d = entry["default"]
    if entry["type"] == "reals" and isinstance(d, list):
        return complex(*d)
    return None if d == [] else d


@pytest.mark.parametrize("kernel", list(FUNCTIONS))
def test_every_keyword_argument_is_a_declared_key_or_python_s_own(kernel):
    params = inspect.signature(FUNCTIONS[kernel]).parameters
    keywords = {n for n, p in params.items() if p.kind == p.KEYWORD_ONLY}
    names = {e["name"] for e in declared(kernel)}
    assert keywords == names | NOT_DECK_KEYS[kernel]
    assert not names & NOT_DECK_KEYS[kernel]


@pytest.mark.parametrize("kernel", list(FUNCTIONS))
def test_the_module_reads_the_cli_s_declaration(kernel, describe):
    for entry in declared(kernel):
        cli = dict(describe[entry["key"]])
        mine = {k: v for k, v in entry.items() if k != "name"}
        assert mine == cli, entry["key"]


@pytest.mark.parametrize("kernel", list(FUNCTIONS))
def test_defaults_are_the_declared_defaults(kernel, describe):
    function = FUNCTIONS[kernel]
    params = inspect.signature(function).parameters
    for entry in declared(kernel):
        name = entry["name"]
        want = OWN_DEFAULTS.get((kernel, name), python_value(describe[entry["key"]]))
        assert params[name].default == want, f"{kernel}({name}=...): the signature says {params[name].default!r}"
        assert function.__kwdefaults__[name] == want, name
        # its entry in the docstring's Parameters: the default, then the declared key and help
        entry_line = next(line for line in function.__doc__.splitlines() if line.strip().startswith(f"{name} : "))
        assert entry_line.endswith(f"default {want!r}") or (want is None and "optional" in entry_line), entry_line
        assert f"The deck's {entry['key']}" in function.__doc__ and entry["help"] in function.__doc__


@pytest.mark.parametrize("kernel", list(FUNCTIONS))
def test_choices_offer_the_declared_options(kernel, describe):
    calls = {
        "rk4": lambda **kw: kmini.rk4(np.ones(4, complex), np.zeros(4, complex), steps=1, **kw),
        "gram": lambda **kw: kmini.gram(np.eye(3, dtype=bool), **kw),
        "discount": lambda **kw: kmini.discount(np.ones((1, 1)), np.ones((1, 1, 1)), **kw),
    }
    for entry in declared(kernel):
        if entry["type"] != "choice":
            continue
        with pytest.raises(ValueError) as e:
            calls[kernel](**{entry["name"]: "no_such_option"})
        listed = str(e.value).split(", expected ", 1)[1]
        for option in describe[entry["key"]]["options"]:
            assert f"'{option}'" in listed, (entry["name"], option, listed)


def test_the_defaults_give_the_deck_s_run():
    # rk4 with every default: per_stage coupling, g = 1 / the number of elements, dt and steps the deck's
    F0, G0 = np.full(16, 0.2 + 0.1j), np.full(16, 0.5 + 0j)
    F, G, delta = kmini.rk4(F0, G0)
    F2, G2, delta2 = kmini.rk4(F0, G0, steps=100, dt=1e-3, g=1 / 16, coupling="per_stage", method="auto", kerr=0.0)
    np.testing.assert_array_equal(delta, delta2)
    assert delta.shape == (101,)
