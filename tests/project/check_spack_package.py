#!/usr/bin/env python3
"""Checks kmini's Spack package against the project's spack.yaml without Spack.

Spack cannot run in CI, so the recipe is read with `ast` (never imported) and
compared with spack.yaml: Kokkos / Kokkos Kernels pinned to the releases kmini
is tested with (TESTED_KOKKOS below: the one list CI reads), the same CMake
range, the dependencies kmini needs, cuda_arch passed on to Kokkos and Kokkos
Kernels, the current Package API (build systems from spack_repo.builtin), an
https homepage and git address with a `develop` version, spack test methods,
and an environment that finds the package (repos) and builds this checkout
(develop). scripts/spack/check_spack.sh installs what this only reads.

usage: check_spack_package.py SOURCE_DIR [PACKAGE_PY [SPACK_YAML]]
Exit 0 when everything agrees, 1 with one line per problem, 77 (skip) without PyYAML.
"""
import ast
import os
import re
import sys

try:
    import yaml
except ImportError:
    print("skipped: this python3 has no PyYAML (Debian: python3-yaml)")
    sys.exit(77)

# The Kokkos and Kokkos Kernels releases kmini is built and tested against with Spack
# (scripts/spack/check_spack.sh installs them). A release is added here, in the recipe's
# TESTED_KOKKOS and in spack.yaml after the suite passed with it.
TESTED_KOKKOS = ("4.6.01",)
# Dependencies whose versions are pinned to what kmini is built and tested against.
PINNED = ("kokkos", "kokkos-kernels", "cmake")
# Pinned to TESTED_KOKKOS exactly.
TESTED = ("kokkos", "kokkos-kernels")
# spack test run kmini: the package's test methods.
TEST_METHODS = ("test_version", "test_data_dir", "test_default_deck", "test_python")

problems = []


def problem(text):
    problems.append(text)


def parse_spec(text):
    """'kokkos@4.3:4 +cuda cuda_arch=90' -> ('kokkos', '4.3:4', {'cuda': True, 'cuda_arch': '90'})."""
    m = re.match(r"\s*([A-Za-z0-9_.-]+)(?:@(=?[^\s+~]+))?", text)
    if not m:
        return None, None, {}
    variants = {}
    rest = text[m.end():]
    for sign, name in re.findall(r"([+~])([A-Za-z0-9_]+)", rest):
        variants[name] = sign == "+"
    for name, value in re.findall(r"([A-Za-z0-9_]+)=([^\s+~]+)", rest):
        variants[name] = value
    return m.group(1), m.group(2), variants


def literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


CONSTANTS = {}  # the recipe's module-level string constants, substituted into f-strings


def template(node):
    """An f-string as text, module constants substituted and every other placeholder written {}."""
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(v.value)
            elif isinstance(v.value, ast.Name) and v.value.id in CONSTANTS:
                parts.append(CONSTANTS[v.value.id])
            else:
                parts.append("{}")
        return "".join(parts)
    return literal(node)


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return inner + "." + node.attr if inner else None
    return None


