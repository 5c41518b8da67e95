#!/bin/sh
# ulimit_v.sh KIB COMMAND...: runs COMMAND with its address space limited to
# KIB KiB, so that an allocation fails although the device memory check (which
# reads the machine's available memory, not this limit) passed.
limit=$1
shift
ulimit -v "$limit" || exit 99
exec "$@"
