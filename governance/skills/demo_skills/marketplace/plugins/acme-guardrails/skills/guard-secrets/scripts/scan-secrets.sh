#!/bin/sh
# exits 2 (block) when stdin contains a secret pattern
grep -Eq 'AKIA[0-9A-Z]{16}|BEGIN (RSA|EC|OPENSSH) PRIVATE KEY' && { echo 'secret detected' >&2; exit 2; }
exit 0
