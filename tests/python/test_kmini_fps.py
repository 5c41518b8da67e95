"""kmini.read_fps and searches on fingerprints: chemfp FPS files read into IDs
and uint64 words (bit i of a fingerprint: bit i % 8 of byte i // 8 in the
file, bit i % 64 of word i // 64 here), passed to kmini.gram without a copy;
tanimoto as Jaccard's name; the score of two empty fingerprints; malformed
files refused as the CLI refuses them. Checked against numpy and, where
installed, RDKit (its own FPS text and BulkTanimotoSimilarity)."""
import os

import numpy as np
import pytest

import kmini


def fps_hex(on_bits, num_bits):
    b = bytearray((num_bits + 7) // 8)
    for i in on_bits:
        b[i // 8] |= 1 << (i % 8)
    return b.hex()


def write_fps(path, records, num_bits, extra=""):
    with open(path, "w") as f:
        f.write(f"#FPS1\n#num_bits={num_bits}\n#type=test/1\n#software=hand{extra}\n")
        for hexfp, ident in records:
            f.write(f"{hexfp}\t{ident}\n")
    return path


def random_bits(rng, rows, num_bits, density):
    M = rng.random((rows, num_bits)) < density
    M[3] = False  # two empty fingerprints
    M[7] = False
    return M


def matrix_fps(tmp_path, M, name="m.fps"):
    ids = [f"mol-{i}" for i in range(len(M))]
    records = [(fps_hex(np.flatnonzero(row), M.shape[1]), ident) for row, ident in zip(M, ids)]
    return write_fps(os.path.join(tmp_path, name), records, M.shape[1]), ids


def tanimoto(M, N, empty=0.0):
    c = M.astype(np.int64) @ N.T.astype(np.int64)
    union = M.sum(1)[:, None] + N.sum(1)[None, :] - c
    return np.where(union > 0, c / np.maximum(union, 1), empty)


def test_read_fps_gives_ids_and_words_in_column_order(tmp_path):
    num_bits = 70  # two words, the second partly used
    records = [(fps_hex([0, 9, 63, 64, 69], num_bits), "a"), (fps_hex([], num_bits), "b b"),
               (fps_hex([8], num_bits), "c")]
    fp = kmini.read_fps(write_fps(tmp_path / "x.fps", records, num_bits))
    assert fp.ids == ["a", "b b", "c"] and fp.num_bits == 70 and fp.type == "test/1" and fp.software == "hand"
    assert fp.words.dtype == np.uint64 and fp.words.shape == (3, 2) and fp.words.flags["C_CONTIGUOUS"]
    want = np.zeros((3, 2), np.uint64)
    for r, bits in enumerate([[0, 9, 63, 64, 69], [], [8]]):
        for k in bits:
            want[r, k // 64] |= np.uint64(1) << np.uint64(k % 64)
    np.testing.assert_array_equal(fp.words, want)


def test_gram_on_fingerprints_carries_ids_and_equals_numpy(tmp_path):
    rng = np.random.default_rng(5)
    M = random_bits(rng, 23, 130, 0.2)
    path, ids = matrix_fps(tmp_path, M)
    fp = kmini.read_fps(path)
    res = kmini.gram(fp, similarity="tanimoto", top_k=4, pairs_min=0.25)
    assert res.ids == ids and res.target_ids == ids
    np.testing.assert_array_equal(res.C, tanimoto(M, M).astype(np.float32))
    np.testing.assert_array_equal(res.C, kmini.gram(M, similarity="jaccard").C)  # one similarity, two names
    np.testing.assert_array_equal(res.top_k, kmini.gram(M, similarity="jaccard", top_k=4, dense=False).top_k)
    Q = random_bits(rng, 9, 130, 0.3)
    qpath, qids = matrix_fps(tmp_path, Q, "q.fps")
    res = kmini.gram(kmini.read_fps(qpath), fp, similarity="tanimoto", top_k=2)
    assert res.ids == qids and res.target_ids == ids
    np.testing.assert_array_equal(res.C, tanimoto(Q, M).astype(np.float32))
    with pytest.raises(ValueError, match="cols: got 64, expected 130"):
        kmini.gram(fp, cols=64)


@pytest.mark.parametrize("slice_rows", [None, 3])
def test_exclude_self_leaves_out_each_querys_own_id(tmp_path, slice_rows):
    rng = np.random.default_rng(31)
    M = random_bits(rng, 40, 150, 0.2)
    path, ids = matrix_fps(tmp_path, M)
    targets = kmini.read_fps(path)
    rows = [5, 3, 7, 20, 12]  # the two empty ones (each other's only 1.0 partner) among them
    queries = kmini.Fingerprints([ids[r] for r in rows[:-1]] + ["new"], targets.words[rows], 150, "", "")
    T = tanimoto(M[rows], M, empty=1.0)
    own = [r if q != "new" else -1 for r, q in zip(rows, queries.ids)]
    X = T.copy()
    for x, j in enumerate(own):
        if j >= 0:
            X[x, j] = -np.inf
    res = kmini.gram(queries, targets, similarity="tanimoto", empty_similarity=1.0, top_k=4, pairs_min=0.25,
                     count_at_least=[0.25, 1.0], exclude_self=True, slice_rows=slice_rows)
    np.testing.assert_array_equal(res.C, T.astype(np.float32))  # C keeps every pair
    for x in range(len(rows)):
        order = sorted(range(len(M)), key=lambda j: (-X[x, j], j))[:4]
        assert list(res.top_k[x]["j"]) == order, x
    assert res.top_k[4]["j"][0] == 12  # "new" has row 12's bits under another ID: it finds it
    assert [(p["i"], p["j"]) for p in res.pairs] == [tuple(ij) for ij in np.argwhere(X >= 0.25)]
    np.testing.assert_array_equal(res.counts, [(X >= 0.25).sum(), (X >= 1.0).sum()])
    with pytest.raises(ValueError, match="exclude_self: got True with B=None, expected False"):
        kmini.gram(targets, exclude_self=True)
    with pytest.raises(ValueError, match="exclude_self: got True, expected False, or Fingerprints as A and B"):
        kmini.gram(queries, targets.words, cols=150, exclude_self=True, top_k=2)
    with pytest.raises(ValueError, match="exclude_self: got True, expected False without top_k, pairs_min"):
        kmini.gram(queries, targets, exclude_self=True)


def test_top_k_min_keeps_the_k_best_at_or_above_it():
    rng = np.random.default_rng(9)
    A, B = rng.random((30, 200)) < 0.3, rng.random((50, 200)) < 0.3
    full = kmini.gram(A, B, similarity="tanimoto", top_k=6).top_k
    cut = kmini.gram(A, B, similarity="tanimoto", top_k=6, top_k_min=0.2).top_k
    t = tanimoto(A, B)
    for i in range(len(A)):
        kept = [int(j) for j in full[i]["j"] if t[i, j] >= 0.2]
        assert list(cut[i]["j"]) == kept + [-1] * (6 - len(kept))
    assert (cut["j"] == -1).any() and (cut["j"] >= 0).any()
    with pytest.raises(ValueError, match=r"top_k_min: got 1\.5 with similarity='tanimoto', expected a value in \["):
        kmini.gram(A, similarity="tanimoto", top_k=2, top_k_min=1.5)


@pytest.mark.parametrize("empty", [0.0, 1.0])
@pytest.mark.parametrize("similarity", ["tanimoto", "dice", "cosine"])
def test_two_empty_fingerprints_score_empty_similarity(similarity, empty):
    M = np.zeros((4, 90), bool)
    M[1, 3] = M[2, 3] = M[2, 80] = True  # rows 0 and 3 empty
    res = kmini.gram(M, similarity=similarity, empty_similarity=empty, top_k=3, pairs_min=0.5)
    assert res.C[0, 3] == res.C[3, 0] == res.C[0, 0] == empty
    assert res.C[0, 1] == 0 and res.C[1, 2] > 0  # an empty row against another: 0
    pairs = {(int(p["i"]), int(p["j"])) for p in res.pairs}
    assert ((0, 3) in pairs) == (empty == 1.0)


def test_rdkit_agrees(tmp_path):
    pytest.importorskip("rdkit")
    from rdkit import Chem, DataStructs
    from rdkit.Chem import AllChem
    smiles = ["CCO", "CCN", "c1ccccc1O", "c1ccccc1N", "CC(=O)O", "CC(=O)N", "C1CCCCC1", "[Na+].[Cl-]"]
    fps = [AllChem.GetMorganFingerprintAsBitVect(Chem.MolFromSmiles(s), 2, nBits=1024) for s in smiles]
    empty = DataStructs.ExplicitBitVect(1024)
    fps.append(empty)
    fps.append(DataStructs.ExplicitBitVect(1024))
    records = [(DataStructs.BitVectToFPSText(f), f"m{i}") for i, f in enumerate(fps)]  # RDKit's own FPS text
    fp = kmini.read_fps(write_fps(tmp_path / "r.fps", records, 1024))
    # RDKit scores two empty fingerprints 1.0: empty_similarity=1 gives RDKit's values everywhere.
    res = kmini.gram(fp, similarity="tanimoto", empty_similarity=1.0)
    for i, f in enumerate(fps):
        want = np.array(DataStructs.BulkTanimotoSimilarity(f, fps), dtype=np.float32)
        np.testing.assert_array_equal(res.C[i], want)
    assert DataStructs.TanimotoSimilarity(empty, empty) == 1.0


@pytest.mark.parametrize("text,message", [
    ("#FPS1\n#num_bits=16\nabc\tx\n", r"bad\.fps:3: 3 hex digits, expected an even number"),
    ("#FPS1\n#num_bits=16\nabcd\tx\nab\ty\n", r"bad\.fps:4: 2 hex digits, expected 4 \(num_bits=16\)"),
    ("#num_bits=16\nabcd\tx\nabcd\tx\n", r"bad\.fps:3: ID 'x' again \(first on line 2\)"),
    ("#num_bits=16\nabcd\n", r"bad\.fps:2: no tab after the fingerprint"),
    ("#num_bits=16\nabcd\t\n", r"bad\.fps:2: an empty ID"),
    ("#num_bits=12\nabcd\tx\n", r"bad\.fps:2: bit 15 is set, past num_bits=12"),
    ("#num_bits=16\nab-d\tx\n", r"bad\.fps:2: '-' at column 3 is not a hex digit"),
    ("#FPS1\n", r"bad\.fps: no fingerprint records"),
])
def test_malformed_files_are_value_errors_naming_the_line(tmp_path, text, message):
    path = tmp_path / "bad.fps"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        kmini.read_fps(path)


def test_a_gzipped_fps_file_is_named_as_such(tmp_path):
    """A chemfp-style .fps.gz (gzip of a valid FPS file) is refused by its content, with how to read it."""
    import gzip
    text = write_fps(tmp_path / "x.fps", [("abcd", "m1"), ("0f0f", "m2")], 16).read_text()
    for name in ("x.fps.gz", "renamed.fps"):
        with gzip.open(tmp_path / name, "wt") as f:
            f.write(text)
        with pytest.raises(ValueError, match=name.replace(".", r"\.") + r": is gzip-compressed, expected an FPS file "
                           r"\(kmini reads its inputs uncompressed: decompress it first, e\.g\. gunzip\)"):
            kmini.read_fps(tmp_path / name)


def test_fingerprints_made_by_hand_are_checked_like_a_file(tmp_path):
    """A Fingerprints built by slicing carries one unique ID per row, as read_fps's does: a mismatch is refused."""
    rng = np.random.default_rng(5)
    M = random_bits(rng, 12, 100, 0.3)
    fp = kmini.read_fps(matrix_fps(tmp_path, M)[0])
    with pytest.raises(ValueError, match="A: 3 IDs for 5 fingerprints, expected one ID per row"):
        kmini.gram(kmini.Fingerprints(fp.ids[:3], fp.words[:5], fp.num_bits, "", ""), similarity="tanimoto")
    twice = fp.ids[:4] + [fp.ids[1]]
    with pytest.raises(ValueError, match="B: ID 'mol-1' at rows 1 and 4, expected unique IDs"):
        kmini.gram(fp, kmini.Fingerprints(twice, fp.words[:5], fp.num_bits, "", ""), similarity="tanimoto")
    ok = kmini.gram(kmini.Fingerprints(fp.ids[2:7], fp.words[2:7], fp.num_bits, "", ""), similarity="tanimoto")
    assert ok.ids == fp.ids[2:7]