def directive_calls(body, name, loop=None):
    """Calls of directive `name` in a class body, with the loop they sit in (dotted iterable)."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and dotted(stmt.value.func) == name:
            yield stmt.value, loop
        elif isinstance(stmt, ast.For):
            yield from directive_calls(stmt.body, name, dotted(stmt.iter))
        elif isinstance(stmt, ast.With):
            yield from directive_calls(stmt.body, name, loop)


def kwarg(call, key):
    for k in call.keywords:
        if k.arg == key:
            return k.value
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = os.path.abspath(argv[1])
    package_py = argv[2] if len(argv) > 2 else os.path.join(root, "spack/spack_repo/kmini/packages/kmini/package.py")
    spack_yaml = argv[3] if len(argv) > 3 else os.path.join(root, "spack.yaml")
    repo_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(package_py))))

    # --- the recipe --------------------------------------------------------------
    with open(package_py, encoding="utf-8") as f:
        tree = ast.parse(f.read(), package_py)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and literal(node.value) is not None):
            CONSTANTS[node.targets[0].id] = literal(node.value)
    imports = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    for module, name in (("spack_repo.builtin.build_systems.cmake", "CMakePackage"),
                         ("spack_repo.builtin.build_systems.cuda", "CudaPackage"),
                         ("spack.package", "*")):
        if (module, name) not in imports:
            problem(f"{package_py}: expected 'from {module} import {name}' (Package API v2, spack-packages)")
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Kmini"]
    if not classes:
        problem(f"{package_py}: no class Kmini")
        return report()
    cls = classes[0]
    bases = {dotted(b) for b in cls.bases}
    if not {"CMakePackage", "CudaPackage"} <= bases:
        problem(f"{package_py}: class Kmini derives from {sorted(bases)}, expected CMakePackage and CudaPackage")

    deps = []  # (spec text or f-string template, when, type, loop)
    for call, loop in directive_calls(cls.body, "depends_on"):
        spec = template(call.args[0]) if call.args else None
        when = kwarg(call, "when")
        dtype = kwarg(call, "type")
        deps.append((spec, template(when) if when is not None else None,
                     literal(dtype) if dtype is not None else None, loop))
    unconditional = {}
    for spec, when, dtype, loop in deps:
        if when is None and loop is None and spec:
            name, version, _ = parse_spec(spec)
            unconditional[name] = (version, dtype)
    for name in ("mpi", "yaml-cpp", "googletest", "kokkos", "kokkos-kernels", "cmake", "cxx"):
        if name not in unconditional:
            problem(f"{package_py}: no unconditional depends_on('{name}...')")
    if unconditional.get("googletest", (None, None))[1] != "test":
        problem(f"{package_py}: googletest should be depends_on(..., type='test')")
    if unconditional.get("cmake", (None, None))[1] != "build":
        problem(f"{package_py}: cmake should be depends_on(..., type='build')")
    for name in TESTED:
        version = unconditional.get(name, (None,))[0] or ""
        if sorted(v.lstrip("=") for v in version.split(",")) != sorted(TESTED_KOKKOS):
            problem(f"{package_py}: {name}@{version or '(any)'} is not the tested releases {','.join(TESTED_KOKKOS)}")

    # CUDA: Kokkos through nvcc_wrapper, and cuda_arch passed on to Kokkos and Kokkos Kernels.
    cuda_kokkos = {}
    for spec, when, _, loop in deps:
        if loop is None and when == "+cuda" and spec:
            name, _, variants = parse_spec(spec)
            if name == "kokkos":
                cuda_kokkos.update(variants)
    for v in ("cuda", "wrapper", "cuda_lambda"):
        if cuda_kokkos.get(v) is not True:
            problem(f"{package_py}: +cuda should require kokkos+{v}")
    for name in ("kokkos", "kokkos-kernels"):
        if not any(loop == "CudaPackage.cuda_arch_values" and spec == f"{name} cuda_arch={{}}"
                   and when == "+cuda cuda_arch={}" for spec, when, _, loop in deps):
            problem(f"{package_py}: cuda_arch is not passed on to {name} "
                    f"(for arch in CudaPackage.cuda_arch_values: depends_on(f'{name} cuda_arch={{arch}}', "
                    f"when=f'+cuda cuda_arch={{arch}}'))")
    variants = {literal(c.args[0]) for c, _ in directive_calls(cls.body, "variant") if c.args}
    if "openmp" not in variants:
        problem(f"{package_py}: no 'openmp' variant for the Kokkos host backend")
    versions = {literal(c.args[0]) for c, _ in directive_calls(cls.body, "version") if c.args}
    wrapper = [spec for spec, when, _, loop in deps if loop is None and when == "+cuda" and spec
               and parse_spec(spec)[0] == "kokkos-nvcc-wrapper"]
    if [parse_spec(w)[1] for w in wrapper] != [",".join(TESTED_KOKKOS)]:
        problem(f"{package_py}: +cuda should take kokkos-nvcc-wrapper@{','.join(TESTED_KOKKOS)} (got {wrapper})")

    # Where the sources come from: an https homepage and git address (spack audit packages-https),
    # a `develop` version on a branch (spack develop / dev-build build a local checkout), no file://.
    attrs = {t.id: literal(n.value) for n in cls.body if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)}
    for attr in ("homepage", "git"):
        if not (attrs.get(attr) or "").startswith("https://"):
            problem(f"{package_py}: {attr} = {attrs.get(attr)!r}, expected an https:// address")
    develop_calls = [c for c, _ in directive_calls(cls.body, "version") if c.args and literal(c.args[0]) == "develop"]
    if not develop_calls or literal(kwarg(develop_calls[0], "branch")) is None:
        problem(f"{package_py}: no version('develop', branch=...) for spack develop / dev-build")
    if "file://" in ast.dump(tree):
        problem(f"{package_py}: a file:// address ties the recipe to one machine's checkout")
    methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    for name in TEST_METHODS + ("check", "cmake_args"):
        if name not in methods:
            problem(f"{package_py}: no method {name} (spack install --test=root / spack test run kmini)")

    # --- repo.yaml ---------------------------------------------------------------------
    repo_yaml = os.path.join(repo_dir, "repo.yaml")
    try:
        with open(repo_yaml, encoding="utf-8") as f:
            repo = yaml.safe_load(f)["repo"]
        if repo.get("namespace") != os.path.basename(repo_dir):
            problem(f"{repo_yaml}: namespace '{repo.get('namespace')}' is not the directory name "
                    f"'{os.path.basename(repo_dir)}' (Package API v2 layout spack_repo/<namespace>/)")
        if os.path.basename(os.path.dirname(repo_dir)) != "spack_repo":
            problem(f"{repo_yaml}: the repository is not inside a spack_repo/ directory")
        if not str(repo.get("api", "")).startswith("v2."):
            problem(f"{repo_yaml}: api is {repo.get('api')!r}, expected v2.x")
    except (OSError, KeyError, TypeError) as e:
        problem(f"{repo_yaml}: cannot read the repository description ({e})")

    # --- spack.yaml --------------------------------------------------------------------
    with open(spack_yaml, encoding="utf-8") as f:
        env = yaml.safe_load(f)["spack"]
    env_dir = os.path.dirname(os.path.abspath(spack_yaml))
    specs = {}
    for s in env.get("specs", []):
        name, version, variants = parse_spec(str(s))
        specs[name] = (version, variants)
    for name in PINNED:
        pkg_version = unconditional.get(name, (None,))[0]
        env_version = specs.get(name, (None,))[0]
        if name not in specs:
            problem(f"{spack_yaml}: no '{name}' spec")
        elif pkg_version != env_version:
            problem(f"{spack_yaml}: {name}@{env_version} but the package depends on {name}@{pkg_version}")
    arches = {name: specs[name][1].get("cuda_arch") for name in ("kmini", "kokkos", "kokkos-kernels") if name in specs}
    if "kmini" not in specs:
        problem(f"{spack_yaml}: no 'kmini' spec: the environment does not build kmini")
    if len(set(arches.values())) != 1:
        problem(f"{spack_yaml}: cuda_arch differs between specs: {arches}")
    for name in TESTED + ("kokkos-nvcc-wrapper",):
        if name in specs and sorted((specs[name][0] or "").lstrip("=").split(",")) != sorted(TESTED_KOKKOS):
            problem(f"{spack_yaml}: {name}@{specs[name][0]} is not the tested releases {','.join(TESTED_KOKKOS)}")
    if specs.get("kmini", (None, {}))[1].get("cuda") and "kokkos-nvcc-wrapper" not in specs:
        problem(f"{spack_yaml}: kmini +cuda but no kokkos-nvcc-wrapper@{','.join(TESTED_KOKKOS)} spec "
                f"(kokkos' recipe would pair it with the newest wrapper)")
    externals = (env.get("packages") or {})
    for name in ("python", "py-numpy"):
        if name in specs and not (externals.get(name) or {}).get("externals"):
            problem(f"{spack_yaml}: {name} has no external (the environment would build Python from source)")
    if "kokkos" in specs and specs.get("kmini", (None, {}))[1].get("cuda"):
        for v, on in cuda_kokkos.items():
            if on is True and specs["kokkos"][1].get(v) is not True:
                problem(f"{spack_yaml}: kokkos spec lacks +{v}, which kmini +cuda requires")
    repos = env.get("repos", [])
    repo_paths = list(repos.values()) if isinstance(repos, dict) else list(repos)
    resolved = [os.path.abspath(os.path.join(env_dir, str(p).replace("$env", env_dir))) for p in repo_paths]
    if os.path.abspath(repo_dir) not in resolved:
        problem(f"{spack_yaml}: repos {repo_paths} do not include the package repository {repo_dir}")
    develop = (env.get("develop") or {}).get("kmini")
    if not develop:
        problem(f"{spack_yaml}: no 'develop: kmini:' entry building this checkout")
    else:
        path = os.path.abspath(os.path.join(env_dir, develop.get("path", "")))
        if path != root or not os.path.isfile(os.path.join(path, "CMakeLists.txt")):
            problem(f"{spack_yaml}: develop path {develop.get('path')!r} is not the project root")
        _, dev_version, _ = parse_spec(develop.get("spec", ""))
        if not dev_version or dev_version.lstrip("=") not in versions:
            problem(f"{spack_yaml}: develop spec {develop.get('spec')!r} names no version the package declares "
                    f"({sorted(v for v in versions if v)})")
    return report()


def report():
    for p in problems:
        print(p)
    if not problems:
        print("spack package and spack.yaml agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
