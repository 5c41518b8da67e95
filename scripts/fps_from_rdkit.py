#!/usr/bin/env python3
"""Morgan fingerprints of a molecule file as a chemfp FPS file, with RDKit.

Reads SMILES files (one molecule per line: SMILES, then its ID) or SD files
(the ID from --id-tag, else the molecule's name, else its record number) and
writes one record per molecule that RDKit parses: RDKit's own FPS hex text
(DataStructs.BitVectToFPSText: bit i in byte i // 8, bit i % 8 least
significant first), a tab, the ID. IDs are made unique (a repeated ID gets
"_2", "_3", ...: kmini refuses repeated IDs). Molecules RDKit cannot parse
are counted on stderr and left out.

usage: fps_from_rdkit.py MOLECULES OUT.fps [--radius 2] [--bits 2048] [--limit N] [--id-tag TAG]
"""
import argparse
import sys

from rdkit import Chem, DataStructs, RDLogger, rdBase
from rdkit.Chem import AllChem


def molecules(path, id_tag):
    """(id, molecule or None) of each record of a SMILES or SD file."""
    if path.endswith((".sdf", ".sd", ".mol")):
        for n, mol in enumerate(Chem.SDMolSupplier(path), 1):
            ident = ""
            if mol is not None:
                ident = mol.GetProp(id_tag) if id_tag and mol.HasProp(id_tag) else mol.GetProp("_Name")
            yield ident.strip() or f"record{n}", mol
        return
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            yield (fields[1] if len(fields) > 1 else f"line{n}"), Chem.MolFromSmiles(fields[0])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("molecules")
    p.add_argument("out")
    p.add_argument("--radius", type=int, default=2)
    p.add_argument("--bits", type=int, default=2048)
    p.add_argument("--limit", type=int, default=0, help="at most this many molecules (0: all)")
    p.add_argument("--id-tag", default="", help="SD files: the property holding the ID")
    a = p.parse_args()
    RDLogger.DisableLog("rdApp.*")
    seen, written, failed = {}, 0, 0
    with open(a.out, "w") as out:
        out.write(f"#FPS1\n#num_bits={a.bits}\n#type=RDKit-Morgan/1 radius={a.radius} fpSize={a.bits}\n")
        out.write(f"#software=RDKit/{rdBase.rdkitVersion}\n#source={a.molecules}\n")
        for ident, mol in molecules(a.molecules, a.id_tag):
            if mol is None:
                failed += 1
                continue
            seen[ident] = seen.get(ident, 0) + 1
            if seen[ident] > 1:
                ident = f"{ident}_{seen[ident]}"
            fp = AllChem.GetMorganFingerprintAsBitVect(mol, a.radius, nBits=a.bits)
            out.write(f"{DataStructs.BitVectToFPSText(fp)}\t{ident}\n")
            written += 1
            if written == a.limit:
                break
    print(f"{a.out}: {written} fingerprints of {a.bits} bits; {failed} molecules RDKit could not parse",
          file=sys.stderr)


if __name__ == "__main__":
    main()
