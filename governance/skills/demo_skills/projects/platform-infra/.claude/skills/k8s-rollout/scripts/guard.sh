#!/bin/sh
case "$CLAUDE_TOOL_INPUT" in *'delete namespace'*) echo refused >&2; exit 2;; esac
