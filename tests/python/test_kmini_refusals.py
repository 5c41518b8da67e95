"""What kmini must refuse, or keep, rather than accept silently: write= targets
checked as the CLI checks its outputs (special files, links, the same file
twice, missing directories, suffixes), thresholds no value can reach, 0-d
arrays, non-finite initial fields, packed rows without cols=, and dtypes
kept (big-endian float32). Each refusal is one line naming the argument,
raised before anything is computed."""
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kmini

A = np.random.default_rng(5).random((9, 70)) < 0.5
C_WANT = A.astype(np.int32) @ A.T.astype(np.int32)


def one_line(excinfo, start):
    text = str(excinfo.value)
    assert "\n" not in text and text.startswith(start), text
    return text


def test_a_fifo_at_the_output_path_is_refused_and_kept(tmp_path):
    fifo = tmp_path / "C.npy"
    os.mkfifo(fifo)
    with pytest.raises(ValueError) as e:
        kmini.gram(A, write={"C": fifo})
    assert "not a regular file" in one_line(e, "write: C: cannot write")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_character_device_at_the_output_path_is_refused(tmp_path):
    dev = tmp_path / "null.npy"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as err:
        pytest.skip(f"cannot make a character device here: {err}")
    with pytest.raises(ValueError) as e:
        kmini.gram(A, write={"C": dev})
    assert "not a regular file" in one_line(e, "write: C: cannot write")
    assert stat.S_ISCHR(os.lstat(dev).st_mode)


def test_an_output_is_written_through_a_symbolic_link(tmp_path):
    """As numpy and the shell write: the link stays, its target gets the file."""
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "C.npy"
    target.write_bytes(b"old")
    link = tmp_path / "C.npy"
    link.symlink_to(target)
    kmini.gram(A, write={"C": link})
    assert os.path.islink(link) and os.readlink(link) == str(target)
    np.testing.assert_array_equal(np.load(target), C_WANT)


def test_a_link_to_a_fifo_or_nowhere_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "to_fifo.npy").symlink_to(tmp_path / "fifo")
    (tmp_path / "dangling.npy").symlink_to(tmp_path / "missing" / "C.npy")
    with pytest.raises(ValueError) as e:
        kmini.gram(A, write={"C": tmp_path / "to_fifo.npy"})
    assert "not a regular file" in one_line(e, "write: C: cannot write")
    with pytest.raises(ValueError) as e:
        kmini.gram(A, write={"C": tmp_path / "dangling.npy"})
    assert "symbolic link" in one_line(e, "write: C: cannot write")
    assert os.path.islink(tmp_path / "to_fifo.npy") and os.path.islink(tmp_path / "dangling.npy")


