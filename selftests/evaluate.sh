#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The evaluation plugin and scripts/evaluate: Debian's 6.1 kernel boots once with
# "scripts/vmtest --evaluate" on the net workload, and the figures it writes are sane
# (Documentation/evaluate.rst): the format header, millions of kernel instructions,
# misses neither zero nor more than the fetches, MPKI as written agreeing with the
# counts, distinct lines and pages consistent with each other.  And the usage errors of
# both scripts.  The full evaluation (three kernels, several boots each) is not run here.
. "$(dirname "$0")/lib.sh"

EVALUATE=$top/scripts/evaluate
check_eq "evaluate: the same workload to train and measure is a usage error" 2 \
	"$("$EVALUATE" --train net --measure net >/dev/null 2>&1; echo $?)"
check_eq "evaluate: an unknown workload is a usage error" 2 \
	"$("$EVALUATE" --measure nosuch >/dev/null 2>&1; echo $?)"
check_eq "evaluate: --runs 0 is a usage error" 2 \
	"$("$EVALUATE" --runs 0 >/dev/null 2>&1; echo $?)"

case "${OUT:-.build/default}" in
*san*)
	skip "evaluation boot" "it exercises the plugin, not the sanitized binaries"
	done_testing
	exit 0 ;;
esac
if [ ! -s "$VMLINUX_61" ]; then
	skip "evaluation boot" "test kernel not fetched: run scripts/fetch-kernels"
	done_testing
	exit 0
fi
check_eq "vmtest: --evaluate without a workload is a usage error" 2 \
	"$("$VMTEST" --kernel "$VMLINUX_61" --evaluate "$tmp/x" >/dev/null 2>&1; echo $?)"

fig=$tmp/net.eval
vm_boot "Debian 6.1 with the evaluation plugin (net, deterministic)" --kernel "$VMLINUX_61" \
	--workload net --deterministic --evaluate "$fig"
check_match "the figures start with the format line" '^kbolt-eval 1$' "$(cat "$fig" 2>/dev/null)"
check_match "... and name the simulated caches" '^l1i 32768 8 64$' "$(cat "$fig" 2>/dev/null)"
# every verdict is "ok" or "bad" and what the figures were
verdict=$(awk '
	{ v[$1] = $2 }
	function say(cond, what) { print (cond ? "ok " : "bad ") what }
	END {
		i = v["insns"]; l = v["l1i-misses"]; t = v["itlb-misses"]
		say(i > 1000000, "kernel instructions: " i)
		say(l > 0 && l <= i, "L1i misses: " l)
		say(t > 0 && t <= i, "iTLB misses: " t)
		say(v["l1i-mpki"] > 0.5 && v["l1i-mpki"] < 200, "L1i MPKI: " v["l1i-mpki"])
		say(v["itlb-mpki"] > 0.01 && v["itlb-mpki"] < 100, "iTLB MPKI: " v["itlb-mpki"])
		say(i && (v["l1i-mpki"] - 1000 * l / i)^2 < 1e-6, "L1i MPKI agrees with the counts")
		say(v["pages"] > 0 && v["pages"] <= v["lines"] && v["lines"] <= 64 * v["pages"],
		    "lines " v["lines"] " in pages " v["pages"] " (one to 64 lines a page)")
		say(v["lines"] * 64 < 64 * 1024 * 1024, "lines span less than 64 MB")
		say(v["lines"] <= l, "each distinct line missed at least once")
	}' "$fig" 2>/dev/null)
[ -n "$verdict" ] || verdict="bad no figures in $fig"
while IFS= read -r line; do
	check_match "figures: ${line#* }" '^ok ' "$line"
done <<< "$verdict"
done_testing
