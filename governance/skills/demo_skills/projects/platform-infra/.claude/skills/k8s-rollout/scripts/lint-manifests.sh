#!/bin/sh
kubeconform -strict k8s/