def test_the_cli_writes_through_a_link_too(tmp_path):
    binary = os.environ.get("KMINI_BINARY")
    if not binary:
        pytest.skip("KMINI_BINARY (the CLI) not set")
    target = tmp_path / "kept" / "C.npy"
    target.parent.mkdir()
    (tmp_path / "C.npy").symlink_to(target)
    deck = tmp_path / "deck.yaml"
    deck.write_text(f"run: {{kernels: [gram]}}\ngram:\n  A: {{random: {{rows: 9, cols: 70, density: 0.5, seed: 3}}}}\n"
                    f"  write: {{C: {tmp_path / 'C.npy'}}}\n")
    run = subprocess.run([binary, str(deck), "--out", str(tmp_path / "out")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert os.path.islink(tmp_path / "C.npy")
    C = np.load(target)
    assert C.shape == (9, 9) and np.array_equal(C, C.T) and (np.diag(C) >= C).all()


def test_the_same_file_twice_is_refused(tmp_path):
    p = tmp_path / "out.npy"
    with pytest.raises(ValueError) as e:
        kmini.gram(A, top_k=2, write={"C": p, "top_k": p})
    assert "also the output of write: C" in one_line(e, "write: top_k: cannot write")
    assert not p.exists()


@pytest.mark.parametrize("path, words", [("", "expected a file name"),
                                         ("no/such/dir/C.npy", "does not exist"),
                                         ("C.csv", "expected a path ending in .npy")])
def test_bad_paths_are_refused_before_computing(tmp_path, monkeypatch, path, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as e:
        kmini.gram(A, write={"C": path})
    assert words in one_line(e, "write: C")
    assert os.listdir(tmp_path) == []


def test_an_unknown_output_names_the_known_ones(tmp_path):
    with pytest.raises(ValueError) as e:
        kmini.gram(A, write={"D": tmp_path / "d.npy"})
    assert "'C'" in one_line(e, "write: got key 'D'")


def test_a_0d_count_at_least_is_a_type_error():
    with pytest.raises(TypeError) as e:
        kmini.gram(A, count_at_least=np.array(5))
    assert "1-d" in one_line(e, "count_at_least: ")


@pytest.mark.parametrize("similarity", ["jaccard", "dice", "cosine"])
def test_thresholds_above_one_for_a_similarity_are_refused(similarity):
    with pytest.raises(ValueError) as e:
        kmini.gram(A, similarity=similarity, pairs_min=1.5)
    assert "[0, 1]" in one_line(e, "pairs_min: got 1.5")
    with pytest.raises(ValueError) as e:
        kmini.gram(A, similarity=similarity, count_at_least=[0.5, 2])
    assert "[0, 1]" in one_line(e, "count_at_least[1]: got 2")


def test_counts_take_thresholds_above_one():
    res = kmini.gram(A, pairs_min=20, count_at_least=[2, 30])
    upper = C_WANT[np.triu_indices(len(A), 1)]  # the pairs i < j
    assert len(res.pairs) == np.count_nonzero(upper >= 20)
    assert list(res.counts) == [np.count_nonzero(upper >= 2), np.count_nonzero(upper >= 30)]


@pytest.mark.parametrize("bad, where", [(np.nan, "F0"), (np.inf, "G0")])
def test_non_finite_initial_fields_are_named(bad, where):
    F0, G0 = np.ones((3, 4), complex), np.zeros((3, 4), complex)
    (F0 if where == "F0" else G0)[1, 2] = bad
    with pytest.raises(ValueError) as e:
        kmini.rk4(F0, G0, steps=3)
    assert "expected finite values" in one_line(e, f"{where}: element (1, 2) is ")


def test_big_endian_float32_stays_float32():
    m = np.random.default_rng(1).random((30, 4)).astype(">f4")
    d = np.random.default_rng(2).random((5, 30, 4)).astype(">f4")
    cv = kmini.discount(m, d)
    assert cv.dtype == np.float32
    np.testing.assert_array_equal(cv, (m * d).astype(np.float32))


@pytest.mark.parametrize("packed", [lambda a: np.packbits(a, axis=1),
                                    lambda a: np.packbits(a, axis=1, bitorder="little").view(np.uint64)])
def test_packed_rows_without_cols_ask_for_cols(packed):
    A128 = np.random.default_rng(3).random((4, 128)) < 0.5
    with pytest.raises(ValueError) as e:
        kmini.gram(packed(A128))
    assert "pass cols=" in one_line(e, "A: element (")


def test_the_build_backend_names_an_interpreter_without_numpy():
    """pip install --no-build-isolation . from a Python without numpy: the backend says which interpreter
    it found and what it lacks, before pip looks for numpy in a package index (here: -S hides numpy)."""
    backend = os.path.join(os.path.dirname(__file__), "..", "..", "src", "python", "packaging")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {backend!r})
        import kmini_build
        try:
            kmini_build.get_requires_for_build_wheel()
        except RuntimeError as e:
            print(e)
    """)
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60)
    probe = subprocess.run([sys.executable, "-S", "-c", "import numpy"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("numpy is importable without site-packages here")
    assert sys.executable in r.stdout and "numpy" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("gram, words", [
    ("similarity: jaccard\n  write: {pairs: {path: p.npy, min: 1.5}}", "gram.write.pairs.min"),
    ("similarity: dice\n  write: {count_at_least: [0.5, 2]}", "gram.write.count_at_least"),
    ("write: {C: C.csv}", "gram.write.C"),
    ("write: {summary: s.txt}", "gram.write.summary")])
def test_the_cli_refuses_the_same(tmp_path, gram, words):
    binary = os.environ.get("KMINI_BINARY")
    if not binary:
        pytest.skip("KMINI_BINARY (the CLI) not set")
    deck = tmp_path / "deck.yaml"
    deck.write_text("run: {kernels: [gram]}\ngram:\n  A: {random: {rows: 9, cols: 70}}\n  " + gram + "\n")
    run = subprocess.run([binary, str(deck), "--dry-run", "--out", str(tmp_path / "out")], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    line = run.stderr.strip().splitlines()[-1]
    assert "deck.yaml:" in line and words in line, run.stderr
    assert not (tmp_path / "out").exists()
