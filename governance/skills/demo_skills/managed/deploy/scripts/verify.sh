#!/bin/sh
# Prints the error rate of the last 10 minutes for a service; exits 1 above 1%.
set -eu
service="$1"; env="$2"
rate=$(curl -fsS "https://metrics.internal.acme/api/error-rate?service=$service&env=$env&window=10m")
awk -v r="$rate" 'BEGIN { exit (r > 0.01) }'
