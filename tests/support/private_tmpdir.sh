#!/bin/sh
# Usage: private_tmpdir.sh BASE COMMAND [ARGS...]
# Runs COMMAND with TMPDIR set to a fresh directory under BASE, removed after.
# Why: OpenMPI puts its per-job session directories under TMPDIR (/tmp by
# default); two jobs creating them at once can fail with `mkdir /tmp/ompi...:
# File exists` / `orte_init failed`. A private TMPDIR per test keeps the suite
# independent of any other MPI job on the machine.
base=$1
shift
mkdir -p "$base" || exit 1
dir=$(mktemp -d "$base/tmp.XXXXXX") || exit 1
TMPDIR=$dir
export TMPDIR
"$@"
rc=$?
rm -rf "$dir"
exit $rc
