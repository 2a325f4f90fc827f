# Shared by the A/B scripts of bench/gpu (sourced): one target=cuda muon-run
# and its time, medians, and a table row. Needs $muonrun.

ab_run() { # LIBDIR ARGS...: seconds per step after the first on rank 0, ""
  # on failure (the last lines of its output on stderr). LIBDIR, when not
  # empty, goes first on LD_LIBRARY_PATH.
  local libdir=$1; shift
  local out
  local path=${LD_LIBRARY_PATH:-}
  [ -n "$libdir" ] && path=$libdir${path:+:$path}
  out=$(LD_LIBRARY_PATH=$path "$muonrun" --target cuda "$@" 2>&1) ||
    { echo "$out" | tail -3 >&2; return 0; }
  grep -q '^PASS' <<<"$out" || { echo "$out" | tail -3 >&2; return 0; }
  sed -nE 's/.*rank 0, ([0-9.]+) s\/step after the first.*/\1/p' <<<"$out" | head -1
}

ab_median() { tr ' ' '\n' | { grep . || true; } | sort -g | awk '{v[NR]=$1} END {if (NR) print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

ab_row() { # NAME REPEATS "BASE TIMES" "CANDIDATE TIMES": medians and ratio
  local name=$1 repeats=$2 b=$3 n=$4 mb mn
  mb=$(echo "$b" | ab_median); mn=$(echo "$n" | ab_median)
  if [ -z "$mb" ] || [ -z "$mn" ]; then
    printf '%-40s %12s %12s %10s\n' "$name" "${mb:-FAIL}" "${mn:-FAIL}" "-"
    return
  fi
  local passed
  passed=$(echo "$b $n" | wc -w)
  [ "$passed" -eq $((2 * repeats)) ] ||
    echo "note: $name: $passed of $((2 * repeats)) runs passed (failures above)"
  printf '%-40s %12.4f %12.4f %9.2fx   (runs: base %s; cand %s)\n' "$name" "$mb" "$mn" \
    "$(awk -v a="$mb" -v b="$mn" 'BEGIN {print a / b}')" "$b" "$n"
}

ab_cases() { # BASE_LIB BASE_FLAGS CAND_LIB CAND_FLAGS REPEATS "NAME|ARGS"...:
  # one table row per case, baseline and candidate runs interleaved (a
  # variant's LIB dir goes first on LD_LIBRARY_PATH, its FLAGS before ARGS)
  local baselib=$1 baseflags=$2 candlib=$3 candflags=$4 repeats=$5 c
  shift 5
  for c in "$@"; do
    local name=${c%%|*} args=${c#*|} b=() n=() i
    for ((i = 0; i < repeats; i++)); do
      # shellcheck disable=SC2086
      b+=("$(ab_run "$baselib" $baseflags $args)")
      # shellcheck disable=SC2086
      n+=("$(ab_run "$candlib" $candflags $args)")
    done
    ab_row "$name" "$repeats" "${b[*]}" "${n[*]}"
  done
}
