# SPDX-License-Identifier: GPL-2.0
# For the lab's own tests only: a workload that always fails, so that selftests/boot.sh
# can prove scripts/vmtest fails a run whose guest test failed.
tap_check "this test fails on purpose" false
