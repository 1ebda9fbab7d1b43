#!/usr/bin/env bash
# Lint as errors. clang-format (.clang-format) on every C/C++ file of the
# tree; clang-tidy (.clang-tidy, every warning an error) on the C/C++ files
# changed since CMC_LINT_BASE (default HEAD~1; the work tree included), with
# the compile commands of the first build that compiles each (CMC_LINT_BUILDS,
# default "build build-fuzz": setup.sh's and fuzz.sh's). A changed header is
# tidied through a source file that includes it.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${CMC_LINT_BASE:-HEAD~1}
read -r -a builds <<<"${CMC_LINT_BUILDS:-build build-fuzz}"

mapfile -d '' all < <(git ls-files -z -- '*.c' '*.cc' '*.h')
clang-format --dry-run -Werror "${all[@]}"
echo "lint: clang-format: ${#all[@]} files formatted"

# build_of FILE: the first build whose compile commands compile FILE.
build_of() {
  for build in "${builds[@]}"; do
    grep -q -F "\"$PWD/$1\"" "$build/compile_commands.json" 2>/dev/null &&
      { echo "$build"; return; }
  done
}

# source_of HEADER: a source file that compiles the header (its pair first).
source_of() {
  local pair=${1%.h}
  for candidate in "$pair.cc" "$pair.c"; do
    [[ -f $candidate ]] && { echo "$candidate"; return; }
  done
  git grep -l -F "#include \"$1\"" -- '*.cc' '*.c' | head -1
}

mapfile -t changed < <(git diff --name-only --diff-filter=d "$base" -- \
  '*.c' '*.cc' '*.h')
jobs=()
declare -A seen
for file in "${changed[@]}"; do
  [[ $file == *.h ]] && file=$(source_of "$file")
  [[ -z $file || -n ${seen[$file]:-} ]] && continue
  seen[$file]=1
  build=$(build_of "$file")
  if [[ -z $build ]]; then
    echo "lint: $file is compiled by none of ${builds[*]}: not tidied" >&2
    continue
  fi
  jobs+=("$build" "$file")
done
((${#jobs[@]})) && printf '%s\0' "${jobs[@]}" | xargs -0 -n 2 -P 2 bash -c \
  'clang-tidy --quiet -p "$0" --warnings-as-errors="*" "$1" \
    2> >(grep -v "warnings generated" >&2)'
echo "lint: clang-tidy: $((${#jobs[@]} / 2)) files changed since $base, clean"
