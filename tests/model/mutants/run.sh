#!/bin/sh
# SPDX-License-Identifier: ISC
# The proof that the model checker catches real bugs ("How we
# know it works"): each tests/model/mutants/NAME.patch puts one defect
# back.  In one scratch worktree of HEAD under /tmp (never this tree's
# files), for each mutant: apply the patch, build the test programs, run
# the checker on seeds 1, 2, ... until it fails (at most MUTANT_SEEDS),
# revert.  Prints a table: mutant, seeds tried until found, the invariants
# that failed.  Not part of make check (it builds and runs for long).
#
#   tests/model/mutants/run.sh                 every mutant
#   tests/model/mutants/run.sh twilio-raw-bytes purge-deletes-parked
#   MUTANT_SEEDS=10 MUTANT_OPS=100 make mutants
#   MUTANT_FIRST=9 MUTANT_SEEDS=16 tests/model/mutants/run.sh ack-before-commit   (seeds 9..24)
#   MUTANT_SEED_LIST='151922 44' MUTANT_OPS=200 tests/model/mutants/run.sh review-after-sent
#
# It tests what is committed (HEAD); the outputs stay in the scratch
# directory it prints (HOOKINBOX_KEEP=1 keeps the stacks too).
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
max=${MUTANT_SEEDS:-10}
first=${MUTANT_FIRST:-1}
ops=${MUTANT_OPS:-100}
dir="$top/tests/model/mutants"
# MUTANT_SEED_LIST="151922 44": these seeds instead of first..first+max-1
seeds=${MUTANT_SEED_LIST:-$(seq "$first" $((first + max - 1)))}
if [ $# -eq 0 ]; then
	set -- $(cd "$dir" && ls *.patch | sed 's/\.patch$//')
fi

scratch=$(mktemp -d /tmp/hookinbox-mutants-XXXXXX)
tree="$scratch/tree"
git -C "$top" worktree add --detach "$tree" HEAD >/dev/null 2>&1 || {
	echo "mutants: git worktree add $tree failed" >&2
	exit 1
}
trap 'git -C "$top" worktree remove --force "$tree" >/dev/null 2>&1; git -C "$top" worktree prune' EXIT
echo "mutants: scratch $scratch (HEAD $(git -C "$top" rev-parse --short HEAD)), seeds" $seeds", $ops operations each"
(cd "$tree" && nice make -j2 build-tests >"$scratch/build.log" 2>&1) || {
	echo "mutants: the unchanged tree does not build (see $scratch/build.log)" >&2
	exit 1
}

table="$scratch/table"
printf '%-24s %-22s %s\n' mutant 'found at seed (tried)' 'invariants that failed' >"$table"
for name in "$@"; do
	patch="$dir/$name.patch"
	t0=$(date +%s)
	if ! (cd "$tree" && git apply "$patch") 2>"$scratch/$name.apply"; then
		printf '%-24s %-22s %s\n' "$name" '-' 'the patch does not apply' >>"$table"
		continue
	fi
	if ! (cd "$tree" && nice make -j2 build-tests >"$scratch/$name.build" 2>&1); then
		printf '%-24s %-22s %s\n' "$name" '-' "does not build ($scratch/$name.build)" >>"$table"
		(cd "$tree" && git checkout -q .)
		continue
	fi
	found='' invs='' tried=0
	for s in $seeds; do
		tried=$((tried + 1))
		out="$scratch/$name.seed$s.out"
		if ! HOOKINBOX_TOP="$tree" nice perl -I "$tree/tests/lib" -I "$tree/tests/model" \
			"$tree/tests/model/run.pl" --seed "$s" --ops "$ops" >"$out" 2>&1; then
			# a check that died (the stack failed under it) is no finding
			invs=$(grep '^FAILED: invariant' "$out" | grep -v 'check died' |
				sed -n 's/^FAILED: invariant \([0-9]*\).*/\1/p' | sort -un | tr '\n' ' ')
			# no invariant broken: the stack or the model failed, not a finding
			[ -n "$invs" ] || { found="error at seed $s ($out)"; invs='-'; break; }
			found=$s
			break
		fi
	done
	(cd "$tree" && git checkout -q .)
	secs=$(($(date +%s) - t0))
	if [ "${found#error}" != "$found" ]; then
		printf '%-24s %-22s %s\n' "$name" "$found" "[$secs s]" >>"$table"
	elif [ -n "$found" ]; then
		echo "$secs" >>"$scratch/caught"
		printf '%-24s %-22s %s\n' "$name" "$found ($tried)" "$invs[$secs s]" >>"$table"
		echo "mutants: $name: $(grep -m1 '^FAILED' "$scratch/$name.seed$found.out" | cut -c1-200)"
	else
		printf '%-24s %-22s %s\n' "$name" "not found ($tried)" "[$secs s]" >>"$table"
	fi
	cat "$table" | tail -1
done
echo
cat "$table"
# the share caught and the median time to catch (the build included)
caught=$(cat "$scratch/caught" 2>/dev/null | wc -l)
median=$(sort -n "$scratch/caught" 2>/dev/null | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) " s"; else print "-" }')
echo "mutants: caught $caught of $#, median time to catch $median"
