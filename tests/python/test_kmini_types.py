"""The package's types say what the compiled module accepts: each choice's
Literal type offers exactly the options of the deck key's declaration (read
from the compiled module, which checks every call against them; the Literal
types are written in kmini/_types.py, so this is what keeps them the same),
a number that also takes the word auto says so, and the keyword arguments
reach the compiled module as one options dict of exactly their names."""
import types
import typing

import numpy as np
import pytest

import kmini
from kmini import _kmini

FUNCTIONS = {"rk4": kmini.rk4, "gram": kmini.gram, "discount": kmini.discount}


def hints(function):
    """The parameters' annotations, evaluated in the package (mpi4py is imported there only for type
    checkers: any class stands in for MPI.Intracomm here)."""
    names = dict(vars(kmini), MPI=types.SimpleNamespace(Intracomm=object))
    return {name: eval(a, names) if isinstance(a, str) else a
            for name, a in function.__annotations__.items() if name != "return"}


def literal_values(annotation):
    """The strings a type admits as Literal values (inside Optional and Union too)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return set(typing.get_args(annotation))
    if origin is typing.Union:
        return set().union(*(literal_values(a) for a in typing.get_args(annotation)))
    return set()


def admits_any_str(annotation):
    return annotation is str or (typing.get_origin(annotation) is typing.Union and
                                 any(admits_any_str(a) for a in typing.get_args(annotation)))


@pytest.mark.parametrize("kernel", list(FUNCTIONS))
def test_each_choice_s_literal_type_is_the_declared_options(kernel):
    annotations = hints(FUNCTIONS[kernel])
    for entry in getattr(_kmini, f"_{kernel}_arguments")():
        annotation = annotations[entry["name"]]
        values = literal_values(annotation)
        if entry["type"] == "choice":
            assert values == set(entry["options"]), (entry["key"], values, entry["options"])
            assert not admits_any_str(annotation), entry["key"]
        elif entry["auto"]:  # a number or the word auto
            assert values == {"auto"} or admits_any_str(annotation), (entry["key"], annotation)
        else:
            assert not values, (entry["key"], values)


def test_the_literal_types_are_exported_and_are_the_signatures():
    annotations = {name: a for f in FUNCTIONS.values() for name, a in hints(f).items()}
    for alias, argument in [("Similarity", "similarity"), ("Triangle", "triangle"), ("Distribution", "distribution"),
                            ("RingSchedule", "ring_schedule"), ("Coupling", "coupling"), ("Method", "method"),
                            ("Stores", "stores")]:
        assert alias in kmini.__all__ and getattr(kmini, alias) == annotations[argument], alias
    assert kmini.Precision == typing.get_args(annotations["precision"])[0]  # Optional: None follows F0's dtype
    assert all(hasattr(kmini, name) for name in kmini.__all__)


def test_a_literal_value_the_declaration_lacks_is_refused_by_the_module():
    # the Literal types admit nothing the compiled module refuses (and the other way round: the test above)
    A = np.eye(3, dtype=bool)
    weights = {"tversky": {"tversky_alpha": 1, "tversky_beta": 1}}  # its own, required arguments
    for value in typing.get_args(kmini.Similarity):
        assert kmini.gram(A, similarity=value, **weights.get(value, {})).C.shape == (3, 3)
    with pytest.raises(ValueError, match=r"^similarity: got 'hamming', expected 'counts', "):
        kmini.gram(A, similarity="hamming")


@pytest.mark.parametrize("change", ["missing", "unknown"])
def test_the_options_dict_must_hold_exactly_the_keyword_arguments(change):
    A = np.eye(3, dtype=bool)
    options = {name: value for name, value in kmini.gram.__kwdefaults__.items() if name not in ("write", "comm")}
    options.update(summary=False, ids=None, target_ids=None)  # the package's own options
    np.testing.assert_array_equal(_kmini.gram(A, None, dict(options)).C, np.eye(3, dtype=np.int32))
    if change == "missing":
        del options["ring_schedule"]
        message = r"^gram: the option 'ring_schedule' is missing$"
    else:
        options["ring_shedule"] = "auto"
        message = r"^gram: got an unknown option 'ring_shedule'$"
    with pytest.raises(TypeError, match=message):
        _kmini.gram(A, None, options)
    with pytest.raises(TypeError, match=r"^rk4: options: got list \[\], expected a dict of keyword arguments$"):
        _kmini.rk4(np.ones(2, complex), np.ones(2, complex), [], None)
