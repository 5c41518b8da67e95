"""gram on chemfp FPS fingerprint files, against RDKit and numpy.

Morgan fingerprints (radius 2, 2048 bits) of molecules from rdkit-data's NCI
SMILES file are written as an FPS file by this script from RDKit's bit
positions (GetOnBits: bit i in byte i // 8, bit i % 8 least significant
first), and the encoding is checked against RDKit's own FPS text
(DataStructs.BitVectToFPSText). kmini reads the file at 1 and 2 ranks; C
(counts and Tanimoto), the top-k lists and the pairs are checked against
numpy on the on-bits matrix and against RDKit's BulkTanimotoSimilarity, and
the counts are byte-identical to those of the same matrix as a .npy file;
the text outputs (IDs, float32 scores) hold the .npy files' records and are
byte-identical at 1 and 2 ranks; tanimoto, empty_similarity (two empty
records: RDKit's 1.0 and the default 0) and top-k with a minimum score,
queries (A) against targets (B), with their own IDs left out (exclude_self)
and with the Tversky similarity against RDKit's BulkTverskySimilarity.
Malformed files are exit 2 with one line naming file:line, nothing written.

usage: check_gram_fps.py KMINI MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from rdkit import Chem, DataStructs, RDLogger
    from rdkit.Chem import AllChem
except ImportError as e:
    print(f"skipped: {e} (needs numpy and RDKit: apt-get install python3-rdkit rdkit-data)")
    sys.exit(77)

kmini, mpiexec, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
SMILES = "/usr/share/RDKit/Data/NCI/first_5K.smi"
MOLECULES, BITS, QUERIES = 150, 2048, 12
RDLogger.DisableLog("rdApp.*")


def molecules():
    if not os.path.exists(SMILES):
        print(f"skipped: no {SMILES} (apt-get install rdkit-data)")
        sys.exit(77)
    out = []
    with open(SMILES) as f:
        for line in f:
            smiles, nsc = line.split()[:2]
            mol = Chem.MolFromSmiles(smiles)
            if mol is not None:
                out.append((f"NSC{nsc}", mol))
            if len(out) == MOLECULES:
                return out
    return out


def fps_hex(on_bits, num_bits):
    """chemfp's encoding: bit i is bit i % 8 (least significant first) of byte i // 8, bytes as two hex digits."""
    b = bytearray((num_bits + 7) // 8)
    for i in on_bits:
        b[i // 8] |= 1 << (i % 8)
    return b.hex()


def write_fps(path, records, num_bits, header=True):
    with open(path, "w") as f:
        if header:
            f.write(f"#FPS1\n#num_bits={num_bits}\n#type=RDKit-Morgan/1 radius=2 fpSize={num_bits}\n")
            f.write("#software=RDKit\n")
        for hexfp, ident in records:
            f.write(f"{hexfp}\t{ident}\n")


def run(ranks, out, args):
    cmd = [mpiexec, "-n", str(ranks), *flags, kmini, "--set", "run.kernels=[gram]", *args, "--out", out]
    return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def expect_error(ranks, tmp, name, path, message):
    out = os.path.join(tmp, f"out_{name}_{ranks}")
    cmd, p = run(ranks, out, ["--set", f"gram.A={{file: {path}}}", "--set", "gram.write.C=C.npy"])
    lines = [line for line in p.stderr.splitlines() if line.startswith("kmini:")]
    assert p.returncode == 2, (cmd, p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert len(lines) == 1 and message in lines[0], (cmd, message, lines)
    assert not os.path.exists(out) or not os.listdir(out), (cmd, os.listdir(out))
    print(f"{ranks} rank(s), {name}: {lines[0]}")


def bad_files(tmp, records):
    """(name, path, expected message) of malformed copies of `records`; line numbers count the 4 header lines."""
    good = list(records)
    n = len(good)
    cases = []

    def case(name, recs, message, num_bits=BITS, header=True, text=None):
        path = os.path.join(tmp, f"{name}.fps")
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        else:
            write_fps(path, recs, num_bits, header)
        cases.append((name, path, f"{name}.fps:{message}"))

    odd = good[:3] + [(good[3][0][:-1], good[3][1])] + good[4:]
    case("odd_hex", odd, f"8: {len(good[3][0]) - 1} hex digits, expected an even number")
    narrow = good[:5] + [(good[5][0][:-2], good[5][1])] + good[6:]
    case("width", narrow, f"10: {len(good[5][0]) - 2} hex digits, expected {BITS // 4} (num_bits={BITS})")
    case("duplicate", good[:7] + [(good[7][0], good[2][1])] + good[8:],
         f"12: ID '{good[2][1]}' again (first on line 7)")
    case("empty_id", good[:1] + [(good[1][0], "")] + good[2:], "6: an empty ID")
    no_tab = "#FPS1\n" + good[0][0] + "\t" + good[0][1] + "\n" + good[1][0] + " " + good[1][1] + "\n"
    case("no_tab", None, "3: no tab after the fingerprint", text=no_tab)
    late = "#FPS1\n" + good[0][0] + "\t" + good[0][1] + "\n#num_bits=2048\n"
    case("late_header", None, "3: a header line after the first record", text=late)
    case("num_bits", None, "2: #num_bits=12x, expected a whole number", text="#FPS1\n#num_bits=12x\n")
    # Found where the rows are read: in the last rank's rows at 2 ranks.
    bad_digit = good[:n - 2] + [(good[n - 2][0][:10] + "g" + good[n - 2][0][11:], good[n - 2][1])] + good[n - 1:]
    case("hex_digit", bad_digit, f"{n - 2 + 5}: 'g' at column 11 is not a hex digit")
    # 2045 bits: the last byte's top 3 bits are past num_bits.
    past = [(fps_hex([2046] if i == n - 1 else [], 2045), ident) for i, (_, ident) in enumerate(good)]
    case("past_num_bits", past, f"{n - 1 + 5}: bit 2046 is set, past num_bits=2045", num_bits=2045)
    return cases


def tanimoto(M, N=None, empty=0.0):
    N = M if N is None else N
    c = M.astype(np.int64) @ N.T.astype(np.int64)
    union = M.sum(axis=1)[:, None].astype(np.int64) + N.sum(axis=1)[None, :] - c
    return c, np.where(union > 0, c / np.maximum(union, 1), empty)


def kmini_ok(ranks, out, args):
    """Runs kmini, which must succeed; its results.json for gram."""
    cmd, p = run(ranks, out, args)
    assert p.returncode == 0, (cmd, p.stdout[-2000:], p.stderr[-2000:])
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)["kernels"]["gram"]


def read_tsv(path, header):
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0] == header, lines[:1]
    return [line.split("\t") for line in lines[1:]]


def check_top_k(T, top, k, self_excluded, least=0.0):
    for i in range(T.shape[0]):  # the k best j (j != i with one input) at or above least, ties by ascending j
        js = [j for j in range(T.shape[1]) if not (self_excluded and j == i)]
        order = [j for j in sorted(js, key=lambda j: (-T[i, j], j))[:k] if T[i, j] >= least]  # kmini's doubles
        assert list(top[i]["j"]) == order + [-1] * (k - len(order)), (i, list(top[i]["j"]), order)


def check_texts(out, top, pairs, ids, target_ids):
    """The text files hold the .npy records' rows with IDs and the same float32 scores."""
    lines = read_tsv(os.path.join(out, "top.tsv"), "query_id\trank\ttarget_id\tscore")
    want = [[ids[i], str(r + 1), target_ids[e["j"]], e["value"]] for i in range(len(top))
            for r, e in enumerate(top[i]) if e["j"] >= 0]
    assert [line[:3] for line in lines] == [w[:3] for w in want]
    assert all(np.float32(float(line[3])) == w[3] for line, w in zip(lines, want))
    if pairs is None:
        return
    lines = read_tsv(os.path.join(out, "pairs.tsv"), "query_id\ttarget_id\tscore")
    assert [line[:2] for line in lines] == [[ids[p["i"]], target_ids[p["j"]]] for p in pairs]
    assert all(np.float32(float(line[2])) == p["value"] for line, p in zip(lines, pairs))


def check_simsearch(path, top, ids, target_ids, sources):
    """chemfp's simsearch format: its header, then per query the count, the ID and each partner's ID and score
    with chemfp's decimals for the fingerprints' bits (int(log10(num_bits)) + 2)."""
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[:6] == ["#Simsearch/1", f"#num_bits={BITS}", f"#type=Tanimoto k={top.shape[1]} threshold=0.0",
                         lines[3], f"#queries={sources[0]}", f"#targets={sources[1]}"], lines[:6]
    assert lines[3].startswith("#software=kmini/"), lines[3]
    digits = int(np.log10(BITS)) + 2
    want = []
    for i, row in enumerate(top):
        hits = [f"{target_ids[e['j']]}\t{float(e['value']):.{digits}f}" for e in row if e["j"] >= 0]
        want.append("\t".join([str(len(hits)), ids[i]] + hits))
    assert lines[6:] == want, (lines[6:8], want[:2])


def check_run(ranks, tmp, files, M, bit_vectors, ids):
    path, npy_path, queries = files
    out = os.path.join(tmp, f"run_{ranks}")
    kmini_ok(ranks, out, ["--set", f"gram.A={{file: {path}}}", "--set", "run.verify=true", "--set",
                          "gram.write.C=C.npy"])
    c, _ = tanimoto(M)
    assert np.array_equal(np.load(os.path.join(out, "C.npy")), c), "counts differ from numpy"
    out_npy = os.path.join(tmp, f"run_npy_{ranks}")
    kmini_ok(ranks, out_npy, ["--set", f"gram.A={{file: {npy_path}}}", "--set", "gram.write.C=C.npy"])
    with open(os.path.join(out, "C.npy"), "rb") as a, open(os.path.join(out_npy, "C.npy"), "rb") as b:
        assert a.read() == b.read(), "FPS and .npy inputs give different C files"
    # A from the FPS file against B from the .npy file, and the other way: each column the same bit.
    for a_file, b_file in ((path, npy_path), (npy_path, path)):
        out_mixed = os.path.join(tmp, f"run_mixed_{ranks}")
        kmini_ok(ranks, out_mixed, ["--set", f"gram.A={{file: {a_file}}}", "--set", f"gram.B={{file: {b_file}}}",
                                    "--set", "gram.write.C=C.npy"])
        assert np.array_equal(np.load(os.path.join(out_mixed, "C.npy")), c), "FPS against .npy differs from numpy"
    # Tanimoto with RDKit's score of two empty fingerprints (1.0); top-k and pairs >= 0.7 with IDs.
    out_t, k = os.path.join(tmp, f"run_t_{ranks}"), 5
    kmini_ok(ranks, out_t, ["--set", f"gram.A={{file: {path}}}", "--set", "gram.similarity=tanimoto",
                            "--set", "gram.empty_similarity=1", "--set", "gram.write.C=T.npy",
                            "--set", f"gram.write.top_k={{path: top.npy, k: {k}, text: top.tsv}}",
                            "--set", "gram.write.pairs={path: pairs.npy, min: 0.7, text: pairs.tsv}"])
    T = np.load(os.path.join(out_t, "T.npy"))
    _, t1 = tanimoto(M, empty=1.0)
    assert np.array_equal(T, t1.astype(np.float32)), "Tanimoto differs from numpy"
    for i, bv in enumerate(bit_vectors):  # RDKit: the same float64 division, stored float32 by kmini
        ref = np.array(DataStructs.BulkTanimotoSimilarity(bv, bit_vectors))
        assert np.array_equal(T[i], ref.astype(np.float32)), f"row {i} differs from RDKit"
    top, pairs = np.load(os.path.join(out_t, "top.npy")), np.load(os.path.join(out_t, "pairs.npy"))
    check_top_k(t1, top, k, True)
    want_pairs = [(i, j) for i in range(len(M)) for j in range(i + 1, len(M)) if t1[i, j] >= 0.7]
    assert [(p["i"], p["j"]) for p in pairs] == want_pairs
    check_texts(out_t, top, pairs, ids, ids)
    # The default: two empty fingerprints score 0.
    out_0 = os.path.join(tmp, f"run_0_{ranks}")
    kmini_ok(ranks, out_0, ["--set", f"gram.A={{file: {path}}}", "--set", "gram.similarity=jaccard",
                            "--set", "gram.write.C=T.npy"])
    _, t0 = tanimoto(M)
    assert np.array_equal(np.load(os.path.join(out_0, "T.npy")), t0.astype(np.float32))
    # Queries (A) against targets (B); the 3 best at or above 0.3 (chemfp's -k 3 -t 0.3).
    out_q = os.path.join(tmp, f"run_q_{ranks}")
    kmini_ok(ranks, out_q, ["--set", f"gram.A={{file: {queries}}}", "--set", f"gram.B={{file: {path}}}",
                            "--set", "gram.similarity=tanimoto", "--set", "gram.empty_similarity=1",
                            "--set", "gram.write.top_k={path: top.npy, k: 3, min: 0.3, text: top.tsv}"])
    nq = QUERIES
    top_q = np.load(os.path.join(out_q, "top.npy"))
    check_top_k(t1[-nq:], top_q, 3, False, 0.3)
    assert (top_q["j"] == -1).any() and (top_q["j"] >= 0).any(), "0.3 should cut some lists short"
    check_texts(out_q, top_q, None, ids[-nq:], ids)
    # The same with each query's own ID among the targets left out (gram.exclude_self): top-k, pairs and
    # count_at_least against numpy with those pairs masked; the two empty records keep each other (other IDs).
    out_x = os.path.join(tmp, f"run_x_{ranks}")
    kmini_ok(ranks, out_x, ["--set", f"gram.A={{file: {queries}}}", "--set", f"gram.B={{file: {path}}}",
                            "--set", "gram.similarity=tanimoto", "--set", "gram.empty_similarity=1",
                            "--set", "gram.exclude_self=true", "--set", "gram.write.summary=s.json",
                            "--set", "gram.write.count_at_least=[0.3, 1]",
                            "--set", "gram.write.top_k={path: top.npy, k: 3, text: top.tsv, simsearch: hits.txt}",
                            "--set", "gram.write.pairs={path: pairs.npy, min: 0.3, text: pairs.tsv}"])
    X = t1[-nq:].copy()
    own = [ids.index(q) for q in ids[-nq:]]
    X[np.arange(nq), own] = -np.inf
    top_x, pairs_x = np.load(os.path.join(out_x, "top.npy")), np.load(os.path.join(out_x, "pairs.npy"))
    check_top_k(X, top_x, 3, False)
    assert not any(int(top_x[x]["j"][0]) == own[x] for x in range(nq)) and (top_x["j"] >= 0).all()
    assert [(p["i"], p["j"]) for p in pairs_x] == [(x, j) for x in range(nq) for j in range(len(M)) if X[x, j] >= 0.3]
    with open(os.path.join(out_x, "s.json")) as f:
        counts = [e["pairs"] for e in json.load(f)["count_at_least"]]
    assert counts == [int((X >= 0.3).sum()), int((X >= 1).sum())], counts
    check_texts(out_x, top_x, pairs_x, ids[-nq:], ids)
    check_simsearch(os.path.join(out_x, "hits.txt"), top_x, ids[-nq:], ids, (queries, path))
    # The same search pruned (gram.prune: top-k with a minimum, no summary): the same bytes in every output.
    pruned = {}
    for prune in ("true", "false"):
        out_p = os.path.join(tmp, f"run_xp_{prune}_{ranks}")
        pruned[prune] = (out_p, kmini_ok(ranks, out_p, [
            "--set", f"gram.A={{file: {queries}}}", "--set", f"gram.B={{file: {path}}}",
            "--set", "gram.similarity=tanimoto", "--set", "gram.empty_similarity=1", "--set", "gram.exclude_self=true",
            "--set", "gram.write.count_at_least=[0.3, 1]", "--set", f"gram.prune={prune}",
            "--set", "gram.write.top_k={path: top.npy, k: 3, min: 0.3, text: top.tsv, simsearch: hits.txt}",
            "--set", "gram.write.pairs={path: pairs.npy, min: 0.3, text: pairs.tsv}"]))
    (on, k_on), (off, k_off) = pruned["true"], pruned["false"]
    assert k_on["pruning"]["tiles"] > 0 and k_on["count_at_least"] == k_off["count_at_least"], k_on.get("pruning")
    for name in ("top.npy", "top.tsv", "pairs.npy", "pairs.tsv"):
        with open(os.path.join(on, name), "rb") as x, open(os.path.join(off, name), "rb") as y:
            assert x.read() == y.read(), ("pruned exclude_self", ranks, name)
    assert np.array_equal(np.load(os.path.join(on, "pairs.npy")), pairs_x), "pruned exclude_self pairs"
    out_none = os.path.join(tmp, f"run_x_none_{ranks}")  # nothing it would leave anything out of
    cmd, p = run(ranks, out_none, ["--set", f"gram.A={{file: {queries}}}", "--set", f"gram.B={{file: {path}}}",
                                   "--set", "gram.exclude_self=true", "--set", "gram.write.C=C.npy"])
    assert p.returncode == 2 and "gram.exclude_self: got 'true', expected false without write.pairs" in p.stderr, (
        cmd, p.stderr[-2000:])
    assert not os.path.exists(out_none), cmd
    # Tversky, queries against targets, against RDKit's BulkTverskySimilarity (empty_similarity 1: RDKit's
    # 1.0 wherever the denominator is 0; with weights 1, 0 that is every empty query).
    for alpha, beta in ((0.9, 0.1), (1.0, 0.0)):
        out_v = os.path.join(tmp, f"run_v_{ranks}")
        kmini_ok(ranks, out_v, ["--set", f"gram.A={{file: {queries}}}", "--set", f"gram.B={{file: {path}}}",
                                "--set", "gram.similarity=tversky", "--set", "gram.empty_similarity=1",
                                "--set", f"gram.tversky={{alpha: {alpha}, beta: {beta}}}", "--set", "gram.write.C=V.npy"])
        V = np.load(os.path.join(out_v, "V.npy"))
        for x, bv in enumerate(bit_vectors[-nq:]):
            ref = np.array(DataStructs.BulkTverskySimilarity(bv, bit_vectors, alpha, beta))
            assert np.array_equal(V[x], ref.astype(np.float32)), f"Tversky({alpha}, {beta}) query {x} differs from RDKit"
    print(f"{ranks} rank(s): counts, Tanimoto (numpy; RDKit's BulkTanimotoSimilarity on all {len(M)} rows, "
          f"2 empty), top-{k}, pairs >= 0.7, queries against targets (top-3 >= 0.3, and without themselves) and "
          "their Tversky (RDKit's BulkTverskySimilarity) exact, with IDs in the "
          "text files; "
          "C byte-identical to the .npy input's, and FPS against .npy (both ways) exact")
    return [os.path.join(d, f) for d, f in ((out_t, "top.tsv"), (out_t, "pairs.tsv"), (out_q, "top.tsv"))]


def main():
    mols = molecules()
    bit_vectors = [AllChem.GetMorganFingerprintAsBitVect(m, 2, nBits=BITS) for _, m in mols]
    ids = [ident for ident, _ in mols] + ["EMPTY1", "EMPTY2"]
    bit_vectors += [DataStructs.ExplicitBitVect(BITS), DataStructs.ExplicitBitVect(BITS)]
    records = []
    for ident, bv in zip(ids, bit_vectors):
        hexfp = fps_hex(list(bv.GetOnBits()), BITS)
        assert hexfp == DataStructs.BitVectToFPSText(bv), "the FPS encoding differs from RDKit's"
        records.append((hexfp, ident))
    M = np.zeros((len(records), BITS), dtype=bool)
    for i, bv in enumerate(bit_vectors):
        M[i, list(bv.GetOnBits())] = True
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "morgan.fps")
        write_fps(path, records, BITS)
        npy_path = os.path.join(tmp, "morgan.npy")
        np.save(npy_path, M)
        queries = os.path.join(tmp, "queries.fps")  # the last rows, the empty ones included
        write_fps(queries, records[-QUERIES:], BITS, header=False)
        texts = {}
        for ranks in (1, 2):
            texts[ranks] = check_run(ranks, tmp, (path, npy_path, queries), M, bit_vectors, ids)
            for name, bad, message in bad_files(tmp, records[:MOLECULES]):
                expect_error(ranks, tmp, name, bad, message)
        for one, two in zip(texts[1], texts[2]):
            with open(one, "rb") as a, open(two, "rb") as b:
                assert a.read() == b.read(), (one, two)
        print("text outputs byte-identical at 1 and 2 ranks")


main()
